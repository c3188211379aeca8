"""``jaxsched select``: each system's rule on hand-written run logs (the best epoch, the best
within the system's bound, the choice over runs of the same validation, resumed epochs), on
shipped models (their recorded choices), and its one-line errors."""

from __future__ import annotations

import json

import pytest
from shared_data import SHARED

from jaxsched.cli import main

H = 3600.0


def _run(tmp_path, name, rows, **run):
    d = tmp_path / name
    d.mkdir()
    (d / "run.json").write_text(json.dumps(run))
    (d / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


def _select(capsys, *argv):
    assert main(["select", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _si(epoch, insp, util, base=300.0):
    return {"epoch": epoch, "val_base": base, "val_inspected": insp, "val_rejection": 0.5,
            "val_util_base": 0.60, "val_util": util}  # fmt: skip


def test_schedinspector_best_within_the_utilisation_limit(tmp_path, capsys):
    si = {"system": "schedinspector", "metric": "bsld"}
    a = _run(tmp_path, "a", [{"epoch": 1}, _si(2, 100.0, 0.40), _si(3, 150.0, 0.595),
                             _si(4, 140.0, 0.586)], **si)  # fmt: skip
    b = _run(tmp_path, "b", [_si(5, 145.0, 0.599)], **si)
    out = _select(capsys, a, b, "--max-util-loss", "1")
    (ra, rb) = out["runs"]
    assert ra["best"]["epoch"] == 2 and ra["chosen"]["epoch"] == 3 and rb["chosen"]["epoch"] == 5
    assert out["choice"] == str(b) and ra["checkpoint"] is None  # no checkpoint kept here
    out = _select(capsys, a, b, "--max-util-loss", "1.5")  # admits a's epoch 4, ahead of b
    assert out["runs"][0]["chosen"]["epoch"] == 4 and out["choice"] == str(a)
    assert main(["select", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert f"choice over 2 runs: {b} epoch 5: 145.00 (base 300.00" in text


def test_schedinspector_util_metric_and_other_bases(tmp_path, capsys):
    u = _run(tmp_path, "u", [_si(1, 0.61, 0.61), _si(2, 0.63, 0.63)], system="schedinspector",
             metric="util")  # fmt: skip
    assert _select(capsys, u)["runs"][0]["best"]["epoch"] == 2  # higher is better
    other = _run(tmp_path, "o", [_si(1, 0.5, 0.60, base=20.0)], system="schedinspector",
                 metric="util")  # fmt: skip
    assert _select(capsys, u, other)["choice"] is None  # other validation jobs: not ranked


def _sw(epoch, wait, util, ref=0.84):
    row = {"epoch": epoch, "val_avg_wait": wait, "val_util": util}
    return row if ref is None else {**row, "val_util_fcfs_easy": ref}


def test_splitwindow_lowest_wait_within_the_bound_and_resumed_epochs(tmp_path, capsys):
    sw = {"system": "splitwindow"}
    a = _run(tmp_path, "a", [{"epoch": 1}, _sw(2, 9_000.0, 0.78), _sw(3, 12_000.0, 0.832),
                             _sw(4, 11_000.0, 0.826)], **sw)  # fmt: skip
    b = _run(tmp_path, "b", [_sw(5, 11_500.0, 0.835), _sw(5, 11_900.0, 0.835)], **sw)
    out = _select(capsys, a, b)
    assert out["runs"][0]["best"]["epoch"] == 2 and out["runs"][0]["chosen"]["epoch"] == 3
    assert out["runs"][1]["chosen"]["val_avg_wait"] == 11_900.0  # a resumed epoch: its last line
    assert out["choice"] == str(b)
    plain = _run(tmp_path, "p", [_sw(1, 9_000.0, 0.99, ref=None)], **sw)
    assert _select(capsys, plain)["runs"][0]["chosen"] is None  # no reference logged
    y = _run(tmp_path, "y", [_sw(1, 9_000.0, 0.80, ref=0.80)], **sw)
    assert _select(capsys, a, y)["choice"] is None  # other episodes: not ranked


def test_dras_bound_from_the_validation_month(tmp_path, capsys):
    from jaxsched.systems.dras.config import RunConfig

    trace = str(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    run = RunConfig(trace=trace).to_dict()
    row = lambda e, w, h: {"epoch": e, "val_wait": w, "val_max_wait": h * H}  # noqa: E731
    a = _run(tmp_path, "a", [row(1, 2000.0, 60), row(2, 3000.0, 40)], **run)
    b = _run(tmp_path, "b", [row(1, 2900.0, 30)], **run)
    out = _select(capsys, a, b)
    # FCFS + EASY's maximum wait on SDSC-SP2's validation month is 34.29 h: the bound 51.4 h
    # admits a's epoch 2 (40 h) and b's epoch 1, not a's lower-wait epoch 1 (60 h)
    assert out["runs"][0]["best"]["epoch"] == 1 and out["runs"][0]["chosen"]["epoch"] == 2
    assert out["choice"] == str(b)
    assert main(["select", str(a), "--bound", "1"]) == 0
    assert "within 1 x FCFS + EASY's (34.29 h): none" in capsys.readouterr().out


def test_shipped_models_recorded_choices(capsys):
    from jaxsched.models import resolve

    out = _select(capsys, resolve("si-lublin1-sjf-uw"))  # chosen with --max-util-loss 1
    assert out["runs"][0]["chosen"]["epoch"] == 15
    assert out["runs"][0]["checkpoint"].endswith("checkpoint_00000015.ckpt")
    assert _select(capsys, resolve("lublin1-bf-fast"))["runs"][0]["chosen"]["epoch"] == 28
    assert _select(capsys, resolve("a2c-l07"))["runs"][0]["chosen"]["epoch"] == 30


@pytest.mark.parametrize("case", ["mixed", "no-log", "unvalidated"])
def test_one_line_errors(tmp_path, capsys, case):
    a = _run(tmp_path, "a", [_sw(1, 1.0, 0.9)], system="splitwindow")
    if case == "mixed":
        b = _run(tmp_path, "b", [_si(1, 1.0, 0.6)], system="schedinspector", metric="bsld")
        want = "several systems"
    elif case == "no-log":
        (b := tmp_path / "b").mkdir()
        (b / "run.json").write_text(json.dumps({"system": "splitwindow"}))
        want = "no log.jsonl"
    else:
        b = _run(tmp_path, "b", [{"epoch": 1}], system="splitwindow")
        want = "no validated epoch"
    assert main(["select", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert want in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv, want",
    [
        (["--rescore", "2"], "for RLScheduler runs; these are splitwindow runs"),
        (["--top", "1", "--test"], "--top, --test only with --rescore N"),
        (["--rescore", "2", "--epochs", "5-1"], "expected A-B with A <= B"),
    ],
)
def test_rescore_one_line_errors(tmp_path, capsys, argv, want):
    """--rescore (scoring kept checkpoints, tested in tests/benchmarks/test_benchmarks_smoke.py)
    is RLScheduler's; its flags need it; a malformed --epochs is a usage error."""
    a = _run(tmp_path, "a", [_sw(1, 1.0, 0.9)], system="splitwindow")
    assert main(["select", str(a), *argv]) == 2
    err = capsys.readouterr().err
    assert want in err and err.count("\n") == 1
