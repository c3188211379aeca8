"""Smoke test of benchmarks/paper/planners_heldout.py on a tiny slice: both splits, the files it
resumes from, the baseline chosen on the validation split, the report's rows."""

from __future__ import annotations

import json

import pytest
from shared_data import REPO, load_benchmark


def test_validation_then_test_and_resume(tmp_path, capsys):
    mod = load_benchmark("planners_heldout")
    trace = str(REPO / "traces" / "lublin-1.swf")
    common = ["--jobs", "40", "--sequences", "2", "--planners", "window:n=4;rollout:sjf,k=2,h=8"]
    for split in ("validation", "test"):
        assert mod.main([trace, "--split", split, "--out", str(tmp_path / split), *common]) == 0
    out = capsys.readouterr().out
    files = sorted((tmp_path / "test").glob("seq-*.json"))
    assert len(files) == 2
    rec = json.loads(files[0].read_text())
    assert len(rec["cells"]) == 26 and set(rec["planners"]) == {"window:n=4", "rollout:sjf,k=2,h=8"}
    assert "best mean of the cells on 2 validation sequences" in out.split("\n\n")[-1]
    assert out.count("| `window:n=4` | 2 |") == 2
    split = json.loads((tmp_path / "test" / "split.json").read_text())
    assert split["seed"] == 47 and split["range"][0] > 0
    # resumed: nothing is recomputed, and the report alone reads the same files
    rec["planners"]["window:n=4"]["bsld"] = -1.0
    files[0].write_text(json.dumps(rec))
    assert mod.main([trace, "--split", "test", "--out", str(tmp_path / "test"), *common]) == 0
    assert json.loads(files[0].read_text())["planners"]["window:n=4"]["bsld"] == -1.0
    assert mod.main([trace, "--report-only", "--out", str(tmp_path / "test"), *common]) == 0
    with pytest.raises(Exception, match="unknown planner"):
        mod.main([trace, "--planners", "greedy"])
