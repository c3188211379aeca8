"""Real-trace jobsets for A2cScheduler's data-centre cluster: consecutive slices of an SWF
trace that records memory, discretised into the slot grid (spec §9: the paper's 60-job
academic trace is not public; this is its stated substitute, issue 18's Table 4).

The mapping (every choice a parameter; host-side numpy):

* **usable jobs**: run time > 0, processors > 0 (allocated, else requested) and a memory
  figure > 0 (used memory per processor, field 7, else requested, field 10), in trace order;
  the trace is cut into consecutive slices of ``jobs`` usable jobs;
* **time step** = ``unit`` seconds: a job's length is ``ceil(run / unit)`` clipped to
  ``[1, max_len]`` (longer jobs are cut to ``max_len``; counted in ``capped``), its arrival
  step ``floor((submit − slice's first submit) / unit)``; the cluster takes at most one
  arrival per step (DeepRM's jobsets), so a job whose step is taken moves to the next free
  one (counted in ``delayed``, with the steps added); a slice whose arrivals then need more
  than ``steps`` steps is dropped (counted in ``dropped``: the jobsets share one length);
* **CPU** demand ``ceil(R · procs / P)`` and **memory** demand ``ceil(R · procs · mem / (P ·
  M))``, both clipped to ``[1, R]``: the job's share of the machine's processors and of its
  memory, in ``R`` slots each; ``P`` the machine's processors (``MaxProcs``), ``M`` the memory
  of one processor (default: the largest per-processor memory request in the trace, else
  the largest use).

LANL-CM5 (1,024 processors of 32 MB: ``M`` = 32,768 KB; median run time 509 s, mean
inter-arrival 565 s) fits the paper's "small runtimes" with ``unit`` = 600 s: median length
1, 90 % of jobs at most 14 steps. Its jobs come in bursts (many submitted within seconds), so
most arrivals are moved (90 % of jobs, by 16 steps on average): a slice's 60 jobs arrive
over about 60 steps, one per step, in trace order; 1,893 of its 2,034 slices fit in 120 steps.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxsched.errors import ConfigError

__all__ = ["TraceSlices", "trace_slices"]


@dataclasses.dataclass(frozen=True)
class TraceSlices:
    """``lens`` int32 ``[K, S]`` (0: no arrival at that step), ``dems`` int32 ``[K, S, 2]``
    (CPU, memory) for ``K`` slices of ``S`` steps; ``first_line`` int64 ``[K]`` (the SWF line
    of each slice's first job); ``capped`` (jobs cut to ``max_len``), ``delayed`` (jobs moved
    to a later step) and ``delay_steps`` (steps added) over the slices kept, ``dropped``
    (slices longer than ``S`` steps)."""

    lens: np.ndarray
    dems: np.ndarray
    first_line: np.ndarray
    capped: int
    delayed: int
    delay_steps: int
    dropped: int

    @property
    def num_slices(self) -> int:
        return int(self.lens.shape[0])

    @property
    def steps(self) -> int:
        return int(self.lens.shape[1])

    def summary(self) -> str:
        """One line: slices, jobs per slice, what the cut changed, the demands' spread."""
        jobs = self.lens > 0
        cpu1, mem1 = (float(np.mean(self.dems[..., r][jobs] == 1)) for r in (0, 1))
        n = int(np.sum(jobs))
        return (
            f"{self.num_slices:,} slices of {n // max(self.num_slices, 1)} jobs in {self.steps} "
            f"steps ({self.dropped:,} longer slices dropped); {self.capped:,} of {n:,} jobs cut "
            f"to the length bound, {self.delayed:,} moved to a later step (by "
            f"{self.delay_steps / max(self.delayed, 1):.1f} steps on average); CPU demand 1 "
            f"slot for {100 * cpu1:.0f} % of the jobs, memory 1 slot for {100 * mem1:.0f} %"
        )

    def select(self, index) -> TraceSlices:
        """The slices ``index`` (a slice or an index array); the counts are kept."""
        return dataclasses.replace(self, lens=self.lens[index], dems=self.dems[index],
                                   first_line=self.first_line[index])  # fmt: skip


def _memory_per_proc(trace) -> float:
    req = np.asarray(trace.req_mem, np.float64)
    used = np.asarray(trace.used_mem, np.float64)
    m = req.max() if np.any(req > 0) else used.max()
    if m <= 0:
        raise ConfigError(f"{trace.path}: no memory recorded (fields 7 and 10 are all -1)")
    return float(m)


def trace_slices(trace, *, jobs: int = 60, unit: int = 600, res_slot: int = 10,
                 max_len: int = 15, steps: int = 120,
                 mem_per_proc: float | None = None) -> TraceSlices:  # fmt: skip
    """Cut a :class:`jaxsched.workload.swf.Trace` into jobsets (see the module docstring)."""
    if min(jobs, unit, res_slot, max_len) < 1 or steps < jobs:
        raise ConfigError("jobs, unit, res_slot and max_len must be >= 1 and steps >= jobs")
    procs = np.where(trace.alloc_procs > 0, trace.alloc_procs, trace.req_procs).astype(np.int64)
    mem = np.where(trace.used_mem > 0, trace.used_mem, trace.req_mem).astype(np.float64)
    ok = (trace.run > 0) & (procs > 0) & (mem > 0)
    idx = np.flatnonzero(ok)
    K = len(idx) // jobs
    if K == 0:
        raise ConfigError(
            f"{trace.path}: {len(idx)} jobs with a run time, processors and memory: fewer than "
            f"one slice of {jobs}"
        )
    idx = idx[: K * jobs].reshape(K, jobs)
    P, M = float(trace.num_procs), mem_per_proc or _memory_per_proc(trace)
    run = np.asarray(trace.run, np.int64)[idx]
    lens = np.clip(-(-run // unit), 1, max_len)
    cpu = np.clip(np.ceil(res_slot * procs[idx] / P), 1, res_slot)
    memd = np.clip(np.ceil(res_slot * procs[idx] * mem[idx] / (P * M)), 1, res_slot)
    sub = np.asarray(trace.submit, np.int64)[idx]
    want = (sub - sub[:, :1]) // unit
    step = np.maximum.accumulate(want - np.arange(jobs), axis=1) + np.arange(jobs)
    keep = step[:, -1] < steps
    if not np.any(keep):
        raise ConfigError(f"{trace.path}: no slice of {jobs} jobs arrives within {steps} steps")
    dropped = int(K - np.sum(keep))
    idx, run, lens, cpu, memd, want, step = (
        a[keep] for a in (idx, run, lens, cpu, memd, want, step)
    )
    K, S = len(idx), steps
    out_l = np.zeros((K, S), np.int32)
    out_d = np.zeros((K, S, 2), np.int32)
    rows = np.arange(K)[:, None]
    out_l[rows, step] = lens
    out_d[rows, step, 0] = cpu
    out_d[rows, step, 1] = memd
    return TraceSlices(out_l, out_d, np.asarray(trace.line)[idx[:, 0]],
                       capped=int(np.sum(run > max_len * unit)),
                       delayed=int(np.sum(step > want)), delay_steps=int(np.sum(step - want)),
                       dropped=dropped)  # fmt: skip
