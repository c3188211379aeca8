"""Batching rules: code that is rarely needed per row but expensive, run under ``vmap`` only
where it is needed.

* :func:`sparse_cond`: a ``lax.cond`` whose expensive branch runs only on the rows that take it.
* :func:`schedule_engine`: :func:`jaxsched.sim.engine.schedule` whose batching rule micro-steps
  only the rows that have not reached their next decision, in shrinking stages.

Under ``jax.vmap`` a ``lax.cond`` with a batched predicate becomes a ``select``: both branches
run for every environment of the batch. :func:`sparse_cond` keeps the ``cond`` semantics of a
single environment but, when vmapped, runs the expensive branch only where it is needed:
not at all when the predicate holds nowhere in the batch, on a gathered chunk of at most
``chunk`` rows when it holds on a few, and on the whole batch otherwise. No ``while_loop``
is involved (a loop carrying large operands makes XLA copy them every call).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxsched.sim import engine as E
from jaxsched.sim.types import Sequence, SimParams, SimState

__all__ = ["sparse_cond", "schedule_engine", "stage_sizes"]


def _axes(batched):
    return jax.tree_util.tree_map(lambda b: 0 if b else None, batched)


@functools.lru_cache(maxsize=256)
def _batched_cached(fn: Callable, treedef, leaves: tuple) -> Callable:
    return jax.jit(jax.vmap(fn, in_axes=jax.tree_util.tree_unflatten(treedef, leaves)))


def _batched(fn: Callable, in_axes) -> Callable:
    """``jax.jit(jax.vmap(fn, in_axes))``, one per ``fn`` and axes: a batching rule runs again
    each time JAX batches the code around it (a vmapped ``while_loop`` batches its body until
    the batched carry settles, typically twice or three times), and the jitted function traces
    ``fn`` once per input shape instead of on every run; its jaxpr is inlined into the caller's
    program (the same operations, so the same results)."""
    leaves, treedef = jax.tree_util.tree_flatten(in_axes, is_leaf=lambda x: x is None)
    return _batched_cached(fn, treedef, tuple(leaves))


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
        t_v = _batched(true_fn, axes)
        f_v = _batched(false_fn, axes)
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


# ----------------------------------------------------------------------------------------------
# Engine transition with batch compaction
# ----------------------------------------------------------------------------------------------
def _needs_more(st: SimState) -> jax.Array:
    return ~st.done & ~E.at_decision(st)


@jax.custom_batching.custom_vmap
def schedule_engine(seq: Sequence, params: SimParams, st: SimState, slot) -> SimState:
    """:func:`jaxsched.sim.engine.schedule` (the same result), with a batching rule for
    ``vmap``: a vmapped ``while_loop`` runs every environment of the batch until the slowest
    one reaches its next decision, although most need a few micro-steps and a few need
    hundreds. The rule instead runs the decision micro-step for the whole batch, then
    micro-steps only the rows that still need them, in stages: whenever at most a quarter of
    the current rows still run, they are gathered into a batch four times smaller (down to 4
    rows; rows that are done or at a decision are left as they are) and the results are
    scattered back. Same results, micro-step by micro-step; about ten times faster for a
    batch of 64 to 256 environments with backfilling."""
    return E.schedule(seq, params, st, slot)


#: batch shrink factor between the stages of :func:`schedule_engine`'s batching rule, and the
#: size of its last stage
_SHRINK, _LAST_STAGE = 4, 4


def stage_sizes(B: int):
    """Batch sizes of the stages: B, B/4, B/16, ... down to a last stage of at most 4 rows
    (each stage compiles its own copy of the micro-step)."""
    sizes = [B]
    while sizes[-1] > _LAST_STAGE:
        sizes.append(max(_LAST_STAGE, sizes[-1] // _SHRINK))
    return sizes


@schedule_engine.def_vmap
def _schedule_engine_rule(axis_size, in_batched, seq, params, st, slot):
    B = axis_size
    seq_b, params_b, st_b, slot_b = in_batched
    bcast = lambda x, b: x if b else jnp.broadcast_to(x, (B,) + jnp.shape(x))  # noqa: E731
    seq = jax.tree_util.tree_map(bcast, seq, seq_b)
    st = jax.tree_util.tree_map(bcast, st, st_b)
    slot = bcast(jnp.asarray(slot, jnp.int32), slot_b)
    p_axes = jax.tree_util.tree_map(lambda b: 0 if b else None, params_b)
    micro = _batched(E.micro_step, (0, p_axes, 0, 0))
    sizes = stage_sizes(B)

    def take(tree, idx):
        return jax.tree_util.tree_map(lambda x: x[idx], tree)

    def drain(seq, params, st, level):
        """Micro-steps the rows of ``st`` (``sizes[level]`` of them) that need more."""
        K = sizes[level]
        nxt = sizes[level + 1] if level + 1 < len(sizes) else 0
        zero = jnp.zeros((K,), jnp.int32)

        def cond(s):
            n = jnp.sum(_needs_more(s).astype(jnp.int32))
            return (n > nxt) | ((nxt == 0) & (n > 0))

        def body(s):
            go = _needs_more(s)
            new = micro(seq, params, s, zero)
            return jax.tree_util.tree_map(
                lambda a, b: jnp.where(go.reshape(go.shape + (1,) * (a.ndim - 1)), a, b), new, s
            )

        st = jax.lax.while_loop(cond, body, st)
        if nxt == 0:
            return st
        go = _needs_more(st)

        def compact(st):
            key = jnp.where(go, jnp.arange(K, dtype=jnp.int32), K)
            idx = -jax.lax.top_k(-key, nxt)[0]  # the rows still running (K = none)
            safe = jnp.minimum(idx, K - 1)
            sub = take(st, safe)
            sub = sub.replace(done=sub.done | (idx >= K))  # padding rows: never stepped
            p_sub = jax.tree_util.tree_map(lambda x, b: x[safe] if b else x, params, params_b)
            sub = drain(take(seq, safe), p_sub, sub, level + 1)
            sub = sub.replace(done=jnp.where(idx >= K, st.done[safe], sub.done))
            return jax.tree_util.tree_map(lambda a, b: a.at[idx].set(b, mode="drop"), st, sub)

        return jax.lax.cond(jnp.any(go), compact, lambda s: s, st)

    st = micro(seq, params, st, slot)  # the decision itself
    out = drain(seq, params, st, 0)
    return out, jax.tree_util.tree_map(lambda _: True, out)
