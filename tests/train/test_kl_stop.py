"""jaxsched.train.kl_stop: the exact stopping rule of the KL early-stopped loop."""

import jax
import jax.numpy as jnp

from jaxsched.train.kl_stop import kl_early_stop_loop


def test_kl_early_stop_loop_semantics():
    # a fake optimiser whose KL reading (taken before the step) is the step count so far
    step = lambda c: (c + 1.0, c)
    carry, iters, stopped, kl = jax.jit(lambda c: kl_early_stop_loop(step, c, 80, 2.5))(
        jnp.float32(0.0)
    )
    # readings 0, 1, 2, 3 -> 3 > 2.5 at the 4th step, which is still applied
    assert (int(iters), bool(stopped), float(kl), float(carry)) == (4, True, 3.0, 4.0)
    carry, iters, stopped, kl = kl_early_stop_loop(step, jnp.float32(0.0), 80, None)
    assert (int(iters), bool(stopped), float(carry)) == (80, False, 80.0)
    carry, iters, stopped, _ = kl_early_stop_loop(step, jnp.float32(0.0), 3, 100.0)
    assert (int(iters), bool(stopped), float(carry)) == (3, False, 3.0)
    _, iters, _, _ = kl_early_stop_loop(step, jnp.float32(0.0), 0, 1.0)
    assert int(iters) == 0
