"""Batching helpers for per-environment code that is rarely needed but expensive.

Under ``jax.vmap`` a ``lax.cond`` with a batched predicate becomes a ``select``: both branches
run for every environment of the batch. :func:`sparse_cond` keeps the ``cond`` semantics of a
single environment but, when vmapped, runs the expensive branch only where it is needed:
not at all when the predicate holds nowhere in the batch, on a gathered chunk of at most
``chunk`` rows when it holds on a few, and on the whole batch otherwise. No ``while_loop``
is involved (a loop carrying large operands makes XLA copy them every call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

__all__ = ["sparse_cond"]


def _axes(batched):
    return jax.tree_util.tree_map(lambda b: 0 if b else None, batched)


def sparse_cond(
    pred, true_fn: Callable, false_fn: Callable, *operands, chunk: int = 8, loop: bool = False
) -> Any:
    """``lax.cond(pred, true_fn, false_fn, *operands)``; under ``vmap`` with a batched
    ``pred``, ``false_fn`` is evaluated on every row (it should be cheap: a constant or an
    identity) and ``true_fn`` only if ``pred`` holds somewhere: on the (at most ``chunk``)
    rows where it holds, gathered, or when there are more, on the whole batch (``loop=False``)
    or chunk by chunk in a ``while_loop`` (``loop=True``: for small operands and outputs only;
    XLA copies what a loop carries).

    ``true_fn`` and ``false_fn`` must not close over traced values: pass everything they read
    as ``operands`` (unbatched operands stay unbatched). Both must return the same pytree of
    arrays. Not differentiable (``jax.custom_batching.custom_vmap``).
    """

    @jax.custom_batching.custom_vmap
    def f(p, *ops):
        return jax.lax.cond(p, true_fn, false_fn, *ops)

    @f.def_vmap
    def rule(axis_size, in_batched, p, *ops):
        p_b, ops_b = in_batched[0], tuple(in_batched[1:])
        axes = _axes(ops_b)
        t_v = jax.vmap(true_fn, in_axes=axes)
        f_v = jax.vmap(false_fn, in_axes=axes)
        if not p_b:  # one predicate for the whole batch: a real cond
            out = jax.lax.cond(p, t_v, f_v, *ops)
            return out, jax.tree_util.tree_map(lambda _: True, out)
        B = axis_size
        K = max(1, min(int(chunk), B))
        base = f_v(*ops)
        n = jnp.sum(p.astype(jnp.int32))

        def pick(t, f):
            return jnp.where(p.reshape(p.shape + (1,) * (t.ndim - 1)), t, f)

        def dense():
            return jax.tree_util.tree_map(pick, t_v(*ops), base)

        def take(idx):
            safe = jnp.minimum(idx, B - 1)
            return tuple(
                jax.tree_util.tree_map(lambda x, b: x[safe] if b else x, o, ob)
                for o, ob in zip(ops, ops_b)
            )

        def first_k(pend):
            """The first K rows where ``pend`` holds (B = padding)."""
            key = jnp.where(pend, jnp.arange(B, dtype=jnp.int32), B)
            return -jax.lax.top_k(-key, K)[0]

        def put(out, idx, res):
            return jax.tree_util.tree_map(lambda o, r: o.at[idx].set(r, mode="drop"), out, res)

        def sparse():
            idx = first_k(p)
            return put(base, idx, t_v(*take(idx)))

        def chunks():
            # K rows per iteration; the loop carries only the output and the pending mask
            def body(c):
                pend, out = c
                idx = first_k(pend)
                return pend.at[idx].set(False, mode="drop"), put(out, idx, t_v(*take(idx)))

            return jax.lax.while_loop(lambda c: jnp.any(c[0]), body, (p, base))[1]

        if K >= B:
            branches = [lambda: base, dense]
            which = (n > 0).astype(jnp.int32)
        else:
            branches = [lambda: base, sparse, chunks if loop else dense]
            which = jnp.where(n == 0, 0, jnp.where(n <= K, 1, 2))
        out = jax.lax.switch(which, branches)
        return out, jax.tree_util.tree_map(lambda _: True, out)

    return f(pred, *operands)
