"""A2cScheduler's training driver on the generic host loop (:func:`jaxsched.train.loop.run_epochs`)
and its model loader.

One epoch = ``updates_per_epoch`` A2C updates (one compiled ``lax.scan``) of ``num_envs``
data-centre environments in lockstep; the log row has the epoch's mean loss terms, reward per
step, the number of episodes that ended and their mean slowdown. With ``validate_every`` the
learned policy (greedy) runs the fixed evaluation jobsets and the best one is kept
(``best.ckpt``). At the end the learned policy is printed next to the baselines.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import CheckpointError
from jaxsched.fileio import atomic_write
from jaxsched.systems import LoadedModel
from jaxsched.systems.a2cscheduler import evaluate as ev
from jaxsched.systems.a2cscheduler.config import RunConfig, build_env, build_nets
from jaxsched.train.checkpoint import load_checkpoint
from jaxsched.train.loop import (
    BestCheckpoint,
    EpochSpec,
    open_run,
    run_epochs,
    start_or_resume,
    write_json,
)

__all__ = ["Trainer", "train", "LoadedModel", "load_model", "export_actor"]


class Trainer:
    """The compiled epoch of a run: ``update(state) -> (state, metrics)``, ``init_state()``,
    ``run_config()``; ``env`` (no auto-reset) and ``actor_apply`` for evaluation."""

    def __init__(self, rc: RunConfig):
        self.rc = rc
        self.env = build_env(rc)
        self.actor, self.critic, self.actor_apply, critic_apply = build_nets(rc, self.env)
        self._init, upd = self._algorithm(critic_apply)

        def epoch(state):
            state, m = jax.lax.scan(lambda s, _: upd(s), state, None, length=rc.updates_per_epoch)
            out = {k: jnp.mean(v) for k, v in m.items() if not k.startswith("ep_")}
            out["episodes"] = jnp.sum(m["episodes"])
            out["steps"] = jnp.sum(m["steps"])
            out["ep_slowdown"] = jnp.sum(m["ep_slowdown"]) / jnp.maximum(out["episodes"], 1.0)
            return state, out

        self.update = jax.jit(epoch)

    def _algorithm(self, critic_apply):
        """``(init, update)`` of ``rc.algorithm``."""
        from jaxsched.envs import AutoResetWrapper
        from jaxsched.train.a2c import make_a2c
        from jaxsched.train.mc_pg import make_mc_pg

        rc, obs = self.rc, lambda o: (o.image, o.mask)
        if rc.algorithm == "pg":
            return make_mc_pg(self.env, self.actor_apply, rc.mc_pg(), obs)
        return make_a2c(AutoResetWrapper(self.env), self.actor_apply, critic_apply, rc.a2c(), obs)

    def init_state(self):
        """Fresh networks and environments from ``rc.seed`` (one compiled call)."""

        def init(key):
            k_a, k_c, k_run = jax.random.split(key, 3)
            img = jnp.zeros((self.env.params.horizon, self.env.params.image_width), jnp.float32)
            params = {"actor": self.actor.init(k_a, img)}
            if self.rc.algorithm == "a2c":
                params["critic"] = self.critic.init(k_c, img)
            return self._init(k_run, params)

        return jax.jit(init)(jax.random.PRNGKey(self.rc.seed))

    def run_config(self) -> dict:
        return self.rc.to_json()


def _row(epoch, m, trainer) -> dict:
    r = {k: round(float(v), 6) for k, v in m.items()}
    r["episodes"] = int(m["episodes"])
    return r


def _message(r) -> str:
    sd = f"slowdown {r['ep_slowdown']:.3f}" if r.get("episodes") else "no episode ended"
    val = f", eval {r['eval_slowdown']:.3f}" if "eval_slowdown" in r else ""
    return f"reward/step {r['reward']:.3f}, {sd} ({r['episodes']} ep), H {r['entropy']:.2f}{val}"


def _validator(trainer: Trainer, out: Path):
    best = BestCheckpoint(out)

    def validate(state, epoch, ck) -> dict:
        m = ev.policy_metrics(trainer.env, trainer.actor_apply, state.params["actor"],
                              trainer.rc.eval_sequences)  # fmt: skip
        value = float(np.nanmean(m["slowdown"]))
        best.offer(value, epoch, ck)
        return {"eval_slowdown": round(value, 6)}

    return validate


def train(rc: RunConfig, out, *, epochs: int, resume: bool = False, validate_every: int = 0,
          progress: bool = True, evaluate: bool = True, keep_checkpoints: int = 1,
          log=print) -> dict | None:  # fmt: skip
    """Train (or resume) the run in ``out`` up to ``epochs``, keeping the newest
    ``keep_checkpoints`` epoch checkpoints (0: all); returns the final evaluation
    (:func:`jaxsched.systems.a2cscheduler.evaluate.evaluate`, also written to
    ``evaluation.json``), or None with ``evaluate=False``."""
    t0 = time.perf_counter()
    out = Path(out)
    saved = open_run(out, resume)
    if saved is not None:
        rc = RunConfig.from_json(saved)
    trainer = Trainer(rc)
    state, history, done = start_or_resume(out, trainer.init_state(), trainer, resume=resume,
                                           run_json=rc.to_json(), log=log)  # fmt: skip
    spec = EpochSpec(
        trainer_at=lambda e: trainer,
        row=_row,
        message=_message,
        validate=_validator(trainer, out) if validate_every else None,
        validate_every=validate_every,
        keep=keep_checkpoints,
    )
    state, _ = run_epochs(out, state, history, spec, done_epochs=done, epochs=epochs, t0=t0,
                          progress=progress, log=log)  # fmt: skip
    if not evaluate:
        return None
    res = ev.evaluate(trainer.env, rc.eval_sequences, trainer.actor_apply, state.params["actor"])
    write_json(out / "evaluation.json", res)
    log(f"{rc.describe_jobsets()}, greedy A2C:")
    log(ev.format_table(res))
    return res


@dataclasses.dataclass
class LoadedA2C(LoadedModel):
    """A trained actor: :class:`~jaxsched.systems.LoadedModel` (``run`` a RunConfig) with the
    run's ``env`` and the actor's ``actor_apply``."""

    env: object = None
    actor_apply: object = None


def load_model(path) -> LoadedA2C:
    """The actor of the newest checkpoint of a run directory, of a checkpoint file or of the
    shipped model of that name (:mod:`jaxsched.models`). A run trained on a trace that is not
    found from here gets the environment of generated jobsets of the same sizes (the actor
    does not depend on the jobsets; ``jaxsched evaluate TRACE --model`` names the trace)."""
    from jaxsched.models import resolve

    p = resolve(path)
    run_file = (p if p.is_dir() else p.parent) / "run.json"
    try:
        rc = RunConfig.from_json(json.loads(run_file.read_text()))
    except (OSError, ValueError, TypeError) as e:
        raise CheckpointError(f"{run_file}: unreadable run settings: {e}") from None
    ck = load_checkpoint(p)
    try:
        params = jax.tree_util.tree_map(jnp.asarray, ck.state["params"]["actor"])
    except (KeyError, TypeError):
        raise CheckpointError(f"{ck.path}: no actor parameters in this checkpoint") from None
    if rc.trace and not Path(rc.trace).is_file():  # trained on a trace that is not here
        rc = dataclasses.replace(rc, trace="")
    env = build_env(rc)
    _, _, actor_apply, _ = build_nets(rc, env)
    return LoadedA2C(
        run=rc, params=params, epoch=ck.epoch, path=ck.path, env=env, actor_apply=actor_apply
    )


def export_actor(checkpoint, out) -> Path:
    """A model directory ``out`` for shipping: the actor's parameters of ``checkpoint`` only (a
    quarter of the file: no critic, no optimiser or environment state; enough for
    :func:`load_model` and evaluation, not for ``--resume``), its run's ``run.json`` and
    ``log.jsonl``. Returns the checkpoint written."""
    from jaxsched.train.checkpoint import save_checkpoint

    ck = load_checkpoint(checkpoint)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("run.json", "log.jsonl"):
        atomic_write(out / name, (ck.path.parent / name).read_bytes())
    state = {"params": {"actor": ck.state["params"]["actor"]}}
    return save_checkpoint(out, state, epoch=ck.epoch, config=ck.config,
                           metrics_history=ck.metrics_history)  # fmt: skip
