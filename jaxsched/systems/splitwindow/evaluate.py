"""Split-window DBF evaluation: the greedy policy's §8 metrics on fixed episodes, FCFS + EASY's
utilisation (the bound of ``--max-util-loss``), and :func:`report`, the model beside the
back-filling heuristics on episodes of any trace (``jaxsched evaluate TRACE --model NAME``)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs.splitwindow import SplitWindowEnv, run_episodes

__all__ = ["eval_starts", "greedy_metrics", "fcfs_easy_util", "report"]


def eval_starts(env: SplitWindowEnv, n: int, seed: int) -> np.ndarray:
    """The fixed evaluation episodes: ``n`` starts drawn with ``RandomState(seed)`` from the
    environment's start range."""
    return np.random.RandomState(seed).randint(0, env.cfg.sample_high + 1, size=n).astype(np.int32)


@functools.lru_cache(maxsize=8)
def _greedy_fn(actor):
    """``jit((env, params, starts) -> metrics)`` of the greedy policy, one per actor module
    (so repeated validations reuse the compiled code)."""

    def run(env, params, starts):
        def act(_, o, __):
            logits = actor.apply(params, o.obs)
            return jnp.argmax(jnp.where(o.mask, logits, -jnp.inf)).astype(jnp.int32)

        return run_episodes(env, starts, act)

    return jax.jit(run)


def greedy_metrics(env: SplitWindowEnv, actor, params, starts) -> dict:
    """§8 metrics (host arrays ``[B]``) of the greedy (argmax) policy on ``starts``."""
    out = _greedy_fn(actor)(env, params, jnp.asarray(starts, jnp.int32))
    return jax.tree_util.tree_map(np.asarray, out)


def fcfs_easy_util(env: SplitWindowEnv, starts) -> float:
    """FCFS + EASY's mean utilisation (§8, over each episode's span) on the episodes
    ``starts``: the reference of ``--max-util-loss``."""
    from jaxsched.envs.splitwindow_baselines import run_baselines

    return float(np.mean(run_baselines(env, starts, ("fcfs",), ("easy",))["util"][0]))


#: the heuristics a model is compared with in :func:`report`: the back-filling baselines of
#: the paper's Fig. 4 that lead on wait (SJF) and on utilisation (FCFS)
REPORT_BASELINES = ("fcfs", "sjf")
#: the metrics of :func:`report`'s table: (key of the §8 metrics, label, scale)
REPORT_METRICS = (("avg_wait", "wait (s)", 1.0), ("util", "util (%)", 100.0),
                  ("avg_bsld", "bsld", 1.0))  # fmt: skip


def _mean_se(x) -> str:
    from jaxsched.sim.evaluate import standard_error

    x = np.asarray(x, np.float64)
    se = standard_error(x) if x.size > 1 else 0.0
    return f"{x.mean():,.2f} ± {se:,.2f}"


def report(model, trace, *, sample: bool = False, episodes: int = 20, seed: int = 1) -> str:
    """A trained split-window model (greedy) beside FCFS and SJF with EASY back-filling on
    ``episodes`` episodes of ``trace`` (starts ``RandomState(seed)`` over the environment's
    start range, as ``benchmarks/speed/splitwindow_env.py`` draws them), in the model's own window
    and options: mean ± standard error of average wait, utilisation and bsld, then the model's
    paired difference to each heuristic. ``sample`` is refused (the agents are evaluated
    greedily). Returns the text."""
    from jaxsched.envs.splitwindow_baselines import run_baselines
    from jaxsched.errors import ConfigError
    from jaxsched.nets.splitwindow import SWActor
    from jaxsched.systems.splitwindow.config import make_env
    from jaxsched.systems.splitwindow.run import check_obs_dim
    from jaxsched.workload import read_swf

    if sample:
        raise ConfigError(f"{model.path}: split-window models are evaluated greedily (no --sample)")
    env = make_env(read_swf(trace).jobs("rlscheduler"), model.run)
    check_obs_dim(model, env)
    starts = eval_starts(env, episodes, seed)
    actor = SWActor(env.num_actions, tuple(model.run.hidden), model.run.activation)
    mine = greedy_metrics(env, actor, model.params, starts)
    base = run_baselines(env, starts, REPORT_BASELINES, ("easy",))
    name = f"DBF {model.run.head}-{model.run.tail} (epoch {model.epoch})"
    rows = [(name, mine)] + [
        (f"{p} + easy", {k: base[k][i] for k in base}) for i, p in enumerate(REPORT_BASELINES)
    ]
    width = max(len(n) for n, _ in rows) + 2
    head = "".join(f"{label:>24s}" for _, label, _ in REPORT_METRICS)
    lines = [f"{trace}: {episodes} episodes of {env.cfg.placements} placements (seed {seed}), "
             f"window {model.run.head}-{model.run.tail}", f"{'':{width}s}{head}"]  # fmt: skip
    for n, m in rows:
        cells = "".join(f"{_mean_se(np.asarray(m[k]) * s):>24s}" for k, _, s in REPORT_METRICS)
        lines.append(f"{n:{width}s}{cells}")
    lines.append("paired difference, model minus heuristic on the same episodes:")
    for n, m in rows[1:]:
        cells = "".join(
            f"{_mean_se((np.asarray(mine[k]) - np.asarray(m[k])) * s):>24s}"
            for k, _, s in REPORT_METRICS
        )
        lines.append(f"{'- ' + n:{width}s}{cells}")
    return "\n".join(lines)


def selection_rule(run_dir, options: dict):
    """``jaxsched select``'s rule for split-window runs: the lowest greedy validation average
    wait among the epochs at most ``options["max_util_loss"]`` points of utilisation below FCFS
    + EASY's on the same episodes (logged by ``train splitwindow --max-util-loss``; a run that
    did not log it has no epoch within the bound)."""
    from jaxsched.train.select import Rule

    p = float(options.get("max_util_loss", 1.0))

    def gap(r):
        ref = r.get("val_util_fcfs_easy")
        return None if ref is None else 100.0 * (ref - r["val_util"])

    def describe(r):
        below = "" if gap(r) is None else f", {gap(r):+.2f} points below FCFS + EASY"
        return (
            f"epoch {r['epoch']}: wait {r['val_avg_wait']:,.0f} s, util {r['val_util']:.4f}{below}"
        )

    return Rule(
        key="val_avg_wait",
        bound=lambda r: gap(r) is not None and gap(r) <= p,
        bound_text=f"within {p:g} point(s) of FCFS + EASY's utilisation",
        describe=describe,
        comparable=lambda r: r.get("val_util_fcfs_easy", 0.0),
    )
