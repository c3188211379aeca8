"""Backfilling runs vs the engine's queue / running-list capacities, side by side in one run.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/capacities.py [--trace PATH] [--seed 1]
        [--sequences 10] [--length 1024] [--policies fcfs,wfp3,unicep,sjf,f1]
        [--backfill rlscheduler] [--capacities 256/64,64/64,128/64,128/32] [--repeat 3]

For each ``Q/R`` pair, ``evaluate(..., queue_cap=Q, run_cap=R)`` (the first-try capacities; runs
that overflow are re-run with larger ones, so the schedules never change) is called ``--repeat``
times on the same runs; the best ``run_s`` is printed with the passes it made and its ratio to
the first pair (the default capacities are 256/64). Compile time is excluded (every pair is
called once before the timed calls). Also printed: the longest queue and the most running jobs
of any run, from the start times, the lower bounds of any capacity that needs no re-run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
import jax  # noqa: E402

# a whole program: 64-bit mode for its process (jaxsched/precision.py)
jax.config.update("jax_enable_x64", True)
from benchmarks.common import REPO  # noqa: E402
from jaxsched.sim.evaluate import evaluate, window_arrays  # noqa: E402
from jaxsched.workload import read_swf, reference_starts  # noqa: E402


def peak_queue_and_running(arrays: dict, start_times: np.ndarray) -> tuple:
    """Longest queue and most running jobs over all runs: ``start_times`` int64 ``[S, ..., L]``
    (sequence axis first, as :class:`EvalResult` gives them), ``arrays`` the sequences' jobs."""
    S, L = start_times.shape[0], start_times.shape[-1]
    st = start_times.reshape(S, -1, L)
    q_max = r_max = 0
    for s in range(S):
        sub, run = arrays["submit"][s], arrays["run"][s]
        for x in st[s]:
            # queue length just after each submit (ties: all arrivals of that second), and
            # running jobs just after each start
            q = np.searchsorted(np.sort(sub), sub, side="right") - np.searchsorted(
                np.sort(x), sub, side="right"
            )
            end = x + run
            r = np.searchsorted(np.sort(x), x, side="right") - np.searchsorted(
                np.sort(end), x, side="right"
            )
            q_max, r_max = max(q_max, int(q.max())), max(r_max, int(r.max()))
    return q_max, r_max


def benchmark(
    trace=REPO / "traces" / "lublin-1.swf",
    seed=1,
    n_seq=10,
    length=1024,
    policies=("fcfs", "wfp3", "unicep", "sjf", "f1"),
    backfill="rlscheduler",
    capacities=((64, 64), (256, 64), (192, 96), (256, 96)),
    repeat=3,
    out=print,
):
    jobs = read_swf(trace).jobs("rlscheduler")
    starts = reference_starts(seed, n_seq, length, min(10000, jobs.n_jobs))
    rows = []
    for q, r in capacities:  # compile every configuration first
        res = evaluate(
            jobs,
            starts,
            length,
            list(policies),
            [backfill],
            compat=True,
            metrics=("bsld",),
            queue_cap=q,
            run_cap=r,
        )
    peak = peak_queue_and_running(window_arrays(jobs, starts, length), res.start_times)
    out(
        f"{trace.name}: {len(starts)} x {length} jobs, {len(policies)} policies, backfill "
        f"{backfill}; longest queue {peak[0]}, most running jobs {peak[1]} (approximate: "
        f"from the start times)"
    )
    for q, r in capacities:
        best = None
        for _ in range(max(1, repeat)):
            res = evaluate(
                jobs,
                starts,
                length,
                list(policies),
                [backfill],
                compat=True,
                metrics=("bsld",),
                queue_cap=q,
                run_cap=r,
            )
            best = res.timing["run_s"] if best is None else min(best, res.timing["run_s"])
        passes = " + ".join(
            f"{c['queue']}/{c['running']}:{c['runs']}" for c in res.timing["capacities"]
        )
        rows.append({"queue_cap": q, "run_cap": r, "run_s": best, "passes": passes})
    base = rows[0]["run_s"]
    for row in rows:
        out(
            f"  first try {row['queue_cap']:4d}/{row['run_cap']:<4d} run {row['run_s']:.3f} s "
            f"(x{base / row['run_s']:.2f} vs {rows[0]['queue_cap']}/{rows[0]['run_cap']})  "
            f"passes queue/running:runs {row['passes']}"
        )
    return {"peak": peak, "rows": rows}


def _pairs(text: str):
    try:
        return [tuple(int(v) for v in p.split("/")) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"capacities must look like 64/64,256/64, got {text!r}"
        ) from None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=REPO / "traces" / "lublin-1.swf")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sequences", type=int, default=10)
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--policies", default="fcfs,wfp3,unicep,sjf,f1")
    ap.add_argument("--backfill", default="rlscheduler")
    ap.add_argument("--capacities", type=_pairs, default=_pairs("256/64,64/64,128/64,128/32"))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    benchmark(
        a.trace,
        a.seed,
        a.sequences,
        a.length,
        a.policies.split(","),
        a.backfill,
        a.capacities,
        a.repeat,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
