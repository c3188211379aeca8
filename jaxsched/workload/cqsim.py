"""CQSim's trace loading (host numpy), as the CQSim reference runs load a trace.

Rules (../shared/reference/cqsim/README.md "How the job list is loaded"; spec dras.md §1, §12
item 10):

1. every job line of the SWF file is one job; the fields used are 1 (id), 2 (submit), 4 (run
   time r), 8 (**requested** processors n) and 9 (requested time t); the machine size N is the
   header's ``MaxProcs`` (one processor = one node);
2. all tests are on int-truncated values; the run time is cut to the estimate if
   ``int(r) > int(t)``;
3. after that a job is dropped if ``id <= 0``, ``submit < 0``, ``r <= 0``, ``t <= 0`` or
   ``n <= 0``; jobs wider than N are kept. The kept list is :class:`CQSimTrace`, its length
   ``loaded_jobs``;
4. a slice (:func:`cqsim_slice`) is loaded jobs ``start .. start+n-1`` with submit times
   ``floor(density * (s - s_first))`` (density 1.0: shifted so the first job arrives at 0).

The priority flag (the DRAS loader's 19th field, spec §3) is 0 for every job by default, or 1
for jobs wider than a fraction of the machine (``priority=0.2``: ``n > 0.2 N``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jaxsched.errors import ConfigError, SWFError

__all__ = ["CQSimTrace", "CQSimJobs", "load_cqsim", "cqsim_slice"]


@dataclass(eq=False)
class CQSimTrace:
    """The loaded job list of a whole trace (after the drop rules, file order).

    Arrays int64 ``[loaded_jobs]``: ``job_id``, ``submit`` (as in the file), ``run`` (after the
    cut to the estimate), ``req_time``, ``nodes`` (field 8), ``line`` (1-based source line).
    ``num_nodes``: N (the header's MaxProcs). ``path``: the source file."""

    job_id: np.ndarray
    submit: np.ndarray
    run: np.ndarray
    req_time: np.ndarray
    nodes: np.ndarray
    line: np.ndarray
    num_nodes: int
    path: str | None = None

    @property
    def loaded_jobs(self) -> int:
        return int(self.job_id.shape[0])


@dataclass(eq=False)
class CQSimJobs:
    """One slice of a :class:`CQSimTrace`, ready for the simulator.

    Arrays int64 ``[n]`` in trace order: ``job_id``, ``submit`` (shifted: the first job at 0),
    ``run``, ``req_time``, ``nodes``; ``priority`` int32 ``[n]`` (0/1). ``num_nodes``: N;
    ``start``: the slice's first index in the loaded list."""

    job_id: np.ndarray
    submit: np.ndarray
    run: np.ndarray
    req_time: np.ndarray
    nodes: np.ndarray
    priority: np.ndarray
    num_nodes: int
    start: int = 0

    @property
    def n_jobs(self) -> int:
        return int(self.job_id.shape[0])

    def __len__(self) -> int:
        return self.n_jobs

    def as_jobs(self, path=None):
        """The slice as a :class:`~jaxsched.workload.jobs.Jobs` (rules ``"cqsim"``, one
        processor per node, unknown fields −1), e.g. for the schedule writers."""
        from jaxsched.workload.jobs import Jobs

        n, m1 = self.n_jobs, np.full(self.n_jobs, -1, np.int64)
        return Jobs(
            submit=self.submit, run=self.run, req_time=self.req_time, procs=self.nodes,
            req_mem=m1, user=m1, group=m1, executable=m1, job_id=self.job_id,
            line=np.arange(1, n + 1, dtype=np.int64), num_procs=self.num_nodes,
            num_nodes=self.num_nodes, procs_per_node=1.0, max_exec_time=int(self.run.max()),
            max_req_mem=0, max_user=0, max_group=0, max_executable=0, fixes={}, rules="cqsim",
            path=path,
        )  # fmt: skip


def load_cqsim(source, *, num_nodes: int | None = None) -> CQSimTrace:
    """The CQSim job list of an SWF file (path) or of a parsed
    :class:`~jaxsched.workload.swf.Trace`; rules in the module docstring.

    ``num_nodes`` overrides N (default: the header's MaxProcs, else MaxNodes). Raises
    :class:`~jaxsched.errors.SWFError` (one line, naming the file) for an unreadable file, a
    trace without MaxProcs/MaxNodes and no override, or one where every job is dropped."""
    from jaxsched.workload.jobs import check_job_list
    from jaxsched.workload.swf import Trace, read_swf

    # the machine-size check of read_swf is off: CQSim keeps jobs wider than the machine
    tr = source if isinstance(source, Trace) else read_swf(source, max_procs=2**62)
    N = num_nodes if num_nodes is not None else (tr.max_procs or tr.max_nodes)
    if N is None or int(N) <= 0:
        raise SWFError(
            tr.path, None, "MaxProcs", "header value missing: CQSim takes N from '; MaxProcs: <n>'"
        )
    r, t = tr.run, tr.req_time
    r = np.where(r > t, t, r)
    keep = (tr.job_id > 0) & (tr.submit >= 0) & (r > 0) & (t > 0) & (tr.req_procs > 0)
    if not keep.any():
        raise SWFError(tr.path, None, None, "no job left after CQSim's drop rules")
    cut = lambda a: np.ascontiguousarray(a[keep], dtype=np.int64)  # noqa: E731
    check_job_list(tr.path, "cqsim", "in file order", cut(tr.submit), cut(r), cut(t), cut(tr.line))
    return CQSimTrace(
        job_id=cut(tr.job_id),
        submit=cut(tr.submit),
        run=cut(r),
        req_time=cut(t),
        nodes=cut(tr.req_procs),
        line=cut(tr.line),
        num_nodes=int(N),
        path=tr.path,
    )


def cqsim_slice(
    tr: CQSimTrace,
    start: int = 0,
    n: int | None = None,
    *,
    density: float = 1.0,
    priority: float | None = None,
) -> CQSimJobs:
    """Loaded jobs ``start .. start+n-1`` (all remaining ones if ``n`` is None) with submit times
    ``floor(density * (s - s_first))``; ``priority``: None = flag 0 for all, a fraction f =
    flag 1 for jobs with ``nodes > f * N``. :class:`~jaxsched.errors.ConfigError` for a slice
    outside the loaded list or a non-positive density."""
    start = int(start)
    n = tr.loaded_jobs - start if n is None else int(n)
    if start < 0 or n < 1 or start + n > tr.loaded_jobs:
        raise ConfigError(
            f"slice [{start}, {start + n}) is outside the {tr.loaded_jobs} loaded jobs "
            f"of {tr.path or 'the trace'}"
        )
    if not density > 0:
        raise ConfigError(f"density must be > 0, got {density}")
    sl = slice(start, start + n)
    s = tr.submit[sl] - tr.submit[start]
    if density != 1.0:
        s = np.floor(density * s.astype(np.float64)).astype(np.int64)
    nodes = tr.nodes[sl].copy()
    prio = np.zeros(n, np.int32) if priority is None else (nodes > priority * tr.num_nodes)
    return CQSimJobs(
        job_id=tr.job_id[sl].copy(),
        submit=s,
        run=tr.run[sl].copy(),
        req_time=tr.req_time[sl].copy(),
        nodes=nodes,
        priority=np.asarray(prio, np.int32),
        num_nodes=tr.num_nodes,
        start=start,
    )
