"""benchmarks/dras_seeds.py: the per-run picks by average wait and within the max-wait bound,
by hand, and the choice across two hand-written runs on SDSC-SP2 (the bound from the oracle's
FCFS + EASY on the validation month: 34.29 h, RESULTS.md §12.3)."""

from __future__ import annotations

import json

import pytest
from shared_data import SHARED, load_benchmark

DS = load_benchmark("dras_seeds")
TRACE = str(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
H = 3600.0


def _row(epoch, wait, max_h):
    return {"epoch": epoch, "val_wait": wait, "val_max_wait": max_h * H}


def test_best_epochs_by_hand():
    rows = [_row(1, 700.0, 20), _row(2, 720.0, 10), _row(3, 710.0, 13), {"epoch": 4}]
    by_wait, inside = DS.best_epochs(rows, 12 * H)
    assert by_wait["epoch"] == 1 and inside["epoch"] == 2
    assert DS.best_epochs(rows[:1], 12 * H)[1] is None  # nothing within the bound


def test_choice_across_runs(tmp_path):
    from jaxsched.systems.dras.config import RunConfig

    runs = []
    for name, rows in (("a", [_row(1, 2000.0, 60), _row(2, 3000.0, 40)]),
                       ("b", [_row(1, 2900.0, 30)])):  # fmt: skip
        d = tmp_path / name
        d.mkdir()
        (d / "run.json").write_text(json.dumps(RunConfig(trace=TRACE).to_dict()))
        (d / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        runs.append(str(d))
    lines = []
    out = DS.main(runs, out=lines.append)
    assert out["bound"] / H == pytest.approx(1.5 * 34.29, abs=0.01)  # 51.4 h
    assert out["by_wait"] == runs[0] and out["by_bound"] == runs[1]
    assert out["picks"][runs[0]][1]["epoch"] == 2  # 3000 s at 40 h: within 51.4 h
    assert lines[-1].endswith(f"{runs[1]} epoch 1")
