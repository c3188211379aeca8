"""Sweeps over seeds as one compiled call: ``S`` independent training runs of one trainer, their
states stacked on a leading seed axis and the update ``jax.vmap``-ed over it.

Each seed keeps its own initialisation, sampled sequences and PRNG stream (all of them live in
its own train state), so seed ``s`` of a sweep is the run ``--seed s`` alone would give, up to
float rounding: the vmapped program batches the seeds' matrix products and reductions, which
XLA may sum in another order (not bit-equal; the tests bound the difference).

A sweep writes one ordinary run directory per seed, ``DIR/seed-<s>/`` (:func:`sweep_dirs`),
each with its own ``run.json``, ``log.jsonl``, checkpoints and best checkpoint, so every tool
that reads a run directory reads a sweep's seed; resuming resumes all of them (they must be
at the same epoch).  The host loop :func:`run_sweep_epochs` is :func:`jaxsched.train.loop.
run_epochs` with one vmapped update per epoch and one log row / checkpoint / validation per
seed.  Nothing here knows an environment: a *trainer* is any object with a pure
``update(state) -> (state, metrics)`` and ``run_config()``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.train.loop import (
    EpochSpec,
    finish_epoch,
    open_run,
    recover_log,
    save_epoch,
    start_or_resume,
)

__all__ = [
    "SEED_AXIS",
    "SeedSweep",
    "stack_trees",
    "tree_index",
    "sweep_dirs",
    "parse_seeds",
    "seed_run_configs",
    "start_or_resume_seeds",
    "common_epoch",
    "run_sweep_epochs",
    "make_sweep_update",
]


#: the name of the vmapped seed axis (``make_train(..., seed_axis=SEED_AXIS)``)
SEED_AXIS = "seed"


def stack_trees(trees: Sequence):
    """``S`` pytrees of one structure -> one pytree whose leaves have a leading axis ``[S]``
    (device arrays; stacked on the host, so no per-shape program is compiled)."""
    return jax.tree_util.tree_map(lambda *a: jnp.asarray(np.stack(a)), *trees)


def tree_index(tree, i: int):
    """Entry ``i`` of a pytree stacked by :func:`stack_trees` (leaves ``[S, ...] -> [...]``).
    Index a host copy (``jax.device_get``) to compile nothing: indexing device arrays runs an
    eager slice per leaf shape."""
    return jax.tree_util.tree_map(lambda a: a[i], tree)


class SeedSweep:
    """A trainer's update over a stack of train states, compiled once.

    ``update(states) -> (states, metrics)``: every leaf of ``states`` and of the metrics has a
    leading seed axis ``[S]``; ``run_config()`` is the trainer's (the seeds share it).

    The update is ``jax.vmap`` of the trainer's ``update`` with ``axis_name=``
    :data:`SEED_AXIS` (build the trainer with ``make_train(..., seed_axis=SEED_AXIS)`` when
    it uses slot prefixes).  ``flat_rollout=True`` uses the trainer's ``sweep_update``
    instead (:func:`jaxsched.train.make_train`'s: the rollouts of all seeds as one flat batch
    of environments, so the environment's own batching rules — the simulator's
    ``jax.custom_batching`` conditionals, which a vmap over seeds turns into selects of every
    branch — still apply, and the learning vmapped).  On the 2-core CPU neither beat separate
    calls (0.6-0.7x), and ``sweep_update`` took 15 min to compile there against 35-50 s
    (benchmarks/RESULTS.md §11); it is the one meant for accelerators, measured on none yet.
    (``lax.map`` over the seeds inside the call was 10x slower than separate calls.)"""

    def __init__(self, trainer, flat_rollout: bool = False):
        self.trainer = trainer
        batched = getattr(trainer, "sweep_update", None)
        if flat_rollout and batched is not None:
            self.update = jax.jit(batched)
        else:
            self.update = jax.jit(jax.vmap(trainer.update, axis_name=SEED_AXIS))

    def run_config(self) -> dict:
        return self.trainer.run_config()


def parse_seeds(text: str) -> list[int]:
    """``"0-7"``, ``"0,3,5"`` or a mix (``"0-3,8"``) -> the list of seeds (ints, in order,
    no repeats). ConfigError on anything else."""
    seeds: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-") if not part.startswith("-") else (part, "", "")
        try:
            rng = range(int(lo), int(hi) + 1) if sep else [int(part)]
        except ValueError:
            raise ConfigError(f"--seeds: expected e.g. 0-7 or 0,3,5, got {text!r}") from None
        if sep and int(hi) < int(lo):
            raise ConfigError(f"--seeds: empty range {part!r}")
        seeds.extend(rng)
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds: a seed is repeated in {text!r}")
    return seeds


def sweep_dirs(out, seeds: Sequence[int]) -> list[Path]:
    """The run directory of each seed of a sweep in ``out``: ``out/seed-<s>`` (ConfigError
    unless the seeds are distinct and there is at least one)."""
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds: expected distinct seeds, got {seeds}")
    return [Path(out) / f"seed-{s}" for s in seeds]


def seed_run_configs(
    outs: Sequence[Path], base, seeds: Sequence[int], *, resume: bool, from_dict: Callable
) -> list:
    """The run configuration (a dataclass with a ``seed`` field) of each seed of a sweep:
    ``base`` with its seed, or with ``resume`` the saved ``run.json`` of its directory
    (``from_dict``); they must agree on everything but the seed (ConfigError naming the
    directory otherwise), since a sweep trains one configuration."""
    rcs = []
    for out, s in zip(outs, seeds, strict=True):
        saved = open_run(out, resume)
        rcs.append(from_dict(saved) if saved else dataclasses.replace(base, seed=int(s)))
    first = dataclasses.replace(rcs[0], seed=0)
    for out, r, s in zip(outs, rcs, seeds, strict=True):
        if r.seed != int(s) or dataclasses.replace(r, seed=0) != first:
            raise ConfigError(
                f"{out}: its run.json is not seed {s} of the same settings as {outs[0]}; "
                f"a sweep trains one configuration"
            )
    return rcs


def start_or_resume_seeds(
    outs: Sequence[Path],
    rcs: Sequence,
    trainer,
    *,
    resume: bool,
    run_json: Callable,
    fresh: Callable | None = None,
    log: Callable[[str], None] = print,
) -> tuple[list, list, int]:
    """:func:`jaxsched.train.loop.start_or_resume` for every seed of a sweep: seed ``i``
    starts from ``trainer.init(PRNGKey(rcs[i].seed))`` (or ``fresh(rcs[i])``'s start, as that
    function's ``fresh``) with ``run.json`` = ``run_json(rcs[i])``. Returns the states, the
    histories and the epoch they all are at (:func:`common_epoch`)."""
    states, histories, done = [], [], []
    for o, r in zip(outs, rcs, strict=True):
        st, h, d = start_or_resume(
            o, trainer.init(jax.random.PRNGKey(r.seed)), trainer, resume=resume,
            run_json=run_json(r), fresh=None if fresh is None else fresh(r), log=log,
        )  # fmt: skip
        states.append(st)
        histories.append(h)
        done.append(d)
    return states, histories, common_epoch(outs, done)


def common_epoch(outs: Sequence[Path], done: Sequence[int]) -> int:
    """The epoch all the seeds of a sweep are at (ConfigError naming them if they differ, e.g.
    after an interrupted epoch: resume the lagging ones alone first)."""
    if len(set(done)) > 1:
        at = ", ".join(f"{o.name}: {d}" for o, d in zip(outs, done))
        raise ConfigError(
            f"the seeds of this sweep are at different epochs ({at}); resume the lagging "
            f"ones alone (--seed S --out DIR/seed-S) up to the same epoch first"
        )
    return int(done[0]) if done else 0


def run_sweep_epochs(
    outs: Sequence[Path],
    states,
    histories: list,
    specs: Sequence[EpochSpec],
    *,
    done_epochs: int,
    epochs: int,
    t0: float,
    progress: bool = True,
    log: Callable[[str], None] = print,
):
    """Run epochs ``done_epochs + 1 .. epochs`` of a sweep: one vmapped update of the stacked
    ``states`` (leading axis = the seeds of ``outs``), then for each seed ``i`` its log row,
    checkpoint and validation in ``outs[i]`` from ``specs[i]`` (as
    :func:`jaxsched.train.loop.run_epochs` does for one run; the trainer of an epoch is
    ``specs[0].trainer_at(epoch)``).  Each row's ``seconds`` is the whole sweep's epoch (all
    seeds), with ``sweep_seeds`` = S.  ``histories[i]`` (list of metrics) is appended to.

    Returns ``(states, histories)``."""
    sweeps: dict = {}
    if done_epochs:
        host = jax.device_get(states)
        for i, (out, spec) in enumerate(zip(outs, specs)):
            recover_log(out, spec, tree_index(host, i), done_epochs)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=epochs, initial=done_epochs, unit="epoch", dynamic_ncols=True)
    try:
        for epoch in range(done_epochs + 1, epochs + 1):
            e0 = time.perf_counter()
            trainer = specs[0].trainer_at(epoch)
            sweep = sweeps.setdefault(id(trainer), SeedSweep(trainer))
            states, m = sweep.update(states)
            m = jax.device_get(m)
            secs = time.perf_counter() - e0
            host = jax.device_get(states)  # one transfer; each seed's share indexed on the host
            first = (time.perf_counter() - t0) if epoch == done_epochs + 1 else None
            msgs = [
                _seed_epoch(out, spec, tree_index(host, i), tree_index(m, i), histories[i],
                            trainer, epoch, epochs, secs, first, len(outs))
                for i, (out, spec) in enumerate(zip(outs, specs))
            ]  # fmt: skip
            if bar is not None:
                bar.set_postfix_str(f"{outs[0].name}: {msgs[0]}")
                bar.update(1)
            else:
                for out, msg in zip(outs, msgs):
                    log(f"epoch {epoch}/{epochs} {out.name}: {msg}")
    finally:
        if bar is not None:
            bar.close()
    return states, histories


def _seed_epoch(out, spec, state, m, history, trainer, epoch, epochs, secs, first, n_seeds):
    """One seed's share of a sweep epoch: row, checkpoint, validation, log line; returns the
    progress message."""
    row = {"epoch": epoch, "seconds": round(secs, 3), "sweep_seeds": n_seeds}
    row.update(spec.row(epoch, m, trainer))
    if first is not None:
        row["first_epoch_s_incl_compile"] = round(first, 3)
    history.append({k: v for k, v in m.items() if not k.startswith("episode_info")})
    ck, due = save_epoch(out, spec, state, row, history, trainer, epochs)
    finish_epoch(out, spec, state, row, ck, due)
    return spec.message(row)


def make_sweep_update(collect_seeds, learn, seed_axis: str):
    """``update(train_states [S]) -> (train_states, metrics)``: every run's epoch as
    ``update`` does it, the rollouts of all runs as one flat batch of environments
    (:func:`jaxsched.train.rollout.make_collect_seeds`), the rest vmapped over the runs."""

    def sweep_update(ts):
        key = jax.vmap(jax.random.wrap_key_data)(ts.rng)
        key, k_roll = jax.vmap(jax.random.split, out_axes=1)(key)
        tr, completed = collect_seeds((ts.policy_params, ts.value_params), k_roll, ts.step)
        return jax.vmap(learn, axis_name=seed_axis)(ts, key, tr, completed)

    return sweep_update
