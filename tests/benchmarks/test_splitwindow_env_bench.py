"""``benchmarks/splitwindow_env.py --model A --model B``: each trained agent on the same
episodes in its own recorded window and options (tiny trace, tiny nets, 5-placement runs)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from jaxsched.cli import main as cli

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "splitwindow_env.py"


def _bench():
    spec = importlib.util.spec_from_file_location("splitwindow_env", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _trace(path, n=3100):  # the default env needs 1,000 placements + a 2,000 margin
    rng = np.random.RandomState(1)
    sub = np.cumsum(rng.choice([0, 5, 10], size=n))
    lines = ["; MaxNodes: 256", "; MaxProcs: 256"]
    for i in range(n):
        c, r = rng.choice([1, 8, 64, 256]), rng.choice([5, 20, 60])
        lines.append(f"{i + 1} {sub[i]} 0 {r} {c} -1 -1 {c} -1 -1 1 1 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_two_models_each_in_its_own_window_and_mask(tmp_path, capsys):
    (tmp_path / "traces").mkdir()
    trace = _trace(tmp_path / "traces" / "t.swf")
    runs = []
    for name, window, extra in (("a", ["2", "0"], []), ("b", ["1", "1"], ["--mask"])):
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
    assert _bench().main(argv) == 0
    text = capsys.readouterr().out
    assert "DBF 2-0 (epoch 1)" in text and "DBF 1-1 mask (epoch 1)" in text
    res = json.loads(js.read_text())
    assert res["speed"] == [] and list(res["models"]) == runs
    for row in res["models"].values():
        wait, se = row["metrics"]["avg_wait"]
        assert wait >= 0 and se >= 0 and 0 < row["metrics"]["util"][0] <= 1
        assert "paired" not in row  # no heuristics were run
        assert len(row["per_episode"]["avg_wait"]) == 3
    # the second model minus the first, paired over the same three episodes
    a, b = (np.asarray(r["per_episode"]["avg_wait"]) for r in res["models"].values())
    (d,) = res["versus_first"].values()
    assert d["avg_wait"][0] == pytest.approx(float(np.mean(b - a)))
    assert "DBF 1-1 mask (epoch 1) - DBF 2-0 (epoch 1)" in text
