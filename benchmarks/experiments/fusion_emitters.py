"""XLA:CPU's fusion emitters on and off, side by side: compile and run time of one fully
optimised ``evaluate`` (Lublin-1, ``--sequences`` × 1,024 jobs, SJF and F1, the reference's
backfilling), each setting in fresh processes (XLA reads ``XLA_FLAGS`` once per process),
alternating, best of ``--rounds``, no compile cache.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/fusion_emitters.py [--rounds 2] [--sequences 20]

The test suite turns the emitters off (tests/conftest.py: its compiles are a quarter cheaper);
the ``jaxsched`` commands keep them (the environment with backfilling steps 30 % slower
without them, RESULTS.md §5).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the checkout
FLAG = "--xla_cpu_use_fusion_emitters=false"

CHILD = """
import json, sys, time
import jax  # noqa: E402

# a whole program: 64-bit mode for its process (jaxsched/precision.py)
jax.config.update("jax_enable_x64", True)
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload import read_swf
jobs = read_swf(sys.argv[1]).jobs("rlscheduler")
n = int(sys.argv[2])
starts = [i * ((jobs.n_jobs - 1024) // n) for i in range(n)]
args = (jobs, starts, 1024, ["sjf", "f1"], ["rlscheduler"])
r = evaluate(*args, compat=True, metrics=["bsld"])
t = time.perf_counter()
evaluate(*args, compat=True, metrics=["bsld"])
print(json.dumps({"compile_s": r.timing["compile_s"], "run_s": time.perf_counter() - t}))
"""


def _one(emitters: bool, sequences: int) -> dict:
    env = dict(os.environ, JAXSCHED_CACHE="off", PYTHONPATH=str(REPO))
    flags = [f for f in env.get("XLA_FLAGS", "").split() if "fusion_emitters" not in f]
    env["XLA_FLAGS"] = " ".join(flags + ([] if emitters else [FLAG]))
    trace = str(REPO / "traces" / "lublin-1.swf")
    out = subprocess.run([sys.executable, "-c", CHILD, trace, str(sequences)], env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sequences", type=int, default=20)
    args = ap.parse_args(argv)
    best = {True: {}, False: {}}
    for _ in range(args.rounds):
        for emitters in (True, False):
            r = _one(emitters, args.sequences)
            for k, v in r.items():
                best[emitters][k] = min(v, best[emitters].get(k, float("inf")))
    print(f"evaluate, {args.sequences} x 1024 Lublin-1 jobs x 2 policies, best of {args.rounds}, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print("| emitters | compile s | run s |\n|---|---|---|")
    for emitters in (True, False):
        b = best[emitters]
        print(f"| {'on' if emitters else 'off'} | {b['compile_s']:.2f} | {b['run_s']:.3f} |")
    on, off = best[True], best[False]
    print(f"off / on: compile {off['compile_s'] / on['compile_s']:.2f}, "
          f"run {off['run_s'] / on['run_s']:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
