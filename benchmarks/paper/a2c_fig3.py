"""A2cScheduler's Fig. 3: learning curves of A2C (n-step TD) and DeepRM's Monte-Carlo policy
gradient (``jaxsched train a2c --algorithm pg``) on the same environment, against environment
steps and against training time, from the runs' logs.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/a2c_fig3.py RUN_DIR [RUN_DIR ...] [--png FILE]

Per run: the sampled policy's mean slowdown over the training episodes of each epoch and the
greedy policy's slowdown on the run's validation jobsets (where validated), against the
cumulative environment steps (the log's ``steps``; older A2C logs without it: environments ×
n-step × updates per epoch) and training minutes (the log's ``seconds``, compilation
included). Prints, per run, the steps and minutes at which the validation slowdown first
went below SJF's on the same jobsets, and the best validation value.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import jax  # noqa: E402
import numpy as np  # noqa: E402

# a whole program: 64-bit mode for its process (jaxsched/precision.py)
jax.config.update("jax_enable_x64", True)
from jaxsched.systems.a2cscheduler import evaluate as ev  # noqa: E402
from jaxsched.systems.a2cscheduler.config import RunConfig, build_env  # noqa: E402
from jaxsched.train.loop import epoch_rows  # noqa: E402


def curve(run: Path) -> dict:
    """``{label, steps, minutes, episodes, train}`` per epoch and ``{val_steps, val_minutes,
    val_episodes, val}`` per validated epoch (cumulative), ``sjf``: SJF on the validation jobsets."""
    rc = RunConfig.from_json(json.loads((run / "run.json").read_text()))
    rows = epoch_rows(run)
    per = rc.num_envs * rc.n_steps * rc.updates_per_epoch
    steps = np.cumsum([r.get("steps", per) for r in rows])
    minutes = np.cumsum([r["seconds"] for r in rows]) / 60
    episodes = np.cumsum([r["episodes"] for r in rows])
    val = [(s, m, e, r["eval_slowdown"]) for s, m, e, r in zip(steps, minutes, episodes, rows)
           if "eval_slowdown" in r]  # fmt: skip
    env = build_env(rc)
    sjf = float(np.mean(ev.baseline_metrics(env, ["sjf"], rc.eval_sequences)[0]["slowdown"]))
    algo = "DeepRM PG" if rc.algorithm == "pg" else f"A2C n={rc.n_steps}"
    arch = "" if rc.arch == "conv16" else f" {rc.arch}"
    label = f"{algo}{arch}, {rc.optimizer} {rc.lr:g}, β {rc.entropy_coef:g} ({run.name})"
    return dict(label=label, steps=steps, minutes=minutes, train=np.array([r["ep_slowdown"] for r in rows]),
                val_steps=np.array([v[0] for v in val]), val_minutes=np.array([v[1] for v in val]),
                val_episodes=np.array([v[2] for v in val]), val=np.array([v[3] for v in val]),
                sjf=sjf, episodes=episodes)  # fmt: skip


def summary(c: dict) -> str:
    hit = np.flatnonzero(c["val"] < c["sjf"])
    reach = (f"below SJF ({c['sjf']:.2f}) at {c['val_steps'][hit[0]] / 1e6:.2f} M steps, "
             f"{c['val_minutes'][hit[0]]:.1f} min, {c['val_episodes'][hit[0]]:,.0f} episodes" if len(hit) else f"never below SJF ({c['sjf']:.2f})")  # fmt: skip
    i = int(np.argmin(c["val"])) if len(c["val"]) else None
    best = (
        ""
        if i is None
        else f"; best validation {c['val'][i]:.2f} at {c['val_steps'][i] / 1e6:.2f} M steps"
    )
    done = f"{c['steps'][-1] / 1e6:.2f} M steps ({c['episodes'][-1]:,.0f} episodes) in {c['minutes'][-1]:.1f} min"
    return f"{c['label']}: {done}, {reach}{best}"


def plot(curves: list[dict], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, x, xv, name in ((axes[0], "steps", "val_steps", "environment steps (millions)"),
                            (axes[1], "minutes", "val_minutes", "training minutes")):  # fmt: skip
        scale = 1e6 if x == "steps" else 1.0
        for k, c in enumerate(curves):
            col = f"C{k}"
            ax.plot(c[x] / scale, c["train"], color=col, alpha=0.45, lw=1)
            ax.plot(c[xv] / scale, c["val"], "o-", color=col, label=c["label"])
        ax.axhline(curves[0]["sjf"], color="k", ls="--", lw=1, label="SJF (validation jobsets)")
        ax.set_xlabel(name)
    axes[0].set_ylabel("mean slowdown")
    fig.suptitle(
        "thin lines: training episodes (sampled actions); dots: validation jobsets (greedy)",
        fontsize=9,
    )
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    ap.add_argument("--png", type=Path, default=None, metavar="FILE")
    args = ap.parse_args(argv)
    curves = [curve(r) for r in args.runs]
    for c in curves:
        print(summary(c))
    if args.png:
        plot(curves, args.png)
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
