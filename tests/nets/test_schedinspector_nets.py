"""SchedInspector networks (spec §5): parameter counts, shapes, masking."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.nets.categorical import MASKED_LOGIT
from jaxsched.nets.schedinspector import InspectorPolicy, InspectorValue, param_count


def test_parameter_counts_and_shapes():
    x = jnp.zeros((5, 7), jnp.float32)
    pol, val = InspectorPolicy(), InspectorValue()
    pp = jax.jit(pol.init)(jax.random.PRNGKey(0), x, jnp.ones((5, 2), bool))
    vp = jax.eval_shape(val.init, jax.random.PRNGKey(1), x)  # shapes only: no compile
    assert param_count(pp) == 938 and param_count(vp) == 929
    shapes = jax.eval_shape(pol.init, jax.random.PRNGKey(0), jnp.zeros(8))
    assert param_count(shapes) == 938 + 32  # paper mode: 8 features
    mask = jnp.asarray([[True, False]] * 5)
    out = jax.jit(pol.apply)(pp, jnp.ones((5, 7)), mask)
    assert out.shape == (5, 2) and out.dtype == jnp.float32
    assert np.all(np.asarray(out[:, 1]) == MASKED_LOGIT)
    assert jax.eval_shape(val.apply, vp, jnp.ones((3, 7))).shape == (3,)
    # zero biases, Glorot-uniform kernels: |w| <= sqrt(6 / (fan_in + fan_out))
    k = pp["params"]["_Trunk_0"]["Dense_0"]["kernel"]
    assert float(jnp.max(jnp.abs(k))) <= np.sqrt(6 / (7 + 32))
    assert float(jnp.max(jnp.abs(pp["params"]["_Trunk_0"]["Dense_0"]["bias"]))) == 0.0
