"""DRAS-DQL (jaxsched.systems.dras.dql, spec dras.md §7.3): hand-computed Ĝ and Δ, the sign of each
update rule, the per-decision Adam steps against a plain loop, padding, ε-greedy and decay."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxsched.errors import ConfigError
from jaxsched.nets.dras import DRASValue
from jaxsched.systems.dras.dql import (
    DQLBatch,
    DQLConfig,
    decay_epsilon,
    dql_deltas,
    episode_epsilon,
    eps_greedy,
    make_dql,
)

N = 4
NET = DRASValue(hidden=(5, 4))


@pytest.fixture(scope="module")
def params():
    # random stand-ins of init's output (init's PRNG code is slow to compile on CPU)
    shapes = jax.eval_shape(NET.init, jax.random.PRNGKey(0), jnp.zeros((2 + N, 2)))
    rng = np.random.default_rng(7)
    return jax.tree_util.tree_map(
        lambda s: jnp.asarray(rng.uniform(-0.7, 0.7, s.shape), jnp.float32), shapes
    )


@pytest.fixture(scope="module")
def code_update():
    """The code rule's ``(init, jitted update)``, shared by the tests (one compile per shape)."""
    init, update = make_dql(NET.apply)
    return jax.jit(init), jax.jit(update)


DELTAS = jax.jit(dql_deltas, static_argnames=("gamma", "lam", "target_norm"))


def test_deltas_hand_computed():
    # G = [1 + 0.6·(0 + 0.6·2), 0 + 0.6·2, 2] = [1.72, 1.2, 2]; Ĝ = G / 2
    # δ = V − Ĝ = [-0.36, -0.4, -0.1]; Δ2 = -0.1, Δ1 = -0.4 + 0.6·Δ2, Δ0 = -0.36 + 0.6·Δ1
    v = np.array([0.5, 0.2, 0.9, 7.0], np.float32)
    r = np.array([1.0, 0.0, 2.0, 5.0], np.float32)
    ghat, d = DELTAS(v, r, np.array([1, 1, 1, 0], bool))
    np.testing.assert_allclose(ghat, [0.86, 0.6, 1.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(d, [-0.636, -0.46, -0.1, 0.0], rtol=1e-5, atol=1e-7)
    # padding in the middle is skipped
    ghat2, d2 = DELTAS(v[[0, 3, 1, 2]], r[[0, 3, 1, 2]], np.array([1, 0, 1, 1], bool))
    np.testing.assert_allclose(d2, [-0.636, 0.0, -0.46, -0.1], rtol=1e-5, atol=1e-7)
    # negative rewards, G = [-2, -5/3]: "max" divides by max G = -5/3 (flips the signs),
    # "absmax" by max |G| = 2
    neg = (v[:2], np.array([-1.0, -1 / 0.6], np.float32), np.array([True, True]))
    np.testing.assert_allclose(DELTAS(*neg)[0], [1.2, 1.0], rtol=1e-5)
    np.testing.assert_allclose(DELTAS(*neg, target_norm="absmax")[0], [-1.0, -5 / 6], rtol=1e-5)


def _batch(rng, c, valid):
    obs = rng.uniform(0, 2, (c, 2 + N, 2)).astype(np.float32)
    return DQLBatch(obs, rng.uniform(0, 1, c).astype(np.float32), np.asarray(valid, bool))


V = jax.jit(NET.apply)


def test_sign_conventions_move_v_away_or_toward_target(params, code_update):
    b = _batch(np.random.default_rng(0), 4, [True, False, False, False])  # Ĝ = 1 > sigmoid V
    v0 = float(V(params, b.obs[0]))
    for sign, closer in (("code", False), ("descent", True)):
        if sign == "code":
            init, update = code_update
        else:
            init, update = make_dql(NET.apply, DQLConfig(sign=sign))
            init, update = jax.jit(init), jax.jit(update)
        st, _ = update(init(params), b)
        v1 = float(V(st.params, b.obs[0]))
        assert (abs(v1 - 1.0) < abs(v0 - 1.0)) == closer, (sign, v0, v1)


def test_per_decision_adam_steps_match_loop_and_padding(params, code_update):
    rng = np.random.default_rng(1)
    full = _batch(rng, 3, [1, 1, 1])
    junk = _batch(rng, 1, [0])
    init, update = code_update  # capacity 4: three decisions and one padding row
    got = {
        i: update(init(params), jax.tree_util.tree_map(
            lambda a, j, i=i: np.concatenate([a[:i], j, a[i:]]), full, junk
        ))
        for i in (1, 3)
    }  # fmt: skip
    # oracle, unpadded: decision-time V and ∇V (batch start), then one Adam step per decision
    v = V(params, full.obs)
    _, big = dql_deltas(v, full.reward, full.valid)
    tx = optax.adam(0.001)

    @jax.jit
    def adam_step(p, opt, s, d):  # one decision's step with the batch-start gradient
        g = jax.tree_util.tree_map(lambda x: -d * x, jax.grad(NET.apply)(params, s))
        u, opt = tx.update(g, opt, p)
        return optax.apply_updates(p, u), opt

    p, opt = params, init(params).opt_state  # the same Adam state, built by the jitted init
    for t in range(3):
        p, opt = adam_step(p, opt, full.obs[t], big[t])
    close = lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)  # noqa: E731
    for st, m in got.values():
        jax.tree_util.tree_map(close, st.params, p)
        assert float(m["decisions"]) == 3


@jax.jit
def _eps_run(key):
    """3000 ε-greedy picks (half at ε = 0, half at ε = 1) and ε after four level-1 decisions
    (ready, not ready, ready, ready) and after one from just above the floor."""
    vals = jnp.asarray([0.2, 0.9, 0.5, 5.0])
    valid = jnp.asarray([True, True, True, False])
    eps = jnp.repeat(jnp.asarray([0.0, 1.0]), 1500)
    picks = jax.vmap(eps_greedy, in_axes=(0, None, None, 0))(
        jax.random.split(key, 3000), vals, valid, eps
    )
    e = jnp.asarray(1.0)
    for ready in (True, False, True, True):
        e = decay_epsilon(e, ready, DQLConfig())
    return picks, e, decay_epsilon(jnp.asarray(0.0101), True, DQLConfig())


def test_eps_greedy_and_decay():
    p, eps, floor = (np.asarray(x) for x in _eps_run(jax.random.PRNGKey(0)))
    assert np.all(p[:1500] == 1)  # ε = 0: the valid argmax
    rand = p[1500:]  # ε = 1: uniform over the valid candidates
    assert rand.max() == 2 and abs(np.mean(rand == 0) - 1 / 3) < 0.05
    np.testing.assert_allclose(eps, 0.99**3, rtol=1e-6)  # decays per ready start only
    assert float(floor) == pytest.approx(0.01)
    cfg = DQLConfig()
    assert DQLConfig(mode="paper").resolved().eps_decay == 0.995
    assert episode_epsilon(0.3, cfg, training=False) == 1.0  # the code resets at every run
    assert episode_epsilon(0.3, DQLConfig(eps_reset="never")) == 0.3
    assert episode_epsilon(0.3, DQLConfig(test_eps=0.0), training=False) == 0.0
    with pytest.raises(ConfigError):
        DQLConfig(sign="up").resolved()
