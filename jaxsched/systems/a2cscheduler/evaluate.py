"""The learned policy next to the baselines on the same fixed job sequences (spec §8, §10).

Sequences are the environment's evaluation jobsets ``init_state_at(0 … n−1)``; each policy
runs them to the end (or the step cap) and is scored over its finished jobs: mean slowdown,
completion time and waiting time per sequence (and the jobs left unallocated when the step
cap cut the episode), then mean ± standard error over sequences.

The learned policy's actions are decoded from its distribution in one of three ways
(:data:`DECODES`; the paper does not say which it tested with, DeepRM samples):
``greedy`` takes the most probable action; ``sampled`` draws from the distribution;
``two_level`` first decides between the void action and allocating *some* job by their total
probabilities (void only if it is at least as probable as all jobs together), then allocates
the most probable job. With the cluster idle and no more arrivals the image no longer changes
when void is taken, so ``greedy`` repeats void for ever wherever the job probabilities are
split so that void is the single most probable action although allocating is the more
probable decision; ``two_level`` does not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.nets import categorical
from jaxsched.sim.datacenter import baselines
from jaxsched.sim.evaluate import standard_error

__all__ = [
    "BASELINES",
    "DECODES",
    "decode_action",
    "policy_metrics",
    "baseline_metrics",
    "per_sequence",
    "summarise",
    "evaluate",
    "paired",
    "format_table",
    "format_paired",
    "comparison_text",
    "trace_report",
]

#: table name -> baseline policy of :mod:`jaxsched.sim.datacenter.baselines`
BASELINES = {
    "Random": "greedy_random",
    "Random(DeepRM)": "random_uniform",
    "Tetris": "tetris",
    "SJF": "sjf",
}
#: per-sequence metrics (:func:`jaxsched.sim.datacenter.baselines.job_metrics`): means over
#: finished (allocated) jobs (DeepRM scores finished jobs only), the jobs left unallocated
#: when the episode was cut by the step cap, and ``slowdown_all`` over all jobs, an
#: unallocated one counted as if it had started when the episode ended
_METRICS = ("slowdown", "completion", "waiting", "unfinished", "slowdown_all")


#: the ways to turn the actor's distribution into an action (module docstring)
DECODES = ("greedy", "two_level", "sampled")


def decode_action(logits, key, decode: str = "greedy") -> jax.Array:
    """One action (int32 scalar) from ``logits`` float ``[N + 1]`` (the last is void), by
    ``decode`` (:data:`DECODES`); ``key`` is used by ``sampled`` only."""
    if decode == "sampled":
        return jax.random.categorical(key, logits).astype(jnp.int32)
    if decode == "greedy":
        return categorical.argmax(logits)
    if decode != "two_level":
        raise ValueError(f"decode must be one of {', '.join(DECODES)}, got {decode!r}")
    p = jax.nn.softmax(logits)
    void = logits.shape[-1] - 1
    best_job = categorical.argmax(logits[:void])
    return jnp.where(p[void] >= jnp.sum(p[:void]), jnp.int32(void), best_job)


def _jobsets(env, n: int):
    """The ``n`` fixed jobsets' lengths and demands (int32), compiled (run eagerly, each of
    the jobset generator's primitives would compile on its own: 70-odd small programs)."""
    starts = jnp.arange(n, dtype=jnp.int32)
    s = jax.jit(jax.vmap(env.init_state_at))(starts)
    return s.lens, s.dems


def policy_metrics(env, actor_apply, params, n: int, *, decode: str = "greedy", seed: int = 0):
    """Per-sequence metrics (numpy float64 ``[n]`` each, :data:`_METRICS`) of the actor on
    ``n`` jobsets, its actions decoded by ``decode`` (:func:`decode_action`)."""
    T = env.params.step_cap or 10 * env.params.simu_len

    def one(start, key):
        s = env.init_state_at(start)

        def body(s, k):
            obs = env.observe(s)
            a = decode_action(actor_apply(params, obs.image, obs.mask), k, decode)
            return env.transition(s, a)[0], None

        s, _ = jax.lax.scan(body, s, jax.random.split(key, T))
        return _metrics(s)

    keys = jax.random.split(jax.random.PRNGKey(seed), n)
    m = jax.jit(jax.vmap(one))(jnp.arange(n, dtype=jnp.int32), keys)
    return {k: np.asarray(m[k], np.float64) for k in _METRICS}


def baseline_metrics(env, policies, n: int, *, knob: float = 1.0, seed: int = 0) -> list:
    """Per-sequence metrics of each baseline policy (names of
    :data:`jaxsched.sim.datacenter.baselines.POLICIES`) on the same ``n`` jobsets, in one
    compiled call."""
    p = env.params
    T = p.step_cap or 10 * p.simu_len

    def one(code, lens, dems, key):
        acts = jnp.zeros((T,), jnp.int32)
        s, _ = baselines.rollout(p, lens, dems, code, knob, acts, 0, key, T)
        return _metrics(s)

    lens, dems = _jobsets(env, n)
    keys = jax.random.split(jax.random.PRNGKey(seed), n)
    codes = jnp.asarray([baselines.policy_code(x) for x in policies], jnp.int32)
    per_seq = jax.vmap(one, in_axes=(None, 0, 0, 0))
    m = jax.jit(jax.vmap(per_seq, in_axes=(0, None, None, None)))(codes, lens, dems, keys)
    return [{k: np.asarray(v[i], np.float64) for k, v in m.items()} for i in range(len(policies))]


def _metrics(s) -> dict:
    m = baselines.job_metrics(s)
    return {k: m[k] for k in _METRICS}


def per_sequence(env, n: int, actor_apply=None, params=None, name: str = "A2C") -> dict:
    """``{policy name: {metric: numpy float64 [n]}}`` for the baselines (and the learned actor,
    greedy) on the same ``n`` jobsets."""
    rows = dict(zip(BASELINES, baseline_metrics(env, list(BASELINES.values()), n)))
    if actor_apply is not None:
        rows[name] = policy_metrics(env, actor_apply, params, n)
    return rows


def _mean_se(v) -> tuple[float, float]:
    """Mean and standard error over the finite values (NaN: a sequence with no finished job)."""
    v = np.asarray(v, np.float64)
    v = v[np.isfinite(v)]
    return (float(np.mean(v)) if len(v) else float("nan"), standard_error(v))


def summarise(rows: dict) -> dict:
    """``{policy name: {metric: (mean, sem)}}`` over the sequences of :func:`per_sequence`."""
    return {pol: {k: _mean_se(v) for k, v in m.items()} for pol, m in rows.items()}


def evaluate(env, n: int, actor_apply=None, params=None, name: str = "A2C") -> dict:
    """``{policy name: {metric: (mean, sem)}}`` for the baselines (and the learned actor)."""
    return summarise(per_sequence(env, n, actor_apply, params, name))


def paired(rows: dict, name: str = "A2C", metric: str = "slowdown") -> dict:
    """``{baseline: (mean, sem)}`` of the per-sequence difference ``name − baseline`` of
    ``metric`` (negative: the learned policy is better), over the sequences where both are
    finite."""
    mine = np.asarray(rows[name][metric], np.float64)
    return {b: _mean_se(mine - np.asarray(rows[b][metric], np.float64)) for b in BASELINES}


def format_paired(diffs: dict, name: str = "A2C", metric: str = "slowdown") -> str:
    """One line per baseline: ``A2C − SJF  slowdown  −0.123 ± 0.045``."""
    return "\n".join(
        f"{name} − {b:<15}{metric}  {m:+.3f} ± {se:.3f}" for b, (m, se) in diffs.items()
    )


def format_table(res: dict) -> str:
    """A text table: one row per metric, one column per policy (mean ± sem)."""
    pols = list(res)
    head = f"{'metric':<12}" + "".join(f"{p:>20}" for p in pols)
    lines = [head]
    for k in _METRICS:
        cells = "".join(f"{res[p][k][0]:>12.3f} ± {res[p][k][1]:<5.3f}" for p in pols)
        lines.append(f"{k:<12}{cells}")
    return "\n".join(lines)


def comparison_text(model, env, rc, decodes=()) -> str:
    """The trained ``model`` (:class:`~jaxsched.systems.a2cscheduler.run.LoadedA2C`) greedy
    (and by each of ``decodes``) next to the baselines on the first ``rc.eval_sequences``
    evaluation jobsets of ``env`` (built from ``rc``, a
    :class:`~jaxsched.systems.a2cscheduler.config.RunConfig`: e.g. the model's own with
    another seed or trace): the table and the paired differences, as text."""
    n = rc.eval_sequences
    rows = per_sequence(env, n, model.actor_apply, model.params)
    names = ["A2C"]
    for decode in decodes:
        names.append(f"A2C {decode.replace('_', '-')}")
        rows[names[-1]] = policy_metrics(env, model.actor_apply, model.params, n, decode=decode)
    lines = [f"{model.path} (epoch {model.epoch}): {rc.describe_jobsets()}, A2C greedy",
             format_table(summarise(rows)),
             "paired differences over the same jobsets (mean ± standard error):"]  # fmt: skip
    for name in names:
        for metric in ("slowdown", "slowdown_all"):
            lines.append(format_paired(paired(rows, name, metric), name, metric))
    return "\n".join(lines)


def trace_report(model, trace, *, sample: bool = False, sequences: int = 100) -> str:
    """``jaxsched evaluate TRACE --model DIR``: how ``trace`` was cut (with the model's
    ``trace_jobs`` and ``trace_unit``, whatever it was trained on: a model of generated
    jobsets is then tested on a real trace), then the model on the test part of its slices
    (:data:`~jaxsched.systems.a2cscheduler.config.TRACE_PARTS`; the first ``sequences``, or
    all if fewer)."""
    import dataclasses

    from jaxsched.systems.a2cscheduler.config import build_env, trace_slices_of

    rc = dataclasses.replace(model.run, trace=str(trace), trace_eval="test")
    sl = trace_slices_of(rc)
    env = build_env(rc, sl)
    rc = dataclasses.replace(rc, eval_sequences=min(sequences, len(env.eval_jobsets)))
    text = comparison_text(model, env, rc, ("sampled",) if sample else ())
    return f"{trace}: {sl.summary()}\n{text}"


def selection_rule(run_dir, options: dict):
    """``jaxsched select``'s rule for A2cScheduler runs: the epoch with the lowest mean
    slowdown of the greedy policy on the run's validation jobsets (``eval_slowdown``,
    ``--validate-every``). No bound."""
    from jaxsched.train.select import Rule

    return Rule(
        key="eval_slowdown",
        describe=lambda r: f"epoch {r['epoch']}: validation slowdown {r['eval_slowdown']:.4f}",
    )
