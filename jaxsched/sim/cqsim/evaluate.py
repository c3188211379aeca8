"""``jaxsched.sim.evaluate.evaluate(..., compat="cqsim")``: heuristic runs in the CQSim engine
mode with the driver's result type (:class:`~jaxsched.sim.evaluate.EvalResult`).

Backfills: ``none``, ``easy``, ``cons`` (also ``conservative``) with policy ``fcfs`` (CQSim's
queue order), and ``dras`` (the DRAS-PG loop) with ``fcfs``, ``smallest`` or ``largest`` (the
fixed level-1/level-2 policies). Metrics: ``bsld``, ``sld``, ``wait``, ``turnaround``,
``util``, ``max_wait``, ``makespan`` (the reference README's definitions, see
:func:`jaxsched.sim.cqsim.run.cqsim_metrics`).
"""

from __future__ import annotations

import time

import numpy as np

from jaxsched.errors import ConfigError

__all__ = ["evaluate_cqsim", "METRIC_NAMES"]

#: evaluate()'s metric names → the CQSim metric of :func:`~jaxsched.sim.cqsim.run.cqsim_metrics`
METRIC_NAMES = {
    "bsld": "avg_bsld",
    "sld": "avg_slowdown",
    "wait": "avg_wait",
    "turnaround": "avg_turnaround",
    "util": "util",
    "max_wait": "max_wait",
    "makespan": "makespan",
}
_BACKFILLS = {"none": "none", "easy": "easy", "cons": "cons", "conservative": "cons",
              "dras": "dras"}  # fmt: skip


def _mode(policy: str, backfill: str) -> str:
    b = _BACKFILLS.get(backfill.strip().lower())
    p = policy.strip().lower()
    if b is None:
        raise ConfigError(f"unknown backfill {backfill!r} for compat 'cqsim'; choose from "
                          f"{', '.join(_BACKFILLS)}")  # fmt: skip
    if b == "dras" and p in ("fcfs", "smallest", "largest"):
        return f"dras-{p}"
    if p != "fcfs":
        raise ConfigError(
            f"policy {policy!r} with backfill {backfill!r}: compat 'cqsim' runs FCFS "
            "(or smallest/largest with backfill 'dras')"
        )
    return b


def evaluate_cqsim(jobs, starts, length: int, policies, backfills, metrics, runtime="code"):
    """Every start × policy × backfill run of ``jobs`` (a
    :class:`~jaxsched.workload.cqsim.CQSimTrace`, ``load_cqsim(path)``) in the CQSim engine
    mode; an :class:`~jaxsched.sim.evaluate.EvalResult` as ``evaluate`` returns."""
    from jaxsched.sim.cqsim.run import simulate_cqsim
    from jaxsched.sim.evaluate import EvalResult
    from jaxsched.workload.cqsim import CQSimTrace, cqsim_slice

    if not isinstance(jobs, CQSimTrace):
        raise ConfigError(
            "compat 'cqsim' needs CQSim's job list: jaxsched.workload.cqsim.load_cqsim(path)"
        )
    for m in metrics:
        if m not in METRIC_NAMES:
            raise ConfigError(f"unknown metric {m!r} for compat 'cqsim'; choose from "
                              f"{', '.join(METRIC_NAMES)}")  # fmt: skip
    starts = np.asarray(list(starts), np.int64)
    modes = {(p, b): _mode(p, b) for p in policies for b in backfills}
    S, P, B = len(starts), len(policies), len(backfills)
    st_times = np.full((S, P, B, length), -1, np.int64)
    rows, t0 = [], time.perf_counter()
    for si, s in enumerate(starts):
        runs = simulate_cqsim(cqsim_slice(jobs, int(s), length), list(dict.fromkeys(modes.values())),
                              runtime)  # fmt: skip
        by = {r.mode: r for r in runs}
        for pi, p in enumerate(policies):
            for bi, b in enumerate(backfills):
                r = by[modes[(p, b)]]
                st_times[si, pi, bi] = r.start
                rows += [{"start": int(s), "jobs": length, "policy": p, "backfill": b,
                          "metric": m, "value": float(r.metrics[METRIC_NAMES[m]])}
                         for m in metrics]  # fmt: skip
    timing = {"compile_s": 0.0, "run_s": time.perf_counter() - t0, "runs": S * P * B}
    return EvalResult(rows, starts, list(policies), list(backfills), list(metrics), st_times,
                      timing)  # fmt: skip
