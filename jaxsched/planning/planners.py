"""Look-ahead planners over the oracle: per-window cell selection and rollout over a base rule.

Both simulate forward on a :class:`~jaxsched.planning.view.PlannerView` (the jobs in the
system now, requested times standing for run times; :func:`~jaxsched.planning.view.forecast`
documents the cost) and drive a real, exact oracle run (:func:`run_planner`).

Names (:func:`planner_policy`)::

    window:n=32,w=3600,h=256,q=2,cells=f1+f3+saf+sjf/rlscheduler+rlscheduler-sjbf
    rollout:f3,k=8,h=64,bf=rlscheduler,q=2

``window``: every ``n`` decisions (default 32) and/or every ``w`` seconds of simulated time
(default: no time rule), at the first decision with at least two queued jobs (with one, every
cell commits the same job), forecast each candidate cell on the view (``h`` decisions, default
``all``: to the end of the known queue) and run the cheapest until the next window (ties keep
the current cell, then the earlier cell).  ``cells=POLICIES/BACKFILLS`` is their cross product
(``+``-separated; several products joined by ``;``); the default is :data:`DEFAULT_POLICIES` ×
both greedy backfilling orders (``rlscheduler``, ``rlscheduler-sjbf``; in the correct mode
``easy``, ``easy-sjbf``).  The first window runs the first cell.

``q=Q`` (both planners; default 2): plan only at a decision with at least ``Q`` queued jobs
(a heavy-load gate: below it the window planner keeps its cell and waits, the rollout commits
the base rule's job).

``rollout:BASE``: at each decision with at least two queued jobs (``q``), for each of the base rule's
first ``k`` jobs (default 8) commit it, forecast ``h`` decisions (default 64) with the base rule
and backfilling ``bf`` (default ``rlscheduler``; in the correct mode ``easy``), and commit the
candidate of lowest predicted cost (ties to the base's order).  ``k=1`` is the base rule.
"""

from __future__ import annotations

from jaxsched.errors import ConfigError
from jaxsched.planning.driver import Choice, check_cell, run_planned
from jaxsched.planning.view import PlannerView, forecast
from jaxsched.sim.oracle import POLICIES, _static_key, _unicep_dynamic, _wfp3_dynamic

__all__ = [
    "DEFAULT_POLICIES",
    "WindowPlanner",
    "RolloutPlanner",
    "planner_policy",
    "run_planner",
    "PLANNER_KINDS",
]

#: the window planner's default heuristics (every oracle policy but lcfs)
DEFAULT_POLICIES = tuple(p for p in POLICIES if p != "lcfs")
PLANNER_KINDS = ("window", "rollout")


def _bfs(compat: bool) -> tuple:
    return ("rlscheduler", "rlscheduler-sjbf") if compat else ("easy", "easy-sjbf")


class _Stats:
    """Compute counters of one run: forecasts, the decisions they simulated, choices made."""

    def __init__(self):
        self.forecasts = 0
        self.simulated = 0
        self.jobs = 0  # jobs the forecasts started (committed and backfilled)
        self.choices = 0

    def as_dict(self) -> dict:
        return {"forecasts": self.forecasts, "simulated_decisions": self.simulated,
            "simulated_jobs": self.jobs,
                "choices": self.choices}  # fmt: skip


class WindowPlanner:
    """Per-window selection of a heuristic × backfilling cell (module docstring)."""

    kind = "window"

    def __init__(self, n: int | None = 32, w: int | None = None, h: int | None = None,
                 cells: tuple | None = None, name: str | None = None, q: int = 2):  # fmt: skip
        self.n, self.w, self.h, self.cells, self.q = n, w, h, cells, max(2, q)
        self.name = name or "window"

    def cells_for(self, compat: bool) -> tuple:
        cells = self.cells or tuple((p, b) for p in DEFAULT_POLICIES for b in _bfs(compat))
        for p, b in cells:
            check_cell(p, b, compat)
        return cells

    def first_cell(self, compat: bool) -> tuple:
        return self.cells_for(compat)[0]

    def begin(self, compat: bool):
        cells = self.cells_for(compat)
        stats = _Stats()
        st = {"cell": 0, "due": True, "d": 0, "t": None}
        n, w, h, qmin = self.n, self.w, self.h, self.q

        def decide(view: PlannerView) -> Choice:
            d, t = view.decision, view.t
            if not st["due"] and ((n is not None and d - st["d"] >= n) or
                                  (w is not None and t - st["t"] >= w)):  # fmt: skip
                st["due"] = True
            if st["due"] and len(view.queue) >= qmin and len(cells) > 1:
                costs = [forecast(view, p, b, compat=compat, horizon=h) for p, b in cells]
                stats.forecasts += len(costs)
                stats.simulated += sum(f.decisions for f in costs)
                stats.jobs += sum(len(f.starts) for f in costs)
                stats.choices += 1
                c = [f.cost for f in costs]
                best = min(range(len(c)), key=c.__getitem__)
                if c[best] < c[st["cell"]]:
                    st["cell"] = best
                st["due"], st["d"], st["t"] = False, d, t
            p, b = cells[st["cell"]]
            return Choice(p, b, None)

        decide.stats = stats
        return decide


def _base_order(view: PlannerView, base: str, compat: bool) -> list:
    """The queued jobs' indices in the order the base heuristic would take them."""
    q = view.queue
    if compat:  # a stable sort of the list by the static key; the head is the oracle's pick
        return [j.index for j in sorted(q, key=lambda j: _static_key(base, j.submit, j.req,
                                                                        j.procs))]  # fmt: skip
    if base in ("wfp3", "unicep"):
        fn = _wfp3_dynamic if base == "wfp3" else _unicep_dynamic
        keys = [(fn(view.t - j.submit, j.req, j.procs), j.index) for j in q]
    else:
        keys = [(_static_key(base, j.submit, j.req, j.procs), j.index) for j in q]
    return [i for _, i in sorted(keys)]


class RolloutPlanner:
    """Rollout over a base rule (module docstring)."""

    kind = "rollout"

    def __init__(self, base: str, k: int = 8, h: int | None = 64, bf: str | None = None,
                 name: str | None = None, q: int = 2):  # fmt: skip
        self.base, self.k, self.h, self.bf, self.q = base, k, h, bf, max(2, q)
        self.name = name or f"rollout:{base}"

    def first_cell(self, compat: bool) -> tuple:
        bf = self.bf or _bfs(compat)[0]
        check_cell(self.base, bf, compat)
        return (self.base, bf)

    def begin(self, compat: bool):
        base, bf = self.first_cell(compat)
        k, h, qmin = self.k, self.h, self.q
        stats = _Stats()

        def decide(view: PlannerView) -> Choice:
            if k == 1 or len(view.queue) < qmin:
                return Choice(base, bf, None)
            cands = _base_order(view, base, compat)[:k]
            fc = [forecast(view, base, bf, compat=compat, horizon=h, first=c) for c in cands]
            stats.forecasts += len(fc)
            stats.simulated += sum(f.decisions for f in fc)
            stats.jobs += sum(len(f.starts) for f in fc)
            stats.choices += 1
            best = min(range(len(fc)), key=lambda i: fc[i].cost)
            return Choice(base, bf, cands[best])

        decide.stats = stats
        return decide


def run_planner(planner, submit, run, req_time, procs, *, num_nodes: int,
                procs_per_node: float, compat: bool = True, record: bool = False):  # fmt: skip
    """One sequence scheduled by ``planner`` (exact oracle run): ``(SimResult, stats)`` with
    stats = decisions, switches, view_jobs, forecasts, simulated_decisions, choices."""
    cells = planner.cells_for(compat) if hasattr(planner, "cells_for") else ()
    cells = (*cells, planner.first_cell(compat))
    divides = sorted({p for p, _ in cells if p in ("wfp3", "unicep")})
    if divides and any(int(v) == 0 for v in req_time):
        raise ConfigError(f"{planner.name}: {divides[0]} divides by the requested time; a job has "
                          "req_time == 0 (name cells without wfp3/unicep)")  # fmt: skip
    decide = planner.begin(compat)
    res, info = run_planned(submit, run, req_time, procs, num_nodes=num_nodes,
                            procs_per_node=procs_per_node, decide=decide,
                            first_cell=planner.first_cell(compat), compat=compat,
                            record=record)  # fmt: skip
    info.update(decide.stats.as_dict())
    return res, info


# ----------------------------------------------------------------------------------------------
# names
# ----------------------------------------------------------------------------------------------
def _positive(kind: str, key: str, v: str, allow_all: bool = False):
    if allow_all and v == "all":
        return None
    try:
        x = int(v)
    except ValueError:
        x = 0
    if x < 1:
        more = " or 'all'" if allow_all else ""
        raise ConfigError(f"{kind}: {key}={v!r} must be a positive integer{more}")
    return x


def _cells(v: str) -> tuple:
    out = []
    for prod in v.split(";"):
        if prod.count("/") != 1:
            raise ConfigError(f"window: cells={v!r}: each product is POLICY+…/BACKFILL+…")
        ps, bs = prod.split("/")
        for p in ps.split("+"):
            if p not in POLICIES:
                raise ConfigError(f"window: unknown policy {p!r} in cells; expected {POLICIES}")
            for b in bs.split("+"):
                if (p, b) not in out:
                    out.append((p, b))
    for _p, b in out:
        if b not in ("none", "rlscheduler", "easy", "rlscheduler-sjbf", "easy-sjbf"):
            raise ConfigError(f"window: unknown backfill {b!r} in cells")
    return tuple(out)


def _options(kind: str, rest: str, allowed: tuple) -> dict:
    opts: dict = {}
    for part in filter(None, rest.split(",")):
        key, eq, v = part.partition("=")
        if not eq or not v:
            raise ConfigError(f"{kind}: option {part!r} must be KEY=VALUE ({', '.join(allowed)})")
        if key not in allowed:
            raise ConfigError(f"{kind}: unknown option {key!r}; expected one of {allowed}")
        if key in opts:
            raise ConfigError(f"{kind}: option {key!r} given twice")
        opts[key] = v
    return opts


def planner_policy(name: str):
    """The planner a name describes (module docstring); ConfigError for a bad name."""
    kind, _, rest = name.partition(":")
    if kind == "window":
        o = _options("window", rest, ("n", "w", "h", "cells", "q"))
        n = _positive("window", "n", o["n"]) if "n" in o else None
        w = _positive("window", "w", o["w"]) if "w" in o else None
        if n is None and w is None:
            n = 32
        h = _positive("window", "h", o.get("h", "all"), allow_all=True)
        cells = _cells(o["cells"]) if "cells" in o else None
        q = _positive("window", "q", o.get("q", "2"))
        return WindowPlanner(n=n, w=w, h=h, cells=cells, name=name, q=q)
    if kind == "rollout":
        base, _, rest = rest.partition(",")
        if base not in POLICIES:
            raise ConfigError(f"rollout: base rule {base!r} unknown; expected one of {POLICIES}")
        o = _options("rollout", rest, ("k", "h", "bf", "q"))
        k = _positive("rollout", "k", o.get("k", "8"))
        h = _positive("rollout", "h", o.get("h", "64"), allow_all=True)
        bf = o.get("bf")
        if bf is not None and bf not in ("none", "rlscheduler", "easy", "rlscheduler-sjbf",
                                         "easy-sjbf"):  # fmt: skip
            raise ConfigError(f"rollout: unknown backfill {bf!r}")
        q = _positive("rollout", "q", o.get("q", "2"))
        return RolloutPlanner(base, k=k, h=h, bf=bf, name=name, q=q)
    raise ConfigError(f"unknown planner {name!r}; expected window:… or rollout:BASE,…")
