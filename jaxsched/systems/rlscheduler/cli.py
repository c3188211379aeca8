"""``jaxsched train rlscheduler`` flags and their translation into a training run."""

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

__all__ = ["HELP", "DESCRIPTION", "add_train_arguments", "train_from_args", "SESSION_FLAGS"]

#: flags of how a run is carried out rather than what it trains, with their defaults: kept in
#: DIR/flags.json (:func:`jaxsched.cli.args.session_flags`), so that ``--resume`` without them
#: goes on as the run was started (an earlier resume without ``--keep-checkpoints 0`` deleted
#: the kept checkpoints, and one without ``--validate`` stopped validating)
SESSION_FLAGS = {
    "keep_checkpoints": 1,
    "validate": 0,
    "val_sequences": 10,
    "val_jobs": 1024,
    "val_seed": 2,
}

HELP = "RLScheduler: kernel policy network trained with PPO"
DESCRIPTION = (
    "Train RLScheduler's kernel policy network with PPO on sequences sampled "
    "from TRACE; a checkpoint and a log line every epoch in --out DIR."
)


#: ``train --resume`` refuses these flags given with another value than the run's
#: (:func:`jaxsched.cli.train.check_resume_flags`): (dest, flag, run.json key)
RESUME_SETTINGS = (
    ("seed", "--seed", "seed"), ("metric", "--metric", "metric"),
    ("backfill", "--backfill", "backfill"), ("length", "--length", "length"),
    ("trajectories", "--trajectories", "ppo.num_envs"), ("pi_lr", "--pi-lr", "ppo.pi_lr"),
    ("vf_lr", "--vf-lr", "ppo.vf_lr"), ("pi_iters", "--pi-iters", "ppo.train_pi_iters"),
    ("v_iters", "--v-iters", "ppo.train_v_iters"), ("policy_net", "--policy-net", "policy"),
    ("value_net", "--value-net", "value"),
)  # fmt: skip


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """Add the flags of ``jaxsched train rlscheduler`` to its parser, in ``--help`` groups."""
    _add_problem_arguments(p.add_argument_group("problem"))
    _add_run_arguments(p.add_argument_group("run"))
    _add_device_arguments(p.add_argument_group("devices"))
    _add_ppo_arguments(p.add_argument_group("PPO"))
    _add_validation_arguments(p.add_argument_group("validation"))
    _add_filter_arguments(p.add_argument_group("trajectory filtering"))


def _add_problem_arguments(p) -> None:
    """Flags: what to train for: the trace, the metric, the simulator's semantics."""
    from jaxsched.sim.metrics import METRICS

    p.add_argument("trace", metavar="TRACE", help="SWF file (.swf or .swf.gz)")
    p.add_argument(
        "--metric", choices=METRICS, default="bsld", help="what to optimise (default bsld)"
    )
    p.add_argument("--backfill", choices=("none", "rlscheduler", "easy"), default="none")
    p.add_argument(
        "--compat",
        choices=("rlscheduler",),
        default=None,
        help="train in the reference simulator's semantics (the paper's); default: "
        "the correct mode",
    )
    p.add_argument(
        "--length",
        type=positive_int,
        default=256,
        metavar="L",
        help="jobs per training sequence (default 256; the reference's fairness "
        "environment trains on 128)",
    )
    p.add_argument(
        "--user-feature",
        action="store_true",
        help="observation rows with the per-user feature of the reference's fairness "
        "environment (HPCEnvFair: 1 - the job's user's mean bsld so far / the worst user's; "
        "9 features per job instead of 8)",
    )


def _add_run_arguments(p) -> None:
    """Flags: the run directory: epochs, seed, resume, checkpoints, progress."""
    g = p.add_mutually_exclusive_group()
    add_run_arguments(p, seed_group=g)
    g.add_argument(
        "--seeds",
        type=seed_list,
        default=None,
        metavar="A-B|A,B,...",
        help="a sweep: train every seed (e.g. 0-7 or 0,3,5) in one compiled update per "
        "epoch, seed s in DIR/seed-s (each as --seed s alone would train it)",
    )
    p.add_argument(
        "--keep-checkpoints",
        type=nonneg_int,
        default=None,
        metavar="K",
        help="keep the newest K epoch checkpoints in DIR (default 1; 0 keeps every epoch's; "
        "with --resume: the run's own)",
    )
    p.add_argument(
        "--job-slice",
        type=nonneg_int,
        default=0,
        metavar="N",
        help="draw the training and validation sequences from the first N jobs of the trace "
        "(the reference's batch_job_slice; the paper used 10000 for SDSC-SP2 and HPC2N, whose "
        "test sequences come from their first 10,000 jobs; default 0: the whole trace)",
    )
    add_split_arguments(
        p,
        ("train",),
        "draw the training sequences only from the first 50%% of the jobs and the "
        "validation ones only from the next 10%% (docs/splits.md); run.json records the "
        "split and jobs_seen (with --resume: the run's own)",
    )
    p.add_argument(
        "--init-from",
        default=None,
        metavar="CKPT",
        help="start from the networks and optimiser states of this checkpoint (a "
        "file, or a run directory's newest) instead of a fresh initialisation, "
        "e.g. to continue a run with other settings (the reference's "
        "--pre_trained)",
    )
    p.add_argument(
        "--no-compare", action="store_true", help="do not evaluate SJF/F1 on each epoch's sequences"
    )


def _add_device_arguments(p) -> None:
    """Flags: data-parallel training over devices and hosts."""
    add_devices_argument(p)
    p.add_argument(
        "--distributed",
        action="store_true",
        help="several hosts: call jax.distributed.initialize() first (it reads SLURM's or "
        "Open MPI's environment; automatic when SLURM_NTASKS or OMPI_COMM_WORLD_SIZE > 1); "
        "--devices then counts every host's devices and only process 0 writes DIR",
    )


def seed_list(text: str) -> list:
    """argparse type of ``--seeds``: ``0-7``, ``0,3,5`` or a mix -> list of ints."""
    from jaxsched.errors import ConfigError
    from jaxsched.train.sweep import parse_seeds

    try:
        return parse_seeds(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--seeds: ")) from None


def _add_ppo_arguments(p) -> None:
    """Flags: PPO and the networks."""
    p.add_argument(
        "--trajectories",
        type=positive_int,
        default=None,
        metavar="N",
        help="sequences per epoch (default 100)",
    )
    p.add_argument(
        "--pi-iters",
        type=positive_int,
        default=None,
        metavar="K",
        help="policy steps per epoch (default 80, KL early stop)",
    )
    p.add_argument(
        "--v-iters",
        type=positive_int,
        default=None,
        metavar="K",
        help="value steps per epoch (default 80)",
    )
    p.add_argument("--pi-lr", type=nonneg_float, default=None, metavar="LR")
    p.add_argument("--vf-lr", type=nonneg_float, default=None, metavar="LR")
    p.add_argument(
        "--lr-anneal-epochs",
        type=nonneg_int,
        default=None,
        metavar="K",
        help="decay both learning rates linearly over the first K epochs (default "
        "0: constant, as the reference)",
    )
    p.add_argument(
        "--lr-end-fraction",
        type=finite_float,
        default=None,
        metavar="F",
        help="with --lr-anneal-epochs: end value as a fraction of the learning rate (default 0)",
    )
    p.add_argument(
        "--policy-net", default="kernel", help="kernel (default), mlp_v1, mlp_v2, mlp_v3, lenet"
    )
    p.add_argument("--value-net", default="kernel", help="kernel (default) or mlp")
    p.add_argument(
        "--residual",
        default="",
        metavar="HEURISTIC",
        help="a residual policy: each job's logit = -(its rank in this static heuristic's "
        "order among the visible jobs) / temperature + the kernel MLP's correction, whose "
        "output layer starts at zero, so the untrained greedy policy schedules exactly as the "
        "heuristic (f1, sjf, tuned:tuned-sdsc-easy, ...; the visible jobs are then the "
        "heuristic's first 128); with --validate the untrained model is epoch 0's candidate",
    )
    p.add_argument(
        "--residual-temperature",
        type=nonneg_float,
        default=0.5,
        metavar="T",
        help="with --residual: the initial temperature in rank units, learnt from there "
        "(default 0.5: the heuristic's first job is sampled with probability ~0.86)",
    )


def _add_validation_arguments(p) -> None:
    """Flags: validation (model choice on held-out sequences)."""
    p.add_argument(
        "--validate",
        type=nonneg_int,
        default=None,
        metavar="K",
        help="every K epochs run the greedy policy on validation sequences and "
        "keep the best checkpoint as DIR/best.ckpt (default 0: off; with --resume the "
        "run's own validation settings, see DIR/flags.json)",
    )
    p.add_argument(
        "--val-sequences",
        type=positive_int,
        default=None,
        metavar="N",
        help="validation sequences (default 10)",
    )
    p.add_argument(
        "--val-jobs",
        type=positive_int,
        default=None,
        metavar="J",
        help="jobs per validation sequence (default 1024)",
    )
    p.add_argument(
        "--val-seed",
        type=int_arg,
        default=None,
        metavar="S",
        help="seed of the validation starts, drawn as the reference does "
        "(default 2; the paper's test sequences are seed 1)",
    )


def _add_filter_arguments(p) -> None:
    """Flags: trajectory filtering (spec §7)."""
    p.add_argument(
        "--filter",
        choices=("off", "paper", "reference"),
        default="off",
        help="trajectory filtering (RLScheduler paper, section on training "
        "sequences): train only on sequences whose SJF result lies in "
        "(median, 2*mean) of all sequences (paper) or in (10, 150) with the "
        "reference code's off-by-one (reference); default off",
    )
    p.add_argument(
        "--filter-epochs",
        type=nonneg_int,
        default=0,
        metavar="K",
        help="with --filter: phase 1 = the first K epochs, then all sequences "
        "(phase 2); default 0 = filtered for the whole run",
    )


def train_from_args(args) -> int:
    """``jaxsched train rlscheduler ...``: run :func:`jaxsched.systems.rlscheduler.run.train`
    with the parsed flags; returns the exit status."""
    from jaxsched.train import parallel

    if parallel.distributed_requested(args.distributed):
        parallel.initialize_distributed()  # before anything else uses JAX
    else:
        parallel.expose_host_devices(args.devices)  # on CPU: one device per core asked for
    import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
    from jaxsched.systems.rlscheduler.run import train

    ppo = {}
    for flag, field in (
        ("trajectories", "num_envs"),
        ("pi_iters", "train_pi_iters"),
        ("v_iters", "train_v_iters"),
        ("pi_lr", "pi_lr"),
        ("vf_lr", "vf_lr"),
        ("lr_anneal_epochs", "lr_anneal_epochs"),
        ("lr_end_fraction", "lr_end_fraction"),
    ):
        v = getattr(args, flag)
        if v is not None:
            ppo[field] = v
    ppo["max_episode_steps"] = args.length
    compat = args.compat == "rlscheduler"
    session = session_flags(args, SESSION_FLAGS)
    res = train(
        args.trace,
        args.out,
        args.epochs,
        metric=args.metric,
        backfill=args.backfill,
        compat=compat,
        seed=args.seed,
        seeds=args.seeds,
        resume=args.resume,
        ppo=ppo,
        length=args.length,
        policy=args.policy_net,
        value=args.value_net,
        compare=not args.no_compare,
        progress=not args.no_progress,
        validate=session["validate"],
        val_sequences=session["val_sequences"],
        val_jobs=session["val_jobs"],
        val_seed=session["val_seed"],
        filter=args.filter,
        filter_epochs=args.filter_epochs,
        job_slice=args.job_slice,
        user_feature=args.user_feature,
        init_from=args.init_from,
        keep_checkpoints=session["keep_checkpoints"],
        devices=args.devices,
        split=args.split,
        split_fractions=args.split_fractions,
        residual=args.residual,
        residual_temperature=args.residual_temperature,
    )
    if not parallel.is_main_process():
        return 0
    where = args.out if args.seeds is None else f"{args.out}/seed-{{{_seed_text(args.seeds)}}}"
    print(f"trained {res['epochs']} epochs; checkpoint and log in {where}")
    return 0


def _seed_text(seeds) -> str:
    return ",".join(map(str, seeds))
