"""``jaxsched demo``: the main job on the bundled default trace."""

from __future__ import annotations

from pathlib import Path

from jaxsched.cli.args import (
    command,
    int_arg,
    positive_int,
)
from jaxsched.cli.trace import trace_report


def _cmd_demo(args) -> int:
    import tempfile

    from jaxsched.cli import main
    from jaxsched.workload import default_trace_path

    path = default_trace_path()
    print(f"jaxsched demo on the bundled default trace {path} (Lublin-1)\n")
    print(trace_report(path))
    print(
        "\nHeuristic schedulers on the RLScheduler paper's 10 test sequences (seed 1, 1024 jobs),"
    )
    print(
        "reference semantics (--compat rlscheduler): Tables V/VI heuristic columns of the paper.\n"
    )
    rc = main(
        [
            "evaluate",
            str(path),
            "--compat",
            "rlscheduler",
            "--metric",
            "bsld,util",
            "--sequences",
            str(args.sequences),
        ]
    )
    if rc:
        return rc
    print("\nThe same sequences in the correct mode, with true EASY backfilling:\n")
    rc = main(
        [
            "evaluate",
            str(path),
            "--metric",
            "bsld,util",
            "--backfill",
            "none,easy",
            "--sequences",
            str(args.sequences),
        ]
    )
    if rc or args.train_epochs == 0:
        return rc
    out = args.out or tempfile.mkdtemp(prefix="jaxsched-demo-")
    print(
        f"\nTraining an RLScheduler policy (kernel network, PPO) for bounded slowdown without "
        f"backfilling: {args.train_epochs} epochs of {args.trajectories} sampled 256-job "
        f"sequences, {args.iters} policy/value steps each (the paper: 100 sequences, 80 "
        f"steps, ~30 epochs) -> {out}\n"
    )
    argv = [
        "train",
        "rlscheduler",
        str(path),
        "--compat",
        "rlscheduler",
        "--epochs",
        str(args.train_epochs),
        "--out",
        out,
        "--trajectories",
        str(args.trajectories),
        "--pi-iters",
        str(args.iters),
        "--v-iters",
        str(args.iters),
    ]
    if args.out and (Path(out) / "run.json").exists():
        argv.append("--resume")
    rc = main(argv)
    if rc:
        return rc
    print(
        "\nThe learned policy (greedy picks) next to the heuristics on the held-out test "
        "sequences:\n"
    )
    return main(
        [
            "evaluate",
            str(path),
            "--compat",
            "rlscheduler",
            "--metric",
            "bsld",
            "--backfill",
            "none",
            "--sequences",
            str(args.sequences),
            "--model",
            out,
        ]
    )


@command("demo")
def _add_demo(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="a short demonstration on the bundled Lublin-1 trace",
        description="Show what jaxsched does on the bundled default trace.",
    )
    p.add_argument(
        "--sequences",
        type=positive_int,
        default=10,
        metavar="K",
        help="number of test sequences (default 10, the paper's)",
    )
    p.add_argument(
        "--train-epochs",
        type=int_arg,
        default=6,
        metavar="E",
        help="epochs of RLScheduler training (default 6, a few minutes on a "
        "2-core CPU; 0 = skip training)",
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
