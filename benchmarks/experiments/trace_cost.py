"""What building a program costs, apart from running it: JAX's trace, lowering and XLA
compile seconds of (a) SchedInspector's evaluation of a shipped inspector (a vmapped
``while_loop`` around the engine's batching rules) and (b) RLScheduler's tiny training update
(the tests' size) at several sequence lengths, with XLA's optimisations off as in the tests.
Notebook §25.10.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/trace_cost.py [--lengths 16,36] \
        [--rounds 2] [--old CHECKOUT] [--json FILE]

Every cell runs in a fresh Python process with the persistent compile cache off, the rounds
alternate, the best of the rounds is kept. ``--old CHECKOUT`` (e.g. ``git worktree add ../old
<commit>``) runs the same cells with that checkout first on ``PYTHONPATH`` in the same rounds
and prints new / old. The lengths' ratios are printed against the first length.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PHASES = ("trace", "lower", "compile")


def _burst_trace(path: Path, bursts: int = 30, per: int = 12, gap: int = 7000) -> Path:
    """Bursts of ``per`` whole-machine jobs one second apart, alternating 1000 s and 10 s."""
    lines = ["; MaxNodes: 4", "; MaxProcs: 4"]
    for b in range(bursts):
        for i in range(per):
            run, jid = (1000 if i % 2 == 0 else 10), b * per + i + 1
            lines.append(f"{jid} {b * gap + i} -1 {run} 4 -1 -1 4 {run} -1 1 1 1 -1 -1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def _phases(jitted, *args) -> dict:
    import time

    t0 = time.perf_counter()
    traced = jitted.trace(*args)
    t1 = time.perf_counter()
    lowered = traced.lower()
    t2 = time.perf_counter()
    lowered.compile()
    t3 = time.perf_counter()
    return {"trace": t1 - t0, "lower": t2 - t1, "compile": t3 - t2}


def cell_inspector(name: str) -> dict:
    """Build SchedInspector's evaluation of the shipped ``name`` on 6 sequences of 256 jobs."""
    import jax
    import jax.numpy as jnp

    from jaxsched import systems
    from jaxsched.systems.schedinspector import evaluate as ev
    from jaxsched.systems.schedinspector.config import load_jobs, make_env
    from jaxsched.workload import default_trace_path

    _, model = systems.load_model(name)
    jobs, wait = load_jobs(str(default_trace_path()), model.run.mode)
    env = make_env(model.run, jobs, wait, length=256, evaluation=True)
    starts = jnp.arange(6, dtype=jnp.int32) * 100 + 300
    return _phases(ev._runs, env, model.params, starts, jax.random.PRNGKey(0), False)


def cell_update(length: int) -> dict:
    """Build RLScheduler's training update at the tests' size (4 trajectories, 2 + 2 steps,
    no backfilling, reference semantics) on sequences of ``length`` jobs."""
    import jax

    from jaxsched.systems.rlscheduler.run import _run_config, _Trainers
    from jaxsched.workload import read_swf

    with tempfile.TemporaryDirectory() as tmp:
        trace = _burst_trace(Path(tmp) / "burst.swf")
        ppo = {"num_envs": 4, "train_pi_iters": 2, "train_v_iters": 2, "max_episode_steps": 36}
        rc = _run_config(trace, ppo=ppo, init_from=None, length=length, compat=True)
        jobs = read_swf(trace).jobs(rc.rules)
        trainer = _Trainers(jobs, rc, Path(tmp) / "unused", False, print).phase1
    return _phases(trainer.update, trainer.init(jax.random.PRNGKey(0)))


def _cell(spec: str) -> dict:
    import jax

    jax.config.update("jax_disable_most_optimizations", True)  # as tests/conftest.py
    kind, arg = spec.split("=", 1)
    return cell_inspector(arg) if kind == "inspector" else cell_update(int(arg))


def _run(checkout: Path, spec: str) -> dict:
    """One cell in a fresh process with ``checkout`` first on PYTHONPATH."""
    flags = os.environ.get("XLA_FLAGS", "")
    env = dict(os.environ, PYTHONPATH=str(checkout), JAXSCHED_CACHE="off",
               XLA_FLAGS=f"{flags} --xla_cpu_use_fusion_emitters=false".strip())  # fmt: skip
    proc = subprocess.run([sys.executable, __file__, "--cell", spec], cwd=checkout, env=env,
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"{checkout}: {spec} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", default="16,36", help="update sequence lengths (default 16,36)")
    ap.add_argument("--inspectors", default="si-lublin1-sjf,si-sdsc-sjf-bf-uw")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--old", type=Path, default=None, metavar="CHECKOUT")
    ap.add_argument("--json", type=Path, default=None, metavar="FILE")
    ap.add_argument("--cell", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.cell:
        print(json.dumps(_cell(args.cell)))
        return 0
    new = Path(__file__).resolve().parents[2]
    sides = {"new": new} if args.old is None else {"old": args.old.resolve(), "new": new}
    specs = [f"inspector={n}" for n in args.inspectors.split(",") if n]
    specs += [f"update={x}" for x in args.lengths.split(",") if x]
    best: dict = {}
    for r in range(args.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for spec in specs:
            for side in order:
                got = _run(sides[side], spec)
                cur = best.setdefault((side, spec), got)
                for p in PHASES:
                    cur[p] = min(cur[p], got[p])
    print(f"seconds, best of {args.rounds} rounds, one fresh process per cell, XLA opt. off")
    print(f"{'cell':<28} {'side':<4} {'trace':>7} {'lower':>7} {'compile':>8} {'total':>7}  ratio")
    first_update = f"update={args.lengths.split(',')[0]}"
    for spec in specs:
        for side in sides:
            c = best[(side, spec)]
            tot = sum(c[p] for p in PHASES)
            ratio = []
            if side == "new" and "old" in sides:
                ratio.append(f"new/old {tot / sum(best[('old', spec)][p] for p in PHASES):.2f}")
            if spec.startswith("update=") and spec != first_update:
                base = sum(best[(side, first_update)][p] for p in PHASES)
                ratio.append(f"{first_update} / this {base / tot:.2f}")
            ratio = "; ".join(ratio)
            print(f"{spec:<28} {side:<4} {c['trace']:>7.2f} {c['lower']:>7.2f} "
                  f"{c['compile']:>8.2f} {tot:>7.2f}  {ratio}")  # fmt: skip
    if args.json:
        rows = [{"cell": s, "side": d, **best[(d, s)]} for s in specs for d in sides]
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
