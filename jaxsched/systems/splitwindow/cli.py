"""``jaxsched train splitwindow`` flags and their translation into a training run."""

from __future__ import annotations

import argparse

from jaxsched.cli.args import (
    add_run_arguments,
    add_split_arguments,
    csv_ints,
    int_arg,
    nonneg_float,
    nonneg_int,
    positive_float,
    positive_int,
    session_flags,
    unit_weights,
)

__all__ = ["HELP", "DESCRIPTION", "add_train_arguments", "train_from_args", "SESSION_FLAGS"]

#: flags of how a run is carried out, kept in DIR/flags.json so that ``--resume`` without them
#: goes on as the run was started (:func:`jaxsched.cli.args.session_flags`)
SESSION_FLAGS = {"validate": 0}

HELP = "split-window deep back-filling (DBF): MLP actor-critic trained with minibatched PPO"
DESCRIPTION = (
    "Train a split-window DBF agent (head M_h, tail M_t window of the queue) with PPO on "
    "1,000-placement episodes from random offsets of TRACE; a checkpoint and a log line every "
    "epoch in --out DIR."
)


#: ``train --resume`` refuses these flags given with another value than the run's
#: (:func:`jaxsched.cli.train.check_resume_flags`): (dest, flag, run.json key)
RESUME_SETTINGS = (
    ("seed", "--seed", "seed"), ("envs", "--envs", "ppo.num_envs"),
    ("steps", "--steps", "ppo.max_episode_steps"), ("placements", "--placements", "placements"),
    ("minibatch", "--minibatch", "ppo.minibatch_size"),
    ("ppo_epochs", "--ppo-epochs", "ppo.train_pi_iters"), ("lr", "--lr", "ppo.pi_lr"),
    ("hidden", "--hidden", "hidden"), ("activation", "--activation", "activation"),
    ("sigma", "--sigma", "sigma"), ("queue_cap", "--queue-cap", "queue_cap"),
    ("weights", "--weights", "weights"),
)  # fmt: skip


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """Add the flags of ``jaxsched train splitwindow`` to its parser."""
    p.add_argument("trace", metavar="TRACE", help="SWF file (.swf or .swf.gz)")
    add_run_arguments(p)
    p.add_argument("--head", type=nonneg_int, default=None, metavar="M_H",
                   help="head slots (required for a new run; with --resume: the run's)")  # fmt: skip
    p.add_argument("--tail", type=nonneg_int, default=None, metavar="M_T",
                   help="tail slots (default 0; with --resume: the run's)")  # fmt: skip
    p.add_argument("--seeds", default=None, metavar="LIST",
                   help="a sweep: train every seed (e.g. 0-3 or 0,5) in one vmapped update per "
                   "epoch, one run directory per seed in DIR/seed-<s>")  # fmt: skip
    p.add_argument("--envs", type=positive_int, default=16, metavar="E",
                   help="episodes collected in parallel per update (default 16)")  # fmt: skip
    p.add_argument("--steps", type=positive_int, default=4096, metavar="T",
                   help="decisions per environment per update; longer episodes are dropped "
                   "(default 4096)")  # fmt: skip
    p.add_argument("--placements", type=positive_int, default=1000, metavar="P",
                   help="placements per episode (default 1000)")  # fmt: skip
    p.add_argument("--minibatch", type=positive_int, default=128, metavar="B")
    p.add_argument("--ppo-epochs", type=positive_int, default=10, metavar="K",
                   help="passes over each update's samples (default 10)")  # fmt: skip
    p.add_argument("--lr", type=nonneg_float, default=3e-4, metavar="LR")
    p.add_argument("--target-kl", type=positive_float, default=None, metavar="KL",
                   help="stop an update's policy passes once a minibatch's approx-KL exceeds "
                   "1.5 x KL (default: no stop, all --ppo-epochs passes)")  # fmt: skip
    p.add_argument("--hidden", type=csv_ints, default=[1024, 512, 256], metavar="H1,H2,...")
    p.add_argument("--activation", choices=("relu", "tanh"), default="relu")
    p.add_argument("--sigma", choices=("remaining", "elapsed"), default="remaining")
    p.add_argument("--mask", action="store_true", help="mask invalid picks (paper: no mask)")
    p.add_argument("--queue-cap", type=positive_int, default=4096, metavar="Q",
                   help="queued jobs an episode holds; an episode whose queue outgrows it "
                   "stops training with an error (default 4096)")  # fmt: skip
    p.add_argument("--weights", type=unit_weights, default=None, metavar="W1,W2,W3",
                   help="weights of the reward's utilisation, queue-length and wait terms, "
                   "each in [0, 1] (default 1/3 each, the paper's)")  # fmt: skip
    p.add_argument("--validate", type=nonneg_int, default=None, metavar="K",
                   help="every K epochs run the greedy policy on the fixed evaluation "
                   "episodes; best checkpoint (lowest average wait) in DIR/best.ckpt "
                   "(default 0: off; with --resume the run's own, see DIR/flags.json)")  # fmt: skip
    p.add_argument("--max-util-loss", type=nonneg_float, default=None, metavar="P",
                   help="with --validate: best.ckpt only among validations whose utilisation "
                   "is at most P percentage points below FCFS + EASY's on the same episodes "
                   "(default: any)")  # fmt: skip
    add_split_arguments(
        p, ("train",), "episodes only from the first 50%% of the jobs, validation episodes only "
        "from the next 10%% (docs/splits.md); run.json records the split and jobs_seen",
    )  # fmt: skip
    p.add_argument("--val-episodes", type=positive_int, default=100, metavar="N")
    p.add_argument("--val-seed", type=int_arg, default=1, metavar="S")


def train_from_args(args) -> int:
    """``jaxsched train splitwindow ...``; returns the exit status."""
    import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
    from jaxsched.errors import ConfigError
    from jaxsched.systems.splitwindow.run import train

    head, tail = _window(args)
    if args.max_util_loss is not None and not (args.resume or args.validate):
        raise ConfigError("--max-util-loss P needs --validate K (it bounds the validations)")
    validate = session_flags(args, SESSION_FLAGS)["validate"]

    ppo = dict(
        num_envs=args.envs, max_episode_steps=args.steps, minibatch_size=args.minibatch,
        train_pi_iters=args.ppo_epochs, train_v_iters=args.ppo_epochs, pi_lr=args.lr,
        vf_lr=args.lr, target_kl=args.target_kl,
    )  # fmt: skip
    common = dict(
        head=head, tail=tail, epochs=args.epochs, resume=args.resume,
        validate_every=validate, progress=not args.no_progress, placements=args.placements,
        queue_cap=args.queue_cap, sigma=args.sigma, mask=args.mask, hidden=tuple(args.hidden),
        activation=args.activation, val_episodes=args.val_episodes, val_seed=args.val_seed,
        ppo=ppo, max_util_loss=args.max_util_loss, split=args.split,
        split_fractions=args.split_fractions, validated=bool(validate),
    )  # fmt: skip
    if args.weights is not None:
        common["weights"] = tuple(args.weights)
    if args.seeds is not None:
        from jaxsched.systems.splitwindow.sweep import train_sweep
        from jaxsched.train.sweep import parse_seeds

        outs = train_sweep(args.trace, args.out, parse_seeds(args.seeds), **common)
        print(f"trained {args.epochs} epochs of {len(outs)} seeds; runs in {args.out}/seed-*")
        return 0
    out = train(args.trace, args.out, seed=args.seed, **common)
    print(f"trained {args.epochs} epochs; checkpoint and log in {out}")
    return 0


def _window(args) -> tuple[int, int]:
    """(head, tail) of the command: for a new run ``--head`` (required) and ``--tail`` (default
    0); with ``--resume`` the run's own window (of its first seed for ``--seeds``), which a
    ``--head`` / ``--tail`` given as well must repeat (ConfigError otherwise)."""
    from pathlib import Path

    from jaxsched.errors import ConfigError
    from jaxsched.train.loop import RUN_FILE, open_run
    from jaxsched.train.sweep import parse_seeds, sweep_dirs

    if not args.resume:
        if args.head is None:
            raise ConfigError("--head M_H is required to start a run")
        return args.head, 0 if args.tail is None else args.tail
    out = Path(args.out)
    if args.seeds is not None:
        out = sweep_dirs(out, parse_seeds(args.seeds))[0]
    path = out / RUN_FILE
    try:
        run = open_run(out, resume=True)  # ConfigError when there is nothing to resume
        saved = (int(run["head"]), int(run["tail"]))
    except ValueError as e:
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(f"{path}: not a readable run.json") from None
    except (KeyError, TypeError):
        raise ConfigError(f"{path}: not a split-window run (no head/tail)") from None
    for name, given, have in (("--head", args.head, saved[0]), ("--tail", args.tail, saved[1])):
        if given is not None and given != have:
            raise ConfigError(
                f"{path}: the run's window is {saved[0]}-{saved[1]}; {name} {given} differs "
                f"(drop it to resume the run as it is)"
            )
    return saved
