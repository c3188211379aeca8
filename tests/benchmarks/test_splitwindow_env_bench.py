"""``benchmarks/speed/splitwindow_env.py --model A --model B``: each trained agent on the same
episodes in its own recorded window and options (tiny trace, tiny nets, 5-placement runs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from shared_data import load_benchmark
from tiny_traces import cores_tiny

from jaxsched.cli import main as cli


def _trace(path, n=3100):  # the default env needs 1,000 placements + a 2,000 margin
    return cores_tiny(path, n, 1, [0, 5, 10], [1, 8, 64, 256], [5, 20, 60])


@pytest.mark.extended  # the benchmark script end to end; tests/envs/test_splitwindow*.py cover the environment
def test_two_models_each_in_its_own_window_and_mask(tmp_path, capsys):
    (tmp_path / "traces").mkdir()
    trace = _trace(tmp_path / "traces" / "t.swf")
    runs = []
    for name, window, extra in (
        ("a", ["2", "0"], []),
        ("b", ["1", "1"], ["--mask"]),
        ("d", ["1", "1"], ["--mask", "--weights", "0.9,0.05,0.05"]),
    ):
        out = tmp_path / name
        argv = [str(trace), "--head", window[0], "--tail", window[1], "--placements", "5",
                "--envs", "2", "--steps", "40", "--minibatch", "16", "--ppo-epochs", "1",
                "--hidden", "8", "--out", str(out), "--no-progress", "--epochs", "1", *extra]  # fmt: skip
        assert cli(["train", "splitwindow", *argv]) == 0
        runs.append(str(out))
    capsys.readouterr()
    js = tmp_path / "r.json"
    argv = ["--shared", str(tmp_path), "--trace", "t.swf", "--batch", "0", "--episodes", "3",
            "--skip-baselines", "--model", runs[0], "--model", runs[1], "--json", str(js)]  # fmt: skip
    assert load_benchmark("splitwindow_env").main(argv) == 0
    text = capsys.readouterr().out
    assert "DBF 2-0 (epoch 1)" in text and "DBF 1-1 mask (epoch 1)" in text
    res = json.loads(js.read_text())
    assert res["speed"] == [] and list(res["models"]) == runs[:2]
    for row in res["models"].values():
        wait, se = row["metrics"]["avg_wait"]
        assert wait >= 0 and se >= 0 and 0 < row["metrics"]["util"][0] <= 1
        assert 0 <= row["metrics"]["util_arrival_span"][0] <= 1
        assert "paired" not in row  # no heuristics were run
        assert len(row["per_episode"]["avg_wait"]) == 3
        # the tiny trace has 1-, 8-, 64- and 256-core jobs: narrow, 65+ and 129+ classes
        assert {"wait_narrow", "wait_wide", "wait_129plus"} <= set(row["metrics"])
    # the second model minus the first, paired over the same three episodes
    a, b = (np.asarray(r["per_episode"]["avg_wait"]) for r in res["models"].values())
    (d,) = res["versus_first"].values()
    assert d["avg_wait"][0] == pytest.approx(float(np.mean(b - a)))
    assert "DBF 1-1 mask (epoch 1) - DBF 2-0 (epoch 1)" in text
    # a second model of the same window and epoch (here b's checkpoint file) gets its path in
    # its name, other reward weights are named, so no versus-first row overwrites another
    capsys.readouterr()
    same = f"{runs[1]}/checkpoint_00000001.ckpt"
    argv = ["--shared", str(tmp_path), "--trace", "t.swf", "--batch", "0", "--episodes", "3",
            "--skip-baselines", "--json", str(js), "--model", runs[1], "--model", same,
            "--model", runs[2]]  # fmt: skip
    assert load_benchmark("splitwindow_env").main(argv) == 0
    names = [r["name"] for r in json.loads(js.read_text())["models"].values()]
    assert names == ["DBF 1-1 mask (epoch 1)", f"DBF 1-1 mask (epoch 1) [{same}]",
                     "DBF 1-1 mask weights 0.9/0.05/0.05 (epoch 1)"]  # fmt: skip
    assert len(json.loads(js.read_text())["versus_first"]) == 2
    # --baselines-from: the heuristics' per-episode values of an earlier JSON on the same
    # episodes, paired with a model as if they had been run here
    from jaxsched.envs.splitwindow_baselines import baseline_names

    SW = load_benchmark("splitwindow_env")
    names = baseline_names()
    per = {n: {k: [float(i), i + 1.0, 2.0 * i] for k in SW.METRICS} for i, n in enumerate(names)}
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"trace": "t.swf", "starts": res["starts"],
                               "baselines_per_episode": per}))  # fmt: skip
    js2 = tmp_path / "r2.json"
    again = ["--shared", str(tmp_path), "--trace", "t.swf", "--batch", "0", "--episodes", "3",
             "--baselines-from", str(old), "--model", runs[0], "--json", str(js2)]  # fmt: skip
    assert SW.main(again) == 0
    res2 = json.loads(js2.read_text())
    row = res2["models"][runs[0]]
    wait = np.asarray(row["per_episode"]["avg_wait"])
    for n in names:
        want = float(np.mean(wait - np.asarray(per[n]["avg_wait"])))
        assert row["paired"][n]["avg_wait"][0] == pytest.approx(want)
    assert res2["baselines"][names[2]]["util"][0] == pytest.approx(3.0)  # mean of 2, 3, 4
    assert res2["baselines_per_episode"] == per
    with pytest.raises(SystemExit, match="other episodes"):
        SW.main([*again[:7], "2", *again[8:]])  # two episodes: other starts


def test_size_class_waits_weigh_types_by_their_placements():
    from jaxsched.sim.cores import N_TYPES, RUN_EDGES

    nr = len(RUN_EDGES) + 1
    tw, tc = np.zeros((1, N_TYPES)), np.zeros((1, N_TYPES))
    tw[0, 0], tc[0, 0] = 10.0, 3  # 1 core, short: narrow
    tw[0, 3 * nr + 2], tc[0, 3 * nr + 2] = 30.0, 1  # 5-8 cores: narrow
    tw[0, 7 * nr], tc[0, 7 * nr] = 100.0, 2  # 65-128 cores: wide
    tw[0, 8 * nr + 4], tc[0, 8 * nr + 4] = 400.0, 2  # 129-256 cores: wide and 129+
    w = load_benchmark("splitwindow_env").size_class_waits({"type_wait": tw, "type_count": tc})
    assert w["wait_narrow"][0] == pytest.approx((3 * 10 + 30) / 4)
    assert w["wait_wide"][0] == pytest.approx((2 * 100 + 2 * 400) / 4)
    assert w["wait_129plus"][0] == pytest.approx(400.0)


def test_type_core_bins_decode_job_types():
    from jaxsched.sim.cores import core_bin, job_types, type_core_bins

    cores = np.array([1, 2, 3, 8, 9, 64, 65, 128, 129, 256])
    run = np.array([1, 59, 60, 600, 3599, 3600, 35999, 36000, 10**6, 5])
    assert (type_core_bins()[job_types(cores, run)] == core_bin(cores)).all()
    assert list(core_bin(cores)) == [0, 1, 2, 3, 4, 6, 7, 7, 8, 8]


@pytest.mark.extended  # the benchmark script end to end; tests/envs/test_splitwindow*.py cover the environment
def test_shipped_rlscheduler_policy_and_inspector_as_baselines(tmp_path, capsys):
    (tmp_path / "traces").mkdir()
    _trace(tmp_path / "traces" / "t.swf")
    js = tmp_path / "r.json"
    argv = ["--shared", str(tmp_path), "--trace", "t.swf", "--batch", "0", "--episodes", "2",
            "--skip-baselines", "--rlscheduler", "lublin1-bf", "--inspector", "si-lublin1-sjf",
            "--inspector-backfill", "easy", "--offline", "--json", str(js)]  # fmt: skip
    assert load_benchmark("splitwindow_env").main(argv) == 0
    out = capsys.readouterr().out
    assert "RLScheduler lublin1-bf + rlscheduler (epoch" in out
    assert "SchedInspector si-lublin1-sjf (sjf) + easy (epoch 80)" in out
    res = json.loads(js.read_text())
    for row in res["models"].values():
        assert 0 < row["metrics"]["util"][0] <= 1 and row["metrics"]["avg_wait"][0] >= 0
        assert "paired" not in row and len(row["per_episode"]["avg_wait"]) == 2
    assert list(res["versus_first"]) == [res["models"]["si-lublin1-sjf"]["name"]]
    off = res["offline"]["si-lublin1-sjf"]  # its own 128-job protocol, paired with its base
    assert off["paired"]["wait"][0] == pytest.approx(
        off["inspected"]["wait"][0] - off["base"]["wait"][0]
    )
    assert 0 <= off["rejection_ratio"] <= 1


@pytest.mark.extended  # the benchmark script end to end; tests/envs/test_splitwindow*.py cover the environment
def test_heuristics_run_then_read_back_with_baselines_from(tmp_path):
    (tmp_path / "traces").mkdir()
    _trace(tmp_path / "traces" / "t.swf")
    SW = load_benchmark("splitwindow_env")
    common = ["--shared", str(tmp_path), "--trace", "t.swf", "--batch", "0", "--episodes", "1"]
    assert SW.main([*common, "--json", str(tmp_path / "a.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text())
    assert len(a["baselines"]) == 12 and len(a["starts"]) == 1
    back = [
        *common,
        "--baselines-from",
        str(tmp_path / "a.json"),
        "--json",
        str(tmp_path / "b.json"),
    ]
    assert SW.main(back) == 0
    b = json.loads((tmp_path / "b.json").read_text())
    assert (
        b["baselines"] == a["baselines"]
        and b["baselines_per_episode"] == a["baselines_per_episode"]
    )
