"""Descriptive statistics of SWF traces, and a readable text report.

:func:`trace_stats` returns a JSON-serialisable dict. Besides general statistics it has two
blocks that follow the shared traces README (shared/traces/README.md) exactly:

* ``table2``: the RLScheduler paper's Table II definitions ("whole trace"): mean inter-arrival
  time, mean of field 4 (run time) and mean of field 5 (allocated processors), over **all**
  selected jobs, −1 values included. These reproduce the paper: SDSC-SP2 1055 / 6687 / 11,
  HPC2N 538 / 17024 / 6, Lublin-1 771 / 4862 / 22, Lublin-2 460 / 1695 / 39. The paper
  truncates or rounds: the exact values are e.g. 4862.77 and 1695.96.
* ``requested``: the README's "first 10k" definitions: (submit_last − submit_first) / (n − 1),
  mean of field 9 (field 4 where field 9 is −1), mean of field 8 (field 5 where it is −1).
  ``trace_stats(trace, first=10000)["requested"]`` gives the README's "first 10k" columns.
"""

from __future__ import annotations

import numpy as np

from jaxsched import formatting as F
from jaxsched.errors import ConfigError
from jaxsched.workload.swf import Jobs, Trace

__all__ = ["trace_stats", "jobs_summary", "format_stats", "format_jobs_summary"]


def _summary(a: np.ndarray) -> dict:
    """count / mean / p10 / p50 / p90 / min / max of an array (None entries when empty)."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return {
            "count": 0,
            "mean": None,
            "p10": None,
            "p50": None,
            "p90": None,
            "min": None,
            "max": None,
        }
    p10, p50, p90 = np.percentile(a, [10, 50, 90])
    return {
        "count": int(a.size),
        "mean": float(a.mean()),
        "p10": float(p10),
        "p50": float(p50),
        "p90": float(p90),
        "min": float(a.min()),
        "max": float(a.max()),
    }


def trace_stats(trace: Trace, first: int | None = None) -> dict:
    """Statistics of ``trace`` (of its first ``first`` job lines when given).

    Keys: ``path``, ``jobs``, ``processors``, ``nodes``, ``procs_per_node``, ``first_submit``,
    ``last_submit``, ``span_s`` / ``span_days`` (first to last submission), ``interarrival``,
    ``run_time`` (field 4 where >= 0), ``requested_time`` (field 9 where > 0), ``size``
    (processors: field 8 if > 0, else field 5, where > 0), ``estimate_accuracy``
    (run / requested where requested > 0 and run >= 0). Each of these is a dict with
    count / mean / p10 / p50 / p90 / min / max. Also ``users`` and ``groups`` (distinct ids >=
    0), ``missing`` (−1 counts of the main fields), ``table2`` and ``requested`` (see the
    module docstring), ``skipped_lines`` and ``header`` (MaxJobs, MaxRecords, MaxNodes,
    MaxProcs as read, None when absent).
    """
    if first is not None:
        if isinstance(first, bool) or int(first) != first or first < 1:
            raise ConfigError(f"--first must be a positive integer, got {first!r}")
        trace = trace.head(int(first))
    t = trace
    n = t.n_jobs
    submit = t.submit.astype(np.float64)
    ia = np.diff(submit)
    run, rt = t.run, t.req_time
    size = np.where(t.req_procs > 0, t.req_procs, t.alloc_procs)
    acc_mask = (rt > 0) & (run >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = run[acc_mask] / rt[acc_mask]
    req_q = np.where(rt == -1, run, rt)
    req_n = np.where(t.req_procs == -1, t.alloc_procs, t.req_procs)
    span = float(submit[-1] - submit[0]) if n else 0.0
    return {
        "path": t.path,
        "jobs": n,
        "processors": t.num_procs,
        "nodes": t.num_nodes,
        "procs_per_node": t.procs_per_node,
        "first_submit": int(t.submit[0]) if n else None,
        "last_submit": int(t.submit[-1]) if n else None,
        "span_s": span,
        "span_days": span / 86400.0,
        "interarrival": _summary(ia),
        "run_time": _summary(run[run >= 0]),
        "requested_time": _summary(rt[rt > 0]),
        "size": _summary(size[size > 0]),
        "estimate_accuracy": _summary(accuracy),
        "users": int(np.unique(t.user[t.user >= 0]).size),
        "groups": int(np.unique(t.group[t.group >= 0]).size),
        "missing": {
            name: int(np.count_nonzero(getattr(t, name) == -1))
            for name in ("run", "alloc_procs", "req_procs", "req_time", "user")
        },
        "table2": {
            "mean_interarrival": float(ia.mean()) if n > 1 else None,
            "mean_run_time": float(run.mean()) if n else None,
            "mean_alloc_procs": float(t.alloc_procs.mean()) if n else None,
        },
        "requested": {
            "mean_interarrival": span / (n - 1) if n > 1 else None,
            "mean_requested_time": float(req_q.mean()) if n else None,
            "mean_requested_procs": float(req_n.mean()) if n else None,
        },
        "skipped_lines": len(t.skipped),
        "header": {
            "MaxJobs": t.max_jobs,
            "MaxRecords": t.max_records,
            "MaxNodes": t.max_nodes,
            "MaxProcs": t.max_procs,
        },
    }


def jobs_summary(jobs: Jobs) -> dict:
    """What a cleaning rule set produced: job count, machine, normalisers, fixes."""
    return {
        "rules": jobs.rules,
        "jobs": jobs.n_jobs,
        "num_procs": jobs.num_procs,
        "num_nodes": jobs.num_nodes,
        "procs_per_node": jobs.procs_per_node,
        "max_exec_time": jobs.max_exec_time,
        "max_req_mem": jobs.max_req_mem,
        "max_user": jobs.max_user,
        "max_group": jobs.max_group,
        "max_executable": jobs.max_executable,
        "fixes": dict(jobs.fixes),
    }


def format_stats(stats: dict) -> str:
    """A readable multi-line text report of :func:`trace_stats`."""
    s = stats
    lines = [
        f"trace:        {s['path'] or '-'}",
        f"jobs:         {s['jobs']:,}"
        + (f"  ({s['skipped_lines']} bad lines skipped)" if s["skipped_lines"] else ""),
        f"machine:      {s['processors']:,} processors, {s['nodes']:,} nodes "
        f"({s['procs_per_node']:g} per node)",
        f"time span:    {F.count(s['span_s'], 0)} s ({s['span_days']:.1f} days) of submissions",
        f"users:        {s['users']:,}  groups: {s['groups']:,}",
        "",
        f"{'':22s}{'count':>10s}{'mean':>12s}{'p10':>10s}{'p50':>10s}{'p90':>12s}",
    ]
    rows = (
        ("inter-arrival (s)", "interarrival"),
        ("run time (s)", "run_time"),
        ("requested time (s)", "requested_time"),
        ("size (processors)", "size"),
        ("run / requested", "estimate_accuracy"),
    )
    for title, key in rows:
        d = s[key]
        dig = 3 if key == "estimate_accuracy" else 1
        lines.append(
            f"{title:22s}{d['count']:>10,}{F.count(d['mean'], dig):>12s}"
            f"{F.count(d['p10'], dig):>10s}{F.count(d['p50'], dig):>10s}"
            f"{F.count(d['p90'], dig):>12s}"
        )
    miss = ", ".join(f"{k} {v:,}" for k, v in s["missing"].items() if v)
    t2, rq = s["table2"], s["requested"]
    lines += [
        "",
        f"missing (-1): {miss or 'none'}",
        "RLScheduler Table II (whole selection: mean inter-arrival / mean field 4 / mean "
        f"field 5): {F.count(t2['mean_interarrival'])} / {F.count(t2['mean_run_time'])} / "
        f"{F.count(t2['mean_alloc_procs'], 2)}",
        "requested means (inter-arrival / field 9 or 4 / field 8 or 5): "
        f"{F.count(rq['mean_interarrival'])} / {F.count(rq['mean_requested_time'])} / "
        f"{F.count(rq['mean_requested_procs'], 2)}",
    ]
    return "\n".join(lines)


def format_jobs_summary(summary: dict) -> str:
    """Text form of :func:`jobs_summary`."""
    s = summary
    fixes = ", ".join(f"{k} {v:,}" for k, v in s["fixes"].items())
    return "\n".join(
        [
            f"rules {s['rules']}: {s['jobs']:,} jobs loaded; N = {s['num_nodes']:,} nodes, "
            f"P = {s['num_procs']:,} processors ({s['procs_per_node']:g} per node)",
            f"  fixes: {fixes}",
            f"  normalisers: max run {s['max_exec_time']:,} s, max req mem {s['max_req_mem']:,}, "
            f"max user {s['max_user']:,}, max group {s['max_group']:,}, "
            f"max executable {s['max_executable']:,}",
        ]
    )
