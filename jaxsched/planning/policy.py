"""The planners as policies of ``jaxsched simulate`` and ``jaxsched evaluate`` (issue 63).

A ``--policy`` name ``window[:…]`` or ``rollout[:…]`` (:func:`~jaxsched.planning.planner_policy`)
is a planner; the bare names run the defaults :data:`BARE` (``rollout`` =
``rollout:f3,k=8,h=64``, ``window`` = ``window:n=32``).  Planners run on the host, over the
exact oracle (:func:`~jaxsched.planning.run_planner`), once per backfilling mode given
(``--backfill``: evaluate's columns, simulate's one mode), which they combine with as
:func:`planner_for` says:

* ``rollout`` without ``bf=`` forecasts and runs with that mode; with ``bf=B`` its mode is
  fixed, and the mode given must be ``B`` (else a ConfigError: the column would be mislabelled);
* ``window`` without ``cells=`` chooses among the default heuristics × the mode's *family*:
  ``none`` → ``none``; ``rlscheduler`` or ``rlscheduler-sjbf`` → both greedy orders;
  ``easy`` or ``easy-sjbf`` → both EASY orders (it picks the order per window, so its rows in
  the two columns of one family are equal); with ``cells=`` every cell's mode must lie in the
  given mode's family (else a ConfigError);
* ``easy++`` (run time predictions) is not a planner mode (ConfigError).

In ``evaluate``'s comma-separated ``--policy`` a planner's options keep their commas: a piece
with ``=`` and no ``:`` (``k=8``) continues the planner before it (:func:`split_policies`).
"""

from __future__ import annotations

import copy
import time

import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.planning.planners import (
    DEFAULT_POLICIES,
    PLANNER_KINDS,
    RolloutPlanner,
    planner_policy,
    run_planner,
)

__all__ = ["BARE", "is_planner", "split_policies", "planner_for", "planner_starts",
           "planner_rows"]  # fmt: skip

#: what the bare names run
BARE = {"rollout": "rollout:f3,k=8,h=64", "window": "window:n=32"}


def is_planner(name: str) -> bool:
    """Whether a ``--policy`` name is a planner (``window``/``rollout``, with or without
    options)."""
    return name.strip().split(":")[0] in PLANNER_KINDS


def split_policies(items) -> list:
    """``--policy`` pieces (split at commas) with each planner's options joined back:
    ``["fcfs", "rollout:f3", "k=8", "window:n=32"]`` → ``["fcfs", "rollout:f3,k=8",
    "window:n=32"]``; ConfigError for an option with no planner before it."""
    out: list = []
    for piece in items:
        if "=" in piece and ":" not in piece:
            if not out or not is_planner(out[-1]):
                raise ConfigError(f"--policy: {piece!r} is a planner option with no planner "
                                  "(window:… or rollout:…) before it")  # fmt: skip
            out[-1] = f"{out[-1]},{piece}"
        else:
            out.append(piece)
    return out


def _family(backfill: str) -> tuple:
    if backfill == "none":
        return ("none",)
    if backfill in ("rlscheduler", "rlscheduler-sjbf"):
        return ("rlscheduler", "rlscheduler-sjbf")
    if backfill in ("easy", "easy-sjbf"):
        return ("easy", "easy-sjbf")
    raise ConfigError(f"backfill {backfill!r}: a planner runs with none, rlscheduler, easy or "
                      "their -sjbf variants (not easy++)")  # fmt: skip


def planner_for(name: str, backfill: str, compat: bool):
    """The planner ``name`` (a bare name: :data:`BARE`) running under the canonical
    backfilling mode ``backfill`` (module docstring); ConfigError where they do not combine."""
    full = BARE.get(name.strip(), name.strip())
    p = copy.copy(planner_policy(full))
    p.name = name.strip()
    fam = _family(backfill)
    if isinstance(p, RolloutPlanner):
        if p.bf is not None and p.bf != backfill:
            raise ConfigError(f"{name}: bf={p.bf} fixes its backfilling; it cannot run with "
                              f"--backfill {backfill} (give --backfill {p.bf}, or drop bf=)")  # fmt: skip
        p.bf = backfill
        p.first_cell(compat)  # its cell checked in this mode
    else:
        if p.cells is None:
            p.cells = tuple((pol, b) for pol in DEFAULT_POLICIES for b in fam)
        bad = sorted({b for _, b in p.cells if b not in fam})
        if bad:
            raise ConfigError(f"{name}: its cells backfill with {bad[0]}, outside --backfill "
                              f"{backfill}'s modes ({', '.join(fam)})")  # fmt: skip
        p.cells_for(compat)
    return p


def planner_starts(name: str, window, backfill: str, compat: bool):
    """``(start times, compute counters)`` of the planner on one sequence (a
    :class:`~jaxsched.workload.swf.Jobs` window)."""
    p = planner_for(name, backfill, compat)
    res, info = run_planner(p, window.submit, window.run, window.req_time, window.procs,
                            num_nodes=window.num_nodes, procs_per_node=window.procs_per_node,
                            compat=compat)  # fmt: skip
    return np.asarray(res.starts, dtype=np.int64), info


def planner_rows(name: str, jobs, starts, length: int, backfills, metrics, compat: bool):
    """The rows of :class:`~jaxsched.sim.evaluate.EvalResult` (``start, jobs, policy,
    backfill, metric, value``) of one planner on the sequences ``starts`` of ``jobs``, one run
    per backfilling mode, the metrics as :func:`jaxsched.sim.oracle.metrics` computes them
    (the engine's definitions); also the seconds they took."""
    from jaxsched.sim import oracle

    for b in backfills:  # every refusal before any run
        planner_for(name, b, compat)
    rows, t0 = [], time.perf_counter()
    users = getattr(jobs, "user", None)
    for st in starts:
        w = jobs.window(int(st), length)
        for b in backfills:
            s, _ = planner_starts(name, w, b, compat)
            m = oracle.metrics(w.submit, w.run, w.procs, s, num_procs=float(jobs.num_procs),
                               compat=compat,
                               users=None if users is None else w.user)  # fmt: skip
            rows += [{"start": int(st), "jobs": length, "policy": name, "backfill": b,
                      "metric": k, "value": float(m[k])} for k in metrics]  # fmt: skip
    return rows, time.perf_counter() - t0
