"""CQSim fidelity over whole traces (issue 46): every consecutive slice of ``--jobs`` loaded jobs
of each trace, run by the public CQSim and by ours, compared job by job.

For each trace (CQSim's loading rules, :mod:`jaxsched.workload.cqsim`) and each mode, slice k is
loaded jobs ``k*J … k*J+J−1`` (the last, shorter remainder is left out). Each slice is run by

* CQSim itself (``--cqsim DIR``, a local checkout of SPEAR-UIC/CQSim master, its root or
  ``src/``; modes ``easy``, ``cons``, ``none`` = CQSim backfill 1, 2, 0; one subprocess per
  slice, ``benchmarks/reference/cqsim_reference.py``), and the ``dras-*`` modes by CQSim's DRAS branch
  (``--cqsim-dras DIR``, a local checkout of it, its root or ``PG/``; its DRAS-PG loop with the
  reference README's fixed policies in place of its network, TensorFlow / Keras replaced by
  stand-ins, ``benchmarks/reference/cqsim_dras_standins.py``). Its schedule (start times in slice order,
  and for ``dras-*`` the job classes) is cached as
  ``CACHE/<trace stem>/<mode>/a<start>-n<J>.json``, so a rerun re-simulates ours only; a slice
  not cached and without the checkout its mode needs is reported as not checked;
* our JAX CQSim engine mode (:func:`jaxsched.sim.cqsim.run.simulate_cqsim`);
* the plain-Python oracle (:mod:`jaxsched.sim.oracle_cqsim`; ``--no-oracle`` leaves it out).

A slice is *exact* (issue 46's "done when") when every start time and every end time equal
CQSim's, in the ``dras-*`` modes every job class too, and every metric of the slice (the
reference files' metrics, :func:`jaxsched.sim.cqsim.run.cqsim_metrics` of CQSim's start times)
equals ours to 1e-9 (:func:`jaxsched.conformance.base.value_error`): the JAX engine's
``CQRun.metrics`` and the oracle's own :func:`jaxsched.sim.oracle_cqsim.cqsim_metrics` (with its
logged utilisation). CQSim's end times are cached with its start times since 2026-11-28; for a
slice cached before, CQSim's end is its start + run (its finish event; the run time is already
cut to the estimate). Printed per trace and mode: slices checked, exact (JAX and oracle), and for
each failing slice what differs (``start``, ``end``, ``class``: the count and the first slice
index; ``metrics``: the names) and its first diverging job with the schedules of the jobs around
it (slice index, id, submit, nodes, run, req_time, CQSim / ours / oracle start). A final JSON line
per trace and mode (``--json`` writes them all).

``--requested-procs-from allocated``: a variant of the traces for CTC-SP2, whose field 8
(requested processors) is −1 on every line, so that CQSim's drop rule (``n <= 0``) leaves no job.
Each job line whose field 8 is −1 takes field 5 (allocated processors) instead, before CQSim's
loading rules; the slice written for CQSim, our engine and the oracle are then the same jobs. The
same substitution as our ``prepare_jobs(rules="default")`` (field 8 if > 0, else field 5) and, on
a line whose field 8 is −1, as RLScheduler's ``job.py`` (``max`` of fields 5 and 8). The variant
is part of the cache key (``CACHE/<trace stem>+req-procs-from-alloc/…``) and of every JSON row
(``"requested_procs_from": "allocated"``), so it cannot be mistaken for the plain trace;
``--write-ref`` refuses it (``jaxsched conformance`` loads the plain trace).

``--write-ref FILE``: write the checked slices of one trace whose CQSim schedule was cached in
every requested mode as a ``cqsim-reference/1`` file (the schema of ../shared/reference/cqsim,
metrics computed from CQSim's start times with :func:`jaxsched.sim.cqsim.run.cqsim_metrics`),
e.g. for tests' data. Usage::

    PYTHONPATH=. nice .venv/bin/python benchmarks/reference/cqsim_sweep.py --cqsim ~/src/CQSim \\
        --trace HPC2N-2002-2.2-cln --mode easy,cons,none [--slices 0:10] \\
        [--cache runs/cqsim-sweep] [--write-ref out.json]
    PYTHONPATH=. nice .venv/bin/python benchmarks/reference/cqsim_sweep.py --cqsim-dras ~/src/CQSim-DRAS \
        --trace SDSC-SP2-1998-4.2-cln --mode dras-fcfs,dras-smallest,dras-largest \
        --cache runs/cqsim-sweep-dras

``--slices a:b`` (slice numbers k, Python range) or ``--starts 1000,5000`` (explicit first
jobs) restrict the sweep. Only slices whose CQSim run is cached are checked with
``--cached-only`` (no CQSim needed).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cqsim_reference as CR  # noqa: E402  (the reference side; no JAX)

TRACES = ("SDSC-SP2-1998-4.2-cln", "HPC2N-2002-2.2-cln", "KTH-SP2-1996-2.1-cln",
          "CTC-SP2-1996-3.1-cln", "LANL-CM5-1994-4.1-cln")  # fmt: skip
MASTER = {"easy": 1, "cons": 2, "none": 0}
DRAS = {"dras-fcfs": "fcfs", "dras-smallest": "smallest", "dras-largest": "largest"}
COMMITS = {"master": "d8bdbb00ad0775591b04fe631a99991700cff45e",
           "dras": "273f9038ef31625872ebbe4a5a28574b1338f983"}  # fmt: skip
#: ``--requested-procs-from``: the suffix of the cache key (trace stem) of each variant
VARIANTS = {"requested": "", "allocated": "+req-procs-from-alloc"}
#: the metrics compared (those the reference files, the engine and the oracle all compute)
METRICS = ("jobs", "avg_wait", "max_wait", "avg_bsld", "avg_slowdown", "avg_turnaround",
           "makespan", "util", "util_node_seconds")  # fmt: skip
TOLERANCE = 1e-9


def _shared(arg):
    return Path(arg or os.environ.get("JAXSCHED_SHARED") or Path("..") / "shared")


def cache_path(cache: Path, trace: str, mode: str, start: int, n: int) -> Path:
    return Path(cache) / trace / mode / f"a{start}-n{n}.json"


def requested_from_allocated(trace):
    """A copy of a parsed SWF :class:`~jaxsched.workload.swf.Trace` whose field 8
    (``req_procs``, int64 ``[n_jobs]``) is field 5 (``alloc_procs``) on every line where field 8
    is −1, and the number of lines changed."""
    miss = np.asarray(trace.req_procs) == -1
    new = np.where(miss, trace.alloc_procs, trace.req_procs).astype(np.int64)
    return dataclasses.replace(trace, req_procs=new), int(miss.sum())


def load_trace(path, requested_procs_from: str = "requested"):
    """The CQSim job list (:func:`jaxsched.workload.cqsim.load_cqsim`) of an SWF file, with
    field 8 taken from field 5 where it is −1 if ``requested_procs_from == "allocated"``."""
    from jaxsched.workload.cqsim import load_cqsim
    from jaxsched.workload.swf import read_swf

    if requested_procs_from == "requested":
        return load_cqsim(path)
    if requested_procs_from != "allocated":
        raise ValueError(f"requested_procs_from must be one of {', '.join(VARIANTS)}")
    # as load_cqsim reads it: the machine-size check off (CQSim keeps jobs wider than N)
    trace, _ = requested_from_allocated(read_swf(path, max_procs=2**62))
    return load_cqsim(trace)


def differences(ref: dict, ours: dict, tolerance: float = TOLERANCE) -> dict:
    """What of one run differs from CQSim's. ``ref`` and ``ours``: ``start``, ``end`` (int
    ``[n]``), ``class`` (int ``[n]``; compared where ``ref`` has it) and ``metrics`` (dict;
    :data:`METRICS` compared with :func:`jaxsched.conformance.base.value_error` ≤
    ``tolerance``). Returns ``{field: (first slice index, count)}`` for the job fields and
    ``{"metrics": [names]}``; empty when the run is exact."""
    from jaxsched.conformance.base import value_error

    out = {}
    for f in ("start", "end", "class"):
        if f in ref:
            d = np.flatnonzero(np.asarray(ours[f], np.int64) != np.asarray(ref[f], np.int64))
            if d.size:
                out[f] = (int(d[0]), int(d.size))
    m = ours.get("metrics") or {}
    bad = [k for k in METRICS if value_error(ref["metrics"][k], m.get(k)) > tolerance]
    if bad:
        out["metrics"] = bad
    return out


def describe(diff: dict) -> str:
    """:func:`differences` as words, e.g. ``start 3 jobs, first at slice index 7; metrics
    avg_wait``."""
    parts = [f"{f} {v[1]} jobs, first at slice index {v[0]}" for f, v in diff.items()
             if f != "metrics"]  # fmt: skip
    if "metrics" in diff:
        parts.append("metrics " + ",".join(diff["metrics"]))
    return "; ".join(parts)


def cqsim_schedule(a, trace: str, mode: str, jobs) -> dict | None:
    """CQSim's run of one slice: ``{"start": [...] (slice order), "wall_s"}`` from the cache,
    else run (master modes, ``--cqsim`` given) and cached; None if unavailable."""
    p = cache_path(a.cache, trace, mode, jobs.start, jobs.n_jobs)
    if p.is_file():
        return json.loads(p.read_text())
    if a.cached_only:
        return None
    if mode in MASTER and a.cqsim is not None:
        r = CR.run_cqsim(a.cqsim, jobs, 0, f"a{jobs.start}", MASTER[mode])
    elif mode in DRAS and a.cqsim_dras is not None:
        r = CR.run_cqsim_dras(a.cqsim_dras, jobs, DRAS[mode], 0, f"a{jobs.start}")
    else:
        return None
    sched = r["schedule"]
    missing = [int(j) for j in jobs.job_id.tolist() if int(j) not in sched]
    if missing:
        raise CR.CQSimUnavailable(f"{trace} a{jobs.start} {mode}: job {missing[0]} not in output")
    ids = jobs.job_id.tolist()
    out = {"trace": trace, "mode": mode, "start_job": jobs.start, "jobs": jobs.n_jobs,
           "commit": COMMITS["master" if mode in MASTER else "dras"],
           "wall_s": round(r["wall_s"], 3), "start": [sched[int(j)][0] for j in ids],
           "end": [sched[int(j)][1] for j in ids]}  # fmt: skip
    if trace.endswith(VARIANTS["allocated"]):
        out["requested_procs_from"] = "allocated"
    if mode in DRAS:
        out["class"] = [sched[int(j)][2] for j in ids]
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(out))
    tmp.replace(p)
    return out


def oracle_run(jobs, mode: str) -> dict:
    """The oracle's run of one slice: ``start``, ``end``, ``class`` (int64 ``[n]``) and its own
    ``metrics`` (:func:`jaxsched.sim.oracle_cqsim.cqsim_metrics`, with its logged utilisation)."""
    from jaxsched.sim import oracle_cqsim as O

    kw = (
        {"mode": mode} if mode in MASTER else {"mode": "dras", "policy": O.fixed_policy(DRAS[mode])}
    )
    r = O.simulate_cqsim(jobs.submit, jobs.nodes, jobs.run, jobs.req_time,
                         num_nodes=jobs.num_nodes, **kw)  # fmt: skip
    met = O.cqsim_metrics(jobs.submit, jobs.nodes, jobs.run, r.start, num_nodes=jobs.num_nodes,
                          util=r.util)  # fmt: skip
    return {"start": np.asarray(r.start, np.int64), "end": np.asarray(r.end, np.int64),
            "class": np.asarray(r.cls, np.int64), "metrics": met}  # fmt: skip


def reference_run(jobs, ref: dict) -> dict:
    """CQSim's run of one slice (a cached schedule) in :func:`differences`' form: its start
    times, its end times (start + run for a slice cached without them), its classes where
    known, and the reference files' metrics of its start times."""
    from jaxsched.sim.cqsim.run import cqsim_metrics

    st = np.asarray(ref["start"], np.int64)
    out = {"start": st, "end": np.asarray(ref["end"], np.int64) if "end" in ref else st + jobs.run,
           "metrics": cqsim_metrics(jobs.submit, jobs.run, jobs.nodes, st, jobs.num_nodes)}  # fmt: skip
    if "class" in ref:
        out["class"] = np.asarray(ref["class"], np.int64)
    return out


def around(jobs, i: int, cols: dict, k: int = 3) -> str:
    """The jobs ``i-k … i+k`` of a slice as rows (the first diverging job marked ``>``)."""
    names = list(cols)
    rows = [f"    {'':1} {'idx':>5} {'id':>8} {'submit':>9} {'nodes':>5} {'run':>7} {'req':>7} "
            + " ".join(f"{c:>9}" for c in names)]  # fmt: skip
    for x in range(max(0, i - k), min(jobs.n_jobs, i + k + 1)):
        rows.append(
            f"    {'>' if x == i else ' '} {x:>5} {int(jobs.job_id[x]):>8} {int(jobs.submit[x]):>9} "
            f"{int(jobs.nodes[x]):>5} {int(jobs.run[x]):>7} {int(jobs.req_time[x]):>7} "
            + " ".join(f"{int(cols[c][x]):>9}" for c in names)
        )
    return "\n".join(rows)


def sweep_one(a, trace: str, tr, mode: str, ks) -> dict:
    """One trace (``trace``: the cache key, the stem plus the variant's suffix) in one mode."""
    from jaxsched.sim.cqsim.run import simulate_cqsim
    from jaxsched.workload.cqsim import cqsim_slice

    row = {"trace": trace.split("+")[0], "mode": mode, "slices_total": len(ks), "checked": 0,
           "exact_jax": 0, "exact_oracle": 0, "failing": [], "not_checked": [],
           "compared": ["start", "end", "class", "metrics"]}  # fmt: skip
    if a.requested_procs_from != "requested":
        row["requested_procs_from"] = a.requested_procs_from
    for k in ks:
        jobs = cqsim_slice(tr, k, a.jobs)
        cached = cqsim_schedule(a, trace, mode, jobs)
        if cached is None:
            row["not_checked"].append(k)
            continue
        ref = reference_run(jobs, cached)
        t0 = time.perf_counter()
        got = simulate_cqsim(jobs, (mode,))[0]
        t_ours = time.perf_counter() - t0
        runs = {"jax": {"start": got.start, "end": got.end, "class": np.asarray(got.cls, np.int64),
                        "metrics": got.metrics}}  # fmt: skip
        if not a.no_oracle:
            runs["oracle"] = oracle_run(jobs, mode)
        row["checked"] += 1
        bad = {}
        for name, run in runs.items():
            d = differences(ref, run)
            row[f"exact_{name}"] += int(not d)
            if d:
                bad[name] = d
        status = "exact" if not bad else "DIFFERENT " + " | ".join(
            f"{n}: {describe(d)}" for n, d in bad.items())  # fmt: skip
        print(f"{trace} {mode} a{k}: CQSim {cached.get('wall_s', 0):.1f} s, ours {t_ours:.1f} s; "
              f"{status}", flush=True)  # fmt: skip
        if bad:
            row["failing"].append({"start": k, **bad})
            first = [v[0] for d in bad.values() for f, v in d.items() if f != "metrics"]
            if first:
                cols = {"cqsim": ref["start"], **{n: r["start"] for n, r in runs.items()}}
                if "class" in ref:
                    cols.update({"cqsim_cls": ref["class"],
                                 **{f"{n}_cls": r["class"] for n, r in runs.items()}})  # fmt: skip
                print(around(jobs, min(first), cols), flush=True)
    return row


def write_ref(a, trace: str, tr, modes, ks, path: Path) -> int:
    """The cached CQSim runs of ``ks`` (slices cached in every mode) as a reference file."""
    from jaxsched.sim.cqsim.run import cqsim_metrics
    from jaxsched.workload.cqsim import cqsim_slice

    slices = []
    for k in ks:
        jobs = cqsim_slice(tr, k, a.jobs)
        refs = {m: cqsim_schedule(a, trace, m, jobs) for m in modes}
        if any(v is None for v in refs.values()):
            continue
        runs = []
        for m, ref in refs.items():
            st = np.asarray(ref["start"], np.int64)
            bf, pol = (MASTER[m], "fcfs") if m in MASTER else (3, DRAS[m])
            run = {"mode": m, "branch": "master" if m in MASTER else "dras", "backfill": bf,
                   "policy": pol, "start": st.tolist(), "end": (st + jobs.run).tolist()}  # fmt: skip
            if "class" in ref:
                run["class"] = ref["class"]
            run["metrics"] = cqsim_metrics(jobs.submit, jobs.run, jobs.nodes, st, tr.num_nodes)
            runs.append(run)
        inp = {"id": jobs.job_id, "submit": jobs.submit, "nodes": jobs.nodes, "run": jobs.run,
               "req_time": jobs.req_time}  # fmt: skip
        slices.append({"start": k, "jobs": jobs.n_jobs,
                       "input": {x: v.tolist() for x, v in inp.items()}, "runs": runs})  # fmt: skip
    doc = {"schema": "cqsim-reference/1", "trace": f"{trace}.swf.gz",
           "reference_commits": COMMITS, "machine_size": tr.num_nodes,
           "loaded_jobs": tr.loaded_jobs, "jobs_per_slice": a.jobs, "slices": slices}  # fmt: skip
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    return len(slices)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=None)
    ap.add_argument("--trace", default=",".join(TRACES), help="trace stems, comma-separated")
    ap.add_argument("--mode", default="easy,cons,none", help="modes, comma-separated")
    ap.add_argument("--jobs", type=int, default=2000, help="jobs per slice")
    ap.add_argument("--slices", default=None, help="slice numbers a:b (Python range)")
    ap.add_argument("--starts", default=None, help="explicit first jobs, comma-separated")
    ap.add_argument("--cqsim", default=None, help="a checkout of SPEAR-UIC/CQSim (root or src/)")
    ap.add_argument(
        "--cqsim-dras",
        default=None,
        help="a checkout of CQSim's DRAS branch (root or PG/), for the dras-* modes",
    )
    ap.add_argument(
        "--requested-procs-from",
        choices=tuple(VARIANTS),
        default="requested",
        help="'allocated': field 8 from field 5 where it is -1 (CTC-SP2; module docstring)",
    )
    ap.add_argument("--cache", type=Path, default=Path("runs/cqsim-sweep"))
    ap.add_argument("--cached-only", action="store_true", help="check cached slices only")
    ap.add_argument("--no-oracle", action="store_true")
    ap.add_argument("--write-ref", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    for checkout, src in ((a.cqsim, CR.cqsim_src), (a.cqsim_dras, CR.cqsim_dras_src)):
        try:
            if checkout is not None:
                src(checkout)
        except CR.CQSimUnavailable as e:
            print(f"cqsim_sweep: error: {e}", file=sys.stderr)
            return 2
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    from jaxsched.errors import SWFError

    if a.write_ref is not None and a.requested_procs_from != "requested":
        print("cqsim_sweep: error: --write-ref writes the plain trace's slices only "
              "(jaxsched conformance loads the plain trace)", file=sys.stderr)  # fmt: skip
        return 2
    modes = [m for m in a.mode.split(",") if m]
    for m in modes:
        if m not in MASTER and m not in DRAS:
            print(f"cqsim_sweep: error: unknown mode {m!r}", file=sys.stderr)
            return 2
    rows = []
    for stem in [t.removesuffix(".swf.gz") for t in a.trace.split(",") if t]:
        trace = stem + VARIANTS[a.requested_procs_from]  # the cache key
        try:
            tr = load_trace(_shared(a.shared) / "traces" / f"{stem}.swf.gz", a.requested_procs_from)
        except SWFError as e:  # CTC-SP2: field 8 (requested processors) is -1 on every line
            print(f"{trace}: 0 slices: {e}", flush=True)
            for m in modes:
                rows.append({"trace": stem, "mode": m, "slices_total": 0, "checked": 0,
                             "exact_jax": 0, "exact_oracle": 0, "failing": [],
                             "not_checked": [], "note": str(e)})  # fmt: skip
            continue
        ks = list(range(0, tr.loaded_jobs - a.jobs + 1, a.jobs))
        if a.slices:
            lo, hi = (int(x) if x else None for x in a.slices.split(":"))
            ks = ks[lo:hi]
        if a.starts:
            ks = [int(x) for x in a.starts.split(",")]
        if a.write_ref is not None:
            n = write_ref(a, trace, tr, modes, ks, a.write_ref)
            print(f"{a.write_ref}: {n} slices of {trace}")
            continue
        for m in modes:
            row = sweep_one(a, trace, tr, m, ks)
            summary = {k: v for k, v in row.items() if k != "not_checked"}
            summary["not_checked"] = len(row["not_checked"])
            print(json.dumps(summary), flush=True)
            rows.append(row)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
