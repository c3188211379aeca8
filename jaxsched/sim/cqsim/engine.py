"""The CQSim engine mode (``compat="cqsim"``): CQSim's event order and scheduling passes, and the
DRAS-PG scheduling loop of spec dras.md §2.5 (code mode), as one pure micro-step.

Events (spec §2.1 with the reference README's rules): finishes come before submits at equal
times, finishes at equal times in start order, submits in trace order; every event is followed
by one scheduling pass. A pass is a short run of micro-steps, each doing one thing:

* ``LEVEL1``: if the queue is empty the pass ends. Else a job is picked from the window of the
  first ``W`` waiting jobs — slot 0 when the persistent reservation's job is at the head (no
  decision), otherwise the slot given (a *level-1 decision*). If it fits it starts (through
  ``FLUSH``: "ready", or "reserved" if it held the reservation). If not, the oldest job becomes the reserved job
  and, with more jobs waiting, EASY/DRAS go to ``LEVEL2`` (profile built, the reserved job
  entered), conservative goes to ``CONS``; otherwise the pass ends.
* ``LEVEL2``: the candidates are the waiting jobs (reserved job excluded) that fit now in the
  profile; none left → ``FLUSH``. Else the slot given picks one of the first ``W`` (a *level-2
  decision*); it is entered in the profile and appended to the chosen list.
* ``CONS``: the next waiting job in queue order gets a reservation; if it starts now it is
  chosen. After the last → ``FLUSH``.
* ``FLUSH``: the chosen jobs start in order, one per micro-step ("backfilled"; a level-1 pick
  that fits is also started here, as "ready", and level 1 then goes on); the pass ends.
* ``IDLE``: the next event (one finish or one submit); the pass starts (``LEVEL1``).

With the level-1/level-2 slot always 0 this is CQSim's FCFS with EASY (mode 1), conservative
(mode 2) or no backfilling (mode 0); mode 3 is the DRAS loop (mode 4 the DRAS-DQL loop of §2.6:
the same micro-steps without the persistent reservation, :data:`~.types.BF_DQL`; mode 5 the
paper's DRAS loop, :data:`~.types.BF_DRAS_PAPER`: as 4, but the level-1 pick that does not fit
is the reserved job, not the oldest; mode 6 the immediate loop of the Decima-PG baseline,
:data:`~.types.BF_IMMEDIATE`: ``LEVEL1`` makes no decision but gathers the candidates — the
waiting jobs among the first ``W`` that fit now — and each ``LEVEL2`` pick starts at once
through ``FLUSH`` ("ready") and returns to ``LEVEL1``; no reservation, no profile), and the fixed policies of
:func:`fixed_choice` give the reference's ``dras-*`` runs. A learned policy drives the same
micro-step through :func:`advance_to_decision` / :func:`decide` and :func:`window`.

Shapes as in :mod:`jaxsched.sim.cqsim.types`.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from jaxsched.precision import require_x64
from jaxsched.sim.cqsim.profile import build_profile, fits_now, place, reserve_search
from jaxsched.sim.cqsim.types import (
    BF_CONS,
    BF_DQL,
    BF_DRAS,
    BF_DRAS_PAPER,
    BF_EASY,
    BF_IMMEDIATE,
    CLASS_BACKFILLED,
    CLASS_READY,
    CLASS_RESERVED,
    CONS,
    FLUSH,
    IDLE,
    LEVEL1,
    LEVEL2,
    OVER_PROFILE,
    OVER_QUEUE,
    OVER_RUNNING,
    POL_LARGEST,
    POL_SMALLEST,
    RT_PAPER,
    CQParams,
    CQState,
)
from jaxsched.sim.primitives import argmax_bool, argmin, running_drop, running_insert
from jaxsched.sim.types import BIG, I32MAX, Sequence

__all__ = [
    "reset",
    "micro_step",
    "at_decision",
    "window",
    "fixed_choice",
    "advance_to_decision",
    "decide",
    "start_episode",
    "run_fixed",
]

i32, i64 = jnp.int32, jnp.int64


def reset(seq: Sequence, num_nodes: int, queue_cap: int, run_cap: int, priority=None) -> CQState:
    """The initial state: empty machine of ``num_nodes`` (static N) nodes, nothing submitted,
    phase ``IDLE`` (the first micro-step submits job 0). ``queue_cap`` (Q, at least the window
    W = 50 used by :func:`window`) and ``run_cap`` (R) are static capacities; ``priority``:
    int ``[L]`` flag (default 0)."""
    require_x64("jaxsched.sim.cqsim.engine.reset")
    L = seq.submit.shape[0]
    P = run_cap + queue_cap + 2
    prio = jnp.zeros((L,), i32) if priority is None else jnp.asarray(priority, i32)
    z = lambda n, dt, v=0: jnp.full((n,), v, dt)  # noqa: E731
    s = lambda v, dt=i32: jnp.asarray(v, dt)  # noqa: E731
    return CQState(
        t=s(0, i64), phase=s(IDLE), next=s(0), free=s(num_nodes),
        queue_job=z(queue_cap, i32, -1), n_queued=s(0),
        run_job=z(run_cap, i32, -1), run_nodes=z(run_cap, i32), run_order=z(run_cap, i32),
        run_finish=z(run_cap, i64), run_est=z(run_cap, i64, BIG), n_running=s(0),
        node_owner=z(num_nodes, i32, -1), node_end=z(num_nodes, i64),
        prof_t=z(P, i64, BIG), prof_a=z(P, i32), n_prof=s(0),
        cand=z(queue_cap, bool, False), chosen=z(queue_cap, i32, -1), n_chosen=s(0), ptr=s(0),
        resume=s(False, bool), reserved=s(-1), start=z(L, i64, -1), cls=z(L, i32, -1), priority=prio,
        n_started=s(0), passes=s(0), decisions=s(0), steps=s(0),
        done=s(False, bool), stuck=s(False, bool), overflow=s(0),
    )  # fmt: skip


def _dur(seq: Sequence, params: CQParams, j):
    """int64 duration of waiting job(s) ``j`` in the profile: actual run (code) or estimate."""
    return jnp.where(params.runtime == RT_PAPER, seq.req[j], seq.run[j]).astype(i64)


def _start_job(seq: Sequence, st: CQState, j, cls, on) -> CQState:
    """``st`` with job ``j`` started now where ``on``: first-fit nodes, the running list (sorted
    by estimated end, after equal ends), its start time and class."""
    jj = jnp.maximum(j, 0)
    n, e = seq.nodes[jj], st.t + seq.req[jj]
    freen = st.node_owner < 0
    take = on & freen & (jnp.cumsum(freen) <= n)
    ri = jnp.arange(st.run_job.shape[0], dtype=i32)
    pos = jnp.sum((ri < st.n_running) & (st.run_est <= e)).astype(i32)
    full = on & (st.n_running >= st.run_job.shape[0])
    return st.replace(
        free=st.free - jnp.where(on, n, 0),
        node_owner=jnp.where(take, j, st.node_owner),
        node_end=jnp.where(take, e, st.node_end),
        run_job=running_insert(st.run_job, pos, j, on),
        run_nodes=running_insert(st.run_nodes, pos, n, on),
        run_order=running_insert(st.run_order, pos, st.n_started, on),
        run_finish=running_insert(st.run_finish, pos, st.t + seq.run[jj], on),
        run_est=running_insert(st.run_est, pos, e, on),
        n_running=st.n_running + on.astype(i32),
        start=st.start.at[jj].set(jnp.where(on, st.t, st.start[jj])),
        cls=st.cls.at[jj].set(jnp.where(on, cls, st.cls[jj])),
        n_started=st.n_started + on.astype(i32),
        reserved=jnp.where(on & (j == st.reserved), -1, st.reserved),
        overflow=st.overflow | jnp.where(full, OVER_RUNNING, 0),
        done=st.done | full,
    )


def _queue_remove(st: CQState, slot, on) -> CQState:
    return st.replace(
        queue_job=running_drop(st.queue_job, slot, -1, on),
        n_queued=st.n_queued - on.astype(i32),
    )


def _idle(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """One event: the earliest finish (start order on ties) unless a submit comes earlier."""
    L, Q = seq.submit.shape[0], st.queue_job.shape[0]
    rv = jnp.arange(st.run_job.shape[0], dtype=i32) < st.n_running
    fmin = jnp.min(jnp.where(rv, st.run_finish, BIG))
    rslot = argmin(jnp.where(rv & (st.run_finish == fmin), st.run_order, I32MAX))
    more = st.next < seq.n_jobs
    nj = jnp.minimum(st.next, L - 1)
    fin = (st.n_running > 0) & (~more | (fmin <= seq.submit[nj]))
    arr = more & ~fin
    j, k = st.run_job[rslot], st.run_nodes[rslot]
    over = arr & (st.n_queued >= Q)
    end = ~fin & ~arr
    qi = jnp.arange(Q, dtype=i32)
    return st.replace(
        t=jnp.where(fin, fmin, jnp.where(arr, jnp.maximum(st.t, seq.submit[nj]), st.t)),
        phase=jnp.where(end, IDLE, LEVEL1).astype(i32),
        next=st.next + arr.astype(i32),
        free=st.free + jnp.where(fin, k, 0),
        queue_job=jnp.where(arr & (qi == st.n_queued), nj, st.queue_job),
        n_queued=st.n_queued + arr.astype(i32),
        node_owner=jnp.where(fin & (st.node_owner == j), -1, st.node_owner),
        run_job=running_drop(st.run_job, rslot, -1, fin),
        run_nodes=running_drop(st.run_nodes, rslot, 0, fin),
        run_order=running_drop(st.run_order, rslot, 0, fin),
        run_finish=running_drop(st.run_finish, rslot, 0, fin),
        run_est=running_drop(st.run_est, rslot, BIG, fin),
        n_running=st.n_running - fin.astype(i32),
        done=st.done | end | over,
        stuck=st.stuck | (end & (st.n_queued > 0)),
        overflow=st.overflow | jnp.where(over, OVER_QUEUE, 0),
    )


def _head_auto(st: CQState):
    """bool: the reserved job is at the head of the queue (level 1 is skipped)."""
    return (st.reserved >= 0) & (st.queue_job[0] == st.reserved)


def _candidates(seq: Sequence, params: CQParams, st: CQState, old):
    """bool ``[Q]``: the queue slots in ``old`` that fit now in the state's profile."""
    qj = jnp.maximum(st.queue_job, 0)
    ok = fits_now(st.prof_t, st.prof_a, st.n_prof, st.t, seq.nodes[qj], _dur(seq, params, qj))
    return old & ok


#: the decision window: the first W waiting jobs (level 1) or candidates (level 2), spec §4
WINDOW = 50


def _width(st: CQState) -> int:
    """The window's width for this state's queue (static): ``min(WINDOW, queue slots)``."""
    return min(WINDOW, st.queue_job.shape[0])


def _typed(f):
    """``f`` with its output cast to its input state's dtypes (the phases return some fields
    in wider types; ``switch`` and ``cond`` need equal ones)."""

    def g(seq, params, st, slot):
        return jax.tree_util.tree_map(lambda a, b: b.astype(a.dtype), st, f(seq, params, st, slot))

    return g


def _level1(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """Level 1: :func:`_level1_pick`, or in the immediate loop :func:`_level1_gather`."""
    imm = params.backfill == BF_IMMEDIATE
    return jax.lax.cond(imm, _typed(_level1_gather), _typed(_level1_pick), seq, params, st, slot)


def _level1_gather(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """The immediate loop's level 1 (no decision): the candidates are the waiting jobs among
    the first W that fit now; none → the pass ends, else ``LEVEL2`` picks one."""
    W = _width(st)
    qi = jnp.arange(st.queue_job.shape[0], dtype=i32)
    fit = seq.nodes[jnp.maximum(st.queue_job, 0)] <= st.free
    cand = (qi < jnp.minimum(st.n_queued, W)) & fit
    some = jnp.any(cand)
    return st.replace(
        cand=cand, phase=jnp.where(some, LEVEL2, IDLE).astype(i32),
        passes=st.passes + (~some).astype(i32),
    )  # fmt: skip


def _level1_pick(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """One level-1 pick: start it if it fits, else reserve the oldest job (the paper's loop:
    the pick) and end level 1."""
    W = _width(st)
    empty = st.n_queued == 0
    auto = _head_auto(st)
    nwin = jnp.clip(jnp.minimum(st.n_queued, W), 1, W)
    s = jnp.where(auto, 0, jnp.clip(slot, 0, nwin - 1))
    j = st.queue_job[s]
    go = ~empty & (st.free >= seq.nodes[jnp.maximum(j, 0)])
    stop = ~empty & ~go
    st = st.replace(
        decisions=st.decisions + (~empty & ~auto).astype(i32),
        chosen=jnp.where(go, st.chosen.at[0].set(j), st.chosen),
        n_chosen=jnp.where(go, 1, st.n_chosen),
        ptr=jnp.where(go, 0, st.ptr),
        resume=jnp.where(go, True, st.resume),
    )  # fmt: skip  (a ready job starts in FLUSH, so the start is compiled once)
    st = _after_stop(seq, params, st, stop, empty, j)
    return st.replace(phase=jnp.where(go, FLUSH, st.phase))


def _after_stop(seq: Sequence, params: CQParams, st: CQState, stop, empty, pick) -> CQState:
    """Level 1 ended by ``pick``, a job that does not fit: reserve the oldest (the paper's
    loop: ``pick``) and choose the next phase."""
    bf = params.backfill
    R = jnp.where(bf == BF_DRAS_PAPER, pick, st.queue_job[0])
    more = stop & (st.n_queued > 1)
    to2 = more & ((bf == BF_EASY) | (bf == BF_DRAS) | (bf == BF_DQL) | (bf == BF_DRAS_PAPER))
    # no persistent reservation: only the class remembers who held it
    dql = (bf == BF_DQL) | (bf == BF_DRAS_PAPER)
    toc = more & (bf == BF_CONS)
    P = st.prof_t.shape[0]
    pt, pa, npf = build_profile(st.t, st.free, st.run_est, st.run_nodes, st.n_running, P)
    dR = _dur(seq, params, jnp.maximum(R, 0))
    i, ok = reserve_search(pt, pa, npf, seq.nodes[jnp.maximum(R, 0)], dR)
    pt2, pa2, np2, full = place(pt, pa, npf, i, pt[i] + dR, seq.nodes[jnp.maximum(R, 0)], to2)
    bad = to2 & ~ok
    st = st.replace(
        reserved=jnp.where(stop & ~dql, R, st.reserved),
        cls=st.cls.at[jnp.maximum(R, 0)].set(
            jnp.where(stop & dql, CLASS_RESERVED, st.cls[jnp.maximum(R, 0)])
        ),
        prof_t=jnp.where(toc, pt, pt2), prof_a=jnp.where(toc, pa, pa2),
        n_prof=jnp.where(toc, npf, np2), n_chosen=jnp.where(to2 | toc, 0, st.n_chosen),
        ptr=jnp.where(toc, 0, st.ptr),
        phase=jnp.where(to2, LEVEL2, jnp.where(toc, CONS, jnp.where(stop | empty, IDLE, LEVEL1))),
        passes=st.passes + ((stop & ~to2 & ~toc) | empty).astype(i32),
        overflow=st.overflow | jnp.where(full, OVER_PROFILE, 0),
        stuck=st.stuck | bad, done=st.done | bad | full,
    )  # fmt: skip
    qi = jnp.arange(st.queue_job.shape[0], dtype=i32)
    fresh = (st.queue_job != R) & (qi < st.n_queued)
    return st.replace(cand=jnp.where(to2, _candidates(seq, params, st, fresh), st.cand))


def _level2(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """Level 2: :func:`_level2_pick`; in the immediate loop the pick starts at once (through
    ``FLUSH`` as a ready job, then back to ``LEVEL1``)."""
    imm = params.backfill == BF_IMMEDIATE
    return jax.lax.cond(imm, _typed(_level2_start), _typed(_level2_pick), seq, params, st, slot)


def _candidate_at(st: CQState, slot):
    """The queue slot (int32) of the candidate at window ``slot`` (clipped to the first
    ``min(W, candidates)``), and whether any candidate is left (bool)."""
    W = _width(st)
    ncand = jnp.sum(st.cand).astype(i32)
    rank = jnp.cumsum(st.cand) - 1
    s = jnp.clip(slot, 0, jnp.clip(jnp.minimum(ncand, W), 1, W) - 1)
    return argmax_bool(st.cand & (rank == s)), ncand > 0


def _level2_start(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """The immediate loop's pick among the first W candidates: it starts now (``FLUSH`` with
    ``resume``, class ready); :func:`_level1_gather` then finds the next candidates."""
    j = st.queue_job[_candidate_at(st, slot)[0]]
    return st.replace(
        chosen=st.chosen.at[0].set(j), n_chosen=jnp.int32(1), ptr=jnp.int32(0),
        resume=jnp.asarray(True), phase=jnp.int32(FLUSH), decisions=st.decisions + 1,
        cand=jnp.zeros_like(st.cand),
    )  # fmt: skip


def _level2_pick(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """One level-2 pick among the first W candidates (none left: go to ``FLUSH``)."""
    q, some = _candidate_at(st, slot)
    j = jnp.maximum(st.queue_job[q], 0)
    d = _dur(seq, params, j)
    pt, pa, npf, full = place(st.prof_t, st.prof_a, st.n_prof, 0, st.t + d, seq.nodes[j], some)
    qi = jnp.arange(st.queue_job.shape[0], dtype=i32)
    st = st.replace(
        prof_t=pt, prof_a=pa, n_prof=npf,
        chosen=jnp.where(some & (qi == st.n_chosen), j, st.chosen),
        n_chosen=st.n_chosen + some.astype(i32),
        ptr=jnp.where(some, st.ptr, 0),
        phase=jnp.where(some, LEVEL2, jnp.where(st.n_chosen > 0, FLUSH, IDLE)).astype(i32),
        passes=st.passes + (~some & (st.n_chosen == 0)).astype(i32),
        decisions=st.decisions + some.astype(i32),
        overflow=st.overflow | jnp.where(full, OVER_PROFILE, 0), done=st.done | full,
    )  # fmt: skip
    return st.replace(cand=_candidates(seq, params, st, st.cand & (qi != q)))


def _cons(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """Conservative backfilling: reserve the waiting job at queue slot ``ptr``; choose it if its
    reservation starts now. After the last job → ``FLUSH``."""
    more = st.ptr < st.n_queued
    j = jnp.maximum(st.queue_job[jnp.minimum(st.ptr, st.queue_job.shape[0] - 1)], 0)
    d, n = _dur(seq, params, j), seq.nodes[j]
    i, ok = reserve_search(st.prof_t, st.prof_a, st.n_prof, n, d)
    t0 = st.prof_t[i]
    pt, pa, npf, full = place(st.prof_t, st.prof_a, st.n_prof, i, t0 + d, n, more & ok)
    now = more & ok & (i == 0)  # it fits now (a reservation at the second point at now does not)
    qi = jnp.arange(st.queue_job.shape[0], dtype=i32)
    bad = more & ~ok
    return st.replace(
        prof_t=pt, prof_a=pa, n_prof=npf,
        chosen=jnp.where(now & (qi == st.n_chosen), j, st.chosen),
        n_chosen=st.n_chosen + now.astype(i32),
        ptr=jnp.where(more, st.ptr + 1, 0),
        phase=jnp.where(more, CONS, jnp.where(st.n_chosen > 0, FLUSH, IDLE)).astype(i32),
        passes=st.passes + (~more & (st.n_chosen == 0)).astype(i32),
        overflow=st.overflow | jnp.where(full, OVER_PROFILE, 0),
        stuck=st.stuck | bad, done=st.done | full | bad,
    )  # fmt: skip


def _flush(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """Start the next chosen job: "ready" (a level-1 pick, ``resume``: back to ``LEVEL1``
    after it), "backfilled", or "reserved" for the reserved job; after the last chosen job
    the pass ends (or level 1 resumes)."""
    more = st.ptr < st.n_chosen
    j = st.chosen[jnp.minimum(st.ptr, st.chosen.shape[0] - 1)]
    base = jnp.where(st.resume, CLASS_READY, CLASS_BACKFILLED)
    held = (j == st.reserved) | (st.cls[jnp.maximum(j, 0)] == CLASS_RESERVED)  # DQL: see types
    cls = jnp.where(held, CLASS_RESERVED, base)
    q = argmax_bool(st.queue_job == j)
    st = _queue_remove(_start_job(seq, st, j, cls, more), q, more)
    last = st.ptr + 1 >= st.n_chosen
    return st.replace(
        ptr=jnp.where(last, 0, st.ptr + 1),
        n_chosen=jnp.where(last, 0, st.n_chosen),
        phase=jnp.where(last, jnp.where(st.resume, LEVEL1, IDLE), FLUSH).astype(i32),
        passes=st.passes + (last & ~st.resume).astype(i32),
        resume=st.resume & ~last,
    )


_PHASES = (_idle, _level1, _level2, _cons, _flush)


def micro_step(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """One micro-step of the current phase (module docstring); ``slot`` (int32 scalar) is used
    only at a decision point (:func:`at_decision`). A finished state is returned unchanged."""
    slot = jnp.asarray(slot, i32)

    new = jax.lax.switch(st.phase, [_typed(f) for f in _PHASES], seq, params, st, slot)
    new = new.replace(steps=st.steps + 1)
    return jax.tree_util.tree_map(lambda a, b: jnp.where(st.done, a, b), st, new)


def at_decision(st: CQState, params: CQParams) -> chex.Array:
    """bool: the next micro-step takes a level-1 or level-2 decision (the slot matters; the
    immediate loop's level 1 decides nothing)."""
    l1 = (st.phase == LEVEL1) & (st.n_queued > 0) & ~_head_auto(st)
    l1 = l1 & (params.backfill != BF_IMMEDIATE)
    return ~st.done & (l1 | ((st.phase == LEVEL2) & jnp.any(st.cand)))


def window(st: CQState, W: int = WINDOW):
    """The decision window: int32 ``[W]`` job indices (-1 = empty slot) and their count.

    Level 1: the first ``W`` waiting jobs; level 2: the first ``W`` candidates (both in
    submission order). Empty outside a decision point."""
    Q = st.queue_job.shape[0]
    qi = jnp.arange(Q, dtype=i32)
    l2 = st.phase == LEVEL2
    sel = jnp.where(l2, st.cand, (st.phase == LEVEL1) & (qi < st.n_queued))
    rank = jnp.where(sel, jnp.cumsum(sel) - 1, W)
    win = jnp.full((W,), -1, i32).at[rank].set(st.queue_job, mode="drop")
    return win, jnp.minimum(jnp.sum(sel), W).astype(i32)


def fixed_choice(seq: Sequence, params: CQParams, st: CQState, W: int = WINDOW) -> chex.Array:
    """The slot of the fixed policy ``params.policy``: 0, fewest or most nodes (lowest slot on
    ties) among the window (:func:`window`)."""
    win, _ = window(st, W)
    n = jnp.where(win >= 0, seq.nodes[jnp.maximum(win, 0)], 0).astype(i64)
    key = jnp.where(params.policy == POL_SMALLEST, n, -n)
    key = jnp.where(win >= 0, key, jnp.iinfo(jnp.int64).max)
    return jnp.where(
        (params.policy == POL_SMALLEST) | (params.policy == POL_LARGEST), argmin(key), 0
    )


def advance_to_decision(seq: Sequence, params: CQParams, st: CQState) -> CQState:
    """Micro-steps until the next decision point or the end of the run."""
    return jax.lax.while_loop(
        lambda s: ~s.done & ~at_decision(s, params), lambda s: micro_step(seq, params, s, 0), st
    )


def decide(seq: Sequence, params: CQParams, st: CQState, slot) -> CQState:
    """Take the decision ``slot`` (window slot) at a decision point, then advance to the next
    decision point (or the end). Away from a decision point the slot is unused (this is then
    :func:`advance_to_decision`). One loop, so the micro-step is compiled once."""
    slot = jnp.asarray(slot, i32)

    def body(c):
        s, first = c
        return micro_step(seq, params, s, jnp.where(first, slot, 0)), jnp.asarray(False)

    def cond(c):
        return ~c[0].done & (c[1] | ~at_decision(c[0], params))

    return jax.lax.while_loop(cond, body, (st, at_decision(st, params)))[0]


def start_episode(seq: Sequence, params: CQParams, st: CQState) -> CQState:
    """From :func:`reset`'s state, the first event (job 0 is submitted): the state is then at
    the first level-1 decision (the immediate loop: its level 1 gathers the candidates, job 0
    among them, and the state is at the first level-2 decision). Only these phases are
    compiled (cheaper than :func:`advance_to_decision`, which it equals here)."""
    st1 = _idle(seq, params, st, jnp.asarray(0, i32))
    imm = params.backfill == BF_IMMEDIATE
    keep = lambda q, p, s, x: s  # noqa: E731
    st2 = jax.lax.cond(imm, _typed(_level1_gather), keep, seq, params, st1, 0)
    return st2.replace(steps=st.steps + 1 + imm.astype(st.steps.dtype))


def run_fixed(seq: Sequence, params: CQParams, st: CQState, max_steps: int = 2**31 - 2) -> CQState:
    """Run to the end with the fixed policy of ``params`` at every decision (one while loop);
    a run not done after ``max_steps`` micro-steps is flagged ``stuck``."""

    def body(s):
        return micro_step(seq, params, s, fixed_choice(seq, params, s))

    out = jax.lax.while_loop(lambda s: ~s.done & (s.steps < max_steps), body, st)
    return out.replace(stuck=out.stuck | ~out.done)
