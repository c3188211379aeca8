"""Tests of jaxsched.nets.dras (spec dras.md §4–§5): Table III parameter counts (abstract shapes
only), the forward pass against a numpy oracle, initialisation, masking by truncation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.errors import ConfigError
from jaxsched.nets import dras

W, N, H = 3, 4, (5, 4)  # tiny shapes: window 3, 4 nodes
R_PG, R_DQL = 2 * W + N, 2 + N
KEY = jax.random.PRNGKey(0)


@pytest.mark.parametrize(
    "variant, n_nodes, kw, expected",
    [
        ("pg", 4360, {}, 21_890_053),
        ("dql", 4360, {"dql_bias": True}, 21_449_004),
        ("dql", 4360, {}, 21_449_003),  # code mode: no output bias
        ("pg", 12076, {"hidden": (10000, 4000)}, 161_960_053),
    ],
)
def test_table_iii_parameter_counts(variant, n_nodes, kw, expected):
    net, rows = dras.make_dras_net(variant, n_nodes, **kw)
    assert rows == {"pg": 2 * 50, "dql": 2}[variant] + n_nodes
    assert dras.param_count_of(net, rows) == expected


def test_sizing_helpers_and_errors():
    assert dras.dras_hidden(128) == (4000, 1000)
    assert dras.dras_hidden(4360) == (4000, 1000)
    assert dras.dras_hidden(12076) == (10000, 4000)
    assert dras.dras_input_rows(4360, "dql") == 4362
    with pytest.raises(ConfigError):
        dras.make_dras_net("pg", 10, mode="nonsense")[0].init(KEY, jnp.zeros((110, 2)))
    with pytest.raises(ConfigError):
        dras.dras_input_rows(10, "a3c")
    with pytest.raises(ConfigError):
        dras.make_dras_net("pg", 10, hidden=(3,))


def _rand_params(shapes, seed):
    rng = np.random.default_rng(seed)
    return jax.tree_util.tree_map(
        lambda s: jnp.asarray(rng.uniform(-0.8, 0.8, s.shape), jnp.float32), shapes
    )


def _oracle(p, x, slope, head):
    """numpy forward: the same a·x0 + b·x1 + c on every row, bias-free FC1/FC2, head."""
    p = jax.tree_util.tree_map(np.asarray, p["params"])
    k = p["conv_kernel"].reshape(2)
    y = x[..., 0] * k[0] + x[..., 1] * k[1] + p["conv_bias"][0]
    act = (
        (lambda v: np.maximum(v, 0)) if slope is None else (lambda v: np.where(v > 0, v, slope * v))
    )
    y = act(act(y @ p["fc1"]["kernel"]) @ p["fc2"]["kernel"])
    out = y @ p["out"]["kernel"] + p["out"].get("bias", 0.0)
    return (
        out if head == "pg" else (1 / (1 + np.exp(-out[..., 0])) if head == "sig" else out[..., 0])
    )


@pytest.fixture(scope="module")
def x_pg():
    return np.random.default_rng(1).uniform(0, 3, (2, R_PG, 2)).astype(np.float32)


def test_pg_forward_matches_oracle(x_pg):
    for mode, slope in (("code", None), ("paper", 0.01)):
        net = dras.DRASPolicy(hidden=H, window=W, mode=mode)
        p = _rand_params(jax.eval_shape(net.init, KEY, x_pg), 2)
        np.testing.assert_allclose(net.apply(p, x_pg), _oracle(p, x_pg, slope, "pg"), rtol=1e-5)


def test_dql_forward_heads_match_oracle():
    x = np.random.default_rng(3).uniform(0, 3, (2, R_DQL, 2)).astype(np.float32)
    for kw, head, slope in (({}, "sig", None), ({"mode": "paper"}, "lin", 0.01)):
        net = dras.DRASValue(hidden=H, **kw)
        p = _rand_params(jax.eval_shape(net.init, KEY, x), 4)
        assert ("bias" in p["params"]["out"]) == (head == "lin")
        np.testing.assert_allclose(net.apply(p, x), _oracle(p, x, slope, head), rtol=1e-5)


def test_keras_default_init(x_pg):
    net = dras.DRASPolicy(hidden=H, window=W)
    p = net.init(KEY, x_pg)["params"]
    assert p["conv_kernel"].shape == (1, 2, 1, 1)
    assert np.all(np.abs(p["conv_kernel"]) <= np.sqrt(6 / 4))
    assert np.all(np.asarray(p["conv_bias"]) == 0) and np.all(np.asarray(p["out"]["bias"]) == 0)
    lim = np.sqrt(6 / (R_PG + H[0]))
    assert np.all(np.abs(p["fc1"]["kernel"]) <= lim) and np.abs(p["fc1"]["kernel"]).max() > lim / 3
    assert "bias" not in p["fc1"] and "bias" not in p["fc2"]


def test_input_norm_equals_prescaled_input(x_pg):
    n_s, t_s = 4.0, 100.0
    net_n = dras.DRASPolicy(hidden=H, window=W, input_norm=(n_s, t_s))
    net = dras.DRASPolicy(hidden=H, window=W)
    p = _rand_params(jax.eval_shape(net.init, KEY, x_pg), 5)
    scaled = x_pg.copy()
    scaled[:, 0 : 2 * W : 2, 0] /= n_s  # job row A: n / n_scale
    scaled[..., 1] /= t_s  # every time column
    np.testing.assert_allclose(net_n.apply(p, x_pg), net.apply(p, scaled), rtol=1e-5)


TRUNC = jax.jit(dras.truncated_probs)


def test_truncated_probs_hand_case_and_underflow():
    logits = np.log(np.array([[0.1, 0.3, 0.6], [0.1, 0.3, 0.6], [1, 1, 1]], np.float32))
    logits[2] = [-200.0, -200.0, 200.0]  # valid slots underflow to 0 -> slot 0 (the code)
    p = np.asarray(TRUNC(logits, np.array([2, 3, 2])))
    np.testing.assert_allclose(p, [[0.25, 0.75, 0], [0.1, 0.3, 0.6], [1, 0, 0]], rtol=1e-6)


def test_sample_slot_respects_count_and_probs():
    logits = np.log(np.array([0.1, 0.3, 0.6], np.float32))
    keys = jax.random.split(KEY, 4000)
    a = np.asarray(jax.jit(jax.vmap(lambda k: dras.sample_slot(k, logits, 2)))(keys))
    assert a.max() <= 1
    assert abs(np.mean(a == 1) - 0.75) < 0.03


@jax.jit
def _log_probs(z, a):
    return dras.unmasked_log_prob(z, a), dras.masked_log_prob(z, np.array([2, 2]), a)


def test_log_probs_unmasked_and_masked():
    z = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 40.0]], np.float32)
    a = np.array([1, 0])
    sm = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    want = np.log(np.clip(sm[[0, 1], [1, 0]], 1e-8, 1 - 1e-8))
    unmasked, masked = _log_probs(z, a)
    np.testing.assert_allclose(unmasked, want, rtol=1e-5)
    np.testing.assert_allclose(masked, [2 - np.log(np.e + np.e**2), np.log(0.5)], rtol=1e-5)
