"""What a planner may know at a decision point, and a forward simulator over it.

A planner looks ahead by simulating the jobs in the system now.  :func:`planner_view` copies
out of a live oracle run (:class:`jaxsched.sim.oracle._Run`) exactly the state a real
scheduler has: the clock, the free nodes, the queued jobs (submit, requested time, processors,
nodes) in the queue list's order, and the running jobs (start, requested time, processors,
nodes) in (start, index) order.  It holds no actual run time of a job that has not finished
and no job that has not arrived: a running job's end is predicted as EASY's end estimate
``max(start + requested, now)`` and a queued job's run time as its requested time.  The view
is a fresh immutable object of plain ints and tuples; it keeps no reference to the run or to
its per-job arrays.  (The running list is given in the order the jobs started, not the
oracle's list order: the oracle keeps that list sorted by *actual* finish, which would leak.)

The forecast uses the oracle's own event loop, so it is exact when nothing is unknown (no job
arrives any more and every run time equals its request) in the correct mode, where release
ties go to the job started first; in compat mode the reference breaks release ties by its
list's history of sorts by actual finish, which the view does not hold, so there a forecast
may differ from such a run at equal predicted ends.

:func:`forecast` runs one heuristic × backfilling on a view's jobs with the same oracle event
loop (no arrivals), to the end of the known queue or for ``horizon`` decisions, optionally
committing a given job first, and returns the predicted start times and a cost.

**The cost** is the predicted bounded slowdown summed over the view's queued jobs:
``max(1, (start - submit + q) / max(q, 10))`` with the requested time ``q`` standing for the
run time and the wait counted from the job's submit (so waits already spent count, equally for
every candidate).  A queued job not started when a ``horizon`` stops the forecast counts as
if it started at the forecast's clock then (a lower bound of its wait).  Lower is better; the
sum is over the same jobs for every candidate of one view, so costs of one view compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from jaxsched.errors import ConfigError
from jaxsched.sim.oracle import BACKFILLS, POLICIES, _Run

__all__ = ["QueuedJob", "RunningJob", "PlannerView", "Forecast", "planner_view", "forecast"]


class QueuedJob(NamedTuple):
    """A waiting job: its sequence index, submit time, requested time, processors, nodes."""

    index: int
    submit: int
    req: int
    procs: int
    nodes: int


class RunningJob(NamedTuple):
    """A running job: its sequence index, start, requested time, processors, nodes."""

    index: int
    start: int
    req: int
    procs: int
    nodes: int


@dataclass(frozen=True, slots=True)
class PlannerView:
    """The state a planner may simulate (see the module docstring): no run time, no future."""

    t: int
    free_nodes: int
    num_nodes: int
    procs_per_node: float
    queue: tuple  # QueuedJob in the queue list's order (compat: the reference's list order)
    running: tuple  # RunningJob in the order they started
    decision: int  # how many decisions the real run has taken before this one

    def predicted_end(self, job: RunningJob) -> int:
        """EASY's end estimate of a running job: ``max(start + requested, now)``."""
        return max(job.start + job.req, self.t)


def planner_view(run: _Run, decision: int = 0, start_order=None) -> PlannerView:
    """The :class:`PlannerView` of a live oracle run at a decision point (copied out).

    ``start_order[i]``: the rank of job i among the starts so far (the driver counts them);
    the running jobs are listed in start order, ties (none: without it) by index."""
    s, q, n, k, st = run.s, run.q, run.n, run.k, run.start
    queue = tuple(QueuedJob(i, s[i], q[i], n[i], k[i]) for i in run.queue)
    order = start_order if start_order is not None else range(run.L)
    running = tuple(
        RunningJob(x, st[x], q[x], n[x], k[x])
        for x in sorted(run.running, key=lambda x: (st[x], order[x], x))
    )
    return PlannerView(
        t=int(run.t),
        free_nodes=int(run.F),
        num_nodes=int(run.N),
        procs_per_node=float(run.ppn),
        queue=queue,
        running=running,
        decision=int(decision),
    )


@dataclass(frozen=True)
class Forecast:
    """One forward simulation: ``starts`` maps the sequence index of every queued job the
    forecast started to its predicted start; ``cost`` (module docstring); ``clock`` where it
    stopped; ``decisions`` it simulated."""

    starts: dict
    cost: float
    clock: int
    decisions: int


class _ForecastRun(_Run):
    """The oracle's event loop on a view's jobs only (local indices in sequence-index order,
    so the correct mode's ties to the lower index agree with the real run's)."""

    def __init__(self, view: PlannerView, policy: str, backfill: str, compat: bool):
        jobs = sorted([(j.index, j, True) for j in view.queue] +
                      [(j.index, j, False) for j in view.running])  # fmt: skip
        local = {g: i for i, (g, _, _) in enumerate(jobs)}
        self.glob = [g for g, _, _ in jobs]
        s, r, q, n, k = [], [], [], [], []
        for _g, j, queued in jobs:
            s.append(j.submit if queued else j.start)  # a running job's submit is never read
            q.append(j.req)
            n.append(j.procs)
            k.append(j.nodes)
            r.append(j.req if queued else view.predicted_end(j) - j.start)
        super().__init__(s, r, q, n, k, view.num_nodes, view.procs_per_node, policy, backfill,
                         compat, None, False)  # fmt: skip
        self.t = view.t
        self.F = view.free_nodes
        self.queue = [local[j.index] for j in view.queue]
        self.waiting = [False] * self.L
        for i in self.queue:
            self.waiting[i] = True
        self.running = []
        for j in view.running:
            x = local[j.index]
            self.start[x] = j.start
            self.fin[x] = view.predicted_end(j)
            self.est[x] = j.start + j.req
            self.running.append(x)
        self.nxt = self.L  # nothing arrives

    def forecast(self, horizon: int | None, first: int | None) -> int:
        """Run until the queue is empty or ``horizon`` decisions; returns the decisions."""
        wait = self.wait_for(self.backfill)
        d = 0
        while self.queue and (horizon is None or d < horizon):
            if d == 0 and first is not None:
                if self.compat:
                    self.queue.sort(key=self.keys.__getitem__)  # as the base rule's decision
                j = first
            else:
                j = self.pick()
            d += 1
            if self.k[j] > self.F:
                wait(j, self.nxt)
            self.start_job(j)
        return d


def check_cell(policy: str, backfill: str, compat: bool) -> None:
    """ConfigError unless ``policy`` × ``backfill`` is a cell the oracle runs in this mode."""
    if policy not in POLICIES:
        raise ConfigError(f"unknown policy {policy!r}; expected one of {POLICIES}")
    if backfill not in BACKFILLS:
        raise ConfigError(f"unknown backfill {backfill!r}; expected one of {BACKFILLS}")
    if compat and backfill.startswith("easy"):
        raise ConfigError(f"backfill={backfill!r} has no reference counterpart; use compat=False")


def forecast(
    view: PlannerView,
    policy: str,
    backfill: str,
    *,
    compat: bool,
    horizon: int | None = None,
    first: int | None = None,
) -> Forecast:
    """Simulate ``policy`` × ``backfill`` forward on ``view``'s jobs (module docstring).

    ``first``: the sequence index of a queued job to commit at the first decision (then the
    policy); ``horizon``: stop after that many decisions (None: until the queue is empty)."""
    check_cell(policy, backfill, compat)
    if not view.queue:
        return Forecast({}, 0.0, view.t, 0)
    run = _ForecastRun(view, policy, backfill, compat)
    if first is not None:
        loc = [i for i, g in enumerate(run.glob) if g == first]
        if not loc or not run.waiting[loc[0]]:
            raise ConfigError(f"first={first} is not a queued job of the view")
        first = loc[0]
    d = run.forecast(horizon, first)
    return _finish(run, view, d)


def _finish(run: _ForecastRun, view: PlannerView, d: int) -> Forecast:
    local = {g: i for i, g in enumerate(run.glob)}
    starts, cost, clock = {}, 0.0, run.t
    for j in view.queue:
        x = local[j.index]
        sx = run.start[x]
        if sx >= 0:
            starts[j.index] = sx
        else:
            sx = clock
        cost += max(1.0, (sx - j.submit + j.req) / max(j.req, 10))
    return Forecast(starts, cost, clock, d)
