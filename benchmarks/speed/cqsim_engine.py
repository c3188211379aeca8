"""CQSim engine mode: FCFS + EASY scheduling passes per second (spec dras.md §2, issue 17 §5).

Workload: B slices of 2,000 consecutive loaded jobs of SDSC-SP2 (CQSim's loading rules,
``jaxsched.workload.cqsim``), starting at 0, 2000, 4000, … (``--stride``). One scheduling pass
runs after every submit and every finish, so a slice is 4,000 passes. Two ways are timed:

* ``single``: one compiled, unbatched run per slice (``simulate_cqsim``: each micro-step runs
  only its own phase), slices one after the other;
* ``vmap``: all B slices in one ``jit(vmap(run))`` call (``simulate_cqsim_batch``).

Compile time is measured apart (``lower().compile()`` of each program); throughput is the best
of ``--repeat`` executions after it.

``--cqsim DIR`` (a local checkout of SPEAR-UIC/CQSim, its root or ``src/``; ``--mode easy``
only) adds the reference side: CQSim itself, FCFS + EASY, on each slice of the largest batch,
one subprocess per slice and repeat, best of ``--repeat`` as on our side
(``benchmarks/reference/cqsim_reference.py``: settings, what is timed). Printed per slice: its wall time, the time of its simulation call alone, its passes and whether its
start times equal ours ("same schedule: N/N jobs" or the first difference); then one summary
row: CQSim passes/s (simulation alone and whole process) beside ours (unbatched and vmapped,
compile apart) and the ratios ours / CQSim. Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/speed/cqsim_engine.py --batch 1,4 [--mode easy]
        [--stride 20000] [--cqsim ~/src/CQSim [--cqsim-debug-lvl 0]]

``--stride`` spaces the slices' first jobs (default ``--length``: consecutive slices; 20000
gives the reference README's slices a0, a20000, a40000).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

# a whole program: 64-bit mode for its process (jaxsched/precision.py)
jax.config.update("jax_enable_x64", True)
from jaxsched.sim.cqsim.run import _run_fn, sequence_of
from jaxsched.sim.cqsim.types import cq_params
from jaxsched.workload.cqsim import cqsim_slice, load_cqsim

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import shared_dir, use  # noqa: E402

use("reference")
import cqsim_reference as CR  # noqa: E402  (the reference side; no JAX)


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


def _ours(tr, a, params, B: int):
    """Our side for the first B slices: the row (passes, compile and run times, passes/s,
    unbatched and vmapped), the slices and each slice's (start times, seconds) of its unbatched
    run."""
    N, L, Q = tr.num_nodes, a.length, a.queue_cap
    slices = [cqsim_slice(tr, i * (a.stride or L), L) for i in range(B)]
    seqs = [sequence_of(j) for j in slices]
    prio = jnp.zeros((L,), jnp.int32)
    c1, run1, starts = 0.0, 0.0, []
    for k, seq in enumerate(seqs):
        c, r, out = _time(_run_fn(N, Q, min(N, L), False), (seq, prio, params), a.repeat)
        assert int(out[2]) == 0, "queue capacity too small: raise --queue-cap"
        c1, run1 = (c if k == 0 else c1), run1 + r
        starts.append((jax.device_get(out[0]), r))
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
    return row, slices, starts


def _reference(a, slices, starts, ours: dict) -> dict:
    """CQSim on each slice (``--repeat`` subprocesses each, the best wall and simulation times
    kept), its schedule checked against ``starts``; prints one line per slice and returns the
    side-by-side summary row."""
    wall = sim = 0.0
    passes, same = 0, 0
    for jobs, (st, ours_s) in zip(slices, starts):
        runs = [CR.run_cqsim(a.cqsim, jobs, a.cqsim_debug_lvl, f"a{jobs.start}")
                for _ in range(a.repeat)]  # fmt: skip
        r = dict(runs[-1], wall_s=min(x["wall_s"] for x in runs))
        r["sim_s"] = min(x["sim_s"] for x in runs)
        verdict = CR.compare_starts(jobs, st, r["schedule"])
        same += verdict.startswith("same schedule")
        wall, sim, passes = wall + r["wall_s"], sim + r["sim_s"], passes + r["passes"]
        print(f"CQSim slice a{jobs.start}: {r['passes']} passes, wall {r['wall_s']:.2f} s, "
              f"simulation {r['sim_s']:.2f} s (ours unbatched {ours_s:.2f} s); {verdict}",
              flush=True)  # fmt: skip
    row = {"slices": len(slices), "cqsim_passes": passes, "ours_passes": ours["passes"],
           "schedules_same": f"{same}/{len(slices)}", "cqsim_debug_lvl": a.cqsim_debug_lvl,
           "cqsim_wall_s": round(wall, 2), "cqsim_sim_s": round(sim, 2),
           "cqsim_sim_passes_per_s": round(passes / sim),
           "cqsim_wall_passes_per_s": round(passes / wall),
           "ours_single_passes_per_s": ours["single_passes_per_s"],
           "ours_vmap_passes_per_s": ours["vmap_passes_per_s"],
           "ours_single_compile_s": ours["single_compile_s"],
           "ours_vmap_compile_s": ours["vmap_compile_s"],
           "ratio_single_vs_cqsim_sim": round(ours["single_passes_per_s"] * sim / passes, 2),
           "ratio_vmap_vs_cqsim_sim": round(ours["vmap_passes_per_s"] * sim / passes, 2)}  # fmt: skip
    print(json.dumps(row))
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=None)
    ap.add_argument("--mode", default="easy")
    ap.add_argument("--batch", default="1,4", help="slices per vmapped call, comma-separated")
    ap.add_argument("--length", type=int, default=2000)
    ap.add_argument("--stride", type=int, default=None, help="slice spacing (default --length)")
    ap.add_argument("--queue-cap", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cqsim", default=None, help="a checkout of SPEAR-UIC/CQSim (root or src/)")
    ap.add_argument("--cqsim-debug-lvl", type=int, default=0, help="CQSim's debug_lvl (shipped 3)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    try:
        if a.cqsim is not None:
            CR.cqsim_src(a.cqsim)
            if a.mode != "easy":
                raise CR.CQSimUnavailable(f"--cqsim runs FCFS + EASY only, not --mode {a.mode}")
    except CR.CQSimUnavailable as e:
        print(f"cqsim_engine: error: {e}", file=sys.stderr)
        return 2
    tr = load_cqsim(shared_dir(a.shared) / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    params = cq_params(a.mode)
    rows, ref = [], None
    for B in sorted(int(b) for b in a.batch.split(",")):
        row, slices, starts = _ours(tr, a, params, B)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.cqsim is not None:
        try:
            ref = _reference(a, slices, starts, rows[-1])
        except CR.CQSimUnavailable as e:
            print(f"cqsim_engine: error: {e}", file=sys.stderr)
            return 2
    if a.json:
        out = {"mode": a.mode, "length": a.length, "stride": a.stride, "rows": rows, "cqsim": ref}
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
