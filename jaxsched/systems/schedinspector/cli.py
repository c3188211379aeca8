"""``jaxsched train schedinspector`` flags and their translation into a training run."""

from __future__ import annotations

import argparse

from jaxsched.cli.args import (
    add_devices_argument,
    add_run_arguments,
    add_split_arguments,
    finite_float,
    int_arg,
    nonneg_float,
    nonneg_int,
    positive_int,
    session_flags,
)

__all__ = ["HELP", "DESCRIPTION", "add_train_arguments", "train_from_args", "evaluate_main"]

HELP = "SchedInspector: an inspector that may reject a base scheduler's decisions (PPO)"
DESCRIPTION = (
    "Train a SchedInspector policy (accept/reject the base scheduler's proposed job) with PPO "
    "on sequences sampled from TRACE (spec section 6 defaults); a checkpoint and a log line "
    "every epoch in --out DIR."
)


#: ``train --resume`` refuses these flags given with another value than the run's
#: (:func:`jaxsched.cli.train.check_resume_flags`): (dest, flag, run.json key)
RESUME_SETTINGS = (
    ("seed", "--seed", "seed"), ("metric", "--metric", "metric"),
    ("backfill", "--backfill", "backfill"), ("mode", "--mode", "mode"),
    ("length", "--length", "length"), ("trajectories", "--trajectories", "num_envs"),
    ("pi_lr", "--pi-lr", "pi_lr"), ("vf_lr", "--vf-lr", "vf_lr"),
    ("pi_iters", "--pi-iters", "train_pi_iters"), ("v_iters", "--v-iters", "train_v_iters"),
)  # fmt: skip


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """Add the flags of ``jaxsched train schedinspector``."""
    from jaxsched.envs.schedinspector import BACKFILLS, METRICS, MODES
    from jaxsched.policies.inspector_bases import BASES

    p.add_argument("trace", metavar="TRACE", help="SWF file (.swf or .swf.gz)")
    add_run_arguments(p)
    p.add_argument("--base", default="sjf", help=f"base scheduler ({', '.join(BASES)})")
    p.add_argument("--metric", choices=METRICS, default="bsld")
    p.add_argument(
        "--backfill",
        choices=BACKFILLS,
        default="none",
        help="none, the reference's greedy backfilling (rlscheduler), or the same in "
        "shortest-requested-time order (rlscheduler-sjbf: an extension of the reference)",
    )
    p.add_argument("--mode", choices=MODES, default="compat")
    p.add_argument("--trajectories", type=positive_int, default=100, metavar="N")
    p.add_argument("--length", type=positive_int, default=128, metavar="L")
    p.add_argument(
        "--max-steps",
        type=positive_int,
        default=None,
        metavar="T",
        help="decisions per trajectory before it is dropped (default 10 x L)",
    )
    p.add_argument(
        "--cap-reward",
        type=finite_float,
        default=None,
        metavar="R",
        help="end a trajectory that reaches --max-steps decisions with reward R and train on "
        "it (default: drop it, as the reference does; -1 is the worst reward of a finished one)",
    )
    p.add_argument(
        "--util-weight",
        type=finite_float,
        default=0.0,
        metavar="W",
        help="add W x the relative change of utilisation against the base's to the training "
        "reward (not in the paper; default 0)",
    )
    p.add_argument(
        "--slice",
        type=nonneg_int,
        default=None,
        metavar="U",
        help="training starts from the first U jobs (0 = all; default 10000)",
    )
    add_split_arguments(
        p,
        ("train",),
        "train on the first 50%% of the jobs and validate on the next 10%% (instead of "
        "--slice; docs/splits.md); run.json records the split and jobs_seen",
    )
    p.add_argument("--pi-iters", type=positive_int, default=80, metavar="K")
    p.add_argument("--v-iters", type=positive_int, default=80, metavar="K")
    p.add_argument("--pi-lr", type=nonneg_float, default=3e-4, metavar="LR")
    p.add_argument("--vf-lr", type=nonneg_float, default=1e-3, metavar="LR")
    p.add_argument(
        "--validate",
        type=nonneg_int,
        default=0,
        metavar="K",
        help="greedy validation on K sequences of 256 jobs (reference draw)",
    )
    p.add_argument("--validate-every", type=positive_int, default=10, metavar="E")
    p.add_argument(
        "--eval-length",
        type=positive_int,
        default=256,
        metavar="L",
        help="jobs per validation sequence (default 256)",
    )
    p.add_argument(
        "--max-util-loss",
        type=nonneg_float,
        default=None,
        metavar="P",
        help="keep as best.ckpt only epochs whose validation utilisation is at most P "
        "percentage points below the base's (default: any)",
    )
    p.add_argument(
        "--keep-checkpoints",
        type=nonneg_int,
        default=None,
        metavar="K",
        help="newest epoch checkpoints kept in DIR (default 1; 0 keeps all, to score them "
        "on more sequences later; with --resume: the run's own)",
    )
    add_devices_argument(p)


def train_from_args(args: argparse.Namespace) -> int:
    from jaxsched.train.parallel import expose_host_devices

    expose_host_devices(args.devices)  # before JAX starts: on a CPU, one device per core
    from jaxsched.policies.inspector_bases import BASES, base_code
    from jaxsched.systems.schedinspector.config import RunConfig
    from jaxsched.systems.schedinspector.run import train

    rc = RunConfig(
        trace=str(args.trace),
        base=BASES[base_code(args.base)],
        metric=args.metric,
        backfill=args.backfill,
        mode=args.mode,
        length=args.length,
        job_slice=10000 if args.slice is None else args.slice,
        seed=args.seed,
        num_envs=args.trajectories,
        max_steps=args.max_steps or 10 * args.length,
        cap_reward=args.cap_reward,
        util_weight=args.util_weight,
        pi_lr=args.pi_lr,
        vf_lr=args.vf_lr,
        train_pi_iters=args.pi_iters,
        train_v_iters=args.v_iters,
        validate=args.validate,
        validate_every=args.validate_every,
        eval_length=args.eval_length,
        max_util_loss=args.max_util_loss,
    )
    if not args.resume:  # a resumed run keeps its own (run.json)
        rc = _with_split(rc, args)
    train(
        rc,
        args.out,
        epochs=args.epochs,
        resume=args.resume,
        progress=not args.no_progress,
        keep_checkpoints=session_flags(args, {"keep_checkpoints": 1})["keep_checkpoints"],
        devices=args.devices,
    )
    return 0


def _with_split(rc, args):
    """``rc`` with ``--split`` (:func:`jaxsched.workload.splits.with_training_split`)."""
    from jaxsched.errors import ConfigError
    from jaxsched.systems.schedinspector.config import load_jobs
    from jaxsched.workload.splits import with_training_split

    if args.split is not None and args.slice is not None:
        raise ConfigError("--split and --slice do not go together (the split sets the slice)")
    return with_training_split(
        rc,
        lambda: load_jobs(rc.trace, rc.mode)[0].n_jobs,
        args.split,
        args.split_fractions,
        validated=bool(rc.validate),
    )


def evaluate_main(argv=None) -> int:
    """``python -m jaxsched.systems.schedinspector TRACE --model DIR [--seed S] [--sequences K]
    [--jobs L] [--sample]``: base alone vs base + inspector (paired difference ± s.e.,
    rejection ratio) on sequences drawn as the reference's test script (spec §8.2)."""
    from jaxsched.systems.schedinspector.config import load_jobs
    from jaxsched.systems.schedinspector.evaluate import (
        compare,
        format_compare,
        load_inspector,
        test_starts,
    )

    p = argparse.ArgumentParser(prog="python -m jaxsched.systems.schedinspector")
    p.add_argument("trace")
    p.add_argument("--model", required=True)
    p.add_argument("--seed", type=int_arg, default=1)
    p.add_argument("--sequences", type=positive_int, default=50)
    p.add_argument("--jobs", type=positive_int, default=256)
    p.add_argument("--sample", action="store_true", help="sampled actions (the reference)")
    a = p.parse_args(argv)
    model = load_inspector(a.model)
    jobs, _ = load_jobs(a.trace, model.run.mode)
    starts = test_starts(jobs.n_jobs, a.jobs, a.sequences, a.seed)
    res = compare(model, starts, a.jobs, trace=a.trace, sample=a.sample)
    print(f"{a.trace}: model {model.path} (epoch {model.epoch}), seed {a.seed}")
    print(format_compare(res))
    return 0
