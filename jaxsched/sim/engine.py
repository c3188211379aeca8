"""The batch-scheduling engine: pure, jit/vmap-compiled state transitions.

The engine reproduces RLScheduler's SchedGym event model (spec ``rlscheduler.md`` §2) as a
sequence of *micro-steps*. Each micro-step performs exactly one of

* **decide**: the queue is non-empty and no job is committed: the chosen job starts if it fits,
  otherwise it becomes the *committed* job (and, with backfilling, its reservation is taken);
* **start**: the committed job fits now, or a backfill candidate exists: start it;
* **advance**: one event (:func:`~jaxsched.sim.primitives.advance_one`): the next arrival if it
  comes no later than the earliest actual finish (arrival wins ties), else one release.

Every job arrives once, is released at most once and starts once, so an episode of L jobs takes
at most ``4 L`` micro-steps whatever the policy; each micro-step does O(queue capacity + running
capacity) work, independent of L. The reference's list-order
tie rules are closed-form keys (spec §2.8).

The micro-step is written as four phases (:func:`_select`: what this step does; :func:`_start`,
:func:`_commit`, :func:`_advance`), small functions that XLA inlines into one computation.

Shapes: ``L`` jobs per sequence (padded; ``n_jobs`` valid), ``Q`` queue slots, ``R`` running
slots. Times are int64 seconds (absolute trace time), priority keys float64. Capacities ``Q``
and ``R`` are static; if a run needs more the ``overflow`` flag is set and the host driver
(:mod:`jaxsched.sim.evaluate`) re-runs with larger capacities.

The state types live in :mod:`jaxsched.sim.types`, the building blocks in
:mod:`jaxsched.sim.primitives`, the no-backfilling fast paths in :mod:`jaxsched.sim.nobf` and
the batching rules in :mod:`jaxsched.sim.batching`; this module re-exports their public names
(``E.SimState``, ``E.reservation``, ``E.run_static_nobf``, ...).
"""

from __future__ import annotations

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp

from jaxsched.policies import heuristics as H
from jaxsched.precision import require_x64
from jaxsched.sim.nobf import run_static_nobf, run_static_nobf_batch
from jaxsched.sim.primitives import (
    Event,
    advance_one,
    advance_until,
    apply_event,
    argmax_bool,
    argmin,
    argmin_unique,
    logged_loop,
    next_event,
    queue_write,
    req32,
    reservation,
    running_cum_insert,
    running_insert,
)
from jaxsched.sim.types import (
    ABORTED,
    BACKFILL_EASY,
    BACKFILL_EASY_SJBF,
    BACKFILL_NONE,
    BACKFILL_RLSCHEDULER,
    BACKFILL_RLSCHEDULER_SJBF,
    BACKFILLS,
    BIG,
    I32MAX,
    I32MIN,
    IMAX,
    NoBackfillState,
    Sequence,
    SimParams,
    SimState,
    backfill_code,
    is_easy,
    is_sjbf,
    key_dtype,
)

__all__ = [
    # this module
    "reset",
    "heuristic_choice",
    "micro_step",
    "micro_step_logged",
    "at_decision",
    "run_heuristic",
    "run_heuristic_batch",
    "advance_to_decision",
    "schedule",
    # re-exported from types, primitives and nobf
    "Sequence",
    "SimParams",
    "SimState",
    "NoBackfillState",
    "BIG",
    "IMAX",
    "ABORTED",
    "BACKFILL_NONE",
    "BACKFILL_RLSCHEDULER",
    "BACKFILL_EASY",
    "BACKFILL_RLSCHEDULER_SJBF",
    "BACKFILL_EASY_SJBF",
    "BACKFILLS",
    "backfill_code",
    "reservation",
    "advance_one",
    "advance_until",
    "run_static_nobf",
    "run_static_nobf_batch",
]


def reset(seq: Sequence, prank: chex.Array, queue_cap: int, run_cap: int) -> SimState:
    """The initial state: idle cluster, clock at the first submit, job 0 in the queue.

    Args:
      seq: the sequence. prank: int32 ``[L]`` static policy rank (``arange(L)`` for RL).
      queue_cap, run_cap: static capacities Q and R.
    """
    require_x64("jaxsched.sim.engine.reset")
    L = seq.submit.shape[0]
    i32, i64 = jnp.int32, jnp.int64
    prank = prank.astype(i32)
    zq = lambda dt: jnp.zeros((queue_cap,), dt)
    zr = lambda dt: jnp.zeros((run_cap,), dt)
    return SimState(
        t=seq.submit[0].astype(i64),
        free=seq.num_nodes.astype(i32),
        next=jnp.asarray(1, i32),
        queue_job=jnp.full((queue_cap,), -1, i32).at[0].set(0),
        queue_nodes=zq(i32).at[0].set(seq.nodes[0]),
        queue_req=zq(i32).at[0].set(req32(seq.req[0])),
        queue_submit=zq(i64).at[0].set(seq.submit[0]),
        queue_rank=zq(i32).at[0].set(prank[0]),
        queue_bf_key=zq(key_dtype(L)).at[0].set(prank[0]),
        arrival_group=jnp.asarray(0, i32),
        n_queued=jnp.asarray(1, i32),
        run_job=jnp.full((run_cap,), -1, i32),
        run_finish=zr(i64),
        run_est_finish=zr(i64),
        run_nodes=zr(i32),
        run_sort_flag=zr(bool),
        run_order=zr(i32),
        run_cum_nodes=zr(i32),
        n_running=jnp.asarray(0, i32),
        committed_job=jnp.asarray(-1, i32),
        committed_slot=jnp.asarray(-1, i32),
        shadow_time=jnp.asarray(0, i64),
        next_at_commit=jnp.asarray(0, i32),
        n_started=jnp.asarray(0, i32),
        start=jnp.full((L,), -1, i64),
        policy_rank=prank,
        done=jnp.asarray(False),
        overflow=jnp.asarray(0, i32),
        stuck=jnp.asarray(False),
        decisions=jnp.asarray(0, i32),
        steps=jnp.asarray(0, i32),
    )


def heuristic_choice(
    seq: Sequence, params: SimParams, st: SimState, dynamic: bool = True
) -> chex.Array:
    """The queue slot a heuristic picks: smallest (key, trace index) among waiting jobs.

    ``dynamic`` (static) compiles in the clock-dependent WFP3/UNICEP keys of the correct mode;
    pass False when no run of the batch needs them (it saves two transcendental functions per
    queue slot and micro-step).
    """
    qv = st.queue_job >= 0
    L, Q = seq.submit.shape[0], st.queue_job.shape[0]
    if L * Q + Q < 2**31:
        slot = argmin_unique(st.queue_rank, qv, L)  # ranks are a permutation of 0..L-1
    else:
        slot = argmin(jnp.where(qv, st.queue_rank, jnp.iinfo(jnp.int32).max))
    if not dynamic:
        return slot
    dyn = H.is_dynamic(params.policy, params.compat)
    qj = jnp.where(qv, st.queue_job, 0)
    key = H.dynamic_key(
        params.policy,
        st.t,
        st.queue_submit,
        st.queue_req,
        seq.procs[qj],
        None if seq.log2n is None else seq.log2n[qj],
    )
    key = jnp.where(qv, key, jnp.inf)
    m = jnp.min(key)
    cand = qv & ((key == m) | jnp.isnan(m))
    dslot = argmin(jnp.where(cand, qj, jnp.iinfo(jnp.int32).max))
    return jnp.where(dyn, dslot, slot)


def micro_step(seq: Sequence, params: SimParams, st: SimState, choice: chex.Array) -> SimState:
    """One micro-step (see the module docstring). ``choice`` is the queue slot to decide on when
    this step is a decision (ignored otherwise). A finished state is returned unchanged."""
    return _micro(seq, params, st, choice, True)[0]


def micro_step_logged(seq: Sequence, params: SimParams, st: SimState, choice: chex.Array):
    """:func:`micro_step` that leaves ``st.start`` alone and returns ``(state, job started)``
    (int32, -1 = none; it starts at ``st.t``) for a loop that logs the starts and writes them
    at its end (:func:`~jaxsched.sim.primitives.logged_loop`, ``logged_until``): in a long
    loop the per-step write into ``start`` costs more than the rest of the step."""
    return _micro(seq, params, st, choice, False)


class _Plan(NamedTuple):
    """What one micro-step does (:func:`_select`); bool scalars unless noted.

    decide: a decision is taken; do_start: a job starts (``start_slot``, int32 queue slot);
    do_commit: the decided job becomes committed (``cur_slot``); committed_fits: the committed
    job itself starts; do_arr / do_rel: the event ``ev`` (an arrival / a release) happens;
    stuck: nothing can happen any more; shadow_now: int64 reservation time of ``cur_slot``'s
    job (EASY: recomputed now)."""

    decide: chex.Array
    do_start: chex.Array
    do_commit: chex.Array
    committed_fits: chex.Array
    do_arr: chex.Array
    do_rel: chex.Array
    stuck: chex.Array
    cur_slot: chex.Array
    start_slot: chex.Array
    shadow_now: chex.Array
    ev: Event


def _backfill_slot(seq: Sequence, params: SimParams, st: SimState, cur_slot, shadow, extra):
    """The backfill candidate (int32 queue slot, and whether it exists): the first waiting job
    in scan order, other than ``cur_slot``'s, that is eligible and fits now.

    Compat scan order (spec §2.8.3): jobs that arrived before the commit by (submit, policy
    rank) -- queue_bf_key -- then the later arrivals by index; all earlier arrivals come first since
    submit times are non-decreasing in the index. Correct mode: (submit, index) = index. The
    ``-sjbf`` codes scan by requested time first, then in that order."""
    L = seq.submit.shape[0]
    Q = st.queue_job.shape[0]
    i32 = jnp.int32
    qi = jnp.arange(Q, dtype=i32)
    bf = params.backfill
    easy = is_easy(bf)
    KD = st.queue_bf_key.dtype
    late = st.queue_job >= st.next_at_commit
    qj = st.queue_job.astype(KD)
    bkey = jnp.where(params.compat, jnp.where(late, L * L + qj, st.queue_bf_key), qj)
    # t + q < shadow (greedy) or t + q <= shadow (EASY), compared in int32 as q <= bound
    bound = jnp.clip(shadow - st.t - jnp.where(easy, 0, 1), I32MIN, I32MAX).astype(i32)
    elig = (st.queue_req <= bound) | (easy & (st.queue_nodes <= extra))
    elig = elig & (st.queue_job >= 0) & (qi != cur_slot) & (st.queue_nodes <= st.free)
    elig = elig & (bf != BACKFILL_NONE)
    # SJBF: only the eligible jobs of the shortest requested time compete on the scan key
    short = st.queue_req == jnp.min(jnp.where(elig, st.queue_req, I32MAX))
    first = elig & jnp.where(is_sjbf(bf), short, True)
    # keys are distinct: one reduction over key * Q + slot
    bdt = jnp.int32 if (L * L + L + 1) * Q < 2**31 else jnp.int64
    bslot = argmin_unique(bkey.astype(bdt), first, L * L + L)
    return bslot, elig[bslot]


def _select(seq: Sequence, params: SimParams, st: SimState, choice) -> _Plan:
    """Phase 1: the job under consideration (the committed one, or the new ``choice``), its
    reservation (recomputed every step for EASY; latched at commit for the greedy variant),
    the backfill candidate and the next event; which of decide / start / commit / advance
    this step does."""
    i32 = jnp.int32
    active = ~st.done
    committed = st.committed_job >= 0
    rv = jnp.arange(st.run_job.shape[0], dtype=i32) < st.n_running

    cur_slot = jnp.where(committed, st.committed_slot, choice).astype(i32)
    cur_k = st.queue_nodes[cur_slot]
    fits = cur_k <= st.free

    easy = is_easy(params.backfill)
    e_eff = jnp.where(easy, jnp.maximum(st.run_est_finish, st.t), st.run_est_finish)
    shadow_now, nodes_at = reservation(
        e_eff, st.run_nodes, st.run_cum_nodes, rv, st.free, cur_k, st.t
    )
    shadow = jnp.where(easy, shadow_now, st.shadow_time)
    bslot, has_bf = _backfill_slot(seq, params, st, cur_slot, shadow, nodes_at - cur_k)

    ev = next_event(seq, params, st)

    decide = active & ~committed & (st.n_queued > 0)
    do_adv = active & ~decide & ~(committed & (fits | has_bf))
    return _Plan(
        decide=decide,
        do_start=(decide & fits) | (active & committed & (fits | has_bf)),
        do_commit=decide & ~fits,
        committed_fits=committed & fits,
        do_arr=do_adv & ev.arrive,
        do_rel=do_adv & ~ev.arrive & (st.n_running > 0),
        stuck=do_adv & ~ev.arrive & (st.n_running == 0),
        cur_slot=cur_slot,
        start_slot=jnp.where(committed & ~fits, bslot, cur_slot),
        shadow_now=shadow_now,
        ev=ev,
    )


def _start(seq: Sequence, st: SimState, plan: _Plan, write_start: bool):
    """Phase 2: the job in ``plan.start_slot`` leaves the queue (the slot is emptied in
    :func:`_advance`) and enters the running list, sorted by estimated finish. Returns the
    state, the job (int32) and whether the running list overflowed."""
    i32 = jnp.int32
    R = st.run_job.shape[0]
    do_start = plan.do_start
    rv = jnp.arange(R, dtype=i32) < st.n_running
    sj = jnp.maximum(st.queue_job[plan.start_slot], 0)
    sk = st.queue_nodes[plan.start_slot]
    new_e = st.t + seq.req[sj]
    pos = jnp.sum(rv & (st.run_est_finish <= new_e))
    r_over = do_start & (st.n_running >= R)
    if write_start:
        start = st.start.at[sj].set(jnp.where(do_start, st.t, st.start[sj]))
    else:
        start = st.start
    st = st.replace(
        free=st.free - jnp.where(do_start, sk, 0),
        run_job=running_insert(st.run_job, pos, sj, do_start),
        run_finish=running_insert(st.run_finish, pos, st.t + seq.run[sj], do_start),
        run_est_finish=running_insert(st.run_est_finish, pos, new_e, do_start),
        run_nodes=running_insert(st.run_nodes, pos, sk, do_start),
        run_sort_flag=running_insert(st.run_sort_flag, pos, False, do_start),
        run_order=running_insert(st.run_order, pos, st.n_started, do_start),
        run_cum_nodes=running_cum_insert(st.run_cum_nodes, pos, sk, do_start),
        n_running=st.n_running + do_start.astype(i32),
        start=start,
        n_started=st.n_started + do_start.astype(i32),
        committed_job=jnp.where(do_start & plan.committed_fits, -1, st.committed_job),
    )
    return st, sj, r_over


def _commit(params: SimParams, st: SimState, plan: _Plan, sj, n_r_before) -> SimState:
    """Phase 3: the decided job that does not fit becomes committed and takes its reservation
    (the reference re-sorts its running list here: the running jobs get ``run_sort_flag``)."""
    do_commit = plan.do_commit
    rv = jnp.arange(st.run_job.shape[0], dtype=jnp.int32) < n_r_before
    flag = do_commit & params.compat & (params.backfill != BACKFILL_NONE)
    return st.replace(
        committed_job=jnp.where(do_commit, sj, st.committed_job),
        committed_slot=jnp.where(do_commit, plan.cur_slot, st.committed_slot),
        shadow_time=jnp.where(do_commit, plan.shadow_now, st.shadow_time),
        next_at_commit=jnp.where(do_commit, st.next, st.next_at_commit),
        run_sort_flag=jnp.where(flag, st.run_sort_flag | rv, st.run_sort_flag),
    )


def _advance(seq: Sequence, st: SimState, plan: _Plan, q_free_slot) -> tuple[SimState, chex.Array]:
    """Phase 4: one event (an arrival fills the started job's hole or the first free queue
    slot ``q_free_slot``; a release leaves the running list), or, after a start, the started
    job's queue slot is emptied. Returns the state and whether the queue overflowed."""
    i32 = jnp.int32
    do_start, do_arr, ev = plan.do_start, plan.do_arr, plan.ev
    fslot = jnp.where(do_start, plan.start_slot, q_free_slot).astype(i32)
    q_over = do_arr & (st.n_queued >= st.queue_job.shape[0])
    new_job = jnp.where(do_arr, st.next, -1)
    q = queue_write(seq, st, do_arr | do_start, fslot, new_job, ev.nj, ev.g_new)
    st = st.replace(
        **q,
        **apply_event(st, ev, do_arr, plan.do_rel),
        n_queued=st.n_queued + do_arr.astype(i32) - do_start.astype(i32),
    )
    return st, q_over


def _micro(seq: Sequence, params: SimParams, st: SimState, choice: chex.Array, write_start: bool):
    """:func:`micro_step`, also returning the job started by this step (int32, -1 = none; it
    starts at ``st.t``). With ``write_start=False`` the ``start`` array is left untouched (the
    batched runner logs starts instead: a per-step write into ``[L]`` costs more than the
    rest of the step)."""
    i32 = jnp.int32
    active = ~st.done
    plan = _select(seq, params, st, choice)
    q_free_slot = argmax_bool(st.queue_job < 0)
    new, sj, r_over = _start(seq, st, plan, write_start)
    new = _commit(params, new, plan, sj, st.n_running)
    new, q_over = _advance(seq, new, plan, q_free_slot)

    # episode end: after a start, nothing waits, nothing left to arrive
    # (an overflow ends the run early: its result is discarded and re-run with more room)
    ended = plan.do_start & (new.n_queued == 0) & (new.next >= seq.n_jobs) & (new.committed_job < 0)
    new = new.replace(
        done=st.done | plan.stuck | r_over | q_over | ended,
        overflow=st.overflow | q_over.astype(i32) | (2 * r_over.astype(i32)),
        stuck=st.stuck | plan.stuck,
        decisions=st.decisions + plan.decide.astype(i32),
        steps=st.steps + active.astype(i32),
    )
    return new, jnp.where(plan.do_start, sj, -1)


def at_decision(st: SimState) -> chex.Array:
    """True when the state is a scheduling point: a job must be chosen from the queue."""
    return ~st.done & (st.committed_job < 0) & (st.n_queued > 0)


def run_heuristic(seq: Sequence, params: SimParams, st: SimState, dynamic: bool = True) -> SimState:
    """Run an episode to the end under the heuristic ``params.policy`` (one ``while_loop``);
    ``dynamic`` as in :func:`heuristic_choice`."""

    def body(s):
        return micro_step(seq, params, s, heuristic_choice(seq, params, s, dynamic))

    return jax.lax.while_loop(lambda s: ~s.done, body, st)


def run_heuristic_batch(
    seq: Sequence, params: SimParams, st: SimState, dynamic: bool = True
) -> SimState:
    """:func:`run_heuristic` for a batch (every leaf with a leading batch axis ``B``), with the
    start times logged per iteration instead of written per micro-step (faster on CPU)."""
    L = st.start.shape[1]

    def step(s):
        return jax.vmap(lambda q, p, x: _micro(q, p, x, heuristic_choice(q, p, x, dynamic), False))(
            seq, params, s
        )

    return logged_loop(step, st, 4 * L + 8)[0]


def advance_to_decision(seq: Sequence, params: SimParams, st: SimState) -> SimState:
    """Run micro-steps until the next scheduling point or the end of the episode."""
    dummy = jnp.asarray(0, jnp.int32)
    return jax.lax.while_loop(
        lambda s: ~s.done & ~at_decision(s), lambda s: micro_step(seq, params, s, dummy), st
    )


def schedule(seq: Sequence, params: SimParams, st: SimState, slot: chex.Array) -> SimState:
    """Decision-level API: at a scheduling point, choose the waiting job in queue ``slot``;
    returns the state at the next scheduling point (or the final state)."""
    slot = jnp.asarray(slot, jnp.int32)

    # one loop (the decision is its first iteration): micro_step is traced and compiled once
    def body(c):
        s, first = c
        return micro_step(seq, params, s, jnp.where(first, slot, 0)), jnp.asarray(False)

    return jax.lax.while_loop(
        lambda c: c[1] | (~c[0].done & ~at_decision(c[0])), body, (st, jnp.asarray(True))
    )[0]
