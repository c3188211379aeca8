"""Schema ``cqsim-reference/1``: job-by-job CQSim / DRAS schedules (shared/reference/cqsim).

Layout (see that folder's README)::

    {"schema": "cqsim-reference/1", "trace": "SDSC-SP2-1998-4.2-cln.swf.gz",
     "machine_size": 128, "loaded_jobs": 53999, "jobs_per_slice": 2000,
     "runtime": "code",                  # optional extension: "code" (default) or "paper"
     "slices": [{"start": 0, "jobs": 2000,
                 "input": {"id": [...], "submit": [...], "nodes": [...], "run": [...],
                           "req_time": [...]},          # optional
                 "runs": [{"mode": "easy", "backfill": 1, "policy": "fcfs",
                           "start": [...], "end": [...], "class": [...],   # class: DRAS runs
                           "metrics": {"avg_wait": ..., ...}}]}]}

Each slice is loaded jobs ``start … start+jobs−1`` of the trace under CQSim's loading rules
(:mod:`jaxsched.workload.cqsim`) and is replayed through the JAX CQSim engine mode
(:func:`jaxsched.sim.cqsim.run.simulate_cqsim`) under each run's mode: ``backfill`` 0/1/2 =
FCFS with no / EASY / conservative backfilling, 3 = the DRAS-PG loop driven by the fixed
``policy`` (``fcfs`` slot 0, ``smallest``, ``largest``); without ``backfill`` the ``mode`` name
decides. Every start time, end time, job class and metric is one compared value; the file's
``loaded_jobs``, ``machine_size`` and ``input`` arrays are file-level checks (mismatches, not
counted in the total).
"""

from __future__ import annotations

import functools
import time

import numpy as np

from jaxsched.conformance.base import (
    FieldError,
    Mismatch,
    Report,
    TraceCache,
    find_trace,
    require,
    value_error,
)

NAME = "cqsim-reference"
DESCRIPTION = "CQSim/DRAS job-by-job schedules (shared/reference/cqsim/*.json)"

_BF_MODES = {0: "none", 1: "easy", 2: "cons"}
_POLICIES = ("fcfs", "smallest", "largest")
_INPUT = (("id", "job_id"), ("submit", "submit"), ("nodes", "nodes"), ("run", "run"),
          ("req_time", "req_time"))  # fmt: skip


def matches(doc) -> bool:
    """A JSON object tagged ``"schema": "cqsim-reference..."``, or untagged with ``slices`` and
    ``jobs_per_slice``."""
    if not isinstance(doc, dict):
        return False
    if isinstance(doc.get("schema"), str):
        return doc["schema"].startswith("cqsim")
    return "slices" in doc and "jobs_per_slice" in doc


def _mode(run: dict, where: str) -> str:
    """The engine mode name (``jaxsched.sim.cqsim.types.MODES``) of one run."""
    from jaxsched.sim.cqsim.types import MODES

    if "backfill" in run:
        bf = require(run, "backfill", int, f"{where}.backfill")
        pol = str(run.get("policy", "fcfs")).strip().lower()
        if pol not in _POLICIES:
            raise FieldError(f"{where}.policy", f"must be one of {', '.join(_POLICIES)}: {pol!r}")
        if bf == 3:
            return f"dras-{pol}"
        if bf in _BF_MODES and pol == "fcfs":
            return _BF_MODES[bf]
        raise FieldError(f"{where}.backfill", f"no CQSim mode for backfill {bf} with {pol!r}")
    mode = require(run, "mode", str, f"{where}.mode")
    if mode not in MODES:
        raise FieldError(f"{where}.mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


def _slices(doc) -> list:
    """The validated slices: ``(start, jobs, slice dict, [(mode, run dict), ...])``."""
    default = require(doc, "jobs_per_slice", int, minimum=1) if "jobs_per_slice" in doc else None
    out = []
    for k, sl in enumerate(require(doc, "slices", list)):
        where = f"slices[{k}]"
        if not isinstance(sl, dict):
            raise FieldError(where, "must be an object")
        if "jobs" not in sl and default is not None:
            sl = {**sl, "jobs": default}
        start = require(sl, "start", int, f"{where}.start", minimum=0)
        n = require(sl, "jobs", int, f"{where}.jobs", minimum=1)
        runs = []
        for i, run in enumerate(require(sl, "runs", list, f"{where}.runs")):
            w = f"{where}.runs[{i}]"
            if not isinstance(run, dict):
                raise FieldError(w, "must be an object")
            for key in ("start", "class", "end"):
                if key in run and (not isinstance(run[key], list) or len(run[key]) != n):
                    raise FieldError(f"{w}.{key}", f"must be a list of {n} numbers")
            runs.append((_mode(run, w), run))
        out.append((start, n, sl, runs))
    if not out:
        raise FieldError("slices", "no slice to check (empty list)")
    return out


@functools.lru_cache(maxsize=4)
def _load(path: str):
    from jaxsched.workload.cqsim import load_cqsim

    return load_cqsim(path)


def _file_checks(report: Report, doc, tr, slices) -> None:
    """loaded_jobs, machine_size and the input arrays (mismatches only, not counted)."""
    for key, ours in (("loaded_jobs", tr.loaded_jobs), ("machine_size", tr.num_nodes)):
        if key in doc and require(doc, key, int) != ours:
            report.mismatches.append(Mismatch(key, {}, doc[key], ours, value_error(doc[key], ours)))
    for k, (start, n, sl, _) in enumerate(slices):
        if start + n > tr.loaded_jobs:
            raise FieldError(
                f"slices[{k}].start",
                f"jobs {start} … {start + n - 1} run past the {tr.loaded_jobs} loaded jobs",
            )
        inp = sl.get("input") or {}
        from jaxsched.workload.cqsim import cqsim_slice

        jobs = cqsim_slice(tr, start, n)
        for key, attr in _INPUT:
            if key in inp:
                a, b = np.asarray(inp[key]), getattr(jobs, attr)
                bad = np.flatnonzero(a != b) if a.shape == b.shape else np.arange(1)
                if bad.size:
                    i = int(bad[0])
                    e, g = inp[key][i] if i < len(inp[key]) else None, int(b[min(i, n - 1)])
                    report.mismatches.append(
                        Mismatch(f"slices[{k}].input.{key}[{i}]", {}, e, g, value_error(e, g))
                    )


def _compare_run(report, where, key, run: dict, got, tolerance: float) -> None:
    for field, ours in (("start", got.start), ("end", got.end), ("class", got.cls)):
        for j, v in enumerate(run.get(field, [])):
            report.add(f"{where}.{field}[{j}]", key, v, int(ours[j]), tolerance)
    for name, v in (run.get("metrics") or {}).items():
        report.add(f"{where}.metrics.{name}", {**key, "metric": name}, v, got.metrics.get(name),
                   tolerance)  # fmt: skip


def check(doc, traces_dir, *, tolerance: float, traces: TraceCache | None = None) -> Report:
    """Replay every run of every slice through the JAX CQSim engine mode (module docstring)."""
    t0 = time.perf_counter()
    path = find_trace(require(doc, "trace", str), traces_dir)
    runtime = doc.get("runtime", "code")
    if runtime not in ("code", "paper"):
        raise FieldError("runtime", f"must be 'code' or 'paper', got {runtime!r}")
    slices = _slices(doc)
    tr = _load(str(path.resolve()))
    report = Report(file="", schema=NAME, trace=path.name)
    _file_checks(report, doc, tr, slices)

    from jaxsched.sim.cqsim.run import simulate_cqsim  # JAX once the file is known to be good
    from jaxsched.workload.cqsim import cqsim_slice

    for k, (start, n, _, runs) in enumerate(slices):
        modes = list(dict.fromkeys(m for m, _ in runs))
        got = dict(zip(modes, simulate_cqsim(cqsim_slice(tr, start, n), modes, runtime)))
        report.evaluations += 1
        for i, (mode, run) in enumerate(runs):
            key = {"start": start, "jobs": n, "mode": mode}
            _compare_run(report, f"slices[{k}].runs[{i}]", key, run, got[mode], tolerance)
    report.seconds = time.perf_counter() - t0
    return report
