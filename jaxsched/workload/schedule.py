"""Schedules as data (host side, numpy): read one back from a file, place its jobs on processors
for a Gantt chart, and derive its time series.

A :class:`Schedule` is what ``jaxsched simulate`` writes (SWF with the wait field filled, or
Batsim's jobs CSV) and also what a real PWA log records (its wait field is the production
scheduler's): one row per job that ran, with submit, start, run time and processors.

* :func:`read_schedule` — SWF (``.swf``/``.swf.gz``) or CSV (``.csv``), chosen by the name.
* :func:`place_on_processors` — first-fit placement by processor index (jobs in start order,
  finishes before starts at equal times), as rectangles ``(job, first processor, count)``; a job
  whose processors are not contiguous gets one rectangle per run of processors.
* :func:`time_series` — busy processors, running jobs and waiting jobs as step functions.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jaxsched.errors import ScheduleError

__all__ = ["Schedule", "read_schedule", "place_on_processors", "time_series", "TimeSeries"]


@dataclass(frozen=True)
class Schedule:
    """Jobs that ran, in file order. Arrays ``[n]`` int64 (seconds, processors).

    Attributes:
      job_id, submit, start, run, procs: the job's id, submit time, start time, run time and
        processors (allocated if the file says, else requested).
      user: int64 ``[n]`` user id (SWF field 12; −1 when the file has none).
      num_procs: int, processors of the machine (the header's MaxProcs, else the widest job).
      path: the file read (for messages and titles).
      skipped: int, jobs of the file left out (never started or without a run time).
    """

    job_id: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    run: np.ndarray
    procs: np.ndarray
    user: np.ndarray
    num_procs: int
    path: str = ""
    skipped: int = 0

    @property
    def end(self) -> np.ndarray:
        return self.start + self.run

    @property
    def wait(self) -> np.ndarray:
        return self.start - self.submit

    @property
    def n_jobs(self) -> int:
        return int(self.job_id.size)

    def _columns(self):
        return self.job_id, self.submit, self.start, self.run, self.procs, self.user

    def window(self, t_from=None, t_to=None) -> Schedule:
        """The jobs running at some time in ``[t_from, t_to)`` (bounds in the file's seconds)."""
        lo = -np.inf if t_from is None else t_from
        hi = np.inf if t_to is None else t_to
        keep = (self.end > lo) & (self.start < hi)
        return Schedule(
            *(a[keep] for a in self._columns()),
            num_procs=self.num_procs,
            path=self.path,
            skipped=self.skipped,
        )


def read_schedule(path, *, num_procs: int | None = None) -> Schedule:
    """Read a schedule: SWF (wait field 3 gives the start; processors from field 5, else 8) or
    Batsim's jobs CSV (``starting_time``, ``execution_time``, ``requested_number_of_resources``).

    Jobs without a start (wait −1, status not run, rejected rows) or with run time ≤ 0 or no
    processors are left out and counted in ``skipped``. ``num_procs`` overrides the machine
    size. Raises :class:`~jaxsched.errors.ScheduleError` (one line naming the file) on a file that
    is not a schedule."""
    p = str(path)
    if not Path(p).is_file():
        raise ScheduleError(p, message="no such file")
    name = Path(p).name.lower().removesuffix(".gz")
    cols = _read_csv(p) if name.endswith(".csv") else _read_swf(p)
    *columns, machine = cols
    job_id, submit, start, run, procs, _user = columns
    ok = (start >= 0) & (run > 0) & (procs > 0) & (start >= submit)
    if not ok.any():
        raise ScheduleError(p, message="no job with a start time (is this a schedule?)")
    size = int(num_procs or machine or procs[ok].max())
    return Schedule(
        *(a[ok] for a in columns),
        num_procs=size,
        path=p,
        skipped=int((~ok).sum()),
    )


def _read_swf(path: str):
    from jaxsched.workload.swf import read_swf

    t = read_swf(path)
    start = np.where(t.wait >= 0, t.submit + t.wait, -1)
    procs = np.where(t.alloc_procs > 0, t.alloc_procs, t.req_procs)
    return t.job_id, t.submit, start, t.run, procs, t.user, t.max_procs


def _read_csv(path: str):
    need = ("job_id", "submission_time", "starting_time", "execution_time")
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ScheduleError(path, message=f"cannot read as CSV ({e})") from None
    fields = rows[0].keys() if rows else ()
    missing = [c for c in need if c not in fields]
    if missing or "requested_number_of_resources" not in fields:
        what = ", ".join(missing) or "requested_number_of_resources"
        raise ScheduleError(path, 1, message=f"not a Batsim jobs CSV (no column {what})")

    def column(name, line_rows):
        out = np.full(len(line_rows), -1, dtype=np.int64)
        for i, r in enumerate(line_rows):
            text = (r.get(name) or "").strip()
            if text:
                try:
                    out[i] = int(round(float(text)))
                except ValueError:
                    raise ScheduleError(path, i + 2, name, f"{text!r} is not a number") from None
        return out

    ids = column("job_id", rows)
    return (
        ids,
        column("submission_time", rows),
        column("starting_time", rows),
        column("execution_time", rows),
        column("requested_number_of_resources", rows),
        np.full(len(rows), -1, dtype=np.int64),
        None,
    )


def place_on_processors(s: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First-fit placement of every job on the lowest free processor indices.

    Events in time order, finishes before starts at equal times, starts in start order (then
    file order). Returns three int64 arrays of one row per rectangle: the job's row in ``s``, the
    first processor and the number of processors; a job gets several rectangles when its
    processors are not contiguous. A job that finds too few free processors (real logs are not
    always feasible) is placed partly on processors ``>= s.num_procs``, above the machine."""
    free = np.ones(s.num_procs, dtype=bool)
    held: dict[int, np.ndarray] = {}
    rows, first, count = [], [], []
    kind = np.concatenate([np.zeros(s.n_jobs, np.int64), np.ones(s.n_jobs, np.int64)])
    when = np.concatenate([s.end, s.start])
    job = np.concatenate([np.arange(s.n_jobs), np.arange(s.n_jobs)])
    for k in np.lexsort((job, kind, when)):
        j = int(job[k])
        if kind[k] == 0:
            if j in held:
                free[held.pop(j)] = True
            continue
        idle = np.flatnonzero(free)
        if idle.size < s.procs[j]:  # overcommitted: grow past the machine
            free = np.concatenate([free, np.ones(int(s.procs[j]) - idle.size, dtype=bool)])
            idle = np.flatnonzero(free)
        got = idle[: s.procs[j]]
        free[got] = False
        held[j] = got
        for run in np.split(got, np.flatnonzero(np.diff(got) != 1) + 1):
            rows.append(j)
            first.append(int(run[0]))
            count.append(int(run.size))
    return (np.asarray(rows, np.int64), np.asarray(first, np.int64), np.asarray(count, np.int64))


@dataclass(frozen=True)
class TimeSeries:
    """Step functions of a schedule: the value at ``time[i]`` holds until ``time[i + 1]``.

    Attributes:
      time: int64 ``[k]`` event times (sorted, unique).
      busy: int64 ``[k]`` processors in use.
      running: int64 ``[k]`` jobs running.
      waiting: int64 ``[k]`` jobs submitted and not yet started.
      num_procs: the machine's processors (``busy / num_procs`` is the utilisation).
    """

    time: np.ndarray
    busy: np.ndarray
    running: np.ndarray
    waiting: np.ndarray
    num_procs: int

    def mean_utilisation(self) -> float:
        """Time average of ``busy / num_procs`` from the first to the last event."""
        dt = np.diff(self.time)
        span = self.time[-1] - self.time[0]
        return float((self.busy[:-1] * dt).sum() / (self.num_procs * span)) if span > 0 else 0.0


def time_series(s: Schedule) -> TimeSeries:
    """Busy processors, running and waiting jobs after all events at each event time."""
    times = np.unique(np.concatenate([s.submit, s.start, s.end]))

    def count_before_or_at(values, weights=None):
        order = np.argsort(values, kind="stable")
        v = values[order]
        w = np.ones_like(v) if weights is None else weights[order]
        csum = np.concatenate([[0], np.cumsum(w)])
        return csum[np.searchsorted(v, times, side="right")]

    started, ended = count_before_or_at(s.start), count_before_or_at(s.end)
    busy = count_before_or_at(s.start, s.procs) - count_before_or_at(s.end, s.procs)
    waiting = count_before_or_at(s.submit) - started
    return TimeSeries(times, busy, started - ended, waiting, s.num_procs)
