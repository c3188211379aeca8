"""RLScheduler's network study (paper Table IV, Fig. 8): the kernel policy network against the
MLPs v1-v3 and LeNet, trained the same way, as validation curves per epoch and per minute.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/rlscheduler_networks.py [--train]
        [--trace traces/lublin-1.swf] [--nets kernel,mlp_v1,mlp_v2,mlp_v3,lenet] [--seeds 1-3]
        [--epochs 20] [--trajectories 20] [--backfill none] [--root runs/networks]
        [--plot FILE.png] [--json FILE] [--batched] [--job-slice N] [--device NAME]

With ``--train`` every (network, seed) run that has fewer than ``--epochs`` epochs in
``ROOT/<trace>/<net>/seed-<s>`` is trained (or resumed) first, one after the other, by

    jaxsched train rlscheduler TRACE --compat rlscheduler --backfill B --trajectories T
        --epochs E --policy-net NET --seed S --validate 2 --val-sequences 10
        --keep-checkpoints 1 --no-progress --out ROOT/<trace>/<net>/seed-S

(the reference's PPO settings otherwise; the value network is the kernel one for every run,
so only the policy differs). With ``--batched`` the seeds of one network train together, one
compiled update per epoch for all of them (``--seeds A,B,... --out ROOT/<trace>/<net>``, which
writes the same ``seed-S`` folders; each seed's curve is the one ``--seed S`` alone would give,
but its minutes are the batch's): on an accelerator that costs little more than one seed. An
interrupted study is continued by the same command. Without ``--train`` the script only reads
what is there.

Prints, per network: the greedy validation bsld (10 sequences of 1024 jobs, seed 2, the
trainer's own validation) at the first validated epoch, at epoch 10 and at the last one
(mean ± standard error over the seeds), the best over the run, and the seconds per epoch
(median, compilation excluded); and it draws one PNG per trace with two panels: validation
bsld against epoch and against training minutes (one line per seed, the mean bold), SJF and
F1 on the same validation sequences as horizontal lines. The paper's claim (spec
rlscheduler.md §9, Fig. 8): the kernel network reaches good performance within about 20
epochs; the MLPs are similar to each other; LeNet is much worse. The paper's epochs are 100
sequences of 256 jobs; ``--trajectories`` sets ours (fewer on this CPU: say so when quoting).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

from jaxsched.systems.rlscheduler.config import VAL_INFO  # noqa: E402
from jaxsched.systems.schedinspector.evaluate import mean_se as mean_se_of  # noqa: E402
from jaxsched.train.loop import read_log, training_seconds  # noqa: E402
from jaxsched.train.sweep import parse_seeds  # noqa: E402

NETS = ("kernel", "mlp_v1", "mlp_v2", "mlp_v3", "lenet")
VAL_KEY = "val_bsld"


def run_dir(root: Path, trace: Path, net: str, seed: int) -> Path:
    """``ROOT/<trace stem>/<net>/seed-<s>`` (``.swf.gz`` and ``.swf`` stripped)."""
    stem = trace.name.removesuffix(".gz").removesuffix(".swf")
    return root / stem / net / f"seed-{seed}"


def epochs_done(out: Path) -> int:
    """The last epoch logged in ``out`` (0 when there is no run yet)."""
    if not (out / "log.jsonl").is_file():
        return 0
    return max((int(r["epoch"]) for r in read_log(out)), default=0)


def train_command(args, net: str, seed, out: Path) -> list[str]:
    """The ``jaxsched train rlscheduler`` command of one run (``--resume`` when it exists);
    ``seed`` a list: one batched sweep over those seeds in ``out/seed-S``."""
    cmd = [sys.executable, "-m", "jaxsched.cli", "train", "rlscheduler", str(args.trace)]
    cmd += ["--compat", "rlscheduler", "--backfill", args.backfill]
    cmd += ["--trajectories", str(args.trajectories), "--epochs", str(args.epochs)]
    if isinstance(seed, list):
        cmd += ["--policy-net", net, "--seeds", ",".join(map(str, seed)), "--validate", "2"]
        resume = any(epochs_done(out / f"seed-{s}") for s in seed)
    else:
        cmd += ["--policy-net", net, "--seed", str(seed), "--validate", "2"]
        resume = bool(epochs_done(out))
    cmd += ["--val-sequences", "10", "--keep-checkpoints", "1", "--no-progress", "--out", str(out)]
    if args.job_slice:
        cmd += ["--job-slice", str(args.job_slice)]
    if resume:
        cmd.append("--resume")
    return cmd


def runs_to_train(args, nets, seeds) -> list:
    """``(net, seed or list of seeds, out)`` of every run (or batched sweep) still short of
    ``--epochs``."""
    todo = []
    for net in nets:
        short = [
            s for s in seeds if epochs_done(run_dir(args.root, args.trace, net, s)) < args.epochs
        ]
        if args.batched and short:
            todo.append((net, short, run_dir(args.root, args.trace, net, short[0]).parent))
        else:
            todo += [(net, s, run_dir(args.root, args.trace, net, s)) for s in short]
    return todo


def curve(out: Path) -> dict:
    """One run's validation curve: ``epoch``, ``minutes`` (training time at that epoch) and
    ``val`` lists, the median seconds per epoch after the first, and the validation
    sequences' SJF and F1 values (``validation.json``), when the run has them."""
    log = read_log(out)
    rows = [r for r in log if VAL_KEY in r]
    cum = training_seconds(out)
    per = [float(r.get("seconds", 0.0)) for r in log if int(r["epoch"]) > 1]
    info = out / VAL_INFO
    heur = json.loads(info.read_text()) if info.is_file() else {}
    return {
        "epoch": [int(r["epoch"]) for r in rows],
        "minutes": [cum[int(r["epoch"])] / 60 for r in rows],
        "val": [float(r[VAL_KEY]) for r in rows],
        "sec_per_epoch": float(np.median(per)) if per else float("nan"),
        "sjf": heur.get("sjf"),
        "f1": heur.get("f1"),
    }


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error (:func:`jaxsched.systems.schedinspector.evaluate.mean_se`) of
    the values that exist (None and NaN left out); NaNs when none do."""
    v = [x for x in values if x is not None and np.isfinite(x)]
    return mean_se_of(v) if v else (float("nan"), float("nan"))


def at_epoch(c: dict, epoch: int):
    """The validation value at the last validated epoch ``<= epoch`` (None before any)."""
    vals = [v for e, v in zip(c["epoch"], c["val"]) if e <= epoch]
    return vals[-1] if vals else None


def summarize(curves: dict) -> list[dict]:
    """One row per network from ``{net: {seed: curve}}``: mean ± s.e. over seeds of the
    first validation, the value at epoch 10, the last, the best, and seconds per epoch."""
    rows = []
    for net, by_seed in curves.items():
        cs = [c for c in by_seed.values() if c["val"]]
        if not cs:
            continue
        row = {"net": net, "seeds": len(cs), "epochs": min(c["epoch"][-1] for c in cs)}
        row["first"] = mean_se([c["val"][0] for c in cs])
        row["epoch10"] = mean_se([at_epoch(c, 10) for c in cs])
        row["last"] = mean_se([c["val"][-1] for c in cs])
        row["best"] = mean_se([min(c["val"]) for c in cs])
        row["sec_per_epoch"] = mean_se([c["sec_per_epoch"] for c in cs])
        rows.append(row)
    return rows


def _fmt(ms) -> str:
    m, s = ms
    if not np.isfinite(m):
        return "—"
    return f"{m:,.1f}" if not np.isfinite(s) else f"{m:,.1f} ± {s:,.1f}"


def print_table(rows: list[dict], heur: dict) -> None:
    print(
        "| network | seeds | epochs | first val | val at epoch 10 | last val | best val | s/epoch |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [r["first"], r["epoch10"], r["last"], r["best"], r["sec_per_epoch"]]
        print(
            f"| {r['net']} | {r['seeds']} | {r['epochs']} | " + " | ".join(map(_fmt, cells)) + " |"
        )
    if heur:
        print(
            "validation sequences (10 x 1024 jobs, seed 2): "
            + ", ".join(f"{k.upper()} {v:,.2f}" for k, v in heur.items() if v is not None)
        )


def plot(curves: dict, heur: dict, title: str, path: Path, device: str = "this CPU") -> Path:
    """Two panels: validation bsld against epoch and against training minutes (on
    ``device``, named in the axis label)."""
    from jaxsched.plots import pyplot, save_png

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for i, (net, by_seed) in enumerate(curves.items()):
        color = f"C{i}"
        cs = [c for c in by_seed.values() if c["val"]]
        for c in cs:
            for ax, x in zip(axes, ("epoch", "minutes")):
                ax.plot(c[x], c["val"], color=color, alpha=0.35, lw=1, label=None)
        n = min((len(c["val"]) for c in cs), default=0)
        if n:
            mean = np.mean([c["val"][:n] for c in cs], axis=0)
            axes[0].plot(cs[0]["epoch"][:n], mean, color=color, lw=2, label=net)
            minutes = np.mean([c["minutes"][:n] for c in cs], axis=0)
            axes[1].plot(minutes, mean, color=color, lw=2, label=net)
    for ax in axes:
        for k, style in (("sjf", ":"), ("f1", "-.")):
            if heur.get(k) is not None:
                ax.axhline(heur[k], color="gray", ls=style, lw=1, label=f"{k.upper()}")
        ax.set_yscale("log")
    axes[0].set_xlabel("epoch")
    axes[1].set_xlabel(f"training minutes ({device})")
    axes[0].set_ylabel("greedy validation bsld (lower is better)")
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    return save_png(fig, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=Path("traces/lublin-1.swf"))
    ap.add_argument("--nets", default=",".join(NETS))
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--trajectories", type=int, default=20)
    ap.add_argument("--backfill", default="none", choices=("none", "rlscheduler"))
    ap.add_argument("--root", type=Path, default=Path("runs/networks"))
    ap.add_argument("--train", action="store_true", help="train or resume the missing runs first")
    ap.add_argument("--plot", type=Path, default=None, help="PNG path (default ROOT/<trace>.png)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--job-slice",
        type=int,
        default=0,
        help="train and validate on the trace's first N jobs (the paper's 10000 for SDSC-SP2)",
    )
    ap.add_argument("--device", default="this CPU", help="the machine, for the plot's time axis")
    ap.add_argument(
        "--batched", action="store_true", help="train the seeds of a network as one sweep"
    )
    args = ap.parse_args(argv)
    nets = [n.strip() for n in args.nets.split(",") if n.strip()]
    bad = [n for n in nets if n not in NETS]
    if bad:
        ap.error(f"--nets: unknown {', '.join(bad)} (known: {', '.join(NETS)})")
    seeds = [int(s) for s in parse_seeds(args.seeds)]
    if args.train:
        for net, s, out in runs_to_train(args, nets, seeds):
            (out if isinstance(s, list) else out.parent).mkdir(parents=True, exist_ok=True)
            cmd = train_command(args, net, s, out)
            print("$", " ".join(cmd[1:]), flush=True)
            subprocess.run(cmd, check=True)
    curves = {}
    for net in nets:
        by_seed = {}
        for s in seeds:
            out = run_dir(args.root, args.trace, net, s)
            if epochs_done(out):
                by_seed[s] = curve(out)
        if by_seed:
            curves[net] = by_seed
    if not curves:
        print(f"no runs under {args.root} (train them with --train)")
        return 1
    first = next(iter(next(iter(curves.values())).values()))
    heur = {k: first[k] for k in ("sjf", "f1") if first.get(k) is not None}
    print(f"{args.trace.name}, backfill {args.backfill}, {args.trajectories} sequences per epoch")
    rows = summarize(curves)
    print_table(rows, heur)
    stem = run_dir(args.root, args.trace, "x", 0).parent.parent
    path = plot(curves, heur, f"{args.trace.name}: policy networks (Table IV)",
                args.plot or stem.with_suffix(".png"), args.device)  # fmt: skip
    print(f"plot: {path}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "curves": curves, "heuristics": heur}))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
