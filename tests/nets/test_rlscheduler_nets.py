"""Tests of jaxsched.nets: RLScheduler networks (spec rlscheduler.md §5) and masked helpers."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsched.sim  # noqa: F401  (turns on x64: the networks must stay float32 anyway)
from jaxsched import nets
from jaxsched.errors import ConfigError

N, F = nets.MAX_QUEUE_SIZE, nets.JOB_FEATURES
B = 5  # batch size used throughout (shares compilations)
KEY = jax.random.PRNGKey(0)

ALL_NETS = [("policy", n) for n in nets.POLICY_NAMES] + [("value", n) for n in nets.VALUE_NAMES]


def _make(kind, name):
    return nets.make_policy(name) if kind == "policy" else nets.make_value(name)


def _fake_params(shapes, seed):
    """Random float32 parameters (biases non-zero too) for a tree of ShapeDtypeStructs: cheap
    stand-ins for ``init`` (whose PRNG code is slow to compile on CPU), used by the tests of
    the forward pass.  The initialiser itself is tested on real ``init`` output below."""
    rng = np.random.default_rng(seed)

    def fill(s):
        scale = math.sqrt(3.0 / s.shape[-2]) if len(s.shape) >= 2 else 0.1  # O(1) outputs
        return jnp.asarray(rng.uniform(-scale, scale, s.shape), jnp.float32)

    return jax.tree_util.tree_map(fill, shapes)


@pytest.fixture(scope="module")
def built():
    """{(kind, name): (module, variables)} for every registered network (N = 128, F = 8)."""
    out = {}
    obs, mask = jnp.zeros((N, F), jnp.float32), jnp.ones((N,), bool)
    for i, kn in enumerate(ALL_NETS):
        m = _make(*kn)
        out[kn] = (m, _fake_params(jax.eval_shape(m.init, KEY, obs, mask), i))
    return out


_JITTED: dict = {}


def _fwd(built, kn):
    """``(obs[, mask]) -> output`` through one cached ``jax.jit(module.apply)`` per network, so
    tests sharing a shape share the compilation."""
    m, v = built[kn]
    if kn not in _JITTED:
        _JITTED[kn] = jax.jit(m.apply)
    f = _JITTED[kn]
    return lambda *args: f(v, *args)


def _obs(seed, shape=(N,)):
    """Observation-like input: features in [0, 1], float32 [..., N, 8]."""
    return jnp.asarray(np.random.default_rng(seed).random(shape + (F,)), jnp.float32)


def _mask(seed, shape=(N,), p=0.3):
    m = np.random.default_rng(seed + 1000).random(shape) < p
    m[..., 0] = True  # at least one valid slot per row
    return jnp.asarray(m)


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


# ------------------------------------------------------------------------------------------
# parameter counts, dtypes, initialisation
# ------------------------------------------------------------------------------------------
EXPECTED_COUNTS = {
    ("policy", "kernel"): 961,
    ("policy", "mlp_v1"): 180_736,
    ("policy", "mlp_v2"): 34_616,
    ("policy", "mlp_v3"): 41_248,
    ("policy", "lenet"): 43_552,  # 8 x 16 grid (spec §5.3's example for 128 slots)
    ("value", "kernel"): 11_570,
    ("value", "mlp"): 33_473,  # our choice of sizes for the paper's 3-layer MLP
}


def test_registry_covers_expected_networks():
    assert set(EXPECTED_COUNTS) == set(ALL_NETS)


@pytest.mark.parametrize("kind,name", ALL_NETS)
def test_param_counts(built, kind, name):
    _, v = built[(kind, name)]
    assert nets.param_count(v) == EXPECTED_COUNTS[(kind, name)]


def test_kernel_layer_shapes_match_spec(built):
    p = built[("policy", "kernel")][1]["params"]
    shapes = [p[k]["kernel"].shape for k in ("kernel_0", "kernel_1", "kernel_2", "kernel_out")]
    assert shapes == [(8, 32), (32, 16), (16, 8), (8, 1)]
    pv = built[("value", "kernel")][1]["params"]
    assert [pv[k]["kernel"].shape for k in ("mlp_0", "mlp_1", "mlp_2", "mlp_out")] == [
        (128, 64),
        (64, 32),
        (32, 8),
        (8, 1),
    ]


def test_lenet_reference_size_with_256_slots():
    # the reference's setting (MAX_QUEUE_SIZE 256, 16 x 16 grid): 84,640 parameters (spec §5.3)
    assert nets.lenet_grid(256) == (16, 16)
    assert nets.lenet_grid(128) == (8, 16)
    m = nets.LeNetPolicy()
    shapes = jax.eval_shape(m.init, KEY, jnp.zeros((256, F), jnp.float32), jnp.ones(256, bool))
    assert nets.param_count(shapes) == 84_640


def test_x64_is_on_and_everything_stays_float32(built):
    assert jax.config.jax_enable_x64
    obs64 = np.asarray(_obs(0, (2, N)), np.float64)
    mask = np.ones((2, N), bool)
    for (kind, name), (m, v) in built.items():
        shapes = jax.eval_shape(m.init, KEY, obs64, mask)  # what init would create
        assert {leaf.dtype for leaf in _leaves(shapes)} == {jnp.dtype(jnp.float32)}, name
        out = jax.eval_shape(m.apply, v, obs64, mask)  # outputs computed: see the jit test
        assert out.dtype == jnp.float32, (kind, name)
        assert out.shape == ((2, N) if kind == "policy" else (2,)), (kind, name)
    logits = jnp.zeros((B, N), jnp.float64)
    msk = jnp.ones((B, N), bool)
    for f in (nets.masked_log_probs, nets.masked_probs, nets.entropy, nets.mask_logits):
        assert f(logits, msk).dtype == jnp.float32
    assert nets.sample_action(KEY, logits, msk).dtype == jnp.int32
    assert nets.greedy_action(logits, msk).dtype == jnp.int32


def test_glorot_uniform_kernels_and_zero_biases():
    # real init of LeNet: conv and dense layers.  All networks build their layers with the
    # same helpers; flax init is slow to compile on CPU (PRNG code), so the other networks are
    # only checked through eval_shape.
    kind, name = "policy", "lenet"
    v = nets.init_params(_make(kind, name), jax.random.PRNGKey(42))
    assert nets.param_count(v) == EXPECTED_COUNTS[(kind, name)]
    assert {leaf.dtype for leaf in _leaves(v)} == {jnp.dtype(jnp.float32)}
    for path, leaf in jax.tree_util.tree_leaves_with_path(v):
        what = jax.tree_util.keystr(path)
        a = np.asarray(leaf)
        if what.endswith("['bias']"):
            assert not a.any(), (name, what)
            continue
        rf = math.prod(a.shape[:-2])  # receptive field (1 for dense)
        fan_in, fan_out = a.shape[-2] * rf, a.shape[-1] * rf
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        assert np.abs(a).max() <= limit, (name, what)
        if a.size >= 4096:  # uniform(-l, l): variance l^2 / 3
            assert np.var(a) == pytest.approx(limit**2 / 3, rel=0.1), (name, what)
            assert np.abs(a).max() > 0.95 * limit, (name, what)


# ------------------------------------------------------------------------------------------
# kernel network structure
# ------------------------------------------------------------------------------------------
def test_kernel_policy_is_permutation_equivariant(built):
    fwd = _fwd(built, ("policy", "kernel"))
    obs, mask = _obs(1), _mask(1)
    perm = np.random.default_rng(2).permutation(N)
    out = np.asarray(fwd(obs, mask))
    out_p = np.asarray(fwd(obs[perm], mask[perm]))
    np.testing.assert_allclose(out_p, out[perm], rtol=1e-6, atol=1e-6)
    assert (out_p == np.float32(nets.MASKED_LOGIT)).sum() == (~np.asarray(mask)).sum()
    raw = np.asarray(fwd(obs))
    np.testing.assert_allclose(np.asarray(fwd(obs[perm])), raw[perm], rtol=1e-6, atol=1e-6)
    assert np.unique(raw).size > N // 2  # the check is not vacuous


def test_kernel_policy_rows_are_independent(built):
    m, v = built[("policy", "kernel")]
    fwd = _fwd(built, ("policy", "kernel"))
    obs = _obs(3)
    base = np.asarray(fwd(obs))
    changed = np.asarray(fwd(obs.at[5].set(jnp.array([0.9, 0.1] * 4, jnp.float32))))
    assert changed[5] != base[5]
    np.testing.assert_array_equal(np.delete(changed, 5), np.delete(base, 5))
    # the row function is exactly the 4-layer MLP applied to one row
    p = v["params"]
    x = np.asarray(obs[7], np.float32)
    for k in ("kernel_0", "kernel_1", "kernel_2"):
        x = np.maximum(x @ np.asarray(p[k]["kernel"]) + np.asarray(p[k]["bias"]), 0)
    y = x @ np.asarray(p["kernel_out"]["kernel"]) + np.asarray(p["kernel_out"]["bias"])
    assert base[7] == pytest.approx(float(y[0]), rel=1e-5, abs=1e-6)


def test_lenet_lays_slots_out_row_major_on_8x16_grid(built):
    # slot i sits at (i // 16, i % 16): changing one slot changes the 1x1-conv output at that
    # grid cell only; after the two 2x2 pools it changes only one 4x4 block's 64 features.
    m = nets.LeNetPolicy()
    v = built[("policy", "lenet")][1]
    obs = _obs(4)

    @jax.jit
    def convs(o):
        _, st = m.apply(v, o, capture_intermediates=True)
        it = st["intermediates"]
        return it["conv_0"]["__call__"][0], it["conv_1"]["__call__"][0]

    slot = 37  # grid cell (2, 5)
    (a0, a1), (b0, b1) = map(
        lambda t: tuple(map(np.asarray, t)), (convs(obs), convs(obs.at[slot].add(0.5)))
    )
    assert a0.shape == (1, 8, 16, 32) and a1.shape == (1, 4, 8, 64)
    d0 = np.any(a0 != b0, axis=-1)[0]
    assert d0[2, 5] and d0.sum() == 1
    d1 = np.argwhere(np.any(a1 != b1, axis=-1)[0]).tolist()
    assert d1 in ([[1, 2]], [])  # after the first pool: cell (1, 2)


# ------------------------------------------------------------------------------------------
# masking and the categorical helpers
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", nets.POLICY_NAMES)
def test_policy_mask_gives_exact_zero_probabilities(built, name):
    fwd = _fwd(built, ("policy", name))
    obs, mask = _obs(5, (1, B, N)), _mask(5, (1, B, N))
    logits = fwd(obs, mask)[0]
    mask = np.asarray(mask[0])
    assert np.all(np.asarray(logits)[~mask] == np.float32(nets.MASKED_LOGIT))
    p = np.asarray(nets.masked_probs(logits, mask))
    assert np.all(p[~mask] == 0.0)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-5)
    assert np.all(p[mask] > 0)
    # masking the raw logits afterwards is the same (idempotent)
    raw = fwd(obs)[0]
    np.testing.assert_array_equal(np.asarray(nets.mask_logits(raw, mask)), np.asarray(logits))


EXTREME_LOGITS = [
    np.zeros(N, np.float32),
    np.full(N, 1e30, np.float32),
    np.full(N, -1e30, np.float32),
    np.where(np.arange(N) % 2 == 0, 3e38, -3e38).astype(np.float32),
    np.where(np.arange(N) % 3 == 0, np.inf, -np.inf).astype(np.float32),
    np.linspace(-1e7, 1e7, N).astype(np.float32),
]


@jax.jit
@jax.grad
def _ppo_grad(z, mk, a):
    """Gradient wrt the logits of the PPO terms (log-prob of the action + entropy bonus)."""
    return nets.action_log_prob(z, mk, a) + nets.entropy(z, mk)


@pytest.mark.parametrize("i", range(len(EXTREME_LOGITS)))
def test_helpers_no_nan_with_extreme_logits_and_masks(i):
    logits = jnp.asarray(EXTREME_LOGITS[i])
    rng = np.random.default_rng(i)
    masks = [np.eye(N, dtype=bool)[j] for j in (0, 1, 77, N - 1)]  # one valid slot
    masks += [rng.random(N) < 0.5, np.ones(N, bool), ~np.eye(N, dtype=bool)[3]]
    for mk in masks:
        lp = np.asarray(nets.masked_log_probs(logits, mk))
        p = np.asarray(nets.masked_probs(logits, mk))
        ent = float(nets.entropy(logits, mk))
        assert np.isfinite(lp).all() and np.isfinite(p).all() and np.isfinite(ent)
        assert np.all(p[~mk] == 0.0) and np.all(np.exp(lp[~mk]) == 0.0)
        assert p.sum() == pytest.approx(1.0, rel=1e-5)
        assert np.exp(lp).sum() == pytest.approx(1.0, rel=1e-5)
        assert ent >= -1e-6
        if mk.sum() == 1:
            j = int(np.argmax(mk))
            assert p[j] == 1.0 and lp[j] == 0.0 and ent == 0.0
        assert mk[int(nets.greedy_action(logits, mk))]
        # gradients of the PPO quantities stay finite
        g = _ppo_grad(logits, mk, np.int32(np.argmax(mk)))
        assert np.isfinite(np.asarray(g)).all()


def test_masked_slot_with_huge_raw_logit_is_still_excluded():
    # the reference's additive -1e6 would fail here; replacement masking must not
    logits = jnp.zeros(N, jnp.float32).at[10].set(1e8).at[11].set(jnp.inf)
    mk = np.zeros(N, bool)
    mk[[3, 50]] = True
    p = np.asarray(nets.masked_probs(logits, mk))
    assert p[10] == 0.0 and p[11] == 0.0
    assert p[3] == pytest.approx(0.5) and p[50] == pytest.approx(0.5)
    assert int(nets.greedy_action(logits, mk)) == 3
    assert float(nets.entropy(logits, mk)) == pytest.approx(math.log(2), rel=1e-6)


def test_all_masked_row_is_defined():
    z = jnp.linspace(-5, 5, N, dtype=jnp.float32)
    mk = np.zeros(N, bool)
    lp = np.asarray(nets.masked_log_probs(z, mk))
    assert np.isfinite(lp).all()
    assert np.exp(lp).sum() == pytest.approx(1.0, rel=1e-5)
    assert np.isfinite(float(nets.entropy(z, mk)))


def test_entropy_and_log_prob_values():
    z = jnp.asarray(np.random.default_rng(0).normal(size=(B, N)), jnp.float32)
    mk = np.random.default_rng(1).random((B, N)) < 0.4
    mk[:, 0] = True
    zz = np.where(mk, np.asarray(z, np.float64), -np.inf)
    ref_lp = (
        zz
        - np.log(np.exp(zz - zz.max(-1, keepdims=True)).sum(-1, keepdims=True))
        - zz.max(-1, keepdims=True)
    )
    ref_p = np.exp(ref_lp)
    ref_ent = -np.sum(np.where(mk, ref_p * np.where(mk, ref_lp, 0), 0), -1)
    lp = np.asarray(nets.masked_log_probs(z, mk))
    np.testing.assert_allclose(lp[mk], ref_lp[mk], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(nets.entropy(z, mk)), ref_ent, rtol=1e-5)
    a = np.array([0, int(np.flatnonzero(mk[1])[-1]), 0, 0, 0])
    np.testing.assert_allclose(
        np.asarray(nets.action_log_prob(z, mk, a)), ref_lp[np.arange(B), a], rtol=1e-5, atol=1e-5
    )
    # uniform over k valid slots -> entropy log k
    assert float(nets.entropy(jnp.zeros(N), np.arange(N) < 10)) == pytest.approx(
        math.log(10), rel=1e-6
    )


N_KEYS = 8192
_vsample = jax.jit(jax.vmap(nets.sample_action))  # one key per row; shared compilation


def test_sampling_never_picks_a_masked_slot():
    keys = jax.random.split(jax.random.PRNGKey(11), N_KEYS)
    rng = np.random.default_rng(5)
    mk = rng.random((N_KEYS, N)) < 0.05
    mk[np.arange(N_KEYS), rng.integers(0, N, N_KEYS)] = True
    # adversarial raw logits: masked slots far larger than valid ones
    z = np.where(mk, rng.normal(size=(N_KEYS, N)), 1e20).astype(np.float32)
    acts = np.asarray(_vsample(keys, z, mk))
    assert acts.dtype == np.int32
    assert mk[np.arange(N_KEYS), acts].all()
    assert len(np.unique(acts)) > N // 2  # spread over many slots


def test_sampling_follows_the_masked_softmax():
    z = np.linspace(0, 3, N).astype(np.float32)
    mk = np.zeros(N, bool)
    mk[[2, 40, 90, 127]] = True
    keys = jax.random.split(jax.random.PRNGKey(2), N_KEYS)
    acts = np.asarray(_vsample(keys, np.tile(z, (N_KEYS, 1)), np.tile(mk, (N_KEYS, 1))))
    freq = np.bincount(acts, minlength=N) / len(acts)
    p = np.asarray(nets.masked_probs(z, mk))
    assert freq[~mk].sum() == 0
    np.testing.assert_allclose(freq[mk], p[mk], atol=0.025)  # ~4.5 sigma


# ------------------------------------------------------------------------------------------
# jit / vmap / batch dimensions
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,name", ALL_NETS)
def test_jit_vmap_and_batch_dims_agree(built, kind, name):
    m, v = built[(kind, name)]
    obs = np.asarray(_obs(6, (B, N)), np.float64)  # float64 input (x64 is on)
    mask = np.asarray(_mask(6, (B, N)))
    eager = m.apply(v, obs, mask)  # no jit
    assert eager.dtype == jnp.float32
    assert eager.shape == ((B, N) if kind == "policy" else (B,))
    fwd = _fwd(built, (kind, name))
    loop = np.stack([np.asarray(fwd(obs[b], mask[b])) for b in range(B)])
    # jitted, with two leading batch dimensions
    jitted = np.asarray(fwd(obs.reshape((1, B, N, F)), mask.reshape(1, B, N)))[0]
    vmapped = np.asarray(jax.jit(jax.vmap(m.apply, (None, 0, 0)))(v, obs, mask))
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(eager), jitted, **tol)
    np.testing.assert_allclose(loop, jitted, **tol)
    np.testing.assert_allclose(vmapped, loop, **tol)


def test_helpers_jit_and_vmap_match_eager():
    rng = np.random.default_rng(9)
    z = jnp.asarray(rng.normal(size=(B, N)) * 10, jnp.float32)
    mk = rng.random((B, N)) < 0.3
    mk[:, 7] = True
    key = jax.random.PRNGKey(4)
    tol = dict(rtol=1e-6, atol=1e-6)
    for f in (nets.masked_log_probs, nets.entropy):
        jitted = np.asarray(f(z, mk))  # the helpers run jitted code
        with jax.disable_jit():
            eager = np.asarray(f(z, mk))
        np.testing.assert_allclose(eager, jitted, **tol)
        np.testing.assert_allclose(
            np.stack([np.asarray(f(z[i], mk[i])) for i in range(B)]), jitted, **tol
        )
    lp = np.asarray(nets.masked_log_probs(z, mk))
    np.testing.assert_allclose(
        np.asarray(jax.jit(jax.vmap(nets.masked_log_probs))(z, mk)), lp, **tol
    )
    g = np.asarray(nets.greedy_action(z, mk))
    np.testing.assert_array_equal(g, np.argmax(np.where(mk, lp, -np.inf), -1))
    # a float64 logit array and a 0/1 float mask give the same results as float32 / bool
    np.testing.assert_array_equal(
        np.asarray(nets.masked_log_probs(np.asarray(z, np.float64), mk.astype(np.float64))), lp
    )
    # sampling inside jit equals sampling called directly (same key, same draws)
    direct = np.asarray(nets.sample_action(key, z, mk))
    np.testing.assert_array_equal(np.asarray(jax.jit(nets.sample_action)(key, z, mk)), direct)
    assert mk[np.arange(B), direct].all()


# ------------------------------------------------------------------------------------------
# registry and input checks
# ------------------------------------------------------------------------------------------
def test_registry_names_and_aliases():
    assert isinstance(nets.make_policy("RLScheduler"), nets.KernelPolicy)
    assert isinstance(nets.make_policy("mlp-v2"), nets.MLPPolicy)
    assert nets.make_policy("MLP_V3").hidden == (32,) * 5
    assert isinstance(nets.make_policy("lenet"), nets.LeNetPolicy)
    assert isinstance(nets.make_value("kernel"), nets.KernelValue)
    assert isinstance(nets.make_value("paper"), nets.MLPValue)
    with pytest.raises(ConfigError, match="unknown policy network"):
        nets.make_policy("transformer")
    with pytest.raises(ConfigError, match="unknown value network"):
        nets.make_value("mlp_v1")


def test_shape_errors(built):
    m, v = built[("policy", "kernel")]
    with pytest.raises(AssertionError):
        m.apply(v, _obs(0), jnp.ones((N - 1,), bool))
    with pytest.raises(ValueError):
        m.apply(v, jnp.ones((F,), jnp.float32))
    with pytest.raises(ValueError):
        jax.eval_shape(nets.LeNetPolicy(grid=(4, 4)).init, KEY, _obs(0), None)


def test_kernel_value_prefix_with_padding_rows():
    """KernelValue on a prefix plus n_slots/pad_row == on the full padded observation."""
    from jaxsched.nets import KernelValue

    pad = jnp.asarray([0, 1, 1, 1, 1, 1, 1, 0], jnp.float32)
    net = KernelValue()
    rng = np.random.default_rng(3)
    obs = jnp.asarray(rng.uniform(0, 1, (5, 128, 8)), jnp.float32)
    obs = jnp.where((jnp.arange(128) < 11)[None, :, None], obs, pad)
    params = net.init(jax.random.PRNGKey(0), obs[0])
    full = net.apply(params, obs)
    for K in (11, 16, 64, 128):
        got = net.apply(params, obs[:, :K], n_slots=128, pad_row=pad)
        np.testing.assert_allclose(np.asarray(got), np.asarray(full), rtol=1e-5, atol=1e-6)
    wrong = net.apply(params, obs[:, :16], n_slots=128, pad_row=pad + 1.0)
    assert np.abs(np.asarray(wrong) - np.asarray(full)).max() > 1e-4


@pytest.mark.parametrize("shape", [(2, 8, 16, 3), (1, 5, 7, 2)])
def test_max_pool_2x2_equals_flax_max_pool_and_its_gradient(shape):
    # LeNet's pooling: a reshape and a max, equal to nn.max_pool's VALID 2x2/2 on even and odd
    # grids (odd: the last row/column dropped), and the same gradient where the max is unique
    import flax.linen as nn

    y = jax.random.normal(KEY, shape, jnp.float32)
    ref = lambda t: nn.max_pool(t, (2, 2), strides=(2, 2), padding="VALID")  # noqa: E731
    np.testing.assert_array_equal(nets.max_pool_2x2(y), ref(y))
    g = lambda f: jax.grad(lambda t: jnp.sum(f(t) * jnp.arange(f(t).size).reshape(f(t).shape)))  # noqa: E731
    np.testing.assert_array_equal(g(nets.max_pool_2x2)(y), g(ref)(y))


def test_conv1x1_equals_flax_conv_with_the_same_parameters_and_gradient():
    # LeNet's 1 x 1 convolutions as a product over the channels: nn.Conv's parameter names and
    # shapes (checkpoints interchangeable), its values and its gradients to float32 rounding
    import flax.linen as nn

    y = jax.random.normal(KEY, (3, 8, 16, 8), jnp.float32)
    mine, ref = nets.Conv1x1(32), nn.Conv(32, kernel_size=(1, 1))
    p = mine.init(KEY, y)
    assert jax.tree_util.tree_map(jnp.shape, p) == jax.tree_util.tree_map(
        jnp.shape, ref.init(KEY, y)
    )
    p = jax.tree_util.tree_map(lambda a: a + 0.1, p)  # a non-zero bias too
    np.testing.assert_allclose(mine.apply(p, y), ref.apply(p, y), rtol=1e-5, atol=1e-5)
    g = lambda m: jax.grad(lambda q: jnp.sum(jnp.sin(m.apply(q, y))))(p)  # noqa: E731
    for a, b in zip(jax.tree_util.tree_leaves(g(mine)), jax.tree_util.tree_leaves(g(ref))):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_lenet_pooling_benchmark_runs_both_poolings(capsys):
    # benchmarks/experiments/lenet_pooling.py on a tiny batch: both poolings timed, the ratio printed, and
    # the module's pooling restored afterwards
    from shared_data import load_benchmark

    LP = load_benchmark("lenet_pooling")
    before = nets.rlscheduler.max_pool_2x2
    assert LP.main(["--batch", "4", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "reduce_window / reshape = " in out and out.count("one gradient over 4") == 2
    assert nets.rlscheduler.max_pool_2x2 is before
