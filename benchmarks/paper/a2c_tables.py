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

``--held-out`` (issue 47 §3): the named test jobsets (``--eval-seed`` 271828 =
``splits.GENERATOR_SPLITS["deeprm"]``'s test seed, 200 jobsets; a trace run: its test part),
and one more baseline, **Tuned**: DeepRM's combined Tetris score ``knob · packer + (1 − knob) /
len`` with the knob chosen (``--knobs``) by the mean slowdown on training jobsets (generator
seed 0, in the training seeds; a trace run: the first ``--eval-sequences`` training slices),
per rate or trace.  Each group then names its best baseline by mean slowdown and gives every
run's paired difference to it and to Tuned.  Issue 47 §2's EASY-SJBF and EASY++ do not apply:
this cluster has no reservation or backfilling, and its jobs no user ids.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import jax  # noqa: E402
import numpy as np  # noqa: E402

# a whole program: 64-bit mode for its process (jaxsched/precision.py)
jax.config.update("jax_enable_x64", True)
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
#: the Tuned baseline's candidate knobs (``--knobs``): 0 is SJF, 1 the packer
KNOBS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
#: the training jobsets the knob is tuned on (a generator seed in the training seeds)
TUNE_SEED = 0
METRICS = ("slowdown", "completion", "waiting")


def held_out_seed() -> int:
    """The named test seed of the A2cScheduler / DeepRM jobsets (docs/splits.md)."""
    from jaxsched.workload.splits import GENERATOR_SPLITS

    return int(GENERATOR_SPLITS["deeprm"].test[0])


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


def tetris_grid(env, knobs, n: int) -> dict:
    """``{metric: float64 [len(knobs), n]}``: the combined Tetris score at each knob on the
    env's first ``n`` evaluation jobsets (one compiled call, the knob traced)."""
    import jax
    import jax.numpy as jnp

    from jaxsched.sim.datacenter import baselines

    p = env.params
    T = p.step_cap or 10 * p.simu_len
    lens, dems = ev._jobsets(env, n)
    keys = jax.random.split(jax.random.PRNGKey(0), n)
    code = baselines.policy_code("tetris")

    def one(knob, ln, dm, key):
        s, _ = baselines.rollout(p, ln, dm, code, knob, jnp.zeros((T,), jnp.int32), 0, key, T)
        return ev._metrics(s)

    f = jax.jit(jax.vmap(jax.vmap(one, in_axes=(None, 0, 0, 0)), in_axes=(0, None, None, None)))
    m = f(jnp.asarray(knobs, jnp.float64), lens, dems, keys)
    return {k: np.asarray(v, np.float64) for k, v in m.items()}


def tune_knob(rc: RunConfig, knobs, n: int) -> tuple[float, list]:
    """The knob of the lowest mean slowdown on ``n`` training jobsets of ``rc``'s group
    (generator seed :data:`TUNE_SEED`, or the trace's training part), and every knob's mean."""
    over = dict(eval_sequences=n, eval_seed=TUNE_SEED, trace_eval="train")
    sld = tetris_grid(build_env(dataclasses.replace(rc, **over)), knobs, n)["slowdown"]
    means = [float(np.nanmean(r)) for r in sld]
    i = min(range(len(knobs)), key=lambda i: (means[i], i))
    return float(knobs[i]), means


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
    tuned = {}
    if args.held_out:
        knob, means = tune_knob(rc, args.knobs, args.eval_sequences)
        g = tetris_grid(env, [knob], rc.eval_sequences)
        rows["Tuned"] = {k: v[0] for k, v in g.items()}
        tuned = dict(knob=knob, train_means=means)
    return dict(tuned=tuned, run=str(run), group=group_of(rc), seed=rc.seed, algorithm=rc.algorithm, epoch=epoch, val=val, minutes=mins,
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
        if "Tuned" in base:
            out += held_out_lines(runs, base)
        better = all(np.mean(r["rows"]["A2C"]["slowdown"]) < min(np.mean(base[b]["slowdown"]) for b in SHOWN)
                     for r in runs)  # fmt: skip
        out.append(
            f"  every seed better than every baseline on slowdown: {'yes' if better else 'no'}"
        )
    return out


def held_out_lines(runs: list[dict], base: dict) -> list[str]:
    """The Tuned row and each run's paired slowdown differences to the best baseline (by mean
    slowdown among Random, Tetris, SJF and Tuned) and to Tuned."""
    t = runs[0]["tuned"]
    cells = "  ".join(f"{k} {_ms(base['Tuned'][k])[0]:7.3f} ± {_ms(base['Tuned'][k])[1]:.3f}"
                      for k in METRICS)  # fmt: skip
    knobs = ", ".join(f"{m:.3f}" for m in t["train_means"])
    out = [f"  {'Tuned (knob ' + format(t['knob'], 'g') + ')':<22}{cells}",
           f"    (knob chosen on training jobsets; their mean slowdown per knob: {knobs})"]  # fmt: skip
    names = (*SHOWN, "Tuned")
    best = min(names, key=lambda b: (np.nanmean(base[b]["slowdown"]), b))
    out.append(f"  best baseline by mean slowdown: {best}")
    for r in runs:
        a2c = np.asarray(r["rows"]["A2C"]["slowdown"])
        d_best = a2c - np.asarray(base[best]["slowdown"])
        d_tuned = a2c - np.asarray(base["Tuned"]["slowdown"])
        out.append(f"  {r['run']} (epoch {r['epoch']}): − {best} {_ms(d_best)[0]:+.3f} ± "
                   f"{_ms(d_best)[1]:.3f}, − Tuned {_ms(d_tuned)[0]:+.3f} ± "
                   f"{_ms(d_tuned)[1]:.3f} (paired over {len(a2c)} jobsets)")  # fmt: skip
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    ap.add_argument("--eval-seed", type=int, default=None)
    ap.add_argument("--eval-sequences", type=int, default=None)
    ap.add_argument(
        "--held-out",
        action="store_true",
        help="the named test seed, 200 jobsets, and the Tuned baseline",
    )
    ap.add_argument(
        "--knobs",
        type=lambda s: [float(x) for x in s.split(",")],
        default=list(KNOBS),
        help="--held-out: the Tuned baseline's candidates",
    )
    ap.add_argument("--minutes", type=float, default=None, metavar="M")
    ap.add_argument("--every-checkpoint", action="store_true",
                    help="choose among every kept checkpoint, each scored on the run's "
                         "validation jobsets, not only the epochs validated during training")  # fmt: skip
    ap.add_argument("--json", type=Path, default=None, metavar="FILE")
    args = ap.parse_args(argv)
    if args.eval_seed is None:
        args.eval_seed = held_out_seed() if args.held_out else 1
    if args.eval_sequences is None:
        args.eval_sequences = 200 if args.held_out else 100
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
