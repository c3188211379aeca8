"""Check the plain-Python oracle against the reference numbers, and time it.

    PYTHONPATH=. .venv/bin/python benchmarks/reference/check_reference.py [--shared DIR] [--repeat N]

1. every value of shared/reference/*-seq1024.json (reference SchedGym): prints the number of
   values, mismatches (relative error > 1e-9) and the maximum relative error per file;
2. CPU baseline: milliseconds per 1024-job sequence of jaxsched.sim.oracle.simulate per policy
   and backfill mode on Lublin-1 at the ten paper seed-1 starts (spec rlscheduler.md §8.2).
Exit status 1 if any reference value is off.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import shared_dir  # noqa: E402
from jaxsched.sim import oracle  # noqa: E402
from jaxsched.workload.swf import read_swf  # noqa: E402

REFERENCES = (
    ("lublin_256_new2-seq1024.json", "lublin_256_new2.swf.gz"),
    ("HPC2N-2002-2.2-cln-seq1024.json", "HPC2N-2002-2.2-cln.swf.gz"),
)
SEED1_STARTS = (1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085)
MODES = (
    ("none", True),
    ("rlscheduler", True),
    ("none", False),
    ("rlscheduler", False),
    ("easy", False),
)


def _load(shared: Path, name: str):
    jobs = read_swf(shared / "traces" / name).jobs(rules="rlscheduler")
    cols = (jobs.submit.tolist(), jobs.run.tolist(), jobs.req_time.tolist(), jobs.procs.tolist())
    return cols, int(jobs.num_nodes), jobs.num_procs, float(jobs.procs_per_node)


def check(shared: Path) -> bool:
    ok = True
    for ref_name, trace_name in REFERENCES:
        ref = json.loads((shared / "reference" / ref_name).read_text())
        cols, N, P, ppn = _load(shared, trace_name)
        cache, worst, bad = {}, 0.0, 0
        for row in ref["results"]:
            a, L = row["start"], row["jobs"]
            key = (a, L, row["policy"], row["backfill"])
            if key not in cache:
                s, r, q, n = (c[a : a + L] for c in cols)
                st = oracle.simulate(
                    s,
                    r,
                    q,
                    n,
                    num_nodes=N,
                    procs_per_node=ppn,
                    policy=row["policy"],
                    backfill=row["backfill"],
                )
                cache[key] = oracle.metrics(s, r, n, st, num_procs=P, compat=True)
            err = abs(cache[key][row["metric"]] - row["value"]) / abs(row["value"])
            worst = max(worst, err)
            bad += not err <= 1e-9
        print(
            f"{ref_name}: {len(ref['results'])} values, {bad} mismatches, "
            f"max relative error {worst:.3e}"
        )
        ok &= bad == 0
    return ok


def timing(shared: Path, repeat: int) -> None:
    cols, N, _, ppn = _load(shared, "lublin_256.swf.gz")
    windows = [tuple(c[a : a + 1024] for c in cols) for a in SEED1_STARTS]
    print(
        f"\nms per 1024-job sequence, Lublin-1, seed-1 starts (best of {repeat} "
        f"x {len(windows)} sequences)"
    )
    heads = [f"{bf}/{'compat' if c else 'correct'}" for bf, c in MODES]
    print(f"{'policy':10s}" + "".join(f"{h:>20s}" for h in heads))
    for policy in oracle.POLICIES:
        cells = []
        for bf, compat in MODES:
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                for w in windows:
                    oracle.simulate(
                        *w,
                        num_nodes=N,
                        procs_per_node=ppn,
                        policy=policy,
                        backfill=bf,
                        compat=compat,
                    )
                best = min(best, (time.perf_counter() - t0) / len(windows))
            cells.append(f"{best * 1e3:20.1f}")
        print(f"{policy:10s}" + "".join(cells))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-timing", action="store_true")
    args = ap.parse_args(argv)
    shared = shared_dir(args.shared, need="reference")
    ok = check(shared)
    if not args.no_timing:
        timing(shared, args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
