"""`jaxsched evaluate`, called in-process: output schema, agreement with the oracle, errors."""

import json

import pytest

from jaxsched.cli import main
from jaxsched.sim import oracle
from jaxsched.workload import read_swf

TRACE = "traces/lublin-1.swf"


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def one_error_line(err):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("jaxsched: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def jobs():
    return read_swf(TRACE).jobs("rlscheduler")


def test_json_rows_match_the_oracle(capsys, jobs):
    rc, out, err = run(
        capsys,
        "evaluate",
        TRACE,
        "--compat",
        "rlscheduler",
        "--policy",
        "sjf,f1",
        "--backfill",
        "none,rlscheduler",
        "--metric",
        "bsld,util",
        "--jobs",
        "96",
        "--starts",
        "100,4000",
        "--json",
    )
    assert rc == 0, err
    doc = json.loads(out)
    assert set(doc) == {"results", "timing"}
    assert {"compile_s", "run_s", "decisions"} <= set(doc["timing"])
    rows = doc["results"]
    assert len(rows) == 2 * 2 * 2 * 2
    for r in rows:
        assert set(r) == {"start", "jobs", "policy", "backfill", "metric", "value"}
        s = r["start"]
        sl = slice(s, s + 96)
        starts = oracle.simulate(
            jobs.submit[sl],
            jobs.run[sl],
            jobs.req_time[sl],
            jobs.procs[sl],
            num_nodes=jobs.num_nodes,
            procs_per_node=jobs.procs_per_node,
            policy=r["policy"],
            backfill=r["backfill"],
            compat=True,
        )
        m = oracle.metrics(
            jobs.submit[sl],
            jobs.run[sl],
            jobs.procs[sl],
            starts,
            num_procs=jobs.num_procs,
            compat=True,
        )
        want = m["util_ref"] if r["metric"] == "util" else m[r["metric"]]
        assert r["value"] == pytest.approx(want, rel=1e-12)
        assert r["jobs"] == 96


def test_table_output(capsys):
    rc, out, err = run(
        capsys,
        "evaluate",
        TRACE,
        "--policy",
        "fcfs,sjf",
        "--backfill",
        "none,easy",
        "--metric",
        "wait",
        "--jobs",
        "64",
        "--starts",
        "10",
    )
    assert rc == 0, err
    lines = out.splitlines()
    assert any(l.startswith("policy") and "wait (no bf)" in l and "wait (easy)" in l for l in lines)
    assert sum(l.startswith(("fcfs ", "sjf ")) for l in lines) == 2


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--policy", "fifo"], "unknown policy 'fifo'"),
        (["--backfill", "conservative"], "unknown backfill mode 'conservative'"),
        (["--metric", "speed"], "unknown metric 'speed'"),
        (
            ["--starts", "9990"],
            "sequence start 9990 with 1024 jobs runs past the 10000 loaded jobs",
        ),
        (
            ["--compat", "rlscheduler", "--backfill", "easy"],
            "backfill 'easy' is not part of the reference",
        ),
        (["--jobs", "0"], "expected a positive integer"),
        (["--starts", "1,x"], "expected comma-separated integers"),
    ],
)
def test_bad_flags_are_one_line_errors(capsys, argv, needle):
    rc, out, err = run(capsys, "evaluate", TRACE, *argv)
    assert rc == 2 and out == ""
    assert needle in one_error_line(err)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--model", "rl=lublin1-bf"], "LABEL= and :on/:off are for DRAS models"),
        (["--model", "lublin1-bf:off"], "LABEL= and :on/:off are for DRAS models"),
        (["--model", "pg=dras-sdsc-pg", "--json"], "which --json and --table do not print"),
        (["--model", "dras-sdsc-pg", "--model", "dras-sdsc-pg"], "'dras-sdsc-pg' repeat(s)"),
        (["--model", "fcfs=dras-sdsc-pg"], "'fcfs' repeat(s) or name a baseline"),
    ],
)
def test_model_labels_are_for_dras_tables(capsys, argv, needle):
    """``--model [LABEL=]NAME[:on|:off]``: the label and the online flag go only with DRAS
    models in text mode, and each row of the table has its own name (one-line errors, before
    any simulation)."""
    rc, out, err = run(capsys, "evaluate", TRACE, *argv)
    assert rc == 2 and out == ""
    assert needle in one_error_line(err)


def test_model_spec_parsing(tmp_path, monkeypatch):
    from jaxsched.systems import parse_model_spec

    assert parse_model_spec("dras-sdsc-pg") == (None, "dras-sdsc-pg", None)
    assert parse_model_spec("pg=dras-sdsc-pg:off") == ("pg", "dras-sdsc-pg", False)
    assert parse_model_spec("runs/x/best.ckpt:on") == (None, "runs/x/best.ckpt", True)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lr=0.1:on").mkdir()  # an existing path is taken whole
    assert parse_model_spec("lr=0.1:on") == (None, "lr=0.1:on", None)


def test_missing_trace_is_one_line_error(capsys, tmp_path):
    rc, _, err = run(capsys, "evaluate", str(tmp_path / "nope.swf"))
    assert rc == 2
    assert "nope.swf" in one_error_line(err)


def test_job_larger_than_machine_is_reported(capsys, tmp_path):
    bad = tmp_path / "big.swf"
    bad.write_text(
        "; MaxNodes: 4\n; MaxProcs: 4\n"
        "1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "2 5 -1 10 9 -1 -1 9 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    rc, _, err = run(capsys, "evaluate", str(bad), "--jobs", "2", "--starts", "0")
    assert rc == 2
    line = one_error_line(err)
    assert "big.swf:4" in line and "9" in line


def test_job_without_processors_is_reported(capsys, tmp_path):
    """The reference's parse rules keep a job with no processor count (spec §10.3); the
    simulator refuses it with file, line and field instead of corrupting the node count."""
    bad = tmp_path / "zero.swf"
    bad.write_text(
        "; MaxNodes: 4\n; MaxProcs: 4\n"
        "1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "2 5 -1 10 0 -1 -1 0 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    rc, _, err = run(
        capsys, "evaluate", str(bad), "--compat", "rlscheduler", "--jobs", "2", "--starts", "0"
    )
    assert rc == 2
    line = one_error_line(err)
    assert "zero.swf:4" in line and "processors" in line, line
    # the default rules drop the job (counted) and the sequence runs
    rc, out, err = run(capsys, "evaluate", str(bad), "--jobs", "1", "--starts", "0")
    assert rc == 0, err


def test_sem_and_paired_differences_hand_computed():
    """Policy a scores 1, 3, 8 and b 2, 2, 5 on three sequences: a's mean 4 with standard error
    sqrt(13/3) = 2.08; a - b = -1, 1, 3: mean +1 with standard error 2/sqrt(3) = 1.15."""
    import numpy as np

    from jaxsched.errors import ConfigError
    from jaxsched.sim.evaluate import EvalResult, format_table

    rows = [
        dict(start=s, jobs=4, policy=p, backfill="none", metric="bsld", value=v)
        for s, p, v in [
            (0, "a", 1.0),
            (1, "a", 3.0),
            (2, "a", 8.0),
            (2, "b", 5.0),
            (0, "b", 2.0),
            (1, "b", 2.0),
        ]
    ]
    res = EvalResult(
        rows, np.array([0, 1, 2]), ["a", "b"], ["none"], ["bsld"], np.zeros((3, 2, 1, 4)), {}
    )
    assert res.sem("bsld")[("a", "none")] == pytest.approx((13 / 3) ** 0.5)
    d, e = res.paired("bsld", "b")[("a", "none")]
    assert d == pytest.approx(1.0) and e == pytest.approx(2 / 3**0.5)
    assert res.paired("bsld", "b")[("b", "none")] == (0.0, 0.0)
    assert "4.0000 ± 2.08" in format_table(res, sem=True)
    text = format_table(res, versus="b")
    assert "policy - b" in text and "+1.0000 ± 1.15" in text
    with pytest.raises(ConfigError, match="--versus c"):
        res.paired("bsld", "c")


def test_cli_sem_and_versus(capsys):
    rc, out, err = run(
        capsys,
        "evaluate",
        TRACE,
        "--compat",
        "rlscheduler",
        "--policy",
        "sjf,f1",
        "--backfill",
        "none",
        "--jobs",
        "96",
        "--starts",
        "100,4000",
        "--sem",
        "--versus",
        "f1",
    )
    assert rc == 0, err
    assert " ± " in out and "paired difference to f1" in out and "policy - f1" in out
    rc, out, err = run(
        capsys,
        "evaluate",
        TRACE,
        "--policy",
        "sjf",
        "--jobs",
        "96",
        "--starts",
        "100",
        "--versus",
        "rl",
    )
    assert rc == 2 and "--versus rl: not among the evaluated policies" in one_error_line(err)
