"""``jaxsched demo``: the main job on the bundled default trace (Lublin-1).

1. the trace's statistics;
2. the paper's heuristics and the shipped RLScheduler models on the same fresh sequences, in the
   reference semantics, without and with the reference's backfilling: means ± standard error
   and each model's paired difference to the best heuristic of its column;
3. the correct mode with true EASY backfilling (heuristics);
4. a short live training run with its progress bar and learning curve (PNG), stated as such.
"""

from __future__ import annotations

from pathlib import Path

from jaxsched.cli.args import command, int_arg, nonneg_int, positive_int
from jaxsched.cli.trace import trace_report

#: (backfilling, shipped model, the paper's 10-sequence figures: RL, best heuristic)
SHIPPED = (
    (
        "none",
        "lublin1-none",
        "the paper (Table V, 10 sequences): RL 254.67 vs F1 258.37 (best heuristic)",
    ),
    (
        "rlscheduler",
        "lublin1-bf-fast",
        "the paper (Table V, 10 sequences): RL 58.64 vs SJF 73.31 (best heuristic)",
    ),
)


def _learned_versus_heuristics(jobs, starts, length: int, backfill: str, model: str) -> str:
    """The paper's heuristics and a shipped model on the same sequences (reference semantics,
    bsld): a table of means ± standard error and the model's paired difference to the best
    heuristic of the column."""
    from jaxsched import systems
    from jaxsched.formatting import number, std_error
    from jaxsched.policies.heuristics import PAPER_POLICIES
    from jaxsched.sim.evaluate import evaluate, format_table

    res = evaluate(
        jobs,
        starts,
        length,
        list(PAPER_POLICIES),
        [backfill],
        compat=True,
        metrics=["bsld", "util"],
    )
    system, pol = systems.load_model(model)
    res.rows += system.model_rows(
        pol, jobs, res.starts, length, res.backfills, res.metrics, True, sample=False, name=model
    )
    res.policies.append(model)
    means = res.table("bsld")
    best = min(PAPER_POLICIES, key=lambda p: means[(p, backfill)])
    diff, err = res.paired("bsld", best)[(model, backfill)]
    verdict = "better" if diff + 2 * err < 0 else "worse" if diff - 2 * err > 0 else "no clear"
    return (
        f"{format_table(res, sem=True)}\n\n"
        f"{model} - {best} (the best heuristic here), paired on the same {len(res.starts)} "
        f"sequences: {number(diff, signed=True)} ± {std_error(err)} bsld "
        f"({verdict} difference at two standard errors)\n"
        f"[{next(s[2] for s in SHIPPED if s[1] == model)}]"
    )


def _short_training(path: Path, args) -> int:
    """A short live RLScheduler run (progress bar, learning curve PNG) into ``args.out``."""
    import tempfile

    from jaxsched.cli import main

    out = args.out or tempfile.mkdtemp(prefix="jaxsched-demo-")
    print(
        f"\nA SHORT live training run, to show the loop (not to reach the shipped models' "
        f"quality, which took 4-60 minutes): RLScheduler's kernel network with PPO, bounded "
        f"slowdown, no backfilling, {args.train_epochs} epochs of {args.trajectories} sampled "
        f"256-job sequences, {args.iters} policy/value steps each (the paper: 100 sequences, 80 "
        f"steps, tens of epochs) -> {out}\n"
    )
    argv = ["train", "rlscheduler", str(path), "--compat", "rlscheduler", "--out", out]
    argv += ["--epochs", str(args.train_epochs), "--trajectories", str(args.trajectories)]
    argv += ["--pi-iters", str(args.iters), "--v-iters", str(args.iters)]
    if args.out and (Path(out) / "run.json").exists():
        argv.append("--resume")
    rc = main(argv)
    if rc:
        return rc
    try:
        return main(["plot", out])
    except ImportError:  # matplotlib is the optional "plot" extra
        print("(no learning-curve picture: pip install 'jaxsched[plot]' for matplotlib)")
        return 0


def _cmd_demo(args) -> int:
    import jaxsched.sim  # noqa: F401  (enables x64)
    from jaxsched.cli import main
    from jaxsched.workload import default_trace_path, read_swf, reference_starts

    path = default_trace_path()
    print(f"jaxsched demo on the bundled default trace {path} (Lublin-1)\n")
    print(trace_report(path))
    jobs = read_swf(path).jobs("rlscheduler")
    starts = reference_starts(args.seed, args.sequences, args.jobs, jobs.n_jobs)
    for backfill, model, _ in SHIPPED:
        what = "no backfilling" if backfill == "none" else "the reference's backfilling"
        print(
            f"\nThe paper's heuristics and the shipped model {model} on {args.sequences} fresh "
            f"sequences of {args.jobs} jobs (seed {args.seed}; models were chosen on seed-2 "
            f"validation sequences), reference semantics, {what}, mean ± standard error:\n"
        )
        print(_learned_versus_heuristics(jobs, starts, args.jobs, backfill, model))
    print(
        "\nThese sequences start at new points, but their jobs are the 10,000 the models "
        "trained on (the paper's protocol). On jobs no model has seen, a fresh trace of the "
        "same Lublin model, the shipped models tie F1: benchmarks/paper/rlscheduler_tables.py "
        "--held-out (benchmarks/RESULTS.md section 14.14)."
    )
    print("\nThe same sequences in the correct mode, with true EASY backfilling:\n")
    rc = main(
        ["evaluate", str(path), "--metric", "bsld,util", "--backfill", "none,easy"]
        + ["--seed", str(args.seed), "--sequences", str(args.sequences), "--jobs", str(args.jobs)]
    )
    if rc or args.train_epochs == 0:
        return rc
    return _short_training(path, args)


@command("demo")
def _add_demo(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="a short demonstration on the bundled Lublin-1 trace",
        description="Show what jaxsched does on the bundled default trace: heuristics and the "
        "shipped learned policies on the same sequences, then a short live training run.",
    )
    p.add_argument(
        "--sequences",
        type=positive_int,
        default=100,
        metavar="K",
        help="number of fresh test sequences (default 100)",
    )
    p.add_argument(
        "--jobs", type=positive_int, default=1024, metavar="N", help="jobs per sequence (1024)"
    )
    p.add_argument(
        "--seed", type=int_arg, default=3, metavar="S", help="seed of the sequences (default 3)"
    )
    p.add_argument(
        "--train-epochs",
        type=nonneg_int,
        default=4,
        metavar="E",
        help="epochs of the short live training run (default 4, about a minute on a 2-core "
        "CPU; 0 = skip training)",
    )
    p.add_argument(
        "--trajectories",
        type=positive_int,
        default=20,
        metavar="N",
        help="sampled sequences per epoch (default 20)",
    )
    p.add_argument(
        "--iters",
        type=positive_int,
        default=40,
        metavar="K",
        help="policy and value steps per epoch (default 40)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="training directory (default: a new temporary directory; an existing "
        "run there is resumed)",
    )
    p.set_defaults(handler=_cmd_demo)
