"""``benchmarks/paper/splitwindow_fig4.py``: which rows Fig. 4 shows, in which order, and the PNG."""

from __future__ import annotations

import json

import pytest
from shared_data import load_benchmark


def _metrics(wait):
    keys = ("avg_queue_len", "util", "job_load", "avg_bsld")
    return {"avg_wait": [wait, 1.0], **{k: [0.5, 0.1] for k in keys}}


RES = {
    "trace": "t.swf",
    "baselines": {
        "fcfs+none": _metrics(9.0),
        "fcfs+easy": _metrics(5.0),
        "sjf+rlscheduler": _metrics(2.0),
    },
    "models": {
        "a": {
            "name": "DBF 2-2 mask (epoch 1)",
            "metrics": _metrics(3.0),
            "per_episode": {"avg_wait": [3.0, 3.0]},
        },
        "b": {
            "name": "SchedInspector x (sjf) + none (epoch 2)",
            "metrics": _metrics(7.0),
            "per_episode": {"avg_wait": [7.0, 7.0]},
        },
    },
}


def test_rows_sorted_by_wait_with_the_chosen_backfilling():
    f4 = load_benchmark("splitwindow_fig4")
    names = [n for n, _ in f4.fig4_rows(RES)]
    assert names == ["sjf+rlscheduler", "DBF 2-2 mask (epoch 1)", "fcfs+easy",
                     "SchedInspector x (sjf) + none (epoch 2)"]  # fmt: skip
    assert [n for n, _ in f4.fig4_rows(RES, ("none",))][0] == "DBF 2-2 mask (epoch 1)"
    assert [f4.colour(n) for n in names] == ["tab:gray", "tab:blue", "tab:gray", "tab:orange"]


def test_png(tmp_path, capsys):
    js = tmp_path / "r.json"
    js.write_text(json.dumps(RES))
    assert load_benchmark("splitwindow_fig4").main([str(js), "--png", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_paired_model_minus_heuristic_by_hand():
    res = {
        "models": {"a": {"name": "DBF", "per_episode": {
            "avg_wait": [10.0, 20.0], "avg_bsld": [1.0, 1.0], "util": [0.8, 0.7]}}},
        "baselines_per_episode": {"sjf+easy": {
            "avg_wait": [12.0, 26.0], "avg_bsld": [2.0, 1.0], "util": [0.75, 0.7]}},
    }  # fmt: skip
    d = load_benchmark("splitwindow_fig4").paired(res)["DBF"]["sjf+easy"]
    assert d["avg_wait"] == pytest.approx([-4.0, 2.0])  # -2, -6
    assert d["avg_bsld"] == pytest.approx([-0.5, 0.5])
    assert d["util"] == pytest.approx([2.5, 2.5])  # points: +5, 0
    assert "util_arrival_span" not in d  # not in this (older) JSON
    res["models"]["a"]["per_episode"]["util_arrival_span"] = [0.6, 0.7]
    res["baselines_per_episode"]["sjf+easy"]["util_arrival_span"] = [0.6, 0.6]
    d = load_benchmark("splitwindow_fig4").paired(res)["DBF"]["sjf+easy"]
    assert d["util_arrival_span"] == pytest.approx([5.0, 5.0])  # points: 0, +10
