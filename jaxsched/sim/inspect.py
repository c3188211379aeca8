"""SchedInspector's engine primitives (spec ``schedinspector.md`` §3.3, §3.6, §8.3): the
rejection transition, the per-job rejection counters, the base scheduler's own run and the
sequence values of a finished schedule.

An *accept* is the engine's ordinary decision (:func:`jaxsched.sim.engine.schedule`, or its
fast paths :func:`jaxsched.sim.nobf.schedule_nobf` /
:func:`jaxsched.sim.batching.schedule_engine`); a *reject* is :func:`reject`: the proposed
job stays queued and time moves on by one event or :data:`SKIP_TIME` seconds, whichever comes
first. Shapes as in :mod:`jaxsched.sim.types` (``L`` jobs, ``Q`` queue, ``R`` running slots).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from jaxsched.sim import engine as E
from jaxsched.sim.metrics import per_job_bsld
from jaxsched.sim.primitives import advance_one
from jaxsched.sim.types import BIG, Sequence, SimParams, SimState

__all__ = [
    "SKIP_TIME",
    "MAX_REJECTIONS",
    "REJECT_FROZEN",
    "REJECT_WAIT",
    "REJECT_EVENT",
    "reject_kind",
    "reject",
    "count_rejection",
    "base_run",
    "sequence_values",
    "VALUES",
]

#: MAX_INTERVAL = SKIP_TIME: the longest a rejection moves the clock without an event (s)
SKIP_TIME = 600
#: MAX_REJECTION_TIMES: rejections after which evaluation forbids rejecting a job again
MAX_REJECTIONS = 72
#: what a rejection did (:func:`reject_kind`)
REJECT_FROZEN, REJECT_WAIT, REJECT_EVENT = 0, 1, 2
#: the sequence values of :func:`sequence_values`
VALUES: tuple[str, ...] = ("bsld", "wait", "util", "mbsld")


def reject_kind(seq: Sequence, st: SimState, s_after) -> chex.Array:
    """What a rejection in ``st`` does (int32): :data:`REJECT_FROZEN` (no arrival left in the
    sequence and nothing running: nothing changes), :data:`REJECT_WAIT` (the clock moves
    ``SKIP_TIME`` on: ``t + 600`` comes strictly before the next arrival and the earliest
    actual finish) or :data:`REJECT_EVENT` (one event, as ``advance_one``).

    ``s_after``: int64, what stands for the next submit time once every sequence job has
    arrived: the submit time of the trace job right after the sequence reproduces the
    reference (spec §3.3's quirk); :data:`~jaxsched.sim.types.BIG` gives the intended rule.
    """
    rv = jnp.arange(st.run_job.shape[0], dtype=jnp.int32) < st.n_running
    fmin = jnp.min(jnp.where(rv, st.run_finish, BIG))
    more = st.next < seq.n_jobs
    s_seq = seq.submit[jnp.minimum(st.next, seq.submit.shape[0] - 1)]
    s_next = jnp.where(more, s_seq, jnp.asarray(s_after, jnp.int64))
    frozen = ~more & (st.n_running == 0)
    wait = st.t + SKIP_TIME < jnp.minimum(s_next, fmin)
    return jnp.where(frozen, REJECT_FROZEN, jnp.where(wait, REJECT_WAIT, REJECT_EVENT)).astype(
        jnp.int32
    )


def reject(seq: Sequence, params: SimParams, st: SimState, s_after) -> SimState:
    """The rejection transition (spec §3.3) of a state at a scheduling point: no job starts;
    the clock waits ``SKIP_TIME`` s or one event happens (:func:`reject_kind`). The queue and
    running-list layouts of the no-backfill fast path are kept. A finished state is returned
    unchanged. ``s_after`` as in :func:`reject_kind`."""
    kind = reject_kind(seq, st, s_after)
    moved = advance_one(seq, params, st)
    waited = st.replace(t=st.t + SKIP_TIME)
    out = jax.tree_util.tree_map(lambda a, b: jnp.where(kind == REJECT_EVENT, a, b), moved, waited)
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where((kind == REJECT_FROZEN) | st.done, b, a), out, st
    )


def count_rejection(counts: chex.Array, job, enabled) -> chex.Array:
    """Per-job rejection counters (int32 ``[L]``) after rejecting sequence job ``job`` where
    ``enabled`` (bool scalar). The counter belongs to the job, not to its queue slot."""
    return counts.at[job].add(jnp.asarray(enabled, jnp.int32))


def base_run(seq: Sequence, params: SimParams, prank, queue_cap: int, run_cap: int) -> SimState:
    """The base scheduler alone on ``seq`` (spec §3.1): every decision takes the waiting job of
    smallest ``prank`` (int32 ``[L]``, the base's window rank), with ``params.backfill``; the
    backfill scan follows the heuristic-run rule (RLS §2.8.2) in compat mode. Returns the
    final :class:`SimState` (``start`` filled, ``t`` = the last start)."""
    st = E.reset(seq, prank, queue_cap, run_cap)
    return E.run_heuristic(seq, params.replace(policy=jnp.asarray(0, jnp.int32)), st, False)


def sequence_values(seq: Sequence, start, t_end, num_procs) -> dict:
    """The sequence values of a finished schedule (float64 scalars, all ``L`` jobs valid):
    ``bsld`` mean bounded slowdown (10 s bound), ``wait`` mean wait, ``util`` the reference's
    Σ r·n / ((end − s_0) · P) with end = max(t_end, latest actual finish) (spec §8.3),
    ``mbsld`` the largest per-job bounded slowdown (paper mode's metric).

    Args:
      start: int64 ``[L]`` start times; t_end: int64 clock when the episode ended;
      num_procs: P (float).
    """
    w = (start - seq.submit).astype(jnp.float64)
    bsld = per_job_bsld(seq.submit, seq.run, start)
    work = jnp.sum(seq.run.astype(jnp.float64) * seq.procs.astype(jnp.float64))
    end = jnp.maximum(t_end, jnp.max(start + seq.run))
    util = work / ((end - seq.submit[0]).astype(jnp.float64) * num_procs)
    return {"bsld": jnp.mean(bsld), "wait": jnp.mean(w), "util": util, "mbsld": jnp.max(bsld)}
