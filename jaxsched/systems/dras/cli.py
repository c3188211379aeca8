"""``jaxsched train dras`` flags and their translation into a training run; ``python -m
jaxsched.systems.dras TRACE --model DIR`` (the §10 test-period report)."""

from __future__ import annotations

import argparse

from jaxsched.cli.args import (
    add_run_arguments,
    nonneg_float,
    nonneg_int,
    positive_float,
    positive_int,
)

__all__ = ["HELP", "DESCRIPTION", "add_train_arguments", "train_from_args", "evaluate_main"]

HELP = "DRAS: two-level (run/reserve/backfill) PG or DQL scheduler on CQSim semantics"
DESCRIPTION = (
    "Train a DRAS-PG policy or DRAS-DQL value network (--variant; spec dras.md section 7) on "
    "the three-phase curriculum of TRACE's "
    "first two months (CQSim loading), E jobsets vectorised per epoch, updates every 10 "
    "scheduling instances; validation on the third month; a checkpoint and a log line every "
    "epoch in --out DIR."
)


#: ``train --resume`` refuses these flags given with another value than the run's
#: (:func:`jaxsched.cli.train.check_resume_flags`): (dest, flag, run.json key)
RESUME_SETTINGS = (
    ("seed", "--seed", "seed"), ("mode", "--mode", "mode"), ("lr", "--lr", "lr"),
    ("variant", "--variant", "variant"), ("envs", "--envs", "envs"),
    ("jobs_per_set", "--jobs-per-set", "jobs_per_set"),
)  # fmt: skip


def _hidden(text: str) -> tuple:
    from jaxsched.cli.args import csv_ints

    v = csv_ints(text)
    if len(v) != 2 or min(v) < 1:
        raise argparse.ArgumentTypeError(f"expected two positive sizes H1,H2, got {text!r}")
    return tuple(v)


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), got {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), got {text!r}")
    return v


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """Add the flags of ``jaxsched train dras``."""
    p.add_argument("trace", metavar="TRACE", help="SWF file (.swf or .swf.gz)")
    add_run_arguments(p)
    p.add_argument(
        "--variant",
        choices=("pg", "dql"),
        default="pg",
        help="pg (policy gradient, default) or dql (value network, epsilon-greedy)",
    )
    p.add_argument(
        "--dql-sign",
        choices=("code", "descent"),
        default=None,
        help="DQL update direction: code (the code's and paper's sign; default in code mode) "
        "or descent (toward the target; a documented deviation, default in paper mode)",
    )
    p.add_argument(
        "--online",
        choices=("on", "off"),
        default=None,
        help="PG online adaptation in test runs (default: on in code mode, as the reference)",
    )
    p.add_argument("--mode", choices=("code", "paper"), default="code")
    p.add_argument(
        "--loop",
        choices=("code", "persistent", "paper", "immediate"),
        default=None,
        help="scheduling loop: code (the code's: PG keeps a persistent reservation for the "
        "oldest job, DQL reserves it for one pass), persistent (PG's persistent reservation, "
        "also for DQL), paper (the non-fitting pick reserved for one pass) or immediate (the "
        "Decima-PG baseline: runnable jobs only, no reservation, no backfilling; pg); default "
        "the mode's",
    )
    p.add_argument(
        "--reward",
        choices=("code", "capability", "capacity"),
        default=None,
        help="reward per decision: code (type 5; DQL's with the code's timing), capability (the "
        "paper's Eq. 1) or "
        "capacity (Eq. 2: mean -1/estimate over the jobs left waiting); default code in code "
        "mode, in paper mode capability with --priority and capacity without",
    )
    p.add_argument(
        "--input-norm",
        action="store_true",
        help="scale inputs by N and the longest estimate (default raw, as the paper)",
    )
    p.add_argument(
        "--hidden",
        type=_hidden,
        default=None,
        metavar="H1,H2",
        help="hidden sizes (default from N: 4000,1000 up to 4392 nodes)",
    )
    p.add_argument(
        "--keep-checkpoints",
        type=nonneg_int,
        default=None,
        metavar="K",
        help="keep the newest K epoch checkpoints in DIR (default 1; 0 keeps every epoch's; a "
        "resumed run keeps its own setting)",
    )
    p.add_argument(
        "--envs",
        type=positive_int,
        default=4,
        metavar="E",
        help="jobsets per epoch, vectorised (default 4)",
    )
    p.add_argument(
        "--jobs-per-set",
        type=nonneg_int,
        default=0,
        metavar="L",
        help="jobs per training jobset (0 = the mean weekly count)",
    )
    p.add_argument(
        "--curriculum",
        type=_curriculum,
        default=(9, 9, 82),
        metavar="S,R,Y",
        help="sampled, real, synthetic jobsets (default 9,9,82)",
    )
    p.add_argument(
        "--capacity",
        type=positive_int,
        default=256,
        metavar="C",
        help="decisions per batch (default 256)",
    )
    p.add_argument(
        "--update",
        choices=("mean", "sequential"),
        default=None,
        help="mean (pg default) or sequential (dql's only form)",
    )
    p.add_argument("--lr", type=nonneg_float, default=None, help="default: the mode's")
    p.add_argument(
        "--priority",
        type=_fraction,
        default=None,
        metavar="F",
        help="priority flag 1 for jobs wider than F x N (default flag 0)",
    )
    p.add_argument(
        "--load",
        type=positive_float,
        default=None,
        metavar="F",
        help="training jobsets' arrival rate x F (times divided by F; validation and tests "
        "keep the trace's; not in the paper)",
    )
    p.add_argument("--no-validate", action="store_true")
    p.add_argument("--validate-every", type=positive_int, default=1, metavar="K")
    p.add_argument(
        "--best-by",
        choices=("wait", "reward", "bounded-wait"),
        default="wait",
        help="best.ckpt by the validation month's average wait (default), total reward, or "
        "average wait among the epochs whose maximum wait stays within 1.5x FCFS + EASY's "
        "(bounded-wait)",
    )
    # fmt: skip


def _curriculum(text: str) -> tuple:
    from jaxsched.cli.args import csv_ints

    v = csv_ints(text)
    if len(v) != 3 or min(v) < 0 or sum(v) == 0:
        raise argparse.ArgumentTypeError(f"expected three counts S,R,Y >= 0, got {text!r}")
    return tuple(v)


def train_from_args(args: argparse.Namespace) -> int:
    from jaxsched.systems.dras.config import RunConfig
    from jaxsched.systems.dras.run import train

    s, r, y = args.curriculum
    rc = RunConfig(
        trace=str(args.trace), variant=args.variant, mode=args.mode, input_norm=args.input_norm,
        hidden=args.hidden or (), envs=args.envs, jobs_per_set=args.jobs_per_set,
        n_sampled=s, n_real=r, n_synthetic=y, capacity=args.capacity, update=args.update,
        lr=args.lr, priority=args.priority, seed=args.seed, validate=not args.no_validate,
        dql_sign=args.dql_sign, online=None if args.online is None else args.online == "on",
        reward=args.reward, loop=args.loop, validate_every=args.validate_every, best_by=args.best_by,
        keep_checkpoints=args.keep_checkpoints, load=args.load,
    )  # fmt: skip
    train(rc, args.out, epochs=args.epochs, resume=args.resume, progress=not args.no_progress)
    return 0


def evaluate_main(argv=None) -> int:
    """``python -m jaxsched.systems.dras [TRACE] --model DIR [--jobs K] [--sample]``: the model
    and FCFS + EASY, BinPacking, Random, Optimization on the test period of TRACE (default the
    run's) as one continuous simulation; H2's §10 table (metrics, Table IV shares, Kiviat)."""
    from jaxsched.systems.dras.evaluate import load_dras, test_report

    p = argparse.ArgumentParser(prog="python -m jaxsched.systems.dras")
    p.add_argument("trace", nargs="?", default=None)
    p.add_argument("--model", required=True)
    p.add_argument("--jobs", type=positive_int, default=None, help="first K test jobs")
    p.add_argument("--sample", action="store_true", help="sampled picks (default greedy)")
    p.add_argument("--online", choices=("on", "off"), default=None,
                   help="PG online adaptation (default: the run's; on in code mode)")  # fmt: skip
    a = p.parse_args(argv)
    from jaxsched.models import resolve

    online = None if a.online is None else a.online == "on"
    print(test_report(load_dras(resolve(a.model)), a.trace, jobs=a.jobs, sample=a.sample,
                      online=online))  # fmt: skip
    return 0
