"""A trained DRAS-PG model: loading it, running it over a job list as one continuous CQSim-mode
simulation (spec ``dras.md`` §10; greedy — the largest truncated probability — unless
``sample``; no online adaptation during the test, unlike the code), the §10 test-period report
beside FCFS + EASY and the §8 baselines (H2's :mod:`jaxsched.systems.dras.report`), and the
rows for ``jaxsched evaluate --model``.

Example::

    from jaxsched.systems.dras.evaluate import load_dras, test_report
    print(test_report(load_dras("runs/dras"), "SDSC-SP2-1998-4.2-cln.swf.gz"))
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
import numpy as np

from jaxsched.systems.dras.config import RunConfig, env_jobs, load_split
from jaxsched.train.loop import load_run

__all__ = ["LoadedDRAS", "make_policy", "make_env", "load_dras", "run_model", "test_schedules",
           "test_report", "model_rows"]  # fmt: skip


@dataclasses.dataclass
class LoadedDRAS:
    """``run`` (:class:`RunConfig`), ``params`` (policy), ``epoch``, ``path`` (checkpoint)."""

    run: RunConfig
    params: object
    epoch: int
    path: Path


def make_policy(rc: RunConfig):
    """The :class:`~jaxsched.nets.dras.DRASPolicy` of a resolved run configuration."""
    from jaxsched.nets.dras import DRASPolicy

    norm = tuple(rc.norm_scales) if rc.input_norm else None
    return DRASPolicy(hidden=tuple(rc.hidden), mode=rc.mode, input_norm=norm)


def make_env(rc: RunConfig, cj, *, queue_cap: int | None = None):
    """A DRASEnv over a whole job list ``cj`` (one episode = all of it)."""
    import jaxsched.sim  # noqa: F401  (x64)
    from jaxsched.envs.dras import DRASEnv

    n = len(cj.submit)
    q = min(n, int(queue_cap or rc.queue_cap)) if queue_cap != 0 else n
    return DRASEnv(cj, length=n, runtime=rc.mode, queue_cap=q)


def load_dras(path) -> LoadedDRAS:
    """The newest checkpoint of a run directory, or a checkpoint file (e.g. ``best.ckpt``)."""
    rc, params, ck = load_run(path, RunConfig.from_dict, "params")
    return LoadedDRAS(run=rc, params=params, epoch=ck.epoch, path=ck.path)


_ROLLOUTS: dict = {}


def _rollout_fn(rc: RunConfig, apply_fn, sample: bool):
    from jaxsched.systems.dras.trainer import rollout

    k = (rc.hidden, rc.mode, rc.input_norm, rc.norm_scales, sample)
    if k not in _ROLLOUTS:
        _ROLLOUTS[k] = jax.jit(lambda env, p, key: rollout(env, apply_fn, p, key, sample=sample))
    return _ROLLOUTS[k]


def run_model(rc: RunConfig, params, cj, *, sample: bool = False, seed: int = 0) -> dict:
    """The policy over the whole job list ``cj`` (CQSimJobs-like) from an empty machine:
    ``{"start", "cls"}`` int64 ``[n]``, ``reward`` (total), ``decisions``, ``avg_wait``,
    ``seconds``.  The engine's queue is ``rc.queue_cap`` slots, doubled until nothing
    overflows."""
    apply_fn = make_policy(rc).apply
    q = int(rc.queue_cap)
    while True:
        env = make_env(rc, cj, queue_cap=q)
        t0 = time.perf_counter()
        sim, tot, n = jax.device_get(
            _rollout_fn(rc, apply_fn, sample)(env, params, jax.random.PRNGKey(seed))
        )
        if not sim.overflow or q >= len(cj.submit):
            break
        q *= 2
    start = np.asarray(sim.start, np.int64)
    return {"start": start, "cls": np.asarray(sim.cls, np.int64), "reward": float(tot),
            "decisions": int(n), "seconds": time.perf_counter() - t0,
            "avg_wait": float(np.mean(start - np.asarray(cj.submit)))}  # fmt: skip


def _baseline_schedules(cj, methods) -> dict:
    from jaxsched.policies.dras_baselines import baseline_kwargs
    from jaxsched.sim.oracle_cqsim import simulate_cqsim

    out = {}
    for name in methods:
        res = simulate_cqsim(cj.submit, cj.nodes, cj.run, cj.req_time, num_nodes=cj.num_nodes,
                             **baseline_kwargs(name, seed=0))  # fmt: skip
        out[name] = {"start": np.asarray(res.start), "cls": np.asarray(res.cls)}
    return out


def test_schedules(model: LoadedDRAS, trace=None, *, jobs: int | None = None, sample=False,
                   baselines=("fcfs", "binpacking", "random", "optimization")) -> tuple:  # fmt: skip
    """``(schedules, cj, info)``: the model and the baselines on the test period of ``trace``
    (default the run's) as one continuous simulation (``jobs``: its first K jobs)."""
    rc = model.run
    split = load_split(str(trace or rc.trace))
    test = split.test if not jobs else split.test.select(slice(0, int(jobs)))
    cj = env_jobs(test, rc.priority)
    r = run_model(rc, model.params, cj, sample=sample)
    base = dict(submit=cj.submit, run=cj.run, nodes=cj.nodes)
    sch = {"dras-pg": dict(base, start=r["start"], cls=r["cls"])}
    for k, v in _baseline_schedules(cj, baselines).items():
        sch[k] = dict(base, **v)
    return sch, cj, {"decisions": r["decisions"], "seconds": r["seconds"], "wide": split.wide}


def test_report(model: LoadedDRAS, trace=None, *, jobs=None, sample=False) -> str:
    """The §10 table (H2's report) of :func:`test_schedules`, with a header line."""
    from jaxsched.systems.dras.report import report

    sch, cj, info = test_schedules(model, trace, jobs=jobs, sample=sample)
    head = (f"{trace or model.run.trace}: test period {len(cj.submit)} jobs, N = {cj.num_nodes}; "
            f"model {model.path} (epoch {model.epoch}); {info['decisions']} decisions in "
            f"{info['seconds']:.1f} s")  # fmt: skip
    return head + "\n" + report(sch, N=cj.num_nodes)


def model_rows(model, jobs, starts, length, backfills, metrics, compat, *, sample=False,
               name="dras", **kw) -> list:  # fmt: skip
    """Rows of :class:`jaxsched.sim.evaluate.EvalResult` for ``jaxsched evaluate --model``: the
    model (its own reservation and level-2 backfilling, CQSim semantics) on each sequence of
    ``length`` jobs of ``jobs`` from ``starts``.  DRAS does its own reservation and
    backfilling, so the same value is reported under every evaluated backfill column (the
    table needs one per column)."""
    from jaxsched.sim import oracle

    rows = []
    for s in starts:
        w = jobs.window(int(s), int(length))
        cj = env_jobs(w, model.run.priority)
        r = run_model(model.run, model.params, cj, sample=sample)
        m = oracle.metrics(cj.submit, cj.run, cj.nodes, r["start"],
                           num_procs=float(jobs.num_procs), compat=compat)  # fmt: skip
        for bf in backfills:
            for metric in (x for x in metrics if x in m):
                rows.append({"start": int(s), "jobs": int(length), "policy": name,
                             "backfill": bf, "metric": metric, "value": float(m[metric])})  # fmt: skip
    return rows
