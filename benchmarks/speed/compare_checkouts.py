"""Two checkouts of jaxsched timed side by side: the environment and simulator benchmarks of
each, run alternately on the same machine in one invocation, with the ratios new / old.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/compare_checkouts.py --old ../old-checkout \
        [--new .] [--rounds 2] [--env-args "..."] [--sim-args "..."] [--si-args "..."] \
        [--train-args "..."] [--cost-args "..."] [--json FILE]

``--old``/``--new`` are checkouts (e.g. ``git worktree add ../old <commit>``). Every round runs
``env_throughput.py`` and ``throughput.py`` (``benchmarks/speed/``; flat in ``benchmarks/`` in
a checkout from before 2026-11-28) of the old checkout, then of
the new one (the order alternates between rounds), each in a fresh Python process with that
checkout first on ``PYTHONPATH`` and its own copy of the script, so each side runs exactly its
own code. Then the new checkout's ``compiled_cost.py`` (public API only) runs once under each
side's ``PYTHONPATH``: XLA's flops, bytes, fusions and copies of the same compiled rollout, so
a timing difference can be told apart from a different program. With ``--si-args`` the new
checkout's ``schedinspector_env.py --throughput`` and with ``--train-args`` its
``train_speed.py`` (PPO epochs; epochs per hour in the table) run in the rounds too, under each
side's ``PYTHONPATH``. An empty ``--env-args``, ``--sim-args`` or ``--cost-args`` skips that
part. The best value of each cell over the rounds is kept (noise on a shared machine only
slows a run down). Compile times are reported apart from run times; the load average after
each run is printed and kept in ``--json``. Exit status 1 if a throughput run finds a
schedule that differs from the oracle.
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
    """(backfill, B) -> (steps/s, compile s) of an env_throughput.py result (the env mode and
    the device count appended where not the default)."""
    out = {}
    for r in res["rows"]:
        key = (r["backfill"], r["batch"])
        if r.get("env", "closed") != "closed":
            key += (r["env"],)
        if r.get("devices", 1) != 1:
            key += (f"D={r['devices']}",)
        out[key] = (r["steps_per_s"], r["compile_s"])
    return out


def si_cells(res: dict) -> dict:
    """(backfill, mode, B, D) -> (steps/s, compile s) of a schedinspector_env.py result."""
    return {
        (r["backfill"], r["mode"], r["batch"], f"D={r['devices']}"): (
            r["steps_per_s"],
            r["compile_s"],
        )
        for r in res["rows"]
    }


def train_cells(res: dict) -> dict:
    """update variant -> (epochs per hour, compile s) of a train_speed.py result."""
    return {
        (r["update"], r.get("backfill", "")): (3600.0 / r["mean_epoch_s"], r["compile_s"])
        for r in res["epochs"]
        if "mean_epoch_s" in r
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
    p.add_argument("--si-args", default="", help="schedinspector_env.py (none)")
    p.add_argument("--train-args", default="", help="train_speed.py (none)")
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
    parts = [  # (name, script, args, cells, script from the new checkout, table title, unit)
        ("env", "env_throughput.py", a.env_args, env_cells, False,
         "environment steps/s (env_throughput.py, backfill B ...)", "steps/s"),
        ("sim", "throughput.py", a.sim_args, sim_cells, False,
         "simulator decisions/s (throughput.py, batch multiplier K)", "dec/s"),
        ("si", "schedinspector_env.py", a.si_args, si_cells, True,
         "SchedInspector env steps/s (schedinspector_env.py, backfill mode B D)", "steps/s"),
        ("train", "train_speed.py", a.train_args, train_cells, True,
         "PPO epochs per hour (train_speed.py, update backfill)", "ep/h"),
    ]  # fmt: skip
    parts = [x for x in parts if x[2].strip()]
    found = {x[0]: {} for x in parts}
    raw, mismatches = [], 0
    for rnd in range(a.rounds):
        order = ("old", "new") if rnd % 2 == 0 else ("new", "old")
        for side in order:
            for name, script_name, args, cells, from_new, _, _ in parts:
                r = run_script(sides[side], script_name, args, sides["new"] if from_new else None)
                mismatches += int(r.get("mismatches", 0)) if name == "sim" else 0
                found[name][side] = best(found[name].get(side), cells(r))
                load = load_average()
                raw.append({"round": rnd, "side": side, "part": name, "load": load,
                            "cells": {str(k): v for k, v in cells(r).items()}})  # fmt: skip
                print(f"round {rnd + 1}: {side} {name} done (load {load[0]:.2f})", flush=True)
    lines = [f"old: {sides['old']}", f"new: {sides['new']}", f"best of {a.rounds} rounds"]
    for name, _, _, _, _, title, unit in parts:
        lines += ["", *table(title, unit, found[name]["old"], found[name]["new"])]
    cost = {}
    if a.cost_args.strip():
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
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
