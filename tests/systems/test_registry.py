"""The systems registry (jaxsched/systems/__init__.py) and the CLI commands generated from it:
lookup, one-line errors (exit status 2) for an unknown system name and for a run directory of
an unknown system, old run directories without "system" (the shipped models/) load as
RLScheduler, and a new system plugs in by its module alone."""

import json
import sys
import types
from pathlib import Path

import pytest
from shared_data import DATA, REPO

from jaxsched import systems
from jaxsched.cli import main
from jaxsched.errors import ConfigError


def _one_line_error(capsys, argv, needle):
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("jaxsched: error: "), err
    assert needle in lines[0], (needle, lines[0])


def test_registry_lookup():
    names = systems.names()
    assert names[0] == "rlscheduler"
    assert {"splitwindow", "a2c", "schedinspector"} <= set(names)
    s = systems.get("rlscheduler")
    assert isinstance(s, systems.System) and s.name == "rlscheduler"
    with pytest.raises(ConfigError, match="unknown system 'nope'; choose one of rlscheduler"):
        systems.get("nope")


def test_unknown_system_name_is_a_one_line_error(capsys):
    _one_line_error(capsys, ["train", "nope", "x.swf"], "invalid choice: 'nope'")


def test_run_dir_of_an_unknown_system_is_a_one_line_error(capsys, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"system": "nope", "trace": "x"}))
    trace = DATA / "tiny.swf"
    argv = ["evaluate", trace, "--jobs", "4", "--starts", "0", "--model", run]
    _one_line_error(capsys, argv, "unknown system 'nope'")
    _one_line_error(capsys, ["plot", run], "unknown system 'nope'")
    with pytest.raises(ConfigError):
        systems.system_of_run(run / "checkpoint_00000001.ckpt")  # a checkpoint file's dir


def test_a_missing_model_or_a_lone_checkpoint_is_a_one_line_error(capsys, tmp_path):
    trace = DATA / "tiny.swf"
    argv = ["evaluate", trace, "--jobs", "4", "--starts", "0", "--model"]
    gone = tmp_path / "gone"
    _one_line_error(capsys, [*argv, gone], f"{gone}: no such file or directory, nor a shipped")
    lone = tmp_path / "checkpoint_00000001.ckpt"
    lone.write_bytes(b"x")
    _one_line_error(capsys, [*argv, lone], f"{lone}: no run.json beside it in {tmp_path}")


def test_old_run_dirs_without_system_are_rlscheduler():
    d = REPO / "jaxsched" / "models" / "lublin1-bf"
    assert "system" not in json.loads((d / "run.json").read_text())
    system, model = systems.load_model(d)
    assert system.name == "rlscheduler" and model.epoch == 129
    assert model.run.backfill == "rlscheduler"


def test_new_runs_record_their_system():
    from jaxsched.systems.rlscheduler.config import RunConfig

    rc = RunConfig(trace="t.swf")
    d = rc.to_run_json()
    assert next(iter(d)) == "system" and d["system"] == "rlscheduler"
    assert RunConfig.from_dict(d) == rc == RunConfig.from_dict(rc.to_dict())
    with pytest.raises(ConfigError):
        RunConfig.from_dict({**rc.to_dict(), "system": "other"})


@pytest.fixture
def fake_system(monkeypatch):
    """A system that exists only as a module registered by one line in SYSTEM_MODULES."""
    calls = []

    def add_train_arguments(p):
        p.add_argument("--n", type=int, default=1)

    def train(args):
        calls.append(("train", args.n))
        print("fake trained")
        return 0

    class Model:
        def __init__(self, path):
            self.path, self.epoch = Path(path) / "checkpoint_00000003.ckpt", 3

    def model_rows(model, jobs, starts, length, backfills, metrics, compat, *, sample, name):
        calls.append(("rows", name))
        return [
            {
                "start": int(s),
                "jobs": length,
                "policy": name,
                "backfill": bf,
                "metric": m,
                "value": 1.0,
            }
            for s in starts
            for bf in backfills
            for m in metrics
        ]

    mod = types.ModuleType("fake_system_for_tests")
    mod.SYSTEM = systems.System(
        name="fake",
        help="a fake system",
        description="A fake system.",
        add_train_arguments=add_train_arguments,
        train=train,
        load_model=Model,
        model_rows=model_rows,
        plot=lambda out, path=None: "fake.png",
    )
    monkeypatch.setitem(sys.modules, "fake_system_for_tests", mod)
    monkeypatch.setattr(
        systems, "SYSTEM_MODULES", systems.SYSTEM_MODULES + ("fake_system_for_tests",)
    )
    monkeypatch.setattr(systems, "_REGISTRY", {})
    yield calls


def test_a_new_system_plugs_in_by_one_line(fake_system, capsys, tmp_path):
    assert systems.names()[0] == "rlscheduler" and systems.names()[-1] == "fake"
    assert main(["train", "fake", "--n", "4"]) == 0
    assert fake_system == [("train", 4)] and "fake trained" in capsys.readouterr().out
    run = tmp_path / "fake-run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"system": "fake"}))
    trace = DATA / "tiny.swf"
    assert (
        main(
            [
                "evaluate",
                str(trace),
                "--jobs",
                "4",
                "--starts",
                "0",
                "--policy",
                "fcfs",
                "--backfill",
                "none",
                "--metric",
                "bsld",
                "--model",
                str(run),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert ("rows", "rl") in fake_system and "rl " in out
    assert main(["plot", str(run)]) == 0 and "fake.png" in capsys.readouterr().out


def test_a_system_without_plot_says_so_in_one_line(fake_system, capsys, tmp_path, monkeypatch):
    import dataclasses

    mod = sys.modules["fake_system_for_tests"]
    monkeypatch.setattr(mod, "SYSTEM", dataclasses.replace(mod.SYSTEM, plot=None))
    run = tmp_path / "fake-run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"system": "fake"}))
    assert main(["plot", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no training-curve plot for fake runs" in err[0], err
