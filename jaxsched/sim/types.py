"""The engine's pytrees and constants: :class:`Sequence` (the workload of one episode),
:class:`SimParams` (per-run semantics), :class:`SimState` (the general micro-step state) and
:class:`NoBackfillState` (the state of the no-backfilling heuristic fast path).

Shapes: ``L`` jobs per sequence (padded; ``n_jobs`` valid), ``Q`` queue slots, ``R`` running
slots, ``W = ceil(L / 64)`` bitmask words. Times are int64 seconds (absolute trace time).
"""

from __future__ import annotations

import chex
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
    "BACKFILLS",
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

#: Backfilling codes.
BACKFILL_NONE, BACKFILL_RLSCHEDULER, BACKFILL_EASY = 0, 1, 2
BACKFILLS = ("none", "rlscheduler", "easy")

#: ``overflow`` bit of runs stopped unfinished because most of their batch overflowed
ABORTED = 4


def backfill_code(name: str) -> int:
    """``"none"|"rlscheduler"|"easy"`` (also ``"greedy"`` for rlscheduler) → int code."""
    key = {"greedy": "rlscheduler", "off": "none", "no": "none"}.get(
        name.strip().lower(), name.strip().lower()
    )
    if key not in BACKFILLS:
        raise ConfigError(f"unknown backfill mode {name!r}; choose from {', '.join(BACKFILLS)}")
    return BACKFILLS.index(key)


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
    """The simulator state of one sequence.

    Attributes:
      t: int64 clock. free: int32 free nodes. next: int32 index of the next job to arrive.
      q_job: int32 ``[Q]`` job index per queue slot, -1 = empty; q_k (int32 nodes), q_req
        (int32 requested time, clamped to 2^31-1), q_s (int64 submit), q_rank (int32 policy
        rank), q_b (the reference's backfill scan key of a job that arrived before the
        commit: ``g * L + rank`` with g the first index of its submit time; int32 for
        L <= 46340, else int64): copies of the waiting job's attributes, so a step reads
        contiguous slots instead of gathering. g_arr: int32 g of the newest arrival.
        n_q: int32 number of waiting jobs.
      r_job: int32 ``[R]`` job index per running slot; the ``n_r`` running jobs form a prefix
        sorted by estimated finish ``r_e`` (so reservations are a cumulative sum);
        r_f / r_e: int64 actual and estimated finish; r_k: int32 nodes; r_flag: bool, present
        at a reservation sort (reference list-order emulation, spec §2.8.4); r_cnt: int32 start
        order; r_cum: int32 running sum of ``r_k`` over the sorted prefix (kept up to date on
        insert and release, so a reservation needs no prefix sum).
      cj: int32 committed job (-1 none); cslot: its queue slot; shadow: int64 reservation time;
        nac: int32 ``next`` when the job was committed (jobs ≥ nac arrived "late", §2.8.2).
      cnt: int32 jobs started so far. start: int64 ``[L]`` start times (-1 = not started).
      prank: int32 ``[L]`` the policy's static rank of each job (decision and backfill order).
      done, stuck: bool flags; overflow: int32, bit 0 = queue full, bit 1 = running list full.
      decisions, steps: int32 counters.
    """

    t: chex.Array
    free: chex.Array
    next: chex.Array
    q_job: chex.Array
    q_k: chex.Array
    q_req: chex.Array
    q_s: chex.Array
    q_rank: chex.Array
    q_b: chex.Array
    g_arr: chex.Array
    n_q: chex.Array
    r_job: chex.Array
    r_f: chex.Array
    r_e: chex.Array
    r_k: chex.Array
    r_flag: chex.Array
    r_cnt: chex.Array
    r_cum: chex.Array
    n_r: chex.Array
    cj: chex.Array
    cslot: chex.Array
    shadow: chex.Array
    nac: chex.Array
    cnt: chex.Array
    start: chex.Array
    prank: chex.Array
    done: chex.Array
    overflow: chex.Array
    stuck: chex.Array
    decisions: chex.Array
    steps: chex.Array


@struct.dataclass
class NoBackfillState:
    """State of :func:`jaxsched.sim.nobf.run_static_nobf`: the waiting set is a bitmask in
    *rank* space (bit r of ``wait`` is set while the job of policy rank r waits), so a decision
    is "lowest set bit" — O(L/64) work however long the queue is.

    Attributes:
      t: int64 clock; free: int32; next: int32; n_q: int32 waiting jobs; cj: int32 committed job.
      wait: uint64 ``[ceil(L/64)]`` bitmask; r_f: int64 ``[R]`` actual finish of running slot;
      r_k: int32 ``[R]`` nodes (0 = empty slot); r_cnt: int32 ``[R]`` start order;
      cnt: int32; start: int64 ``[L]``; done, stuck: bool; overflow: int32 (bit 1 = running
      list full); decisions, steps: int32.
    """

    t: chex.Array
    free: chex.Array
    next: chex.Array
    n_q: chex.Array
    cj: chex.Array
    wait: chex.Array
    r_f: chex.Array
    r_k: chex.Array
    r_cnt: chex.Array
    cnt: chex.Array
    start: chex.Array
    done: chex.Array
    stuck: chex.Array
    overflow: chex.Array
    decisions: chex.Array
    steps: chex.Array
