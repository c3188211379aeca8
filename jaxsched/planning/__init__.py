"""Look-ahead planners on the host, over the exact oracle (issue 63).

* ``view.py``: :class:`PlannerView`, what a planner may know at a decision point (no actual run
  time of an unfinished job, no future job), and :func:`forecast`, a forward simulation of one
  heuristic × backfilling on it;
* ``driver.py``: :func:`run_planned`, the real oracle run switching cells / committing the
  planner's jobs;
* ``planners.py``: the per-window cell selection and the rollout over a base rule, and
  :func:`planner_policy` (names such as ``window:n=32`` or ``rollout:f3,k=8,h=64``).
"""

from jaxsched.planning.driver import Choice, run_planned
from jaxsched.planning.planners import (
    DEFAULT_POLICIES,
    RolloutPlanner,
    WindowPlanner,
    planner_policy,
    run_planner,
)
from jaxsched.planning.view import Forecast, PlannerView, forecast, planner_view

__all__ = [
    "Choice",
    "DEFAULT_POLICIES",
    "Forecast",
    "PlannerView",
    "RolloutPlanner",
    "WindowPlanner",
    "forecast",
    "planner_policy",
    "planner_view",
    "run_planned",
    "run_planner",
]
