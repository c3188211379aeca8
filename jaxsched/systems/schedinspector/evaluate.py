"""A trained inspector: loading it, running base alone vs base + inspector on the same
sequences (greedy, or sampled as the reference's test script), the paired difference and the
rejection ratio, and its rows for ``jaxsched evaluate --model``.

Example::

    from jaxsched.systems.schedinspector.evaluate import load_inspector, compare
    model = load_inspector("runs/si")
    print(format_compare(compare(model, starts=[9149, 8144], length=256)))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence as Seq
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs.async_rows import async_episodes
from jaxsched.envs.schedinspector import BACKFILLS
from jaxsched.nets.categorical import gumbel_argmax
from jaxsched.nets.schedinspector import InspectorPolicy
from jaxsched.systems import LoadedModel
from jaxsched.systems.schedinspector.config import RunConfig, load_jobs, make_env
from jaxsched.train.loop import load_run, read_run_json

__all__ = [
    "LoadedInspector",
    "load_inspector",
    "inspect_runs",
    "compare",
    "mean_se",
    "rejection_ratio",
    "format_compare",
    "test_starts",
    "compare_rows",
    "evaluate_model",
    "versus_heuristics",
]


@dataclasses.dataclass
class LoadedInspector(LoadedModel):
    """A trained inspector: :class:`~jaxsched.systems.LoadedModel` with ``run`` a
    :class:`RunConfig`."""


def load_inspector(path) -> LoadedInspector:
    """The newest checkpoint of a run directory (or a checkpoint file)."""
    rc, params, ck = load_run(path, RunConfig.from_dict, "policy_params")
    return LoadedInspector(run=rc, params=params, epoch=ck.epoch, path=ck.path)


def _act(params, obs, key, sample):
    logits = InspectorPolicy().apply(params, obs.obs, obs.mask)
    return jnp.where(sample, gumbel_argmax(key, logits), jnp.argmax(logits)).astype(jnp.int32)


def _results(env, st):
    return env.inspected_values(st), env.base_values(st), st.decisions, st.rejections


@jax.jit
def _runs(env, params, starts, key, sample):
    def one(start, k):
        st, ts = env.reset_at(start)

        def body(c):
            s, ts, k = c
            k, sub = jax.random.split(k)
            s, ts = env.step(s, _act(params, ts.observation, sub, sample))
            return s, ts, k

        st, ts, _ = jax.lax.while_loop(lambda c: ~c[0].sim.done, body, (st, ts, k))
        return _results(env, st)

    return jax.vmap(one)(starts, jax.random.split(key, starts.shape[0]))


@jax.jit
def _runs_async(env, params, starts, key, sample):
    """:func:`_runs` on the asynchronous rows (:func:`jaxsched.envs.async_rows.async_episodes`):
    the same per-row key chains, so the same decisions. An episode ends at the end of its
    sequence (an evaluation environment has no step cap)."""
    state = jax.vmap(lambda s: env.reset_at(s)[0])(starts)
    act = jax.vmap(_act, in_axes=(None, 0, 0, None))

    def decide(rows, obs, k):
        k, sub = jnp.moveaxis(jax.vmap(jax.random.split)(k), 1, 0)
        return act(params, obs, sub, sample), k

    keys = jax.random.split(key, starts.shape[0])
    state, _, _ = async_episodes(env, decide, state, keys, max(8, starts.shape[0] // 4))
    return jax.vmap(lambda s: _results(env, s))(state)


def inspect_runs(
    env,
    params,
    starts: Seq[int],
    *,
    sample: bool = False,
    seed: int = 0,
    async_rows: bool | None = None,
) -> dict:
    """Base alone and base + inspector on the sequences ``starts`` of ``env`` (an evaluation
    environment: mask on). Returns numpy arrays per sequence: ``inspected`` and ``base`` (dicts
    of the sequence values), ``decisions``, ``rejections``. ``async_rows``: run on the
    asynchronous rows (the same results; default: with backfilling on an accelerator)."""
    if async_rows is None:
        async_rows = env.async_ok and jax.default_backend() != "cpu"
    fn = _runs_async if async_rows and env.async_ok else _runs
    ins, base, dec, rej = jax.device_get(
        fn(
            env,
            params,
            jnp.asarray(np.asarray(starts, np.int32)),
            jax.random.PRNGKey(seed),
            jnp.asarray(bool(sample)),
        )
    )
    return {"inspected": ins, "base": base, "decisions": dec, "rejections": rej}


def compare(
    model: LoadedInspector,
    starts: Seq[int],
    length: int = 256,
    *,
    trace=None,
    sample: bool = False,
    seed: int = 0,
) -> dict:
    """:func:`inspect_runs` of a loaded model on its own trace (or ``trace``)."""
    rc = model.run
    jobs, wait = load_jobs(trace or rc.trace, rc.mode)
    env = make_env(rc, jobs, wait, length=length, evaluation=True)
    out = inspect_runs(env, model.params, starts, sample=sample, seed=seed)
    out.update(starts=list(map(int, starts)), length=length, metric=rc.metric, base_name=rc.base)
    return out


def mean_se(x) -> tuple[float, float]:
    """``(mean, standard error)`` of the values ``x`` (float64)."""
    from jaxsched.sim.evaluate import standard_error

    return float(np.mean(np.asarray(x, np.float64))), standard_error(x)


def rejection_ratio(res: dict, which=slice(None)) -> float:
    """Rejections / decisions over the sequences ``which`` of an :func:`inspect_runs` result
    (all by default)."""
    dec, rej = np.asarray(res["decisions"])[which], np.asarray(res["rejections"])[which]
    return float(rej.sum() / max(dec.sum(), 1))


def format_compare(res: dict) -> str:
    """Base alone vs base + inspector per metric, the paired difference (inspected − base,
    mean ± standard error over the sequences) and the rejection ratio."""
    n = len(res["starts"])
    lines = [
        f"{n} sequences x {res['length']} jobs, base {res['base_name']}, "
        f"trained for {res['metric']}",
        f"{'metric':8s} {'base':>12s} {'inspected':>12s} {'difference ± s.e.':>24s} "
        f"{'improvement':>11s}",
    ]
    for m in ("bsld", "wait", "util", "mbsld"):
        b, i = np.asarray(res["base"][m]), np.asarray(res["inspected"][m])
        d, se = mean_se(i - b)
        imp = (b.mean() - i.mean()) / b.mean() if m != "util" else (i.mean() - b.mean())
        lines.append(
            f"{m:8s} {b.mean():12.4f} {i.mean():12.4f} {d:+14.4f} ± {se:<8.4f} {100 * imp:+10.2f}%"
        )
    dec, rej = np.asarray(res["decisions"]), np.asarray(res["rejections"])
    lines.append(f"rejection ratio {rejection_ratio(res):.4f} ({rej.sum()} of {dec.sum()})")
    return "\n".join(lines)


def test_starts(n_jobs: int, length: int, sequences: int, seed: int) -> list:
    """Start indices drawn as the reference's test script draws them (spec §8.2): after
    ``env.seed(seed)``, ``R.randint(0, n_jobs - length)`` per sequence, over the whole trace
    (seed 1, 50 × 256 on Lublin: 9149, 8144, 1732, …)."""
    from jaxsched.errors import ConfigError
    from jaxsched.workload.sampling import gym_np_random

    if n_jobs - length <= 0:
        raise ConfigError(f"cannot draw sequences of {length} jobs from {n_jobs} jobs")
    r = gym_np_random(seed)
    return [int(r.randint(0, n_jobs - length)) for _ in range(sequences)]


#: metrics of :func:`compare` (the sequence values of the environment)
COMPARE_METRICS = ("bsld", "wait", "util", "mbsld")


def compare_rows(res: dict, backfill: str, name: str = "inspector") -> list:
    """Rows in :class:`jaxsched.sim.evaluate.EvalResult`'s schema of a :func:`compare` result:
    per sequence the base alone (policy = the base's name) and base + inspector (``name``) on
    :data:`COMPARE_METRICS`, and the inspector's ``rejection_ratio`` (rejections / decisions)."""
    rows = []
    dec, rej = np.asarray(res["decisions"]), np.asarray(res["rejections"])
    for k, s in enumerate(res["starts"]):
        row = {"start": int(s), "jobs": res["length"], "backfill": backfill}
        for pol, vals in ((res["base_name"], res["base"]), (name, res["inspected"])):
            for m in COMPARE_METRICS:
                rows.append({**row, "policy": pol, "metric": m, "value": float(vals[m][k])})
        ratio = float(rej[k]) / max(float(dec[k]), 1.0)
        rows.append({**row, "policy": name, "metric": "rejection_ratio", "value": ratio})
    return rows


def evaluate_model(
    model: LoadedInspector,
    trace,
    *,
    starts=None,
    sequences: int = 10,
    length: int | None = None,
    seed: int = 1,
    backfills=None,
    sample: bool = False,
    name: str = "inspector",
):
    """``jaxsched evaluate TRACE --model DIR`` for an inspector: base alone vs base +
    inspector on the same sequences (``starts``, else ``sequences`` drawn by
    :func:`test_starts` with ``seed``) of ``length`` jobs (default the run's
    ``eval_length``), for each of ``backfills`` (default the run's own). Returns
    ``(EvalResult, text)``: the rows of :func:`compare_rows` and :func:`format_compare`'s
    tables, one per backfilling."""
    from jaxsched.errors import ConfigError
    from jaxsched.sim.evaluate import EvalResult

    rc = model.run
    length = length or rc.eval_length
    jobs, _ = load_jobs(str(trace), rc.mode)
    if starts is None:
        starts = test_starts(jobs.n_jobs, length, sequences, seed)
    bad = [int(s) for s in starts if s < 0 or s + length > jobs.n_jobs]
    if bad:
        raise ConfigError(
            f"sequence start {bad[0]} with {length} jobs runs past the {jobs.n_jobs} jobs"
        )
    bfs = list(backfills or [rc.backfill])
    rows, texts = [], []
    for bf in bfs:
        if bf not in BACKFILLS:
            raise ConfigError(
                f"a SchedInspector model runs with backfill {', '.join(BACKFILLS)}, not {bf!r}"
            )
        m = dataclasses.replace(model, run=dataclasses.replace(rc, backfill=bf))
        res = compare(m, starts, length, trace=str(trace), sample=sample)
        rows += compare_rows(res, bf, name)
        how = "sampled" if sample else "greedy"
        texts.append(f"{name} ({how} actions), backfilling {bf}:\n{format_compare(res)}")
    metrics = list(COMPARE_METRICS) + ["rejection_ratio"]
    ev = EvalResult(rows, np.asarray(starts, np.int64), [rc.base, name], bfs, metrics, None, {})
    return ev, "\n\n".join(texts)


def selection_rule(run_dir, options: dict):
    """``jaxsched select``'s rule for SchedInspector runs: the best greedy validation value of
    the inspected scheduler (``val_inspected``; lower is better unless the metric is ``util``),
    among the epochs that lost at most ``options["max_util_loss"]`` points of utilisation
    against the base on the same sequences (the rule of ``si-lublin1-sjf-u1`` and ``-uw``)."""

    from jaxsched.train.select import Rule

    metric = read_run_json(Path(run_dir) / "run.json").get("metric", "bsld")
    p = float(options.get("max_util_loss", 1.0))
    lost = lambda r: 100.0 * (r["val_util_base"] - r["val_util"])  # noqa: E731
    return Rule(
        key="val_inspected",
        higher_is_better=metric == "util",
        bound=lambda r: lost(r) <= p,
        bound_text=f"within {p:g} point(s) of the base's utilisation",
        describe=lambda r: (
            f"epoch {r['epoch']}: {r['val_inspected']:.2f} (base {r['val_base']:.2f}; "
            f"utilisation {lost(r):+.1f} points lost; rejection ratio {r['val_rejection']:.2f})"
        ),
        comparable=lambda r: r["val_base"],
    )


def versus_heuristics(
    model: LoadedInspector,
    env,
    jobs,
    wait,
    starts,
    names,
    length: int,
    own_env: bool = True,
    runs: dict | None = None,
) -> dict:
    """The greedy inspector against each heuristic of ``names`` on ``starts`` (sequences of
    ``length`` jobs of ``env``, an evaluation environment of ``model``'s run on ``jobs`` /
    ``wait``), in the model's metric: per name the heuristic's mean ± s.e., the paired
    difference inspected − heuristic (mean ± s.e.), the relative margin and the route that
    scheduled it. The model's own base comes with the inspected run; with ``own_env`` the other
    base rules of SchedInspector (``jaxsched.policies.inspector_bases.BASES``) run in its own
    environment with every pick accepted; every other name runs through one
    :func:`jaxsched.sim.evaluate.evaluate` call on the same jobs and starts (the reference's
    semantics, the run's backfilling; the two routes give the same values). A name
    ``NAME@BACKFILL`` (e.g. ``f4@rlscheduler-sjbf``) runs that heuristic with that backfilling
    instead, through :func:`jaxsched.sim.evaluate.evaluate`, so that an inspector can be paired
    with the strongest baseline of either backfilling order. ``runs``: the
    :func:`inspect_runs` result of ``env`` on ``starts``, when the caller has it already."""
    from jaxsched.policies.inspector_bases import BASES
    from jaxsched.sim.evaluate import evaluate

    metric = model.run.metric
    runs = inspect_runs(env, model.params, starts) if runs is None else runs
    ins = np.asarray(runs["inspected"][metric], np.float64)
    values, routes = {}, {}
    for name in names:
        if name == model.run.base:
            values[name] = np.asarray(runs["base"][metric], np.float64)
            routes[name] = "schedinspector base"
        elif own_env and name in BASES:
            e = make_env(dataclasses.replace(model.run, base=name), jobs, wait, length=length,
                         evaluation=True)  # fmt: skip
            values[name] = np.asarray(inspect_runs(e, model.params, starts)["base"][metric])
            routes[name] = "schedinspector base"
    by_backfill: dict = {}  # backfilling -> [(name as given, policy)]
    for name in names:
        if name not in values:
            policy, _, bf = name.partition("@")
            by_backfill.setdefault(bf or model.run.backfill, []).append((name, policy))
    for bf, todo in by_backfill.items():
        res = evaluate(jobs, [int(s) for s in starts], length, [p for _, p in todo], [bf],
                       compat=True, metrics=(metric,))  # fmt: skip
        for (name, _), policy in zip(todo, res.policies):
            by = {r["start"]: r["value"] for r in res.rows if r["policy"] == policy}
            values[name] = np.asarray([by[int(s)] for s in starts], np.float64)
            routes[name] = "jaxsched.sim.evaluate"
    out = {}
    for name in names:
        b = np.asarray(values[name], np.float64)
        out[name] = {"heuristic": mean_se(b), "difference": mean_se(ins - b),
                     "route": routes[name], "margin": float((ins.mean() - b.mean()) / b.mean())}  # fmt: skip
    return out
