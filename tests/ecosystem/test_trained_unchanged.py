"""RL libraries train a jaxsched environment unchanged, from a float32 program (the mode off
for the calling code, ``jax.enable_x64(False)``, as in a user's process: the suite's own
process has it on, tests/conftest.py), each through ``jaxsched.make`` and one interface:

* a PureJaxRL-style PPO (tests/ecosystem/ppo_gymnax_style.py, our own words) with a
  LogWrapper and a NormalizeVecReward-style wrapper, whose float32 statistics are a scan
  carry (the code that failed with a float32/float64 TypeError while importing jaxsched
  turned the mode on for the process);
* rejax's PPO with ``normalize_rewards=True`` (optional: rejax);
* mctx's Gumbel MuZero search with the environment's step as its model (optional: mctx).
* jaxsched's own PPO trainer (both rollouts).

All on RLScheduler over tests/tiny_traces.py's 80-job trace at the smallest sizes.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tiny_traces import schedinspector_tiny

import jaxsched
from jaxsched.envs.interfaces.gymnax_env import GymnaxEnv

LENGTH, SLOTS = 8, 4


@pytest.fixture
def tiny_env(tmp_path):
    trace = schedinspector_tiny(tmp_path / "tiny.swf")
    return jaxsched.make(f"rlscheduler:{trace}", length=LENGTH, max_queue=SLOTS)


@pytest.mark.extended  # one PPO compile (5 s cold); tests/ecosystem/test_scoped_x64.py's suite test traces the same env from a 32-bit program
def test_purejaxrl_style_ppo(tiny_env):
    from ppo_gymnax_style import make_train

    config = dict(NUM_ENVS=4, NUM_STEPS=16, NUM_UPDATES=3, UPDATE_EPOCHS=2, NUM_MINIBATCHES=2,
                  LR=2.5e-4, GAMMA=0.99, GAE_LAMBDA=0.95, CLIP_EPS=0.2, ENT_COEF=0.01,
                  VF_COEF=0.5, MAX_GRAD_NORM=0.5)  # fmt: skip
    with jax.enable_x64(False):
        env = GymnaxEnv(tiny_env)
        train = jax.jit(make_train(config, env, env.default_params))
        (net_params, *_), metrics = train(jax.random.PRNGKey(0))
        leaves = jax.tree_util.tree_leaves(net_params)
    assert all(x.dtype == jnp.float32 for x in leaves)
    assert np.isfinite(np.asarray(metrics["loss"])).all() and metrics["loss"].shape == (3,)
    assert (np.asarray(metrics["return"]) < 0).any()  # episodes ended (reward = -bsld)


@pytest.mark.extended  # rejax's PPO compile (5 s cold); test_purejaxrl_style_ppo runs the same interface
def test_rejax_ppo(tiny_env):
    rejax = pytest.importorskip("rejax")
    with jax.enable_x64(False):
        env = GymnaxEnv(tiny_env, max_steps_in_episode=4 * LENGTH)
        algo = rejax.PPO.create(env=env, env_params=env.default_params, num_envs=4,
                                num_steps=16, num_minibatches=2, num_epochs=2,
                                total_timesteps=12, eval_freq=12, normalize_rewards=True,
                                skip_initial_evaluation=True)  # fmt: skip
        algo = algo.replace(eval_callback=lambda algo, ts, rng: jnp.zeros((), jnp.float32))
        ts, _ = jax.jit(algo.train)(jax.random.PRNGKey(0))
        leaves = jax.tree_util.tree_leaves(ts.actor_ts.params)
    assert all(x.dtype == jnp.float32 and np.isfinite(np.asarray(x)).all() for x in leaves)


@pytest.mark.extended  # one search compile (5 s cold); test_interfaces.py's planner test runs the same view
def test_mctx_gumbel_muzero_plans_with_env_step(tiny_env):
    mctx = pytest.importorskip("mctx")
    from jaxsched.envs.interfaces.planner import PlannerView

    view = PlannerView(tiny_env)
    B, A = 2, view.num_actions

    def logits_of(state):  # a uniform prior over the valid actions
        return jnp.where(jax.vmap(view.mask)(state), 0.0, -1e9).astype(jnp.float32)

    def recurrent_fn(params, key, action, state):
        state, reward, discount, _ = jax.vmap(view.step)(state, action.astype(jnp.int32))
        out = mctx.RecurrentFnOutput(reward=reward, discount=discount,
                                     prior_logits=logits_of(state), value=jnp.zeros((B,)))  # fmt: skip
        return out, state

    @jax.jit
    def plan_and_act(state, key):
        root = mctx.RootFnOutput(prior_logits=logits_of(state), value=jnp.zeros((B,)),
                                 embedding=state)  # fmt: skip
        out = mctx.gumbel_muzero_policy(
            params=(), rng_key=key, root=root, recurrent_fn=recurrent_fn, num_simulations=8,
            invalid_actions=~jax.vmap(view.mask)(state), max_num_considered_actions=A,
        )  # fmt: skip
        mask = jax.vmap(view.mask)(state)
        valid = mask[jnp.arange(B), out.action]
        state, reward, _, _ = jax.vmap(view.step)(state, out.action.astype(jnp.int32))
        return state, reward, valid

    with jax.enable_x64(False):
        state, _ = jax.vmap(view.root)(jax.random.split(jax.random.PRNGKey(0), B))
        total, valid = 0.0, []
        for i in range(3 * LENGTH):
            state, r, v = plan_and_act(state, jax.random.PRNGKey(i))
            total, valid = total + np.asarray(r), valid + [bool(np.all(v) or np.all(state.done))]
    assert all(valid) and bool(np.all(state.done))  # every episode finished by searching
    assert np.all(total < 0)  # reward -bsld at the end


@pytest.mark.extended  # two trainer compiles (9 s cold); tests/train/test_ppo.py trains the toy env in the suite
@pytest.mark.parametrize("async_rows", [False, True])
def test_jaxsched_ppo_from_a_32bit_program(tiny_env, async_rows):
    """jaxsched's own trainer too: the synchronous rollout and the asynchronous-rows loop,
    whose decide function (the trainer's code) runs in the caller's 32-bit mode."""
    from jaxsched import nets
    from jaxsched.envs import AutoResetWrapper
    from jaxsched.train.ppo import PPOConfig, make_train

    env = AutoResetWrapper(tiny_env) if async_rows else tiny_env
    with jax.enable_x64(False):
        trainer = make_train(PPOConfig(num_envs=4, episodes_per_env=1, max_episode_steps=10),
                             env, nets.make_policy("kernel"), nets.make_value("kernel"),
                             async_rows=async_rows)  # fmt: skip
        state, metrics = trainer.update(trainer.init(jax.random.PRNGKey(0)))
    assert np.isfinite(float(metrics["approx_kl"]))
