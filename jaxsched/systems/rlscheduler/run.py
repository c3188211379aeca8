"""RLScheduler's training driver (the engine behind ``jaxsched train rlscheduler``) on the
generic host loop :func:`jaxsched.train.loop.run_epochs`.

The pieces: the pick-a-job environment (:class:`jaxsched.envs.RLSchedulerEnv`, with
auto-reset), the kernel policy and value networks (:mod:`jaxsched.nets`) and the compiled PPO
update (:func:`jaxsched.train.make_train`).  This module only builds them, adds RLScheduler's
columns to the log (the sampled sequences' metric, SJF and F1 on the same sequences), its
validation (greedy runs on held-out sequences) and its trajectory filter.

Run directory layout (``--out DIR``)::

    DIR/run.json                  what was trained ("system": "rlscheduler", trace, metric,
                                  backfill, PPO config, seed; "devices": the device count
                                  it started on)
    DIR/log.jsonl                 one JSON object per epoch (return, metric, SJF/F1 of the same
                                  sequences, KL, losses, seconds)
    DIR/checkpoint_00000012.ckpt  the newest checkpoint (parameters, optimiser states, RNG,
                                  epoch, metrics history)
    DIR/validation.json           with --validate: the validation sequences and SJF / F1 on them
    DIR/best.ckpt, best.json      with --validate: the best checkpoint so far and its score
    DIR/filter.npz                with a trajectory filter: SJF's metric per start index and
                                  the acceptance interval (computed once, reused on resume)

Example::

    from jaxsched.systems.rlscheduler.run import train
    train("traces/lublin-1.swf", "runs/l1", epochs=20)
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched import formatting as F
from jaxsched import nets
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv
from jaxsched.errors import ConfigError
from jaxsched.fileio import append_line, atomic_writer
from jaxsched.sim.evaluate import evaluate
from jaxsched.systems.rlscheduler.config import (
    VAL_INFO,
    RunConfig,
    make_env,
    policy_net,
    prefix_options,
)
from jaxsched.systems.rlscheduler.evaluate import episodes_fn
from jaxsched.systems.rlscheduler.filtering import FILTERS, make_filter, sjf_by_start
from jaxsched.train import parallel
from jaxsched.train.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from jaxsched.train.loop import (
    LOG_FILE,
    BestCheckpoint,
    EpochSpec,
    open_run,
    read_log,
    recover_log,
    run_epochs,
    start_or_resume,
    write_json,
)
from jaxsched.train.ppo import PPOConfig, make_train
from jaxsched.workload import read_swf

__all__ = ["train", "FILTER_FILE", "validate_untrained"]

FILTER_FILE = "filter.npz"


def _start_table(jobs, rc: RunConfig, out: Path, log) -> np.ndarray:
    """The trajectory filter's acceptance table of a run (bool ``[n_jobs]``): SJF's metric per
    start computed once and cached in ``DIR/filter.npz``."""
    path = out / FILTER_FILE
    low, high = RLSchedulerEnv(jobs, length=rc.length, job_slice=rc.job_slice).start_range
    values = None
    if path.is_file():
        try:
            with np.load(path) as z:
                values = np.asarray(z["sjf"], np.float64)
            if values.shape != (jobs.n_jobs,):
                values = None
        except (OSError, ValueError, KeyError):
            values = None  # unreadable cache: recompute it
    if values is None:
        t0 = time.perf_counter()
        values = sjf_by_start(
            jobs, rc.length, low, high, backfill=rc.backfill, compat=rc.compat, metric=rc.metric
        )
        log(
            f"trajectory filter: SJF {rc.metric} of the {high - low} sampling starts "
            f"computed in {time.perf_counter() - t0:.1f} s"
        )
    flt = make_filter(rc.filter, values[low:high])
    table = np.asarray(flt.start_table(values), bool)
    n_ok = int(table[low:high].sum())
    if n_ok == 0:
        raise ConfigError(
            f"--filter {rc.filter}: none of the {high - low} sampling starts has "
            f"an SJF {rc.metric} in ({flt.lower:g}, {flt.upper:g})"
        )
    if not path.is_file() and parallel.is_main_process():
        with atomic_writer(path) as fh:
            np.savez(fh, sjf=values, lower=flt.lower, upper=flt.upper, mode=rc.filter)
    log(
        f"trajectory filter {rc.filter}: SJF {rc.metric} in ({flt.lower:.4g}, "
        f"{flt.upper:.4g}), {n_ok} of {high - low} starts accepted"
        + (f" for the first {rc.filter_epochs} epochs" if rc.filter_epochs else "")
    )
    return table


def _episode_starts(metrics: dict) -> np.ndarray:
    s = np.asarray(metrics.get("episode_info_start", []))
    ok = np.asarray(metrics.get("episode_info_valid", np.ones(s.shape, bool)), bool)
    return s[ok].astype(np.int64)


def _heuristic_means(jobs, starts, rc: RunConfig, policies=("sjf", "f1")) -> dict:
    if len(starts) == 0:
        return {}
    res = evaluate(
        jobs,
        starts,
        rc.length,
        list(policies),
        [rc.backfill],
        compat=rc.compat,
        metrics=(rc.metric,),
    )
    return {p: float(v) for (p, _), v in res.table(rc.metric).items()}


def _run_config(trace, *, ppo, init_from, **settings) -> RunConfig:
    return RunConfig(
        trace=str(trace),
        ppo=PPOConfig.from_dict({**PPOConfig().to_dict(), **(ppo or {})}).to_dict(),
        init_from=str(init_from) if init_from else "",
        **settings,
    )


def _check_keep(keep_checkpoints) -> None:
    if (
        isinstance(keep_checkpoints, bool)
        or not isinstance(keep_checkpoints, (int, np.integer))
        or keep_checkpoints < 0
    ):
        raise ConfigError(
            f"--keep-checkpoints must be an integer >= 0 (0 keeps all), got {keep_checkpoints!r}"
        )


class _Trainers:
    """The PPO trainer(s) of a run: phase 1 (filtered, if a filter is on) and phase 2 (all
    sequences, built when it starts); ``seed_axis``: for a sweep (``make_train``'s option);
    ``devices`` > 1: data-parallel over that many devices (:mod:`jaxsched.train.parallel`)."""

    def __init__(self, jobs, rc: RunConfig, out: Path, resume: bool, log, seed_axis=None,
                 devices: int = 1):  # fmt: skip
        self.jobs, self.rc, self.seed_axis, self.devices = jobs, rc, seed_axis, int(devices)
        if rc.filter != "off":
            if not resume:
                out.mkdir(parents=True, exist_ok=True)
            self.phase1 = self._build(_start_table(jobs, rc, out, log))
        else:
            self.phase1 = self._build()
        self.phase2 = None

    def _build(self, start_table=None):
        rc = self.rc
        env = AutoResetWrapper(make_env(self.jobs, rc, start_table=start_table))
        opts = prefix_options(rc)
        if self.seed_axis is not None and opts:
            opts["seed_axis"] = self.seed_axis
        dp = parallel.DATA_AXIS if self.devices > 1 else None
        trainer = make_train(
            rc.ppo_config(),
            env,
            policy_net(rc),
            nets.make_value(rc.value),
            episode_info_fn=lambda ts: {"start": ts.extras["start"]},
            data_axis=dp,
            **opts,
        )
        return trainer if dp is None else parallel.data_parallel(trainer, self.devices)

    def at(self, epoch: int):
        rc = self.rc
        if rc.filter == "off" or not rc.filter_epochs or epoch <= rc.filter_epochs:
            return self.phase1
        if self.phase2 is None:
            self.phase2 = self._build()
        return self.phase2


def _init_from(rc: RunConfig, log):
    """``fresh(state)`` for :func:`start_or_resume`: networks and optimiser states of
    ``rc.init_from`` (every leaf must match this run's networks; clear error if not)."""

    def fresh(state):
        if not rc.init_from:
            return state
        src = load_checkpoint(rc.init_from, target=state).state
        log(f"networks and optimiser states from {rc.init_from}")
        return state.replace(
            policy_params=src.policy_params,
            value_params=src.value_params,
            policy_opt_state=src.policy_opt_state,
            value_opt_state=src.value_opt_state,
        )

    return fresh


def _epoch_spec(jobs, rc, trainers, val, validate, compare, keep_checkpoints) -> EpochSpec:
    def row(epoch, m, trainer):
        starts = _episode_starts(m)
        r = {
            "episodes": int(len(starts)),
            "return": float(m["episode_return"]),
            rc.metric: float(abs(m["episode_return"])),
            "approx_kl": float(m["approx_kl"]),
            "pi_iters": int(m["pi_iters"]),
            "pi_loss": float(m["pi_loss"]),
            "v_loss": float(m["v_loss"]),
            "entropy": float(m["entropy"]),
        }
        if rc.filter != "off":
            r["filtered"] = trainer is trainers.phase1
        if compare:
            r.update({f"{p}_{rc.metric}": v for p, v in _heuristic_means(jobs, starts, rc).items()})
        return r

    def message(r):
        return (
            f"{rc.metric} {F.number(r[rc.metric])}"
            + "".join(
                f" {p} {F.number(r.get(f'{p}_{rc.metric}', math.nan))}"
                for p in ("sjf", "f1")
                if compare
            )
            + (
                f" val {F.number(r[f'val_{rc.metric}'])} (sjf "
                f"{F.number(val.heuristics.get('sjf', math.nan))} f1 "
                f"{F.number(val.heuristics.get('f1', math.nan))})"
                if f"val_{rc.metric}" in r
                else ""
            )
            + f" {r['seconds']:.1f}s/epoch"
        )

    def validation(state, epoch, ck):
        # host copy: after data-parallel training the parameters live on every device
        return {f"val_{rc.metric}": val(jax.device_get(state.policy_params), epoch, ck)}

    return EpochSpec(
        trainer_at=trainers.at,
        row=row,
        message=message,
        validate=validation if val is not None else None,
        validate_every=int(validate or 0),
        keep=int(keep_checkpoints),
    )


def check_settings(rc: RunConfig, epochs: int) -> None:
    """ConfigError for a bad epoch count or trajectory-filter setting of a run."""
    if epochs < 1:
        raise ConfigError(f"--epochs must be >= 1 (got {epochs})")
    if rc.filter not in FILTERS:
        raise ConfigError(
            f"unknown trajectory filter {rc.filter!r}; choose from {', '.join(FILTERS)}"
        )
    if int(rc.filter_epochs) < 0:
        raise ConfigError(f"--filter-epochs must be >= 0 (got {rc.filter_epochs})")


def with_split(rc: RunConfig, split, fractions, validate) -> RunConfig:
    """``rc`` trained on the ``split`` part (``"train"``, or None: ``rc`` itself) of the
    chronological split of its trace (:func:`jaxsched.workload.splits.with_training_split`):
    training sequences from the training range (``job_slice`` = its end), validation ones
    from the validation range; ``split`` and ``jobs_seen`` recorded for ``run.json``. With
    ``rc.init_from`` the jobs its source run saw count as seen too (``jobs_seen`` widens to
    cover them; to the trace's end when the source's are unknown)."""
    from jaxsched.workload.splits import with_training_split

    if split is not None and rc.job_slice:
        raise ConfigError("--split and --job-slice do not go together (the split sets the slice)")
    rc = with_training_split(
        rc,
        lambda: read_swf(rc.trace).jobs(rc.rules).n_jobs,
        split,
        fractions,
        validated=bool(validate),
    )
    if split is None or not rc.init_from:
        return rc
    first, last = rc.jobs_seen
    src = _source_jobs_seen(rc.init_from)
    if src is None or src[1] is None:
        return dataclasses.replace(rc, jobs_seen=[0, rc.split["n_jobs"]])
    return dataclasses.replace(rc, jobs_seen=[min(first, src[0]), max(last, src[1])])


def _source_jobs_seen(init_from):
    """The ``jobs_seen`` (:func:`jaxsched.workload.splits.jobs_seen_of`) of the run whose
    checkpoint ``init_from`` names (a checkpoint file or a run directory); None if unknown."""
    from jaxsched.systems import RUN_FILE
    from jaxsched.workload.splits import jobs_seen_of

    p = Path(init_from)
    f = (p if p.is_dir() else p.parent) / RUN_FILE
    try:
        return jobs_seen_of(json.loads(f.read_text()))
    except (OSError, ValueError):
        return None


def check_validate(validate) -> None:
    if int(validate) < 0:
        raise ConfigError(f"--validate must be >= 0 (got {validate})")


def train(
    trace,
    out,
    epochs: int,
    *,
    metric: str = "bsld",
    backfill: str = "none",
    compat: bool = True,
    seed: int = 0,
    seeds=None,
    resume: bool = False,
    rules: str = "rlscheduler",
    ppo: dict | None = None,
    length: int = 256,
    max_queue: int = 128,
    cutoff: str = "reference",
    job_slice: int = 0,
    user_feature: bool = False,
    policy: str = "kernel",
    value: str = "kernel",
    compare: bool = True,
    progress: bool = True,
    validate: int = 0,
    val_sequences: int = 10,
    val_jobs: int = 1024,
    val_seed: int = 2,
    filter: str = "off",
    filter_epochs: int = 0,
    init_from=None,
    keep_checkpoints: int = 1,
    devices=None,
    split: str | None = None,
    split_fractions=None,
    residual: str = "",
    residual_temperature: float = 0.5,
    log: Callable[[str], None] = print,
) -> dict:
    """Train an RLScheduler policy for ``epochs`` epochs in total (``resume`` continues the
    run in ``out`` from its newest checkpoint, bit for bit; without it ``out`` must not hold a
    run yet). Returns ``{"epochs", "history", "run"}``.

    ``ppo``: overrides of :class:`PPOConfig` fields (e.g. ``{"num_envs": 20}``); ``compare``:
    evaluate SJF and F1 on each epoch's sequences for the log (cheap: one batched call).

    ``validate`` = K > 0: every K epochs (and at the last one) the greedy policy runs on
    ``val_sequences`` sequences of ``val_jobs`` jobs drawn the reference's way with
    ``val_seed`` (the paper's test sequences are seed 1, so the default 2 keeps them out of
    model selection); the log gets ``val_<metric>``, and the best checkpoint so far is kept as
    ``DIR/best.ckpt`` with ``DIR/best.json`` (epoch, score, starts) — load it with
    ``load_policy(DIR / "best.ckpt")`` or ``evaluate --model DIR/best.ckpt``.

    ``filter`` / ``filter_epochs``: the trajectory filter (:class:`RunConfig`); with
    ``filter_epochs`` = K > 0, epochs 1..K train on the accepted sequences (phase 1) and the
    later ones on all (phase 2), in the same run and checkpoints.

    ``init_from``: start from the networks and optimiser states of another run's checkpoint
    (:class:`RunConfig`); the epochs of this run count from 1 again.

    ``user_feature``: observation rows with the reference fairness environment's per-user
    feature (:class:`RunConfig`).

    ``keep_checkpoints``: how many of the newest epoch checkpoints stay in ``out`` (default 1;
    0 keeps every epoch's, e.g. to score them all afterwards with ``evaluate --model``).

    ``seeds``: a list of seeds instead of ``seed``: a sweep, trained as one vmapped update
    per epoch, one run directory ``out/seed-<s>`` per seed
    (:func:`jaxsched.systems.rlscheduler.sweep.train_sweep`; returns ``{"epochs",
    "histories", "runs", "dirs"}``).

    ``split`` = ``"train"``: draw the training sequences only from the training part of the
    trace's chronological split (:func:`jaxsched.workload.splits.chronological_split` with
    ``split_fractions``, default 50 / 10 / 40 %) and the validation ones only from its
    validation part; ``run.json`` records ``split`` and ``jobs_seen`` (:func:`with_split`).

    ``residual``: a residual policy over this static heuristic (``"f1"``, ``"sjf"``,
    ``"tuned:tuned-sdsc-easy"``, ...; :class:`RunConfig`), ``residual_temperature`` its
    initial temperature. Untrained it picks as the heuristic does, so with ``validate`` the
    untrained model is validated too and kept as epoch 0 (:func:`validate_untrained`).

    ``devices``: train data-parallel on this many devices (``"all"``, an int; None: the
    ``JAXSCHED_DEVICES`` environment variable, else 1; :mod:`jaxsched.train.parallel`): the
    same training up to float rounding; the trajectories per epoch must be divisible by it.
    ``run.json`` records the count; ``resume`` may use another one. In a multi-host run
    (:func:`jaxsched.train.parallel.initialize_distributed` called first) only process 0
    writes ``out`` and logs.
    """
    # (long because of its keyword arguments and their documentation; the steps are below)
    out = Path(out)
    rc = _run_config(
        trace,
        ppo=ppo,
        init_from=init_from,
        rules=rules,
        metric=metric,
        backfill=backfill,
        compat=compat,
        length=length,
        max_queue=max_queue,
        cutoff=cutoff,
        job_slice=job_slice,
        user_feature=bool(user_feature),
        policy=policy,
        value=value,
        seed=seed,
        filter=filter,
        filter_epochs=filter_epochs,
        residual=str(residual or ""),
        residual_temperature=float(residual_temperature),
    )
    if not resume:  # a resumed run keeps its own split (run.json)
        rc = with_split(rc, split, split_fractions, validate)
    _check_keep(keep_checkpoints)
    n_dev = parallel.resolve_devices(devices)
    if seeds is not None and n_dev > 1:
        raise ConfigError("--seeds and --devices > 1 do not go together yet (one or the other)")
    if seeds is not None:
        from jaxsched.systems.rlscheduler.sweep import train_sweep

        return train_sweep(
            out,
            epochs,
            rc,
            seeds,
            resume=resume,
            compare=compare,
            progress=progress,
            validation=(validate, val_sequences, val_jobs, val_seed),
            keep_checkpoints=keep_checkpoints,
            log=log,
        )
    main = parallel.is_main_process()
    saved = open_run(out, resume) if main or resume else None
    if saved is not None:
        rc = RunConfig.from_dict(saved)
    check_settings(rc, epochs)
    parallel.check_divisible(rc.ppo_config(), n_dev)
    jobs = read_swf(rc.trace).jobs(rc.rules)
    val = None
    if validate:  # before anything is written: a bad setting fails cleanly
        check_validate(validate)
        if main:
            val = _Validator(jobs, rc, out, val_sequences, val_jobs, val_seed)
    trainers = _Trainers(jobs, rc, out, resume, log, devices=n_dev)
    t0 = time.perf_counter()
    state = trainers.phase1.init(jax.random.PRNGKey(rc.seed))
    if not main:
        return _follow(trainers, state, out, resume, epochs, rc)
    state, history, done_epochs = start_or_resume(
        out,
        state,
        trainers.phase1,
        resume=resume,
        run_json={**rc.to_run_json(), "devices": n_dev},
        fresh=_init_from(rc, log),
        log=log,
    )
    spec = _epoch_spec(jobs, rc, trainers, val, validate, compare, keep_checkpoints)
    if done_epochs >= epochs:
        recover_log(out, spec, state, done_epochs)  # the last epoch's row, if it was cut
        log(f"{out}: already trained for {done_epochs} epochs (asked for {epochs})")
        return {"epochs": done_epochs, "history": history, "run": rc}
    if done_epochs == 0:
        validate_untrained(out, state, trainers.phase1, val, rc, keep_checkpoints, log)
    state, history = run_epochs(
        out,
        state,
        history,
        spec,
        done_epochs=done_epochs,
        epochs=epochs,
        t0=t0,
        progress=progress,
        log=log,
    )
    return {"epochs": epochs, "history": history, "run": rc}


def validate_untrained(out, state, trainer, val, rc: RunConfig, keep, log) -> float | None:
    """A residual run's untrained model (it picks as its heuristic does) as a model-choice
    candidate: saved as epoch 0's checkpoint, validated like the trained epochs (``val``, a
    :class:`_Validator`; it may become ``best.ckpt``) and logged as a row ``{"epoch": 0,
    "val_<metric>": ..., "untrained": true}``. Nothing is done (None returned) without
    validation or without ``rc.residual``."""
    if val is None or not rc.residual:
        return None
    out = Path(out)
    if any(int(r.get("epoch", -1)) == 0 for r in read_log(out)):
        return None  # logged before a stop ahead of epoch 1's checkpoint
    ck = save_checkpoint(out, state, epoch=0, config=trainer.run_config(), metrics_history=[],
                         keep=int(keep or 0) or None)  # fmt: skip
    value = val(jax.device_get(state.policy_params), 0, ck)
    row = {"epoch": 0, "seconds": 0.0, f"val_{rc.metric}": value, "untrained": True}
    append_line(out / LOG_FILE, json.dumps(row))
    log(f"epoch 0 (untrained, = {rc.residual}): val {F.number(value)}")
    return value


def _follow(trainers, state, out: Path, resume: bool, epochs: int, rc: RunConfig) -> dict:
    """Process k > 0 of a multi-host run: the same updates as process 0 (every process takes
    part in their collectives) from the same start, writing and logging nothing."""
    done = 0
    if resume and latest_checkpoint(out) is not None:
        ck = load_checkpoint(out, target=state, config=trainers.phase1.run_config())
        state, done = ck.state, ck.epoch
    else:
        state = _init_from(rc, lambda s: None)(state)
    for epoch in range(done + 1, epochs + 1):
        state, _ = trainers.at(epoch).update(state)
    return {"epochs": epochs, "history": [], "run": rc}


class _Validator:
    """Greedy validation runs of a training run (compiled once) and the best checkpoint."""

    def __init__(self, jobs, rc: RunConfig, out: Path, n: int, length: int, seed: int):
        from jaxsched.sim.metrics import HIGHER_IS_BETTER
        from jaxsched.workload import reference_starts
        from jaxsched.workload.splits import validation_starts

        if rc.split:  # only from the validation jobs of the run's split
            self.starts = validation_starts(rc.split, length, n, seed, "--val-jobs")
        else:  # drawn from the run's job slice, as its training sequences (0: the whole trace)
            self.starts = reference_starts(seed, n, length, jobs.n_jobs, rc.job_slice)
        self.length = int(length)
        env = make_env(jobs, rc, length)
        self.fn = episodes_fn(env, policy_net(rc), False)
        self.keys = jax.random.split(jax.random.PRNGKey(0), n)
        res = evaluate(
            jobs,
            self.starts,
            self.length,
            ["sjf", "f1"],
            [rc.backfill],
            compat=rc.compat,
            metrics=(rc.metric,),
        )
        self.heuristics = {p: v for (p, _), v in res.table(rc.metric).items()}
        self.info = {
            "starts": [int(x) for x in self.starts],
            "jobs": self.length,
            "seed": int(seed),
            "metric": rc.metric,
            "backfill": rc.backfill,
            **self.heuristics,
        }
        self.higher_is_better = rc.metric in HIGHER_IS_BETTER
        self._attach(out)

    def _attach(self, out: Path) -> None:
        """Write ``out/validation.json`` and keep the best checkpoint of ``out``."""
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / VAL_INFO, self.info, indent=None)
        self.best = BestCheckpoint(
            out,
            higher_is_better=self.higher_is_better,
            extra={"starts": [int(x) for x in self.starts], "jobs": self.length},
        )

    def for_dir(self, out: Path) -> _Validator:
        """The same validation (compiled function, sequences) for another run directory."""
        other = copy.copy(self)
        other._attach(Path(out))
        return other

    def __call__(self, params, epoch: int, checkpoint: Path) -> float:
        vals, _ = self.fn(params, jnp.asarray(self.starts, jnp.int32), self.keys)
        value = float(np.mean(np.asarray(vals)))
        self.best.offer(value, epoch, checkpoint)
        return value
