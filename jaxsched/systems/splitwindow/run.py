"""Split-window DBF training driver (``jaxsched train splitwindow``) on the generic host loop
:func:`jaxsched.train.loop.run_epochs`.

Pieces: :class:`jaxsched.envs.splitwindow.SplitWindowEnv` (auto-reset, random trace offsets),
the actor and critic MLPs of :mod:`jaxsched.nets.splitwindow`, and the compiled PPO update of
:func:`jaxsched.train.make_train` with minibatches (spec §6: lr 3e-4, clip 0.2, γ 0.99,
minibatches of 128, several epochs per update; assumptions: Adam, GAE λ 0.95, 10 epochs,
value coefficient = a separate critic with the same learning rate, advantages normalised,
gradient norm clipped at 0.5, no entropy bonus). One update = ``--envs`` episodes collected in
parallel (each scan ``--steps`` decisions long; an episode that does not end within it is
dropped and counted in ``incomplete_episodes``).

Run directory (``--out DIR``): ``run.json`` ("system": "splitwindow", trace, window, PPO and
net settings), ``log.jsonl`` (per epoch: return, episode length, KL, losses, seconds, and
with ``--validate`` the greedy policy's §8 metrics on the fixed evaluation episodes),
checkpoints, ``best.ckpt``/``best.json`` (lowest validation average wait; with
``--max-util-loss P`` only among validations whose utilisation is at most P points below FCFS +
EASY's on the same episodes). ``--weights`` sets the reward's (w1, w2, w3) (spec §5; 1/3 each
by default).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs import AutoResetWrapper
from jaxsched.envs.splitwindow import SplitWindowEnv
from jaxsched.errors import CheckpointError, ConfigError
from jaxsched.fileio import atomic_write
from jaxsched.nets.splitwindow import SWActor, SWCritic
from jaxsched.sim.cores import check_overflow
from jaxsched.systems import LoadedModel
from jaxsched.systems.splitwindow.config import (
    SYSTEM_NAME,
    VAL_METRICS,
    RunConfig,
    make_env,
    new_run_config,
    run_envs,
)
from jaxsched.systems.splitwindow.evaluate import eval_starts, fcfs_easy_util, greedy_metrics
from jaxsched.train.checkpoint import load_checkpoint, save_checkpoint
from jaxsched.train.loop import (
    BestCheckpoint,
    EpochSpec,
    open_run,
    read_run_json,
    run_epochs,
    start_or_resume,
)
from jaxsched.train.ppo import PPOConfig, make_train
from jaxsched.workload import read_swf

__all__ = [
    "RunConfig", "train", "make_env", "make_trainer", "eval_starts", "greedy_metrics", "load_model",
    "export_policy", "check_obs_dim",
]  # fmt: skip


def make_trainer(env: SplitWindowEnv, rc: RunConfig):
    """The PPO trainer of a run."""
    actor = SWActor(env.num_actions, tuple(rc.hidden), rc.activation)
    critic = SWCritic(tuple(rc.hidden), rc.activation)
    info = lambda ts: {"start": ts.extras["start"]}  # noqa: E731
    end = lambda ts: {"overflow": ts.extras["overflow"]}  # noqa: E731
    cfg = PPOConfig.from_dict(rc.ppo)
    trainer = make_train(
        cfg, AutoResetWrapper(env), actor, critic, episode_info_fn=info, episode_end_fn=end
    )
    return trainer, actor


def check_queue_cap(m, queue_cap: int, epoch: int) -> None:
    """One-line :class:`~jaxsched.sim.cores.QueueOverflow` when a collected training episode
    of the epoch's metrics ``m`` was cut because its queue outgrew ``queue_cap``: training on
    such episodes would silently learn a different problem (episodes cut short)."""
    from jaxsched.sim.cores import QueueOverflow

    valid = np.asarray(m["episode_info_valid"], bool)
    n = int(np.sum(valid & np.asarray(m["episode_info_end_overflow"], bool)))
    if n:
        raise QueueOverflow(
            f"epoch {epoch}: {n} of {int(valid.sum())} training episodes had more than "
            f"{queue_cap} queued jobs (the queue capacity, run.json queue_cap) and were cut "
            f"short; train with a larger --queue-cap"
        )


def _rows(rc: RunConfig):
    def row(epoch, m, trainer) -> dict:
        check_queue_cap(m, rc.queue_cap, epoch)
        keys = ("episodes", "incomplete_episodes", "steps", "episode_return", "episode_length",
                "approx_kl", "entropy", "clip_frac", "pi_loss", "v_loss", "pi_iters")  # fmt: skip
        return {k: float(m[k]) for k in keys}

    return row


def _message(row) -> str:
    msg = f"return {row['episode_return']:.1f} len {row['episode_length']:.0f}"
    if "val_avg_wait" in row:
        msg += f" | val wait {row['val_avg_wait']:.0f} util {row['val_util']:.3f}"
    return msg


def epoch_spec(env, actor, trainer, rc: RunConfig, out: Path, validate_every: int) -> EpochSpec:
    """One run's epoch hooks: its log row and message and, every ``validate_every`` epochs, the
    greedy §8 metrics on its fixed evaluation episodes with ``out/best.ckpt`` kept (the lowest
    average wait; with ``rc.max_util_loss`` P only among validations whose utilisation is at
    most P points below FCFS + EASY's on the same episodes, logged as ``val_util_fcfs_easy``)."""
    starts = eval_starts(env, rc.val_episodes, rc.val_seed)
    bound = {}
    if rc.max_util_loss is not None and validate_every:
        bound = {"val_util_fcfs_easy": fcfs_easy_util(env, starts)}
    best = BestCheckpoint(out, extra={"max_util_loss": rc.max_util_loss, **bound})

    def validate(st, epoch, ck):
        m = greedy_metrics(env, actor, st.policy_params, starts)
        check_overflow(m["overflow"], rc.queue_cap)
        row = {f"val_{k}": float(np.mean(m[k])) for k in VAL_METRICS} | bound
        lost = 100.0 * (bound["val_util_fcfs_easy"] - row["val_util"]) if bound else 0.0
        if not bound or lost <= rc.max_util_loss:
            best.offer(row["val_avg_wait"], epoch, ck)
        return row

    return EpochSpec(
        trainer_at=lambda e: trainer, row=_rows(rc), message=_message,
        validate=validate if validate_every else None, validate_every=validate_every,
    )  # fmt: skip


def train(trace, out, *, head: int, tail: int, epochs: int, resume: bool = False,
          validate_every: int = 0, progress: bool = True, log=print, **settings) -> Path:  # fmt: skip
    """Train (or resume) a run; ``settings`` are :class:`RunConfig` fields (``ppo`` a dict of
    :class:`PPOConfig` overrides; ``split``, ``split_fractions`` and ``validated`` as
    :func:`new_run_config`). Returns the run directory."""
    out = Path(out)
    t0 = time.perf_counter()
    saved = open_run(out, resume)
    rc = RunConfig.from_dict(saved) if saved is not None else new_run_config(
        trace, head, tail, settings
    )  # fmt: skip
    jobs = read_swf(rc.trace).jobs("rlscheduler")
    env, val_env = run_envs(jobs, rc)
    trainer, actor = make_trainer(env, rc)
    state = trainer.init(jax.random.PRNGKey(rc.seed))
    state, history, done = start_or_resume(
        out, state, trainer, resume=resume, run_json=rc.to_dict(), log=log
    )
    spec = epoch_spec(val_env, actor, trainer, rc, out, validate_every)
    run_epochs(out, state, history, spec, done_epochs=done, epochs=epochs, t0=t0,
               progress=progress, log=log)  # fmt: skip
    return out


@dataclasses.dataclass
class Model(LoadedModel):
    """A trained actor: :class:`~jaxsched.systems.LoadedModel` with ``run`` a RunConfig."""


def load_model(path) -> Model:
    """The newest (or the given) checkpoint of a split-window run, or a shipped model's name
    (:mod:`jaxsched.models`); a policy-only checkpoint (:func:`export_policy`) loads without
    the run's trace."""
    from jaxsched.models import resolve

    p = resolve(path)
    run_dir = p if p.is_dir() else p.parent
    rc = RunConfig.from_dict(read_run_json(run_dir / "run.json", CheckpointError))
    raw = load_checkpoint(p)
    if isinstance(raw.extra, dict) and raw.extra.get("policy_only"):
        _check_policy(raw, rc)
        return Model(run=rc, params=raw.state, epoch=raw.epoch, path=raw.path)
    jobs = read_swf(rc.trace).jobs("rlscheduler")
    env = make_env(jobs, rc)
    trainer, _ = make_trainer(env, rc)
    target = trainer.init(jax.random.PRNGKey(rc.seed))
    ck = load_checkpoint(p, target=target, config=trainer.run_config())
    return Model(
        run=rc, params=ck.state.policy_params, epoch=ck.epoch, path=Path(getattr(ck, "path", p))
    )


def _actor_shapes(rc: RunConfig, size: int):
    actor = SWActor(rc.head + rc.tail + 1, tuple(rc.hidden), rc.activation)
    obs = jax.ShapeDtypeStruct((size,), jnp.float32)
    return jax.eval_shape(actor.init, jax.random.PRNGKey(0), obs)


def _check_policy(ck, rc: RunConfig) -> None:
    """A policy-only checkpoint must hold the actor of ``rc``'s window and net (its input size
    is its own first kernel's)."""
    try:
        want = _actor_shapes(rc, obs_dim(ck.state))
    except (KeyError, TypeError, IndexError, AttributeError):
        raise CheckpointError(f"{ck.path}: not a split-window actor's parameters") from None
    got = jax.tree_util.tree_map(lambda a: (tuple(a.shape), str(a.dtype)), ck.state)
    want = jax.tree_util.tree_map(lambda a: (tuple(a.shape), str(a.dtype)), dict(want))
    if got != want:
        raise CheckpointError(
            f"{ck.path}: the actor's parameters do not fit run.json's window "
            f"{rc.head}-{rc.tail} and hidden sizes {list(rc.hidden)}"
        )


def obs_dim(params) -> int:
    """The observation size an actor's parameters read (rows of its first layer's kernel)."""
    return int(params["params"]["_MLP_0"]["Dense_0"]["kernel"].shape[0])


def check_obs_dim(model: Model, env: SplitWindowEnv) -> None:
    """ConfigError unless ``env``'s observation has the size ``model`` was trained on (another
    trace's core count, or another window, would not fit the actor)."""
    trained, here = obs_dim(model.params), int(env.obs_size)
    if trained != here:
        raise ConfigError(
            f"{model.path}: the model reads observations of {trained} values, this trace and "
            f"window give {here} (cores + 3 x window slots must match its training run)"
        )


def export_policy(src, out) -> Path:
    """Copy the actor of checkpoint ``src`` (a run directory or checkpoint file) into the model
    directory ``out`` without critic or optimiser state (about a sixth of the size):
    ``run.json``, ``log.jsonl`` and ``checkpoint_<epoch>.ckpt`` (extra ``policy_only``).
    Returns the checkpoint's path."""
    model = load_model(src)
    src_dir = Path(src) if Path(src).is_dir() else Path(src).parent
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("run.json", "log.jsonl"):
        atomic_write(out / name, (src_dir / name).read_bytes())
    return save_checkpoint(
        out, jax.tree_util.tree_map(np.asarray, model.params), epoch=model.epoch,
        config={"system": SYSTEM_NAME, "policy_only": True},
        extra={"policy_only": True, "source": str(src)},
    )  # fmt: skip
