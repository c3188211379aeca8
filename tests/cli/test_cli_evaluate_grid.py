"""`jaxsched evaluate` grids: several traces x seeds x policies x backfills as one tidy table
(--table FILE.csv|FILE.json), read back with csv / json and checked against the library."""

import csv
import json

import pytest

from jaxsched.cli import main
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload import read_swf, reference_starts

JOBS = 12


def _trace(path, long_run):
    """Jobs of 1-4 processors on a 4-processor machine, one every 7 s (60 jobs)."""
    lines = ["; MaxNodes: 4", "; MaxProcs: 4"]
    for j in range(60):
        run, procs = (long_run if j % 3 == 0 else 20 + j), 1 + j % 4
        lines.append(
            f"{j + 1} {7 * j} -1 {run} {procs} -1 -1 {procs} {run} -1 1 1 1 -1 -1 -1 -1 -1"
        )
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("grid")
    return _trace(d / "a.swf", 300), _trace(d / "b.swf", 90)


GRID = ["--policy", "fcfs,sjf", "--backfill", "none,easy", "--metric", "bsld,wait",
        "--jobs", JOBS, "--sequences", 2, "--seed", "1,2"]  # fmt: skip


def test_grid_table_csv_and_json(traces, capsys, tmp_path):
    a, b = traces
    rc, out, err = _run(capsys, "evaluate", a, "--traces", b, *GRID, "--table", tmp_path / "t.csv")
    assert rc == 0, err
    assert "64 rows (2 trace(s) x 2 seed(s))" in out
    rc, out, err = _run(capsys, "evaluate", a, b, *GRID, "--table", tmp_path / "t.json", "--json")
    assert rc == 0, err
    printed = json.loads(out)["results"]
    with open(tmp_path / "t.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc == printed and len(rows) == len(doc) == 2 * 2 * 2 * 2 * 2 * 2
    assert list(rows[0]) == ["trace", "seed", "start", "jobs", "policy", "backfill", "metric",
                             "value"]  # fmt: skip
    for r, d in zip(rows, doc):
        assert r["trace"] == d["trace"] and int(r["seed"]) == d["seed"]
        assert (int(r["start"]), int(r["jobs"])) == (d["start"], d["jobs"])
        assert (r["policy"], r["backfill"], r["metric"]) == (
            d["policy"],
            d["backfill"],
            d["metric"],
        )
        assert float(r["value"]) == d["value"]  # repr round-trips exactly
    # every cell is the library's evaluate on that trace's sequences of that seed
    for path in (a, b):
        jobs = read_swf(path).jobs("rlscheduler")
        for seed in (1, 2):
            starts = reference_starts(seed, 2, JOBS, jobs.n_jobs)
            res = evaluate(jobs, starts, JOBS, ["fcfs", "sjf"], ["none", "easy"], compat=False,
                           metrics=("bsld", "wait"))  # fmt: skip
            mine = [
                {k: d[k] for k in ("start", "jobs", "policy", "backfill", "metric", "value")}
                for d in doc
                if d["trace"] == path and d["seed"] == seed
            ]
            assert mine == res.rows
    # the two traces differ, so a mix-up of rows would show
    va = [d["value"] for d in doc if d["trace"] == a and d["metric"] == "wait"]
    vb = [d["value"] for d in doc if d["trace"] == b and d["metric"] == "wait"]
    assert va != vb


def test_starts_give_a_blank_seed_and_errors_are_one_line(traces, capsys, tmp_path):
    a, b = traces
    rc, out, err = _run(capsys, "evaluate", a, b, "--policy", "fcfs", "--backfill", "none",
                        "--jobs", JOBS, "--starts", "0,5", "--table", tmp_path / "s.csv")  # fmt: skip
    assert rc == 0, err
    with open(tmp_path / "s.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 and {r["seed"] for r in rows} == {""}
    assert [int(r["start"]) for r in rows] == [0, 5, 0, 5]
    for argv, needle in [
        (["--table", tmp_path / "t.txt", a], "must end in .csv or .json"),
        (["--table", tmp_path / "no" / "t.csv", a], f"the folder {tmp_path / 'no'} does not exist"),
        (["--jobs", JOBS], "no trace given"),
        ([a, "--seed", "1,x"], "expected comma-separated integers"),
    ]:
        rc, _, err = _run(capsys, "evaluate", *argv)
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and needle in lines[0], err
    assert not (tmp_path / "no").exists()  # a missing folder is an error, not created
