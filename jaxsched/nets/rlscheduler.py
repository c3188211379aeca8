"""RLScheduler policy and value networks (spec ``rlscheduler.md`` §5) and masked-categorical helpers.

Conventions shared by every network here:

* ``obs``: float ``[..., N, F]`` — N queue slots (128 in the paper, spec §2.9) of F job features
  (8).  Any number of leading batch dimensions is allowed; inputs of any float dtype are cast to
  float32 first.
* ``mask``: bool ``[..., N]`` — True for slots holding a real job (spec §2.10).  Numeric 0/1
  masks are accepted as well (non-zero = valid).
* Policy modules return **masked logits**, float32 ``[..., N]`` (raw logits when ``mask`` is
  None).  Value modules return float32 ``[...]`` (one number per observation).
* Parameters and outputs are float32 even when JAX's 64-bit mode is on (the ``jaxsched``
  commands turn it on for their work, jaxsched/precision.py).  Dense and convolution layers are initialised like TF1 ``tf.layers``:
  Glorot-uniform kernels, zero biases.  Hidden layers use ReLU, output layers are linear (the
  LeNet variant has no activations at all, as in the reference).

Masking and the masked-categorical helpers (:func:`mask_logits`, :func:`masked_log_probs`,
:func:`sample_action`, ...) live in :mod:`jaxsched.nets.categorical` (re-exported by :mod:`jaxsched.nets`).
``JOB_FEATURES`` is the observation's (:data:`jaxsched.envs.rlscheduler_features.JOB_FEATURES`), read
from there on first use so that importing the networks does not turn on 64-bit mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxsched.errors import ConfigError
from jaxsched.nets.categorical import apply_mask

__all__ = [
    "MAX_QUEUE_SIZE",
    "JOB_FEATURES",  # noqa: F822  (module __getattr__)
    "KernelPolicy",
    "ResidualKernelPolicy",
    "MLPPolicy",
    "LeNetPolicy",
    "Conv1x1",
    "KernelValue",
    "MLPValue",
    "POLICY_NAMES",
    "VALUE_NAMES",
    "make_policy",
    "make_value",
    "init_params",
    "param_count",
    "lenet_grid",
    "max_pool_2x2",
]

MAX_QUEUE_SIZE = 128
"""Number of observation slots of the reference (spec §2.9)."""


def __getattr__(name: str):
    # JOB_FEATURES belongs to the observation (jaxsched.envs.rlscheduler); importing envs turns
    # on JAX's 64-bit mode, so it is looked up on first use, not at import time
    if name == "JOB_FEATURES":
        from jaxsched.envs.rlscheduler_features import JOB_FEATURES

        return JOB_FEATURES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_F32 = jnp.float32


def _glorot() -> Callable:
    # TF1 default for tf.layers.dense / conv2d: uniform in +-sqrt(6 / (fan_in + fan_out)), with
    # the receptive field folded into both fans for convolutions (same as flax's definition).
    return nn.initializers.xavier_uniform()


def _dense(features: int, name: str) -> nn.Dense:
    return nn.Dense(
        features,
        kernel_init=_glorot(),
        bias_init=nn.initializers.zeros,
        dtype=_F32,
        param_dtype=_F32,
        name=name,
    )


def _check_obs(obs, mask) -> tuple[jax.Array, jax.Array | None]:
    """Cast obs to float32 ``[..., N, F]`` and mask to bool ``[..., N]`` and check shapes."""
    x = jnp.asarray(obs, _F32)
    if x.ndim < 2:
        raise ValueError(f"obs must have shape [..., N, F], got {x.shape}")
    m = None
    if mask is not None:
        m = jnp.asarray(mask)
        if m.dtype != jnp.bool_:
            m = m != 0
        chex.assert_shape(m, x.shape[:-1])
    return x, m


def _row_mlp(x: jax.Array, hidden: Sequence[int], out: int, prefix: str) -> jax.Array:
    """Dense stack on the last axis: ReLU after each hidden layer, linear output layer."""
    for i, h in enumerate(hidden):
        x = nn.relu(_dense(h, f"{prefix}_{i}")(x))
    return _dense(out, f"{prefix}_out")(x)


# ----------------------------------------------------------------------------------------------
# Policy networks
# ----------------------------------------------------------------------------------------------
class KernelPolicy(nn.Module):
    """RLScheduler's kernel policy (spec §5.1, ``rl_kernel``).

    One MLP ``F -> 32 -> 16 -> 8 -> 1`` (ReLU hidden, linear output) applied to every slot with
    shared weights, so the logits are permutation-equivariant in the slots.  961 parameters for
    F = 8.  Padding slots pass through the kernel too; only the mask removes them.

    ``__call__(obs, mask=None)``: obs float ``[..., N, F]``, mask bool ``[..., N]`` ->
    masked logits float32 ``[..., N]`` (raw logits if ``mask`` is None).
    """

    hidden: tuple[int, ...] = (32, 16, 8)

    @nn.compact
    def __call__(self, obs, mask=None) -> jax.Array:
        x, m = _check_obs(obs, mask)
        logits = _row_mlp(x, self.hidden, 1, "kernel")[..., 0]
        return logits if m is None else apply_mask(logits, m)


class ResidualKernelPolicy(nn.Module):
    """A residual kernel policy (issue 49, "start from what works"): each slot's logit is a
    static heuristic's preference plus a learned correction,

        logit_i = -exp(log_inv_temperature) * r_i + MLP(x_i)

    where ``r_i`` is the rank of slot i's job among the visible jobs in the heuristic's
    order, read from the observation's last column (the prior column of an env built with
    ``prior=``: ``r_i / PRIOR_RANK_SCALE``), and ``MLP`` is the kernel MLP ``F -> 32 -> 16 ->
    8 -> 1`` on the other features ``x_i`` with its output layer initialised to zero. So
    before training the correction is exactly 0, the greedy pick (argmax) is the heuristic's
    job, and sampling takes the heuristic's k-th job with probability proportional to
    ``exp(-k / temperature)``. ``log_inv_temperature`` (float32 scalar, initialised to
    ``-log(temperature)``) is learnt with the rest. 962 parameters for F = 8 (the kernel's
    961 and the temperature).

    ``__call__(obs, mask=None)``: obs float ``[..., N, F + 1]`` (the prior column last), mask
    bool ``[..., N]`` -> masked logits float32 ``[..., N]``. Per slot, so it may be evaluated
    on slot prefixes like :class:`KernelPolicy`.
    """

    hidden: tuple[int, ...] = (32, 16, 8)
    temperature: float = 0.5

    @nn.compact
    def __call__(self, obs, mask=None) -> jax.Array:
        from jaxsched.envs.rlscheduler_features import PRIOR_RANK_SCALE

        x, m = _check_obs(obs, mask)
        if not self.temperature > 0:
            raise ConfigError(f"residual temperature must be > 0, got {self.temperature}")
        rank = x[..., -1] * jnp.float32(PRIOR_RANK_SCALE)  # exact integers
        h = x[..., :-1]
        for i, width in enumerate(self.hidden):
            h = nn.relu(_dense(width, f"kernel_{i}")(h))
        out = nn.Dense(1, kernel_init=nn.initializers.zeros, bias_init=nn.initializers.zeros,
                       dtype=_F32, param_dtype=_F32, name="kernel_out")  # fmt: skip
        log_inv_t = self.param(
            "log_inv_temperature",
            nn.initializers.constant(-math.log(self.temperature)),
            (),
            _F32,
        )
        logits = out(h)[..., 0] - jnp.exp(log_inv_t) * rank
        return logits if m is None else apply_mask(logits, m)


class MLPPolicy(nn.Module):
    """Plain MLP policy of Table IV (spec §5.3): the flattened ``N*F`` observation ->
    ``hidden`` (ReLU) -> N logits (linear).

    v1 = (128, 128, 128): 180,736 parameters; v2 = (32, 16, 8): 34,616; v3 = (32,)*5: 41,248
    (N = 128, F = 8).

    ``__call__(obs, mask=None)``: obs float ``[..., N, F]``, mask bool ``[..., N]`` ->
    masked logits float32 ``[..., N]``.
    """

    hidden: tuple[int, ...] = (128, 128, 128)

    @nn.compact
    def __call__(self, obs, mask=None) -> jax.Array:
        x, m = _check_obs(obs, mask)
        n = x.shape[-2]
        flat = x.reshape(x.shape[:-2] + (n * x.shape[-1],))
        logits = _row_mlp(flat, self.hidden, n, "mlp")
        return logits if m is None else apply_mask(logits, m)


def max_pool_2x2(y: jax.Array) -> jax.Array:
    """``nn.max_pool(y, (2, 2), strides=(2, 2), padding="VALID")`` for ``y`` ``[B, h, w, c]``,
    written as a reshape and a max: the same values, and a gradient that XLA on the CPU
    computes as a cheap elementwise select instead of the select-and-scatter of
    ``reduce_window``'s (a LeNet policy gradient 1.23x faster: benchmarks/experiments/lenet_pooling.py)."""
    b, h, w, c = y.shape
    y = y[:, : h - h % 2, : w - w % 2, :]
    return jnp.max(y.reshape(b, h // 2, 2, w // 2, 2, c), axis=(2, 4))


class Conv1x1(nn.Module):
    """``nn.Conv(features, kernel_size=(1, 1))`` written as a matrix product over the channels,
    with the same parameters (``kernel`` float32 ``[1, 1, C, features]``, ``bias``
    ``[features]``), so checkpoints are interchangeable. ``__call__(y)``: ``y`` float32
    ``[..., C]`` -> ``[..., features]``. The values agree with ``nn.Conv``'s to float32
    rounding; the point is the update's speed: with ``nn.Conv`` four LeNet PPO epochs on the
    CPU took 13x as long (benchmarks/RESULTS.md §14.3)."""

    features: int
    kernel_init: Callable = nn.initializers.lecun_normal()
    bias_init: Callable = nn.initializers.zeros

    @nn.compact
    def __call__(self, y: jax.Array) -> jax.Array:
        kernel = self.param("kernel", self.kernel_init, (1, 1, y.shape[-1], self.features), _F32)
        bias = self.param("bias", self.bias_init, (self.features,), _F32)
        return jnp.einsum("...c,cd->...d", y.astype(_F32), kernel[0, 0]) + bias


def lenet_grid(n_slots: int) -> tuple[int, int]:
    """Grid ``(h, w)``, ``h * w = n_slots``, that :class:`LeNetPolicy` lays the slots out on.

    ``h`` is the largest divisor of ``n_slots`` not above ``sqrt(n_slots)``, so a square count
    gives the reference's ``m x m`` grid (16 x 16 for 256) and 128 gives 8 x 16.
    """
    n = int(n_slots)
    if n < 1:
        raise ValueError(f"n_slots must be positive, got {n}")
    h = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return h, n // h


class LeNetPolicy(nn.Module):
    """LeNet-style policy of Table IV (spec §5.3).

    The N slots are laid out row-major on an ``h x w`` grid (slot i at ``(i // w, i % w)``,
    grid from :func:`lenet_grid` unless ``grid`` is given) with the F features as channels,
    then: conv 1x1, 32 filters (:class:`Conv1x1`) -> max-pool 2x2 stride 2 (VALID) -> conv 1x1, 64 filters ->
    max-pool 2x2 stride 2 (VALID) -> flatten (h, w, c order) -> dense 64 -> dense N.  No
    activations anywhere, as in the reference.  N = 128 (8 x 16 grid): 43,552 parameters;
    N = 256 (16 x 16, the reference's setting): 84,640.

    ``__call__(obs, mask=None)``: obs float ``[..., N, F]``, mask bool ``[..., N]`` ->
    masked logits float32 ``[..., N]``.
    """

    grid: tuple[int, int] | None = None

    @nn.compact
    def __call__(self, obs, mask=None) -> jax.Array:
        x, m = _check_obs(obs, mask)
        n, f = x.shape[-2], x.shape[-1]
        h, w = self.grid if self.grid is not None else lenet_grid(n)
        if h * w != n or h < 4 or w < 4:
            raise ValueError(f"LeNet grid {h}x{w} does not fit {n} slots (need h*w = N, h, w >= 4)")
        batch = x.shape[:-2]
        y = x.reshape((-1, h, w, f))
        y = Conv1x1(32, kernel_init=_glorot(), name="conv_0")(y)
        y = max_pool_2x2(y)
        y = Conv1x1(64, kernel_init=_glorot(), name="conv_1")(y)
        y = max_pool_2x2(y)
        y = y.reshape((y.shape[0], -1))
        y = _dense(64, "dense_0")(y)
        logits = _dense(n, "dense_out")(y).reshape(batch + (n,))
        return logits if m is None else apply_mask(logits, m)


# ----------------------------------------------------------------------------------------------
# Value networks
# ----------------------------------------------------------------------------------------------
class KernelValue(nn.Module):
    """Reference value network (spec §5.2, ``critic_mlp``).

    A per-slot kernel MLP ``F -> 32 -> 16 -> 8 -> 1`` (own weights, no mask) gives N numbers,
    followed by an MLP ``N -> 64 -> 32 -> 8 -> 1``.  11,570 parameters for N = 128, F = 8.

    ``__call__(obs, mask=None)``: obs float ``[..., N, F]`` -> value float32 ``[...]``.  The
    mask is accepted for a uniform interface and ignored, as in the reference.

    ``__call__(obs_prefix, n_slots=N, pad_row=row)``: the value of the observation made of
    ``obs_prefix`` ``[..., K, F]`` followed by ``N − K`` copies of ``row`` ``[F]`` (the
    environment's padding), with the padding row through the kernel once instead of ``N − K``
    times; the same parameters and the same value (the trainer's ``slot_prefix`` uses it).
    """

    kernel_hidden: tuple[int, ...] = (32, 16, 8)
    hidden: tuple[int, ...] = (64, 32, 8)

    @nn.compact
    def __call__(self, obs, mask=None, n_slots=None, pad_row=None) -> jax.Array:
        x, _ = _check_obs(obs, mask)
        K = x.shape[-2]
        if n_slots is not None and n_slots > K:
            if pad_row is None:
                raise ValueError("KernelValue: n_slots needs pad_row")
            pad = jnp.broadcast_to(jnp.asarray(pad_row, x.dtype), x.shape[:-2] + (1, x.shape[-1]))
            per = _row_mlp(jnp.concatenate([x, pad], axis=-2), self.kernel_hidden, 1, "kernel")[
                ..., 0
            ]  # [..., K+1]
            rest = jnp.broadcast_to(per[..., K:], per.shape[:-1] + (n_slots - K,))
            per_slot = jnp.concatenate([per[..., :K], rest], axis=-1)  # [..., N]
        else:
            per_slot = _row_mlp(x, self.kernel_hidden, 1, "kernel")[..., 0]  # [..., N]
        return _row_mlp(per_slot, self.hidden, 1, "mlp")[..., 0]


class MLPValue(nn.Module):
    """The paper's value network (Fig. 6): a 3-layer MLP on the flattened ``N*F`` observation.

    The paper gives no layer sizes; the default ``(32, 16, 8)`` mirrors the kernel's hidden
    sizes (ReLU hidden, linear scalar output): 33,473 parameters for N = 128, F = 8.

    ``__call__(obs, mask=None)``: obs float ``[..., N, F]`` -> value float32 ``[...]``; the mask
    is ignored.
    """

    hidden: tuple[int, ...] = (32, 16, 8)

    @nn.compact
    def __call__(self, obs, mask=None) -> jax.Array:
        x, _ = _check_obs(obs, mask)
        flat = x.reshape(x.shape[:-2] + (x.shape[-2] * x.shape[-1],))
        return _row_mlp(flat, self.hidden, 1, "mlp")[..., 0]


# ----------------------------------------------------------------------------------------------
# Registry
# ----------------------------------------------------------------------------------------------
_POLICIES: dict = {
    "kernel": lambda: KernelPolicy(),
    "mlp_v1": lambda: MLPPolicy(hidden=(128, 128, 128)),
    "mlp_v2": lambda: MLPPolicy(hidden=(32, 16, 8)),
    "mlp_v3": lambda: MLPPolicy(hidden=(32, 32, 32, 32, 32)),
    "lenet": lambda: LeNetPolicy(),
}
_VALUES: dict = {
    "kernel": lambda: KernelValue(),
    "mlp": lambda: MLPValue(),
}
_ALIASES = {"rlscheduler": "kernel", "rl_kernel": "kernel", "critic_mlp": "kernel", "paper": "mlp"}

POLICY_NAMES: tuple[str, ...] = tuple(_POLICIES)
"""Names accepted by :func:`make_policy` (plus the alias ``rlscheduler`` / ``rl_kernel``)."""
VALUE_NAMES: tuple[str, ...] = tuple(_VALUES)
"""Names accepted by :func:`make_value` (plus ``critic_mlp`` = kernel, ``paper`` = mlp)."""


def _lookup(kind: str, name: str, table: dict) -> nn.Module:
    key = str(name).strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in table:
        raise ConfigError(f"unknown {kind} network {name!r}; choose one of {', '.join(table)}")
    return table[key]()


def make_policy(name: str = "kernel") -> nn.Module:
    """Policy module by name: ``kernel`` (RLScheduler, default), ``mlp_v1``, ``mlp_v2``,
    ``mlp_v3``, ``lenet``.  Case and ``-``/``_`` are ignored; raises ``ConfigError`` otherwise."""
    return _lookup("policy", name, _POLICIES)


def make_value(name: str = "kernel") -> nn.Module:
    """Value module by name: ``kernel`` (reference ``critic_mlp``, default) or ``mlp`` (the
    paper's 3-layer MLP).  Raises ``ConfigError`` for unknown names."""
    return _lookup("value", name, _VALUES)


def init_params(
    module: nn.Module,
    key: chex.PRNGKey,
    n_slots: int = MAX_QUEUE_SIZE,
    n_features: int | None = None,
):
    """Initialise ``module`` for observations of shape ``[n_slots, n_features]`` (default
    ``JOB_FEATURES``); returns the variables dict (``{"params": ...}``), all float32."""
    if n_features is None:
        from jaxsched.envs.rlscheduler_features import JOB_FEATURES as n_features
    obs = jnp.zeros((n_slots, n_features), _F32)
    mask = jnp.ones((n_slots,), jnp.bool_)
    return jax.jit(module.init)(key, obs, mask)


def param_count(variables) -> int:
    """Total number of scalars in a pytree of parameters."""
    return int(sum(math.prod(leaf.shape) for leaf in jax.tree_util.tree_leaves(variables)))
