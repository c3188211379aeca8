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


@pytest.mark.extended  # paper-table script end to end; its rules are checked by hand below
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


def test_installed_evaluate_prints_the_scripts_table(monkeypatch, capsys):
    """``jaxsched evaluate TRACE --model LABEL=NAME[:off] ... --jobs K`` prints the script's
    table line for line.  The networks are replaced by baselines' schedules (BinPacking for a
    fixed network, Random otherwise), so no rollout compiles: the point is the wiring (labels,
    ``:off``, ``--jobs``, the trace), and ``test_table_on_300_test_jobs`` runs the networks."""
    from jaxsched.cli import main as jaxsched_main
    from jaxsched.systems.dras import evaluate as ev

    onlines = []

    def fake_run_model(rc, params, cj, *, sample=False, seed=0, online=False):
        onlines.append(online)
        name = "binpacking" if online is False else "random"
        s = ev.baseline_schedules(cj, [name])[name]
        return {"start": s["start"], "cls": s["cls"], "decisions": 0, "seconds": 0.0}

    monkeypatch.setattr(ev, "run_model", fake_run_model)
    models = ["--model", "code=dras-sdsc-pg:off", "--model", "dql=dras-sdsc-dql-persistent"]
    lines = []
    want = DT.main([*models, "--trace", TRACE, "--jobs", "60"], out=lines.append)
    assert jaxsched_main(["evaluate", TRACE, *models, "--jobs", "60"]) == 0
    assert capsys.readouterr().out == "\n".join(lines) + "\n"
    assert lines[0] == "test period: 60 jobs, N = 128" and onlines == [False, None] * 2
    assert list(want["table"])[:3] == ["code", "dql", "fcfs"]


@pytest.mark.extended  # a month of SDSC-SP2 through the shipped networks
@pytest.mark.xla_full_opt  # a month of SDSC-SP2 jobs through the network: mostly run time
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


def test_held_out_rules_by_hand():
    """--held-out's pure rules: the validation month (first after training within the
    tolerance of the rest's load), the bounded choice and the per-month paired difference."""
    import numpy as np

    utils = {1: (0.717, 0.837), 2: (0.731, 0.842), 3: (0.805, 0.841), 4: (0.84, 0.84)}
    assert DT.choose_validation_month(utils, 0.10) == 3  # 0.731 / 0.842 = 0.868: 13 % off
    assert DT.choose_validation_month(utils, 0.14) == 2
    assert DT.choose_validation_month({0: (1.0, 1.0), 1: (1.0, 1.0)}, 0.1) is None  # training
    s = {"a": {"avg_wait": 5.0, "max_wait": 200.0}, "b": {"avg_wait": 6.0, "max_wait": 90.0},
         "c": {"avg_wait": 7.0, "max_wait": 50.0}}  # fmt: skip
    assert DT.bounded_choice(s, 100.0) == "b" and DT.bounded_choice(s, 10.0) is None
    month = np.array([0, 0, 1, 1, 2])
    d, se, k = DT.paired_by_month(month, np.array([2, 4, 6, 6, 10]), np.array([1, 1, 6, 6, 0]))
    assert (d, k) == (4.0, 3)  # month differences 2, 0, 10
    assert se == pytest.approx(np.std([2, 0, 10], ddof=1) / np.sqrt(3))
    assert DT.month_of([5, 5 + 30 * 86400 - 1, 5 + 30 * 86400]).tolist() == [0, 0, 1]


def test_held_out_candidates_are_the_traces_shipped_models():
    c = DT.shipped_candidates(TRACE)
    assert ("dras-sdsc-pg-paperloop:off", "dras-sdsc-pg-paperloop", False) in c["pg"]
    assert [x[0] for x in c["dql"]] == ["dras-sdsc-dql", "dras-sdsc-dql-persistent"]
    assert [x[0] for x in c["decima"]] == ["dras-sdsc-decima-pg"]
