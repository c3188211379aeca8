"""Look-ahead planners (issue 63) on a trace's held-out jobs, against the strongest single
heuristic × backfilling cell chosen on a validation split, with the per-sequence-best
(hindsight) ceiling over the cells printed as a ceiling.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/planners_heldout.py TRACE
        [--split test|validation] [--sequences N] [--jobs 1024] [--seed S]
        [--planners 'window:n=32;rollout:f3,k=8,h=64'] [--out DIR] [--report-only]
        [--json FILE]

Splits (as benchmarks/paper/baselines_heldout.py draws its starts, ``np.sort(default_rng(seed)
.integers(A, B - jobs + 1, size=N))``): ``test`` = jobs [0.6 n, n) of the trace's n jobs (seed
47, 200 sequences by default), ``validation`` = the 10 % of jobs just before it, [0.5 n, 0.6 n)
(seed 46, 50 sequences); where that 10 % is shorter than two sequences (the bundled Lublin
traces' 10,000 jobs: 1,000) it reaches back to ``2 × jobs`` jobs before the test part
([3952, 6000) there).  Compat mode (the reference SchedGym, ``--compat rlscheduler``);
``--correct``: the correct mode, cells × ``easy``, ``easy-sjbf`` (folder ``TRACE-correct``).

Per sequence, ``OUT/seq-III.json`` (resumable: a rerun computes only what a file lacks) holds
the bsld of every cell (13 heuristics × rlscheduler, rlscheduler-sjbf) and of every planner
with its compute counters.  The report (``--report-only`` reads the files and computes
nothing): each cell's mean; the baseline = the cell with the lowest mean on the *validation*
split's files (never chosen on the test sequences; ``--baseline P/B`` overrides); each planner's
mean and paired difference to the baseline (mean ± standard error over sequences, % of the
baseline mean, and in standard errors); the per-sequence best of the 24 cells (the window
planner's default cells) as a hindsight ceiling; the share of the gap baseline → ceiling that
the planner closes; decisions per second (the whole planned run's wall time, one core) and,
per real decision, the decisions its forecasts simulated and the jobs they started (committed
and backfilled; "–" for files written before that counter existed).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

from jaxsched.fileio import atomic_write  # noqa: E402
from jaxsched.planning import DEFAULT_POLICIES, planner_policy, run_planner  # noqa: E402
from jaxsched.sim import oracle as O  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BFS = ("rlscheduler", "rlscheduler-sjbf")
#: the cells' backfilling orders in the correct mode (``--correct``)
CORRECT_BFS = ("easy", "easy-sjbf")


def bfs_of(recs: list) -> tuple:
    """The backfilling orders of the files' cells (compat's, or the correct mode's)."""
    return CORRECT_BFS if recs and "f1/easy" in recs[0]["cells"] else BFS


SPLITS = {"test": (0.6, 1.0, 47, 200), "validation": (0.5, 0.6, 46, 50)}
DEFAULT_PLANNERS = "window:n=32;window:n=8;rollout:f3,k=8,h=64"


def split_starts(n: int, split: str, jobs: int, seed: int | None, sequences: int | None):
    a, b, s0, n0 = SPLITS[split]
    lo, hi = int(a * n), int(b * n) if b < 1 else n
    if split == "validation" and hi - lo < 2 * jobs:  # a short trace (Lublin's 10,000 jobs)
        lo = max(0, hi - 2 * jobs)
    if hi - jobs < lo:
        raise SystemExit(f"{split} range [{lo}, {hi}) is shorter than one {jobs}-job sequence")
    seed = s0 if seed is None else seed
    size = n0 if sequences is None else sequences
    starts = np.sort(np.random.default_rng(seed).integers(lo, hi - jobs + 1, size=max(size, n0)))
    # fewer than the split's sequences: an evenly spaced subset of its sorted starts, keeping
    # their positions (the file names), so that a later full run reuses the files
    pos = np.unique(np.linspace(0, len(starts) - 1, size).round().astype(int))
    return lo, hi, seed, starts, pos


def out_dir(trace: str, split: str, correct: bool = False) -> Path:
    stem = Path(trace).name.split(".swf")[0] + ("-correct" if correct else "")
    return REPO / "benchmarks" / "data" / "planners" / stem / split


def _window(jobs, st: int, L: int) -> dict:
    sl = slice(st, st + L)
    return dict(submit=jobs.submit[sl], run=jobs.run[sl], req_time=jobs.req_time[sl],
                procs=jobs.procs[sl])  # fmt: skip


def run_sequence(jobs, st: int, L: int, planners: list, path: Path, compat: bool = True) -> dict:
    rec = json.loads(path.read_text()) if path.exists() else {}
    if rec.get("start", st) != st or rec.get("jobs", L) != L:
        raise SystemExit(f"{path} is for another sequence; move it away")
    rec.update(start=st, jobs=L)
    cells, plans = rec.setdefault("cells", {}), rec.setdefault("planners", {})
    a = _window(jobs, st, L)
    kw = dict(num_nodes=jobs.num_nodes, procs_per_node=jobs.procs_per_node)

    def bsld(starts):
        return O.metrics(a["submit"], a["run"], a["procs"], starts, num_procs=jobs.num_procs,
                         compat=compat)["bsld"]  # fmt: skip

    changed = False
    for p in O.POLICIES:
        for b in BFS if compat else CORRECT_BFS:
            if f"{p}/{b}" not in cells:
                cells[f"{p}/{b}"] = bsld(O.simulate(**a, **kw, policy=p, backfill=b,
                                                    compat=compat))  # fmt: skip
                changed = True
    for name in planners:
        if name in plans:
            continue
        t0 = time.perf_counter()
        res, info = run_planner(planner_policy(name), **a, **kw, compat=compat)
        info["seconds"] = time.perf_counter() - t0
        info["bsld"] = bsld(res.starts)
        plans[name] = info
        changed = True
        atomic_write(path, json.dumps(rec, indent=1, sort_keys=True))  # each planner as it ends
    if changed:
        atomic_write(path, json.dumps(rec, indent=1, sort_keys=True))
    return rec


def load(folder: Path) -> list:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("seq-*.json"))]


def se(v) -> float:
    v = np.asarray(v, float)
    return float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan


def best_cell(recs: list) -> tuple:
    keys = [f"{p}/{b}" for p in DEFAULT_POLICIES for b in bfs_of(recs)]
    means = {k: float(np.mean([r["cells"][k] for r in recs])) for k in keys}
    return min(means, key=means.get), means


def report(recs: list, baseline: str, how: str, planners: list | None = None) -> str:
    keys = [f"{p}/{b}" for p in DEFAULT_POLICIES for b in bfs_of(recs)]
    out = []
    base = np.array([r["cells"][baseline] for r in recs])
    ceil = np.array([min(r["cells"][k] for k in keys) for r in recs])
    bm, cm = base.mean(), ceil.mean()
    out.append(f"{len(recs)} sequences; baseline {baseline} ({how}): {bm:.1f} ± {se(base):.1f}")
    d = ceil - base
    out.append(f"hindsight ceiling (per-sequence best of {len(keys)} cells): {cm:.1f} ± "
               f"{se(ceil):.1f}; vs baseline {d.mean():+.1f} ± {se(d):.1f} "
               f"({100 * d.mean() / bm:+.1f} ± {100 * se(d) / bm:.1f} %)")  # fmt: skip
    cells = {k: float(np.mean([r["cells"][k] for r in recs])) for k in keys}
    top = sorted(cells, key=cells.get)[:6]
    out.append("best cells on these sequences (mean): " +
               ", ".join(f"{k} {cells[k]:.1f}" for k in top))  # fmt: skip
    out.append("| planner | n | bsld mean ± s.e. | − baseline (paired) | % | s.e.s | gap closed "
               "| decisions/s | sim. decisions/decision | sim. jobs/decision |")  # fmt: skip
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    names = planners or sorted({n for r in recs for n in r.get("planners", {})})
    for name in names:
        rs = [r for r in recs if name in r.get("planners", {})]
        if not rs:
            continue
        v = np.array([r["planners"][name]["bsld"] for r in rs])
        b = np.array([r["cells"][baseline] for r in rs])
        c = np.array([min(r["cells"][k] for k in keys) for r in rs])
        dd = v - b
        s = se(dd)
        gap = (b.mean() - v.mean()) / (b.mean() - c.mean()) if b.mean() > c.mean() else math.nan
        dec = sum(r["planners"][name]["decisions"] for r in rs)
        secs = sum(r["planners"][name]["seconds"] for r in rs)
        sim = sum(r["planners"][name]["simulated_decisions"] for r in rs)
        jobs = [r["planners"][name].get("simulated_jobs") for r in rs]
        jobs = f"{sum(jobs) / dec:.1f}" if None not in jobs else "–"
        out.append(f"| `{name}` | {len(rs)} | {v.mean():.1f} ± {se(v):.1f} | {dd.mean():+.1f} ± "
                   f"{s:.1f} | {100 * dd.mean() / b.mean():+.1f} ± {100 * s / b.mean():.1f} | "
                   f"{dd.mean() / s if s > 0 else math.nan:+.1f} | {100 * gap:.0f} % | "
                   f"{dec / secs:.0f} | {sim / dec:.1f} | {jobs} |")  # fmt: skip
    return "\n".join(out)


def summary(recs: list, baseline: str, planners: list | None = None) -> dict:
    """The report's figures as numbers (``--json``): the baseline, the ceiling, the test's own
    best cell and, per planner, its mean, paired difference to the baseline and to that cell
    (mean, s.e., %), the share of the gap closed and the compute per real decision."""
    keys = [f"{p}/{b}" for p in DEFAULT_POLICIES for b in bfs_of(recs)]
    own, _ = best_cell(recs)
    out = {"sequences": len(recs), "baseline": baseline, "own_best_cell": own, "planners": {}}
    names = planners or sorted({n for r in recs for n in r.get("planners", {})})
    for name in names:
        rs = [r for r in recs if name in r.get("planners", {})]
        if not rs:
            continue
        v = np.array([r["planners"][name]["bsld"] for r in rs])
        b = np.array([r["cells"][baseline] for r in rs])
        o = np.array([r["cells"][own] for r in rs])
        c = np.array([min(r["cells"][k] for k in keys) for r in rs])
        dec = sum(r["planners"][name]["decisions"] for r in rs)
        out["planners"][name] = {
            "sequences": len(rs), "mean": float(v.mean()), "se": se(v),
            "baseline_mean": float(b.mean()), "diff": float((v - b).mean()), "diff_se": se(v - b),
            "pct": float(100 * (v - b).mean() / b.mean()),
            "own_best_mean": float(o.mean()), "diff_own": float((v - o).mean()),
            "diff_own_se": se(v - o), "pct_own": float(100 * (v - o).mean() / o.mean()),
            "ceiling_mean": float(c.mean()), "ceiling_diff": float((c - b).mean()),
            "ceiling_diff_se": se(c - b),
            "gap_closed": float((b.mean() - v.mean()) / (b.mean() - c.mean()))
            if b.mean() > c.mean() else None,
            "decisions": int(dec),
            "seconds": float(sum(r["planners"][name]["seconds"] for r in rs)),
            "simulated_decisions_per_decision":
                sum(r["planners"][name]["simulated_decisions"] for r in rs) / dec,
        }  # fmt: skip
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--split", choices=sorted(SPLITS), default="test")
    ap.add_argument("--sequences", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--planners", default=DEFAULT_PLANNERS, help="';'-separated names")
    ap.add_argument("--out", default=None)
    ap.add_argument("--baseline", default=None, metavar="P/B")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--correct", action="store_true",
                    help="the correct mode (EASY, EASY-SJBF cells; folder TRACE-correct)")  # fmt: skip
    ap.add_argument("--json", default=None, metavar="FILE", help="also write the figures")
    args = ap.parse_args(argv)
    planners = [p for p in args.planners.split(";") if p]
    for p in planners:
        planner_policy(p)  # a bad name fails before any work
    folder = Path(args.out) if args.out else out_dir(args.trace, args.split, args.correct)
    if not args.report_only:
        jobs = read_swf(args.trace).jobs("rlscheduler")
        lo, hi, seed, starts, pos = split_starts(jobs.n_jobs, args.split, args.jobs, args.seed,
                                            args.sequences)  # fmt: skip
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"trace": Path(args.trace).name, "split": args.split, "range": [lo, hi],
                "seed": seed, "jobs": args.jobs, "starts": [int(s) for s in starts],
                "compat": None if args.correct else "rlscheduler"}  # fmt: skip
        atomic_write(folder / "split.json", json.dumps(meta, indent=1))
        t0 = time.perf_counter()
        for m, i in enumerate(pos):
            st = int(starts[i])
            run_sequence(jobs, st, args.jobs, planners, folder / f"seq-{i:03d}.json",
                         compat=not args.correct)  # fmt: skip
            print(f"[{m + 1}/{len(pos)}] seq {i} start {st} ({time.perf_counter() - t0:.0f} s)",
                  flush=True)  # fmt: skip
    recs = load(folder)
    if args.baseline:
        baseline, how = args.baseline, "given"
    else:
        vfolder = folder.parent / "validation"
        vrecs = load(vfolder) if vfolder.is_dir() else []
        if not vrecs:
            print(f"(no validation files in {vfolder}: the baseline is chosen on these "
                  "sequences, which is only fair for the validation split itself)")  # fmt: skip
            vrecs = recs
        baseline, _ = best_cell(vrecs)
        how = f"best mean of the cells on {len(vrecs)} validation sequences"
    print(report(recs, baseline, how, planners))
    if args.json:
        atomic_write(args.json, json.dumps(summary(recs, baseline, planners), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
