"""Schema ``schedinspector-runs``: base-scheduler runs and inspector runs of SchedInspector's
reference environment (``shared/reference/schedinspector/*.json``, see its README)::

    {"trace": "lublin_256_new2.swf", "loaded_jobs": 10000, "jobs_per_sequence": 256,
     "schema": "schedinspector-runs",           # optional tag
     "protocol": {"rules": {                    # the observation rules the rows name
         "R1": {"reject_iff_all": [{"feature": 4, "op": "<", "threshold": 0.5}, ...]},
         ...}, ...},
     "results": [
        {"start": 168, "jobs": 256, "base": "sjf", "backfill": "none",
         "inspector": "R1", "metric": "bsld", "value": 153.3, "decisions": 429,
         "rejections": 173}, ...]}

Each row: jobs ``start … start+jobs−1`` of the trace parsed with SchedInspector's rules
(:func:`jaxsched.workload.schedinspector.inspector_jobs`, compat mode), base scheduler
``base`` (a name or ``sched_algo`` index of :data:`jaxsched.policies.inspector_bases.BASES`),
``backfill`` ``none``/``rlscheduler``, and ``inspector``: ``base-run`` (the base alone; no
decisions), ``accept-all``, or a rule of ``protocol.rules``: reject (1) iff every condition
``obs[feature] <op> threshold`` holds on the float64 observation (``op`` one of ``< > <= >=``),
with the evaluation mask (a job rejected 72 times is accepted). ``metric``: ``bsld``,
``wait``, ``util`` (positive) or ``mbsld``. ``decisions`` and ``rejections`` are compared
exactly, ``value`` with the tolerance.

Rows are grouped by (length, base, backfill); each group is one vmapped device call over its
(start, inspector) pairs, compiled once per length and batch bucket.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.conformance.base import FieldError, Mismatch, Report, find_trace, require, value_error
from jaxsched.errors import ConfigError

NAME = "schedinspector-runs"
DESCRIPTION = "SchedInspector base runs and inspector rule runs (shared/reference/schedinspector)"
_OPS = {"<": 0, ">": 1, "<=": 2, ">=": 3}
_BUILTIN = ("base-run", "accept-all")
_METRICS = ("bsld", "wait", "util", "mbsld")


def matches(doc) -> bool:
    """A tag starting with ``schedinspector``, or a ``results`` list whose rows name an
    ``inspector``."""
    if not isinstance(doc, dict):
        return False
    tag = doc.get("schema")
    if isinstance(tag, str):
        return tag.startswith("schedinspector")
    rows = doc.get("results")
    return (
        isinstance(rows, list)
        and bool(rows)
        and isinstance(rows[0], dict)
        and ("inspector" in rows[0])
    )


def _rules(doc) -> dict:
    """``{name: [(feature, op code, threshold), ...]}`` from ``protocol.rules`` (``accept-all``
    = no rejection ever, ``None``)."""
    proto = doc.get("protocol", {})
    raw = proto.get("rules", {}) if isinstance(proto, dict) else {}
    if not isinstance(raw, dict):
        raise FieldError("protocol.rules", "must be an object of rule definitions")
    out = {"accept-all": None}
    for name, r in raw.items():
        if name in _BUILTIN:
            continue
        where = f"protocol.rules.{name}"
        conds = (
            require(r, "reject_iff_all", list, f"{where}.reject_iff_all")
            if isinstance(r, dict)
            else None
        )
        if conds is None or not conds:
            raise FieldError(where, "needs a non-empty 'reject_iff_all' list")
        parsed = []
        for k, c in enumerate(conds):
            w = f"{where}.reject_iff_all[{k}]"
            if not isinstance(c, dict):
                raise FieldError(w, "must be an object")
            f = require(c, "feature", int, f"{w}.feature", minimum=0)
            op = require(c, "op", str, f"{w}.op").strip()
            if op not in _OPS:
                raise FieldError(f"{w}.op", f"must be one of {' '.join(_OPS)}, got {op!r}")
            parsed.append((f, _OPS[op], float(require(c, "threshold", float, f"{w}.threshold"))))
        out[name] = parsed
    return out


def _rows(doc, rules) -> list[dict]:
    from jaxsched.policies.inspector_bases import base_code

    default_len = doc.get("jobs_per_sequence")
    rows = require(doc, "results", list)
    if not rows:
        raise FieldError("results", "no values to check (empty list)")
    out = []
    for i, r in enumerate(rows):
        w = f"results[{i}]"
        if not isinstance(r, dict):
            raise FieldError(w, "must be an object")
        if "jobs" not in r and isinstance(default_len, int):
            r = {**r, "jobs": default_len}
        row = {
            "start": require(r, "start", int, f"{w}.start", minimum=0),
            "jobs": require(r, "jobs", int, f"{w}.jobs", minimum=1),
            "base": r.get("base"),
            "backfill": require(r, "backfill", str, f"{w}.backfill").strip().lower(),
            "inspector": require(r, "inspector", str, f"{w}.inspector").strip(),
            "metric": require(r, "metric", str, f"{w}.metric").strip(),
            "value": require(r, "value", float, f"{w}.value"),
            "decisions": r.get("decisions"),
            "rejections": r.get("rejections"),
        }
        try:
            row["code"] = base_code(row["base"])
        except ConfigError as e:
            raise FieldError(f"{w}.base", str(e)) from None
        if row["backfill"] not in ("none", "rlscheduler"):
            raise FieldError(f"{w}.backfill", f"must be none or rlscheduler, got {r['backfill']!r}")
        if row["metric"] not in _METRICS:
            raise FieldError(f"{w}.metric", f"must be one of {', '.join(_METRICS)}")
        if row["inspector"] != "base-run" and row["inspector"] not in rules:
            raise FieldError(
                f"{w}.inspector", f"{row['inspector']!r} is not a rule of protocol.rules"
            )
        out.append(row)
    return out


def _rule_arrays(names, rules):
    """Padded rule tables for the names (``[n, K]`` features, ops, thresholds, used)."""
    K = max([1] + [len(rules[n] or []) for n in names])
    n = len(names)
    feat = np.zeros((n, K), np.int32)
    op = np.zeros((n, K), np.int32)
    th = np.zeros((n, K), np.float64)
    used = np.zeros((n, K), bool)
    never = np.zeros(n, bool)
    for i, name in enumerate(names):
        conds = rules[name]
        never[i] = conds is None
        for k, (f, o, t) in enumerate(conds or []):
            feat[i, k], op[i, k], th[i, k], used[i, k] = f, o, t, True
    return feat, op, th, used, never


def _rule_action(obs, feat, op, th, used, never):
    """int32 action of one rule on a float64 observation."""
    x = obs[jnp.clip(feat, 0, obs.shape[0] - 1)]
    hold = jnp.select([op == 0, op == 1, op == 2], [x < th, x > th, x <= th], x >= th)
    return (jnp.all(hold | ~used) & ~never).astype(jnp.int32)


@jax.jit
def _replay(env, starts, feat, op, th, used, never):
    """Run every (start, rule) row to the end; base and inspected values, counts."""

    def one(start, f, o, t, u, nv):
        st, _ = env.reset_at(start)

        def body(s):
            return env.step(s, _rule_action(env.features64(s), f, o, t, u, nv))[0]

        st = jax.lax.while_loop(lambda s: ~s.sim.done, body, st)
        return env.inspected_values(st), env.base_values(st), st.decisions, st.rejections

    return jax.vmap(one)(starts, feat, op, th, used, never)


def _bucket(n: int) -> int:
    b = 8
    while b < n:
        b *= 2
    return b


def _run_group(env, pairs, rules):
    """Values per (start, inspector) of one (length, base, backfill) group."""
    names = [p[1] for p in pairs]
    feat, op, th, used, never = _rule_arrays(names, rules)
    n, B = len(pairs), _bucket(len(pairs))
    pad = lambda a: np.concatenate([a, np.repeat(a[-1:], B - n, axis=0)])  # noqa: E731
    starts = pad(np.asarray([p[0] for p in pairs], np.int32))
    out = _replay(
        env, jnp.asarray(starts), *(jnp.asarray(pad(a)) for a in (feat, op, th, used, never))
    )
    ins, base, dec, rej = jax.device_get(out)
    res = {}
    for i, (s, name) in enumerate(pairs):
        res[(s, name)] = ({k: float(v[i]) for k, v in ins.items()}, int(dec[i]), int(rej[i]))
        res[(s, "base-run")] = ({k: float(v[i]) for k, v in base.items()}, None, None)
    return res


def check(doc, traces_dir, *, tolerance: float, traces=None) -> Report:
    """Replay every row of ``doc``; see the module docstring."""
    from jaxsched.envs.schedinspector import SchedInspectorEnv
    from jaxsched.workload import read_swf
    from jaxsched.workload.schedinspector import inspector_jobs

    t0 = time.perf_counter()
    trace_name = require(doc, "trace", str)
    rules = _rules(doc)
    rows = _rows(doc, rules)
    path = find_trace(trace_name, traces_dir)
    jobs, wait = inspector_jobs(read_swf(path), "compat")
    report = Report(file="", schema=NAME, trace=path.name)
    if "loaded_jobs" in doc:
        loaded = require(doc, "loaded_jobs", int, minimum=0)
        if loaded != jobs.n_jobs:
            err = value_error(loaded, jobs.n_jobs)
            report.mismatches.append(Mismatch("loaded_jobs", {}, loaded, jobs.n_jobs, err))
    for i, r in enumerate(rows):
        if r["start"] + r["jobs"] > jobs.n_jobs:
            raise FieldError(f"results[{i}].start", f"runs past the {jobs.n_jobs} loaded jobs")
    groups: dict = {}
    for r in rows:
        g = groups.setdefault((r["jobs"], r["code"], r["backfill"]), {})
        name = "accept-all" if r["inspector"] == "base-run" else r["inspector"]
        g[(r["start"], name)] = None
    got = {}
    for (length, code, bf), pairs in groups.items():
        env = SchedInspectorEnv(
            jobs, base=code, length=length, backfill=bf, job_slice=0, swf_wait=wait
        )
        res = _run_group(env, list(pairs), rules)
        report.evaluations += 1
        for (s, name), v in res.items():
            got[(length, code, bf, s, name)] = v
    for i, r in enumerate(rows):
        vals, dec, rej = got[(r["jobs"], r["code"], r["backfill"], r["start"], r["inspector"])]
        key = {k: r[k] for k in ("start", "jobs", "base", "backfill", "inspector", "metric")}
        report.add(f"results[{i}]", key, r["value"], vals[r["metric"]], tolerance)
        for field, have in (("decisions", dec), ("rejections", rej)):
            if r[field] is not None:
                report.add(f"results[{i}].{field}", key, r[field], have, 0.0)
    report.seconds = time.perf_counter() - t0
    return report
