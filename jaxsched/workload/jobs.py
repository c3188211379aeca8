"""The simulator's job list (:class:`Jobs`) and the cleaning rules that make it from an SWF
:class:`~jaxsched.workload.swf.Trace` (:func:`prepare_jobs`, ``Trace.jobs(rules)``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from jaxsched.errors import ConfigError, SWFError

if TYPE_CHECKING:
    from jaxsched.workload.swf import Trace

__all__ = ["RULES", "Jobs", "prepare_jobs", "check_job_list", "MAX_TIME"]

#: Cleaning rules understood by :func:`prepare_jobs`.
RULES: tuple[str, ...] = ("rlscheduler", "default")


@dataclass(eq=False)
class Jobs:
    """The job list a simulator consumes (host numpy; move to the device as needed).

    Arrays (int64, length ``n_jobs``, in simulation order): ``submit``, ``run`` (actual run
    time), ``req_time`` (the user's estimate), ``procs`` (processors needed), ``req_mem``,
    ``user``, ``group``, ``executable``, ``job_id`` (SWF job number), ``line`` (source line).

    Machine: ``num_procs`` (P), ``num_nodes`` (N), ``procs_per_node`` (float P / N).

    Normalisers, spec §1.4 (maxima over **all** parsed lines, before any job is dropped or
    fixed, 0 when the field is always −1): ``max_exec_time`` (run time), ``max_req_mem``,
    ``max_user``, ``max_group``, ``max_executable``.

    ``fixes``: how many jobs each rule touched (all keys present, zero or not). ``rules``:
    the rule set's name. ``path``: the source file.
    """

    submit: np.ndarray
    run: np.ndarray
    req_time: np.ndarray
    procs: np.ndarray
    req_mem: np.ndarray
    user: np.ndarray
    group: np.ndarray
    executable: np.ndarray
    job_id: np.ndarray
    line: np.ndarray
    num_procs: int
    num_nodes: int
    procs_per_node: float
    max_exec_time: int
    max_req_mem: int
    max_user: int
    max_group: int
    max_executable: int
    fixes: dict[str, int]
    rules: str
    path: str | None = None

    ARRAYS = (
        "submit",
        "run",
        "req_time",
        "procs",
        "req_mem",
        "user",
        "group",
        "executable",
        "job_id",
        "line",
    )

    @property
    def n_jobs(self) -> int:
        return int(self.submit.shape[0])

    def __len__(self) -> int:
        return self.n_jobs

    @property
    def node_demand(self) -> np.ndarray:
        """Whole nodes each job occupies: ``ceil(procs / procs_per_node)`` (spec §1.5,
        float division as in the reference)."""
        return np.ceil(self.procs / self.procs_per_node).astype(np.int64)

    def select(self, index) -> Jobs:
        """A new Jobs with the entries ``index`` (slice, int array or mask); scalars kept."""
        return replace(self, **{n: getattr(self, n)[index] for n in self.ARRAYS})

    def window(self, start: int, length: int) -> Jobs:
        """Jobs ``start .. start+length-1`` (a simulation sequence); bounds are checked."""
        start, length = int(start), int(length)
        if length < 1 or start < 0 or start + length > self.n_jobs:
            raise ConfigError(
                f"window [{start}, {start + length}) is outside the "
                f"{self.n_jobs} jobs of {self.path or 'the trace'}"
            )
        return self.select(slice(start, start + length))

    def __repr__(self) -> str:
        return (
            f"Jobs(rules={self.rules!r}, n_jobs={self.n_jobs}, num_procs={self.num_procs}, "
            f"num_nodes={self.num_nodes}, fixes={self.fixes})"
        )


#: the latest time a job list may reach (submit times, and the end of a schedule that runs every
#: job one after the other): float64 holds every integer up to here exactly, and the engine's
#: "infinite" time (``BIG``, int64 max // 4) is far beyond it
MAX_TIME = 2**53


#: why the rule sets drop jobs, by their ``fixes`` key (the message of an empty job list)
_DROPPED = {
    "dropped_zero_run": "run time 0",
    "dropped_nonpositive_run": "run time <= 0 or unknown",
    "dropped_nonpositive_procs": "no processor count",
}


def check_job_list(path, rules: str, order: str, submit, run, req_time, line) -> None:
    """The checks every rule set's job list goes through, after its drops and its sort: submit
    times non-decreasing (the simulator's order) and >= 0, and every time a schedule can reach
    (its end, if the jobs ran one after the other, plus the longest run or requested time)
    within 2^53 s. ``order``: how the rules order the jobs (``"by job number"``, ``"in file
    order"``). An :class:`~jaxsched.errors.SWFError` names the first
    job line at fault (``path:line: field: ...``)."""
    if submit.size == 0:
        return
    late = np.flatnonzero(submit[1:] < submit[:-1])
    if late.size:
        j = int(late[0]) + 1
        by_number = order == "by job number"
        raise SWFError(
            path,
            int(line[j]),
            "job_id (field 1)" if by_number else "submit (field 2)",
            f"the {rules} rules order the jobs {order}, and this job's submit time "
            f"({int(submit[j])}) is earlier than that of the job before it, on line "
            f"{int(line[j - 1])} ({int(submit[j - 1])})"
            + ("; job numbers must follow submit order" if by_number else ""),
        )
    if submit[0] < 0:  # the smallest, in submit order
        raise SWFError(
            path,
            int(line[0]),
            "submit (field 2)",
            f"submit time {int(submit[0])} is negative (-1: unknown); a job the {rules} "
            "rules keep needs a submit time >= 0",
        )
    # A schedule that keeps a job running while any waits (each fits the machine) ends by
    # max_k (submit_k + the run times of job k and of the jobs after it); reservations reach
    # one requested time beyond that. 2^53 leaves a factor 256 to the engine's BIG.
    runs = np.maximum(run, 0).astype(np.float64)
    after = np.cumsum(runs[::-1])[::-1]
    k = int(np.argmax(submit + after))
    longest = np.maximum(run, req_time)
    j = int(np.argmax(longest))
    end = float(submit[k]) + float(after[k]) + max(0, int(longest[j]))
    if end > MAX_TIME:
        name, field = ("run time", "run (field 4)")
        if req_time[j] > run[j]:
            name, field = ("requested time", "req_time (field 9)")
        raise SWFError(
            path,
            int(line[j]),
            field,
            f"a schedule of these jobs could end after 2^53 s ({MAX_TIME}): the jobs "
            f"submitted from line {int(line[k])} on (at {int(submit[k])} s) run "
            f"{float(after[k]):.4g} s in all, and this job's {name} is {int(longest[j])} s",
        )


def _max0(a: np.ndarray) -> int:
    return max(0, int(a.max())) if a.size else 0


def prepare_jobs(trace: Trace, rules: str = "rlscheduler") -> Jobs:
    """Apply a cleaning rule set to a trace and return the simulator's :class:`Jobs`.

    ``rules="rlscheduler"``: exactly the RLScheduler reference (spec §1.2–1.5):

    1. ``procs = max(alloc_procs, req_procs)`` (−1 if both are −1; such jobs are kept);
    2. ``req_time``: field 9, and if it is −1 the run time *as read* (so −1 stays possible);
       it is not clipped to the run time;
    3. run time < 0 becomes 10; then jobs with run time == 0 are dropped; nothing else is;
    4. the jobs are sorted by job number (stable);
    5. N = ``MaxNodes`` (required: without it the reference divides by zero, here an
       :class:`~jaxsched.errors.SWFError` names the missing label), P = the ``max_procs=``
       override, else ``MaxProcs``, else N.

    ``fixes`` keys: ``procs_from_alloc`` (kept jobs whose allocated count exceeds the requested
    one), ``req_time_from_run`` (kept jobs with field 9 == −1), ``neg_run_to_10``,
    ``dropped_zero_run``, and two warnings the reference does not act on:
    ``kept_nonpositive_procs`` and ``kept_nonpositive_req_time`` (spec §10.3).

    ``rules="default"``: a cleaning for general use:

    1. ``procs = req_procs`` if > 0, else ``alloc_procs``;
    2. ``req_time = req_time`` if > 0, else the run time (under-estimates, i.e. req_time < run,
       are kept: real traces contain them);
    3. jobs with run time <= 0 or procs <= 0 are dropped (counted);
    4. the jobs stay in submit order (the file order, which :func:`read_swf` validated);
    5. P = :attr:`Trace.num_procs` (override, MaxProcs, MaxNodes, largest job), N =
       :attr:`Trace.num_nodes` (MaxNodes, else P).

    ``fixes`` keys: ``procs_from_alloc``, ``req_time_from_run``, ``dropped_nonpositive_run``,
    ``dropped_nonpositive_procs`` (jobs with a positive run time but no processor count).

    In both rule sets the normalisers (``max_exec_time`` ...) are taken over all lines of the
    trace, as in spec §1.4.

    Both end in :func:`check_job_list` (submit times non-decreasing in the final order, so
    under the rlscheduler rules job numbers must follow submit order; a kept job's submit time
    >= 0; a schedule within 2^53 s), and a rule set that keeps no job raises an
    :class:`~jaxsched.errors.SWFError` naming the file and the counts by drop rule.
    """
    if rules not in RULES:
        raise ConfigError(f"unknown rules {rules!r}; choose one of {', '.join(RULES)}")
    t = trace
    alloc, req, run0, rt = t.alloc_procs, t.req_procs, t.run, t.req_time
    if rules == "rlscheduler":
        if t.max_nodes is None:
            raise SWFError(
                t.path,
                None,
                "MaxNodes",
                "header value missing: the rlscheduler rules take the node count "
                "from '; MaxNodes: <n>' (the reference divides by zero without it); "
                "add the header line or use rules='default'",
            )
        N = int(t.max_nodes)
        P = int(t.num_procs_override or t.max_procs or N)
        procs = np.maximum(alloc, req)
        q = np.where(rt == -1, run0, rt)
        run = np.where(run0 < 0, 10, run0)
        keep = run > 0
        fixes = {
            "procs_from_alloc": int(np.count_nonzero(keep & (alloc > req))),
            "req_time_from_run": int(np.count_nonzero(keep & (rt == -1))),
            "neg_run_to_10": int(np.count_nonzero(run0 < 0)),
            "dropped_zero_run": int(np.count_nonzero(run0 == 0)),
            "kept_nonpositive_procs": int(np.count_nonzero(keep & (procs <= 0))),
            "kept_nonpositive_req_time": int(np.count_nonzero(keep & (q <= 0))),
        }
        idx = np.flatnonzero(keep)
        idx = idx[np.argsort(t.job_id[idx], kind="stable")]
    else:
        P, N = t.num_procs, t.num_nodes
        procs = np.where(req > 0, req, alloc)
        q = np.where(rt > 0, rt, run0)
        run = run0
        keep = (run0 > 0) & (procs > 0)
        fixes = {
            "procs_from_alloc": int(np.count_nonzero(keep & ~(req > 0))),
            "req_time_from_run": int(np.count_nonzero(keep & ~(rt > 0))),
            "dropped_nonpositive_run": int(np.count_nonzero(run0 <= 0)),
            "dropped_nonpositive_procs": int(np.count_nonzero((run0 > 0) & (procs <= 0))),
        }
        idx = np.flatnonzero(keep)  # file order == submit order (validated)
    as64 = lambda a: np.ascontiguousarray(a[idx], dtype=np.int64)  # noqa: E731
    if idx.size == 0:
        why = "; ".join(f"{_DROPPED[k]}: {v}" for k, v in fixes.items() if v and k in _DROPPED)
        what = f"all {t.n_jobs} job lines were dropped" if t.n_jobs else "there is no job line"
        raise SWFError(
            t.path,
            None,
            None,
            f"no job left after the {rules} rules: {what}" + (f" ({why})" if why else ""),
        )
    order = "by job number" if rules == "rlscheduler" else "in file order"
    check_job_list(t.path, rules, order, as64(t.submit), as64(run), as64(q), as64(t.line))
    return Jobs(
        submit=as64(t.submit),
        run=as64(run),
        req_time=as64(q),
        procs=as64(procs),
        req_mem=as64(t.req_mem),
        user=as64(t.user),
        group=as64(t.group),
        executable=as64(t.executable),
        job_id=as64(t.job_id),
        line=as64(t.line),
        num_procs=P,
        num_nodes=N,
        procs_per_node=P / N,
        max_exec_time=_max0(run0),
        max_req_mem=_max0(t.req_mem),
        max_user=_max0(t.user),
        max_group=_max0(t.group),
        max_executable=_max0(t.executable),
        fixes=fixes,
        rules=rules,
        path=t.path,
    )
