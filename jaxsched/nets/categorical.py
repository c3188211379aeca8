"""The masked categorical distribution over queue slots: the one place that masks logits,
normalises them, samples, and takes log-probabilities and entropies (networks and trainers alike).

Masking (:func:`apply_mask`).  The reference adds ``(mask - 1) * 1e6`` to the logits.  That is
not robust in float32 (a raw logit above ~1e6 defeats it, and ``inf`` logits give NaN), so here
valid logits are first clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]`` and invalid ones are *replaced*
by ``MASKED_LOGIT``.  Because ``MASKED_LOGIT + LOGIT_BOUND`` is far below float32's ``exp``
underflow threshold, masked slots get probability exactly 0 and a finite log-probability, so
``p * log p`` is 0 (never NaN) and gradients stay finite.  Masking is idempotent, so every helper
may be given raw or already-masked logits.  If no slot of a row is valid, the distribution is
uniform over all N slots (well defined, NaN free); such rows should be ignored by the caller.

Two layers:

* traceable cores for code that is already inside ``jit``/``vmap``/``grad`` (the trainers):
  :func:`apply_mask`, :func:`log_softmax`, :func:`log_prob_of`, :func:`entropy_of`,
  :func:`gumbel_argmax`, :func:`argmax`.  They expect float32 logits ``[..., N]`` and bool masks
  ``[..., N]`` and do no casting.
* user-facing helpers (:func:`mask_logits`, :func:`masked_log_probs`, :func:`masked_probs`,
  :func:`action_log_prob`, :func:`entropy`, :func:`sample_action`, :func:`greedy_action`): cast
  their inputs to float32 / bool (numeric masks: non-zero = valid) and run jit-compiled code on
  the last axis (any leading batch dimensions).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

__all__ = [
    "LOGIT_BOUND",
    "MASKED_LOGIT",
    "apply_mask",
    "log_softmax",
    "log_prob_of",
    "entropy_of",
    "gumbel_argmax",
    "argmax",
    "mask_logits",
    "masked_log_probs",
    "masked_probs",
    "action_log_prob",
    "entropy",
    "sample_action",
    "greedy_action",
]

LOGIT_BOUND = 1e9
"""Valid logits are clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]`` before masking."""
MASKED_LOGIT = -1e30
"""Logit given to invalid slots; finite in float32, and ``exp(MASKED_LOGIT + LOGIT_BOUND)`` is
exactly 0, so masked slots have probability exactly 0."""

_F32 = jnp.float32


# ----------------------------------------------------------------------------------------------
# traceable cores (no casting; use inside jit / vmap / grad)
# ----------------------------------------------------------------------------------------------
def apply_mask(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Masked logits: float32 ``[..., N]`` logits, bool ``[..., N]`` mask -> float32 ``[..., N]``
    (valid entries clipped to ±``LOGIT_BOUND``, invalid ones ``MASKED_LOGIT``; idempotent; NaN
    logits of valid slots stay NaN, NaN at invalid slots is removed)."""
    return jnp.where(
        mask, jnp.clip(logits, -LOGIT_BOUND, LOGIT_BOUND), jnp.asarray(MASKED_LOGIT, _F32)
    )


def log_softmax(masked_logits: jax.Array) -> jax.Array:
    """Log-probabilities over the last axis, float32 ``[..., N]`` (of masked logits)."""
    return jax.nn.log_softmax(masked_logits, axis=-1)


def log_prob_of(log_probs: jax.Array, action: jax.Array) -> jax.Array:
    """``log_probs[..., action]``: float ``[..., N]`` and int ``[...]`` -> float ``[...]``."""
    return jnp.take_along_axis(log_probs, action[..., None], axis=-1)[..., 0]


def entropy_of(log_probs: jax.Array) -> jax.Array:
    """Entropy (nats) from log-probabilities: float ``[..., N]`` -> float ``[...]``."""
    return -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)


def gumbel_argmax(key, masked_logits: jax.Array) -> jax.Array:
    """A sample of the categorical distribution of ``masked_logits`` (float32 ``[..., N]``) by
    Gumbel-max over the last axis: int32 ``[...]``.  One key serves the whole batch.

    The noise is drawn as one flat vector and reshaped (the same numbers as
    ``jax.random.gumbel(key, shape)``: threefry counts over the flattened index), because
    XLA:CPU compiles threefry on 2-D shapes with a short last axis many times slower."""
    z = masked_logits
    u = jax.random.uniform(key, (z.size,), _F32, minval=jnp.finfo(_F32).tiny, maxval=1.0)
    gumbel = -jnp.log(-jnp.log(jnp.reshape(u, z.shape)))
    return jnp.argmax(z + gumbel, axis=-1).astype(jnp.int32)


def argmax(masked_logits: jax.Array) -> jax.Array:
    """Most probable slot (lowest index on ties): float ``[..., N]`` -> int32 ``[...]``."""
    return jnp.argmax(masked_logits, axis=-1).astype(jnp.int32)


# ----------------------------------------------------------------------------------------------
# user-facing helpers (casting, jit-compiled)
# ----------------------------------------------------------------------------------------------
def _mask_bool(mask) -> jax.Array:
    m = jnp.asarray(mask)
    return m if m.dtype == jnp.bool_ else m != 0


def _cast(logits, mask) -> tuple[jax.Array, jax.Array]:
    # cast before entering the jitted cores, so float64 / numeric-mask callers share their
    # compilations with float32 / bool ones
    return jnp.asarray(logits, _F32), _mask_bool(mask)


_mask_jit = jax.jit(apply_mask)


@jax.jit
def _log_probs_jit(z, m):
    return log_softmax(apply_mask(z, m))


@jax.jit
def _probs_jit(z, m):
    return jax.nn.softmax(apply_mask(z, m), axis=-1)


@jax.jit
def _action_log_prob_jit(z, m, a):
    return log_prob_of(log_softmax(apply_mask(z, m)), a)


@jax.jit
def _entropy_jit(z, m):
    return entropy_of(log_softmax(apply_mask(z, m)))


@jax.jit
def _sample_jit(key, z, m):
    return gumbel_argmax(key, apply_mask(z, m))


@jax.jit
def _greedy_jit(z, m):
    return argmax(apply_mask(z, m))


def mask_logits(logits, mask) -> jax.Array:
    """Masked logits, float32 ``[..., N]`` (:func:`apply_mask` after casting).

    Args:
      logits: float ``[..., N]``.
      mask: bool ``[..., N]`` (True = valid slot; numeric masks: non-zero = valid).
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
    """Sample a slot from the masked softmax (Gumbel-max, :func:`gumbel_argmax`), int32 ``[...]``.

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
