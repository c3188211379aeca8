"""Slot-prefix bucketing: evaluate per-slot networks on the occupied prefix of the slots only.

For a *per-slot* network (the output for slot ``i`` depends only on slot ``i`` of the input, as
in RLScheduler's kernel policy) whose valid slots always form a prefix (``mask`` True on slots
``0 .. n−1``), a loss over a batch can be computed chunk by chunk: the samples are sorted by
their number of valid slots ``n``, cut into chunks of ``chunk_size``, and each chunk runs on its
first ``K`` slots only, ``K`` the smallest bucket that holds the chunk's largest ``n`` (the full
slot count is always a bucket).  The numbers equal the full-width ones up to float rounding.

Inputs are flat batches: a network input ``x`` with fields ``obs`` float ``[S, N, F]`` and
``mask`` bool ``[S, N]`` (a :class:`~jaxsched.train.rollout.NetInput`-like NamedTuple), further
per-sample arrays ``[S, ...]`` and the weights ``w`` bool ``[S]``.

A trainer takes these options as one :class:`SlotPrefix` (``make_train(slot_prefix=...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError

__all__ = [
    "SlotPrefix",
    "bucket_widths",
    "check_buckets",
    "sorted_chunks",
    "prefix_input",
    "chunked",
]

_F32 = jnp.float32


class SlotPrefix(NamedTuple):
    """The update of a per-slot network on slot prefixes (:func:`jaxsched.train.make_train`'s
    ``slot_prefix``; computation only: the update's numbers change by float rounding at most).

    ``buckets``: the prefix widths to pick from (integers >= 1); the full slot count is added
    as the last bucket (:func:`bucket_widths`). ``chunk_size``: samples per chunk.
    ``value_pad_row``: the row every slot past an observation's valid prefix holds, to run
    the value steps on prefixes too (None: value steps on the full width). ``max_valid``: an
    upper bound on any sample's number of valid slots that the environment guarantees (RLScheduler:
    the sequence length, since a queue never holds more jobs than the sequence has): the
    buckets past the first one that holds it are never picked, so they are neither traced
    nor compiled (the same update, bit for bit; on a sample past the bound the losses are
    NaN, never a silently narrower prefix). None: no bound."""

    buckets: tuple
    chunk_size: int = 512
    value_pad_row: tuple | None = None
    max_valid: int | None = None


def bucket_widths(slot_buckets: Sequence[int], n_slots: int, max_valid: int | None = None):
    """The sorted prefix widths a chunk can take: ``slot_buckets`` (capped at ``n_slots``) and
    the full width ``n_slots``; with ``max_valid``, only those below it and the first at or
    above it (the others are never picked)."""
    widths = sorted({min(int(b), n_slots) for b in slot_buckets} | {n_slots})
    if max_valid is not None:
        above = [k for k in widths if k >= max_valid]
        widths = [k for k in widths if k < max_valid] + above[:1]
    return tuple(widths)


def check_buckets(slot_buckets: Sequence[int], chunk_size: int, max_valid=None) -> None:
    """Raise :class:`~jaxsched.errors.ConfigError` unless ``slot_buckets`` are integers >= 1
    (at least one), ``chunk_size`` is an integer >= 1 and ``max_valid`` None or >= 1."""
    if max_valid is not None and (
        not isinstance(max_valid, (int, np.integer)) or isinstance(max_valid, bool) or max_valid < 1
    ):
        raise ConfigError(f"make_train: max_valid must be an integer >= 1, got {max_valid!r}")
    if (
        not isinstance(chunk_size, (int, np.integer))
        or isinstance(chunk_size, bool)
        or chunk_size < 1
    ):
        raise ConfigError(f"make_train: chunk_size must be an integer >= 1, got {chunk_size!r}")
    bad = [
        b
        for b in slot_buckets
        if not isinstance(b, (int, np.integer)) or isinstance(b, bool) or b < 1
    ]
    if bad or not len(slot_buckets):
        raise ConfigError(f"make_train: slot_buckets must be integers >= 1, got {slot_buckets!r}")


def sorted_chunks(
    x,
    data: tuple,
    w,
    slot_buckets: Sequence[int],
    chunk_size: int,
    axis_name=None,
    max_valid: int | None = None,
):
    """The samples sorted by their number of valid slots and cut into chunks.

    Returns ``(bucket int32 [n_chunks], chunks, total, buckets)``: ``chunks`` is the tuple
    ``(x, *data, w)`` with leading axes ``[n_chunks, C]`` (padding samples are copies of sample
    0 with weight False); ``total`` the float32 weight of the batch (at least 1, NaN when a
    sample has more valid slots than the widest bucket, which only a broken ``max_valid``
    promise allows); ``buckets`` the sorted tuple of prefix widths (:func:`bucket_widths`)
    that ``bucket`` indexes.

    ``axis_name``: inside ``jax.vmap(..., axis_name=name)`` over independent batches (a sweep
    over seeds), chunk ``i`` of every batch takes the widest of their buckets, so that
    ``bucket`` is not batched and :func:`chunked`'s ``lax.switch`` stays a branch (a batched
    index would run every bucket's branch)."""
    n_slots = x.mask.shape[-1]
    buckets = bucket_widths(slot_buckets, n_slots, max_valid)
    S = w.shape[0]
    C = min(int(chunk_size), S)
    n_chunks = -(-S // C)
    key = jnp.where(w, jnp.sum(x.mask, axis=-1, dtype=jnp.int32), 0)
    order = jnp.argsort(key)
    order = jnp.concatenate([order, jnp.zeros((n_chunks * C - S,), order.dtype)])
    real = jnp.arange(n_chunks * C) < S  # False: padding (a copy, no weight)
    chunk = lambda a: jnp.reshape(a, (n_chunks, C) + a.shape[1:])  # noqa: E731
    out = jax.tree_util.tree_map(lambda a: chunk(a[order]), (x,) + tuple(data))
    out = out + (chunk(w[order] & real),)
    kmax = jnp.max(chunk(jnp.where(real, key[order], 0)), axis=1)
    bucket = jnp.searchsorted(jnp.asarray(buckets, jnp.int32), kmax, side="left")
    if axis_name is not None:
        bucket = jax.lax.pmax(bucket, axis_name)
    total = jnp.maximum(jnp.sum(w.astype(_F32)), 1.0)
    if buckets[-1] < n_slots:  # a max_valid bound: a sample past it poisons the losses
        total = jnp.where(jnp.max(kmax) > buckets[-1], jnp.nan, total)
    return bucket.astype(jnp.int32), out, total, tuple(buckets)


def prefix_input(x, K: int):
    """``x`` with ``obs`` and ``mask`` cut to the first ``K`` slots (slot axis after the sample
    axis)."""
    return x._replace(obs=x.obs[:, :K], mask=x.mask[:, :K])


def chunked(terms: Callable, with_grad: bool) -> Callable:
    """Sum a per-chunk loss over the chunks of :func:`sorted_chunks`, each on its bucket's
    prefix.

    ``terms(params, K, total, *chunk) -> (loss share float32, aux sums)`` evaluates one chunk
    (``chunk`` = one entry of ``chunks``) on its first ``K`` slots.  Returns ``f(params, bucket,
    chunks, total, buckets)`` giving ``(loss, aux / total)`` (just ``loss`` when ``aux`` is
    empty), and with ``with_grad`` the pair ``(that, gradient)``, the gradient accumulated chunk
    by chunk in a ``lax.scan`` over ``lax.switch`` branches (one per bucket)."""

    def f(params, bucket, chunks, total, buckets):
        def branch(K):
            def g(params, c):
                if with_grad:
                    (l, aux), grad = jax.value_and_grad(terms, has_aux=True)(params, K, total, *c)
                    return l, aux, grad
                l, aux = terms(params, K, total, *c)
                return l, aux, None

            return g

        branches = [branch(K) for K in buckets]
        aux0 = jax.eval_shape(
            lambda: terms(
                params, buckets[0], total, *jax.tree_util.tree_map(lambda a: a[0], chunks)
            )[1]
        )
        aux0 = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), aux0)
        g0 = jax.tree_util.tree_map(jnp.zeros_like, params) if with_grad else None

        def body(carry, inp):
            b, c = inp
            l, aux, g = jax.lax.switch(b, branches, params, c)
            loss, sums, gs = carry
            sums = jax.tree_util.tree_map(jnp.add, sums, aux)
            if with_grad:
                gs = jax.tree_util.tree_map(jnp.add, gs, g)
            return (loss + l, sums, gs), None

        (loss, sums, g), _ = jax.lax.scan(body, (jnp.zeros((), _F32), aux0, g0), (bucket, chunks))
        sums = tuple(v / total for v in sums)
        out = (loss, sums) if sums else loss
        return (out, g) if with_grad else out

    return f
