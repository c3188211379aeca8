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
