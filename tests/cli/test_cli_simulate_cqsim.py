"""``jaxsched simulate --compat cqsim``: the option exists and its limits are one-line errors
(the schedule itself is the engine's, tested in tests/sim/test_cqsim_engine.py)."""

from __future__ import annotations

from shared_data import DATA

from jaxsched.cli import main


def test_cqsim_mode_limits(tmp_path, capsys):
    out = str(tmp_path / "s.swf")
    argv = ["simulate", str(DATA / "tiny.swf"), "--compat", "cqsim", "--out", out]
    assert main(argv + ["--policy", "sjf"]) == 2
    assert "--compat cqsim runs --policy fcfs" in capsys.readouterr().err
    assert main(argv + ["--start", "999"]) == 2
    assert "CQSim loads" in capsys.readouterr().err
