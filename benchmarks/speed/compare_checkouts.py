"""Two checkouts of jaxsched timed side by side: the environment and simulator benchmarks of
each, run alternately on the same machine in one invocation, with the ratios new / old.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/compare_checkouts.py --old ../old-checkout \
        [--new .] [--rounds 2] [--env-args "..."] [--sim-args "..."] [--json FILE]

``--old``/``--new`` are checkouts (e.g. ``git worktree add ../old <commit>``). Every round runs
``env_throughput.py`` and ``throughput.py`` (``benchmarks/speed/``; flat in ``benchmarks/`` in
a checkout from before 2026-11-28) of the old checkout, then of
the new one (the order alternates between rounds), each in a fresh Python process with that
checkout first on ``PYTHONPATH`` and its own copy of the script, so each side runs exactly its
own code. Then the new checkout's ``compiled_cost.py`` (public API only) runs once under each
side's ``PYTHONPATH``: XLA's flops, bytes, fusions and copies of the same compiled rollout, so
a timing difference can be told apart from a different program. The best value of each cell
over the rounds is kept (noise on a shared machine only
slows a run down). Compile times are reported apart from run times. Exit status 1 if a
throughput run finds a schedule that differs from the oracle.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import load_average, script  # noqa: E402

ENV_ARGS = "--batch 64,256 --steps 256 --backfill none,rlscheduler --repeats 3"
SIM_ARGS = "--batch-multiplier 1,10 --jax-runs 3 --oracle-repeat 1"
COST_ARGS = "--backfill none --batch 256 --steps 256"
COST_KEYS = ("flops", "bytes_accessed", "fusions", "copies", "hlo_lines")


def run_script(checkout: Path, name: str, args: str, script_dir: Path | None = None) -> dict:
    """``benchmarks/<folder>/<name> <args> --json F`` of ``checkout`` in a fresh process (the script
    taken from ``script_dir``'s benchmarks/ if given); the JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        env = dict(os.environ, PYTHONPATH=str(checkout), JAXSCHED_CACHE="off")
        where = script(name, script_dir or checkout)  # benchmarks/<folder>/ or, older, flat
        cmd = [sys.executable, str(where), *shlex.split(args)]
        proc = subprocess.run(
            [*cmd, "--json", str(out)], cwd=checkout, env=env, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"{checkout}: {name} failed:\n{proc.stderr[-2000:]}")
        return json.loads(out.read_text())


def env_cells(res: dict) -> dict:
    """(backfill, B) -> (steps/s, compile s) of an env_throughput.py result."""
    return {
        (r["backfill"], r["batch"]): (r["steps_per_s"], r["compile_s"])
        for r in res["rows"]
        if r.get("env", "closed") == "closed"
    }


def sim_cells(res: dict) -> dict:
    """K -> (decisions/s, compile s) of a throughput.py result."""
    return {
        int(k): (r["decisions_per_s"], r["compile_s_first_call"]) for k, r in res["jax"].items()
    }


def best(a: dict | None, b: dict) -> dict:
    """Cell-wise best: highest throughput, lowest compile time."""
    if a is None:
        return dict(b)
    return {k: (max(a[k][0], b[k][0]), min(a[k][1], b[k][1])) for k in b}


def table(title: str, unit: str, old: dict, new: dict) -> list[str]:
    lines = [title, f"{'cell':<22} {'old ' + unit:>14} {'new ' + unit:>14} {'new/old':>8} "
             f"{'compile old':>12} {'compile new':>12}"]  # fmt: skip
    for k in sorted(old, key=str):
        (o, oc), (n, nc) = old[k], new[k]
        lines.append(
            f"{' '.join(map(str, k)) if isinstance(k, tuple) else f'K={k}':<22} {o:>14,.0f} "
            f"{n:>14,.0f} {n / o:>8.3f} {oc:>11.1f}s {nc:>11.1f}s"
        )
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", type=Path, required=True, help="the old checkout")
    p.add_argument("--new", type=Path, default=Path("."), help="the new checkout (default .)")
    p.add_argument("--rounds", type=int, default=2, help="old/new pairs per benchmark (2)")
    p.add_argument("--env-args", default=ENV_ARGS, help=f"env_throughput.py ({ENV_ARGS})")
    p.add_argument("--sim-args", default=SIM_ARGS, help=f"throughput.py ({SIM_ARGS})")
    p.add_argument("--cost-args", default=COST_ARGS, help=f"compiled_cost.py ({COST_ARGS})")
    p.add_argument("--json", type=Path, default=None, help="write every run's numbers here")
    a = p.parse_args(argv)
    sides = {"old": a.old.resolve(), "new": a.new.resolve()}
    for name, path in sides.items():
        try:
            script("env_throughput.py", path)
        except FileNotFoundError:
            p.error(
                f"--{name} {path}: not a jaxsched checkout (no env_throughput.py in benchmarks/)"
            )
    env_best, sim_best, raw, mismatches = {}, {}, [], 0
    for rnd in range(a.rounds):
        order = ("old", "new") if rnd % 2 == 0 else ("new", "old")
        for side in order:
            e = run_script(sides[side], "env_throughput.py", a.env_args)
            s = run_script(sides[side], "throughput.py", a.sim_args)
            mismatches += int(s.get("mismatches", 0))
            env_best[side] = best(env_best.get(side), env_cells(e))
            sim_best[side] = best(sim_best.get(side), sim_cells(s))
            raw.append({"round": rnd, "side": side, "load": load_average(),
                        "env": {str(k): v for k, v in env_cells(e).items()},
                        "sim": {str(k): v for k, v in sim_cells(s).items()}})  # fmt: skip
            print(f"round {rnd + 1}: {side} done (load {load_average()[0]:.2f})", flush=True)
    lines = [f"old: {sides['old']}", f"new: {sides['new']}", f"best of {a.rounds} rounds", ""]
    lines += table("environment steps/s (env_throughput.py, backfill B)", "steps/s",
                   env_best["old"], env_best["new"])  # fmt: skip
    lines.append("")
    lines += table("simulator decisions/s (throughput.py, batch multiplier K)", "dec/s",
                   sim_best["old"], sim_best["new"])  # fmt: skip
    cost = {side: run_script(path, "compiled_cost.py", a.cost_args, sides["new"])
            for side, path in sides.items()}  # fmt: skip
    lines.append(f"\ncompiled rollout ({a.cost_args})")
    lines += [f"{k:<22} {cost['old'][k]:>14,.0f} {cost['new'][k]:>14,.0f} "
              f"{cost['new'][k] / cost['old'][k]:>8.5f}" for k in COST_KEYS]  # fmt: skip
    lines.append(f"\nschedules differing from the oracle: {mismatches}")
    print("\n".join(lines))
    if a.json:
        a.json.write_text(json.dumps({"sides": {k: str(v) for k, v in sides.items()},
                                      "runs": raw, "compiled": cost}, default=str, indent=1))  # fmt: skip
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
