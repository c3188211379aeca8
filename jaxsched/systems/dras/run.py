"""DRAS's training driver (``jaxsched train dras``) on the generic host loop
:func:`jaxsched.train.loop.run_epochs`.

An epoch = ``envs`` jobsets of the §7.4 curriculum (sampled → real → synthetic; indices
``(epoch − 1)·E …``), scheduled side by side by the compiled epoch of
:mod:`jaxsched.systems.dras.trainer` with PG updates every 10 scheduling instances (``variant
dql``: :mod:`jaxsched.systems.dras.trainer_dql`, ε-greedy with the DQL updates).  Validation
(spec §7.4): the greedy policy (fixed, no online updates) over the validation month as one continuous simulation, its
total reward and average wait; ``best.ckpt`` by ``best_by``.

Run directory (``--out DIR``): ``run.json`` ("system": "dras", the resolved
:class:`~jaxsched.systems.dras.config.RunConfig`), ``log.jsonl`` (per epoch: mean episode
reward, decisions, updates, early flushes, the episodes' average wait, seconds; ``val_reward``,
``val_wait``, ``val_max_wait``), checkpoints (``keep_checkpoints``), ``best.ckpt``/``best.json``.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.systems.dras.config import (
    RunConfig,
    env_jobs,
    epoch_jobsets,
    load_split,
    portable_trace,
    resolve_trace,
)
from jaxsched.systems.dras.evaluate import (
    baseline_schedules,
    env_class,
    env_options,
    make_policy,
    run_model,
)
from jaxsched.systems.dras.pg import PGConfig, make_pg
from jaxsched.systems.dras.trainer import from_pg, make_epoch
from jaxsched.train.loop import BestCheckpoint, EpochSpec, open_run, run_epochs, start_or_resume

__all__ = ["DRASTrainer", "build", "train"]


class DRASTrainer:
    """``update(state) -> (state, metrics)`` for one epoch's stacked environments;
    ``run_config()`` (checked on resume)."""

    def __init__(self, rc: RunConfig, epoch_fn, envs):
        self.rc, self._fn, self.envs = rc, epoch_fn, envs

    def update(self, state):
        return self._fn(state, self.envs)

    def run_config(self) -> dict:
        return self.rc.to_dict()


def stacked_envs(rc: RunConfig, jobsets):
    """The jobsets (Jobs of equal length) as one DRASEnv (pg) / DRASDQLEnv (dql) pytree with
    a leading axis E."""
    cls = env_class(rc)
    envs = [cls(env_jobs(j, rc.priority), length=j.n_jobs, **env_options(rc)) for j in jobsets]
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *envs)


_EPOCH_FNS: dict = {}


def _build_dql(rc: RunConfig, split):
    from jaxsched.nets.dras import dras_input_rows
    from jaxsched.systems.dras.dql import make_dql
    from jaxsched.systems.dras.trainer_dql import make_epoch_dql

    net, cfg = make_policy(rc), rc.dql_config()
    fns = make_dql(net.apply, cfg)
    key, k = jax.random.split(jax.random.PRNGKey(rc.seed))
    params = net.init(k, jnp.zeros((dras_input_rows(split.num_nodes, "dql"), 2), jnp.float32))
    dq = fns[0](params)
    state = {"params": dq.params, "opt_state": dq.opt_state, "key": key}
    # cfg holds the mode, sign, lr and the targets' scaling (which follows the reward)
    ck = ("dql", rc.hidden, rc.input_norm, rc.norm_scales, rc.capacity, cfg)
    if ck not in _EPOCH_FNS:
        _EPOCH_FNS[ck] = jax.jit(make_epoch_dql(net.apply, fns, cfg, C=rc.capacity))
    return state, _EPOCH_FNS[ck]


def build(rc: RunConfig, split):
    """``(init_state, epoch_fn)`` of a resolved configuration: ``epoch_fn(state, envs)`` jitted."""
    import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
    from jaxsched.nets.dras import dras_input_rows

    if rc.variant == "dql":
        return _build_dql(rc, split)
    net = make_policy(rc)
    pg = make_pg(net.apply, PGConfig(mode=rc.mode, lr=rc.lr), capacity=rc.capacity)
    key, k = jax.random.split(jax.random.PRNGKey(rc.seed))
    rows = dras_input_rows(split.num_nodes)
    params = net.init(k, jnp.zeros((rows, 2), jnp.float32))
    state = from_pg(pg[0](params), key)
    ck = (rc.hidden, rc.mode, rc.input_norm, rc.norm_scales, rc.lr, rc.capacity, rc.update)
    if ck not in _EPOCH_FNS:  # one compiled epoch per network/update setting and process
        _EPOCH_FNS[ck] = jax.jit(make_epoch(net.apply, pg, C=rc.capacity, update=rc.update))
    return state, _EPOCH_FNS[ck]


#: ``best_by="bounded-wait"``: the maximum wait allowed, × FCFS + EASY's (issue 17's bound)
MAX_WAIT_BOUND = 1.5
#: added to the maximum wait of an epoch outside the bound, so that any epoch within it wins
OUTSIDE_BOUND = 1e9


def bounded_wait_score(avg_wait: float, max_wait: float, bound: float) -> float:
    """``best_by="bounded-wait"``'s score (lower is better): the average wait when the maximum
    wait is at most ``bound`` (s), else ``OUTSIDE_BOUND`` + the maximum wait."""
    return float(avg_wait) if max_wait <= bound else OUTSIDE_BOUND + float(max_wait)


def _score(rc: RunConfig, r: dict, bound: float | None) -> float:
    if rc.best_by == "reward":
        return r["reward"]
    if rc.best_by == "bounded-wait":
        return bounded_wait_score(r["avg_wait"], r["max_wait"], bound)
    return r["avg_wait"]


def _validation(rc: RunConfig, split, out: Path):
    cj = env_jobs(split.val, rc.priority)
    extra = {"score": f"validation {rc.best_by}"}
    bound = None
    if rc.best_by == "bounded-wait":
        fcfs = baseline_schedules(cj, ["fcfs"])["fcfs"]["start"]
        bound = MAX_WAIT_BOUND * float(np.max(fcfs - np.asarray(cj.submit)))
        extra["max_wait_bound"] = bound
    best = BestCheckpoint(out, higher_is_better=rc.best_by == "reward", extra=extra)

    def validate(state, epoch, ck):
        r = run_model(rc, state["params"], cj)
        best.offer(_score(rc, r, bound), epoch, ck)
        return {"val_reward": r["reward"], "val_wait": r["avg_wait"],
                "val_max_wait": r["max_wait"], "val_decisions": r["decisions"]}  # fmt: skip

    return validate


def _row(epoch, m, trainer) -> dict:
    if bool(m["overflow"]):
        raise ConfigError("a training jobset overflowed the engine's queue (report this)")
    return {
        "reward": float(m["episode_reward"]),
        "decisions": float(m["decisions"]),
        "updates": int(m["rounds"]),
        "early_flushes": int(m["early_flushes"]),
        "avg_wait": float(m["avg_wait"]),
        "passes": int(m["passes"]),
        "max_batch_span": int(m["max_batch_span"]),
        **{k: float(m[k]) for k in ("epsilon", "mean_abs_delta") if k in m},  # dql
    }


def _message(row) -> str:
    msg = f"reward {row['reward']:.2f} wait {row['avg_wait']:.0f}s"
    if "val_wait" in row:
        msg += f" | val reward {row['val_reward']:.1f} wait {row['val_wait']:.0f}s"
    return msg


def train(rc: RunConfig, out, *, epochs: int, resume: bool = False, progress: bool = True,
          log=print):  # fmt: skip
    """Train (or continue) a run in ``out`` up to ``epochs`` epochs; returns the state."""
    t0 = time.perf_counter()
    out = Path(out)
    saved = open_run(out, resume)
    if saved is not None:
        rc = RunConfig.from_dict(saved)
    path = resolve_trace(rc.trace, out)
    split = load_split(path)
    # the saved settings name the trace relative to the run directory's checkout
    rc = dataclasses.replace(rc.resolved(split), trace=portable_trace(path, out))
    state, epoch_fn = build(rc, split)
    cache: dict = {}

    def trainer_at(epoch: int) -> DRASTrainer:
        if epoch not in cache:
            cache.clear()
            cache[epoch] = DRASTrainer(
                rc, epoch_fn, stacked_envs(rc, epoch_jobsets(rc, split.train, epoch))
            )
        return cache[epoch]

    state, history, done = start_or_resume(
        out, state, DRASTrainer(rc, epoch_fn, None), resume=resume, run_json=rc.to_dict(), log=log
    )
    spec = EpochSpec(
        trainer_at=trainer_at,
        row=_row,
        message=_message,
        validate=_validation(rc, split, out) if rc.validate else None,
        validate_every=rc.validate_every if rc.validate else 0,
        keep=1 if rc.keep_checkpoints is None else rc.keep_checkpoints,
    )
    state, _ = run_epochs(out, state, history, spec, done_epochs=done, epochs=epochs, t0=t0,
                          progress=progress, log=log)  # fmt: skip
    return state


def np_state(state) -> dict:
    """The state on the host (numpy), e.g. to compare runs bit for bit."""
    return jax.tree_util.tree_map(np.asarray, state)
