"""DRAS workloads (spec ``dras.md`` §7.4, §9): the trace split, the three kinds of training
jobsets and the curriculum that orders them.  Host numpy only, seeded and deterministic.

Input is the simulator's :class:`~jaxsched.workload.jobs.Jobs` of an SWF trace (any cleaning
rule).  A job's size is ``procs`` and the machine size ``num_procs`` (CQSim treats processors
as nodes, spec note 3); the estimate is ``req_time``; the actual run time ``run``.  Every jobset
is again a ``Jobs`` (same machine), submit-ordered, with ``submit`` starting at 0; generated
jobs get ``job_id`` 1..n and −1 in the fields they do not model.

* :func:`split_trace` — §9: the first two months train, the next month validation, the rest
  test, by submit time; a month is 30 days by default (``month=``).
* :func:`sampled_jobset` — jobs drawn uniformly at random **with replacement** from the
  training trace, arrivals re-drawn as a Poisson process at the trace's mean inter-arrival time.
* :func:`weekly_jobsets` — the consecutive one-week slices of the training trace (empty weeks
  skipped).
* :func:`fit_generator` / :func:`synthetic_jobset` — a non-homogeneous Poisson process with rate
  ``base × weekday[d] × hour[h]`` (factors = the trace's arrival shares × 7 and × 24, so each
  averages 1 and ``base`` is the trace's mean rate), (size, estimate) drawn jointly from the
  trace's pairs, run time = ``max(1, round(estimate × accuracy))`` with the accuracy
  ``min(run / estimate, 1)`` drawn from its histogram (uniform within a bin).  Weekday and
  hour are those of local time: ``epoch`` (:func:`trace_epoch`) is the local-time Unix second of
  submit 0; generated jobsets start on a Monday at 00:00.
* :func:`curriculum_kinds` / :func:`curriculum_jobset` — "sampled → real → synthetic" with
  counts as options (Theta: 9 / 9 / 82); jobset ``i`` depends only on (trace, config, i).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace

import numpy as np

from jaxsched.errors import ConfigError, as_int
from jaxsched.workload.jobs import Jobs

__all__ = [
    "DAY",
    "WEEK",
    "MONTH",
    "MONDAY_EPOCH",
    "trace_epoch",
    "weekday_hour",
    "accuracy",
    "priority_from_size",
    "split_trace",
    "sampled_jobset",
    "weekly_jobsets",
    "GeneratorModel",
    "fit_generator",
    "synthetic_jobset",
    "CurriculumConfig",
    "curriculum_kinds",
    "curriculum_jobset",
]

DAY = 86_400
WEEK = 7 * DAY
MONTH = 30 * DAY
MONDAY_EPOCH = 4 * DAY
"""A Monday 00:00 as a Unix second (1970-01-05; second 0 is a Thursday): the ``epoch`` of a
synthetic jobset."""


def trace_epoch(trace) -> int:
    """Local-time Unix second of a trace's submit 0: ``UnixStartTime`` plus the UTC offset of
    ``TimeZoneString`` (else ``TimeZone`` seconds, else 0); 0 when the start is unknown."""
    start = trace.unix_start_time
    if start is None:
        return 0
    off = trace.time_zone or 0
    if trace.time_zone_string:
        try:
            from zoneinfo import ZoneInfo

            tz = ZoneInfo(trace.time_zone_string)
            off = int(_dt.datetime.fromtimestamp(start, tz).utcoffset().total_seconds())
        except Exception:  # unknown zone name: keep the numeric offset
            pass
    return int(start) + off


def priority_from_size(jobs: Jobs, fraction: float | None = 0.2) -> np.ndarray:
    """DRAS's priority flag (§3) for traces without the 19th column: int64 ``[n]``, 1 for jobs
    wider than ``fraction`` of the machine (Theta's 802-node rule is about 18 %), all 0 when
    ``fraction`` is None."""
    if fraction is None:
        return np.zeros(jobs.n_jobs, np.int64)
    return (jobs.procs > fraction * jobs.num_procs).astype(np.int64)


def _shifted(jobs: Jobs, origin: int) -> Jobs:
    return replace(jobs, submit=jobs.submit - int(origin))


def _new_jobs(template: Jobs, submit, run, req_time, procs, src=None) -> Jobs:
    """A generated Jobs on ``template``'s machine; other fields from rows ``src`` or −1."""
    n = len(submit)
    other = {}
    for name in ("req_mem", "user", "group", "executable"):
        col = getattr(template, name)
        other[name] = col[src].copy() if src is not None else np.full(n, -1, np.int64)
    as64 = lambda a: np.ascontiguousarray(a, np.int64)  # noqa: E731
    return replace(
        template,
        submit=as64(submit),
        run=as64(run),
        req_time=as64(req_time),
        procs=as64(procs),
        job_id=np.arange(1, n + 1, dtype=np.int64),
        line=np.full(n, -1, np.int64),
        path=None,
        **other,
    )


def split_trace(jobs: Jobs, train: int = 2 * MONTH, validation: int = MONTH):
    """§9 split by submit time measured from the first submit: ``[0, train)`` training,
    ``[train, train + validation)`` validation, the rest test.  Returns three Jobs, each with
    its own submit times starting at its period's start (not at its first job)."""
    if jobs.n_jobs == 0:
        raise ConfigError("split_trace: the trace has no jobs")
    t = jobs.submit - jobs.submit[0]
    b1, b2 = int(train), int(train) + int(validation)
    parts = ((t < b1), (t >= b1) & (t < b2), (t >= b2))
    origins = (0, b1, b2)
    return tuple(
        _shifted(jobs.select(m), jobs.submit[0] + o) for m, o in zip(parts, origins, strict=True)
    )


def _mean_interarrival(jobs: Jobs) -> float:
    if jobs.n_jobs < 2:
        raise ConfigError("need at least two jobs to measure the inter-arrival time")
    return float(jobs.submit[-1] - jobs.submit[0]) / (jobs.n_jobs - 1)


def sampled_jobset(jobs: Jobs, n_jobs: int, seed: int, mean_gap: float | None = None) -> Jobs:
    """``n_jobs`` jobs drawn uniformly with replacement from ``jobs``; Poisson arrivals (the first
    at 0) with mean gap ``mean_gap`` (default the trace's mean inter-arrival time); size,
    estimate, run time, user, group ... of the drawn jobs."""
    n_jobs = as_int(n_jobs, "n_jobs", 1)
    rng = np.random.default_rng(seed)
    gap = _mean_interarrival(jobs) if mean_gap is None else float(mean_gap)
    idx = rng.integers(0, jobs.n_jobs, n_jobs)
    gaps = rng.exponential(gap, n_jobs)
    submit = np.floor(np.cumsum(gaps) - gaps[0])
    return _new_jobs(jobs, submit, jobs.run[idx], jobs.req_time[idx], jobs.procs[idx], idx)


def weekly_jobsets(jobs: Jobs, week: int = WEEK) -> list[Jobs]:
    """The consecutive one-week slices from the first submit (empty weeks skipped), each with
    submit times measured from its week's start."""
    t = jobs.submit - jobs.submit[0]
    k = t // int(week)
    out = []
    for w in np.unique(k):
        out.append(_shifted(jobs.select(k == w), jobs.submit[0] + int(w) * int(week)))
    return out


@dataclass(frozen=True)
class GeneratorModel:
    """A fitted synthetic-workload model (:func:`fit_generator`): ``rate`` (jobs / s),
    ``weekday`` float ``[7]`` (Monday first) and ``hour`` float ``[24]`` factors (mean 1),
    ``sizes`` / ``estimates`` int64 ``[m]`` (the trace's pairs), ``acc_edges`` float ``[B+1]``
    and ``acc_probs`` float ``[B]`` (accuracy histogram)."""

    rate: float
    weekday: np.ndarray
    hour: np.ndarray
    sizes: np.ndarray
    estimates: np.ndarray
    acc_edges: np.ndarray
    acc_probs: np.ndarray


def weekday_hour(t_local) -> tuple[np.ndarray, np.ndarray]:
    """Weekday (0 = Monday) and hour of day, int64, of local-time Unix seconds."""
    s = np.asarray(t_local, np.int64) - MONDAY_EPOCH
    return (s // DAY) % 7, (s % DAY) // 3600


def accuracy(jobs: Jobs) -> np.ndarray:
    """``min(run / estimate, 1)`` per job (float64; CQSim cuts run times to the estimate)."""
    return np.minimum(jobs.run / np.maximum(jobs.req_time, 1), 1.0)


def fit_generator(jobs: Jobs, epoch: int = 0, bins: int = 20) -> GeneratorModel:
    """Fit :class:`GeneratorModel` to a (training) trace; ``epoch`` as in :func:`trace_epoch`."""
    if jobs.n_jobs < 2:
        raise ConfigError("fit_generator: need at least two jobs")
    d, h = weekday_hour(jobs.submit + int(epoch))
    wk = np.bincount(d, minlength=7) / jobs.n_jobs * 7
    hr = np.bincount(h, minlength=24) / jobs.n_jobs * 24
    edges = np.linspace(0.0, 1.0, int(bins) + 1)
    hist, _ = np.histogram(accuracy(jobs), edges)
    return GeneratorModel(
        1.0 / _mean_interarrival(jobs), wk, hr, jobs.procs.copy(), jobs.req_time.copy(),
        edges, hist / hist.sum(),
    )  # fmt: skip


def _arrivals(model: GeneratorModel, n_jobs: int, rng) -> np.ndarray:
    """Non-homogeneous Poisson arrivals, piecewise constant per hour, from Monday 00:00."""
    rate_h = model.rate * 3600 * np.repeat(model.weekday, 24) * np.tile(model.hour, 7)  # [168]
    if not np.any(rate_h > 0):
        raise ConfigError("synthetic_jobset: the fitted arrival rate is zero")
    out, week = [], 0
    while sum(len(o) for o in out) < n_jobs:
        counts = rng.poisson(rate_h)
        start = np.repeat(np.arange(168) * 3600 + week * WEEK, counts)
        out.append(np.sort(start + rng.uniform(0, 3600, counts.sum())))
        week += 1
    return np.floor(np.concatenate(out)[:n_jobs])


def synthetic_jobset(model: GeneratorModel, n_jobs: int, seed: int, template: Jobs) -> Jobs:
    """``n_jobs`` synthetic jobs from ``model`` on ``template``'s machine (submit 0 = Monday
    00:00 local time)."""
    n = as_int(n_jobs, "n_jobs", 1)
    rng = np.random.default_rng(seed)
    submit = _arrivals(model, n, rng)
    pick = rng.integers(0, len(model.sizes), n)
    est = model.estimates[pick]
    b = rng.choice(len(model.acc_probs), n, p=model.acc_probs)
    acc = rng.uniform(model.acc_edges[b], model.acc_edges[b + 1])
    run = np.maximum(1, np.rint(est * acc))
    return _new_jobs(template, submit, run, est, model.sizes[pick])


@dataclass(frozen=True)
class CurriculumConfig:
    """The §7.4 schedule: ``n_sampled`` sampled, then ``n_real`` real one-week (cycled if the
    trace has fewer weeks), then ``n_synthetic`` synthetic jobsets; ``jobs_per_set`` for the
    sampled and synthetic ones (None: the mean weekly job count of the trace); ``seed``."""

    n_sampled: int = 9
    n_real: int = 9
    n_synthetic: int = 82
    jobs_per_set: int | None = None
    seed: int = 0
    epoch: int = 0


def curriculum_kinds(cfg: CurriculumConfig = CurriculumConfig()) -> list[str]:
    """The kinds in order: ``"sampled"`` × n_sampled, ``"real"`` × n_real, ``"synthetic"`` ×
    n_synthetic."""
    counts = (cfg.n_sampled, cfg.n_real, cfg.n_synthetic)
    if min(counts) < 0 or sum(counts) == 0:
        raise ConfigError(f"curriculum counts must be >= 0 and not all 0, got {counts}")
    return ["sampled"] * cfg.n_sampled + ["real"] * cfg.n_real + ["synthetic"] * cfg.n_synthetic


def curriculum_jobset(train: Jobs, index: int, cfg: CurriculumConfig = CurriculumConfig()):
    """``(kind, Jobs)`` of episode ``index`` (0-based) of the curriculum over the training
    trace ``train``; deterministic in (train, cfg, index)."""
    kinds = curriculum_kinds(cfg)
    if not 0 <= int(index) < len(kinds):
        raise ConfigError(f"curriculum index {index} outside 0..{len(kinds) - 1}")
    kind, seed = kinds[index], cfg.seed * 1_000_003 + int(index)
    weeks = weekly_jobsets(train)
    size = cfg.jobs_per_set or max(2, int(round(float(np.mean([w.n_jobs for w in weeks])))))
    if kind == "sampled":
        return kind, sampled_jobset(train, size, seed)
    if kind == "real":
        return kind, weeks[(index - cfg.n_sampled) % len(weeks)]
    return kind, synthetic_jobset(fit_generator(train, cfg.epoch), size, seed, train)
