"""Sequence starts drawn by the environments' ``reset``.

* :func:`sample_accepted_starts`: a start uniform among those a trajectory filter accepts
  (spec ``rlscheduler.md`` §7; the acceptance tables come from
  :mod:`jaxsched.systems.rlscheduler.filtering`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

__all__ = ["sample_accepted_starts"]


@functools.partial(jax.jit, static_argnames="shape")
def sample_accepted_starts(key, accepted, shape=()):
    """Start indices drawn uniformly among the True entries of ``accepted`` (bool ``[U]``).

    The reference redraws a uniform start until it is accepted, which yields exactly this
    distribution.  Implemented as a random rank among the accepted entries (32 random bits
    modulo their number: bias below n / 2**32) plus a binary search in their running count — no
    ``[draws, U]`` intermediate.  If no entry is accepted the result is meaningless — check
    ``accepted.any()`` beforehand.  Returns int32 of ``shape`` (static)."""
    accepted = jnp.asarray(accepted, bool)
    count = jnp.cumsum(accepted.astype(jnp.int32))
    n = jnp.maximum(count[-1], 1).astype(jnp.uint32)
    rank = (jax.random.bits(key, shape, jnp.uint32) % n).astype(jnp.int32)
    return jnp.searchsorted(count, rank + 1, side="left").astype(jnp.int32)
