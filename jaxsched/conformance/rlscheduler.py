"""Schema ``rlscheduler-sequences``: per-sequence heuristic results of RLScheduler's SchedGym.

The files of ``shared/reference/*-seq1024.json`` (see its README)::

    {"trace": "lublin_256_new2.swf",          # trace file name, looked up in --traces
     "loaded_jobs": 10000,                    # optional: jobs left after the parse rules
     "jobs_per_sequence": 1024,               # optional: default of a row's "jobs"
     "semantics": "rlscheduler",              # optional extension: "rlscheduler" (default,
                                              #   the reference SchedGym) or "correct"
     "schema": "rlscheduler-sequences",       # optional tag
     "results": [
        {"start": 1259, "jobs": 1024, "policy": "fcfs", "backfill": "none",
         "metric": "bsld", "value": 3240.1204233447515},
        ...]}

Each row is one value: jobs ``start … start+jobs−1`` of the trace as loaded by the reference's
parse rules (``read_swf(trace).jobs("rlscheduler")``: zero run times dropped, negative ones
set to 10), scheduled on an idle cluster by heuristic ``policy`` with ``backfill`` (``none``,
``rlscheduler`` = the reference's greedy backfilling; ``easy`` with ``"semantics":
"correct"`` only), and the sequence's ``metric`` (``bsld``, ``wait``, ``turnaround``, ``sld``,
``util``, or any other name of :data:`jaxsched.sim.evaluate.METRICS`).  Any trace, start,
length, deterministic policy and backfilling mode may appear; rows need not form a full grid.

The check replays the rows with :func:`jaxsched.sim.evaluate.evaluate` — one call per sequence
length, over the starts × policies × backfills × metrics that occur in the file — and compares
every value with :func:`jaxsched.conformance.base.value_error`.  ``loaded_jobs``, when present,
must equal the number of jobs loaded (a mismatch otherwise).
"""

from __future__ import annotations

import time

from jaxsched.conformance.base import (
    FieldError,
    Mismatch,
    Report,
    TraceCache,
    find_trace,
    require,
    value_error,
)
from jaxsched.errors import ConfigError

NAME = "rlscheduler-sequences"
DESCRIPTION = "RLScheduler SchedGym heuristic results per sequence (shared/reference/*-seq*.json)"

#: semantics field -> evaluate(compat=...)
SEMANTICS = {"rlscheduler": True, "correct": False}
_ROW_FIELDS = ("start", "jobs", "policy", "backfill", "metric", "value")
#: fields of other systems' rows that share the top-level layout (SchedInspector)
_FOREIGN_ROW_FIELDS = ("inspector", "base", "decisions", "rejections")


def matches(doc) -> bool:
    """A JSON object with a ``results`` list and either the tag ``"schema":
    "rlscheduler-sequences"`` (optionally ``/version``) or no tag, no ``protocol`` block and
    rows (if any) that are not another system's."""
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        return False
    tag = doc.get("schema")
    if tag is not None:
        return isinstance(tag, str) and (tag == NAME or tag.startswith(NAME + "/"))
    if "protocol" in doc:
        return False
    first = doc["results"][0] if doc["results"] else {}
    return not (isinstance(first, dict) and any(k in first for k in _FOREIGN_ROW_FIELDS))


def _rows(doc) -> list[dict]:
    """The validated rows, ``jobs`` filled in from ``jobs_per_sequence``."""
    default_len = None
    if "jobs_per_sequence" in doc:
        default_len = require(doc, "jobs_per_sequence", int, minimum=1)
    rows = require(doc, "results", list)
    if not rows:
        raise FieldError("results", "no values to check (empty list)")
    out = []
    for i, r in enumerate(rows):
        where = f"results[{i}]"
        if not isinstance(r, dict):
            raise FieldError(where, f"must be an object, got {r!r}"[:200])
        if "jobs" not in r and default_len is not None:
            r = {**r, "jobs": default_len}
        row = {
            "start": require(r, "start", int, f"{where}.start", minimum=0),
            "jobs": require(r, "jobs", int, f"{where}.jobs", minimum=1),
            "policy": require(r, "policy", str, f"{where}.policy").strip().lower(),
            "backfill": require(r, "backfill", str, f"{where}.backfill").strip().lower(),
            "metric": require(r, "metric", str, f"{where}.metric").strip(),
            "value": require(r, "value", float, f"{where}.value"),
        }
        if row["policy"] == "random":
            raise FieldError(
                f"{where}.policy", "'random' has no reproducible value (choose a deterministic one)"
            )
        out.append(row)
    return out


def _locate(rows: list[dict], message: str) -> str:
    """The first ``results[i].field`` whose value the simulator's error message names."""
    for field in ("policy", "backfill", "metric"):
        for i, r in enumerate(rows):
            if repr(r[field]) in message:
                return f"results[{i}].{field}"
    return "results"


def _result_rows(res) -> list:
    rows = getattr(res, "results", None)
    return rows if rows is not None else res.rows


def check(doc, traces_dir, *, tolerance: float, traces: TraceCache | None = None) -> Report:
    """Replay every row of ``doc`` through the JAX engine; see the module docstring."""
    t0 = time.perf_counter()
    trace_name = require(doc, "trace", str)
    semantics = doc.get("semantics", "rlscheduler")
    if semantics not in SEMANTICS:
        raise FieldError("semantics", f"must be one of {', '.join(SEMANTICS)}, got {semantics!r}")
    compat = SEMANTICS[semantics]
    loaded = require(doc, "loaded_jobs", int, minimum=0) if "loaded_jobs" in doc else None
    rows = _rows(doc)
    for i, r in enumerate(rows):
        if compat and r["backfill"] == "easy":
            raise FieldError(
                f"results[{i}].backfill",
                "'easy' is not part of the reference simulator (needs semantics 'correct')",
            )
    path = find_trace(trace_name, traces_dir)
    traces = traces or TraceCache()
    jobs = traces(path, "rlscheduler")
    report = Report(file="", schema=NAME, trace=path.name)
    if loaded is not None and jobs.n_jobs != loaded:  # a file-level check, not a counted value
        err = value_error(loaded, jobs.n_jobs)
        report.mismatches.append(Mismatch("loaded_jobs", {}, loaded, jobs.n_jobs, err))
    for i, r in enumerate(rows):
        if r["start"] + r["jobs"] > jobs.n_jobs:
            raise FieldError(
                f"results[{i}].start",
                f"sequence {r['start']} … {r['start'] + r['jobs'] - 1} runs past the "
                f"{jobs.n_jobs} jobs loaded from {path.name}",
            )

    from jaxsched.sim.evaluate import evaluate  # JAX only once the file is known to be good

    by_len: dict = {}
    for i, r in enumerate(rows):
        by_len.setdefault(r["jobs"], []).append(i)
    for length, idx in sorted(by_len.items()):
        sub = [rows[i] for i in idx]
        starts = sorted({r["start"] for r in sub})
        policies = list(dict.fromkeys(r["policy"] for r in sub))
        backfills = list(dict.fromkeys(r["backfill"] for r in sub))
        metrics = list(dict.fromkeys(r["metric"] for r in sub))
        try:
            res = evaluate(
                jobs, starts, length, policies, backfills, compat=compat, metrics=metrics
            )
        except ConfigError as e:
            raise FieldError(_locate(sub, str(e)), str(e)) from e
        report.evaluations += 1
        # evaluate returns canonical names in the order given: map ours onto them
        pmap = dict(zip(policies, getattr(res, "policies", policies)))
        bmap = dict(zip(backfills, getattr(res, "backfills", backfills)))
        got = {
            (g["start"], g["policy"], g["backfill"], g["metric"]): g["value"]
            for g in _result_rows(res)
        }
        for i in idx:
            r = rows[i]
            key = (r["start"], pmap[r["policy"]], bmap[r["backfill"]], r["metric"])
            report.add(
                f"results[{i}]",
                {k: r[k] for k in _ROW_FIELDS[:-1]},
                r["value"],
                got.get(key),
                tolerance,
            )
    report.seconds = time.perf_counter() - t0
    return report
