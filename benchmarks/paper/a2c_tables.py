"""A2cScheduler's Tables 1–2 (and the real-trace Table 4 substitute) from trained runs: every
run's chosen checkpoint and the baselines on the same fresh jobsets, grouped by rate (or
trace), with the paper's numbers beside.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/a2c_tables.py RUN_DIR [RUN_DIR ...]
        [--eval-seed 1] [--eval-sequences 100] [--minutes M] [--json FILE]

Each run's checkpoint is chosen on its own validation jobsets (the ``eval_slowdown`` of its
log, ``--validate-every``): the best validated epoch, or with ``--minutes M`` the best among
the epochs finished within M minutes of training (cumulative per-epoch ``seconds`` of the
log, compilation included, validation not; needs ``--keep-checkpoints 0``); with
``--every-checkpoint`` every kept epoch checkpoint is scored on the same validation jobsets
first (not only the epochs the run validated while training). The test jobsets
are fresh: ``--eval-seed`` (default 1; validation used 314159) for generated jobsets, the test
part of the trace for a trace run. Per group: the baselines, each run (greedy), and over the
runs (training seeds) the mean ± standard error of the runs' means and of their paired
differences to SJF; "pooled" is the per-jobset difference averaged over the runs, with its
standard error over the jobsets.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import numpy as np  # noqa: E402

import jaxsched.sim  # noqa: E402,F401  (enables x64)
from jaxsched.errors import JaxschedError  # noqa: E402
from jaxsched.sim.evaluate import standard_error  # noqa: E402
from jaxsched.systems.a2cscheduler import evaluate as ev  # noqa: E402
from jaxsched.systems.a2cscheduler.config import RunConfig, build_env  # noqa: E402
from jaxsched.systems.a2cscheduler.run import load_model  # noqa: E402
from jaxsched.train.loop import read_log, training_seconds  # noqa: E402

#: the paper's slowdown (Tables 1, 2 and 4): {group: {policy: value}}
PAPER = {
    0.6: {"Random": 3.22, "Tetris": 1.82, "SJF": 1.56, "A2C": 1.36},
    0.7: {"Random": 5.05, "Tetris": 3.32, "SJF": 2.14, "A2C": 1.91},
    0.8: {"Random": 6.2, "Tetris": 3.25, "SJF": 2.52, "A2C": 2.30},
    0.9: {"Random": 5.50, "Tetris": 2.90, "SJF": 1.81, "A2C": 2.03},
    "trace": {"Random": 3.52, "Tetris": 1.82, "SJF": 1.61, "A2C": 1.01},
}
SHOWN = ("Random", "Tetris", "SJF")
METRICS = ("slowdown", "completion", "waiting")


def rescored(run: Path) -> list[dict]:
    """``{"epoch", "eval_slowdown"}`` of every kept epoch checkpoint of the run, scored greedily
    on the run's own validation jobsets (as ``--validate-every`` scores them)."""
    from jaxsched.train.checkpoint import list_checkpoints

    out = []
    for ck in list_checkpoints(run):
        m = load_model(ck)
        val = ev.policy_metrics(m.env, m.actor_apply, m.params, m.run.eval_sequences)
        out.append({"epoch": m.epoch, "eval_slowdown": float(np.nanmean(val["slowdown"]))})
    return out


def choose(run: Path, minutes: float | None, every: bool = False) -> tuple[int, float, float]:
    """``(epoch, its validation slowdown, training minutes to it)`` of the run's chosen
    checkpoint (see the module docstring; ``every``: among all kept checkpoints, rescored)."""
    cum = training_seconds(run)
    rows = rescored(run) if every else [r for r in read_log(run) if "eval_slowdown" in r]
    if minutes is not None:
        rows = [r for r in rows if cum[int(r["epoch"])] <= 60 * minutes]
    if not rows:
        raise JaxschedError(
            f"{run}: no validated epoch" + (f" within {minutes} min" if minutes else "")
        )
    best = min(rows, key=lambda r: (r["eval_slowdown"], r["epoch"]))
    return int(best["epoch"]), float(best["eval_slowdown"]), cum[int(best["epoch"])] / 60


def group_of(rc: RunConfig):
    return "trace" if rc.trace else round(rc.rate, 3)


def evaluate_run(run: Path, args) -> dict:
    epoch, val, mins = choose(run, args.minutes, args.every_checkpoint)
    ck = run / f"checkpoint_{epoch:08d}.ckpt"
    if not ck.exists():
        best = json.loads((run / "best.json").read_text()) if (run / "best.json").exists() else {}
        if best.get("epoch") != epoch:
            raise JaxschedError(f"{ck}: not kept (train with --keep-checkpoints 0)")
        ck = run / "best.ckpt"
    m = load_model(ck)
    over = dict(eval_sequences=args.eval_sequences, eval_seed=args.eval_seed, trace_eval="test")
    rc = dataclasses.replace(m.run, **over)
    env = build_env(rc)
    rows = ev.per_sequence(env, rc.eval_sequences, m.actor_apply, m.params)
    return dict(run=str(run), group=group_of(rc), seed=rc.seed, algorithm=rc.algorithm, epoch=epoch, val=val, minutes=mins,
                rows={k: {mm: v[mm].tolist() for mm in METRICS} for k, v in rows.items()},
                jobsets=rc.describe_jobsets())  # fmt: skip


def _ms(v) -> tuple[float, float]:
    v = np.asarray(v, np.float64)
    return float(np.mean(v)), standard_error(v)


def report(results: list[dict]) -> list[str]:
    out = []
    for g in sorted({r["group"] for r in results}, key=str):
        runs = [r for r in results if r["group"] == g]
        base = runs[0]["rows"]
        name = "the trace's test slices" if g == "trace" else f"λ = {g}"
        out.append(f"\n{name}: {runs[0]['jobsets']}  (paper's slowdown in brackets)")
        for b in SHOWN:
            cells = "  ".join(
                f"{k} {_ms(base[b][k])[0]:7.3f} ± {_ms(base[b][k])[1]:.3f}" for k in METRICS
            )
            out.append(f"  {b:<22}{cells}   [{PAPER.get(g, {}).get(b, float('nan')):.2f}]")
        diffs, means = [], []
        for r in runs:
            a2c, sjf = np.asarray(r["rows"]["A2C"]["slowdown"]), np.asarray(base["SJF"]["slowdown"])
            d = a2c - sjf
            diffs.append(d)
            means.append(float(np.mean(a2c)))
            cells = "  ".join(
                f"{k} {_ms(r['rows']['A2C'][k])[0]:7.3f} ± {_ms(r['rows']['A2C'][k])[1]:.3f}"
                for k in METRICS
            )
            who = "A2C" if r.get("algorithm", "a2c") == "a2c" else "PG "
            out.append(f"  {who} seed {r['seed']} (epoch {r['epoch']:>2}, {r['minutes']:4.1f} min)  {cells}"
                       f"   − SJF {_ms(d)[0]:+.3f} ± {_ms(d)[1]:.3f}")  # fmt: skip
        per_seed = [float(np.mean(d)) for d in diffs]
        pooled = np.mean(np.stack(diffs), axis=0)
        out.append(f"  A2C over {len(runs)} seed(s): slowdown {np.mean(means):.3f} ± "
                   f"{standard_error(np.asarray(means)):.3f}; − SJF {np.mean(per_seed):+.3f} ± "
                   f"{standard_error(np.asarray(per_seed)):.3f} (over seeds), pooled "
                   f"{_ms(pooled)[0]:+.3f} ± {_ms(pooled)[1]:.3f} (over jobsets)   "
                   f"[{PAPER.get(g, {}).get('A2C', float('nan')):.2f}]")  # fmt: skip
        better = all(np.mean(r["rows"]["A2C"]["slowdown"]) < min(np.mean(base[b]["slowdown"]) for b in SHOWN)
                     for r in runs)  # fmt: skip
        out.append(
            f"  every seed better than every baseline on slowdown: {'yes' if better else 'no'}"
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    ap.add_argument("--eval-seed", type=int, default=1)
    ap.add_argument("--eval-sequences", type=int, default=100)
    ap.add_argument("--minutes", type=float, default=None, metavar="M")
    ap.add_argument("--every-checkpoint", action="store_true",
                    help="choose among every kept checkpoint, each scored on the run's "
                         "validation jobsets, not only the epochs validated during training")  # fmt: skip
    ap.add_argument("--json", type=Path, default=None, metavar="FILE")
    args = ap.parse_args(argv)
    try:
        results = [evaluate_run(r, args) for r in args.runs]
    except (JaxschedError, OSError) as e:
        print(f"a2c_tables: error: {e}", file=sys.stderr)
        return 2
    print("\n".join(report(results)))
    if args.json:
        args.json.write_text(json.dumps(results) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
