"""``jaxsched train schedinspector --split train`` (issue 47): training from the training jobs
only, validation from the validation jobs, run.json's split and jobs_seen."""

from __future__ import annotations

import json

from tiny_traces import schedinspector_tiny

from jaxsched.cli import main as jaxsched_main
from jaxsched.systems.schedinspector.config import RunConfig, load_jobs, make_env


def _args(trace, out, *extra) -> list:
    return [
        "train", "schedinspector", str(trace), "--out", str(out), "--length", "8",
        "--trajectories", "4", "--max-steps", "24", "--pi-iters", "2", "--v-iters", "2",
        "--validate", "2", "--validate-every", "1", "--eval-length", "16", "--no-progress",
        "--epochs", "1", *extra,
    ]  # fmt: skip


def test_split_train_records_and_respects_the_ranges(tmp_path, capsys):
    trace = schedinspector_tiny(tmp_path / "tiny.swf")  # 80 jobs
    out = tmp_path / "run"
    fr = ["--split", "train", "--split-fractions", "0.5,0.3,0.2"]
    assert jaxsched_main(_args(trace, out, *fr)) == 0
    rj = json.loads((out / "run.json").read_text())
    assert rj["split"]["train"] == [0, 40] and rj["split"]["validation"] == [40, 64]
    assert rj["jobs_seen"] == [0, 64] and rj["job_slice"] == 40
    rc = RunConfig.from_dict(rj)
    jobs, wait = load_jobs(rc.trace, rc.mode)
    low, high = make_env(rc, jobs, wait).start_range
    assert high - 1 + rc.length <= 40  # training sequences end inside the training jobs
    best = json.loads((out / "best.json").read_text())
    assert all(40 <= s and s + 16 <= 64 for s in best["starts"])
    capsys.readouterr()
    assert jaxsched_main(_args(trace, tmp_path / "x", *fr, "--slice", "30")) == 2
    assert "--split and --slice" in capsys.readouterr().err
    assert jaxsched_main(_args(trace, tmp_path / "y", "--split", "train")) == 2
    err = capsys.readouterr().err  # 10 % of 80 jobs: too few for 16-job validation sequences
    assert "--eval-length 16 with --split" in err and len(err.strip().splitlines()) == 1
