"""A trained DRAS model (PG or DQL): loading it, running it over a job list as one continuous
CQSim-mode simulation (spec ``dras.md`` §10; greedy — the largest truncated probability, or the
largest value for DQL — unless ``sample``; PG's online adaptation during test runs as the run's
``online`` setting says, on by default in code mode as in the code), the §10 test-period report
beside FCFS + EASY and the §8 baselines (H2's :mod:`jaxsched.systems.dras.report`), several
models beside the baselines in one such table (:func:`test_period_table`, ``jaxsched evaluate
TRACE --model A --model B``), and the rows for ``jaxsched evaluate --model``.

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

from jaxsched.errors import CheckpointError, ConfigError
from jaxsched.systems import LoadedModel
from jaxsched.systems.dras.config import RunConfig, env_jobs, load_split
from jaxsched.train.loop import load_run, read_run_json

__all__ = ["LoadedDRAS", "make_policy", "env_options", "make_env", "load_dras", "run_model", "test_schedules",
           "test_report", "model_rows", "baseline_schedules", "BASELINES", "checks",
           "test_period_table", "format_test_period"]  # fmt: skip


@dataclasses.dataclass
class LoadedDRAS(LoadedModel):
    """A trained DRAS policy or value network: :class:`~jaxsched.systems.LoadedModel` with
    ``run`` a :class:`RunConfig`."""


def make_policy(rc: RunConfig):
    """The network of a resolved run configuration: :class:`~jaxsched.nets.dras.DRASPolicy`
    (pg) or :class:`~jaxsched.nets.dras.DRASValue` (dql)."""
    from jaxsched.nets.dras import DRASPolicy, DRASValue

    norm = tuple(rc.norm_scales) if rc.input_norm else None
    net = DRASValue if rc.variant == "dql" else DRASPolicy
    return net(hidden=tuple(rc.hidden), mode=rc.mode, input_norm=norm)


def env_class(rc: RunConfig):
    """DRASEnv (pg) or DRASDQLEnv (dql)."""
    import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
    from jaxsched.envs.dras import DRASEnv
    from jaxsched.envs.dras_dql import DRASDQLEnv

    return DRASDQLEnv if rc.variant == "dql" else DRASEnv


def env_options(rc: RunConfig) -> dict:
    """The environment keywords of a run besides its job list: ``runtime``, the scheduling
    ``loop`` (the mode's unless set) and the ``reward_fn`` its reward names
    (:data:`jaxsched.envs.dras.REWARDS`; DQL's ``code`` is type 5 with the DQL timing)."""
    from jaxsched.envs.dras import REWARDS

    return {"runtime": rc.mode, "loop": rc.loop_name, "reward_fn": REWARDS[rc.reward_name]}


def make_env(rc: RunConfig, cj, *, queue_cap: int | None = None):
    """The run's environment over a whole job list ``cj`` (one episode = all of it)."""
    n = len(cj.submit)
    q = min(n, int(queue_cap or rc.queue_cap)) if queue_cap != 0 else n
    return env_class(rc)(cj, length=n, queue_cap=q, **env_options(rc))


def load_dras(path) -> LoadedDRAS:
    """The newest checkpoint of a run directory, or a checkpoint file (e.g. ``best.ckpt``)."""
    rc, params, ck = load_run(path, RunConfig.from_dict, "params")
    return LoadedDRAS(run=rc, params=params, epoch=ck.epoch, path=ck.path)


_ROLLOUTS: dict = {}


def _rollout_fn(rc: RunConfig, apply_fn, sample: bool, online: bool):
    """The jitted ``f(env, params, key, learn) -> (sim, total reward, decisions, extra)`` of a
    run: PG greedy/sampled (``online``: with the test-time updates where the traced bool
    ``learn``, extra = updates), DQL greedy or ε-greedy from 1.0 (``sample``, the code's test
    runs; extra = the decision record); ``learn`` is unused but by online PG."""
    from jaxsched.systems.dras.trainer import online_rollout, rollout
    from jaxsched.systems.dras.trainer_dql import dql_rollout

    k = (rc.variant, rc.hidden, rc.mode, rc.input_norm, rc.norm_scales, rc.lr, rc.capacity,
         rc.dql_sign, sample, online)  # fmt: skip
    if k in _ROLLOUTS:
        return _ROLLOUTS[k]
    if rc.variant == "dql":
        cfg = rc.dql_config()

        def f(env, p, key, learn):
            n = env._config.length
            return dql_rollout(env, apply_fn, cfg, p, key, float(sample), record=n)
    elif online:
        from jaxsched.systems.dras.pg import PGConfig, make_pg

        pg = make_pg(apply_fn, PGConfig(mode=rc.mode, lr=rc.lr), capacity=rc.capacity)

        def f(env, p, key, learn):
            return online_rollout(env, apply_fn, pg, p, key, sample=sample, C=rc.capacity,
                                  learn=learn)  # fmt: skip
    else:

        def f(env, p, key, learn):
            return (*rollout(env, apply_fn, p, key, sample=sample), None)

    _ROLLOUTS[k] = jax.jit(f)
    return _ROLLOUTS[k]


def run_model(rc: RunConfig, params, cj, *, sample: bool = False, seed: int = 0,
              online: bool | None = False) -> dict:  # fmt: skip
    """The model over the whole job list ``cj`` (CQSimJobs-like) from an empty machine:
    ``{"start", "cls"}`` int64 ``[n]``, ``reward`` (total), ``decisions``, ``avg_wait`` and
    ``max_wait`` (s), ``seconds``; DQL adds the recorded decisions (``job``, ``level``, ``rewards``; the last
    ``len(cj)`` of them when there are more, as with a paper reward), online PG
    the number of ``updates``.  ``online`` (PG): keep learning during the run (None = the
    run's setting, :attr:`RunConfig.online_test`); validation runs use the fixed policy.  The
    engine's queue is ``rc.queue_cap`` slots, doubled until nothing overflows."""
    apply_fn = make_policy(rc).apply
    online = rc.online_test if online is None else bool(online) and rc.variant == "pg"
    q = int(rc.queue_cap)
    while True:
        env = make_env(rc, cj, queue_cap=q)
        t0 = time.perf_counter()
        fn = _rollout_fn(rc, apply_fn, sample, online)
        sim, tot, n, extra = jax.device_get(fn(env, params, jax.random.PRNGKey(seed), True))
        if not sim.overflow or q >= len(cj.submit):
            break
        q *= 2
    start = np.asarray(sim.start, np.int64)
    out = {"start": start, "cls": np.asarray(sim.cls, np.int64), "reward": float(tot),
           "decisions": int(n), "seconds": time.perf_counter() - t0,
           "avg_wait": float(np.mean(start - np.asarray(cj.submit))),
           "max_wait": float(np.max(start - np.asarray(cj.submit)))}  # fmt: skip
    if rc.variant == "dql":  # a ring of len(cj) entries: the last ones, in order
        k, ring = int(n), len(extra.reward)
        i = np.arange(max(0, k - ring), k) % ring
        out.update(job=np.asarray(extra.job)[i], level=np.asarray(extra.level)[i],
                   rewards=np.asarray(extra.reward)[i])  # fmt: skip
    elif online:
        out["updates"] = int(extra)
    return out


def baseline_schedules(cj, methods) -> dict:
    """``{name: {"start", "cls"}}`` (int arrays ``[n]``) of the §8 baselines ``methods`` (e.g.
    ``["fcfs"]`` for FCFS + EASY) over the job list ``cj``, by the plain-Python CQSim oracle."""
    from jaxsched.policies.dras_baselines import baseline_kwargs
    from jaxsched.sim.oracle_cqsim import simulate_cqsim

    out = {}
    for name in methods:
        res = simulate_cqsim(cj.submit, cj.nodes, cj.run, cj.req_time, num_nodes=cj.num_nodes,
                             **baseline_kwargs(name, seed=0))  # fmt: skip
        out[name] = {"start": np.asarray(res.start), "cls": np.asarray(res.cls)}
    return out


def test_schedules(model: LoadedDRAS, trace=None, *, jobs: int | None = None, sample=False,
                   baselines=("fcfs", "binpacking", "random", "optimization"),
                   online: bool | None = None, period: str = "test") -> tuple:  # fmt: skip
    """``(schedules, cj, info)``: the model and the baselines on the test period of ``trace``
    (default the run's, found from its run directory) as one continuous simulation (``jobs``:
    its first K jobs); ``online``: PG's online adaptation (None = the run's setting);
    ``period="val"``: the validation month instead (what model choices may look at)."""
    from jaxsched.systems.dras.config import resolve_trace

    if period not in ("test", "val"):
        raise ConfigError(f"period must be test or val, got {period!r}")
    rc = model.run
    split = load_split(str(trace or resolve_trace(rc.trace, model.path)))
    jobs_of = split.test if period == "test" else split.val
    test = jobs_of if not jobs else jobs_of.select(slice(0, int(jobs)))
    cj = env_jobs(test, rc.priority)
    r = run_model(rc, model.params, cj, sample=sample, online=online)
    base = dict(submit=cj.submit, run=cj.run, nodes=cj.nodes)
    sch = {f"dras-{rc.variant}": dict(base, start=r["start"], cls=r["cls"])}
    for k, v in baseline_schedules(cj, baselines).items():
        sch[k] = dict(base, **v)
    info = {"decisions": r["decisions"], "seconds": r["seconds"], "wide": split.wide,
            "updates": r.get("updates")}  # fmt: skip
    return sch, cj, info


def test_report(model: LoadedDRAS, trace=None, *, jobs=None, sample=False, online=None) -> str:
    """The §10 table (H2's report) of :func:`test_schedules`, with a header line."""
    from jaxsched.systems.dras.report import report

    sch, cj, info = test_schedules(model, trace, jobs=jobs, sample=sample, online=online)
    ups = info["updates"]
    learn = f"online adaptation: {ups} updates" if ups is not None else "fixed network"
    head = (f"{trace or model.run.trace}: test period {len(cj.submit)} jobs, N = {cj.num_nodes}; "
            f"model {model.path} (DRAS-{model.run.variant.upper()}, epoch {model.epoch}, "
            f"{'sampled' if sample else 'greedy'}, {learn}); {info['decisions']} decisions in "
            f"{info['seconds']:.1f} s")  # fmt: skip
    return head + "\n" + report(sch, N=cj.num_nodes)


#: the §8 baselines of the test-period tables, in their row order (FCFS + EASY first)
BASELINES = ("fcfs", "binpacking", "random", "optimization")


def checks(table: dict, names) -> dict:
    """Issue 17's three checks of the models ``names`` of a §10 table: ``below`` (average wait
    below FCFS + EASY's), ``max_ratio`` (maximum wait / FCFS + EASY's) and ``largest_area``
    (the largest Kiviat area of the table)."""
    f = table["fcfs"]
    top = max(t["kiviat_area"] for t in table.values())
    return {
        n: {
            "below": table[n]["avg_wait"] < f["avg_wait"],
            "max_ratio": table[n]["max_wait"] / f["max_wait"],
            "largest_area": table[n]["kiviat_area"] >= top,
        }
        for n in names
    }


def test_period_table(models, trace=None, *, jobs: int | None = None, period: str = "test",
                      sample: bool = False) -> dict:  # fmt: skip
    """Several models and the §8 baselines in one §10 table over the test period of ``trace``
    (default each model's own; spec §9: one continuous simulation, ``jobs``: its first K jobs;
    ``period="val"``: the validation month), so the Kiviat radii are normalised over all of
    them (§10).  ``models``: ``(label, LoadedDRAS, online)``, ``online`` PG's online
    adaptation during the test (None = the run's setting).  Returns ``table`` (the labels, then
    :data:`BASELINES`), ``checks`` (:func:`checks` of the labels), ``schedules`` (in the
    table's order), ``cj`` (the job list), ``head`` (a line per model) and ``period``."""
    from jaxsched.systems.dras.report import method_table

    labels = [label for label, _, _ in models]
    clash = sorted({x for x in labels if labels.count(x) > 1 or x in BASELINES})
    if clash:
        raise ConfigError(
            f"model label(s) {', '.join(map(repr, clash))} repeat(s) or name a baseline "
            f"({', '.join(BASELINES)}); give each model its own LABEL=NAME"
        )
    schedules, head, cj = {}, [], None
    for i, (name, model, online) in enumerate(models):
        base = BASELINES if i == 0 else ()
        sch, cj, info = test_schedules(model, trace, jobs=jobs or None, sample=sample,
                                       baselines=base, online=online, period=period)  # fmt: skip
        schedules[name] = sch.pop(f"dras-{model.run.variant}")
        schedules.update(sch)
        learn = "fixed" if info["updates"] is None else f"online, {info['updates']} updates"
        head.append(f"{name}: {model.path} (DRAS-{model.run.variant.upper()}, epoch {model.epoch}, "
                    f"{learn}; {info['seconds']:.1f} s)")  # fmt: skip
    order = [n for n in schedules if n not in BASELINES] + list(BASELINES)
    schedules = {n: schedules[n] for n in order}
    table = method_table(schedules, N=cj.num_nodes)
    return {"table": table, "checks": checks(table, labels), "schedules": schedules, "cj": cj,
            "head": head, "period": period}  # fmt: skip


def format_test_period(res: dict) -> str:
    """:func:`test_period_table`'s result as text: the period, a line per model, the §10 table
    (:func:`~jaxsched.systems.dras.report.format_table`), each method's average and maximum
    wait (s) and as a ratio to FCFS + EASY's, and the three checks per model."""
    from jaxsched.systems.dras.report import format_table

    table, cj = res["table"], res["cj"]
    what = "test period" if res["period"] == "test" else "validation month"
    lines = [f"{what}: {len(cj.submit)} jobs, N = {cj.num_nodes}"]
    lines += ["  " + h for h in res["head"]]
    lines.append(format_table(table))
    f = table["fcfs"]
    for n, t in table.items():
        lines.append(f"{n:<22} avg wait {t['avg_wait']:10.1f} s ({t['avg_wait'] / f['avg_wait']:.3f}x)  "
                     f"max wait {t['max_wait']:10.0f} s ({t['max_wait'] / f['max_wait']:.2f}x)  "
                     f"area {t['kiviat_area']:.3f}")  # fmt: skip
    for n, v in res["checks"].items():
        lines.append(f"{n}: average wait below FCFS + EASY's: {'yes' if v['below'] else 'no'}; "
                     f"maximum wait {v['max_ratio']:.2f}x FCFS + EASY's (target <= 1.5): "
                     f"{'yes' if v['max_ratio'] <= 1.5 else 'no'}; largest Kiviat area: "
                     f"{'yes' if v['largest_area'] else 'no'}")  # fmt: skip
    return "\n".join(lines)


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


def fcfs_max_wait(run_dir) -> float:
    """FCFS + EASY's maximum wait (s) on the validation month of the run ``run_dir``."""

    from jaxsched.systems.dras.config import resolve_trace

    run_dir = Path(run_dir)
    rc = RunConfig.from_dict(read_run_json(run_dir / "run.json", CheckpointError))
    cj = env_jobs(load_split(resolve_trace(rc.trace, run_dir)).val, rc.priority)
    start = baseline_schedules(cj, ["fcfs"])["fcfs"]["start"]
    return float(np.max(start - np.asarray(cj.submit)))


def selection_rule(run_dir, options: dict):
    """``jaxsched select``'s rule for DRAS runs: the lowest average wait on the validation month
    (``val_wait``) among the epochs whose maximum wait there is at most ``options["bound"]`` ×
    FCFS + EASY's (``--best-by bounded-wait``'s rule; runs that did not log ``val_max_wait``
    have no epoch within it). The bound is computed once per trace (the oracle on the
    validation month)."""
    from jaxsched.train.select import Rule

    k = float(options.get("bound", 1.5))
    limit = k * fcfs_max_wait(run_dir)
    hours = lambda r: (  # noqa: E731
        f" (max {r['val_max_wait'] / 3600:.2f} h)" if "val_max_wait" in r else ""
    )
    return Rule(
        key="val_wait",
        bound=lambda r: r.get("val_max_wait", float("inf")) <= limit,
        bound_text=f"maximum wait within {k:g} x FCFS + EASY's ({limit / 3600:.2f} h)",
        describe=lambda r: f"epoch {r['epoch']}: average wait {r['val_wait']:,.1f} s{hours(r)}",
    )
