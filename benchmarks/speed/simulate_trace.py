"""Whole-trace simulation (``jaxsched simulate``): seconds to schedule every job of a trace,
as one compiled loop (``--no-progress``) and in chunks with a progress callback (the default,
a tqdm bar), each called twice (compile + run, then run); the two schedules must be
identical.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/simulate_trace.py [--trace FILE]
        [--policies fcfs,sjf] [--backfill none,easy] [--jobs N] [--json FILE]

Default trace: HPC2N (202,871 jobs) from the shared folder (``--shared DIR``, else
``$JAXSCHED_SHARED``, else ``../shared`` beside the checkout). Each path runs twice: the first
call compiles and runs, the second only runs (its compiled programs are cached in-process);
on a shared machine the run times vary by ±20 % from call to call. The chunked path reports progress about once a second
(``seconds_per_chunk=1``), each report a device-to-host round trip of the loop state.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import shared_dir  # noqa: E402


def _one_loop(jobs, length, policy, backfill):
    from jaxsched.sim.evaluate import evaluate

    res = evaluate(jobs, [0], length, [policy], [backfill], compat=False, metrics=["bsld"])
    return res.start_times[0, 0, 0]


def _chunked(jobs, length, policy, backfill, reports):
    from jaxsched.sim.chunked import schedule_window

    def progress(started, total):
        reports.append(started)

    return schedule_window(jobs, 0, length, policy, backfill, progress=progress)


def _twice(fn):
    """(first call's seconds, second call's seconds, result of the second)."""
    t0 = time.perf_counter()
    fn()
    t1 = time.perf_counter()
    out = fn()
    return t1 - t0, time.perf_counter() - t1, out


def main(argv=None) -> int:
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", help="SWF file (default: HPC2N from the shared folder)")
    ap.add_argument("--shared", help="the shared folder")
    ap.add_argument("--policies", default="fcfs,sjf")
    ap.add_argument("--backfill", default="none,easy")
    ap.add_argument("--jobs", type=int, help="the first N jobs only (default: all)")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)

    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    from jaxsched.workload import read_swf

    path = args.trace or shared_dir(args.shared) / "traces" / "HPC2N-2002-2.2-cln.swf.gz"
    jobs = read_swf(path).jobs("default")
    length = min(args.jobs or jobs.n_jobs, jobs.n_jobs)
    print(f"{Path(path).name}: {length:,} jobs, {jobs.num_procs} processors; "
          f"{jax.devices()[0].device_kind}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(
        "| policy | backfill | one loop: 1st call (compile + run) / 2nd (run) | chunked + "
        "progress: 1st / 2nd | reports | ratio of 2nd calls (chunked / one loop) | same "
        "schedule |"
    )
    print("|---|---|---|---|---|---|---|")
    rows = []
    for policy in args.policies.split(","):
        for backfill in args.backfill.split(","):
            f1, s1, a = _twice(lambda p=policy, b=backfill: _one_loop(jobs, length, p, b))
            reports: list[int] = []
            f2, s2, b = _twice(
                lambda p=policy, b=backfill, r=reports: _chunked(jobs, length, p, b, r)
            )
            n_reports = len(reports) // 2
            same = bool(np.array_equal(np.asarray(a), np.asarray(b)))
            row = dict(policy=policy, backfill=backfill, jobs=length, loop_first_s=f1,
                       loop_second_s=s1, chunked_first_s=f2, chunked_second_s=s2,
                       reports=n_reports, same=same)  # fmt: skip
            rows.append(row)
            print(f"| {policy} | {backfill} | {f1:.1f} s / {s1:.1f} s | {f2:.1f} s / {s2:.1f} s "
                  f"| {n_reports} | {s2 / s1:.2f} | {same} |", flush=True)  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
