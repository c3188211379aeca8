"""DRAS's baselines of spec ``dras.md`` §8 (host side, plain Python) for the CQSim oracle.

Each baseline except FCFS + EASY is a policy of the oracle's ``mode="immediate"``
(:func:`jaxsched.sim.oracle_cqsim.simulate_cqsim`): same events, one scheduling pass per submit
and finish, and in a pass the policy is asked ``policy(view) -> [jobs]`` until it answers an empty
list; every job it names starts now.  No reservation, no backfilling — so every job starts
"ready" (Table IV's structure).

* :func:`binpacking` — the largest runnable job (n_j <= free nodes), arrival order on ties.
* :class:`RandomPolicy` — a uniformly random runnable job (``random.Random(seed)``).
* :class:`Optimization` — a 0-1 knapsack over the whole queue by dynamic programming over the
  free nodes, solved once per call (the second call of a pass finds nothing more: all values
  are positive, so an optimum leaves no runnable job out that still fits).  Item value
  ``"capability"`` (Theta, spec §8): (w_j / t_max + n_j / N + n_j / N) / 3 with t_max the longest
  queued time floored at 6 h (the type-5 reward's floor, §6.2); ``"capacity"`` (Cori): 1 / t_j.
  Ties: items are taken in arrival order and a later item replaces a solution only if it is
  strictly better, so among equal optima the one of earlier jobs wins.
* :func:`decima_policy` — the Decima-PG hook: wraps ``pick(window, runnable, view) -> slot`` over
  the first W waiting jobs with a runnable mask (a trained DRAS-PG network masked to runnable
  jobs, §8); the pass ends when no windowed job fits.
* :data:`BASELINES` / :func:`baseline_kwargs` — the §8 set by name, as keyword arguments of
  ``simulate_cqsim`` (``"fcfs"`` is ``mode="easy"``; also ``"easy-sjbf"``, issue 47 §2's EASY
  with shortest-job-first backfilling, ``mode="easy-sjbf"``).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from jaxsched.errors import ConfigError
from jaxsched.sim.oracle_cqsim import WAIT_FLOOR, View

__all__ = [
    "BASELINES",
    "binpacking",
    "RandomPolicy",
    "Optimization",
    "knapsack",
    "decima_policy",
    "baseline_kwargs",
]

BASELINES = ("fcfs", "binpacking", "random", "optimization")


def _runnable(view: View) -> list:
    """Waiting jobs (arrival order) that fit in the free nodes now."""
    return [j for j in view.queue if view.nodes[j] <= view.free]


def binpacking(view: View) -> list:
    """The largest runnable job, the earliest arrival on ties; [] if none fits."""
    best = -1
    for j in _runnable(view):
        if best < 0 or view.nodes[j] > view.nodes[best]:
            best = j
    return [best] if best >= 0 else []


class RandomPolicy:
    """A uniformly random runnable job per call (seeded, reproducible)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(int(seed))

    def __call__(self, view: View) -> list:
        jobs = _runnable(view)
        return [jobs[self.rng.randrange(len(jobs))]] if jobs else []


def knapsack(values, sizes, capacity: int) -> list:
    """0-1 knapsack by dynamic programming over integer capacity: the indices (ascending) of a
    subset with sum(sizes) <= capacity maximising sum(values); items in order, strict
    improvement only (earlier items win ties).  O(len(values) * capacity)."""
    cap = int(capacity)
    best = [0.0] * (cap + 1)
    take = []
    for v, s in zip(values, sizes):
        row = [False] * (cap + 1)
        for c in range(cap, s - 1, -1):
            cand = best[c - s] + v
            if cand > best[c]:
                best[c] = cand
                row[c] = True
        take.append(row)
    chosen, c = [], cap
    for i in range(len(take) - 1, -1, -1):
        if take[i][c]:
            chosen.append(i)
            c -= sizes[i]
    return chosen[::-1]


class Optimization:
    """The knapsack baseline; ``value="capability"`` or ``"capacity"`` (module docstring)."""

    def __init__(self, value: str = "capability") -> None:
        if value not in ("capability", "capacity"):
            raise ConfigError(f"unknown knapsack value {value!r}; expected capability|capacity")
        self.value = value

    def item_values(self, view: View, jobs) -> list:
        if self.value == "capacity":
            return [1.0 / view.req_time[j] for j in jobs]
        waits = [view.t - view.submit[j] for j in view.queue]
        t_max = max(max(waits), WAIT_FLOOR)
        N = view.N
        return [((view.t - view.submit[j]) / t_max + 2 * view.nodes[j] / N) / 3 for j in jobs]

    def __call__(self, view: View) -> list:
        jobs = _runnable(view)
        if not jobs:
            return []
        values = self.item_values(view, jobs)
        return [jobs[i] for i in knapsack(values, [view.nodes[j] for j in jobs], view.free)]


def decima_policy(pick: Callable, window: int = 50) -> Callable:
    """Decima-PG as an immediate-mode policy: ``pick(window_jobs, runnable, view) -> slot`` with
    ``window_jobs`` the first ``window`` waiting jobs and ``runnable`` a tuple of bools (the
    mask); the chosen slot must be runnable (ConfigError otherwise)."""

    def policy(view: View) -> list:
        jobs = view.queue[:window]
        mask = tuple(view.nodes[j] <= view.free for j in jobs)
        if not any(mask):
            return []
        slot = int(pick(jobs, mask, view))
        if not (0 <= slot < len(jobs) and mask[slot]):
            raise ConfigError(f"Decima pick returned slot {slot}, which is not a runnable job")
        return [jobs[slot]]

    return policy


def baseline_kwargs(name: str, seed: int = 0, value: str = "capability") -> dict:
    """Keyword arguments of ``simulate_cqsim`` for baseline ``name`` (one of :data:`BASELINES`)."""
    if name == "fcfs":
        return {"mode": "easy"}
    if name == "easy-sjbf":  # FCFS + EASY, backfill candidates shortest estimate first
        return {"mode": "easy-sjbf"}
    if name == "binpacking":
        return {"mode": "immediate", "policy": binpacking}
    if name == "random":
        return {"mode": "immediate", "policy": RandomPolicy(seed)}
    if name == "optimization":
        return {"mode": "immediate", "policy": Optimization(value)}
    raise ConfigError(f"unknown baseline {name!r}; expected one of {BASELINES} or easy-sjbf")
