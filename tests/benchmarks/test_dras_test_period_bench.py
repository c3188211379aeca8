"""Smoke test of benchmarks/paper/dras_test_period.py: two shipped DRAS models and the baselines in
one table on the first 300 test jobs of SDSC-SP2, the model specification parser, and the
three checks against a hand-made table."""

from __future__ import annotations

import pytest
from shared_data import SHARED, load_benchmark

DT = load_benchmark("dras_test_period")
TRACE = str(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")


def test_parse_model():
    assert DT.parse_model("a=runs/x") == ("a", "runs/x", None)
    assert DT.parse_model("b=dras-sdsc-pg:off") == ("b", "dras-sdsc-pg", False)
    assert DT.parse_model("c=d:on") == ("c", "d", True)
    with pytest.raises(SystemExit):
        DT.parse_model("runs/x")


def test_checks_by_hand():
    t = {"fcfs": {"avg_wait": 10.0, "max_wait": 100.0, "kiviat_area": 1.0},
         "m": {"avg_wait": 9.0, "max_wait": 160.0, "kiviat_area": 1.5},
         "n": {"avg_wait": 10.0, "max_wait": 50.0, "kiviat_area": 1.2}}  # fmt: skip
    c = DT.checks(t, ["m", "n"])
    assert c["m"] == {"below": True, "max_ratio": 1.6, "largest_area": True}
    assert c["n"] == {"below": False, "max_ratio": 0.5, "largest_area": False}


def test_table_on_300_test_jobs(tmp_path):
    lines = []
    out = DT.main(["--model", "code=dras-sdsc-pg:off", "--model", "paper=dras-sdsc-pg-paperloop",
                   "--trace", TRACE, "--jobs", "300", "--plots", str(tmp_path)],
                  out=lines.append)  # fmt: skip
    for f in ("kiviat.png", "wait_vs_size.png", "weekly.png"):
        assert (tmp_path / f).stat().st_size > 1000, f
    assert lines[0] == "test period: 300 jobs, N = 128"
    assert list(out["table"])[:3] == ["code", "paper", "fcfs"] and set(out["checks"]) == {
        "code", "paper"}  # fmt: skip
    assert "fixed" in lines[1] and "online" in lines[2]
    assert any(x.startswith("paper: average wait below FCFS + EASY's") for x in lines)


def test_validation_month_reproduces_the_choice():
    """``--period val`` scores the validation month: a shipped model's fixed network there
    gives the average wait its run logged when it was chosen (``validation.json``)."""
    import json

    from jaxsched import models as shipped

    lines = []
    out = DT.main(["--model", "p=dras-sdsc-pg-paperloop:off", "--trace", TRACE, "--period", "val"],
                  out=lines.append)  # fmt: skip
    chosen = json.loads((shipped.resolve("dras-sdsc-pg-paperloop") / "validation.json").read_text())
    assert lines[0].startswith("validation month: ")
    assert out["table"]["p"]["avg_wait"] == pytest.approx(chosen["value"], rel=1e-9)
