"""``jaxsched train splitwindow --split train`` (issue 47): episodes only from the training
jobs, validation episodes only from the validation jobs, run.json's split and jobs_seen."""

from __future__ import annotations

import json

from tiny_traces import cores_tiny

from jaxsched.cli import main
from jaxsched.systems.splitwindow.run import RunConfig, run_envs
from jaxsched.workload import read_swf


def test_split_train_draws_from_the_training_and_validation_jobs(tmp_path, capsys):
    trace = cores_tiny(tmp_path / "t.swf", 400, 3, [0, 5, 10], [16, 64, 128, 256], [5, 20, 60])
    out = tmp_path / "run"
    argv = ["train", "splitwindow", str(trace), "--head", "2", "--tail", "1", "--placements",
            "5", "--envs", "2", "--steps", "40", "--minibatch", "16", "--ppo-epochs", "1",
            "--hidden", "8", "--val-episodes", "2", "--no-progress", "--epochs", "1",
            "--split", "train"]  # fmt: skip
    assert main([*argv, "--out", str(out), "--validate", "1"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["split"]["train"] == [0, 200] and run["split"]["validation"] == [200, 240]
    assert run["jobs_seen"] == [0, 240] and run["job_slice"] == 200
    rc = RunConfig.from_dict(run)
    train_env, val_env = run_envs(read_swf(rc.trace).jobs("rlscheduler"), rc)
    # the environments hold only those jobs: episodes cannot reach past them
    assert train_env.data.submit.shape == (200,) and train_env.cfg.sample_high == 185
    assert val_env.cfg.sample_high == 40 - 15
    assert "val_avg_wait" in json.loads((out / "log.jsonl").read_text().splitlines()[0])
    # without validation jobs_seen ends at the training jobs' end
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    assert json.loads((tmp_path / "plain" / "run.json").read_text())["jobs_seen"] == [0, 200]
    # a run without --split keeps its run.json as before
    assert main([*argv[:-2], "--out", str(tmp_path / "whole")]) == 0
    whole = json.loads((tmp_path / "whole" / "run.json").read_text())
    assert not {"split", "jobs_seen", "job_slice"} & set(whole)
