"""benchmarks/paper/generalise.py (issue 49): each run's model chosen on its own validation log, tested
on test-split sequences beside the heuristics with the paired difference to the best one; a
model that saw the test jobs refused unless --allow-seen; a sweep folder expands to its seeds."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from shared_data import REPO
from tiny_traces import cores_tiny

from jaxsched.cli import main
from jaxsched.errors import ConfigError

sys.path.insert(0, str(REPO / "benchmarks" / "paper"))
import generalise as G  # noqa: E402

LENGTH, N_JOBS = 16, 400  # split 50/10/40: train [0, 200), validation [200, 240), test [240, 400)
#: test sequences of every study here: one batch shape, so the heuristics' and the models'
#: compiled programs of the first study are compile-cache hits in the others
SEQUENCES = 12


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("generalise")
    trace = cores_tiny(d / "tiny.swf", N_JOBS, 7, [5, 60, 600], [16, 64, 128, 256], [30, 300, 3000])
    base = ["train", "rlscheduler", trace, "--compat", "rlscheduler", "--length", LENGTH,
            "--epochs", 2, "--trajectories", 4, "--pi-iters", 2, "--v-iters", 2,
            "--no-progress", "--no-compare", "--keep-checkpoints", 0]  # fmt: skip
    held, sweep, whole = d / "held", d / "sweep", d / "whole"
    val = ["--split", "train", "--validate", 1, "--val-sequences", 2, "--val-jobs", LENGTH]
    assert main([str(a) for a in base + ["--out", held, *val]]) == 0
    assert main([str(a) for a in base + ["--out", sweep, "--seeds", "3,4", *val]]) == 0
    assert main([str(a) for a in base + ["--out", whole]]) == 0
    return trace, held, sweep, whole


@pytest.mark.extended  # three training runs for a study script; the split and refusal rules: tests/systems/rlscheduler/test_train_split.py
def test_choice_is_the_best_validated_epoch(runs):
    _, held, _, _ = runs
    rows = [json.loads(x) for x in (held / "log.jsonl").read_text().splitlines()]
    vals = {int(r["epoch"]): r["val_bsld"] for r in rows if "val_bsld" in r}
    ck, epoch, val = G.choose_checkpoint(held, "select", "bsld")
    assert epoch == min(vals, key=vals.get) and val == vals[epoch]
    assert ck.name == f"checkpoint_{epoch:08d}.ckpt"


@pytest.mark.extended  # three training runs for a study script; the split and refusal rules: tests/systems/rlscheduler/test_train_split.py
def test_study_tests_on_the_test_split_and_pairs_with_the_best_heuristic(runs, capsys):
    trace, held, sweep, _ = runs
    res = G.study(trace, [held, sweep], sequences=SEQUENCES, length=LENGTH, seed=0,
                  versus=("f1", "sjf"))  # fmt: skip
    out = capsys.readouterr().out
    assert res["test_range"] == [240, 400]
    assert [r["name"].split("@")[0] for r in res["runs"]] == ["held", "seed-3", "seed-4"]
    assert not any(r["in_sample"] for r in res["runs"])
    assert len({r["val_settings"] for r in res["runs"]}) == 1  # a seed reads its sweep's flags
    assert res["runs"][1]["val_settings"] == (2, LENGTH, 2)
    (tab,) = res["tables"]
    summ = tab["test"]
    best = summ["best"]
    assert summ["heuristics"][best][0] == min(m for m, _ in summ["heuristics"].values())
    assert set(summ["heuristics"]) == {"fcfs", "wfp3", "unicep", "sjf", "f1"}
    for r in summ["models"].values():
        assert np.isfinite(r["diff"]) and r["diff_sem"] >= 0
        assert r["margin_pct"] == pytest.approx(100 * r["diff"] / summ["heuristics"][best][0])
        assert set(r["versus"]) == {"f1", "sjf"}
        if best in r["versus"]:  # --versus pairs the same way
            assert r["versus"][best]["diff"] == pytest.approx(r["diff"], rel=1e-12)
        gap = summ["heuristics"]["sjf"][0] - summ["heuristics"]["f1"][0]
        assert r["versus"]["f1"]["diff"] - r["versus"]["sjf"]["diff"] == pytest.approx(gap)
    assert f"best heuristic {best}" in out and "chosen on validation over all runs" in out


@pytest.mark.extended  # three training runs for a study script; the split and refusal rules: tests/systems/rlscheduler/test_train_split.py
def test_a_model_that_saw_the_test_jobs_is_refused_or_labelled(runs, capsys):
    trace, _, _, whole = runs
    with pytest.raises(ConfigError, match="overlap"):
        G.study(trace, [whole], sequences=SEQUENCES, length=LENGTH)
    res = G.study(trace, [whole], sequences=SEQUENCES, length=LENGTH, allow_seen=True, paper=True,
                  paper_sequences=3, paper_slice=200)  # fmt: skip
    assert res["runs"][0]["in_sample"] and "(in-sample)" in res["runs"][0]["name"]
    (name,) = res["tables"][0]["paper"]["models"]
    assert name.endswith("(in-sample)")
    assert "paper's protocol" in capsys.readouterr().out


@pytest.mark.extended  # three training runs for a study script; the split and refusal rules: tests/systems/rlscheduler/test_train_split.py
def test_the_command_line_writes_json(runs, tmp_path):
    trace, held, _, _ = runs
    out = tmp_path / "g.json"
    argv = [str(trace), str(held), "--sequences", str(SEQUENCES), "--jobs", str(LENGTH),
            "--json", str(out)]  # fmt: skip
    assert G.main(argv) == 0
    assert json.loads(out.read_text())["sequences"] == SEQUENCES
