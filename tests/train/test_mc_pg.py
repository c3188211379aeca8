"""DeepRM's Monte-Carlo policy gradient (jaxsched.train.mc_pg): the time-dependent baseline by
hand, the chunked replayed gradient against one unchunked gradient, and learning on the toy
environment."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from test_a2c import SlotScore
from toy_env import RANDOM_REWARD_PER_STEP, PickSmallestEnv

from jaxsched.errors import ConfigError
from jaxsched.nets.categorical import apply_mask
from jaxsched.train.mc_pg import MCPGConfig, make_mc_pg, time_baseline_advantages


def test_time_baseline_advantages_by_hand():
    """Two starts of two trajectories, γ = 1. Start 0: trajectory 0 gets rewards −1, −1 and
    ends; trajectory 1 gets −2, then has ended (0). Returns −2, −1 | −2, 0; baselines −2, −0.5;
    advantages 0, −0.5 | 0, (not live) 0. Start 1: −1, −1 and −1, −3: returns −2, −1 | −4, −3,
    baselines −3, −2, advantages 1, 1 | −1, −1."""
    rewards = jnp.array([[-1.0, -2.0, -1.0, -1.0], [-1.0, 0.0, -1.0, -3.0]])
    live = jnp.array([[True, True, True, True], [True, False, True, True]])
    adv = time_baseline_advantages(rewards, live, 1.0, 2)
    np.testing.assert_allclose(adv, [[0.0, 0.0, 1.0, -1.0], [-0.5, 0.0, 1.0, -1.0]])
    half = time_baseline_advantages(rewards, live, 0.5, 2)  # returns -1.5, -1 | -2, 0 | ...
    np.testing.assert_allclose(half[:, :2], [[0.25, -0.25], [-0.5, 0.0]])


def _setup(chunk, lr=1e-2, starts=4, trajectories=4, steps=8, tx=None, **kw):
    net = SlotScore()
    params = {"actor": net.init(jax.random.PRNGKey(0), jnp.zeros((6, 8), jnp.float32))}
    cfg = MCPGConfig(num_starts=starts, trajectories=trajectories, max_steps=steps, chunk=chunk,
                     gamma=0.0, lr=lr, optimizer="adam", **kw)  # fmt: skip
    init, update = make_mc_pg(PickSmallestEnv(), lambda p, x, m: apply_mask(net.apply(p, x), m),
                              cfg, lambda o: (o.obs, o.mask), tx)  # fmt: skip
    return init(jax.random.PRNGKey(1), params), jax.jit(update)


def test_chunked_replay_gives_the_unchunked_gradient():
    """The same update with the gradient in chunks of 2 steps (observations replayed) and in
    one chunk of all 8: the same loss terms and, up to float rounding, the same gradient (plain
    gradient descent with step 1, so the parameters move by minus the gradient)."""
    out = []
    for chunk in (2, 8):
        state, update = _setup(chunk, tx=optax.sgd(1.0), entropy_coef=0.1,
                               normalize_advantages=True)  # fmt: skip
        out.append(update(state))
    (s2, m2), (s8, m8) = out
    for k in ("policy_loss", "entropy", "steps", "episodes", "reward"):
        np.testing.assert_allclose(float(m2[k]), float(m8[k]), rtol=1e-5, atol=1e-6)
    assert 0 < float(m2["steps"]) <= 16 * 8 and float(m2["episodes"]) >= 16
    flat = lambda s: np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(s.params)])  # noqa: E731
    p0 = flat(_setup(8)[0])
    g2, g8 = p0 - flat(s2), p0 - flat(s8)
    assert np.max(np.abs(g8)) > 1e-3  # a real gradient
    np.testing.assert_allclose(g2, g8, rtol=1e-4, atol=1e-6)


def test_mc_pg_learns_the_toy_task():
    """The toy task's episodes last 1–5 steps; with γ = 0 the return is the step's reward, so
    the policy gradient learns to pick the smallest slot: from random (0.29 per step) to
    more than 0.7."""
    state, update = _setup(2, lr=3e-2)
    rewards = []
    for _ in range(80):
        state, m = update(state)
        rewards.append(float(m["reward"]))
    assert abs(np.mean(rewards[:5]) - RANDOM_REWARD_PER_STEP) < 0.25
    assert np.mean(rewards[-10:]) > 0.7, rewards[-10:]


def test_config_errors():
    with pytest.raises(ConfigError, match="divide"):
        MCPGConfig(max_steps=10, chunk=3)
    with pytest.raises(ConfigError, match=">= 1"):
        MCPGConfig(trajectories=0)
