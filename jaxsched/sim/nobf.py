"""No-backfilling fast paths: the same schedules as the engine's micro-steps with
``backfill = none`` (both modes agree there), with less work per decision.

* :func:`run_static_nobf` / :func:`run_static_nobf_batch`: a whole episode under a
  static-key heuristic, the waiting set a bitmask in rank space (:class:`NoBackfillState`).
* :func:`schedule_nobf`: one decision of the decision-level API
  (:func:`jaxsched.sim.engine.schedule`) in closed form, no micro-step loop (what the RL
  environments use without backfilling).

Shapes as in :mod:`jaxsched.sim.types`.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from jaxsched.precision import require_x64
from jaxsched.sim.primitives import argmax_bool, argmin, logged_loop, logged_until, req32
from jaxsched.sim.types import BIG, NoBackfillState, Sequence, SimState

__all__ = [
    "run_static_nobf",
    "run_static_nobf_batch",
    "init_static_nobf",
    "run_static_nobf_until",
    "schedule_nobf",
    "NoBackfillState",
]


# ----------------------------------------------------------------------------------------------
# Whole episodes under a static-key heuristic
# ----------------------------------------------------------------------------------------------
def _nobf_init(seq: Sequence, prank: chex.Array, run_cap: int) -> NoBackfillState:
    require_x64("jaxsched.sim.nobf (the no-backfilling fast path)")
    L = seq.submit.shape[0]
    W = (L + 63) // 64
    i32, i64, u64 = jnp.int32, jnp.int64, jnp.uint64
    w0, b0 = _bit(prank[0].astype(i32))
    return NoBackfillState(
        t=seq.submit[0].astype(i64),
        free=seq.num_nodes.astype(i32),
        next=jnp.asarray(1, i32),
        n_queued=jnp.asarray(1, i32),
        committed_job=jnp.asarray(-1, i32),
        waiting_bits=jnp.zeros(W, u64).at[w0].set(b0),
        run_finish=jnp.zeros(run_cap, i64),
        run_nodes=jnp.zeros(run_cap, i32),
        run_order=jnp.zeros(run_cap, i32),
        n_started=jnp.asarray(0, i32),
        start=jnp.full((L,), -1, i64),
        done=jnp.asarray(False),
        stuck=jnp.asarray(False),
        overflow=jnp.asarray(0, i32),
        decisions=jnp.asarray(0, i32),
        steps=jnp.asarray(0, i32),
    )


def _bit(r):
    """(word, mask) of bit ``r`` of a uint64 bitmask."""
    return (r // 64).astype(jnp.int32), jnp.left_shift(jnp.uint64(1), (r % 64).astype(jnp.uint64))


def _nobf_step(
    seq: Sequence, prank: chex.Array, inv: chex.Array, s: NoBackfillState, write_start: bool
):
    """One micro-step of :func:`run_static_nobf`; also returns the job started (-1 = none)."""
    L = seq.submit.shape[0]
    i32 = jnp.int32
    one = jnp.uint64(1)
    W = s.waiting_bits.shape[0]
    wi_ = jnp.arange(W, dtype=i32)
    ri = jnp.arange(s.run_nodes.shape[0], dtype=i32)
    active = ~s.done
    committed = s.committed_job >= 0
    # lowest waiting rank: first non-zero word, then count trailing zeros
    wi = argmax_bool(s.waiting_bits != 0)
    word = jnp.sum(jnp.where(wi_ == wi, s.waiting_bits, jnp.uint64(0))).astype(jnp.uint64)
    low = word & (~word + one)
    tz = jax.lax.population_count(low - one).astype(i32)
    choice = inv[jnp.minimum(wi * 64 + tz, L - 1)]
    j = jnp.where(committed, s.committed_job, choice)
    kj = seq.nodes[j]
    fits = kj <= s.free
    decide = active & ~committed & (s.n_queued > 0)
    do_start = (decide | (active & committed)) & fits
    do_commit = decide & ~fits
    do_adv = active & ~(decide | committed) | (active & committed & ~fits)
    rv = s.run_nodes > 0
    fmin = jnp.min(jnp.where(rv, s.run_finish, BIG))
    rslot = argmin(jnp.where(rv & (s.run_finish == fmin), s.run_order, jnp.iinfo(i32).max))
    nj = jnp.minimum(s.next, L - 1)
    s_next = seq.submit[nj]
    arrive = (s.next < seq.n_jobs) & (s_next <= fmin)
    do_arr = do_adv & arrive
    do_rel = do_adv & ~arrive & rv.any()
    stuck = do_adv & ~arrive & ~rv.any()
    # start j: clear its bit, take a free running slot; an arrival sets its bit
    wj, bj = _bit(prank[j])
    wa, ba = _bit(prank[nj])
    wait = jnp.where(do_start & (wi_ == wj), s.waiting_bits & ~bj, s.waiting_bits)
    wait = jnp.where(do_arr & (wi_ == wa), wait | ba, wait)
    fs = argmax_bool(~rv)
    r_over = do_start & rv.all()
    put = do_start & (ri == fs)
    r_f = jnp.where(put, s.t + seq.run[j], s.run_finish)
    r_k = jnp.where(put, kj, s.run_nodes)
    r_cnt = jnp.where(put, s.n_started, s.run_order)
    if write_start:
        start = s.start.at[j].set(jnp.where(do_start, s.t, s.start[j]))
    else:
        start = s.start
    free = s.free - jnp.where(do_start, kj, 0)
    cj = jnp.where(do_start, -1, jnp.where(do_commit, j, s.committed_job))
    # a release frees its slot
    free = free + jnp.where(do_rel, jnp.sum(jnp.where(ri == rslot, r_k, 0)).astype(i32), 0)
    r_k = jnp.where(do_rel & (ri == rslot), 0, r_k)
    t = jnp.where(do_arr, jnp.maximum(s.t, s_next), jnp.where(do_rel, jnp.maximum(s.t, fmin), s.t))
    n_q = s.n_queued + do_arr.astype(i32) - do_start.astype(i32)
    nxt = s.next + do_arr.astype(i32)
    done = s.done | stuck | r_over | (do_start & (n_q == 0) & (nxt >= seq.n_jobs))
    return NoBackfillState(
        t=t,
        free=free,
        next=nxt,
        n_queued=n_q,
        committed_job=cj,
        waiting_bits=wait,
        run_finish=r_f,
        run_nodes=r_k,
        run_order=r_cnt,
        n_started=s.n_started + do_start.astype(i32),
        start=start,
        done=done,
        stuck=s.stuck | stuck,
        overflow=s.overflow | (2 * r_over.astype(i32)),
        decisions=s.decisions + decide.astype(i32),
        steps=s.steps + active.astype(i32),
    ), jnp.where(do_start, j, -1)


def _inverse(prank: chex.Array) -> chex.Array:
    L = prank.shape[0]
    return jnp.zeros(L, jnp.int32).at[prank].set(jnp.arange(L, dtype=jnp.int32))


def run_static_nobf(seq: Sequence, prank: chex.Array, run_cap: int) -> NoBackfillState:
    """Run an episode without backfilling under a static-key heuristic (``prank``: int32
    ``[L]`` rank of each job in (key, index) order). Same semantics as :func:`run_heuristic` with
    ``backfill = none`` (both modes agree there: no reservation sort, releases tie in start
    order), with O(L/64 + R) work per micro-step instead of O(Q + R)."""
    prank = prank.astype(jnp.int32)
    inv = _inverse(prank)
    return jax.lax.while_loop(
        lambda s: ~s.done,
        lambda s: _nobf_step(seq, prank, inv, s, True)[0],
        _nobf_init(seq, prank, run_cap),
    )


def init_static_nobf(seq: Sequence, prank: chex.Array, run_cap: int) -> NoBackfillState:
    """The state :func:`run_static_nobf` starts from (the first job queued at its submit time),
    for running an episode in pieces with :func:`run_static_nobf_until`."""
    return _nobf_init(seq, prank.astype(jnp.int32), run_cap)


def run_static_nobf_until(
    seq: Sequence, prank: chex.Array, st: NoBackfillState, limit, chunk: int = 1 << 16
) -> NoBackfillState:
    """:func:`run_static_nobf` from ``st`` until the episode is done, overflows its running
    list, gets stuck, ``st.steps`` reaches ``limit`` (int32 scalar) or ``chunk`` (static)
    micro-steps have run (:func:`~jaxsched.sim.primitives.logged_until`): a whole trace in
    pieces, the host reporting progress in between (:mod:`jaxsched.sim.chunked`)."""
    prank = prank.astype(jnp.int32)
    inv = _inverse(prank)
    return logged_until(lambda s: _nobf_step(seq, prank, inv, s, False), st, limit, chunk)


def run_static_nobf_batch(seq: Sequence, prank: chex.Array, run_cap: int) -> NoBackfillState:
    """:func:`run_static_nobf` for a batch (leading axis ``B`` on every leaf), with the start
    times logged per iteration (see :func:`run_heuristic_batch`)."""
    prank = prank.astype(jnp.int32)
    L = prank.shape[1]
    inv = jax.vmap(_inverse)(prank)
    st = jax.vmap(lambda q, p: _nobf_init(q, p, run_cap))(seq, prank)
    step = jax.vmap(lambda q, p, i, s: _nobf_step(q, p, i, s, False), in_axes=(0, 0, 0, 0))
    return logged_loop(lambda s: step(seq, prank, inv, s), st, 4 * L + 8)[0]


# ----------------------------------------------------------------------------------------------
# One decision in closed form
# ----------------------------------------------------------------------------------------------
def schedule_nobf(seq: Sequence, st: SimState, slot, enabled=True) -> SimState:
    """:func:`jaxsched.sim.engine.schedule` with ``backfill = none`` (both modes agree there)
    computed in closed form, for a state in this module's *no-backfill layout*: the waiting
    jobs fill queue slots ``0 .. n_queued−1`` in increasing job index, and the running jobs
    fill slots ``0 .. n_running−1`` in release order (actual finish ``run_finish``, then start
    order ``run_order``), ``run_cum_nodes`` their running node sum.
    :func:`jaxsched.sim.engine.reset` returns such a state and this function keeps the layout,
    which is a valid engine layout too (the engine's no-backfill semantics do not depend on
    slot positions).

    The decision is at a scheduling point, so nothing is committed: the chosen job ``j``
    (queue ``slot``) starts now if it fits. Otherwise it waits; the engine would then
    alternate arrivals (a job arrives when its submit time is <= the earliest finish; ties
    go to the arrival) and releases (in release order) until ``j`` fits, i.e. up to and
    including the first release after which the free nodes reach ``j``'s, at ``T`` = that
    release's finish: every job of the arrival prefix with submit <= T has arrived by then.
    ``j`` starts at ``max(t, T)``. If the queue is then empty and jobs are still to come, the
    engine releases every job that finishes before the next submit (in order, ``j`` included)
    and lets that job arrive: a new scheduling point. If the queue is empty and nothing is to
    come, the episode is over. The counters ``steps`` (micro-steps) and ``decisions`` are the
    engine's. The backfilling bookkeeping, which the engine reads only when it backfills
    (``committed_slot``, ``shadow_time``, ``next_at_commit``, ``queue_bf_key``,
    ``arrival_group``), is left as it was. O(queue + running + length) work, no loop.
    """
    L = seq.submit.shape[0]
    Q, R = st.queue_job.shape[0], st.run_job.shape[0]
    i32, i64 = jnp.int32, jnp.int64
    ri = jnp.arange(R, dtype=i32)
    li = jnp.arange(L, dtype=i32)
    active = ~st.done & enabled
    slot = jnp.clip(jnp.asarray(slot, i32), 0, Q - 1)
    j = jnp.maximum(st.queue_job[slot], 0)
    kj = seq.nodes[j]
    fits = kj <= st.free
    rv = ri < st.n_running

    # --- j waits: releases in order up to the one that makes it fit, arrivals meanwhile
    crit = argmax_bool(rv & (st.free + st.run_cum_nodes >= kj))
    T = jnp.where(fits, st.t, st.run_finish[crit])
    c_wait = jnp.where(fits, 0, crit + 1)
    beyond = (li >= st.next) & ((li >= seq.n_jobs) | (seq.submit > T))
    m_wait = jnp.where(fits, 0, jnp.min(jnp.where(beyond, li, L)) - st.next)
    t1 = jnp.maximum(st.t, T)
    nxt1 = st.next + m_wait
    nq1 = st.n_queued - 1 + m_wait
    r_over = st.n_running - c_wait >= R

    # --- j starts at t1: its place in release order among the jobs running before the wait
    fj = t1 + seq.run[j]
    pos = jnp.sum(rv & (st.run_finish <= fj)).astype(i32)
    done = (nq1 == 0) & (nxt1 >= seq.n_jobs)

    # --- empty queue: every release before the next submit, then that arrival
    idle = (nq1 == 0) & ~done
    sb = seq.submit[jnp.minimum(nxt1, L - 1)]
    n_before = (jnp.sum(rv & (st.run_finish < sb)) + (fj < sb)).astype(i32)
    c = jnp.where(idle, n_before, c_wait)  # released: the first c of (running + j)
    t = jnp.where(idle, jnp.maximum(t1, sb), t1)
    m = m_wait + idle.astype(i32)
    n_q = nq1 + idle.astype(i32)
    nxt = st.next + m

    running, released = _running_merge(st, j, kj, fj, t1 + seq.req[j], pos, c)
    queue = _queue_compact(seq, st, slot, m)
    new = st.replace(
        t=t.astype(i64),
        free=(st.free - kj + released).astype(i32),
        next=nxt.astype(i32),
        **queue,
        n_queued=n_q.astype(i32),
        **running,
        committed_job=jnp.asarray(-1, i32),
        n_started=st.n_started + 1,
        start=st.start.at[j].set(t1),
        done=done | r_over,
        overflow=st.overflow | (2 * r_over.astype(i32)),
        decisions=st.decisions + 1,
        steps=(
            st.steps
            + 1
            + jnp.where(fits, 0, m_wait + c_wait + 1)
            + jnp.where(idle, c - c_wait + 1, 0)
        ).astype(i32),
    )
    return jax.tree_util.tree_map(lambda x, y: jnp.where(active, x, y), new, st)


def _running_merge(st: SimState, j, kj, fj, ej, pos, c):
    """The running list of :func:`schedule_nobf` (release order): job ``j`` (``kj`` nodes,
    actual / estimated finish ``fj`` / ``ej``) inserted at slot ``pos``, then the first ``c``
    jobs released. Returns (dict of the ``run_*`` fields and ``n_running``, int32 nodes the
    ``c`` releases free)."""
    R = st.run_job.shape[0]
    i32 = jnp.int32
    ri = jnp.arange(R, dtype=i32)
    p = ri + c
    src = jnp.clip(jnp.where(p < pos, p, p - 1), 0, R - 1)
    at_j = p == pos
    n_r = st.n_running + 1 - c
    rvalid = ri < n_r

    def run_list(a, v, fill):
        return jnp.where(rvalid, jnp.where(at_j, v, a[src]), fill)

    cum = st.run_cum_nodes
    cum_pos = jnp.where(pos > 0, cum[jnp.maximum(pos - 1, 0)], 0) + kj

    def merged_cum(q):  # running node sum of (running + j) at index q
        return jnp.where(
            q < pos,
            cum[jnp.clip(q, 0, R - 1)],
            jnp.where(q == pos, cum_pos, cum[jnp.clip(q - 1, 0, R - 1)] + kj),
        )

    released = jnp.where(c > 0, merged_cum(c - 1), 0)
    r_cum = jnp.where(
        rvalid,
        jnp.where(at_j, cum_pos, jnp.where(p < pos, cum[src], cum[src] + kj)) - released,
        0,
    )
    fields = dict(
        run_job=run_list(st.run_job, j, -1),
        run_finish=run_list(st.run_finish, fj, 0),
        run_est_finish=run_list(st.run_est_finish, ej, 0),
        run_nodes=run_list(st.run_nodes, kj, 0),
        run_sort_flag=run_list(st.run_sort_flag, False, False),
        run_order=run_list(st.run_order, st.n_started, 0),
        run_cum_nodes=r_cum.astype(i32),
        n_running=n_r.astype(i32),
    )
    return fields, released


def _queue_compact(seq: Sequence, st: SimState, slot, m) -> dict:
    """The queue of :func:`schedule_nobf`: ``slot`` removed, the ``m`` arrivals (jobs
    ``next .. next+m-1``) appended, attributes copied. Returns a dict of the ``queue_*``
    fields (``queue_bf_key`` is left as it was)."""
    Q = st.queue_job.shape[0]
    i32 = jnp.int32
    qi = jnp.arange(Q, dtype=i32)
    n_keep = st.n_queued - 1
    kept = jnp.where(qi < slot, st.queue_job, jnp.roll(st.queue_job, -1))
    q_job = jnp.where(
        qi < n_keep, kept, jnp.where(qi < n_keep + m, st.next + qi - n_keep, -1)
    ).astype(i32)
    qj = jnp.maximum(q_job, 0)
    qv = q_job >= 0
    return dict(
        queue_job=q_job,
        queue_nodes=jnp.where(qv, seq.nodes[qj], 0).astype(st.queue_nodes.dtype),
        queue_req=jnp.where(qv, req32(seq.req[qj]), 0).astype(st.queue_req.dtype),
        queue_submit=jnp.where(qv, seq.submit[qj], 0).astype(st.queue_submit.dtype),
        queue_rank=jnp.where(qv, st.policy_rank[qj], 0).astype(st.queue_rank.dtype),
    )
