"""The interfaces of jaxsched/envs/interfaces/ on the tiny toy environment (tests/toy_env.py;
no simulator code, so each compile is small): the gymnax view (spaces, auto-reset as gymnax
does, flat observations, the mask in info), the planner view (no auto-reset: a finished
episode gives reward 0, discount 0), the jumanji adapter (its specs validate a real
observation) and the Gymnasium view (a host loop), the optional libraries skipped where
they are not installed. The registry and the specs on a simulator environment:
test_env_names.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_env import PickSmallestEnv

from jaxsched.envs.interfaces.gymnax_env import EnvParams, GymnaxEnv
from jaxsched.envs.interfaces.planner import PlannerView

ENV = PickSmallestEnv(min_len=2, max_len=2)  # every episode: 2 steps


def test_gymnax_view_auto_resets():
    g = GymnaxEnv(ENV)
    params = g.default_params
    assert isinstance(params, EnvParams)
    assert g.action_space(params).n == 6 and g.observation_space(params).shape == (6 * 8 + 2,)
    step = jax.jit(g.step)
    obs, st = jax.jit(g.reset)(jax.random.PRNGKey(0), params)
    assert obs.shape == (50,) and obs.dtype == jnp.float32
    dones = []
    for _ in range(4):
        a = jnp.argmax(g.action_mask(st)).astype(jnp.int32)
        obs, st, r, d, info = step(jax.random.PRNGKey(1), st, a, params)
        dones.append(bool(d))
        assert info["action_mask"].shape == (6,) and r.dtype == jnp.float32
    assert dones == [False, True, False, True]  # ends every 2 steps and goes on
    assert float(info["discount"]) == 0.0 and bool(info["terminated"])
    at7 = jax.jit(g.reset)(jax.random.PRNGKey(5), EnvParams(start=7))[1]
    assert int(at7.seed) == int(ENV.init_state_at(7).seed)  # params.start names the episode
    with_mask = GymnaxEnv(ENV, mask_in_obs=True)
    assert with_mask.observation_space().shape == (56,)


def test_planner_view_does_not_auto_reset():
    p = PlannerView(ENV)
    st, obs = p.root_at(jnp.int32(3))
    step = jax.jit(p.step)
    out = []
    for _ in range(3):
        st, r, d, obs = step(st, jnp.argmax(p.mask(st)).astype(jnp.int32))
        out.append((float(d), bool(st.done)))
    assert out == [(1.0, False), (0.0, True), (0.0, True)]
    assert float(r) == 0.0  # past the end: no reward
    batch = jax.vmap(p.root)(jax.random.split(jax.random.PRNGKey(0), 3))[0]
    assert batch.done.shape == (3,)


def test_jumanji_adapter():
    pytest.importorskip("jumanji")
    from jaxsched.envs.interfaces.jumanji_env import JumanjiEnv

    env = JumanjiEnv(ENV)
    state, ts = jax.jit(env.reset)(jax.random.PRNGKey(0))
    assert ts.first() and env.observation_spec.validate(ts.observation) is not None
    assert env.action_spec.num_values == 6
    state, ts = jax.jit(env.step)(state, jnp.int32(0))
    assert ts.mid() and "terminated" in ts.extras
    state, ts = jax.jit(env.step)(state, jnp.int32(0))
    assert ts.last() and float(ts.discount) == 0.0


def test_gymnasium_view():
    pytest.importorskip("gymnasium")
    from jaxsched.envs.interfaces.gymnasium_env import GymnasiumEnv

    env = GymnasiumEnv(ENV)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["action_mask"].dtype == np.bool_
    obs, r, term, trunc, info = env.step(int(env.action_masks().argmax()))
    obs, r, term, trunc, info = env.step(0)
    assert term and not trunc
    with pytest.raises(RuntimeError):
        env.step(0)
    obs2, _ = env.reset(options={"start": 5})
    assert obs2["obs"].shape == (50,)


def test_gymnasium_registers_every_name(tmp_path):
    gymnasium = pytest.importorskip("gymnasium")
    from tiny_traces import schedinspector_tiny

    import jaxsched
    from jaxsched.registry import gym_id, register_gymnasium

    ids = register_gymnasium()
    assert len(ids) == len(jaxsched.registered()) and register_gymnasium() == ids
    trace = schedinspector_tiny(tmp_path / "tiny.swf")
    env = gymnasium.make(gym_id("rlscheduler/lublin-1-bf"), trace=trace, length=8, max_queue=4)
    obs, info = env.reset(seed=1)
    assert obs["obs"].shape == (4 * 8,) and info["action_mask"].shape == (4,)
