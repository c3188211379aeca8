"""benchmarks/paper/rlscheduler_heldout.py (issue 47 §3): the test-split draws, the best cell over
both backfilling orders, the paired differences by hand, the in-sample label, and one tiny run
of the whole script."""

from __future__ import annotations

import json

import numpy as np
from shared_data import load_benchmark

H = load_benchmark("rlscheduler_heldout")


def test_test_draw_real_trace_uses_the_last_40_percent():
    draw = H.test_draw("SDSC-SP2")
    s = draw(10_000, 300, 1024, 47)
    assert draw.range == (6000, 10_000)
    assert s.min() >= 6000 and s.max() <= 10_000 - 1024 and len(s) == 300
    np.testing.assert_array_equal(s, draw(10_000, 300, 1024, 47))
    lub = H.test_draw("Lublin-1")
    assert lub(5000, 50, 1024, 1).min() >= 0 and lub.range == (0, 5000)


def test_best_cell_spans_both_orders_and_paired_by_hand():
    vals = {("f1", "rlscheduler"): np.array([4.0, 6, 8]),
            ("sjf", "rlscheduler-sjbf"): np.array([3.0, 5, 6]),
            ("fcfs", "none"): np.array([1.0, 1, 1]),
            ("m", "rlscheduler"): np.array([2.0, 5, 8]),
            ("tuned:x", "rlscheduler"): np.array([5.0, 5, 5])}  # fmt: skip
    best = H.best_cell(vals, H.ROW_MODES["rlscheduler"], H.HEURISTICS)
    assert best == ("sjf", "rlscheduler-sjbf")  # not the none cell, not the tuned one
    d, se = H.paired(vals[("m", "rlscheduler")], vals[best])
    # differences -1, 0, 2: mean 1/3, s.e. = std(ddof=1) / sqrt(3)
    assert abs(d - 1 / 3) < 1e-12 and abs(se - np.std([-1, 0, 2], ddof=1) / 3**0.5) < 1e-12
    m = H.RT.Model("m", None, "SDSC-SP2", "bsld", "rlscheduler")
    row, js = H.model_row(vals, None, "SDSC-SP2", "rlscheduler", m, "")
    assert js["best"] == ["sjf", "rlscheduler-sjbf"] and js["tuned_diff"] == 0.0
    assert abs(js["tuned_diff_se"] - 3 / 3**0.5) < 1e-12  # m − tuned: −3, 0, 3
    assert row[4].startswith("SJF +SJBF") and row[-2:] == ["—", "—"]


def test_seen_label(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    (d / "run.json").write_text(json.dumps({"trace": "x/SDSC-SP2-1998-4.2-cln.swf.gz",
                                            "job_slice": 10000}))  # fmt: skip
    m = H.RT.Model("m", d, "SDSC-SP2", "bsld", "none")
    trace = tmp_path / "SDSC-SP2-1998-4.2-cln.swf.gz"
    assert H.seen_label(m, trace, (35823, 59705)) == ""
    assert H.seen_label(m, trace, (5000, 59705)) == " (in-sample)"
    assert H.seen_label(m, tmp_path / "lublin-1-seed20261128.swf", (0, 100)) == ""


def test_run_tiny_lublin_and_its_resume(tmp_path, monkeypatch):
    """2 sequences x 64 jobs of a fresh 3,000-job Lublin-1 test trace, no model: the fresh trace
    is the test seed's, every heuristic and the tuned priority in the three modes, one
    part-file each; a rerun reads them all (nothing evaluated) and prints the same tables, and
    a part of other starts is computed again."""
    from shared_data import shared_dir

    import jaxsched.sim.evaluate as E

    lines: list = []
    parts = H.Parts(tmp_path / "parts")
    args = (shared_dir(), ["Lublin-1"], ["V"], [], 2, 0, 64, 47, tmp_path, 3000)
    js = H.run(*args, lines.append, parts=parts)
    text = "\n".join(lines)
    assert "Table V held out" in text and "seed20261128" in js["traces"]["Lublin-1"]["path"]
    assert "F4" in text and "+SJBF" in text and "tuned" in text
    assert [r["model"] for r in js["tables"]["V"]] == [None, None]
    assert all(0 <= s <= 3000 - 64 for s in js["traces"]["Lublin-1"]["starts"])
    files = sorted(p.name for p in (tmp_path / "parts").iterdir())
    assert (
        len(files) == 9 * 3 and "Lublin-1--held-out--tuned_tuned-lublin1-easy--none.json" in files
    )

    def nothing_to_run(*a, **k):
        raise AssertionError("a stored part was evaluated again")

    monkeypatch.setattr(E, "evaluate", nothing_to_run)
    again: list = []
    assert H.run(*args, again.append, parts=parts)["tables"] == js["tables"]
    assert again[1:] == lines[1:]  # the first line has the seconds
    seen = []
    monkeypatch.setattr(E, "evaluate", lambda *a, **k: seen.append(a[3]) or nothing_to_run())
    other = H.Parts(tmp_path / "parts")
    try:  # a stored part of other starts is not reused
        H.run(*args[:7], 48, *args[8:], lambda _: None, parts=other)
    except AssertionError:
        pass
    assert seen == [["fcfs", "wfp3", "unicep"]]


def test_schedinspector_test_range_and_label(tmp_path):
    """SchedInspector's test split: the last 40 % of a real trace, all of the fresh Lublin
    trace; a run without jobs_seen on its own real trace (validation over the whole trace) is
    labelled as chosen on test jobs, the same run on the fresh Lublin trace is not."""
    S = load_benchmark("schedinspector_heldout")
    assert S.test_range("SDSC-SP2", 59715) == (35829, 59715)
    assert S.test_range("Lublin", 100_000) == (0, 100_000)
    run = {"system": "schedinspector", "trace": "x/SDSC-SP2-1998-4.2-cln.swf.gz",
           "job_slice": 10000}  # fmt: skip
    sdsc = tmp_path / "SDSC-SP2-1998-4.2-cln.swf.gz"
    assert S.seen_label(run, sdsc, (35829, 59715)) == " (chosen on test jobs)"
    lub = {**run, "trace": "traces/lublin-1.swf"}
    assert S.seen_label(lub, tmp_path / "lublin-1-seed20261128-100000.swf", (0, 100_000)) == ""
