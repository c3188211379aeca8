"""DRAS networks (spec ``dras.md`` §5): the policy (DRAS-PG) and the value (DRAS-DQL) network.

Trunk (both): input ``[..., R, 2]`` float -> the **1 x 2 shared convolution** (one filter: weights
a, b and bias c, the same linear map ``a·x0 + b·x1 + c`` on every row, job rows and node rows
alike, no activation) -> ``[..., R]`` -> FC1 (``R -> H1``, **no bias**) -> activation -> FC2
(``H1 -> H2``, no bias) -> activation -> head.

* PG head (:class:`DRASPolicy`): ``H2 -> W`` (50) **with bias**; returns the raw logits
  ``[..., W]`` (softmax of them = the policy).  R = 2W + N.
* DQL head (:class:`DRASValue`): ``H2 -> 1``; code mode: no bias, sigmoid; paper mode: with bias,
  linear ("a single neuron").  Returns ``[...]``.  R = 2 + N.

Modes.  ``mode="code"`` (the CQSim DRAS branch): ReLU; DQL head sigmoid without bias.
``mode="paper"``: leaky ReLU with slope ``leaky_slope`` (the paper gives none; default 0.01,
flax's and PyTorch's default — Keras' ``LeakyReLU`` would be 0.3, TF's ``leaky_relu`` 0.2) and
a linear DQL head with bias.  ``activation`` / ``dql_bias`` / ``dql_sigmoid`` override the mode.

Initialisation: Keras defaults — Glorot-uniform kernels (the convolution's fans are those of a
``(1, 2, 1, 1)`` Conv2D kernel: fan_in = fan_out = 2), zero biases.  Parameters float32.

Optional input normalisation (``input_norm=(n_scale, t_scale)``, default None = raw units as
paper and code): before the convolution, job row A ``[n, t]`` becomes ``[n / n_scale,
t / t_scale]``, job row B ``[p, w]`` becomes ``[p, w / t_scale]`` and node rows ``[f, τ]``
become ``[f, τ / t_scale]`` (a typical choice: the node count N and the trace's largest
estimate).  Raw seconds (up to 10^5–10^6) dominate a raw input's scale: with Keras' init the
initial PG policy is then nearly deterministic (mean largest slot probability ≈ 0.999 on random
states) and the clipped log-probability of the code gives almost no gradient; the normalised
variant keeps every entry in [0, ~1] and starts near uniform (benchmarks/RESULTS.md §9,
``benchmarks/experiments/dras_bandit.py``).  It equals feeding the raw network the input of
:func:`jaxsched.envs.dras_features.pg_observation` built with the same scales.

Parameter counts (Table III): Theta PG (N = 4360, 4000/1000) 21,890,053; Theta DQL 21,449,004
with the output bias, 21,449,003 without (:func:`param_count_of`, no weights materialised).
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxsched.errors import ConfigError
from jaxsched.nets.categorical import (
    MASKED_LOGIT,
    apply_mask,
    gumbel_argmax,
    log_prob_of,
    log_softmax,
)

__all__ = [
    "WINDOW",
    "DRASPolicy",
    "DRASValue",
    "make_dras_net",
    "dras_hidden",
    "dras_input_rows",
    "param_count_of",
    "window_mask",
    "truncated_probs",
    "sample_slot",
    "unmasked_log_prob",
    "masked_log_prob",
]

WINDOW = 50
"""Window size W of DRAS-PG (spec §3)."""
_F32 = jnp.float32
_MODES = ("code", "paper")
_ACTS = ("relu", "leaky_relu")
_CLIP = 1e-8


def _check_mode(mode: str) -> str:
    if mode not in _MODES:
        raise ConfigError(f"unknown DRAS mode {mode!r}; choose one of {', '.join(_MODES)}")
    return mode


def dras_input_rows(n_nodes: int, variant: str = "pg", window: int = WINDOW) -> int:
    """Rows of the network input: ``2 * window + n_nodes`` (PG) or ``2 + n_nodes`` (DQL)."""
    if variant not in ("pg", "dql"):
        raise ConfigError(f"unknown DRAS variant {variant!r}; choose pg or dql")
    return (2 * window if variant == "pg" else 2) + int(n_nodes)


def dras_hidden(n_nodes: int) -> tuple[int, int]:
    """Hidden sizes (H1, H2) sized from a trace's node count: the shipped code's (and the
    paper's Theta) ``(4000, 1000)`` up to Theta's 4,392 nodes, the paper's Cori ``(10000,
    4000)`` above (the paper gives only these two points)."""
    return (4000, 1000) if int(n_nodes) <= 4392 else (10000, 4000)


def _norm_scale(rows: int, job_rows: int, input_norm) -> jax.Array:
    """``[rows, 2]`` multipliers of the optional input normalisation (module docstring)."""
    n_scale, t_scale = (float(s) for s in input_norm)
    is_a = (jnp.arange(rows) < job_rows) & (jnp.arange(rows) % 2 == 0)
    col0 = jnp.where(is_a, 1.0 / n_scale, 1.0)
    return jnp.stack([col0, jnp.full((rows,), 1.0 / t_scale)], axis=-1).astype(_F32)


def _trunk(mod: nn.Module, x, hidden, activation: str, slope: float, job_rows: int, input_norm):
    """Convolution + FC1 + FC2 (module docstring) inside ``mod``'s compact call:
    ``[..., R, 2] -> [..., H2]`` (parameters ``conv_kernel``, ``conv_bias``, ``fc1``, ``fc2``)."""
    x = jnp.asarray(x, _F32)
    if x.ndim < 2 or x.shape[-1] != 2:
        raise ValueError(f"DRAS input must have shape [..., R, 2], got {x.shape}")
    if input_norm is not None:
        x = x * _norm_scale(x.shape[-2], job_rows, input_norm)
    glorot = nn.initializers.xavier_uniform()
    k = mod.param("conv_kernel", glorot, (1, 2, 1, 1), _F32).reshape(2)
    c = mod.param("conv_bias", nn.initializers.zeros, (1,), _F32)
    y = x[..., 0] * k[0] + x[..., 1] * k[1] + c[0]  # [..., R]
    for i, h in enumerate(hidden):
        dense = nn.Dense(h, use_bias=False, kernel_init=glorot, param_dtype=_F32, name=f"fc{i + 1}")
        y = dense(y)
        y = nn.relu(y) if activation == "relu" else nn.leaky_relu(y, slope)
    return y


def _resolve_act(mode: str, activation: str | None) -> str:
    act = activation or ("relu" if _check_mode(mode) == "code" else "leaky_relu")
    if act not in _ACTS:
        raise ConfigError(f"unknown activation {act!r}; choose one of {', '.join(_ACTS)}")
    return act


class DRASPolicy(nn.Module):
    """DRAS-PG network: ``__call__(obs)``: float ``[..., 2W + N, 2]`` -> raw logits float32
    ``[..., W]`` (mask with :func:`truncated_probs` / :func:`masked_log_prob`)."""

    hidden: tuple[int, int] = (4000, 1000)
    window: int = WINDOW
    mode: str = "code"
    activation: str | None = None
    leaky_slope: float = 0.01
    input_norm: tuple[float, float] | None = None

    @nn.compact
    def __call__(self, obs) -> jax.Array:
        act = _resolve_act(self.mode, self.activation)
        y = _trunk(self, obs, self.hidden, act, self.leaky_slope, 2 * self.window, self.input_norm)
        glorot = nn.initializers.xavier_uniform()
        return nn.Dense(self.window, kernel_init=glorot, param_dtype=_F32, name="out")(y)


class DRASValue(nn.Module):
    """DRAS-DQL network: ``__call__(obs)``: float ``[..., 2 + N, 2]`` (one candidate job block
    and the node rows) -> value float32 ``[...]`` (sigmoid in code mode, linear in paper
    mode; ``dql_bias`` / ``dql_sigmoid`` override)."""

    hidden: tuple[int, int] = (4000, 1000)
    mode: str = "code"
    activation: str | None = None
    leaky_slope: float = 0.01
    dql_bias: bool | None = None
    dql_sigmoid: bool | None = None
    input_norm: tuple[float, float] | None = None

    @nn.compact
    def __call__(self, obs) -> jax.Array:
        code = _check_mode(self.mode) == "code"
        act = _resolve_act(self.mode, self.activation)
        y = _trunk(self, obs, self.hidden, act, self.leaky_slope, 2, self.input_norm)
        bias = (not code) if self.dql_bias is None else self.dql_bias
        sigm = code if self.dql_sigmoid is None else self.dql_sigmoid
        glorot = nn.initializers.xavier_uniform()
        out = nn.Dense(1, use_bias=bias, kernel_init=glorot, param_dtype=_F32, name="out")
        v = out(y)[..., 0]
        return nn.sigmoid(v) if sigm else v


def make_dras_net(variant: str, n_nodes: int, *, mode: str = "code", hidden=None, **kw):
    """``(module, input_rows)`` for a trace of ``n_nodes`` nodes: variant ``pg`` or ``dql``,
    hidden sizes from :func:`dras_hidden` unless given; other keywords go to the module."""
    hidden = tuple(hidden) if hidden is not None else dras_hidden(n_nodes)
    if len(hidden) != 2 or min(hidden) < 1:
        raise ConfigError(f"DRAS hidden sizes must be two positive ints, got {hidden}")
    window = kw.get("window", WINDOW)
    rows = dras_input_rows(n_nodes, variant, window)
    if variant == "pg":
        return DRASPolicy(hidden=hidden, mode=mode, **kw), rows
    return DRASValue(hidden=hidden, mode=mode, **kw), rows


def param_count_of(module: nn.Module, rows: int) -> int:
    """Trainable parameters of ``module`` on ``[rows, 2]`` inputs, from ``jax.eval_shape`` (no
    weights are materialised)."""
    shapes = jax.eval_shape(module.init, jax.random.PRNGKey(0), jnp.zeros((rows, 2), _F32))
    return int(sum(math.prod(s.shape) for s in jax.tree_util.tree_leaves(shapes)))


# ----------------------------------------------------------------------------------------------
# masking by truncation and renormalisation (spec §4)
# ----------------------------------------------------------------------------------------------
def window_mask(count, window: int = WINDOW) -> jax.Array:
    """bool ``[..., W]``: slot ``k`` valid iff ``k < count`` (int ``[...]``, jobs in window)."""
    return jnp.arange(window) < jnp.asarray(count)[..., None]


def truncated_probs(logits, count) -> jax.Array:
    """The code's masked policy: softmax over all W slots, keep the first ``count`` and
    renormalise; if they sum to 0 (underflow), all mass on slot 0 (spec note 7).  logits float
    ``[..., W]``, count int ``[...]`` -> float32 ``[..., W]``."""
    p = jax.nn.softmax(jnp.asarray(logits, _F32), axis=-1)
    m = window_mask(count, p.shape[-1])
    p = jnp.where(m, p, 0.0)
    s = jnp.sum(p, axis=-1, keepdims=True)
    slot0 = (jnp.arange(p.shape[-1]) == 0).astype(_F32)
    return jnp.where(s > 0, p / jnp.where(s > 0, s, 1.0), slot0)


def sample_slot(key, logits, count) -> jax.Array:
    """A slot drawn from :func:`truncated_probs` (Gumbel-max on its log), int32 ``[...]``."""
    p = truncated_probs(logits, count)
    return gumbel_argmax(key, jnp.where(p > 0, jnp.log(jnp.maximum(p, 1e-38)), MASKED_LOGIT))


def unmasked_log_prob(logits, action) -> jax.Array:
    """The code's loss term: ``log(clip(softmax(logits)[a], 1e-8, 1 − 1e-8))`` over all W
    slots (no mask).  logits float ``[..., W]``, action int ``[...]`` -> float32 ``[...]``."""
    p = jax.nn.softmax(jnp.asarray(logits, _F32), axis=-1)
    pa = jnp.take_along_axis(p, jnp.asarray(action)[..., None], axis=-1)[..., 0]
    return jnp.log(jnp.clip(pa, _CLIP, 1.0 - _CLIP))


def masked_log_prob(logits, count, action) -> jax.Array:
    """Paper mode: log-probability of ``action`` under the truncated and renormalised softmax
    (= log-softmax over the first ``count`` slots), float32 ``[...]``."""
    z = jnp.asarray(logits, _F32)
    logp = log_softmax(apply_mask(z, window_mask(count, z.shape[-1])))
    return log_prob_of(logp, jnp.asarray(action))
