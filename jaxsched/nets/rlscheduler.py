"""RLScheduler policy and value networks (spec ``rlscheduler.md`` §5) and masked-categorical helpers.

Conventions shared by every network here:

* ``obs``: float ``[..., N, F]`` — N queue slots (128 in the paper, spec §2.9) of F job features
  (8).  Any number of leading batch dimensions is allowed; inputs of any float dtype are cast to
  float32 first.
* ``mask``: bool ``[..., N]`` — True for slots holding a real job (spec §2.10).  Numeric 0/1
  masks are accepted as well (non-zero = valid).
* Policy modules return **masked logits**, float32 ``[..., N]`` (raw logits when ``mask`` is
  None).  Value modules return float32 ``[...]`` (one number per observation).
* Parameters and outputs are float32 even when JAX's 64-bit mode is on (``import jaxsched.sim``
  turns it on).  Dense and convolution layers are initialised like TF1 ``tf.layers``:
  Glorot-uniform kernels, zero biases.  Hidden layers use ReLU, output layers are linear (the
  LeNet variant has no activations at all, as in the reference).

The helpers (:func:`masked_log_probs`, :func:`sample_action`, ...) work on the last axis (any
leading batch dimensions), cast their inputs to float32 / bool and run jit-compiled code; they
can be used inside ``jit``, ``vmap`` and ``grad`` as well.

Masking (:func:`mask_logits`).  The reference adds ``(mask - 1) * 1e6`` to the logits.  That is
not robust in float32 (a raw logit above ~1e6 defeats it, and ``inf`` logits give NaN), so here
valid logits are first clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]`` and invalid ones are *replaced*
by ``MASKED_LOGIT``.  Because ``MASKED_LOGIT + LOGIT_BOUND`` is far below float32's ``exp``
underflow threshold, masked slots get probability exactly 0 and a finite log-probability, so
``p * log p`` is 0 (never NaN) and gradients stay finite.  Masking is idempotent, so the helpers
below may be given either raw or already-masked logits.  If no slot of a row is valid, the
distribution is uniform over all N slots (well defined, NaN free); such rows should be ignored
by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import chex
import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxsched.errors import ConfigError

__all__ = [
    "MAX_QUEUE_SIZE",
    "JOB_FEATURES",
    "LOGIT_BOUND",
    "MASKED_LOGIT",
    "KernelPolicy",
    "MLPPolicy",
    "LeNetPolicy",
    "KernelValue",
    "MLPValue",
    "POLICY_NAMES",
    "VALUE_NAMES",
    "make_policy",
    "make_value",
    "init_params",
    "param_count",
    "lenet_grid",
    "mask_logits",
    "masked_log_probs",
    "masked_probs",
    "action_log_prob",
    "sample_action",
    "greedy_action",
    "entropy",
]

MAX_QUEUE_SIZE = 128
"""Number of observation slots of the reference (spec §2.9)."""
JOB_FEATURES = 8
"""Features per slot (spec §2.9)."""

LOGIT_BOUND = 1e9
"""Valid logits are clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]`` before masking."""
MASKED_LOGIT = -1e30
"""Logit given to invalid slots; finite in float32, and ``exp(MASKED_LOGIT + LOGIT_BOUND)`` is
exactly 0, so masked slots have probability exactly 0."""

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
# Masked categorical helpers (pure jnp, float32, NaN free)
# ----------------------------------------------------------------------------------------------
def _mask_bool(mask) -> jax.Array:
    m = jnp.asarray(mask)
    return m if m.dtype == jnp.bool_ else m != 0


def _cast(logits, mask) -> tuple[jax.Array, jax.Array]:
    # cast before entering the jitted cores, so float64 / numeric-mask callers share their
    # compilations with float32 / bool ones
    return jnp.asarray(logits, _F32), _mask_bool(mask)


def _mask(z, m):
    return jnp.where(m, jnp.clip(z, -LOGIT_BOUND, LOGIT_BOUND), jnp.asarray(MASKED_LOGIT, _F32))


@jax.jit
def _mask_jit(z, m):
    return _mask(z, m)


@jax.jit
def _log_probs_jit(z, m):
    return jax.nn.log_softmax(_mask(z, m), axis=-1)


@jax.jit
def _probs_jit(z, m):
    return jax.nn.softmax(_mask(z, m), axis=-1)


@jax.jit
def _action_log_prob_jit(z, m, a):
    lp = jax.nn.log_softmax(_mask(z, m), axis=-1)
    return jnp.take_along_axis(lp, a[..., None], axis=-1)[..., 0]


@jax.jit
def _entropy_jit(z, m):
    lp = jax.nn.log_softmax(_mask(z, m), axis=-1)
    return -jnp.sum(jnp.exp(lp) * lp, axis=-1)


@jax.jit
def _sample_jit(key, z, m):
    g = jax.random.gumbel(key, z.shape, dtype=_F32)
    return jnp.argmax(_mask(z, m) + g, axis=-1).astype(jnp.int32)


@jax.jit
def _greedy_jit(z, m):
    return jnp.argmax(_mask(z, m), axis=-1).astype(jnp.int32)


def mask_logits(logits, mask) -> jax.Array:
    """Masked logits, float32 ``[..., N]``.

    Args:
      logits: float ``[..., N]``.
      mask: bool ``[..., N]`` (True = valid slot; numeric masks: non-zero = valid).

    Valid entries are clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]`` (``±inf`` included), invalid
    ones become ``MASKED_LOGIT``.  Idempotent.  NaN logits of *valid* slots stay NaN (they
    signal a bug upstream); NaN at invalid slots is removed.
    """
    return _mask_jit(*_cast(logits, mask))


def masked_log_probs(logits, mask) -> jax.Array:
    """Log-probabilities of the masked softmax, float32 ``[..., N]``.

    Invalid slots get a large finite negative value (probability exactly 0 after ``exp``);
    valid slots are normalised so that ``exp`` sums to 1 over the valid slots.
    Args: logits float ``[..., N]``; mask bool ``[..., N]``.
    """
    return _log_probs_jit(*_cast(logits, mask))


def masked_probs(logits, mask) -> jax.Array:
    """Probabilities of the masked softmax, float32 ``[..., N]``; exactly 0 on invalid slots.

    Args: logits float ``[..., N]``; mask bool ``[..., N]``.
    """
    return _probs_jit(*_cast(logits, mask))


def action_log_prob(logits, mask, action) -> jax.Array:
    """Log-probability of ``action`` under the masked softmax, float32 ``[...]``.

    Args: logits float ``[..., N]``; mask bool ``[..., N]``; action int ``[...]`` (slot index).
    """
    z, m = _cast(logits, mask)
    a = jnp.asarray(action, jnp.int32)
    chex.assert_shape(a, z.shape[:-1])
    return _action_log_prob_jit(z, m, a)


def entropy(logits, mask) -> jax.Array:
    """Entropy (nats) of the masked softmax, float32 ``[...]``; 0 when one slot is valid.

    Args: logits float ``[..., N]``; mask bool ``[..., N]``.
    """
    return _entropy_jit(*_cast(logits, mask))


def sample_action(key: chex.PRNGKey, logits, mask) -> jax.Array:
    """Sample a slot from the masked softmax (Gumbel-max), int32 ``[...]``.

    One ``key`` serves the whole batch (independent noise per row).  A masked slot is never
    returned while its row has a valid slot.
    Args: key PRNG key; logits float ``[..., N]``; mask bool ``[..., N]``.
    """
    return _sample_jit(key, *_cast(logits, mask))


def greedy_action(logits, mask) -> jax.Array:
    """Most probable valid slot (lowest index on ties), int32 ``[...]``.

    Args: logits float ``[..., N]``; mask bool ``[..., N]``.
    """
    return _greedy_jit(*_cast(logits, mask))


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
        return logits if m is None else _mask(logits, m)


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
        return logits if m is None else _mask(logits, m)


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
    then: conv 1x1, 32 filters -> max-pool 2x2 stride 2 (VALID) -> conv 1x1, 64 filters ->
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
        conv = dict(
            kernel_size=(1, 1),
            kernel_init=_glorot(),
            bias_init=nn.initializers.zeros,
            dtype=_F32,
            param_dtype=_F32,
        )
        y = nn.Conv(32, name="conv_0", **conv)(y)
        y = nn.max_pool(y, (2, 2), strides=(2, 2), padding="VALID")
        y = nn.Conv(64, name="conv_1", **conv)(y)
        y = nn.max_pool(y, (2, 2), strides=(2, 2), padding="VALID")
        y = y.reshape((y.shape[0], -1))
        y = _dense(64, "dense_0")(y)
        logits = _dense(n, "dense_out")(y).reshape(batch + (n,))
        return logits if m is None else _mask(logits, m)


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
    times; the same parameters and the same value (the trainer's ``slot_buckets`` use it).
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
    n_features: int = JOB_FEATURES,
):
    """Initialise ``module`` for observations of shape ``[n_slots, n_features]``; returns the
    variables dict (``{"params": ...}``), all float32."""
    obs = jnp.zeros((n_slots, n_features), _F32)
    mask = jnp.ones((n_slots,), jnp.bool_)
    return jax.jit(module.init)(key, obs, mask)


def param_count(variables) -> int:
    """Total number of scalars in a pytree of parameters."""
    return int(sum(math.prod(leaf.shape) for leaf in jax.tree_util.tree_leaves(variables)))
