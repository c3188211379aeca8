"""A trained RLScheduler policy: loading it from a run directory or checkpoint, running it on
job sequences (greedy or sampled picks), and its rows for ``jaxsched evaluate --model``.

Example::

    from jaxsched.systems.rlscheduler.evaluate import load_policy, policy_metric
    pol = load_policy("runs/l1")                       # newest checkpoint (or DIR/best.ckpt)
    policy_metric(pol, jobs, starts=[1981, 2756], length=1024)     # greedy (argmax) picks
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence as Seq
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched import nets
from jaxsched.envs import RLSchedulerEnv
from jaxsched.envs.async_rows import async_episodes
from jaxsched.errors import ConfigError
from jaxsched.systems import LoadedModel
from jaxsched.systems.rlscheduler.config import RunConfig, make_env
from jaxsched.systems.rlscheduler.config import policy_net as net_of_run
from jaxsched.train.loop import load_run, read_run_json

__all__ = [
    "LoadedPolicy",
    "load_policy",
    "policy_metric",
    "schedule",
    "model_rows",
    "episodes_fn",
]


def _episode_fn(env: RLSchedulerEnv, policy_net, sample: bool):
    """``(params, start, key) -> (metric, start_times)`` for one sequence, compiled once."""

    pick = _pick(policy_net, sample)

    def run(params, start, key):
        state, ts = env.reset_at(start)

        def cond(c):
            return ~c[1].last()

        def body(c):
            st, t, k = c
            k, sub = jax.random.split(k)
            st, t = env.step(st, pick(params, t.observation, sub))
            return st, t, k

        state, ts, _ = jax.lax.while_loop(cond, body, (state, ts, key))
        return env.metric_value(state), state.sim.start

    return run


@dataclasses.dataclass
class LoadedPolicy(LoadedModel):
    """A trained RLScheduler policy: :class:`~jaxsched.systems.LoadedModel` (``run`` a
    :class:`RunConfig`) and its network ``net``."""

    net: object = None


def _pick(policy_net, sample: bool):
    """``(params, observation, key) -> action`` of one decision (greedy or sampled)."""

    def pick(params, obs, key):
        logits = policy_net.apply(params, obs.obs, obs.mask)
        if sample:
            return nets.sample_action(key, logits, obs.mask)
        return nets.greedy_action(logits, obs.mask)

    return pick


def _episodes_async(env: RLSchedulerEnv, policy_net, sample: bool):
    """:func:`_episode_fn` for a batch on the asynchronous rows
    (:func:`jaxsched.envs.async_rows.async_episodes`): the same per-row key chain, so the
    same decisions and schedules."""
    pick = jax.vmap(_pick(policy_net, sample), in_axes=(None, 0, 0))

    def run(params, starts, keys):
        state = jax.vmap(lambda s: env.reset_at(s)[0])(starts)

        def decide(rows, obs, k):
            k, sub = jnp.moveaxis(jax.vmap(jax.random.split)(k), 1, 0)
            return pick(params, obs, sub).astype(jnp.int32), k

        chunk = max(8, starts.shape[0] // 4)
        state, _, _ = async_episodes(env, decide, state, keys, chunk)
        return jax.vmap(env.metric_value)(state), state.sim.start

    return run


def use_async(env, async_rows: bool | None) -> bool:
    """Whether an evaluation runs on the asynchronous rows: ``async_rows``, or by default
    where a decision drains (``env.async_ok``: backfilling) on an accelerator."""
    if async_rows is None:
        return bool(env.async_ok) and jax.default_backend() != "cpu"
    return bool(async_rows) and bool(env.async_ok)


def episodes_fn(env: RLSchedulerEnv, policy_net, sample: bool, async_rows: bool | None = None):
    """``(params, starts [S], keys [S]) -> (metrics [S], start_times [S, L])``, compiled; on
    the asynchronous rows where :func:`use_async` says so (the same results)."""
    if use_async(env, async_rows):
        return jax.jit(_episodes_async(env, policy_net, sample))
    return jax.jit(jax.vmap(_episode_fn(env, policy_net, sample), in_axes=(None, 0, 0)))


def load_policy(path) -> LoadedPolicy:
    """Load the newest checkpoint of a run directory (or a checkpoint file)."""
    rc, params, ck = load_run(path, RunConfig.from_dict, "policy_params")
    return LoadedPolicy(run=rc, net=net_of_run(rc), params=params, epoch=ck.epoch, path=ck.path)


def policy_metric(
    policy: LoadedPolicy,
    jobs,
    starts: Seq[int],
    length: int,
    *,
    backfill: str | None = None,
    metric: str | None = None,
    sample: bool = False,
    seed: int = 0,
    async_rows: bool | None = None,
):
    """Run a learned policy on the sequences ``start … start+length-1`` (greedy picks, or
    sampled ones as the reference's test script does with ``sample=True``); ``async_rows``
    as in :func:`use_async` (default: the asynchronous rows with backfilling on an
    accelerator).

    Returns ``(values, start_times)``: float64 ``[S]`` metric per sequence and int64
    ``[S, length]`` start times.
    """
    rc = policy.run
    if backfill is not None or metric is not None:
        rc = dataclasses.replace(rc, backfill=backfill or rc.backfill, metric=metric or rc.metric)
    env = make_env(jobs, rc, length)
    fn = episodes_fn(env, policy.net, sample, async_rows)
    starts = np.asarray(list(starts), np.int32)
    n = jobs.n_jobs
    bad = [int(s) for s in starts if s < 0 or s + length > n]
    if bad:
        raise ConfigError(
            f"sequence start {bad[0]} with {length} jobs runs past the {n} loaded jobs"
        )
    keys = jax.random.split(jax.random.PRNGKey(seed), len(starts))
    vals, st = fn(policy.params, jnp.asarray(starts), keys)
    return np.asarray(vals, np.float64), np.asarray(st)


def schedule(
    policy: LoadedPolicy,
    jobs,
    start: int,
    length: int,
    backfill: str,
    compat: bool,
    *,
    sample: bool = False,
    seed: int = 0,
) -> np.ndarray:
    """Start times (int64 ``[length]``) of jobs ``start … start+length-1`` scheduled by the
    learned policy on an idle cluster, with ``backfill`` in the given semantics."""
    rc = dataclasses.replace(policy.run, backfill=backfill, compat=bool(compat))
    _, st = policy_metric(
        dataclasses.replace(policy, run=rc), jobs, [start], length, sample=sample, seed=seed
    )
    return np.asarray(st[0], np.int64)


def model_rows(
    policy: LoadedPolicy,
    jobs,
    starts: Seq[int],
    length: int,
    backfills: Seq[str],
    metrics: Seq[str],
    compat: bool,
    *,
    sample: bool = False,
    name: str = "rl",
    seed: int = 0,
) -> list:
    """Rows in :class:`jaxsched.sim.evaluate.EvalResult`'s schema for a learned policy on the
    given sequences (one run per backfill mode), metrics computed from its schedules."""
    from jaxsched.sim import oracle

    rows = []
    for bf in backfills:
        rc = dataclasses.replace(policy.run, backfill=bf, compat=bool(compat))
        pol = dataclasses.replace(policy, run=rc)
        _, st = policy_metric(pol, jobs, starts, length, sample=sample, seed=seed)
        for s, times in zip(starts, st):
            sl = slice(int(s), int(s) + length)
            m = oracle.metrics(
                jobs.submit[sl],
                jobs.run[sl],
                jobs.procs[sl],
                times,
                num_procs=float(jobs.num_procs),
                compat=bool(compat),
                users=jobs.user[sl],
            )
            for name_m in metrics:
                rows.append(
                    {
                        "start": int(s),
                        "jobs": length,
                        "policy": name,
                        "backfill": bf,
                        "metric": name_m,
                        "value": float(m[name_m]),
                    }
                )
    return rows


def selection_rule(run_dir, options: dict):
    """``jaxsched select``'s rule for RLScheduler runs: the epoch with the best greedy
    validation value of the run's metric (``val_<metric>`` of ``--validate K``; lower is better
    unless the metric is a utilisation). No bound."""

    from jaxsched.sim.metrics import HIGHER_IS_BETTER
    from jaxsched.train.select import Rule

    metric = read_run_json(Path(run_dir) / "run.json").get("metric", "bsld")
    return Rule(key=f"val_{metric}", higher_is_better=metric in HIGHER_IS_BETTER)
