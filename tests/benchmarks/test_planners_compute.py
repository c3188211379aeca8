"""benchmarks/paper/planners_compute.py: the planners' margin against compute, on two made-up
folders of per-sequence files (the baseline chosen on validation, the test points, the PNG)."""

from __future__ import annotations

import json

import pytest
from shared_data import load_benchmark

C = load_benchmark("planners_compute")
H = C.H


def _rec(base: float, planner: float, sim: int) -> dict:
    cells = {f"{p}/{b}": base + 10 + i for i, (p, b) in
             enumerate((p, b) for p in H.O.POLICIES for b in H.BFS)}  # fmt: skip
    cells["f4/rlscheduler-sjbf"] = base
    info = {"bsld": planner, "decisions": 100, "seconds": 1.0, "simulated_decisions": sim}
    return {"start": 0, "jobs": 100, "cells": cells, "planners": {"window:n=32": info}}


def test_points_and_plot(tmp_path, capsys):
    for split, recs in (("validation", [_rec(10, 12, 500), _rec(20, 22, 700)]),
                        ("test", [_rec(10, 9, 800), _rec(30, 27, 1200)])):  # fmt: skip
        d = tmp_path / "T" / split
        d.mkdir(parents=True)
        for i, r in enumerate(recs):
            (d / f"seq-{i:03d}.json").write_text(json.dumps(r))
    pts = C.points(tmp_path)
    test = [p for p in pts if p["split"] == "test"]
    assert [p["baseline"] for p in pts] == ["f4/rlscheduler-sjbf"] * 2
    assert test[0]["pct"] == pytest.approx(100 * -2 / 20)  # (9 + 27 - 10 - 30) / 2 / 20
    assert test[0]["sim_per_decision"] == 10.0
    out = tmp_path / "p.png"
    assert C.main(["--data", str(tmp_path), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| T | test | `window:n=32` | 2 |" in capsys.readouterr().out
