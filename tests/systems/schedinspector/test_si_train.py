"""``jaxsched train schedinspector`` end to end on a tiny trace: one epoch, --resume to a
second, validation columns and best checkpoint, the model loaded back and evaluated (base
alone vs base + inspector), the registry entry and run.json."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_traces import schedinspector_tiny

from jaxsched import systems
from jaxsched.cli import main as jaxsched_main
from jaxsched.systems.schedinspector.cli import evaluate_main
from jaxsched.systems.schedinspector.evaluate import compare, format_compare


def _train_args(trace, out) -> list:
    return [
        "train", "schedinspector", str(trace), "--base", "sjf", "--metric", "bsld",
        "--backfill", "none", "--out", str(out), "--length", "8", "--trajectories", "4",
        "--max-steps", "24", "--pi-iters", "2", "--v-iters", "2", "--validate", "2",
        "--validate-every", "1", "--eval-length", "16", "--no-progress",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("si")
    trace, out = schedinspector_tiny(tmp / "tiny.swf"), tmp / "run"
    args = _train_args(trace, out)
    assert jaxsched_main(args + ["--epochs", "1", "--keep-checkpoints", "0"]) == 0
    # the resume keeps every checkpoint too: the run's own --keep-checkpoints (DIR/flags.json)
    assert jaxsched_main(args + ["--epochs", "2", "--resume"]) == 0
    return trace, out


def test_run_directory(run):
    trace, out = run
    rj = json.loads((out / "run.json").read_text())
    assert rj["system"] == "schedinspector" and rj["base"] == "sjf" and rj["max_steps"] == 24
    log = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [1, 2]
    for r in log:
        assert 0 <= r["val_rejection"] <= 1 and r["val_base"] >= 1 and r["trajectories"] <= 4
        assert 0 < r["val_util"] <= 1 and 0 < r["val_util_base"] <= 1
    assert (out / "best.ckpt").is_file()
    assert sorted(p.name for p in out.glob("checkpoint_*.ckpt")) == [
        "checkpoint_00000001.ckpt",
        "checkpoint_00000002.ckpt",
    ]  # fmt: skip (--keep-checkpoints 0 of the first run keeps every epoch)
    assert systems.system_of_run(out).name == "schedinspector"


@pytest.mark.extended  # a two-device subprocess; tests/train/test_parallel.py checks data-parallel PPO
def test_two_devices_train_what_one_does(run, tmp_path):
    """``--devices 2`` in a process started without a device count (the command splits the
    CPU itself): the first epoch rolls out the very trajectories of one device (the same
    sampled actions), its update agrees up to float rounding, the validation runs on the
    replicated parameters, and the run resumes on one device."""
    from shared_data import run_python

    trace, one = run
    two = tmp_path / "two"
    code = "import sys; from jaxsched.cli import main; sys.exit(main(sys.argv[1:]))"
    args = _train_args(trace, two) + ["--epochs", "1", "--devices", "2"]
    run_python(["-c", code, *args])
    a, b = (json.loads((d / "log.jsonl").read_text().splitlines()[0]) for d in (one, two))
    for k in ("reward", "decisions", "trajectories", "dropped", "val_base", "val_inspected"):
        assert a[k] == b[k], k
    for k in ("v_loss", "approx_kl"):
        np.testing.assert_allclose(b[k], a[k], rtol=1e-3, atol=1e-7, err_msg=k)
    assert json.loads((two / "run.json").read_text())["devices"] == 2
    assert json.loads((one / "run.json").read_text())["devices"] == 1
    assert jaxsched_main(_train_args(trace, two) + ["--epochs", "2", "--resume"]) == 0
    assert len((two / "log.jsonl").read_text().splitlines()) == 2


def test_evaluate(run, capsys):
    trace, out = run
    system, model = systems.load_model(out)
    assert model.epoch == 2
    res = compare(model, [3, 40], length=16, trace=str(trace))
    text = format_compare(res)
    assert "rejection ratio" in text and "bsld" in text
    assert (np.asarray(res["decisions"]) >= 16 - 16).all()
    rows = system.model_rows(model, type("J", (), {"path": str(trace)})(), [3, 40], 16,
                             ["none"], ["bsld"], True, name="si")  # fmt: skip
    assert [r["value"] for r in rows] == list(map(float, res["inspected"]["bsld"]))
    assert evaluate_main([str(trace), "--model", str(out), "--jobs", "16", "--sequences", "2"]) == 0
    assert "difference" in capsys.readouterr().out


def test_max_util_loss_keeps_a_utilisation_losing_epoch_out_of_best(run, tmp_path):
    import dataclasses
    from types import SimpleNamespace

    from jaxsched.systems.schedinspector.config import load_jobs
    from jaxsched.systems.schedinspector.run import _validation

    trace, out = run
    model = systems.load_model(out)[1]
    jobs, wait = load_jobs(str(trace), model.run.mode)
    state = SimpleNamespace(policy_params=model.params)
    for limit, kept in ((-100.0, False), (100.0, True), (None, True)):
        d = tmp_path / f"limit{limit}"
        d.mkdir()
        rc = dataclasses.replace(model.run, max_util_loss=limit)
        row = _validation(rc, jobs, wait, d)(state, 3, model.path)
        assert 0 < row["val_util"] <= 1  # -100: the utilisation would have to rise 100 points
        assert (d / "best.json").is_file() == kept, limit


def test_plot(run, tmp_path, capsys):
    trace, out = run
    png = tmp_path / "curve.png"
    assert jaxsched_main(["plot", str(out), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "run.json").write_text((out / "run.json").read_text())
    (empty / "log.jsonl").write_text("")
    assert jaxsched_main(["plot", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no epochs logged yet" in err[0], err


def test_shipped_model_loads():
    from shared_data import REPO

    system, model = systems.load_model(REPO / "jaxsched" / "models" / "si-lublin1-sjf")
    assert system.name == "schedinspector" and model.epoch == 80
    assert model.run.base == "sjf" and model.run.trace == "traces/lublin-1.swf"


def test_epoch_line_says_when_trajectories_hit_the_step_cap():
    """An epoch whose trajectories all hit the step cap learns nothing (the reference would
    keep sampling); the log line says so instead of a silent 'reward +0.0000'."""
    from jaxsched.systems.schedinspector.run import _message

    row = {"reward": 0.0, "decisions": 0.0, "trajectories": 0, "dropped": 100}
    assert "all 100 trajectories hit the step cap: nothing learned" in _message(row)
    row = {"reward": 0.5, "decisions": 300.0, "trajectories": 97, "dropped": 3}
    assert "(3 trajectories dropped at the step cap)" in _message(row)
    row = {"reward": 0.5, "decisions": 300.0, "trajectories": 100, "dropped": 0}
    assert "dropped" not in _message(row) and "cap" not in _message(row)


def test_cap_reward_trains_on_capped_trajectories(tmp_path):
    """--cap-reward: trajectories reaching --max-steps end there with that reward and are
    trained on (none dropped); the default drops them (the reference). A max-steps of 2 on
    8-job sequences caps every trajectory (a capped one gets the cap reward alone, whatever
    --util-weight, which run.json records)."""
    trace = schedinspector_tiny(tmp_path / "tiny.swf")
    common = [
        "train", "schedinspector", str(trace), "--length", "8", "--trajectories", "4",
        "--max-steps", "2", "--pi-iters", "1", "--v-iters", "1", "--epochs", "1",
        "--no-progress",
    ]  # fmt: skip
    logs = {}
    for name, extra in (("drop", []), ("cap", ["--cap-reward", "-1", "--util-weight", "0.5"])):
        out = tmp_path / name
        assert jaxsched_main(common + ["--out", str(out)] + extra) == 0
        logs[name] = json.loads((out / "log.jsonl").read_text().splitlines()[0])
        logs[name]["run"] = json.loads((out / "run.json").read_text())
    assert logs["drop"]["dropped"] == 4 and logs["drop"]["trajectories"] == 0
    assert logs["drop"]["run"]["cap_reward"] is None
    assert logs["cap"]["dropped"] == 0 and logs["cap"]["trajectories"] == 4
    assert logs["cap"]["reward"] == -1.0 and logs["cap"]["decisions"] == 2.0
    assert logs["cap"]["run"]["cap_reward"] == -1.0
    assert logs["drop"]["run"]["util_weight"] == 0.0 and logs["cap"]["run"]["util_weight"] == 0.5


@pytest.mark.parametrize("flag,value", [("--util-weight", "nan"), ("--cap-reward", "inf")])
def test_non_finite_reward_options_are_refused(tmp_path, capsys, flag, value):
    args = ["train", "schedinspector", str(tmp_path / "x.swf"), "--epochs", "1"]
    assert jaxsched_main(args + ["--out", str(tmp_path / "r"), flag, value]) == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: expected a finite number, got '{value}'" in err
    assert not (tmp_path / "r").exists()
