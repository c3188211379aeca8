"""The engine's pytrees and constants: :class:`Sequence` (the workload of one episode),
:class:`SimParams` (per-run semantics), :class:`SimState` (the general micro-step state) and
:class:`NoBackfillState` (the state of the no-backfilling heuristic fast path).

Shapes: ``L`` jobs per sequence (padded; ``n_jobs`` valid), ``Q`` queue slots, ``R`` running
slots, ``W = ceil(L / 64)`` bitmask words. Times are int64 seconds (absolute trace time).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxsched.errors import ConfigError

__all__ = [
    "BIG",
    "IMAX",
    "I32MIN",
    "I32MAX",
    "BACKFILL_NONE",
    "BACKFILL_RLSCHEDULER",
    "BACKFILL_EASY",
    "BACKFILL_RLSCHEDULER_SJBF",
    "BACKFILL_EASY_SJBF",
    "BACKFILLS",
    "is_easy",
    "is_sjbf",
    "ABORTED",
    "backfill_code",
    "key_dtype",
    "Sequence",
    "SimParams",
    "SimState",
    "NoBackfillState",
]

BIG = jnp.iinfo(jnp.int64).max // 4  # "infinite" time
IMAX = jnp.iinfo(jnp.int64).max  # argmin sentinel for composite keys
I32MIN, I32MAX = -(2**31), 2**31 - 1

#: Backfilling codes. The ``-sjbf`` modes are the same backfilling with the candidates scanned
#: shortest requested time first (ties in the mode's own scan order) instead of queue order
#: (docs/baselines.md).
BACKFILL_NONE, BACKFILL_RLSCHEDULER, BACKFILL_EASY = 0, 1, 2
BACKFILL_RLSCHEDULER_SJBF, BACKFILL_EASY_SJBF = 3, 4
BACKFILLS = ("none", "rlscheduler", "easy", "rlscheduler-sjbf", "easy-sjbf")
_BACKFILL_ALIASES = {
    "greedy": "rlscheduler",
    "off": "none",
    "no": "none",
    "greedy-sjbf": "rlscheduler-sjbf",
    "sjbf": "easy-sjbf",
}

#: ``overflow`` bit of runs stopped unfinished because most of their batch overflowed
ABORTED = 4


def backfill_code(name: str) -> int:
    """A name of :data:`BACKFILLS` (also ``"greedy"`` for rlscheduler, ``"greedy-sjbf"``,
    ``"sjbf"`` for easy-sjbf) → int code."""
    key = name.strip().lower()
    key = _BACKFILL_ALIASES.get(key, key)
    if key not in BACKFILLS:
        raise ConfigError(f"unknown backfill mode {name!r}; choose from {', '.join(BACKFILLS)}")
    return BACKFILLS.index(key)


def is_easy(code):
    """True (bool, traced or Python) for the EASY codes (with or without SJBF)."""
    return (code == BACKFILL_EASY) | (code == BACKFILL_EASY_SJBF)


def is_sjbf(code):
    """True for the codes that scan backfill candidates shortest requested time first."""
    return (code == BACKFILL_RLSCHEDULER_SJBF) | (code == BACKFILL_EASY_SJBF)


def key_dtype(L: int):
    """Integer type of the backfill scan keys (``L*L + L`` must fit)."""
    return jnp.int32 if L * L + 2 * L < 2**31 else jnp.int64


@struct.dataclass
class Sequence:
    """One job sequence (an episode's workload). All arrays ``[L]``, in trace order.

    Attributes:
      submit, run, req, procs: int64 absolute submit time, actual and requested run time,
        requested processors (after the parse rules).
      nodes: int32 whole nodes a job occupies, ``ceil(procs / procs_per_node)``.
      n_jobs: int32 scalar, number of valid jobs (the rest is padding).
      num_nodes: int32 scalar, nodes of the machine.
      log2n: optional float64 ``[L]`` ``log2(procs + 1e-15)`` computed on the host with libm
        (:func:`jaxsched.policies.heuristics.host_log2n`); only the correct-mode UNICEP key
        reads it, and without it the device's log2 may break exact ties differently.
    """

    submit: chex.Array
    run: chex.Array
    req: chex.Array
    procs: chex.Array
    nodes: chex.Array
    n_jobs: chex.Array
    num_nodes: chex.Array
    log2n: chex.Array = None


def sequence_window(data, start, length: int, num_nodes: int) -> Sequence:
    """The :class:`Sequence` of jobs ``start .. start+length-1`` of a whole trace's arrays.

    ``data`` has int64 ``[U]`` fields ``submit``, ``run``, ``req``, ``procs`` and int32 ``nodes``
    (an environment's trace data); ``start`` is an int32 scalar (may be traced), ``length`` and
    ``num_nodes`` Python ints."""
    cut = lambda a: jax.lax.dynamic_slice_in_dim(a, start, length)  # noqa: E731
    return Sequence(
        submit=cut(data.submit),
        run=cut(data.run),
        req=cut(data.req),
        procs=cut(data.procs),
        nodes=cut(data.nodes),
        n_jobs=jnp.asarray(length, jnp.int32),
        num_nodes=jnp.asarray(num_nodes, jnp.int32),
    )


@struct.dataclass
class SimParams:
    """Per-run semantics; every field is a traced scalar so runs can be vmapped over it.

    Attributes:
      policy: int32 heuristic code (:mod:`jaxsched.policies.heuristics`), used by
        :func:`jaxsched.sim.engine.heuristic_choice` and for the backfill scan order in compat
        mode.
      backfill: int32 backfill code (``BACKFILL_*``).
      compat: bool, True = reference SchedGym semantics, False = the correct default mode.
    """

    policy: chex.Array
    backfill: chex.Array
    compat: chex.Array


@struct.dataclass
class SimState:
    """The simulator state of one sequence (``Q`` queue slots, ``R`` running slots, ``L`` jobs).

    Attributes:
      t: int64 clock. free: int32 free nodes. next: int32 index of the next job to arrive.
      queue_job: int32 ``[Q]`` job index per queue slot, -1 = empty. Copies of the waiting
        job's attributes, so a step reads contiguous slots instead of gathering:
        queue_nodes (int32 ``[Q]`` nodes), queue_req (int32 ``[Q]`` requested time, clamped
        to 2^31-1), queue_submit (int64 ``[Q]`` submit time), queue_rank (int32 ``[Q]``
        policy rank), queue_bf_key (``[Q]`` the reference's backfill scan key of a job that
        arrived before the commit: ``g * L + rank`` with g the first index of its submit
        time; int32 for L <= 46340, else int64).
      arrival_group: int32 g of the newest arrival. n_queued: int32 number of waiting jobs.
      run_job: int32 ``[R]`` job index per running slot; the ``n_running`` (int32) running
        jobs form a prefix sorted by estimated finish ``run_est_finish`` (so reservations are
        a cumulative sum). run_finish / run_est_finish: int64 ``[R]`` actual and estimated
        finish; run_nodes: int32 ``[R]`` nodes; run_sort_flag: bool ``[R]``, present at a
        reservation sort (reference list-order emulation, spec §2.8.4); run_order: int32
        ``[R]`` start order (``n_started`` when it started); run_cum_nodes: int32 ``[R]``
        running sum of ``run_nodes`` over the sorted prefix (kept up to date on insert and
        release, so a reservation needs no prefix sum).
      committed_job: int32 committed job (-1 none); committed_slot: int32 its queue slot;
        shadow_time: int64 its reservation time; next_at_commit: int32 ``next`` when it was
        committed (jobs ≥ next_at_commit arrived "late", §2.8.2).
      n_started: int32 jobs started so far. start: int64 ``[L]`` start times (-1 = not
        started). policy_rank: int32 ``[L]`` the policy's static rank of each job (decision
        and backfill order).
      done, stuck: bool flags; overflow: int32, bit 0 = queue full, bit 1 = running list full.
      decisions, steps: int32 counters.
    """

    t: chex.Array
    free: chex.Array
    next: chex.Array
    queue_job: chex.Array
    queue_nodes: chex.Array
    queue_req: chex.Array
    queue_submit: chex.Array
    queue_rank: chex.Array
    queue_bf_key: chex.Array
    arrival_group: chex.Array
    n_queued: chex.Array
    run_job: chex.Array
    run_finish: chex.Array
    run_est_finish: chex.Array
    run_nodes: chex.Array
    run_sort_flag: chex.Array
    run_order: chex.Array
    run_cum_nodes: chex.Array
    n_running: chex.Array
    committed_job: chex.Array
    committed_slot: chex.Array
    shadow_time: chex.Array
    next_at_commit: chex.Array
    n_started: chex.Array
    start: chex.Array
    policy_rank: chex.Array
    done: chex.Array
    overflow: chex.Array
    stuck: chex.Array
    decisions: chex.Array
    steps: chex.Array


@struct.dataclass
class NoBackfillState:
    """State of :func:`jaxsched.sim.nobf.run_static_nobf`: the waiting set is a bitmask in
    *rank* space (bit r of ``waiting_bits`` is set while the job of policy rank r waits), so a
    decision is "lowest set bit" — O(L/64) work however long the queue is.

    Attributes:
      t: int64 clock; free: int32 free nodes; next: int32 next job to arrive; n_queued: int32
      waiting jobs; committed_job: int32 (-1 none). waiting_bits: uint64 ``[ceil(L/64)]``
      bitmask; run_finish: int64 ``[R]`` actual finish of running slot; run_nodes: int32
      ``[R]`` nodes (0 = empty slot); run_order: int32 ``[R]`` start order; n_started: int32;
      start: int64 ``[L]`` start times; done, stuck: bool; overflow: int32 (bit 1 = running
      list full); decisions, steps: int32.
    """

    t: chex.Array
    free: chex.Array
    next: chex.Array
    n_queued: chex.Array
    committed_job: chex.Array
    waiting_bits: chex.Array
    run_finish: chex.Array
    run_nodes: chex.Array
    run_order: chex.Array
    n_started: chex.Array
    start: chex.Array
    done: chex.Array
    stuck: chex.Array
    overflow: chex.Array
    decisions: chex.Array
    steps: chex.Array
