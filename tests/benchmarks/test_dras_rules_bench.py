"""Smoke test of benchmarks/experiments/dras_rules.py on a 300-job prefix of SDSC-SP2's test period: the
code loop driven by slot 0 is FCFS + EASY (every metric equal), the paper loop's is not, and
the rules choose as documented."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from shared_data import SHARED, load_benchmark

DR = load_benchmark("dras_rules")
TRACE = str(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")


def test_table_on_a_prefix():
    lines = []
    table = DR.main(["--trace", TRACE, "--period", "test", "--jobs", "300"], out=lines.append)
    assert "test period, 300 jobs" in lines[0]
    keys = ("avg_wait", "max_wait", "avg_slowdown", "util")
    assert [table["code:oldest"][k] for k in keys] == [table["fcfs"][k] for k in keys]
    assert table["paper:oldest"]["avg_wait"] != table["fcfs"]["avg_wait"]
    assert {f"{lp}:{r}" for lp in ("code", "paper") for r in DR.RULES} <= set(table)


def test_rules_choose_as_documented():
    view = SimpleNamespace(req_time=[50, 10, 10, 30], nodes=[4, 8, 2, 2], submit=[0, 0, 0, 0],
                           t=30 * 3600)  # fmt: skip
    window = [0, 1, 2, 3]
    pick = {r: DR.rule_policy(r)(1, window, view) for r in DR.RULES}
    assert pick == {
        "oldest": 0,
        "shortest": 1,
        "smallest": 2,
        "area": 2,
        "l1-shortest": 1,
        "shortest-aged": 0,
    }  # fmt: skip  (waited 30 h > 24 h: the oldest)
    assert DR.rule_policy("l1-shortest")(2, window, view) == 0
    assert DR.rule_policy("shortest-aged", age_h=48)(1, window, view) == 1


def test_unknown_rule_one_line(capsys):
    with pytest.raises(SystemExit):
        DR.main(["--trace", TRACE, "--rules", "sjf"])
    assert "unknown rule or loop 'sjf'" in capsys.readouterr().err
