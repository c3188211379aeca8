"""Writing SWF files: a :class:`~jaxsched.workload.swf.Trace` back to text
(:func:`write_swf`) and a simulated schedule of :class:`~jaxsched.workload.jobs.Jobs` with its
wait times (:func:`write_schedule_swf`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.fileio import atomic_write

if TYPE_CHECKING:
    from jaxsched.workload.jobs import Jobs
    from jaxsched.workload.swf import Trace

__all__ = ["write_swf", "write_schedule_swf"]


def _header_lines(header) -> list[str]:
    if header is None:
        return []
    if isinstance(header, str):
        header = header.splitlines()
    out = []
    if isinstance(header, Mapping):
        for k, v in header.items():
            vals = v if isinstance(v, (list, tuple)) else str(v).split("\n")
            out.extend(f"; {k}: {x}" for x in vals)
        return out
    if not isinstance(header, Sequence):
        raise TypeError("header must be None, a str, a sequence of str or a mapping")
    for h in header:
        h = str(h)
        out.append(h if h.lstrip().startswith(";") else f"; {h}" if h else ";")
    return out


def _column_strings(a: np.ndarray) -> np.ndarray:
    """Exact text of a column: integers as integers, other floats with repr()."""
    if a.dtype.kind in "iu":
        return a.astype(str)
    integral = np.isfinite(a) & (a == np.floor(a)) & (np.abs(a) < 2.0**53)
    out = np.empty(a.shape, dtype=object)
    out[integral] = a[integral].astype(np.int64).astype(str)
    out[~integral] = [repr(float(x)) for x in a[~integral]]
    return out.astype(str)


def _format_rows(columns: Sequence[np.ndarray]) -> str:
    strs = [_column_strings(np.asarray(c)) for c in columns]
    if len(strs[0]) == 0:
        return ""
    acc = None
    for s in strs:  # right-aligned columns, like the PWA files
        s = np.strings.rjust(s, int(np.strings.str_len(s).max()))
        acc = s if acc is None else np.strings.add(np.strings.add(acc, " "), s)
    return "\n".join(acc.tolist()) + "\n"


def _write_text(path, text: str) -> str:
    """Write ``text`` whole or not at all (gzip-compressed when ``path`` ends in ``.gz``)."""
    atomic_write(path, text, gzip_by_suffix=True)
    return os.fspath(path)


def write_swf(trace: Trace, path, *, header=None) -> str:
    """Write ``trace`` as SWF (gzip-compressed when ``path`` ends in ``.gz``); returns the path.

    ``header``: None (default) writes the trace's own comment lines verbatim. Comment lines that
    sat between job lines in the source come first. Otherwise ``header`` is a sequence of lines
    (``"; "`` is added to lines that do not start with ``;``), a single string (split into
    lines), or a mapping label -> value (a list value, or a value containing ``"\\n"``, gives
    one line per item); ``[]`` writes no header. Integer fields and integral floats are written
    as integers, other floats with ``repr``. So :func:`read_swf` gives back exactly the same
    values.
    """
    lines = list(trace.comments) if header is None else _header_lines(header)
    from jaxsched.workload.swf import FIELDS

    body = _format_rows([getattr(trace, n) for n in FIELDS])
    return _write_text(path, "".join(h + "\n" for h in lines) + body)


def write_schedule_swf(jobs: Jobs, start_times, path, *, header=None, alloc_procs=None) -> str:
    """Write a simulated schedule as SWF, for PWA tools and evalys.

    One line per job of ``jobs``, in its order. Fields: 1 job number, 2 submit time,
    **3 wait time = start − submit**, 4 run time, **5 allocated processors** (``alloc_procs`` if
    given, e.g. whole nodes × procs per node, else the job's ``procs``), 8 requested processors,
    9 requested time, 10 requested memory, 11 status (1 = completed), 12–14 user, group and
    executable. Fields 6, 7 and 15–18 are −1. A job with a negative start time (never started)
    gets wait −1, allocated −1 and status 5 (cancelled). The header says
    what the file is (MaxNodes, MaxProcs, counts); ``header`` adds lines (see :func:`write_swf`).
    """
    start = np.asarray(start_times)
    n = jobs.n_jobs
    if start.shape != (n,):
        raise ConfigError(f"start_times has shape {start.shape}, expected ({n},)")
    if not np.all(np.isfinite(start)) or np.any(start != np.round(start)):
        raise ConfigError("start_times must be integral (whole seconds)")
    start = start.astype(np.int64)
    started = start >= 0
    early = np.flatnonzero(started & (start < jobs.submit))
    if early.size:
        j = int(early[0])
        raise ConfigError(
            f"job {int(jobs.job_id[j])} starts at {int(start[j])}, before its "
            f"submit time {int(jobs.submit[j])} ({early.size} such jobs)"
        )
    alloc = jobs.procs if alloc_procs is None else np.asarray(alloc_procs, dtype=np.int64)
    if alloc.shape != (n,):
        raise ConfigError(f"alloc_procs has shape {alloc.shape}, expected ({n},)")
    minus1 = np.full(n, -1, dtype=np.int64)
    cols = [
        jobs.job_id,
        jobs.submit,
        np.where(started, start - jobs.submit, -1),
        jobs.run,
        np.where(started, alloc, -1),
        minus1,
        minus1,
        jobs.procs,
        jobs.req_time,
        jobs.req_mem,
        np.where(started, 1, 5),
        jobs.user,
        jobs.group,
        jobs.executable,
        minus1,
        minus1,
        minus1,
        minus1,
    ]
    lines = [
        "; Version: 2.2",
        "; Computer: jaxsched simulated schedule",
        f"; Note: jobs from {jobs.path or 'an in-memory trace'} (rules={jobs.rules})",
        "; Note: field 3 = simulated start - submit; field 5 = allocated processors; "
        "field 11 = 1 (ran) or 5 (never started)",
        f"; MaxJobs: {n}",
        f"; MaxRecords: {n}",
        f"; MaxNodes: {jobs.num_nodes}",
        f"; MaxProcs: {jobs.num_procs}",
    ] + _header_lines(header)
    return _write_text(path, "".join(h + "\n" for h in lines) + _format_rows(cols))


#: the columns of :func:`write_schedule_csv` (Batsim's ``_jobs.csv``, which evalys reads)
SCHEDULE_CSV_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources",
)  # fmt: skip


def write_schedule_csv(jobs: Jobs, start_times, path, *, workload: str = "w0") -> str:
    """Write a simulated schedule as Batsim's jobs CSV (the ``_jobs.csv`` evalys reads).

    One row per started job of ``jobs``, in its order; columns :data:`SCHEDULE_CSV_COLUMNS`.
    ``requested_number_of_resources`` is the job's processors, ``requested_time`` its
    requested run time, ``allocated_resources`` left empty (the engine does not place jobs on
    named processors); times in seconds. A job that never started has ``success`` 0, state
    ``REJECTED`` and empty times."""
    start = np.asarray(start_times, dtype=np.int64)
    if start.shape != (jobs.n_jobs,):
        raise ConfigError(f"start_times has shape {start.shape}, expected ({jobs.n_jobs},)")
    out = [",".join(SCHEDULE_CSV_COLUMNS)]
    for j in range(jobs.n_jobs):
        s, sub, run = int(start[j]), int(jobs.submit[j]), int(jobs.run[j])
        head = [str(int(jobs.job_id[j])), workload, "p", str(sub), str(int(jobs.procs[j]))]
        head.append(str(int(jobs.req_time[j])))
        if s < 0:
            out.append(",".join(head + ["0", "REJECTED"] + [""] * 7))
            continue
        wait, turnaround = s - sub, s + run - sub
        stretch = turnaround / max(run, 1)
        times = [s, run, s + run, wait, turnaround]
        row = head + ["1", "COMPLETED_SUCCESSFULLY"] + [str(v) for v in times]
        out.append(",".join(row + [repr(float(stretch)), ""]))
    return _write_text(path, "\n".join(out) + "\n")
