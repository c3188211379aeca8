"""The environment contract (jaxsched/envs/core.py, wrappers.py, testing.py) on the tiny
example environment of tests/toy_env.py (no RLScheduler code involved):

1. ``check_env_contract`` passes (compiled once, vmap == loop, auto-reset scan == step by step,
   masks, NaN, determinism, timestep types);
2. the base ``step`` without auto-reset: terminated at the episode's length, discount 0, LAST,
   terminal reward; truncation is kept apart from termination (discount 1 on truncation);
3. two equal configurations share one compiled function (default pytree flattening);
4. ``check_env_contract`` catches a broken environment (a state whose dtype changes).

tests/train/test_ppo.py trains this same environment with PPO under the one auto-reset wrapper.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from toy_env import PickSmallestEnv, ToyState

from jaxsched.envs import FIRST, LAST, MID
from jaxsched.envs.core import TimeStep, transition_timestep
from jaxsched.envs.testing import check_env_contract


def test_toy_env_passes_the_contract():
    info = check_env_contract(PickSmallestEnv(), starts=[1, 2, 3], batch=3, num_steps=12)
    assert info["episodes_ended"] > 3


def test_base_step_terminates_at_the_length():
    env = PickSmallestEnv(min_len=3, max_len=3)
    state, ts = env.reset(jax.random.PRNGKey(3))
    assert int(ts.step_type) == FIRST and float(ts.discount) == 1.0
    assert not bool(ts.terminated) and not bool(ts.truncated)
    kinds = []
    for _ in range(3):
        state, ts = env.step(state, jnp.int32(0))
        kinds.append(int(ts.step_type))
    assert kinds == [MID, MID, LAST]
    assert bool(ts.terminated) and bool(ts.last()) and bool(ts.done)
    assert float(ts.discount) == 0.0


def test_truncation_is_not_termination():
    obs = PickSmallestEnv().observe(PickSmallestEnv().init_state_at(7))
    ts = transition_timestep(1.0, jnp.asarray(False), jnp.asarray(True), obs, {})
    assert isinstance(ts, TimeStep)
    assert bool(ts.last()) and bool(ts.done) and not bool(ts.terminated)
    assert float(ts.discount) == 1.0 and int(ts.step_type) == LAST


def test_equal_configurations_compile_once(count_compilations):
    f = jax.jit(lambda e, k: e.reset(k)[1].observation.obs)
    f(PickSmallestEnv(), jax.random.PRNGKey(0))
    with count_compilations() as c:
        f(PickSmallestEnv(), jax.random.PRNGKey(1))
    assert c.n == 0
    assert jax.tree_util.tree_leaves(PickSmallestEnv()) == []


class _Broken(PickSmallestEnv):
    """A state whose step counter turns float32 after a step: jit retraces, scans fail."""

    def transition(self, s: ToyState, action):
        new, *rest = super().transition(s, action)
        return (new.replace(t=new.t.astype(jnp.float32)), *rest)


def test_check_env_contract_catches_a_type_change():
    with pytest.raises((AssertionError, TypeError)):
        check_env_contract(_Broken(), batch=2, num_steps=3)
