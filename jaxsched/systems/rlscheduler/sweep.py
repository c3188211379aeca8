"""``jaxsched train rlscheduler … --seeds 0-7``: a sweep over seeds trained as one vmapped PPO
update per epoch (:mod:`jaxsched.train.sweep`), one ordinary run directory per seed::

    DIR/seed-0/run.json, log.jsonl, checkpoint_*.ckpt, [validation.json, best.*, filter.npz]
    DIR/seed-3/...

Seed ``s`` of a sweep trains what ``train(…, seed=s, out=DIR/seed-s)`` alone would (its own
initialisation, sampled sequences and PRNG stream), up to float rounding; ``--resume``
continues every seed's directory.  Everything but the seed must be the same for all seeds
(one compiled update): the run settings saved in the seeds' ``run.json`` are checked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from jaxsched.fileio import atomic_write
from jaxsched.systems.rlscheduler.config import RunConfig
from jaxsched.systems.rlscheduler.run import (
    FILTER_FILE,
    _epoch_spec,
    _init_from,
    _Trainers,
    _Validator,
    check_settings,
    check_validate,
    validate_untrained,
)
from jaxsched.train.loop import recover_log
from jaxsched.train.sweep import (
    SEED_AXIS,
    run_sweep_epochs,
    seed_run_configs,
    stack_trees,
    start_or_resume_seeds,
    sweep_dirs,
)
from jaxsched.workload import read_swf

__all__ = ["train_sweep"]


def _validators(jobs, rcs, outs, validation) -> list:
    validate, n, length, seed = validation
    if not validate:
        return [None] * len(outs)
    check_validate(validate)
    first = _Validator(jobs, rcs[0], outs[0], n, length, seed)
    return [first] + [first.for_dir(o) for o in outs[1:]]


def _share_filter(outs: Sequence[Path]) -> None:
    """Copy the first seed's cached trajectory-filter table to the other seeds' directories."""
    src = outs[0] / FILTER_FILE
    if src.is_file():
        for o in outs[1:]:
            o.mkdir(parents=True, exist_ok=True)
            if not (o / FILTER_FILE).is_file():
                atomic_write(o / FILTER_FILE, src.read_bytes())


def train_sweep(
    out,
    epochs: int,
    rc: RunConfig,
    seeds: Sequence[int],
    *,
    resume: bool = False,
    compare: bool = True,
    progress: bool = True,
    validation: tuple = (0, 10, 1024, 2),
    keep_checkpoints: int = 1,
    log: Callable[[str], None] = print,
) -> dict:
    """Train ``rc`` for every seed of ``seeds`` (ints, distinct) in ``out/seed-<s>``.

    ``validation`` = ``(validate, val_sequences, val_jobs, val_seed)`` of
    :func:`jaxsched.systems.rlscheduler.run.train`; the other arguments are that function's.
    Returns ``{"epochs", "histories" (one list per seed), "runs" (RunConfig per seed),
    "dirs"}``."""
    outs = sweep_dirs(out, seeds)
    rcs = seed_run_configs(outs, rc, seeds, resume=resume, from_dict=RunConfig.from_dict)
    check_settings(rcs[0], epochs)
    jobs = read_swf(rcs[0].trace).jobs(rcs[0].rules)
    vals = _validators(jobs, rcs, outs, validation)
    trainers = _Trainers(jobs, rcs[0], outs[0], resume, log, seed_axis=SEED_AXIS)
    _share_filter(outs)
    t0 = time.perf_counter()
    states, histories, done_epochs = start_or_resume_seeds(
        outs, rcs, trainers.phase1, resume=resume, run_json=lambda r: r.to_run_json(),
        fresh=lambda r: _init_from(r, log), log=log,
    )  # fmt: skip
    result = {"epochs": epochs, "histories": histories, "runs": rcs, "dirs": outs}
    specs = [
        _epoch_spec(jobs, r, trainers, v, validation[0], compare, keep_checkpoints)
        for r, v in zip(rcs, vals)
    ]
    if done_epochs >= epochs:
        for o, spec, st in zip(outs, specs, states):
            recover_log(o, spec, st, done_epochs)  # the last epoch's row, if it was cut
        log(f"{out}: already trained for {done_epochs} epochs (asked for {epochs})")
        return {**result, "epochs": done_epochs}
    if done_epochs == 0:  # a residual run's untrained model is a candidate too
        for o, st, r, v in zip(outs, states, rcs, vals):
            validate_untrained(o, st, trainers.phase1, v, r, keep_checkpoints, log)
    _, histories = run_sweep_epochs(
        outs, stack_trees(states), histories, specs, done_epochs=done_epochs, epochs=epochs,
        t0=t0, progress=progress, log=log,
    )  # fmt: skip
    return result
