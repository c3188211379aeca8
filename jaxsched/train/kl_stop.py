"""Spinning Up's KL early-stopped optimisation loop (PPO's policy phase) as a
``lax.while_loop``."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

__all__ = ["kl_early_stop_loop"]

_F32 = jnp.float32


def kl_early_stop_loop(step_fn: Callable, carry, max_iters: int, kl_limit: float | None):
    """Run ``step_fn`` up to ``max_iters`` times, stopping after the first step whose KL
    exceeded ``kl_limit``.

    ``step_fn(carry) -> (carry, kl)`` performs one optimisation step and returns the approx-KL
    it measured *before* the step (in the same pass as the gradient).  The step that exceeded
    the limit is kept, as in the reference.  ``kl_limit=None`` never stops early.

    Returns ``(carry, iterations int32, stopped bool, last_kl float32)``.
    """

    def cond(c):
        i, _, stop, _ = c
        return (i < max_iters) & jnp.logical_not(stop)

    def body(c):
        i, inner, _, _ = c
        inner, kl = step_fn(inner)
        kl = jnp.asarray(kl, _F32)
        stop = jnp.zeros((), bool) if kl_limit is None else kl > kl_limit
        return i + 1, inner, stop, kl

    init = (jnp.zeros((), jnp.int32), carry, jnp.zeros((), bool), jnp.zeros((), _F32))
    i, carry, stopped, kl = jax.lax.while_loop(cond, body, init)
    return carry, i, stopped, kl
