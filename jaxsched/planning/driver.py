"""The real (exact) oracle run driven by a planner.

:func:`run_planned` simulates one sequence with the oracle's event loop
(:class:`jaxsched.sim.oracle._Run`), asking a planner at every decision point.  The planner
sees only a :class:`~jaxsched.planning.view.PlannerView` and answers a :class:`Choice`: the
heuristic × backfilling cell to run from now on, and optionally the job to commit (else the
cell's heuristic picks, exactly as the plain oracle does).  A change of cell switches the
oracle's priority keys and backfilling mode in place; the queue and running lists keep their
order (in compat mode the reference's list orders persist as the oracle keeps them).  When the
planner names a job in compat mode the queue list is first sorted by the cell's keys, as the
heuristic's own decision sorts it, so the lists evolve as under that heuristic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from jaxsched.errors import ConfigError
from jaxsched.planning.view import PlannerView, check_cell, planner_view
from jaxsched.sim.oracle import (
    SimResult,
    _checked_inputs,
    _Run,
    _unicep_dynamic,
    _wfp3_dynamic,
    priority_keys,
)

__all__ = ["Choice", "run_planned", "check_cell"]


class Choice(NamedTuple):
    """A planner's answer at one decision: the cell to run, and the job to commit (None: the
    cell's heuristic picks)."""

    policy: str
    backfill: str
    job: int | None = None


class _PlannedRun(_Run):
    def __init__(self, s, r, q, n, k, N, ppn, compat, decide, cell, record):
        super().__init__(s, r, q, n, k, N, ppn, cell[0], cell[1], compat, None, record)
        self.decide = decide
        self.policy = cell[0]
        self._keys = {cell[0]: self.keys}
        self.switches = 0
        self.view_jobs = 0  # queued + running jobs handed to the planner, summed
        self.start_order = [0] * self.L  # rank of each job among the starts (past, no leak)
        self.started = 0

    def start_job(self, b: int, backfilled: bool = False) -> None:
        self.start_order[b] = self.started
        self.started += 1
        super().start_job(b, backfilled)

    def set_cell(self, policy: str, backfill: str) -> None:
        if policy != self.policy:
            check_cell(policy, backfill, self.compat)
            self.dynamic = policy in ("wfp3", "unicep") and not self.compat
            if policy in ("wfp3", "unicep") and 0 in self.q:
                raise ConfigError(f"{policy} divides by the requested time; a job has q == 0")
            if policy not in self._keys:
                keys = None
                if not self.dynamic:
                    keys = priority_keys(policy, self.s, self.q, self.n)
                    keys = keys if self.compat else [(kv, i) for i, kv in enumerate(keys)]
                self._keys[policy] = keys
            self.keys = self._keys[policy]
            self.dynamic_fn = _wfp3_dynamic if policy == "wfp3" else _unicep_dynamic
            self.policy = policy
            self.switches += 1
        if backfill != self.backfill:
            check_cell(policy, backfill, self.compat)
            self.backfill = backfill
            self.sjbf = backfill.endswith("-sjbf")
            self.switches += 1

    def pick(self) -> int:
        view = planner_view(self, self.res.decisions, self.start_order)
        self.view_jobs += len(view.queue) + len(view.running)
        choice = self.decide(view)
        self.set_cell(choice.policy, choice.backfill)
        if choice.job is None:
            return super().pick()
        j = int(choice.job)
        if not (0 <= j < self.L and self.waiting[j]):
            raise ConfigError(f"the planner chose {j}, which is not a waiting job")
        if self.compat:
            self.queue.sort(key=self.keys.__getitem__)  # as the heuristic's decision does
        return j


def run_planned(
    submit,
    run,
    req_time,
    procs,
    *,
    num_nodes: int,
    procs_per_node: float,
    decide: Callable[[PlannerView], Choice],
    first_cell: tuple,
    compat: bool = True,
    record: bool = False,
) -> tuple[SimResult, dict]:
    """Simulate one sequence, asking ``decide(view)`` at every decision; ``first_cell`` is
    the (policy, backfill) the run is built with (a planner's first choice may switch it).

    Returns the oracle's :class:`SimResult` and ``{"decisions", "switches", "view_jobs"}``."""
    check_cell(first_cell[0], first_cell[1], compat)
    s, r, q, n, k, N, ppn = _checked_inputs(submit, run, req_time, procs, num_nodes,
                                            procs_per_node, first_cell[0], first_cell[1],
                                            compat, None)  # fmt: skip
    if not s:
        return SimResult(starts=[], backfilled=[]), {"decisions": 0, "switches": 0,
                                                     "view_jobs": 0}  # fmt: skip
    pr = _PlannedRun(s, r, q, n, k, N, ppn, compat, decide, first_cell, record)
    res = pr.run()
    return res, {"decisions": res.decisions, "switches": pr.switches, "view_jobs": pr.view_jobs}
