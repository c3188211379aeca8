"""Tiny SWF traces shared by test files (the same trace gives the same compiled programs, which
the suite's compile cache then shares between the files)."""

from __future__ import annotations

import numpy as np


def schedinspector_tiny(path):
    """80 jobs on 8 processors (run times 10-3000 s, 1-8 processors, seed 5), written to
    ``path``; returns ``path``. Used by the SchedInspector training and evaluate tests."""
    rng = np.random.default_rng(5)
    lines = ["; MaxNodes: 8", "; MaxProcs: 8"]
    s = np.sort(rng.integers(0, 20000, 80))
    for i in range(80):
        r, n = int(rng.choice([10, 100, 900, 3000])), int(rng.choice([1, 2, 4, 8]))
        lines.append(f"{i + 1} {s[i]} 0 {r} {n} -1 -1 {n} {r} -1 1 1 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def cores_tiny(path, n: int, seed: int, gaps, cores, runs):
    """``n`` jobs on 256 cores for the split-window tests, written to ``path``; returns
    ``path``. ``RandomState(seed)`` draws the submit gaps (``gaps``, s) first, then per job its
    cores from ``cores`` and its run time from ``runs`` (s); requested = used cores."""
    rng = np.random.RandomState(seed)
    sub = np.cumsum(rng.choice(gaps, size=n))
    lines = ["; MaxNodes: 256", "; MaxProcs: 256"]
    for i in range(n):
        c, r = rng.choice(cores), rng.choice(runs)
        lines.append(f"{i + 1} {sub[i]} 0 {r} {c} -1 -1 {c} -1 -1 1 1 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def planner_sequence(rng, L: int = 14, nodes: int = 6):
    """A random tiny sequence for the planner tests: ``(submit, run, req, procs)`` int lists of
    ``L`` jobs on ``nodes`` one-processor nodes, arrivals in bursts (queues of several jobs),
    run times 0-60 s, requested times mostly >= run (a few jobs overrun their request)."""
    gaps = rng.choice([0, 0, 1, 3, 10, 25], size=L)
    gaps[0] = int(rng.integers(0, 5))
    submit = np.cumsum(gaps)
    run = rng.integers(0, 61, size=L)
    req = np.maximum(1, run + rng.choice([0, 0, 5, 20, 60, -5], size=L))
    procs = rng.integers(1, nodes + 1, size=L)
    return [[int(v) for v in a] for a in (submit, run, req, procs)]
