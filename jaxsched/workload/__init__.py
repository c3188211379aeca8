"""Host-side workload tools (numpy only; nothing here imports JAX).

* :mod:`jaxsched.workload.swf`: the SWF fields, :class:`Trace` and :func:`read_swf`; its parser
  in :mod:`~jaxsched.workload.swf_parse`, its writers in :mod:`~jaxsched.workload.swf_write`;
* :mod:`jaxsched.workload.jobs`: the simulator's :class:`Jobs` and the cleaning rules
  (``Trace.jobs(rules=...)``);
* :mod:`jaxsched.workload.stats`: trace statistics and reports (incl. RLScheduler Table II);
* :mod:`jaxsched.workload.capacity`: the running-list capacity that no window of a trace can
  outgrow (the environments' engine capacity; imported on demand);
* :mod:`jaxsched.workload.sampling`: sequence start indices (gym-compatible and our own);
* :mod:`jaxsched.workload.lublin`: the Lublin–Feitelson synthetic workload generator (imported
  on demand, not re-exported here), on the C library's RNG in :mod:`~jaxsched.workload.drand48`;
* :mod:`jaxsched.workload.bundled`: the demo's default trace (checkout, or regenerated).
* :mod:`jaxsched.workload.dras`: DRAS's trace split and curriculum jobsets (sampled, weekly,
  synthetic; imported on demand).
* :mod:`jaxsched.workload.splits`: the named train / validation / test splits of every trace
  and generator, and run.json's ``jobs_seen`` (imported on demand; docs/splits.md).
* :mod:`jaxsched.workload.validate`: is a schedule one the machine could have run (every job
  once, none before its submit time, no over-allocation; imported on demand);
* :mod:`jaxsched.workload.paths`: a run directory's trace path, stored relative to its checkout
  and found again (imported on demand).
"""

from __future__ import annotations

from jaxsched.workload.bundled import default_trace_path
from jaxsched.workload.sampling import fixed_starts, gym_np_random, reference_starts, uniform_starts
from jaxsched.workload.stats import format_stats, jobs_summary, trace_stats
from jaxsched.workload.swf import (
    FIELDS,
    Jobs,
    Trace,
    parse_swf,
    prepare_jobs,
    read_swf,
    write_schedule_swf,
    write_swf,
)

__all__ = [
    "FIELDS",
    "Jobs",
    "Trace",
    "parse_swf",
    "prepare_jobs",
    "read_swf",
    "write_schedule_swf",
    "write_swf",
    "trace_stats",
    "format_stats",
    "jobs_summary",
    "gym_np_random",
    "reference_starts",
    "uniform_starts",
    "fixed_starts",
    "default_trace_path",
]
