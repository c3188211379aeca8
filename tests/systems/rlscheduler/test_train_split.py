"""Held-out training and evaluation (issue 47): `train rlscheduler --split train` draws only
from the training jobs and records jobs_seen; `evaluate --split test` refuses a model that saw
the test jobs, in one line, unless --allow-seen (then its rows say in-sample)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_traces import cores_tiny

import jaxsched.sim  # noqa: F401
from jaxsched.cli import main
from jaxsched.systems.rlscheduler.config import RunConfig, make_env
from jaxsched.systems.rlscheduler.run import _run_config, with_split
from jaxsched.train.loop import read_log
from jaxsched.workload import read_swf

LENGTH = 16
N_JOBS = 400  # split 50/10/40: train [0, 200), validation [200, 240), test [240, 400)


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _trace(path):
    return cores_tiny(path, N_JOBS, 7, [5, 60, 600], [16, 64, 128, 256], [30, 300, 3000])


def _train(capsys, trace, out, *extra):
    return _run(
        capsys, "train", "rlscheduler", trace, "--compat", "rlscheduler", "--length", LENGTH,
        "--epochs", 1, "--trajectories", 4, "--pi-iters", 2, "--v-iters", 2, "--no-progress",
        "--no-compare", "--out", out, *extra,
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("split")
    trace = _trace(d / "tiny.swf")
    plain, validated, whole = d / "plain", d / "validated", d / "whole"
    base = ["train", "rlscheduler", trace, "--compat", "rlscheduler", "--length", LENGTH,
            "--epochs", 1, "--trajectories", 4, "--pi-iters", 2, "--v-iters", 2,
            "--no-progress", "--no-compare"]  # fmt: skip
    assert main([str(a) for a in base + ["--out", plain, "--split", "train"]]) == 0
    assert main([str(a) for a in base + ["--out", validated, "--split", "train", "--validate",
                 1, "--val-sequences", 2, "--val-jobs", LENGTH]]) == 0  # fmt: skip
    assert main([str(a) for a in base + ["--out", whole]]) == 0
    return trace, plain, validated, whole


def test_split_run_records_jobs_seen_before_the_validation_jobs(runs):
    _, plain, validated, whole = runs
    run = json.loads((plain / "run.json").read_text())
    assert run["split"] == {
        "name": "train", "basis": "fractions", "fractions": [0.5, 0.1, 0.4], "n_jobs": N_JOBS,
        "train": [0, 200], "validation": [200, 240], "test": [240, 400],
    }  # fmt: skip
    assert run["jobs_seen"] == [0, 200] and run["job_slice"] == 200
    assert run["jobs_seen"][1] <= run["split"]["validation"][0]
    # the training environment samples only sequences inside the training jobs
    rc = RunConfig.from_dict(run)
    low, high = make_env(read_swf(rc.trace).jobs(rc.rules), rc).start_range
    assert 0 <= low < high and high - 1 + LENGTH <= 200
    assert read_log(plain)[-1]["episodes"] >= 1
    # with validation: chosen on the validation jobs only, recorded in jobs_seen
    run = json.loads((validated / "run.json").read_text())
    assert run["jobs_seen"] == [0, 240]
    val = json.loads((validated / "validation.json").read_text())
    assert all(200 <= s and s + LENGTH <= 240 for s in val["starts"])
    # a run without --split records neither (jobs_seen is inferred from job_slice = 0)
    run = json.loads((whole / "run.json").read_text())
    assert "split" not in run and "jobs_seen" not in run


def _evaluate(capsys, trace, *extra):
    return _run(
        capsys, "evaluate", trace, "--compat", "rlscheduler", "--policy", "fcfs,sjf",
        "--backfill", "none", "--jobs", LENGTH, "--sequences", 5, "--json", *extra,
    )  # fmt: skip


def test_evaluate_test_split_takes_a_held_out_model(runs, capsys):
    trace, plain, validated, _ = runs
    rc, text, err = _evaluate(capsys, trace, "--split", "test", "--model", validated)
    assert rc == 0, err
    rows = json.loads(text)["results"]
    assert {r["policy"] for r in rows} == {"fcfs", "sjf", "rl"}
    assert all(240 <= r["start"] and r["start"] + LENGTH <= N_JOBS for r in rows)


def test_evaluate_refuses_a_model_that_saw_the_test_jobs(runs, capsys):
    trace, plain, validated, whole = runs
    rc, text, err = _evaluate(capsys, trace, "--split", "test", "--model", whole)
    assert rc == 2 and text == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "jaxsched: error: --model" in lines[0] and "[240, 400)" in lines[0]
    assert "--allow-seen" in lines[0]
    # the validation split overlaps the validated model's jobs_seen, not the plain one's
    rc, _, err = _evaluate(capsys, trace, "--split", "validation", "--model", validated)
    assert rc == 2 and "[0, 240)" in err
    rc, text, err = _evaluate(capsys, trace, "--split", "validation", "--model", plain)
    assert rc == 0, err


def test_allow_seen_labels_the_rows_in_sample(runs, capsys):
    trace, _, _, whole = runs
    rc, text, err = _evaluate(capsys, trace, "--split", "test", "--model", whole, "--allow-seen")
    assert rc == 0, err
    names = {r["policy"] for r in json.loads(text)["results"]}
    assert names == {"fcfs", "sjf", "rl (in-sample)"}
    rc, text, err = _run(
        capsys, "evaluate", trace, "--compat", "rlscheduler", "--policy", "fcfs", "--backfill",
        "none", "--jobs", LENGTH, "--sequences", 3, "--split", "test", "--model", whole,
        "--allow-seen",
    )  # fmt: skip
    assert rc == 0, err
    assert "test split, jobs [240, 400)" in text and "rl (in-sample)" in text
    rc, text, err = _run(
        capsys, "evaluate", trace, "--compat", "rlscheduler", "--policy", "fcfs", "--backfill",
        "none", "--jobs", LENGTH, "--sequences", 3, "--split", "test", "--model", whole,
        "--allow-seen", "--versus", "rl",
    )  # fmt: skip
    assert rc == 0, err
    assert "paired difference to rl (in-sample)" in text


def test_init_from_widens_jobs_seen_to_the_source_runs(runs, tmp_path, capsys):
    """One run end to end (from the validated run: its validation jobs widen jobs_seen); the
    rule for each source through the function the run calls (one trainer build, not three)."""
    trace, plain, validated, whole = runs
    out = tmp_path / "from-validated"
    rc, _, err = _train(capsys, trace, out, "--split", "train", "--init-from", validated)
    assert rc == 0, err
    assert json.loads((out / "run.json").read_text())["jobs_seen"] == [0, 240]
    for src, seen in ((plain, [0, 200]), (validated, [0, 240]), (whole, [0, N_JOBS])):
        base = _run_config(trace, ppo=None, init_from=src, length=LENGTH, compat=True)
        assert with_split(base, "train", None, validate=0).jobs_seen == seen


def test_sweep_records_the_split_for_every_seed(runs, tmp_path, capsys):
    out = tmp_path / "sweep"
    rc, _, err = _train(capsys, runs[0], out, "--seeds", "0,1", "--split", "train")
    assert rc == 0, err
    for seed in (0, 1):
        run = json.loads((out / f"seed-{seed}" / "run.json").read_text())
        assert run["seed"] == seed and run["jobs_seen"] == [0, 200] and run["job_slice"] == 200


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--split", "test", "--starts", "250"], "--split test and --starts do not go together"),
        (["--split", "test", "--protocol", "paper"], "--split test and --protocol paper"),
        (["--allow-seen"], "--allow-seen needs --split"),
        (["--split", "test", "--split-fractions", "0.5,0.5,0.5"], "sum to 1.5"),
    ],
)
def test_evaluate_split_flag_errors_are_one_line(runs, capsys, extra, words):
    rc, text, err = _evaluate(capsys, runs[0], *extra)
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_train_split_errors_are_one_line(runs, capsys, tmp_path):
    trace = runs[0]
    for extra, words in (
        (["--split", "train", "--job-slice", "100"], "--split and --job-slice"),
        (["--split-fractions", "0.5,0.1,0.4"], "--split-fractions needs --split"),
        (["--split", "train", "--validate", "1", "--val-jobs", "64"], "--val-jobs 64"),
    ):
        rc, _, err = _train(capsys, trace, tmp_path / "x", *extra)
        assert rc == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_paper_protocol_draws_from_the_first_ten_thousand_jobs(runs, capsys):
    from jaxsched.workload import reference_starts

    trace = runs[0]
    rc, text, err = _evaluate(capsys, trace, "--protocol", "paper", "--slice", 200)
    assert rc == 0, err
    starts = sorted({r["start"] for r in json.loads(text)["results"]})
    assert starts == sorted(set(reference_starts(1, 5, LENGTH, N_JOBS, 200).tolist()))
    assert np.max(starts) < 200
