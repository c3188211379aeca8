"""jaxsched.nets.categorical: the traceable cores the trainers use agree with the casting
helpers, hand-computed log-probabilities and entropies, and the one Gumbel-max sampler draws
the same noise as ``jax.random.gumbel`` (so both former samplers' numbers are kept)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched import nets
from jaxsched.nets import categorical as C


def test_constants_are_shared():
    assert nets.MASKED_LOGIT is C.MASKED_LOGIT and nets.LOGIT_BOUND is C.LOGIT_BOUND
    for name in ("mask_logits", "masked_log_probs", "sample_action", "greedy_action", "entropy"):
        assert getattr(nets, name) is getattr(C, name)


def test_cores_hand_computed():
    z = jnp.array([[np.log(3.0), 0.0, 7.0], [0.0, 0.0, 0.0]], jnp.float32)
    m = jnp.array([[True, True, False], [True, True, True]])
    zm = C.apply_mask(z, m)
    assert float(zm[0, 2]) == np.float32(C.MASKED_LOGIT)
    np.testing.assert_array_equal(zm, C.mask_logits(z, m))
    np.testing.assert_array_equal(C.apply_mask(zm, m), zm)  # idempotent
    lp = C.log_softmax(zm)
    np.testing.assert_allclose(np.exp(lp[0]), [0.75, 0.25, 0.0], atol=1e-7)
    np.testing.assert_allclose(C.log_prob_of(lp, jnp.array([1, 2])), np.log([0.25, 1 / 3]))
    h = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))
    np.testing.assert_allclose(C.entropy_of(lp), [h, np.log(3.0)], rtol=1e-6)
    np.testing.assert_allclose(C.entropy(z, m), [h, np.log(3.0)], rtol=1e-6)
    np.testing.assert_array_equal(C.argmax(zm), [0, 0])
    # clipping of huge valid logits
    assert float(C.apply_mask(jnp.float32(jnp.inf), jnp.bool_(True))) == np.float32(C.LOGIT_BOUND)


@pytest.mark.parametrize("shape", [(5,), (4, 128), (2, 3, 9)])
def test_gumbel_argmax_draws_jax_random_gumbel_noise(shape):
    z = jax.random.normal(jax.random.PRNGKey(1), shape, jnp.float32)
    for seed in range(3):
        key = jax.random.PRNGKey(seed)
        expect = jnp.argmax(z + jax.random.gumbel(key, shape, jnp.float32), axis=-1)
        np.testing.assert_array_equal(jax.jit(C.gumbel_argmax)(key, z), expect)


def test_sampler_frequencies_and_mask():
    z = jnp.log(jnp.array([0.5, 0.3, 0.2, 0.9], jnp.float32))
    m = jnp.array([True, True, True, False])
    keys = jax.random.split(jax.random.PRNGKey(0), 4000)
    a = np.asarray(jax.vmap(lambda k: C.gumbel_argmax(k, C.apply_mask(z, m)))(keys))
    assert not (a == 3).any()
    np.testing.assert_allclose(np.bincount(a, minlength=4)[:3] / 4000, [0.5, 0.3, 0.2], atol=0.03)
