"""Tune a priority function on a trace's training jobs (issue 47 §2) and write it as a tiny
model that ``jaxsched evaluate --policy tuned:DIR`` runs: ``jaxsched tune TRACE --out DIR``.

The score is :mod:`jaxsched.policies.tuned`'s ``w_q log10 q + w_n log10 n + w_s s/3600`` (a
direction in three dimensions). The search is a (1, lambda) random search on the unit sphere
with common random numbers: every candidate is scored by the mean ``metric`` over the SAME
``sequences`` sequences of ``jobs`` jobs, which start uniformly (``default_rng(seed)``)
inside the training job range ``[A, B)`` (default: the first 50 % of the trace's jobs), so no
sequence reaches past ``B``. Round 0 scores FCFS (0, 0, 1), SJF (1, 0, 0), smallest-first
(0, 1, 0) and random directions; every later round perturbs the best direction so far
(Gaussian, scale halving every round) and keeps the best. One batched
:func:`jaxsched.sim.evaluate.evaluate` call per round. Only the training sequences choose;
``val_range`` prints (never uses) the result on validation sequences beside FCFS, SJF, F1.
The model file records the weights, the training range, the scores and the command.

``benchmarks/paper/tune_priority.py`` (the checkout's historical command) is a wrapper of
:func:`tune`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.fileio import check_folder
from jaxsched.policies.tuned import TunedPriority, save
from jaxsched.sim.evaluate import evaluate
from jaxsched.sim.metrics import HIGHER_IS_BETTER, METRICS
from jaxsched.workload import read_swf

__all__ = ["START_POINTS", "DEFAULTS", "job_range", "draw_starts", "command_line", "tune"]

#: round 0's first candidates: FCFS, SJF, smallest-first
START_POINTS = [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]

#: :func:`tune`'s defaults (the flags of ``jaxsched tune``)
DEFAULTS = dict(train_range=None, val_range=None, backfill="easy", compat=False, metric="bsld",
                jobs=1024, sequences=32, rounds=6, population=12, seed=0,
                rules="rlscheduler")  # fmt: skip


def job_range(text: str | None, n: int, default: tuple) -> tuple[int, int]:
    """``"A,B"`` (job indices, B exclusive) or the default fractions of ``n`` jobs."""
    if text is None:
        return int(default[0] * n), int(default[1] * n)
    try:
        a, b = (int(x) for x in str(text).split(","))
    except ValueError:
        raise ConfigError(f"job range: expected A,B (job indices), got {text!r}") from None
    return a, b


def draw_starts(rng, lo: int, hi: int, length: int, k: int) -> np.ndarray:
    """``k`` sequence starts uniformly in ``[lo, hi - length]`` (sorted)."""
    if hi - length < lo:
        raise ConfigError(f"job range [{lo}, {hi}) is shorter than one {length}-job sequence")
    return np.sort(rng.integers(lo, hi - length + 1, size=k))


def _score(jobs, starts, length, cands, backfill, compat, metric) -> np.ndarray:
    """Mean metric of every candidate (list of weight vectors) on the sequences ``starts``,
    signed so that smaller is better."""
    pols = [TunedPriority(tuple(w), name=f"c{i}") for i, w in enumerate(cands)]
    res = evaluate(jobs, starts, length, pols, [backfill], compat=compat, metrics=[metric])
    tab = res.table(metric)
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    return np.asarray([sign * tab[(p.name, res.backfills[0])] for p in pols])


def _unit(v) -> np.ndarray:
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v)


def command_line(trace, out, **options) -> str:
    """The ``jaxsched tune`` command of these options, as a model file records it: the trace's
    and the output's names (not their folders), then every option but ``val_range`` (which
    does not change the model); ``rules`` only when not the default."""
    o = {**DEFAULTS, **options}
    cmd = ["jaxsched", "tune", Path(trace).name, "--out", Path(out).name]
    for k in ("train_range", "backfill", "metric", "jobs", "sequences", "rounds", "population",
              "seed"):  # fmt: skip
        if o[k] is not None:
            cmd += [f"--{k.replace('_', '-')}", str(o[k])]
    if o["rules"] != DEFAULTS["rules"]:
        cmd += ["--rules", str(o["rules"])]
    cmd += ["--compat"] if o["compat"] else []
    return " ".join(cmd)


def _print(line: str) -> None:
    print(line, flush=True)


def tune(trace, out, *, log: Callable[[str], None] = _print, **options) -> Path:
    """Tune the priority function on ``trace`` (options: :data:`DEFAULTS`), write the model
    file ``out/model.json`` and return its path; ``log`` gets the progress lines (one per
    round, the training scores, and the validation line with ``val_range``)."""
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"tune: unknown options {sorted(unknown)}")
    o = {**DEFAULTS, **options}
    metric, backfill, compat, length = o["metric"], o["backfill"], bool(o["compat"]), o["jobs"]
    if metric not in METRICS:
        raise ConfigError(f"tune: unknown metric {metric!r} (one of {', '.join(METRICS)})")
    if min(length, o["sequences"], o["rounds"], o["population"]) < 1:
        raise ConfigError("tune: --jobs, --sequences, --rounds and --population must be >= 1")
    check_folder(out)  # out's parent: a missing one is an error now, not after the tuning
    jobs = read_swf(trace).jobs(o["rules"])
    lo, hi = job_range(o["train_range"], jobs.n_jobs, (0.0, 0.5))
    rng = np.random.default_rng(o["seed"])
    starts = draw_starts(rng, lo, hi, length, o["sequences"])
    t0 = time.perf_counter()
    cands = [_unit(w) for w in START_POINTS]
    cands += [_unit(rng.normal(size=3)) for _ in range(o["population"] - len(cands))]
    best_w, best, history = None, np.inf, []
    for r in range(o["rounds"]):
        if r > 0:
            sigma = 0.5 / 2 ** (r - 1)
            cands = [_unit(best_w + sigma * rng.normal(size=3)) for _ in range(o["population"])]
        sc = _score(jobs, starts, length, cands, backfill, compat, metric)
        i = int(np.argmin(sc))
        if sc[i] < best:
            best, best_w = float(sc[i]), cands[i]
        history.append({"round": r, "best": best, "weights": best_w.tolist()})
        log(f"round {r}: best {metric} {abs(best):.4f} at {np.round(best_w, 4).tolist()} "
            f"({time.perf_counter() - t0:.0f} s)")  # fmt: skip
    heur = evaluate(jobs, starts, length, ["fcfs", "sjf", "f1"], [backfill], compat=compat,
                    metrics=[metric]).table(metric)  # fmt: skip
    train_heur = {p: v for (p, _b), v in heur.items()}
    meta = dict(
        trace=Path(trace).name, rules=o["rules"], train_range=[lo, hi],
        train_starts=starts.tolist(), backfill=backfill, compat=compat, metric=metric,
        jobs=length, train_score=abs(best), train_heuristics=train_heur, search=history,
        seconds=round(time.perf_counter() - t0, 1), command=command_line(trace, out, **o),
    )  # fmt: skip
    path = save(out, best_w, **meta)
    log(f"wrote {path}; training {metric}: tuned {abs(best):.4f}, "
        + ", ".join(f"{p} {v:.4f}" for p, v in train_heur.items()))  # fmt: skip
    if o["val_range"]:
        vlo, vhi = job_range(o["val_range"], jobs.n_jobs, (0.5, 0.6))
        vst = draw_starts(np.random.default_rng(o["seed"] + 1), vlo, vhi, length, o["sequences"])
        pols = ["fcfs", "sjf", "f1", TunedPriority(tuple(best_w), name="tuned")]
        res = evaluate(jobs, vst, length, pols, [backfill], compat=compat, metrics=[metric])
        log("validation (not used): " + json.dumps(
            {p: round(v, 4) for (p, _b), v in res.table(metric).items()}))  # fmt: skip
    return path
