"""benchmarks/paper/rlscheduler_tables.py: the table logic on hand-made results (no simulation):
paired difference to the best heuristic and its standard error computed by hand, the relative
margin, "—" for rows without a model, models found by their run.json, the paper's numbers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from shared_data import REPO, load_benchmark

from jaxsched.sim.evaluate import EvalResult

RT = load_benchmark("rlscheduler_tables")
POL = ("fcfs", "wfp3", "unicep", "sjf", "f1")
# three sequences; per backfilling, per policy: the values on starts 10, 20, 30
VALUES = {
    "none": {"fcfs": [50, 60, 70], "wfp3": [40, 45, 50], "unicep": [30, 35, 40],
             "sjf": [10, 20, 30], "f1": [12, 18, 24], "m": [9, 16, 26]},
    "rlscheduler": {"fcfs": [5, 6, 7], "wfp3": [4, 4, 4], "unicep": [9, 9, 9],
                    "sjf": [3, 5, 7], "f1": [4, 6, 8]},
}  # fmt: skip


def _result(metric="bsld") -> EvalResult:
    rows = [
        {"start": s, "jobs": 4, "policy": p, "backfill": b, "metric": metric, "value": float(v)}
        for b, per in VALUES.items()
        for p, vs in per.items()
        for s, v in zip((10, 20, 30), vs)
    ]
    return EvalResult(rows, np.array([10, 20, 30]), [*POL, "m"], ["none", "rlscheduler"],
                      [metric], None, {})  # fmt: skip


def test_row_stats_by_hand():
    st = RT.row_stats(_result(), "bsld", "none", POL, "m")
    # best heuristic: F1 (mean 18 < SJF 20); m - F1 = -3, -2, +2: mean -1,
    # sample variance ((-2)^2 + (-1)^2 + 3^2) / 2 = 7, standard error sqrt(7 / 3)
    assert st["best"] == "f1" and st["heuristics"]["f1"] == pytest.approx((18.0, math.sqrt(12)))
    assert st["mean"] == pytest.approx(17.0) and st["diff"] == pytest.approx(-1.0)
    assert st["diff_se"] == pytest.approx(math.sqrt(7 / 3))
    assert st["margin"] == pytest.approx(-1 / 18)
    # the standard error of the learned mean: values 9, 16, 26 -> sd sqrt(73), se sqrt(73/3)
    assert st["se"] == pytest.approx(math.sqrt(73 / 3))
    cells = RT.learned_cells(st, RT.paper_heuristics("V", "none", "Lublin-1"), 254.67)
    assert cells[0] == "m" and cells[3] == "-1.0000 ± 1.53" and cells[4] == "-5.6 %"
    assert cells[5:] == ["254.67", "258.37 (F1)", "-1.4 %"]


def test_missing_model_prints_dashes():
    st = RT.row_stats(_result(), "bsld", "rlscheduler", POL, "m")  # m has no bf rows
    assert st["model"] is None and st["best"] == "wfp3"
    cells = RT.learned_cells(st, None, None)
    assert cells[:2] == [RT.DASH, RT.DASH] and cells[3:] == [RT.DASH] * 5
    res = {"Lublin-1": _result(), "SDSC-SP2": _result()}
    models = [RT.Model("m", REPO, "Lublin-1", "bsld", "none")]
    text, rows = RT.table_text("V", res, models, ["Lublin-1", "SDSC-SP2"])
    learned = [ln for ln in text.splitlines() if ln.startswith(("Lublin-1", "SDSC-SP2"))]
    assert len(learned) == 8  # 2 traces x 2 backfillings: a heuristic line and a learned line
    assert [r["model"] for r in rows] == ["m", None, None, None]
    assert "466.44" in text and "1232.06 (F1)" in text  # the paper's SDSC-SP2 RL and best
    text7, rows7 = RT.transfer_text(res, models, ["Lublin-1", "SDSC-SP2"])
    assert len(rows7) == 2 and {r["trace"] for r in rows7} == {"Lublin-1", "SDSC-SP2"}
    assert "1543.4" in text7 and "482.62" in text7 and RT.DASH in text7


def test_find_models(tmp_path):
    def run(name, **d):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text(json.dumps(d))

    run("a", trace="traces/lublin-1.swf", metric="bsld", backfill="rlscheduler")
    run("b", trace="../shared/traces/HPC2N-2002-2.2-cln.swf.gz", metric="fairness")
    run("c", system="schedinspector", trace="traces/lublin-1.swf")
    run("d", system="rlscheduler", trace="other.swf", metric="bsld", backfill="none")
    (tmp_path / "e").mkdir()  # no run.json
    got = [(m.name, m.trace, m.metric, m.backfill) for m in RT.find_models(tmp_path)]
    assert got == [
        ("a", "Lublin-1", "bsld", "rlscheduler"),
        ("b", "HPC2N", "fairness", "none"),
        ("d", None, "bsld", "none"),
    ]
    assert RT.paper_trace("x/lublin_256_new2.swf.gz") == "Lublin-2"
    assert RT.paper_trace("SDSC-SP2-1998-4.2-cln.swf") == "SDSC-SP2"


def test_paper_numbers():
    assert RT.paper_heuristics("VIII", "rlscheduler", "HPC2N")["f1"] == 583
    assert RT.paper_rl("VIII", "none", "SDSC-SP2") == 4116
    assert RT.paper_heuristics("VIII", "none", "Lublin-1") is None
    assert RT.paper_rl("V", "rlscheduler", "HPC2N") == 86.14
    # Table VII's diagonal equals Table V's RL column (spec §9) where the paper is consistent
    for bf in ("none", "rlscheduler"):
        for x in ("Lublin-1", "SDSC-SP2", "Lublin-2"):
            assert RT.PAPER_VII[bf][x][2][RT.VII_MODELS.index(x)] == RT.PAPER_RL_V[bf][x]


def test_run_tables_tiny_without_models(tmp_path):
    """The whole script on 2 sequences x 64 jobs of Lublin-1 with no model: one evaluate call,
    every learned cell "—", the heuristic means those of the rows, the JSON writable."""
    from shared_data import shared_dir

    lines: list = []
    out = tmp_path / "t.json"
    res = RT.run_tables(shared_dir(), ["Lublin-1"], ["V"], True, [], 2, 64, 3, out=lines.append)
    out.write_text(json.dumps(res, default=RT._jsonable))
    text = "\n".join(lines)
    assert "Table V" in text and "Table VII" in text and "Table VIII" not in text
    rows = res["tables"]["V"]
    assert [(r["backfill"], r["model"]) for r in rows] == [("none", None), ("rlscheduler", None)]
    starts = res["traces"]["Lublin-1"]["starts"]
    assert len(starts) == 2 and all(64 <= s < 10000 - 65 for s in starts)
    for r in rows:
        best = r["heuristics"][r["best"]][0]
        assert best == min(v[0] for v in r["heuristics"].values()) and best >= 1
    assert json.loads(out.read_text())["config"]["seed"] == 3
    # --held-out: the same tables on a fresh 3,000-job Lublin-1 trace
    lines.clear()
    res = RT.run_tables(shared_dir(), ["Lublin-1"], ["V"], False, [], 2, 64, 3, out=lines.append,
                        held_out=(tmp_path, 3000))  # fmt: skip
    assert "HELD-OUT JOBS" in "\n".join(lines) and res["config"]["held_out_jobs"] == 3000
    info = res["traces"]["Lublin-1"]
    assert info["path"].startswith(str(tmp_path)) and all(
        0 <= s <= 3000 - 64 for s in info["starts"]
    )
    assert [r["model"] for r in res["tables"]["V"]] == [None, None]


def test_held_out_starts_lie_after_the_training_jobs():
    draw = RT.held_out_starts(10000)
    s = draw(20000, 500, 1024, 7)
    assert s.min() >= 10000 and s.max() <= 20000 - 1024 and len(set(s.tolist())) > 400
    np.testing.assert_array_equal(s, draw(20000, 500, 1024, 7))  # the seed fixes the draw
    assert not np.array_equal(s, draw(20000, 500, 1024, 8))
    with pytest.raises(ValueError, match="no sequence of 1024 jobs after job 10000"):
        draw(11000, 1, 1024, 7)


def test_held_out_sources(tmp_path):
    """A real trace keeps its file and draws after job 10,000; a Lublin trace gets a fresh twin
    from its preset (another generator seed: other jobs than the shipped trace's, same
    machine), drawn over all of it, written once."""
    from shared_data import shared_dir

    from jaxsched.workload import read_swf

    path, draw = RT.held_out_source(shared_dir(), "SDSC-SP2", tmp_path, 3000)
    assert (
        path == RT.trace_path(shared_dir(), "SDSC-SP2") and draw(60000, 50, 1024, 1).min() >= 10000
    )
    path, draw = RT.held_out_source(shared_dir(), "Lublin-1", tmp_path, 3000)
    assert path.parent == tmp_path and draw(3000, 50, 1024, 1).min() >= 0
    fresh, shipped = read_swf(path), read_swf(REPO / "traces" / "lublin-1.swf")
    assert fresh.n_jobs == 3000 and fresh.num_nodes == shipped.num_nodes
    assert not np.array_equal(fresh.run[:3000], shipped.run[:3000])
    assert f"--seed {RT.FRESH_LUBLIN_SEED}" in path.read_text()[:2000]
    stamp = path.stat().st_mtime_ns
    assert (
        RT.held_out_source(shared_dir(), "Lublin-1", tmp_path, 3000)[0].stat().st_mtime_ns == stamp
    )
