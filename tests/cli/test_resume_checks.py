"""``train --resume`` refuses another trace (by content) or a setting given with another value
than the run's, in one line naming it, its stored and its given value; an empty or corrupt
run.json is one line naming the file in ``train --resume``, ``select`` and ``plot``. The
checks run before anything is built: hand-written run directories, nothing is compiled."""

import hashlib
import json

import pytest

from jaxsched.cli import main


def _trace(path, extra=""):
    path.write_text("; MaxProcs: 8\n1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n" + extra)
    return path


def _run(tmp_path, trace, **over):
    out = tmp_path / "run"
    out.mkdir()
    run = {"system": "splitwindow", "trace": str(trace), "head": 2, "tail": 1, "seed": 0,
           "placements": 5, "ppo": {"pi_lr": 3e-4, "num_envs": 2},
           "trace_sha256": hashlib.sha256(trace.read_bytes()).hexdigest(), **over}  # fmt: skip
    (out / "run.json").write_text(json.dumps(run))
    return out


def _err(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("jaxsched: error: "), err
    return err


def _resume(out, trace, *flags):
    return ["train", "splitwindow", str(trace), "--out", str(out), "--resume", "--epochs", "2",
            "--no-progress", *flags]  # fmt: skip


@pytest.mark.parametrize(
    "flags, expect",
    [
        (["--seed", "3"], "--seed 3 differs from the run's seed (stored: 0, given: 3)"),
        (["--lr", "0.001"], "--lr 0.001 differs from the run's ppo.pi_lr (stored: 0.0003"),
        (["--envs", "4"], "--envs 4 differs from the run's ppo.num_envs (stored: 2, given: 4)"),
        (["--placements", "7"], "--placements 7 differs from the run's placements"),
    ],
)
def test_a_different_setting_is_refused(tmp_path, capsys, flags, expect):
    trace = _trace(tmp_path / "t.swf")
    out = _run(tmp_path, trace)
    err = _err(capsys, _resume(out, trace, *flags))
    assert expect in err and "run.json" in err


def test_another_trace_or_changed_content_is_refused(tmp_path, capsys):
    trace = _trace(tmp_path / "t.swf")
    out = _run(tmp_path, trace)
    other = _trace(tmp_path / "other.swf", "2 5 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n")
    err = _err(capsys, _resume(out, other))
    assert "TRACE" in err and "other content" in err and "trace_sha256" in err
    # a renamed copy of the same bytes is the same trace; the run's own file edited is not
    (tmp_path / "copy.swf").write_bytes(trace.read_bytes())
    _trace(trace, "3 9 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n")
    err = _err(capsys, _resume(out, tmp_path / "copy.swf"))
    assert "the run's trace" in err and str(trace) in err
    err = _err(capsys, _resume(out, trace))
    assert "TRACE" in err and "other content" in err


def test_a_run_without_a_stored_hash_keeps_the_path_rule(tmp_path, capsys):
    trace = _trace(tmp_path / "t.swf")
    out = _run(tmp_path, trace)
    run = json.loads((out / "run.json").read_text())
    del run["trace_sha256"]
    (out / "run.json").write_text(json.dumps(run))
    err = _err(capsys, _resume(out, _trace(tmp_path / "b.swf")))
    assert "is not the run's trace" in err


@pytest.mark.parametrize("content", ["", "{", "[1, 2]", "\x00\x01"])
def test_an_empty_or_corrupt_run_json_is_one_line(tmp_path, capsys, content):
    trace = _trace(tmp_path / "t.swf")
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(content)
    (out / "log.jsonl").write_text('{"epoch": 1, "val_avg_wait": 1.0}\n')
    for argv in (_resume(out, trace), ["select", str(out)], ["plot", str(out)]):
        err = _err(capsys, argv)
        assert "run.json" in err, (argv, err)
