"""SchedInspector's training driver (``jaxsched train schedinspector``) on the generic host
loop :func:`jaxsched.train.loop.run_epochs`: the inspector environment with auto-reset, the
inspector networks and the compiled PPO update of :func:`jaxsched.train.make_train`.

Run directory (``--out DIR``): ``run.json`` ("system": "schedinspector", the
:class:`RunConfig`, "devices": the device count it started on), ``log.jsonl`` (per epoch: mean
reward, decisions per trajectory, trajectories kept, KL, losses, seconds; with validation the
base and inspected values on the held-out sequences and the rejection ratio), checkpoints,
``best.ckpt`` with validation.
"""

from __future__ import annotations

import time
from pathlib import Path

import jax
import numpy as np

from jaxsched.envs import AutoResetWrapper
from jaxsched.nets.schedinspector import InspectorPolicy, InspectorValue
from jaxsched.systems.schedinspector.config import RunConfig, load_jobs, make_env, ppo_config
from jaxsched.systems.schedinspector.evaluate import inspect_runs, rejection_ratio
from jaxsched.train import parallel
from jaxsched.train.loop import BestCheckpoint, EpochSpec, open_run, run_epochs, start_or_resume
from jaxsched.train.ppo import make_train

__all__ = ["train", "build"]


def build(rc: RunConfig, devices: int = 1):
    """``(trainer, jobs, wait)`` of a run configuration; with ``devices`` > 1 the trainer is
    data-parallel over that many devices (:func:`jaxsched.train.parallel.data_parallel`)."""
    jobs, wait = load_jobs(rc.trace, rc.mode)
    env = AutoResetWrapper(make_env(rc, jobs, wait))
    axis = parallel.DATA_AXIS if devices > 1 else None
    trainer = make_train(ppo_config(rc), env, InspectorPolicy(), InspectorValue(), data_axis=axis)
    return (trainer if axis is None else parallel.data_parallel(trainer, devices)), jobs, wait


def _validation(rc: RunConfig, jobs, wait, out: Path):
    """The validation callback: greedy inspector vs base on ``rc.validate`` sequences."""
    from jaxsched.workload import reference_starts
    from jaxsched.workload.splits import validation_starts

    env = make_env(rc, jobs, wait, length=rc.eval_length, evaluation=True)
    if rc.split:  # only from the validation jobs of the run's split
        starts = validation_starts(
            rc.split, rc.eval_length, rc.validate, rc.validate_seed, "--eval-length"
        )
    else:
        starts = reference_starts(rc.validate_seed, rc.validate, rc.eval_length, jobs.n_jobs)
    best = BestCheckpoint(out, higher_is_better=True, extra={"starts": list(map(int, starts))})

    def validate(state, epoch, ck):
        # host copy: after data-parallel training the parameters live on every device
        r = inspect_runs(env, jax.device_get(state.policy_params), starts)
        b, i = float(np.mean(r["base"][rc.metric])), float(np.mean(r["inspected"][rc.metric]))
        imp = (i - b) if rc.metric == "util" else (b - i) / b
        ub, ui = float(np.mean(r["base"]["util"])), float(np.mean(r["inspected"]["util"]))
        if rc.max_util_loss is None or 100.0 * (ub - ui) <= rc.max_util_loss:
            best.offer(imp, epoch, ck)
        ratio = rejection_ratio(r)
        return {
            "val_base": b,
            "val_inspected": i,
            "val_improvement": imp,
            "val_rejection": ratio,
            "val_util_base": ub,
            "val_util": ui,
        }

    return validate


def _row(epoch, m, trainer) -> dict:
    return {
        "reward": float(m["episode_return"]),
        "decisions": float(m["episode_length"]),
        "trajectories": int(m["episodes"]),
        "dropped": int(m["incomplete_episodes"]),
        "pi_iters": int(m["pi_iters"]),
        "approx_kl": float(m["approx_kl"]),
        "v_loss": float(m["v_loss"]),
    }


def _message(row) -> str:
    msg = f"reward {row['reward']:+.4f} decisions {row['decisions']:.0f}"
    if row.get("dropped", 0) and not row.get("trajectories", 0):
        msg += f" (all {row['dropped']} trajectories hit the step cap: nothing learned)"
    elif row.get("dropped", 0):
        msg += f" ({row['dropped']} trajectories dropped at the step cap)"
    if "val_base" in row:
        msg += (
            f" | val base {row['val_base']:.3f} insp {row['val_inspected']:.3f} "
            f"rej {row['val_rejection']:.3f} util {row['val_util_base']:.3f} -> "
            f"{row['val_util']:.3f}"
        )
    return msg


def train(
    rc: RunConfig,
    out,
    *,
    epochs: int,
    resume: bool = False,
    progress: bool = True,
    log=print,
    keep_checkpoints: int = 1,
    devices=None,
):
    """Train (or continue) a run in ``out`` up to ``epochs`` epochs, keeping the newest
    ``keep_checkpoints`` epoch checkpoints (0: all); returns the state. ``devices``: train
    data-parallel on this many devices (``"all"``, an int; None: ``$JAXSCHED_DEVICES``, else
    1), the same training up to float rounding; a run may resume on another count."""
    t0 = time.perf_counter()
    out = Path(out)
    n_dev = parallel.resolve_devices(devices)
    saved = open_run(out, resume)
    if saved is not None:
        rc = RunConfig.from_dict(saved)
    parallel.check_divisible(ppo_config(rc), n_dev)
    trainer, jobs, wait = build(rc, n_dev)
    state = trainer.init(jax.random.PRNGKey(rc.seed))
    state, history, done = start_or_resume(
        out, state, trainer, resume=resume, run_json={**rc.to_dict(), "devices": n_dev}, log=log
    )
    spec = EpochSpec(
        trainer_at=lambda e: trainer,
        row=_row,
        message=_message,
        validate=_validation(rc, jobs, wait, out) if rc.validate else None,
        validate_every=rc.validate_every if rc.validate else 0,
        keep=keep_checkpoints,
    )
    state, _ = run_epochs(
        out,
        state,
        history,
        spec,
        done_epochs=done,
        epochs=epochs,
        t0=t0,
        progress=progress,
        log=log,
    )
    return state
