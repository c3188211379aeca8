"""``jaxsched train a2c`` flags and their translation into a training run (or, with
``--evaluate-only``, the evaluation of a trained run)."""

from __future__ import annotations

import argparse
import dataclasses

from jaxsched.cli.args import (
    add_run_arguments,
    finite_float,
    int_arg,
    nonneg_float,
    nonneg_int,
    positive_int,
    session_flags,
)

__all__ = ["HELP", "DESCRIPTION", "add_train_arguments", "train_from_args", "SESSION_FLAGS"]

#: flags of how a run is carried out, kept in DIR/flags.json so that ``--resume`` without them
#: goes on as the run was started (a resume without ``--keep-checkpoints 0`` would otherwise
#: delete the kept checkpoints; :func:`jaxsched.cli.args.session_flags`)
SESSION_FLAGS = {"validate_every": 0, "keep_checkpoints": 1}

HELP = "A2cScheduler: CNN actor-critic (A2C, n-step TD) on the data-centre cluster"
DESCRIPTION = (
    "Train A2cScheduler's CNN actor and critic with n-step A2C on DeepRM-style data-centre "
    "jobsets drawn at --rate; a checkpoint and a log line every epoch in --out DIR, and the "
    "learned policy next to the baselines (Random, Tetris, SJF) on fixed jobsets at the end. "
    "--evaluate-only prints that table for the run in DIR without training."
)

#: flag -> RunConfig field, for the flags that map one to one
_FIELDS = {
    "rate": finite_float,
    "num_res": positive_int,
    "res_slot": positive_int,
    "horizon": positive_int,
    "num_slots": positive_int,
    "backlog_size": positive_int,
    "simu_len": positive_int,
    "max_job_len": positive_int,
    "step_cap": positive_int,
    "arch": str,
    "num_envs": positive_int,
    "n_steps": positive_int,
    "gamma": finite_float,
    "lr": nonneg_float,
    "optimizer": str,
    "entropy_coef": nonneg_float,
    "entropy_anneal_updates": nonneg_int,
    "value_coef": nonneg_float,
    "updates_per_epoch": positive_int,
    "algorithm": str,
    "trace": str,
    "trace_unit": positive_int,
    "trace_jobs": positive_int,
    "trace_eval": str,
    "pg_trajectories": positive_int,
    "eval_sequences": positive_int,
    "eval_seed": int_arg,
}


#: ``train --resume`` refuses these flags given with another value than the run's
#: (:func:`jaxsched.cli.train.check_resume_flags`): (dest, flag, run.json key)
RESUME_SETTINGS = (("seed", "--seed", "seed"),) + tuple(
    (k, "--" + k.replace("_", "-"), k) for k in _FIELDS if k != "trace"
)


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """Add the flags of ``jaxsched train a2c`` (defaults: :class:`RunConfig`'s)."""
    add_run_arguments(p, epochs_required=False, seed_default=None)
    p.add_argument("--evaluate-only", action="store_true",
                   help="print the trained run's policy next to the baselines, then exit "
                        "(--out may name a checkpoint file, e.g. DIR/best.ckpt)")  # fmt: skip
    p.add_argument("--sampled", action="store_true",
                   help="with --evaluate-only: also the policy with sampled actions")  # fmt: skip
    p.add_argument("--two-level", action="store_true",
                   help="with --evaluate-only: also the two-level greedy decoding (void only if "
                        "at least as probable as all jobs together, else the most probable "
                        "job)")  # fmt: skip
    p.add_argument("--validate-every", type=nonneg_int, default=None, metavar="K",
                   help="evaluate the greedy policy every K epochs, keep best.ckpt (default 0: "
                        "never; with --resume: the run's own, see DIR/flags.json)")  # fmt: skip
    p.add_argument("--future", action="store_true", help="DeepRM's future placement")
    p.add_argument("--mask", action="store_true", help="mask slots that cannot be allocated")
    p.add_argument("--no-idle-void", action="store_true",
                   help="mask void while the cluster is idle and a job can be placed (not in "
                        "the paper; a greedy void there repeats for ever once arrivals stop)")  # fmt: skip
    p.add_argument("--normalize-advantages", action="store_true",
                   help="standardise each update's advantages (not in the spec)")  # fmt: skip
    p.add_argument("--keep-checkpoints", type=nonneg_int, default=None, metavar="K",
                   help="newest epoch checkpoints kept in DIR (default 1; 0 keeps all, to "
                        "evaluate early epochs later; with --resume: the run's own)")  # fmt: skip
    p.add_argument("--no-evaluate", action="store_true",
                   help="skip the evaluation against the baselines after training")  # fmt: skip
    for name, kind in _FIELDS.items():
        choices = None
        if name == "arch":
            from jaxsched.nets.a2cscheduler import ARCHS

            choices = tuple(ARCHS)
        elif name == "optimizer":
            choices = ("rmsprop", "adam")
        elif name == "algorithm":
            choices = ("a2c", "pg")
        elif name == "trace_eval":
            choices = ("validation", "test")
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, choices=choices)


def train_from_args(args) -> int:
    """``jaxsched train a2c ...``: returns the exit status."""
    import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
    from jaxsched.errors import ConfigError
    from jaxsched.systems.a2cscheduler import evaluate as ev
    from jaxsched.systems.a2cscheduler.config import RunConfig, build_env
    from jaxsched.systems.a2cscheduler.run import load_model, train

    if args.evaluate_only:
        m = load_model(args.out)
        over = {k: getattr(args, k) for k in ("eval_seed", "eval_sequences", "trace_eval")}
        rc = dataclasses.replace(m.run, **{k: v for k, v in over.items() if v is not None})
        decodes = [d for d in ("two_level", "sampled") if getattr(args, d)]
        print(ev.comparison_text(m, build_env(rc), rc, decodes))
        return 0
    if args.epochs is None:
        raise ConfigError("--epochs is required to train (or use --evaluate-only)")
    kw = {k: getattr(args, k) for k in _FIELDS if getattr(args, k) is not None}
    if args.seed is not None:
        kw["seed"] = args.seed
    flags = ("future", "mask", "no_idle_void", "normalize_advantages")
    kw.update({k: True for k in flags if getattr(args, k)})
    session = session_flags(args, SESSION_FLAGS)
    train(RunConfig(**kw), args.out, epochs=args.epochs, resume=args.resume,
          validate_every=session["validate_every"], progress=not args.no_progress,
          evaluate=not args.no_evaluate, keep_checkpoints=session["keep_checkpoints"])  # fmt: skip
    return 0
