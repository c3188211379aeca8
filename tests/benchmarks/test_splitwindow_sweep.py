"""``benchmarks/paper/splitwindow_sweep.py``: the Fig. 5/6 sweep scorer (paired differences to the
unsplit window by hand; tiny trained runs scored, cached and plotted)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from shared_data import load_benchmark

from jaxsched.cli import main as cli


def _row(head, tail, mask, wait):
    per = {k: [1.0, 1.0] for k in ("avg_queue_len", "util", "mean_invisible", "partial_fraction")}
    return {"head": head, "tail": tail, "mask": mask, "per_episode": {**per, "avg_wait": wait}}


def test_versus_unsplit_pairs_each_tail_with_its_own_m_and_mask():
    sw = load_benchmark("splitwindow_sweep")
    rows = {
        "4-0": _row(4, 0, True, [10.0, 30.0]),
        "3-1": _row(3, 1, True, [6.0, 14.0]),  # differences -4, -16: mean -10, s.e. 6
        "2-2 no-mask": _row(2, 2, False, [1.0, 1.0]),  # no unsplit no-mask M = 4: skipped
        "1-1": _row(1, 1, True, [1.0, 1.0]),  # no 2-0 scored: skipped
    }
    out = sw.versus_unsplit(rows)
    assert list(out) == ["3-1"]
    mean, se, rel = out["3-1"]["avg_wait"]
    assert (mean, se, rel) == pytest.approx((-10.0, 6.0, -0.5))
    assert out["3-1"]["util"] == [0.0, 0.0, 0.0]
    assert sw.config_name(2, 2, False) == "2-2 no-mask" and sw.config_name(3, 1, True) == "3-1"


def test_type_summary_and_per_type_pairing_by_hand():
    sw = load_benchmark("splitwindow_sweep")
    # two episodes, three job types; waits [B][T] and placements [B][T]
    base = {"head": 2, "tail": 0, "mask": True, "type_wait": [[10, 100, 0], [30, 50, 0]],
            "type_count": [[1, 2, 0], [3, 2, 0]]}  # fmt: skip
    tail = {"head": 1, "tail": 1, "mask": True, "type_wait": [[4, 120, 7], [10, 0, 0]],
            "type_count": [[1, 2, 1], [3, 0, 0]]}  # fmt: skip
    t = sw.type_summary(base)
    assert t["wait"] == pytest.approx([(10 + 90) / 4, (200 + 100) / 4, 0.0])
    assert t["placements"] == pytest.approx([2.0, 2.0, 0.0])
    d = sw.types_versus_unsplit({"2-0": base, "1-1": tail})["1-1"]
    # type 0 in both episodes: -6, -20; type 1 only in episode 0 (one pair); type 2 never paired
    assert d["per_type"][0] == pytest.approx([-13.0, 7.0, 2])
    assert d["per_type"][1] == pytest.approx([20.0, 0.0, 1]) and d["per_type"][2] is None
    assert (d["types"], d["lower"], d["lower_2se"], d["higher_2se"]) == (1, 1, 0, 0)


@pytest.mark.extended  # trains and scores runs; the pairing rules are checked by hand here
def test_scores_caches_and_plots_trained_runs(tmp_path, capsys):
    from tests.benchmarks.test_splitwindow_env_bench import _trace

    (tmp_path / "traces").mkdir()
    trace = _trace(tmp_path / "traces" / "t.swf")
    runs = []
    for name, h, t in (("a", "2", "0"), ("b", "1", "1")):
        out = tmp_path / name
        argv = [str(trace), "--head", h, "--tail", t, "--placements", "5", "--envs", "2",
                "--steps", "40", "--minibatch", "16", "--ppo-epochs", "1", "--hidden", "8",
                "--out", str(out), "--no-progress", "--epochs", "1", "--mask"]  # fmt: skip
        assert cli(["train", "splitwindow", *argv]) == 0
        runs.append(str(out))
    capsys.readouterr()
    (tmp_path / "starting").mkdir()  # a run that has written run.json but no checkpoint yet
    (tmp_path / "starting" / "run.json").write_text((tmp_path / "a" / "run.json").read_text())
    js, png = tmp_path / "s.json", tmp_path / "s.png"
    argv = ["--shared", str(tmp_path), "--trace", "t.swf", "--episodes", "3", "--json", str(js),
            "--png", str(png), *runs, str(tmp_path / "not-a-run"), str(tmp_path / "starting")]  # fmt: skip
    assert load_benchmark("splitwindow_sweep").main(argv) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    res = json.loads(js.read_text())
    assert sorted(res["configurations"]) == ["1-1", "2-0"]
    a, b = (np.asarray(res["configurations"][n]["per_episode"]["avg_wait"]) for n in ("1-1", "2-0"))
    assert res["versus_unsplit"]["1-1"]["avg_wait"][0] == pytest.approx(float(np.mean(a - b)))
    assert res["summary"]["2-0"]["avg_wait"][0] == pytest.approx(float(np.mean(b)))
    out = capsys.readouterr().out
    assert "epoch" in out and "skipped" in out and "no checkpoint in this directory" in out
    assert (
        load_benchmark("splitwindow_sweep").main(argv) == 0
    )  # both runs already scored with the same checkpoints
    assert "epoch" not in capsys.readouterr().out
    assert json.loads(js.read_text())["configurations"] == res["configurations"]
    types = tmp_path / "types.png"
    assert (
        load_benchmark("splitwindow_sweep").main([*argv, "--types", str(types)]) == 0
    )  # rescored, now with job types
    assert "1-1            - unsplit, per job type:" in capsys.readouterr().out
    res = json.loads(js.read_text())
    assert len(res["types"]["2-0"]["wait"]) == 45 and types.read_bytes()[:4] == b"\x89PNG"
    assert sum(res["types"]["1-1"]["placements"]) > 0


def test_size_classes_count_placements_and_pair_them_by_hand():
    from jaxsched.sim.cores import N_TYPES, RUN_EDGES

    sw = load_benchmark("splitwindow_sweep")
    widest = 8 * (len(RUN_EDGES) + 1)  # the first type of more than 128 cores

    def row(head, tail, counts, waits):
        tc, tw = np.zeros((2, N_TYPES), int), np.zeros((2, N_TYPES), int)
        tc[:, widest], tw[:, widest] = counts, waits
        return {"head": head, "tail": tail, "mask": True, "type_count": tc.tolist(),
                "type_wait": tw.tolist()}  # fmt: skip

    out = sw.size_classes({"2-0": row(2, 0, [3, 1], [10, 20]), "1-1": row(1, 1, [1, 0], [40, 0])})
    w = out["1-1"]["wait_129plus"]
    assert w["placements"] == pytest.approx([0.5, 0.5])
    assert w["wait"] == [40.0, 0.0]  # only the episode that placed one
    assert w["placements_versus_unsplit"] == pytest.approx([-1.5, 0.5])  # -2, -1
    assert "placements_versus_unsplit" not in out["2-0"]["wait_129plus"]
    assert out["2-0"]["wait_129plus"]["wait"] == pytest.approx([15.0, 5.0])
