"""The stronger baselines of issue 47 §2 on a trace's held-out test jobs: heuristics (and tuned
priorities) × backfilling modes (EASY, EASY with shortest-job-first backfilling, EASY++), each
cell the mean over the same sequences ± its standard error and its paired difference to one
reference cell.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/baselines_heldout.py TRACE
        [--test-range A,B] [--sequences 50] [--jobs 1024] [--seed 47]
        [--policy fcfs,sjf,f1[,tuned:DIR]] [--backfill none,easy,easy-sjbf,easy++]
        [--metric bsld] [--compat] [--versus POLICY/BACKFILL]

Sequences start uniformly (``default_rng(seed).integers``) in ``[A, B - jobs]`` of the job
range ``[A, B)`` (default: the last 40 % of the trace's jobs, the planned test split), so they
hold only test jobs. ``--versus`` defaults to the plain-EASY heuristic with the lowest mean
(``easy``, or ``rlscheduler`` with ``--compat``); nothing is chosen on these sequences except
that reference cell, which the table names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

from jaxsched import formatting as F  # noqa: E402
from jaxsched.sim.evaluate import evaluate, standard_error, use_all_cpu_cores  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--test-range", default=None, metavar="A,B")
    ap.add_argument("--sequences", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--policy", default="fcfs,sjf,f1")
    ap.add_argument("--backfill", default=None)
    ap.add_argument("--metric", default="bsld")
    ap.add_argument("--compat", action="store_true")
    ap.add_argument("--versus", default=None, metavar="POLICY/BACKFILL")
    args = ap.parse_args(argv)
    use_all_cpu_cores()
    jobs = read_swf(args.trace).jobs("rlscheduler")
    n = jobs.n_jobs
    lo, hi = (int(0.6 * n), n) if args.test_range is None else map(int, args.test_range.split(","))
    if hi - args.jobs < lo:
        raise SystemExit(f"test range [{lo}, {hi}) is shorter than one {args.jobs}-job sequence")
    starts = np.sort(np.random.default_rng(args.seed).integers(lo, hi - args.jobs + 1,
                                                               size=args.sequences))  # fmt: skip
    plain = "rlscheduler" if args.compat else "easy"
    default_bf = "none,rlscheduler,rlscheduler-sjbf" if args.compat else \
        "none,easy,easy-sjbf,easy++"  # fmt: skip
    backfills = (args.backfill or default_bf).split(",")
    res = evaluate(jobs, starts, args.jobs, args.policy.split(","), backfills,
                   compat=args.compat, metrics=[args.metric])  # fmt: skip
    by = res._cells(args.metric)
    mean = res.table(args.metric)
    if args.versus:
        ref = tuple(args.versus.rsplit("/", 1))
    else:
        heur = [k for k in mean if k[1] == plain and not k[0].startswith("tuned")]
        ref = min(heur, key=mean.get)
    ref_v = np.asarray([v for s in sorted(by[ref]) for v in by[ref][s]])
    print(f"{Path(args.trace).name}: {len(starts)} sequences x {args.jobs} jobs from jobs "
          f"[{lo}, {hi}), {'compat' if args.compat else 'correct'} mode, {args.metric}; "
          f"paired difference to {ref[0]} / {ref[1]}")  # fmt: skip
    print("| policy | backfilling | mean ± s.e. | − reference (paired) |")
    print("|---|---|---:|---:|")
    for p in res.policies:
        for b in res.backfills:
            v = np.asarray([x for s in sorted(by[(p, b)]) for x in by[(p, b)][s]])
            d = v - ref_v
            name = "tuned:" + Path(p[6:]).name if p.startswith("tuned:") else p
            print(f"| {name} | {b} | {F.number(v.mean())} ± {F.std_error(standard_error(v))} | "
                  f"{F.number(d.mean(), signed=True)} ± {F.std_error(standard_error(d))} |")  # fmt: skip
    print(f"({res.timing.get('run_s', 0):.0f} s engine, "
          f"{res.timing.get('easypp_s', 0):.0f} s EASY++)")  # fmt: skip
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
