"""``benchmarks/experiments/splitwindow_frontier.py``: the two rule families at their ends equal the
heuristics they reduce to (aged 0 is SJF, limit 0 is FCFS, both with EASY), episode for
episode, on a tiny trace with 20-placement episodes."""

from __future__ import annotations

import json

import pytest
from shared_data import load_benchmark
from tiny_traces import cores_tiny


def test_family_ends_equal_sjf_and_fcfs_with_easy(tmp_path, capsys):
    (tmp_path / "traces").mkdir()
    cores_tiny(tmp_path / "traces" / "t.swf", 100, 3, [0, 1, 2], [8, 64, 150, 200], [50, 200, 600])
    js = tmp_path / "f.json"
    argv = ["--shared", str(tmp_path), "--trace", "t.swf", "--episodes", "3", "--placements",
            "20", "--aged", "0,1e6", "--limit", "0", "--json", str(js)]  # fmt: skip
    assert load_benchmark("splitwindow_frontier").main(argv) == 0
    assert "3 episodes, 5 rules" in capsys.readouterr().out
    rows = {r["name"]: r for r in json.loads(js.read_text())["rows"]}
    assert list(rows) == ["SJF+EASY", "FCFS+EASY", "aged 0", "aged 1e+06", "limit 0"]
    assert len(rows["aged 0"]["per_episode"]["avg_wait"]) == 3
    for name, same in (("aged 0", "SJF+EASY"), ("limit 0", "FCFS+EASY")):
        for k in ("avg_wait", "util", "util_arrival_span"):
            assert rows[name]["paired"][same][k] == [0.0, 0.0]
    # the two references differ on these episodes, so the equalities above can fail
    assert rows["SJF+EASY"]["avg_wait"] != rows["FCFS+EASY"]["avg_wait"]


def test_bad_values_end_in_one_line(tmp_path):
    with pytest.raises(SystemExit, match="not a comma list of numbers: 'x'"):
        load_benchmark("splitwindow_frontier").main(["--aged", "x", "--shared", str(tmp_path)])
