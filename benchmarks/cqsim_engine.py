"""CQSim engine mode: FCFS + EASY scheduling passes per second (spec dras.md §2, issue 17 §5).

Workload: B slices of 2,000 consecutive loaded jobs of SDSC-SP2 (CQSim's loading rules,
``jaxsched.workload.cqsim``), starting at 0, 2000, 4000, … One scheduling pass runs after every
submit and every finish, so a slice is 4,000 passes. Two ways are timed:

* ``single``: one compiled, unbatched run per slice (``simulate_cqsim``: each micro-step runs
  only its own phase), slices one after the other;
* ``vmap``: all B slices in one ``jit(vmap(run))`` call (``simulate_cqsim_batch``).

Compile time is measured apart (``lower().compile()`` of each program); throughput is the best
of ``--repeat`` executions after it. Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/cqsim_engine.py --batch 1,4 [--mode easy]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.sim.cqsim.run import _run_fn, sequence_of
from jaxsched.sim.cqsim.types import cq_params
from jaxsched.workload.cqsim import cqsim_slice, load_cqsim


def _shared(arg):
    return Path(arg or os.environ.get("JAXSCHED_SHARED") or Path("..") / "shared")


def _time(fn, args, repeat):
    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        best = min(best, time.perf_counter() - t0)
    return compile_s, best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=None)
    ap.add_argument("--mode", default="easy")
    ap.add_argument("--batch", default="1,4", help="slices per vmapped call, comma-separated")
    ap.add_argument("--length", type=int, default=2000)
    ap.add_argument("--queue-cap", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    tr = load_cqsim(_shared(a.shared) / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    N, L, Q = tr.num_nodes, a.length, a.queue_cap
    params = cq_params(a.mode)
    rows = []
    for B in [int(b) for b in a.batch.split(",")]:
        slices = [cqsim_slice(tr, i * L, L) for i in range(B)]
        seqs = [sequence_of(j) for j in slices]
        prio = jnp.zeros((L,), jnp.int32)
        c1, run1 = 0.0, 0.0
        for k, seq in enumerate(seqs):
            c, r, out = _time(_run_fn(N, Q, min(N, L), False), (seq, prio, params), a.repeat)
            assert int(out[2]) == 0, "queue capacity too small: raise --queue-cap"
            c1, run1 = (c if k == 0 else c1), run1 + r
        stack = lambda *x: jnp.stack(x)  # noqa: E731
        bseq = jax.tree_util.tree_map(stack, *seqs)
        bpar = jax.tree_util.tree_map(stack, *[params] * B)
        fn = _run_fn(N, Q, min(N, L), True)
        cb, rb, out = _time(fn, (bseq, jnp.zeros((B, L), jnp.int32), bpar), a.repeat)
        passes = int(jnp.sum(out[4]))
        row = {"batch": B, "passes": passes, "single_compile_s": round(c1, 2),
               "single_run_s": round(run1, 3), "single_passes_per_s": round(passes / run1),
               "vmap_compile_s": round(cb, 2), "vmap_run_s": round(rb, 3),
               "vmap_passes_per_s": round(passes / rb)}  # fmt: skip
        rows.append(row)
        print(json.dumps(row))
    if a.json:
        Path(a.json).write_text(json.dumps({"mode": a.mode, "length": L, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
