"""``jaxsched train splitwindow … --seeds 0-3``: several seeds of one window trained as one
vmapped PPO update per epoch (:mod:`jaxsched.train.sweep`), one ordinary run directory per seed
(``DIR/seed-<s>/``: ``run.json``, ``log.jsonl``, checkpoints, ``best.ckpt``), so every tool that
reads a run reads a sweep's seed. Seed ``s`` trains what ``--seed s`` alone would, up to float
rounding; ``--resume`` continues every seed. Everything but the seed is shared (one compiled
update), which the seeds' saved ``run.json`` files are checked for.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from jaxsched.systems.splitwindow.run import (
    RunConfig,
    epoch_spec,
    make_trainer,
    new_run_config,
    run_envs,
)
from jaxsched.train.loop import recover_log
from jaxsched.train.sweep import (
    run_sweep_epochs,
    seed_run_configs,
    stack_trees,
    start_or_resume_seeds,
    sweep_dirs,
)
from jaxsched.workload import read_swf

__all__ = ["train_sweep"]


def train_sweep(trace, out, seeds: Sequence[int], *, head: int, tail: int, epochs: int,
                resume: bool = False, validate_every: int = 0, progress: bool = True,
                log=print, **settings) -> list[Path]:  # fmt: skip
    """Train (or resume) ``seeds`` (distinct ints) of one window in ``out/seed-<s>``; the other
    arguments as :func:`jaxsched.systems.splitwindow.run.train`. Returns the seeds' run
    directories."""
    t0 = time.perf_counter()
    outs = sweep_dirs(out, seeds)
    base = new_run_config(trace, head, tail, settings)
    rcs = seed_run_configs(outs, base, seeds, resume=resume, from_dict=RunConfig.from_dict)
    jobs = read_swf(rcs[0].trace).jobs("rlscheduler")
    env, val_env = run_envs(jobs, rcs[0])
    trainer, actor = make_trainer(env, rcs[0])
    states, histories, done_epochs = start_or_resume_seeds(
        outs, rcs, trainer, resume=resume, run_json=lambda r: r.to_dict(), log=log
    )
    specs = [epoch_spec(val_env, actor, trainer, r, o, validate_every) for o, r in zip(outs, rcs)]
    if done_epochs >= epochs:
        for o, spec, st in zip(outs, specs, states):
            recover_log(o, spec, st, done_epochs)  # the last epoch's row, if it was cut
        log(f"{out}: already trained for {done_epochs} epochs (asked for {epochs})")
        return outs
    run_sweep_epochs(
        outs, stack_trees(states), histories, specs, done_epochs=done_epochs, epochs=epochs,
        t0=t0, progress=progress, log=log,
    )  # fmt: skip
    return outs
