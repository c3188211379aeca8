"""DRAS-PG updates (jaxsched.systems.dras.pg, spec dras.md §7.2) and the masked return helpers of
jaxsched.train.returns, on hand-computed numbers and a tiny network (W = 3, N = 4)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.errors import ConfigError
from jaxsched.nets.dras import DRASPolicy
from jaxsched.systems.dras.pg import PGBatch, PGConfig, make_pg, pg_advantages, pg_loss
from jaxsched.train.returns import masked_discounted_cumsum, masked_standardize

W, N = 3, 4
R = 2 * W + N
NET = DRASPolicy(hidden=(5, 4), window=W)
T = np.array([True, True, True, True])
# jitted once each: the hand cases run as a few small programs instead of many eager ops
cumsum = jax.jit(masked_discounted_cumsum, static_argnums=2)
standardize = jax.jit(masked_standardize)
advantages = jax.jit(pg_advantages, static_argnums=4)


def test_masked_discounted_cumsum_hand():
    g = cumsum(jnp.asarray([1.0, 2.0, 3.0]), T[:3], 0.6)
    np.testing.assert_allclose(g, [1 + 0.6 * 3.8, 2 + 0.6 * 3, 3], rtol=1e-6)
    # padding in the middle and at the end is skipped and gives 0
    g = cumsum(jnp.asarray([1.0, 9.0, 2.0, 3.0, 7.0]), np.array([1, 0, 1, 1, 0], bool), 0.6)
    np.testing.assert_allclose(g, [3.28, 0, 3.8, 3, 0], rtol=1e-6)


def test_masked_standardize_hand_and_zero_std():
    x = jnp.asarray([1.0, 5.0, 3.0, 100.0])
    v = np.array([1, 0, 1, 0], bool)
    np.testing.assert_allclose(standardize(x, v), [-1, 0, 1, 0], atol=1e-6)
    np.testing.assert_allclose(standardize(np.full(4, 2.0, np.float32), T), [0, 0, 0, 0])


def test_config_modes():
    c, p = PGConfig().resolved(), PGConfig(mode="paper").resolved()
    assert (c.gamma, c.lr, c.standardize, c.baseline, c.masked_loss) == (
        0.6,
        0.01,
        True,
        False,
        False,
    )
    assert (p.gamma, p.lr, p.standardize, p.baseline, p.masked_loss) == (
        1.0,
        0.001,
        False,
        True,
        True,
    )
    assert PGConfig(mode="paper", gamma=0.9).resolved().gamma == 0.9
    with pytest.raises(ConfigError):
        PGConfig(mode="fast").resolved()


def test_paper_baseline_per_step_index():
    cfg = PGConfig(mode="paper").resolved()
    z = np.zeros(4, np.float32)
    v1 = np.array([1, 1, 1, 0], bool)
    adv1, bs, bn = advantages(np.array([1.0, 1.0, 1.0, 0.0], np.float32), v1, z, z, cfg)
    np.testing.assert_allclose(adv1, [3, 2, 1, 0])  # no past update: b = 0
    np.testing.assert_allclose(bn, [1, 1, 1, 0])
    adv2, bs, bn = advantages(np.array([2.0, 0.0, 0.0, 4.0], np.float32), T, bs, bn, cfg)
    np.testing.assert_allclose(adv2, [6 - 3, 4 - 2, 4 - 1, 4 - 0])  # G_k − mean of past G_k
    np.testing.assert_allclose(bs / np.maximum(bn, 1), [4.5, 3, 2.5, 4])


def _batch(rng, capacity, valid):
    obs = rng.uniform(0, 3, (capacity, R, 2)).astype(np.float32)
    return PGBatch(
        obs,
        rng.integers(0, W, capacity).astype(np.int32),
        rng.integers(1, W + 1, capacity).astype(np.int32),
        rng.uniform(0, 1, capacity).astype(np.float32),
        np.asarray(valid, bool),
    )


@pytest.fixture(scope="module")
def params():
    # random stand-ins of init's output (init's PRNG code is slow to compile on CPU)
    shapes = jax.eval_shape(NET.init, jax.random.PRNGKey(0), jnp.zeros((R, 2)))
    rng = np.random.default_rng(7)
    return jax.tree_util.tree_map(
        lambda s: jnp.asarray(rng.uniform(-0.7, 0.7, s.shape), jnp.float32), shapes
    )


def test_code_loss_matches_numpy(params):
    b = _batch(np.random.default_rng(0), 4, [1, 1, 0, 1])
    z4 = np.zeros(4, np.float32)
    adv, _, _ = advantages(b.reward, b.valid, z4, z4, PGConfig().resolved())
    z = np.asarray(jax.jit(NET.apply)(params, b.obs), np.float64)
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    pa = np.clip(p[np.arange(4), np.asarray(b.action)], 1e-8, 1 - 1e-8)
    want = np.sum(np.where(b.valid, -np.log(pa) * np.asarray(adv), 0))
    got = jax.jit(lambda p, b, a: pg_loss(p, NET.apply, b, a, masked=False))(params, b, adv)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.fixture(scope="module")
def code4():
    """The code rule at capacity 4: ``init`` and the jitted ``update``, ``vmap(update)``,
    ``update_mean`` (shared by the tests: one compile each)."""
    init, update, update_mean = make_pg(NET.apply, capacity=4)
    return jax.jit(init), jax.jit(update), jax.jit(jax.vmap(update)), jax.jit(update_mean)


def _close(a, b):
    jax.tree_util.tree_map(
        lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-7), a, b
    )


def test_update_raises_probability_of_better_action(params, code4):
    init, update, _, _ = code4
    obs = np.broadcast_to(np.linspace(0, 1, 2 * R, dtype=np.float32).reshape(R, 2), (4, R, 2))
    b = PGBatch(
        obs,
        np.array([0, 1, 2, 2], np.int32),
        np.full(4, 3, np.int32),
        np.array([0.0, 1, 5, 5], np.float32),
        np.array([1, 1, 0, 0], bool),
    )
    st, m = update(init(params), b)  # G = [0.6, 1] -> Ĝ = [-1, 1]
    p = jax.jit(lambda q: jax.nn.softmax(NET.apply(q, obs[0])))
    assert p(st.params)[1] / p(st.params)[0] > p(params)[1] / p(params)[0]
    assert float(m["decisions"]) == 2


def test_padding_is_ignored_wherever_it_is(params, code4):
    """Three decisions with a padding row at slot 0, 1 or 3, with two different junk rows:
    every variant gives the same parameters (code and paper rule)."""
    rng = np.random.default_rng(1)
    full = _batch(rng, 3, [1, 1, 1])
    junks = (_batch(rng, 1, [0]), _batch(rng, 1, [0]))

    def at(i, junk):
        return jax.tree_util.tree_map(lambda a, j: np.concatenate([a[:i], j, a[i:]]), full, junk)

    initp, upp, _ = make_pg(NET.apply, PGConfig(mode="paper"), capacity=4)
    rules = ((code4[0], code4[1]), (jax.jit(initp), jax.jit(upp)))
    results = []
    for init, update in rules:
        s0 = init(params)
        ref = update(s0, at(3, junks[0]))[0].params
        for i, junk in ((0, junks[1]), (1, junks[0]), (1, junks[1])):
            _close(ref, update(s0, at(i, junk))[0].params)
        results.append(ref["params"]["out"]["bias"])
    assert not np.allclose(*results)  # the two rules differ


def test_vmap_per_env_and_mean(params, code4):
    init, update, vupdate, update_mean = code4
    rng = np.random.default_rng(2)
    b1, b2 = _batch(rng, 4, [1, 1, 1, 0]), _batch(rng, 4, [1, 1, 0, 0])
    s0 = init(params)
    stack = lambda *t: jax.tree_util.tree_map(lambda *a: np.stack(a), *t)  # noqa: E731
    both, _ = vupdate(stack(s0, s0), stack(b1, b2))
    for e, b in enumerate((b1, b2)):
        _close(
            jax.tree_util.tree_map(lambda x, e=e: np.asarray(x)[e], both.params),
            update(s0, b)[0].params,
        )
    # a batch without decisions changes nothing (Adam's moments included)
    empty = b2._replace(valid=np.zeros(4, bool))
    _close(update(s0, empty)[0], s0)
    # the mean rule averages over the environments with decisions
    _close(update_mean(s0, stack(b1, empty))[0].params, update(s0, b1)[0].params)
    # two identical environments = one
    _close(update_mean(s0, stack(b1, b1))[0].params, update(s0, b1)[0].params)
