"""benchmarks/paper/schedinspector_tables.py: the table logic on hand-made results (no simulation):
trace names, the paper's Table 4 cell chosen per model and trace, Table 5's utilisation, the
improvement and the paired difference printed from given numbers, models found by run.json."""

from __future__ import annotations

import json
from types import SimpleNamespace

from shared_data import load_benchmark

ST = load_benchmark("schedinspector_tables")
SJF = SimpleNamespace(base="sjf", metric="bsld", backfill="none")
RESULT = {
    "metric": "bsld",
    "paper_base": 200.0,
    "paper_greedy": 150.0,
    "paper_sampled": 160.0,
    "paper_rejection_greedy": 0.5,
    "paper_rejection_sampled": 0.25,
    "util_base": 0.6,
    "util_greedy": 0.55,
    "fresh_base": (100.0, 10.0),
    "fresh_greedy": (80.0, 8.0),
    "fresh_difference": (-20.0, 2.5),
    "fresh_sequences": 100,
}


def test_trace_names():
    assert ST.paper_trace("traces/lublin-1.swf") == "Lublin"
    assert ST.paper_trace("../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz") == "SDSC-SP2"
    assert ST.paper_trace("other.swf") is None


def test_table4_cells():
    assert ST.paper_t4("Lublin", "Lublin", SJF) == (333.19, 27.97)  # Y-model -> Y
    assert ST.paper_t4("SDSC-SP2", "Lublin", SJF) == (333.19, 320.39)  # SDSC model -> Y
    assert ST.paper_t4("Lublin", "HPC2N", SJF) == (8.26, ST.DASH)  # no such cell
    f1 = SimpleNamespace(base="f1", metric="bsld", backfill="none")
    assert ST.paper_t4("Lublin", "Lublin", f1) == (ST.DASH, ST.DASH)  # Table 4 is SJF only


def test_row_lines_from_hand_made_numbers():
    head, paper, util, fresh = ST.row_lines("m", SJF, "SDSC-SP2", "SDSC-SP2", RESULT)
    assert head == "m -> SDSC-SP2 (own trace; base sjf, bsld, backfill none)"
    assert "base 200.00 -> greedy 150.00 (+25.0% better), sampled 160.00 (+20.0%)" in paper
    assert "rejection ratio 0.500 / 0.250" in paper
    assert "[paper: 149.50 -> 130.75, +12.5%]" in paper
    assert "60.00% -> 55.00% (-5.00 points)" in util
    assert "[paper: 59.64% -> 59.37% (-0.27 points)]" in util
    assert "paired difference -20.00 ± 2.50 (+20.0% better)" in fresh
    f1 = SimpleNamespace(base="f1", metric="bsld", backfill="none")
    lines = ST.row_lines("m", f1, "Lublin", "Lublin", RESULT)
    assert "[paper: improvement ≈88 % (Fig. 10), ≈95 % (Fig. 4)]" in lines[1]
    assert "[paper: 67.37% -> 63.04% (-4.33 points)]" in lines[2]
    lcfs = SimpleNamespace(base="lcfs", metric="bsld", backfill="none")
    lines = ST.row_lines("m", lcfs, "SDSC-SP2", "SDSC-SP2", RESULT)
    assert "[paper: B − I = +144.9, rejection ratio 0.391 (Fig. 7)]" in lines[1]
    assert "[paper: —]" in lines[2]  # Table 5 has SJF and F1 only
    lines = ST.row_lines("m", lcfs, "SDSC-SP2", "Lublin", RESULT)
    assert "[paper: — -> —, —]" in lines[1]  # Fig. 7 is of SDSC-SP2 models on SDSC-SP2


def test_find_models(tmp_path):
    for name, system in (("a", "schedinspector"), ("b", "rlscheduler"), ("c", None)):
        (tmp_path / name).mkdir()
        if system:
            (tmp_path / name / "run.json").write_text(json.dumps({"system": system}))
    assert [n for n, _ in ST.find_models(tmp_path)] == ["a"]
