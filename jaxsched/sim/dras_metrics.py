"""DRAS's evaluation of spec ``dras.md`` §10 on the host (numpy, float64): per-schedule metrics,
the job-class shares of Table IV, the Kiviat normalisation of Fig. 6 and the weekly series of
Fig. 9.

A *schedule* is int arrays ``[L]`` of one continuous simulation: ``submit``, ``run`` (actual,
after the cut to the estimate), ``nodes``, ``start`` and (optionally) ``cls`` (the oracle's
classes: 0 backfilled, 1 ready, 2 reserved), on a machine of ``N`` nodes.

Metrics (:func:`schedule_metrics`), all over the L jobs:

* ``avg_wait`` / ``max_wait``: wait = start − submit (s);
* ``avg_response`` / ``max_response``: response (turnaround) = start + run − submit (s);
* ``avg_slowdown``: response / run, unbounded (no 10-s floor; run > 0 is required);
* ``util``: Σ n·run / (N · (last finish − first submit)) — used node-seconds over elapsed
  node-seconds, = the reference files' ``util_node_seconds`` (and their logged ``util``).

Kiviat (:func:`kiviat`): axes :data:`KIVIAT_AXES` in this order (the polygon's vertex order,
counter-clockwise from 0 rad): 1/avg wait, 1/max wait, 1/avg slowdown, 1/avg response
(Fig. 6's caption) and utilisation (the text's fifth criterion).  Each axis value (the
reciprocal for the four "lower is better" metrics) is min–max normalised across the methods to
[0, 1], 1 = best; an axis on which all methods agree scores 1 for all.  The area of the polygon
with radii r_0..r_{k-1} at equal angles is ½ sin(2π/k) Σ r_i r_{i+1} (indices mod k); the
largest possible area (all radii 1) is ½ k sin(2π/k) ≈ 2.378 for k = 5.
"""

from __future__ import annotations

import math

import numpy as np

from jaxsched.errors import ConfigError

__all__ = [
    "CLASSES",
    "KIVIAT_AXES",
    "WEEK",
    "schedule_metrics",
    "class_shares",
    "kiviat",
    "kiviat_area",
    "weekly",
    "evaluate_schedule",
]

#: class code -> name (the oracle's codes)
CLASSES = {0: "backfilled", 1: "ready", 2: "reserved"}
#: (metric, higher_is_better) per Kiviat axis, in polygon order
KIVIAT_AXES = (
    ("avg_wait", False),
    ("max_wait", False),
    ("avg_slowdown", False),
    ("avg_response", False),
    ("util", True),
)
WEEK = 7 * 86400


def _arrays(submit, run, nodes, start):
    s, r, n, st = (np.asarray(x, dtype=np.int64) for x in (submit, run, nodes, start))
    if not (s.shape == r.shape == n.shape == st.shape) or s.ndim != 1 or s.size == 0:
        raise ConfigError("submit, run, nodes and start must be equal-length, non-empty 1-D")
    if (st < s).any():
        raise ConfigError("a job starts before its submit time (or was never started)")
    if (r <= 0).any():
        raise ConfigError("run times must be positive (the slowdown divides by them)")
    return s, r, n, st


def schedule_metrics(submit, run, nodes, start, *, N: int) -> dict:
    """The §10 metrics of one schedule (module docstring) as Python floats."""
    s, r, n, st = _arrays(submit, run, nodes, start)
    wait = st - s
    resp = wait + r
    span = int((st + r).max() - s.min())
    return {
        "jobs": int(s.size),
        "avg_wait": float(wait.mean()),
        "max_wait": float(wait.max()),
        "avg_response": float(resp.mean()),
        "max_response": float(resp.max()),
        "avg_slowdown": float((resp / r).mean()),
        "util": float((n * r).sum() / (int(N) * span)) if span > 0 else math.nan,
    }


def class_shares(cls, nodes, run) -> dict:
    """Table IV: for each class name the share of jobs and of core-hours (n·run), in [0, 1]."""
    c = np.asarray(cls, dtype=np.int64)
    work = np.asarray(nodes, dtype=np.float64) * np.asarray(run, dtype=np.float64)
    if c.shape != work.shape or c.size == 0:
        raise ConfigError("cls, nodes and run must be equal-length and non-empty")
    if not np.isin(c, list(CLASSES)).all():
        raise ConfigError(f"job classes must be in {sorted(CLASSES)}")
    out = {}
    for code, name in CLASSES.items():
        m = c == code
        out[f"{name}_jobs"] = float(m.mean())
        out[f"{name}_core_hours"] = float(work[m].sum() / work.sum())
    return out


def kiviat(table: dict, axes=KIVIAT_AXES) -> dict:
    """Min–max normalised Kiviat radii: ``{method: [r per axis]}`` from ``{method: metrics}``
    (1 = best, module docstring)."""
    if not table:
        raise ConfigError("kiviat needs at least one method")
    names = list(table)
    out = {m: [] for m in names}
    for key, higher in axes:
        v = np.array([float(table[m][key]) for m in names])
        if not higher:
            v = 1.0 / v
        lo, hi = v.min(), v.max()
        norm = np.ones_like(v) if hi == lo else (v - lo) / (hi - lo)
        for m, x in zip(names, norm):
            out[m].append(float(x))
    return out


def kiviat_area(radii) -> float:
    """Area of the polygon with ``radii`` on equally spaced axes."""
    r = np.asarray(radii, dtype=np.float64)
    k = r.size
    if k < 3:
        raise ConfigError("a Kiviat polygon needs at least 3 axes")
    return float(0.5 * math.sin(2 * math.pi / k) * (r * np.roll(r, -1)).sum())


def weekly(submit, run, nodes, start, *, t0: int | None = None) -> dict:
    """Fig. 9's weekly series from ``t0`` (default: the first submit): ``core_hours[w]`` = node-
    hours executed during week w (each job's [start, end) cut at the week bounds) and
    ``avg_wait[w]`` = mean wait (s) of the jobs submitted in week w (nan for an empty week)."""
    s, r, n, st = _arrays(submit, run, nodes, start)
    t0 = int(s.min()) if t0 is None else int(t0)
    end = st + r
    weeks = int((end.max() - t0 - 1) // WEEK) + 1
    lo = t0 + WEEK * np.arange(weeks)
    overlap = np.clip(np.minimum(end[:, None], lo + WEEK) - np.maximum(st[:, None], lo), 0, None)
    core = (n[:, None] * overlap).sum(axis=0) / 3600.0
    wk = (s - t0) // WEEK
    cnt = np.bincount(wk, minlength=weeks)[:weeks]
    tot = np.bincount(wk, weights=(st - s).astype(np.float64), minlength=weeks)[:weeks]
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)
    return {"week_start": lo, "core_hours": core, "avg_wait": avg}


def evaluate_schedule(submit, run, nodes, start, cls=None, *, N: int) -> dict:
    """:func:`schedule_metrics` plus, with ``cls``, :func:`class_shares` in one dict."""
    out = schedule_metrics(submit, run, nodes, start, N=N)
    if cls is not None:
        out.update(class_shares(cls, nodes, run))
    return out
