"""The engine's building blocks: index reductions, the reservation, the sorted running list,
the queue and the event model (one arrival or release; every event up to a time).

All functions are pure, trace under ``jit`` and batch under ``vmap``. Shapes as in
:mod:`jaxsched.sim.types`: ``L`` jobs, ``Q`` queue slots, ``R`` running slots; times int64.
"""

from __future__ import annotations

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from jaxsched.sim.types import ABORTED, BIG, I32MAX, I32MIN, IMAX, Sequence, SimParams, SimState

__all__ = [
    "argmin",
    "argmin_unique",
    "argmax_bool",
    "req32",
    "reservation",
    "running_insert",
    "running_cum_insert",
    "running_drop",
    "running_cum_drop",
    "queue_write",
    "Event",
    "next_event",
    "apply_event",
    "advance_one",
    "advance_until",
    "logged_loop",
    "logged_until",
]


# ----------------------------------------------------------------------------------------------
# Index reductions
# ----------------------------------------------------------------------------------------------
def argmin(x: chex.Array) -> chex.Array:
    """Index (int32) of the first minimum of a 1-D array: two plain reductions, which XLA
    vectorises (its variadic argmin reduction is several times slower on CPU)."""
    i = jnp.arange(x.shape[0], dtype=jnp.int32)
    return jnp.min(jnp.where(x == jnp.min(x), i, jnp.int32(x.shape[0] - 1)))


def argmin_unique(key: chex.Array, valid: chex.Array, bound: int) -> chex.Array:
    """Index (int32) of the smallest key among ``valid`` entries, for keys that are distinct
    where valid and lie in ``[0, bound)``: one min reduction over ``key * n + index``
    (``bound * n`` must fit the key's integer type). 0 if nothing is valid."""
    n = key.shape[0]
    i = jnp.arange(n, dtype=key.dtype)
    code = jnp.where(valid, key * n + i, jnp.asarray(bound, key.dtype) * n)
    return (jnp.min(code) % n).astype(jnp.int32) * jnp.any(valid)


def argmax_bool(x: chex.Array) -> chex.Array:
    """Index (int32) of the first True of a bool array (0 if none)."""
    i = jnp.arange(x.shape[0], dtype=jnp.int32)
    return jnp.min(jnp.where(x, i, jnp.int32(x.shape[0]))) % x.shape[0]


def req32(q: chex.Array) -> chex.Array:
    """Requested time as int32 (clamped; 2^31 s is 68 years)."""
    return jnp.clip(q, I32MIN, I32MAX).astype(jnp.int32)


# ----------------------------------------------------------------------------------------------
# Reservation
# ----------------------------------------------------------------------------------------------
def reservation(e, k, cum, valid, free, need, t):
    """Shadow time and free nodes at it for a job needing ``need`` nodes (spec §2.6).

    The running slots are kept sorted by estimated finish ``e`` (valid slots first), so the
    shadow is the ``e`` at which the free nodes plus the cumulative released nodes first reach
    ``need`` (ties in ``e`` do not change it) — O(R).

    Args:
      e: int64 ``[R]`` estimated finish, ascending over the valid prefix; k: int32 ``[R]``
      nodes; cum: int32 ``[R]`` running sum of ``k`` over the prefix; valid: bool ``[R]`` (a
      prefix); free, need: int32 scalars; t: int64 clock (the shadow when nothing runs).
    Returns:
      ``(shadow, nodes_at_shadow)``: int64, int32.
    """
    ok = valid & (free + cum >= need)
    first = argmax_bool(ok)
    last = jnp.maximum(jnp.sum(valid) - 1, 0)
    shadow = jnp.where(ok.any(), e[first], jnp.where(valid.any(), e[last], t))
    at = free + jnp.sum(jnp.where(valid & (e <= shadow), k, 0))
    return shadow, at.astype(jnp.int32)


# ----------------------------------------------------------------------------------------------
# The sorted running list (a prefix of ``n_running`` valid slots) and the queue
# ----------------------------------------------------------------------------------------------
def running_insert(a: chex.Array, pos, v, enabled) -> chex.Array:
    """``a`` (``[R]``) with ``v`` inserted at slot ``pos`` (later slots shift up by one, the
    last one falls off) where ``enabled`` (bool scalar), else ``a``."""
    ri = jnp.arange(a.shape[0], dtype=jnp.int32)
    ins = jnp.where(ri < pos, a, jnp.where(ri == pos, v, jnp.roll(a, 1)))
    return jnp.where(enabled, ins, a)


def running_cum_insert(cum: chex.Array, pos, k, enabled) -> chex.Array:
    """The running node sum (int32 ``[R]``) after inserting a job of ``k`` nodes at ``pos``."""
    ri = jnp.arange(cum.shape[0], dtype=jnp.int32)
    ins = jnp.where(ri < pos, cum, jnp.where(ri == 0, 0, jnp.roll(cum, 1)) + k)
    return jnp.where(enabled, ins, cum)


def running_drop(a: chex.Array, slot, fill, enabled) -> chex.Array:
    """``a`` (``[R]``) with slot ``slot`` removed (later slots shift down, the last becomes
    ``fill``) where ``enabled`` (bool scalar), else ``a``."""
    R = a.shape[0]
    ri = jnp.arange(R, dtype=jnp.int32)
    out = jnp.where(ri < slot, a, jnp.where(ri == R - 1, fill, jnp.roll(a, -1)))
    return jnp.where(enabled, out, a)


def running_cum_drop(cum: chex.Array, slot, k, enabled) -> chex.Array:
    """The running node sum (int32 ``[R]``) after removing slot ``slot`` of ``k`` nodes."""
    ri = jnp.arange(cum.shape[0], dtype=jnp.int32)
    return jnp.where(enabled, jnp.where(ri < slot, cum, jnp.roll(cum, -1) - k), cum)


def queue_write(seq: Sequence, st: SimState, put, slot, job, nj, g_new) -> dict:
    """The queue arrays with slot ``slot`` holding job ``job`` (-1 = emptied) where ``put``
    (bool scalar); the copied attributes are job ``nj``'s (the next arrival; ``g_new`` its
    submit group, the backfill key's high part). Returns a dict of the ``queue_*`` fields."""
    L = seq.submit.shape[0]
    qi = jnp.arange(st.queue_job.shape[0], dtype=jnp.int32)
    hit = put & (qi == slot)

    def setq(a, v):
        return jnp.where(hit, v, a)

    KD = st.queue_bf_key.dtype
    return dict(
        queue_job=setq(st.queue_job, job),
        queue_nodes=setq(st.queue_nodes, seq.nodes[nj]),
        queue_req=setq(st.queue_req, req32(seq.req[nj])),
        queue_submit=setq(st.queue_submit, seq.submit[nj]),
        queue_rank=setq(st.queue_rank, st.policy_rank[nj]),
        queue_bf_key=setq(st.queue_bf_key, (g_new.astype(KD) * L + st.policy_rank[nj]).astype(KD)),
    )


# ----------------------------------------------------------------------------------------------
# Events
# ----------------------------------------------------------------------------------------------
class Event(NamedTuple):
    """The next event of a state (:func:`next_event`).

    Attributes:
      fmin: int64 earliest actual finish of a running job (``BIG`` if none runs).
      rslot: int32 running slot released first at ``fmin`` (ties: the reference's list order).
      nj: int32 index of the next job to arrive (clipped to ``L - 1``); s_next: int64 its submit.
      arrive: bool, the next event is that arrival (it comes no later than ``fmin``; arrival
        wins ties); else it is the release of ``rslot`` if anything runs.
      g_new: int32 first index of the arrival's submit time (its backfill-key group).
    """

    fmin: chex.Array
    rslot: chex.Array
    nj: chex.Array
    s_next: chex.Array
    arrive: chex.Array
    g_new: chex.Array


def next_event(seq: Sequence, params: SimParams, st: SimState) -> Event:
    """The arrival-or-release candidate of ``st`` (spec §2.3; release ties in the reference's
    list order, spec §2.8.4, in compat mode, else in start order)."""
    L = seq.submit.shape[0]
    rv = jnp.arange(st.run_job.shape[0], dtype=jnp.int32) < st.n_running
    fmin = jnp.min(jnp.where(rv, st.run_finish, BIG))
    base = seq.submit[0]
    tie_compat = (
        jnp.where(st.run_sort_flag, (st.run_est_finish - base + 1) << 20, jnp.int64(1) << 61)
        | st.run_order
    )
    tie = jnp.where(params.compat, tie_compat, st.run_order.astype(jnp.int64))
    rslot = argmin(jnp.where(rv & (st.run_finish == fmin), tie, IMAX))
    more = st.next < seq.n_jobs
    nj = jnp.minimum(st.next, L - 1)
    s_next = seq.submit[nj]
    arrive = more & (s_next <= fmin)
    g_new = jnp.where(s_next == seq.submit[jnp.maximum(nj - 1, 0)], st.arrival_group, nj)
    return Event(fmin=fmin, rslot=rslot, nj=nj, s_next=s_next, arrive=arrive, g_new=g_new)


def apply_event(st: SimState, ev: Event, do_arr, do_rel) -> dict:
    """The clock, arrival counter and running list after the event ``ev`` (``do_arr``: the
    arrival happens, ``do_rel``: the release happens; at most one). The queue side of an
    arrival is :func:`queue_write`'s. Returns a dict of the changed fields (``t``, ``free``,
    ``next``, ``arrival_group``, ``run_*``, ``n_running``)."""
    i32 = jnp.int32
    t = jnp.where(
        do_arr, jnp.maximum(st.t, ev.s_next), jnp.where(do_rel, jnp.maximum(st.t, ev.fmin), st.t)
    )
    k_rel = st.run_nodes[ev.rslot]
    return dict(
        t=t,
        free=st.free + jnp.where(do_rel, k_rel, 0),
        next=st.next + do_arr.astype(i32),
        arrival_group=jnp.where(do_arr, ev.g_new, st.arrival_group),
        run_cum_nodes=running_cum_drop(st.run_cum_nodes, ev.rslot, k_rel, do_rel),
        run_job=running_drop(st.run_job, ev.rslot, -1, do_rel),
        run_finish=running_drop(st.run_finish, ev.rslot, 0, do_rel),
        run_est_finish=running_drop(st.run_est_finish, ev.rslot, 0, do_rel),
        run_nodes=running_drop(st.run_nodes, ev.rslot, 0, do_rel),
        run_sort_flag=running_drop(st.run_sort_flag, ev.rslot, False, do_rel),
        run_order=running_drop(st.run_order, ev.rslot, 0, do_rel),
        n_running=st.n_running - do_rel.astype(i32),
    )


def _event_time(seq: Sequence, params: SimParams, st: SimState) -> chex.Array:
    """int64 time of the next event (``BIG`` when nothing is left to arrive or release)."""
    ev = next_event(seq, params, st)
    return jnp.where(ev.arrive, ev.s_next, ev.fmin)


def advance_one(seq: Sequence, params: SimParams, st: SimState) -> SimState:
    """Process the next event — one arrival or one release, as the micro-step's advance —
    without taking any scheduling decision (the queue may hold waiting jobs; a committed job
    stays committed). The clock moves to the event's time. Nothing happens when no event is
    left or the episode is over. ``steps`` counts the event; an arrival into a full queue
    sets overflow bit 0 and ends the run, as in the micro-step."""
    i32 = jnp.int32
    ev = next_event(seq, params, st)
    active = ~st.done
    do_arr = active & ev.arrive
    do_rel = active & ~ev.arrive & (st.n_running > 0)
    q_over = do_arr & (st.n_queued >= st.queue_job.shape[0])
    slot = argmax_bool(st.queue_job < 0)
    q = queue_write(seq, st, do_arr, slot, st.next, ev.nj, ev.g_new)
    return st.replace(
        **q,
        **apply_event(st, ev, do_arr, do_rel),
        n_queued=st.n_queued + do_arr.astype(i32),
        done=st.done | q_over,
        overflow=st.overflow | q_over.astype(i32),
        steps=st.steps + (do_arr | do_rel).astype(i32),
    )


def advance_until(seq: Sequence, params: SimParams, st: SimState, t) -> SimState:
    """Process every event (arrivals and releases, in the engine's order: arrival wins ties)
    whose time is ``<= t``, taking no scheduling decision, then set the clock to ``t`` if
    that is later. SchedInspector's "reject" is ``advance_until(..., min(next event, t + 600))``.

    Args:
      t: int64 scalar, absolute trace time.
    Returns:
      the state at time ``max(st.t, t)`` (unchanged if the episode is over).
    """
    t = jnp.asarray(t, jnp.int64)

    def cond(s):
        return ~s.done & (_event_time(seq, params, s) <= t)

    out = jax.lax.while_loop(cond, lambda s: advance_one(seq, params, s), st)
    return out.replace(t=jnp.where(out.done, out.t, jnp.maximum(out.t, t)))


# ----------------------------------------------------------------------------------------------
# Batched run loop
# ----------------------------------------------------------------------------------------------
def logged_loop(step, st, max_steps: int):
    """Run the batched ``step(st) -> (st, started)`` until every run is done, logging the job
    each run starts at every iteration; returns ``(st, start)`` with int64 ``[B, L]`` start
    times filled in once at the end. The loop counter is shared by the batch, so the log write
    is one in-place row update per iteration. Runs not done after ``max_steps`` are flagged
    ``stuck``.

    Once more than half of the batch has overflowed its capacities (it will be re-run with
    larger ones), the loop stops early and the unfinished runs get the :data:`ABORTED`
    overflow bit, so the driver re-runs them too instead of finishing them at this size."""
    B, L = st.start.shape
    log_j = jnp.full((max_steps, B), -1, jnp.int32)
    log_t = jnp.zeros((max_steps, B), jnp.int64)

    def body(c):
        it, s, lj, lt = c
        s2, started = step(s)
        lj = jax.lax.dynamic_update_slice(lj, started[None, :], (it, jnp.int32(0)))
        lt = jax.lax.dynamic_update_slice(lt, s.t[None, :], (it, jnp.int32(0)))
        return it + 1, s2, lj, lt

    def cond(c):
        it, s = c[0], c[1]
        many_over = 2 * jnp.sum(s.overflow != 0) > B
        return (it < max_steps) & jnp.any(~s.done) & ~many_over

    it, st, log_j, log_t = jax.lax.while_loop(
        cond, body, (jnp.asarray(0, jnp.int32), st, log_j, log_t)
    )
    rows = jnp.broadcast_to(jnp.arange(B)[None, :], log_j.shape)
    cols = jnp.where(log_j >= 0, log_j, L)
    start = st.start.at[rows, cols].set(log_t, mode="drop")
    aborted = ~st.done & (2 * jnp.sum(st.overflow != 0) > B)
    st = st.replace(
        start=start,
        stuck=st.stuck | (~st.done & ~aborted),
        overflow=st.overflow | jnp.where(aborted, ABORTED, 0).astype(jnp.int32),
    )
    return st, start


def logged_until(step, st, limit, chunk: int):
    """One run (no batch axis): ``step(st) -> (st, started)`` until it is done, overflows, gets
    stuck, ``st.steps`` reaches ``limit`` (int32 scalar) or ``chunk`` (static) steps have run,
    the jobs started logged per iteration and written into ``st.start`` once at the end, as
    :func:`logged_loop` does for a batch (a whole trace in chunks:
    :mod:`jaxsched.sim.chunked`). Returns the state."""
    L = st.start.shape[0]

    def body(c):
        it, s, lj, lt = c
        s2, started = step(s)
        return it + 1, s2, lj.at[it].set(started), lt.at[it].set(s.t)

    def cond(c):
        it, s = c[0], c[1]
        return (it < chunk) & ~s.done & (s.steps < limit) & (s.overflow == 0) & ~s.stuck

    log_j = jnp.full((chunk,), -1, jnp.int32)
    log_t = jnp.zeros((chunk,), jnp.int64)
    _, st, log_j, log_t = jax.lax.while_loop(
        cond, body, (jnp.asarray(0, jnp.int32), st, log_j, log_t)
    )
    start = st.start.at[jnp.where(log_j >= 0, log_j, L)].set(log_t, mode="drop")
    return st.replace(start=start)
