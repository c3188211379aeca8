"""Schema ``splitwindow``: split-window deep back-filling episodes played by fixed
observation policies (``shared/reference/splitwindow/``; its README defines the rules)::

    {"trace": "lublin_256_new2.swf.gz", "loaded_jobs": 10000, "r_max": 116359,
     "n_cores": 256, "placements": 1000, "weights": [w1, w2, w3],
     "completions": "all",                  # optional ("all" | "each")
     "sigma": "remaining", "wait_norm": "queue", "overlap": "distinct",   # optional extensions
     "episodes": [{"config": "16-4", "m_head": 16, "m_tail": 4, "policy": "P1",
                   "start": 2915, "steps": 2979, ..., "reward_sum": -619.9}, ...],
     "summary": [{"config": ..., "policy": ..., "mean_<field>": ...}, ...],   # optional
     "debug_traces": [{"config", "policy", "start", "first_step",
                       "steps": [{"k", "t", "queue_len", "obs", "action", "reward", "done"}]}]}

Every episode row is replayed by :class:`~jaxsched.envs.splitwindow.SplitWindowEnv` in float64
with the policy of :func:`~jaxsched.envs.splitwindow.obs_policy` — one batched call per
(window, policy) — and each field present is compared: integer fields exactly, floats with
the tolerance. Summary means are recomputed from our episodes; each debug excerpt is replayed
from its ``first_step`` and its observations compared to an absolute 1e-12 (one value per
decision: the largest absolute difference, expected 0). Any trace, start, window and policy
P1..P4 may appear.
"""

from __future__ import annotations

import time

import numpy as np

from jaxsched.conformance.base import (
    FieldError,
    Mismatch,
    Report,
    TraceCache,
    find_trace,
    require,
    value_error,
)

NAME = "splitwindow"
DESCRIPTION = "split-window back-filling episodes of fixed policies (shared/reference/splitwindow)"

#: integer fields of an episode row (compared exactly)
INT_FIELDS = (
    "steps", "fwd", "invalid", "placements", "t0", "final_clock", "span", "arrived",
    "L_max", "W_max", "queue_at_end", "obs_free_mismatch",
)  # fmt: skip
FLOAT_FIELDS = (
    "reward_sum", "util", "avg_queue_len", "avg_wait", "avg_bsld", "mean_invisible",
    "partial_fraction", "job_load", "util_arrival_span", "avg_queue_len_arrival_span",
)  # fmt: skip
OBS_TOLERANCE = 1e-12
_OPTIONS = {"completions": "all", "sigma": "remaining", "wait_norm": "queue", "overlap": "distinct"}


def matches(doc) -> bool:
    """A JSON object tagged ``"schema": "splitwindow..."`` or with an ``episodes`` list whose
    first row has ``m_head`` and ``m_tail``."""
    if not isinstance(doc, dict):
        return False
    if isinstance(doc.get("schema"), str):
        return doc["schema"].startswith(NAME)
    eps = doc.get("episodes")
    return (
        isinstance(eps, list)
        and bool(eps)
        and isinstance(eps[0], dict)
        and "m_head" in eps[0]
        and "m_tail" in eps[0]
    )


def _episodes(doc) -> list[dict]:
    rows = require(doc, "episodes", list)
    if not rows:
        raise FieldError("episodes", "no episodes to check (empty list)")
    out = []
    for i, r in enumerate(rows):
        where = f"episodes[{i}]"
        if not isinstance(r, dict):
            raise FieldError(where, f"must be an object, got {r!r}"[:200])
        row = dict(r)
        row["m_head"] = require(r, "m_head", int, f"{where}.m_head", minimum=0)
        row["m_tail"] = require(r, "m_tail", int, f"{where}.m_tail", minimum=0)
        row["start"] = require(r, "start", int, f"{where}.start", minimum=0)
        row["policy"] = require(r, "policy", str, f"{where}.policy").strip().upper()
        if row["policy"] not in ("P1", "P2", "P3", "P4"):
            raise FieldError(f"{where}.policy", f"unknown policy {r['policy']!r} (P1..P4)")
        if row["m_head"] + row["m_tail"] < 1:
            raise FieldError(f"{where}.m_head", "the window has no slot")
        out.append(row)
    return out


def _options(doc) -> dict:
    opts = {}
    for k, default in _OPTIONS.items():
        opts[k] = require(doc, k, str) if k in doc else default
    opts["placements"] = require(doc, "placements", int, minimum=1) if "placements" in doc else 1000
    w = doc.get("weights", [1 / 3, 1 / 3, 1 / 3])
    if not (isinstance(w, list) and len(w) == 3 and all(isinstance(x, (int, float)) for x in w)):
        raise FieldError("weights", f"must be three numbers, got {w!r}"[:200])
    opts["weights"] = tuple(float(x) for x in w)
    return opts


def _make_env(jobs, head, tail, opts):
    from jaxsched.envs.splitwindow import SplitWindowEnv
    from jaxsched.errors import ConfigError

    try:
        return SplitWindowEnv(jobs, head, tail, margin=0, dtype="float64", **opts)
    except ConfigError as e:
        raise FieldError(None, str(e)) from e


_JIT: dict = {}


def _compiled(name):
    """The jitted replay functions, made once per process (the environment is an argument, so
    files with the same window and trace length share the compiled code)."""
    if not _JIT:
        import jax

        from jaxsched.envs.splitwindow import obs_policy, record_steps, run_episodes

        def run(env, starts, codes):
            h, t, n = env.cfg.head, env.cfg.tail, env.cfg.n_cores
            return run_episodes(env, starts, lambda _, o, a: obs_policy(o.obs, a, h, t, n), codes)

        def rec(env, start, first, code, n_steps):
            h, t, n = env.cfg.head, env.cfg.tail, env.cfg.n_cores
            act = lambda _, o: obs_policy(o.obs, code, h, t, n)  # noqa: E731
            return record_steps(env, start, act, first, n_steps)

        _JIT["run"] = jax.jit(run)
        _JIT["rec"] = jax.jit(rec, static_argnums=4)
    return _JIT[name]


def _replay(env, starts, policies):
    """Metrics of our episodes (host numpy, ``[B]`` each): one compiled call per window."""
    import jax

    from jaxsched.envs.splitwindow import POLICIES
    from jaxsched.sim.cores import check_overflow

    codes = np.asarray([POLICIES.index(p) for p in policies], np.int32)
    out = _compiled("run")(env, np.asarray(starts, np.int32), codes)
    out = jax.tree_util.tree_map(np.asarray, out)
    check_overflow(out["overflow"], env.cfg.queue_cap)
    return out


def _compare_episode(report, i, row, got, tolerance):
    key = {k: row[k] for k in ("config", "policy", "start") if k in row}
    for f in INT_FIELDS + FLOAT_FIELDS + ("truncated",):
        if f not in row:
            continue
        mine = got[f].item()
        mine = int(mine) if f in INT_FIELDS else mine
        exp = row[f]
        if f == "truncated":
            exp, mine = int(bool(exp)), int(bool(mine))
        tol = 0.0 if f in INT_FIELDS or f == "truncated" else tolerance
        report.add(f"episodes[{i}]", {**key, "field": f}, exp, mine, tol)


def _check_summary(report, doc, rows, results, tolerance):
    for i, srow in enumerate(doc.get("summary") or []):
        if not isinstance(srow, dict):
            raise FieldError(f"summary[{i}]", "must be an object")
        mine = [
            results[j]
            for j, r in enumerate(rows)
            if r.get("config") == srow.get("config") and r["policy"] == srow.get("policy", "")
        ]
        for f, exp in srow.items():
            if not f.startswith("mean_") or not mine or f[5:] not in mine[0]:
                continue
            got = float(np.mean([float(m[f[5:]]) for m in mine]))
            key = {"config": srow.get("config"), "policy": srow.get("policy"), "field": f}
            report.add(f"summary[{i}]", key, exp, got, tolerance)


def _debug_rows(doc) -> list:
    out = []
    for i, tr in enumerate(doc.get("debug_traces") or []):
        where = f"debug_traces[{i}]"
        if not isinstance(tr, dict):
            raise FieldError(where, "must be an object")
        config = require(tr, "config", str, f"{where}.config")
        try:
            head, tail = (int(x) for x in config.split("-"))
        except ValueError:
            raise FieldError(f"{where}.config", f"must be 'M_h-M_t', got {config!r}") from None
        policy = require(tr, "policy", str, f"{where}.policy").strip().upper()
        if policy not in ("P1", "P2", "P3", "P4"):
            raise FieldError(f"{where}.policy", f"unknown policy {policy!r} (P1..P4)")
        start = require(tr, "start", int, f"{where}.start", minimum=0)
        first = require(tr, "first_step", int, f"{where}.first_step", minimum=0)
        steps = require(tr, "steps", list, f"{where}.steps")
        out.append((where, config, head, tail, policy, start, first, steps))
    return out


def _check_debug(report, doc, jobs, opts, tolerance):
    """Replay each debug excerpt: one compiled call per window (excerpts padded to the
    longest)."""
    import jax

    from jaxsched.envs.splitwindow import POLICIES

    rows = [r for r in _debug_rows(doc) if r[7]]
    n_max = max((len(r[7]) for r in rows), default=0)
    envs: dict = {}
    for where, config, head, tail, policy, start, first, steps in rows:
        if (head, tail) not in envs:
            envs[(head, tail)] = _make_env(jobs, head, tail, opts)
        code = np.int32(POLICIES.index(policy))
        got = _compiled("rec")(envs[(head, tail)], np.int32(start), np.int32(first), code, n_max)
        got = jax.tree_util.tree_map(np.asarray, got)
        report.evaluations += 1
        _compare_debug(report, where, (config, policy, start), steps, got, tolerance)


def _compare_debug(report, where, ident, steps, rec, tolerance):
    config, policy, start = ident
    for k, st in enumerate(steps):
        if not isinstance(st, dict):
            raise FieldError(f"{where}.steps[{k}]", "must be an object")
        w = f"{where}.steps[{k}]"
        key = {"config": config, "policy": policy, "start": start, "k": st.get("k")}
        for f in ("k", "t", "queue_len", "action", "done"):
            if f in st:
                report.add(w, {**key, "field": f}, int(st[f]), int(rec[f][k]), 0.0)
        if "reward" in st:
            report.add(w, {**key, "field": "reward"}, st["reward"], float(rec["reward"][k]),
                       tolerance)  # fmt: skip
        if "obs" in st:
            exp = np.asarray(st["obs"], np.float64)
            mine = rec["obs"][k]
            d = float(np.abs(exp - mine).max()) if exp.shape == mine.shape else np.inf
            report.add(w, {**key, "field": "obs max |diff|"}, 0.0, d, OBS_TOLERANCE)


def _file_checks(report, doc, jobs):
    checks = [("loaded_jobs", jobs.n_jobs), ("r_max", int(np.max(jobs.run)))]
    checks.append(("n_cores", int(jobs.num_nodes)))
    for f, mine in checks:
        if f in doc:
            exp = require(doc, f, int)
            if exp != mine:
                report.mismatches.append(Mismatch(f, {}, exp, mine, value_error(exp, mine)))


def check(doc, traces_dir, *, tolerance: float, traces: TraceCache | None = None) -> Report:
    """Replay every episode, summary mean and debug excerpt of ``doc`` (module docstring)."""
    t0 = time.perf_counter()
    trace_name = require(doc, "trace", str)
    rows = _episodes(doc)
    opts = _options(doc)
    path = find_trace(trace_name, traces_dir)
    jobs = (traces or TraceCache())(path, "rlscheduler")
    report = Report(file="", schema=NAME, trace=path.name)
    _file_checks(report, doc, jobs)
    for i, r in enumerate(rows):
        if r["start"] + 1 >= jobs.n_jobs:
            raise FieldError(f"episodes[{i}].start", f"past the {jobs.n_jobs} jobs loaded")
    groups: dict = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["m_head"], r["m_tail"]), []).append(i)
    results: list = [None] * len(rows)
    for (head, tail), idx in groups.items():
        env = _make_env(jobs, head, tail, opts)
        got = _replay(env, [rows[i]["start"] for i in idx], [rows[i]["policy"] for i in idx])
        report.evaluations += 1
        for b, i in enumerate(idx):
            results[i] = {k: v[b] for k, v in got.items()}
            _compare_episode(report, i, rows[i], results[i], tolerance)
    _check_summary(report, doc, rows, results, tolerance)
    _check_debug(report, doc, jobs, opts, tolerance)
    report.seconds = time.perf_counter() - t0
    return report
