"""Is a schedule one the machine could have run?  A host-side (numpy, vectorised) check of start
times against the jobs and the machine, used by ``jaxsched simulate`` before it writes a schedule
and by the tests that compare the engine with the oracle.

:func:`validate_schedule` checks, for the jobs of a :class:`~jaxsched.workload.jobs.Jobs`
(:func:`check_schedule` takes the arrays):

* every job is scheduled exactly once: one start per job (or, with ``scheduled_ids``, one row per
  job number), and no start is the engine's "never started" sentinel (−1; the schedule files
  write any negative start as never started);
* no job starts before its submit time; run times are not negative, and ``end = start + run``
  when ends are given;
* at no instant are more processors busy than the machine has, nor, where the machine allocates
  whole nodes, more nodes (a job holds ``ceil(procs / procs_per_node)`` nodes, the engine's
  float division).  Time runs as in the engine: at equal times the jobs that end free their
  processors before the jobs that start take them, so a job that ends at ``t`` and one that
  starts at ``t`` never overlap, and a job of run time 0 holds nothing (it must still fit the
  machine on its own).

A violation raises a one-line :class:`~jaxsched.errors.ScheduleError` naming the first
violating job (its SWF job number) and what is wrong: the lowest-numbered row for the per-job
rules, the earliest start in time for an over-allocation.  Nothing is returned otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from jaxsched.errors import ConfigError, ScheduleError

if TYPE_CHECKING:
    from jaxsched.workload.jobs import Jobs

__all__ = ["NEVER_STARTED", "validate_schedule", "check_schedule"]

#: the start time the engine and the oracle give a job they never started
NEVER_STARTED = -1


def validate_schedule(jobs: Jobs, start, *, end=None, scheduled_ids=None, what=None) -> None:
    """Check ``start`` (one start time per job of ``jobs``, in its order) against the jobs and
    their machine (``jobs.num_procs`` processors in ``jobs.num_nodes`` whole nodes); see the
    module's docstring.  ``scheduled_ids``: the job numbers of ``start``'s rows when the schedule
    is keyed by job number (a file read back) rather than in the jobs' order.  ``what`` names the
    schedule in the message (default: the jobs' file)."""
    check_schedule(
        jobs.submit,
        jobs.run,
        jobs.procs,
        start,
        num_procs=jobs.num_procs,
        num_nodes=jobs.num_nodes,
        procs_per_node=jobs.procs_per_node,
        job_id=jobs.job_id,
        end=end,
        scheduled_ids=scheduled_ids,
        what=what if what is not None else jobs.path,
    )


def _ints(name: str, a) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind in "iub":
        return a.astype(np.int64)
    if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
        bad = int(np.flatnonzero(~np.isfinite(a) | (a != np.round(a)))[0])
        raise ScheduleError(message=f"{name} must be whole seconds; row {bad} is {a[bad]!r}")
    return a.astype(np.int64)


def _by_job_number(job_id, scheduled_ids, start, end, prefix):
    """Rows keyed by job number -> arrays in the jobs' order (each job exactly once)."""
    rows = _ints("scheduled_ids", scheduled_ids)
    if rows.shape != start.shape:
        raise ConfigError(f"scheduled_ids has shape {rows.shape}, start {start.shape}")
    order = np.argsort(job_id, kind="stable")
    ids = job_id[order]
    if ids.size > 1 and np.any(ids[1:] == ids[:-1]):
        dup = int(ids[1:][ids[1:] == ids[:-1]][0])
        raise ConfigError(f"job number {dup} appears twice among the jobs; match rows by order")
    pos = np.clip(np.searchsorted(ids, rows), 0, max(ids.size - 1, 0))
    known = (ids[pos] == rows) if ids.size else np.zeros(rows.shape, bool)
    if not known.all():
        r = int(np.flatnonzero(~known)[0])
        raise ScheduleError(
            message=f"{prefix}job {int(rows[r])} is scheduled but is not a loaded job"
        )
    job = order[pos]
    count = np.bincount(job, minlength=job_id.size)
    if np.any(count != 1):
        j = int(np.flatnonzero(count != 1)[0])
        what = "is not scheduled" if count[j] == 0 else f"is scheduled {int(count[j])} times"
        raise ScheduleError(message=f"{prefix}job {int(job_id[j])} {what}, not once")
    out_start = np.empty_like(start)
    out_start[job] = start
    if end is not None:
        out_end = np.empty_like(end)
        out_end[job] = end
        end = out_end
    return out_start, end


def check_schedule(
    submit,
    run,
    procs,
    start,
    *,
    num_procs: int,
    num_nodes: int | None = None,
    procs_per_node: float | None = None,
    job_id=None,
    end=None,
    scheduled_ids=None,
    what: str | None = None,
) -> None:
    """:func:`validate_schedule` on arrays: ``submit``, ``run``, ``procs`` and ``start`` (``[n]``,
    whole seconds and processors); ``num_procs`` processors; ``num_nodes`` and
    ``procs_per_node`` when the machine allocates whole nodes (both or neither); ``job_id`` the
    job numbers for the message (default: row numbers); ``end`` the ends, if the schedule has
    its own."""
    submit, run, procs = _ints("submit", submit), _ints("run", run), _ints("procs", procs)
    n = submit.shape[0]
    if not (submit.shape == run.shape == procs.shape == (n,)):
        raise ConfigError("submit, run and procs must be [n] arrays of one length")
    job_id = np.arange(n, dtype=np.int64) if job_id is None else _ints("job_id", job_id)
    prefix = f"schedule of {what}: " if what else "schedule: "

    def fail(j: int, message: str):
        raise ScheduleError(message=f"{prefix}job {int(job_id[j])} {message}")

    start = _ints("start", start)
    end = None if end is None else _ints("end", end)
    if end is not None and end.shape != start.shape:
        raise ScheduleError(message=f"{prefix}{end.shape[0]} ends for {start.shape[0]} starts")
    if scheduled_ids is not None:
        start, end = _by_job_number(job_id, scheduled_ids, start, end, prefix)
    elif start.shape != (n,):
        size = start.shape[0] if start.ndim == 1 else start.shape
        raise ScheduleError(message=f"{prefix}{size} start times for {n} jobs (one each)")

    nodes = None
    if (num_nodes is None) != (procs_per_node is None):
        raise ConfigError("give both num_nodes and procs_per_node, or neither")
    if num_nodes is not None:
        nodes = np.ceil(procs / float(procs_per_node)).astype(np.int64)

    # per-job rules: the lowest row that breaks any of them, with its first broken rule
    checks = [
        (start == NEVER_STARTED, lambda j: f"was never started (start {NEVER_STARTED})"),
        (start < 0, lambda j: f"starts at {start[j]}, a negative time"),
        (start < submit, lambda j: f"starts at {start[j]}, before its submit time {submit[j]}"),
        (run < 0, lambda j: f"has a negative run time {run[j]}"),
        (procs < 0, lambda j: f"has a negative processor count {procs[j]}"),
        (procs > num_procs, lambda j: f"needs {procs[j]} processors; the machine has {num_procs}"),
    ]
    if nodes is not None:
        checks.append(
            (nodes > num_nodes, lambda j: f"needs {nodes[j]} nodes; the machine has {num_nodes}")
        )
    if end is not None:
        checks.append(
            (
                end != start + run,
                lambda j: f"ends at {end[j]}, not start + run = {start[j] + run[j]}",
            )
        )
    bad = np.zeros(n, bool)
    for mask, _ in checks:
        bad |= mask
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        fail(j, next(msg(j) for mask, msg in checks if mask[j]))

    # the machine: sweep over end (-) and start (+) events, ends first at equal times
    if n == 0:
        return
    stop = start + run
    key = np.concatenate([stop * 2, start * 2 + 1])  # (time, end before start), then row order
    order = np.argsort(key, kind="stable")
    is_start = order >= n
    row = np.where(is_start, order - n, order)

    def usage(demand):  # a job of run time 0 holds nothing for any positive time
        held = np.where(run > 0, demand, 0)[row]
        return np.cumsum(np.where(is_start, held, -held))

    over = is_start & (usage(procs) > int(num_procs))
    if nodes is not None:
        over |= is_start & (usage(nodes) > int(num_nodes))
    if over.any():
        k = int(np.flatnonzero(over)[0])
        j = int(row[k])
        t = start[j]
        busy = (start <= t) & (stop > t)  # after every event at time t
        b_procs = int(procs[busy].sum())
        msg = f"starts at {t} when {b_procs} processors of {int(num_procs)} would be busy"
        if nodes is not None:
            msg += f" ({int(nodes[busy].sum())} nodes of {int(num_nodes)})"
        fail(j, msg + f": it needs {procs[j]}, over the machine's capacity")
