"""Smoke test of benchmarks/paper/baselines_heldout.py: the table of heuristics × backfilling modes on
test-range sequences, its paired differences and its refusals."""

from __future__ import annotations

import pytest
from shared_data import REPO, load_benchmark


def test_table_rows_and_reference(capsys, monkeypatch):
    mod = load_benchmark("baselines_heldout")
    monkeypatch.setattr(mod, "use_all_cpu_cores", lambda: None)
    trace = str(REPO / "traces" / "lublin-1.swf")
    argv = [trace, "--jobs", "64", "--sequences", "3", "--policy", "fcfs,sjf",
            "--backfill", "easy,easy-sjbf", "--test-range", "500,1000"]  # fmt: skip
    assert mod.main(argv) == 0
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith("| fcfs") or ln.startswith("| sjf")]
    assert len(rows) == 4
    head = out.splitlines()[0]
    assert "jobs [500, 1000)" in head and "paired difference to" in head
    ref = head.rsplit("paired difference to ", 1)[1].split(" / ")
    ref_row = [r for r in rows if r.startswith(f"| {ref[0]} | {ref[1]} |")]
    assert len(ref_row) == 1 and ref_row[0].endswith("+0.0000 ± 0 |")
    with pytest.raises(SystemExit, match="shorter than one"):
        mod.main([trace, "--jobs", "64", "--test-range", "0,10"])
