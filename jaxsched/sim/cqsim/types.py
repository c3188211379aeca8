"""The pytrees and constants of the CQSim engine mode (spec dras.md §2, reference README).

Shapes: ``L`` jobs of the sequence (padded, ``n_jobs`` valid), ``N`` nodes, ``Q`` queue slots,
``R`` running slots, ``P`` profile points (``R + Q + 2``), ``W`` the DRAS window (50). Times
are int64 seconds; jobs are the :class:`~jaxsched.sim.types.Sequence` of the engine (``nodes``
= requested processors, one processor per node).
"""

from __future__ import annotations

import chex
import jax.numpy as jnp
from flax import struct

from jaxsched.errors import ConfigError

__all__ = [
    "MODES",
    "BF_NONE",
    "BF_EASY",
    "BF_CONS",
    "BF_DRAS",
    "BF_DQL",
    "BF_DRAS_PAPER",
    "BF_IMMEDIATE",
    "POL_FIRST",
    "POL_SMALLEST",
    "POL_LARGEST",
    "POLICIES",
    "RT_CODE",
    "RT_PAPER",
    "IDLE",
    "LEVEL1",
    "LEVEL2",
    "CONS",
    "FLUSH",
    "CLASS_BACKFILLED",
    "CLASS_READY",
    "CLASS_RESERVED",
    "OVER_QUEUE",
    "OVER_RUNNING",
    "OVER_PROFILE",
    "CQParams",
    "CQState",
    "cq_params",
]

#: CQSim backfill modes (``backfill`` of the reference files): 0 none, 1 EASY, 2 conservative,
#: 3 the DRAS-PG level-2 loop; 4 the DRAS-DQL loop (spec §2.6: as 3, but the reservation is
#: not persistent — level 1 is never skipped — and the job that held it is only remembered for
#: its class, as ``cls`` = ``CLASS_RESERVED`` while it still waits); 5 the paper's DRAS loop
#: (spec §2.4, §12: as 4, but the reservation goes to the level-1 pick that did not fit, not
#: to the oldest job; with ``RT_PAPER`` it is the oracle's ``paper=True``); 6 the immediate loop
#: of the Decima-PG baseline (spec §8: no reservation, no backfilling; every decision is over
#: the waiting jobs among the first W that fit now, and the pick starts at once).
BF_NONE, BF_EASY, BF_CONS, BF_DRAS, BF_DQL, BF_DRAS_PAPER, BF_IMMEDIATE = 0, 1, 2, 3, 4, 5, 6
#: Fixed level-1/level-2 policies: window slot 0, fewest nodes, most nodes (lowest slot on ties).
POL_FIRST, POL_SMALLEST, POL_LARGEST = 0, 1, 2
POLICIES = ("fcfs", "smallest", "largest")
#: Runtime source of waiting jobs: the actual run time (code) or the estimate (paper).
RT_CODE, RT_PAPER = 0, 1
#: The reference files' ``mode`` names → (backfill, policy); ``paper-*``: the same fixed
#: policies in the paper's DRAS loop (not in the reference files).
MODES = {
    "none": (BF_NONE, POL_FIRST),
    "easy": (BF_EASY, POL_FIRST),
    "cons": (BF_CONS, POL_FIRST),
    "dras-fcfs": (BF_DRAS, POL_FIRST),
    "dras-smallest": (BF_DRAS, POL_SMALLEST),
    "dras-largest": (BF_DRAS, POL_LARGEST),
    "paper-fcfs": (BF_DRAS_PAPER, POL_FIRST),
    "paper-smallest": (BF_DRAS_PAPER, POL_SMALLEST),
    "paper-largest": (BF_DRAS_PAPER, POL_LARGEST),
}
#: Phases of a scheduling pass: IDLE (the next event comes), LEVEL1 (start from the queue /
#: level-1 decisions), LEVEL2 (backfill candidates / level-2 decisions), CONS (conservative
#: reservations, one job per micro-step), FLUSH (start the jobs chosen in LEVEL1/LEVEL2/CONS).
IDLE, LEVEL1, LEVEL2, CONS, FLUSH = 0, 1, 2, 3, 4
#: Job classes (spec §10): started by backfilling, ready (level 1), ever held the reservation.
CLASS_BACKFILLED, CLASS_READY, CLASS_RESERVED = 0, 1, 2
#: ``overflow`` bits: the queue, the running list or the profile was too small (re-run larger).
OVER_QUEUE, OVER_RUNNING, OVER_PROFILE = 1, 2, 4


@struct.dataclass
class CQParams:
    """Per-run semantics (traced int32 scalars, vmappable).

    Attributes:
      backfill: ``BF_*``; policy: ``POL_*`` (the fixed policy of :func:`run_fixed`, also the
      queue order of modes 0–2, where only ``POL_FIRST`` is CQSim's); runtime: ``RT_*``.
    """

    backfill: chex.Array
    policy: chex.Array
    runtime: chex.Array


def cq_params(mode: str = "easy", runtime: str = "code") -> CQParams:
    """:class:`CQParams` for a reference ``mode`` name (:data:`MODES`) and a runtime source
    (``"code"`` or ``"paper"``); :class:`~jaxsched.errors.ConfigError` for unknown names."""
    if mode not in MODES:
        raise ConfigError(f"unknown CQSim mode {mode!r}; choose from {', '.join(MODES)}")
    if runtime not in ("code", "paper"):
        raise ConfigError(f"unknown runtime source {runtime!r}; choose code or paper")
    bf, pol = MODES[mode]
    i32 = lambda v: jnp.asarray(v, jnp.int32)  # noqa: E731
    return CQParams(backfill=i32(bf), policy=i32(pol), runtime=i32(runtime == "paper"))


@struct.dataclass
class CQState:
    """The CQSim-mode state of one sequence.

    Attributes:
      t: int64 clock; phase: int32 (``IDLE`` ... ``FLUSH``); next: int32 next job to submit;
      free: int32 free nodes.
      queue_job: int32 ``[Q]`` waiting jobs in submission order (a prefix of ``n_queued``,
        -1 after it).
      run_job, run_nodes, run_order: int32 ``[R]``; run_finish, run_est: int64 ``[R]``: the
        running jobs as a prefix of ``n_running`` slots sorted by estimated end (start + t;
        equal ends in start order); ``run_order`` is the start sequence number.
      node_owner: int32 ``[N]`` job on each node (-1 free); node_end: int64 ``[N]`` its
        estimated end (first-fit by node index, spec §2.2).
      prof_t: int64 ``[P]``, prof_a: int32 ``[P]``: the availability profile of this pass
        (``n_prof`` points, sorted by time; padding has time ``BIG``).
      cand: bool ``[Q]`` the queue slots that are level-2 candidates now.
      chosen: int32 ``[Q]`` jobs chosen in LEVEL2/CONS, in order (``n_chosen``); ``ptr``:
        int32 the next queue slot (CONS) or chosen entry (FLUSH); resume: bool, the chosen job
        is a level-1 pick (class ready) and level 1 goes on after it.
      reserved: int32 the job holding the persistent reservation (-1 none).
      start: int64 ``[L]`` start times (-1 not started); cls: int32 ``[L]`` job class
        (``CLASS_*``, -1 not started; ``BF_DQL``, ``BF_DRAS_PAPER``: ``CLASS_RESERVED`` also
        for a waiting job that held the reservation); priority: int32 ``[L]`` the priority flag (spec §3).
      n_started, passes, decisions, steps: int32 counters (``passes``: scheduling passes run,
        one per event). done, stuck: bool; overflow: int32 ``OVER_*`` bits.
    """

    t: chex.Array
    phase: chex.Array
    next: chex.Array
    free: chex.Array
    queue_job: chex.Array
    n_queued: chex.Array
    run_job: chex.Array
    run_nodes: chex.Array
    run_order: chex.Array
    run_finish: chex.Array
    run_est: chex.Array
    n_running: chex.Array
    node_owner: chex.Array
    node_end: chex.Array
    prof_t: chex.Array
    prof_a: chex.Array
    n_prof: chex.Array
    cand: chex.Array
    chosen: chex.Array
    n_chosen: chex.Array
    ptr: chex.Array
    resume: chex.Array
    reserved: chex.Array
    start: chex.Array
    cls: chex.Array
    priority: chex.Array
    n_started: chex.Array
    passes: chex.Array
    decisions: chex.Array
    steps: chex.Array
    done: chex.Array
    stuck: chex.Array
    overflow: chex.Array
