"""The `jaxsched trace ...`, `jaxsched evaluate` and `jaxsched demo` command line, called in-process."""

from __future__ import annotations

import gzip
import json
import sys
import types

import pytest
from shared_data import DATA

import jaxsched.workload
from jaxsched import cli
from jaxsched.cli import main
from jaxsched.cli.demo import HELD_OUT_VERSUS
from jaxsched.workload import read_swf

TINY = DATA / "tiny.swf"


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("jaxsched: error: "), err
    return lines[0]


def test_trace_info_text(capsys):
    rc, out, err = run(capsys, "trace", "info", str(TINY))
    assert rc == 0 and err == ""
    assert "jobs:         8" in out
    assert "rules rlscheduler: 7 jobs loaded; N = 4 nodes, P = 8 processors" in out
    assert "dropped_zero_run 1" in out


def test_trace_info_json_first_and_rules(capsys):
    rc, out, err = run(
        capsys, "trace", "info", str(TINY), "--json", "--first", "4", "--rules", "default"
    )
    assert rc == 0 and err == ""
    d = json.loads(out)
    assert d["trace"]["jobs"] == 4 and d["jobs"]["rules"] == "default"
    assert d["jobs"]["jobs"] == 2  # jobs 1 and 4 (2 has run 0, 3 has run -1)
    assert d["jobs"]["fixes"]["dropped_nonpositive_run"] == 2
    assert d["skipped"] == []


def test_trace_info_gzip(capsys, tmp_path):
    p = tmp_path / "tiny.swf.gz"
    p.write_bytes(gzip.compress(TINY.read_bytes()))
    rc, out, _ = run(capsys, "trace", "info", str(p), "--json")
    assert rc == 0 and json.loads(out)["trace"]["jobs"] == 8


def test_missing_file_is_one_line_exit_2(capsys, tmp_path):
    missing = tmp_path / "nope.swf"
    rc, out, err = run(capsys, "trace", "info", str(missing))
    assert rc == 2 and out == ""
    assert one_error_line(err) == f"jaxsched: error: {missing}: no such file"


def test_malformed_file_is_one_line_exit_2(capsys, tmp_path):
    p = tmp_path / "bad.swf"
    p.write_text("; MaxNodes: 4\n" + "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n1 2 3\n")
    rc, out, err = run(capsys, "trace", "info", str(p))
    assert rc == 2 and out == ""
    assert one_error_line(err) == f"jaxsched: error: {p}:3: expected 18 fields, found 3"
    # skipping makes it usable, and says so on one warning line
    rc, out, err = run(capsys, "trace", "info", str(p), "--skip-bad-lines")
    assert rc == 0
    assert "jobs:         1  (1 bad lines skipped)" in out
    warn = err.splitlines()
    assert len(warn) == 1 and warn[0].startswith("jaxsched: warning: ")
    assert "skipped 1 bad line(s)" in warn[0]


def test_missing_maxnodes_under_rlscheduler(capsys, tmp_path):
    p = tmp_path / "nohdr.swf"
    p.write_text("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n")
    rc, _, err = run(capsys, "trace", "info", str(p))
    assert rc == 2
    assert one_error_line(err).startswith(f"jaxsched: error: {p}: MaxNodes: header value missing")
    rc, out, err = run(capsys, "trace", "info", str(p), "--rules", "default")
    assert rc == 0 and "rules default: 1 jobs loaded" in out


def test_binary_file(capsys, tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"\x00\x01\x02garbage")
    rc, _, err = run(capsys, "trace", "info", str(p))
    assert rc == 2
    assert one_error_line(err) == f"jaxsched: error: {p}: not an SWF file (binary data)"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["trace"],
        ["trace", "info"],
        ["trace", "info", "x.swf", "--rules", "bogus"],
        ["trace", "info", "x.swf", "--first", "0"],
        ["trace", "info", "x.swf", "--first", "ten"],
        ["nosuchcommand"],
        ["trace", "generate"],
        ["trace", "generate", "lublin"],  # --out is required
        ["trace", "generate", "lublin", "--out", "o.swf", "--typed", "--typeless"],
    ],
)
def test_usage_errors_are_one_line_exit_2(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert "(usage: jaxsched" in line


def test_help_exits_0(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0 and "trace" in out and "demo" in out
    rc, out, _ = run(capsys, "trace", "info", "--help")
    assert rc == 0 and "--skip-bad-lines" in out


def test_subcommand_registry_has_room_for_more():
    assert list(cli.COMMANDS)[:4] == ["trace", "evaluate", "simulate", "demo"]

    @cli.command("zz-test")
    def _add(sub):
        p = sub.add_parser("zz-test")
        p.set_defaults(handler=lambda args: 7)

    try:
        assert main(["zz-test"]) == 7
    finally:
        del cli.COMMANDS["zz-test"]


class FakeLublin(types.ModuleType):
    def __init__(self, fail=None):
        super().__init__("jaxsched.workload.lublin")
        self.calls, self.fail = [], fail

    def generate_cli(self, preset, nodes, typed, jobs, seed, start_hour, out):
        self.calls.append((preset, nodes, typed, jobs, seed, start_hour, out))
        if self.fail:
            raise ValueError(self.fail)
        return out


@pytest.fixture
def fake_lublin(monkeypatch):
    def install(fail=None):
        mod = FakeLublin(fail)
        monkeypatch.setitem(sys.modules, "jaxsched.workload.lublin", mod)
        monkeypatch.setattr(jaxsched.workload, "lublin", mod, raising=False)
        return mod

    return install


def test_generate_lublin_arguments(capsys, fake_lublin):
    mod = fake_lublin()
    rc, out, err = run(
        capsys, "trace", "generate", "lublin", "--preset", "lublin-2", "--out", "o.swf"
    )
    assert rc == 0 and out.strip() == "wrote o.swf" and err == ""
    assert mod.calls[-1] == ("lublin-2", None, True, 10000, None, 0, "o.swf")
    rc, *_ = run(
        capsys,
        "trace",
        "generate",
        "lublin",
        "--nodes",
        "128",
        "--typeless",
        "--jobs",
        "500",
        "--seed",
        "42",
        "--start-hour",
        "8",
        "--out",
        "p.swf",
    )
    assert rc == 0
    assert mod.calls[-1] == (None, 128, False, 500, 42, 8, "p.swf")


def test_generate_lublin_bad_input_is_one_line(capsys, fake_lublin):
    fake_lublin(fail="give either --preset lublin-1|lublin-2 or --nodes P")
    rc, out, err = run(capsys, "trace", "generate", "lublin", "--out", "o.swf")
    assert rc == 2 and out == ""
    assert one_error_line(err) == (
        "jaxsched: error: give either --preset lublin-1|lublin-2 or --nodes P"
    )


def test_generate_lublin_real_module(capsys, tmp_path):
    """Integration with the real generator: a short Lublin-1 prefix reads back as SWF."""
    out_path = tmp_path / "l1.swf"
    rc, out, err = run(
        capsys,
        "trace",
        "generate",
        "lublin",
        "--preset",
        "lublin-1",
        "--jobs",
        "50",
        "--out",
        str(out_path),
    )
    assert rc == 0, err
    t = read_swf(out_path)
    assert t.n_jobs == 50 and t.max_nodes == 256


def test_demo_missing_default_trace(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(
        jaxsched.workload, "default_trace_path", lambda: tmp_path / "traces" / "lublin-1.swf"
    )
    rc, _, err = run(capsys, "demo")
    assert rc == 2
    assert one_error_line(err) == (
        f"jaxsched: error: {tmp_path / 'traces' / 'lublin-1.swf'}: no such file"
    )


def test_demo_compares_shipped_models_with_heuristics(capsys, tmp_path):
    """The main job, shrunk: the trace report, the heuristics and both shipped models on the
    same sequences with their paired differences, EASY in the correct mode; the short live
    training run only announced (--train-epochs 0 here: its two commands, train and plot, are
    tested in tests/systems/rlscheduler/)."""
    out = tmp_path / "demo"
    rc, text, err = run(
        capsys, "demo", "--sequences", "2", "--jobs", "128", "--train-epochs", "0",
        "--out", str(out), "--held-out-sequences", "3", "--held-out-jobs", "3000",
    )  # fmt: skip
    assert rc == 0, err
    in_sample = text.split("Held out:")[0]
    assert "lublin-1.swf" in text and "jobs:         10,000" in text
    assert "rules rlscheduler: 10,000 jobs loaded" in text
    # three tables (no bf + shipped model, reference bf + shipped model, correct mode / EASY),
    # one row per paper heuristic in each
    assert "bsld (no bf)" in text and "bsld (rlscheduler)" in text and "bsld (easy)" in text
    for p in ("fcfs", "wfp3", "unicep", "sjf", "f1"):
        assert sum(ln.startswith(p + " ") for ln in in_sample.splitlines()) == 3
    for model in ("lublin1-none", "lublin1-bf-fast"):
        (row,) = [ln for ln in text.splitlines() if ln.startswith(model + " ") and " - " not in ln]
        assert float(row.split()[1].replace(",", "")) >= 1.0  # its bsld
        assert f"{model} - " in text and "paired on the same 2 sequences" in text
    assert "the 10,000 the models trained on" in text and "Held out, on 200 sequences" in text
    assert "A SHORT live training run" not in text and not out.exists()
    # held out: the inspector against every heuristic on a fresh trace of the generator's test
    # seed, one row per heuristic, sorted by bsld, each with its paired difference
    assert "fresh Lublin-1 trace of 3,000 jobs" in text and "seed 20261128" in text
    held = text.split("Held out:")[1].splitlines()
    rows = [ln.split() for ln in held if ln.split() and ln.split()[0] in HELD_OUT_VERSUS]
    assert [r[0] for r in rows] and len(rows) == len(HELD_OUT_VERSUS)
    means = [float(r[1].replace(",", "")) for r in rows]
    assert means == sorted(means)
    (ins,) = [ln.split() for ln in held if ln.startswith("inspector ")]
    for r in rows:  # inspector - heuristic = the difference of the means (paired, same sequences)
        diff = float(r[4].replace(",", ""))
        assert diff == pytest.approx(float(ins[1]) - float(r[1].replace(",", "")), abs=0.02)
    assert "the best heuristic" in text and "utilisation" in text


def test_demo_recorded_curve_is_the_shipped_runs_log():
    """Before its live run the demo prints a shipped run's recorded curve: one row per logged
    epoch with its sampled, SJF and F1 bsld, the greedy validation value where it validated."""
    from jaxsched import models
    from jaxsched.cli.demo import CURVE_MODEL, _recorded_curve

    logged = [json.loads(ln) for ln in (models.path(CURVE_MODEL) / "log.jsonl").open()]
    text = _recorded_curve()
    rows = [ln.split() for ln in text.splitlines() if ln.split() and ln.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == [r["epoch"] for r in logged]
    for r, want in zip(rows, logged):
        got = [float(x.replace(",", "")) for x in r[1:]]
        assert got[:3] == pytest.approx([want["bsld"], want["sjf_bsld"], want["f1_bsld"]], abs=0.01)
        assert (len(got) == 4) == ("val_bsld" in want)
    assert "validation sequences" in text and "best validated epoch" in text
