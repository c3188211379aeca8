"""SchedInspector's parse rules (spec ``schedinspector.md`` §2): the job list its reference
simulator loads from an SWF :class:`~jaxsched.workload.swf.Trace`.

Two modes:

* ``"compat"`` (the reference code): run time −1 becomes 10 (other negative values are kept),
  the requested time is **replaced by the run time** (perfect estimates), no job is dropped;
* ``"paper"``: the same, but the requested time is the SWF estimate (field 9, or the run time as
  read when it is −1, RLScheduler's fallback), so schedulers see estimates and metrics actual
  run times.

Both: ``procs = max(allocated, requested)``, jobs sorted by job number (stable), N = ``MaxNodes``,
P = the ``max_procs`` override, else ``MaxProcs``, else N, ``max_exec_time`` = largest run time
after the −1 → 10 fix.
"""

from __future__ import annotations

import numpy as np

from jaxsched.errors import ConfigError, SWFError
from jaxsched.workload.jobs import Jobs

__all__ = ["MODES", "inspector_jobs"]

#: the two semantics of spec §2 / §10.1
MODES: tuple[str, ...] = ("compat", "paper")


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ConfigError(f"unknown SchedInspector mode {mode!r}; choose from {', '.join(MODES)}")
    return mode


def inspector_jobs(trace, mode: str = "compat") -> tuple[Jobs, np.ndarray]:
    """The reference's job list of ``trace`` and each job's SWF wait field (the multifactor
    base's input, spec §4 idx 12).

    Returns:
      ``(jobs, swf_wait)``: a :class:`Jobs` (``rules = "schedinspector-<mode>"``, every line
      kept, in job-number order) and int64 ``[n_jobs]`` field 3 of the same jobs.
    """
    _check_mode(mode)
    t = trace
    if t.max_nodes is None:
        raise SWFError(
            t.path,
            None,
            "MaxNodes",
            "header value missing: SchedInspector takes the node count from "
            "'; MaxNodes: <n>' (add the header line)",
        )
    N = int(t.max_nodes)
    P = int(t.num_procs_override or t.max_procs or N)
    procs = np.maximum(t.alloc_procs, t.req_procs)
    run = np.where(t.run == -1, 10, t.run)
    if mode == "compat":
        q = run
    else:
        q = np.where(t.req_time == -1, t.run, t.req_time)
    idx = np.argsort(t.job_id, kind="stable")
    as64 = lambda a: np.ascontiguousarray(np.asarray(a)[idx], dtype=np.int64)  # noqa: E731
    jobs = Jobs(
        submit=as64(t.submit),
        run=as64(run),
        req_time=as64(q),
        procs=as64(procs),
        req_mem=as64(t.req_mem),
        user=as64(t.user),
        group=as64(t.group),
        executable=as64(t.executable),
        job_id=as64(t.job_id),
        line=as64(t.line),
        num_procs=P,
        num_nodes=N,
        procs_per_node=P / N,
        max_exec_time=int(run.max()) if run.size else 0,
        max_req_mem=max(0, int(t.req_mem.max())) if t.req_mem.size else 0,
        max_user=max(0, int(t.user.max())) if t.user.size else 0,
        max_group=max(0, int(t.group.max())) if t.group.size else 0,
        max_executable=max(0, int(t.executable.max())) if t.executable.size else 0,
        fixes={
            "procs_from_alloc": int(np.count_nonzero(t.alloc_procs > t.req_procs)),
            "neg_run_to_10": int(np.count_nonzero(t.run == -1)),
            "req_time_from_run": int(t.run.size) if mode == "compat" else 0,
        },
        rules=f"schedinspector-{mode}",
        path=t.path,
    )
    return jobs, as64(t.wait)
