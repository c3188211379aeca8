"""``jaxsched simulate``: the schedule written as SWF and as Batsim CSV, checked against the
oracle and read back."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from shared_data import DATA

from jaxsched.cli import main
from jaxsched.sim.oracle import simulate
from jaxsched.workload import read_swf

TINY = str(DATA / "tiny.swf")
RULES = ["--rules", "default"]  # tiny.swf has a job without processors


def _oracle_starts(jobs, policy, backfill, compat):
    return simulate(
        jobs.submit, jobs.run, jobs.req_time, jobs.procs,
        num_nodes=jobs.num_nodes, procs_per_node=jobs.procs_per_node,
        policy=policy, backfill=backfill, compat=compat,
    )  # fmt: skip


@pytest.mark.parametrize("engine", ["host", "jax"])
@pytest.mark.parametrize(
    "policy, backfill, compat", [("fcfs", "easy", False), ("sjf", "rlscheduler", True)]
)
def test_swf_and_csv_schedules_equal_the_oracle(tmp_path, capsys, policy, backfill, compat,
                                                engine):  # fmt: skip
    """Both engines (the suite's check that they agree; the whole grid:
    tests/sim/test_single.py), with the progress bar (the jax engine in chunks) and without."""
    jobs = read_swf(TINY).jobs("default")
    want = np.asarray(_oracle_starts(jobs, policy, backfill, compat))
    extra = ["--compat", "rlscheduler"] if compat else []
    swf, table = tmp_path / "s.swf", tmp_path / "s.csv"
    for out, bar in ((swf, []), (table, ["--no-progress"] if engine == "host" else [])):
        argv = ["simulate", TINY, "--policy", policy, "--backfill", backfill, "--out", str(out)]
        assert main(argv + extra + RULES + ["--engine", engine] + bar) == 0
    said = capsys.readouterr().out
    assert f"scheduled by {policy} + {backfill}" in said and f"engine: {engine})" in said
    back = read_swf(swf)  # our reader reads what we wrote; field 3 = start - submit
    np.testing.assert_array_equal(back.wait, want - jobs.submit)
    assert f"policy {policy}, backfill {backfill}" in swf.read_text()
    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["job_id"]) for r in rows] == list(jobs.job_id)
    np.testing.assert_array_equal([int(r["starting_time"]) for r in rows], want)
    np.testing.assert_array_equal([int(r["waiting_time"]) for r in rows], want - jobs.submit)
    fin = [int(r["finish_time"]) for r in rows]
    np.testing.assert_array_equal(fin, want + jobs.run)
    assert {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}


def test_window_and_format_flag(tmp_path, capsys):
    out = tmp_path / "part.txt"
    rc = main(
        ["simulate", TINY, "--start", "2", "--jobs", "3", "--format", "csv", "--out", str(out)]
    )
    assert rc == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("job_id,workload_name") and len(lines) == 4
    assert "jobs 2..4 (3)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "policy, backfill",
    [("tuned:tuned-sdsc-easy", "easy-sjbf"), ("f1", "easy++"), ("random", "rlscheduler-sjbf")],
)
def test_every_evaluate_mode_on_the_host(tmp_path, capsys, policy, backfill):
    """The policies and modes simulate takes since issue 60 (evaluate's), on the default
    engine (the host), equal the host engine's own schedule (tests/sim/test_single.py checks
    it against the oracle and the compiled engine)."""
    from jaxsched.sim import single

    jobs = read_swf(TINY).jobs("default")
    want = single.schedule(jobs, 0, jobs.n_jobs, policy, backfill, engine="host")[0]
    out = tmp_path / "s.swf"
    argv = ["simulate", TINY, "--policy", policy, "--backfill", backfill, "--out", str(out)]
    assert main(argv + RULES) == 0
    said = capsys.readouterr().out
    assert f"scheduled by {policy} + {backfill} backfilling (correct mode, engine: host)" in said
    np.testing.assert_array_equal(read_swf(out).wait, want - jobs.submit)


def test_bad_requests_are_one_line(tmp_path, capsys):
    out = str(tmp_path / "x.swf")
    assert (
        main(["simulate", TINY, "--compat", "rlscheduler", "--backfill", "easy", "--out", out]) == 2
    )
    assert "no reference counterpart" in capsys.readouterr().err
    assert main(["simulate", TINY, "--start", "999", "--out", out, *RULES]) == 2
    assert "the trace has" in capsys.readouterr().err
    for extra, said in (
        (["--policy", "fcsf"], "unknown policy 'fcsf'"),
        (["--policy", "wfp3", "--backfill", "easy++"], "static main order"),
        (["--compat", "rlscheduler", "--backfill", "easy-sjbf"], "not part of the reference"),
        (["--engine", "host", "--model", "lublin1-bf-fast"], "--engine host: a learned model"),
    ):
        assert main(["simulate", TINY, "--out", out, *RULES, *extra]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err


def test_learned_model_schedule(tmp_path, capsys):
    """--model: a shipped model's schedule of the tiny trace is feasible (never more processors
    busy than the machine has, no job before its submit), and the bsld printed is the file's."""
    from jaxsched.sim.oracle import metrics
    from jaxsched.workload.schedule import read_schedule, time_series

    jobs = read_swf(TINY).jobs("default")
    out = tmp_path / "m.swf"
    argv = ["simulate", TINY, "--model", "lublin1-bf-fast", "--compat", "rlscheduler"]
    assert main(argv + ["--backfill", "rlscheduler", "--out", str(out), *RULES]) == 0
    said = capsys.readouterr().out
    assert "rlscheduler model" in said
    s = read_schedule(out, num_procs=int(jobs.num_procs))
    assert s.n_jobs == jobs.n_jobs and (s.start >= s.submit).all()
    assert time_series(s).busy.max() <= jobs.num_procs
    m = metrics(s.submit, s.run, s.procs, s.start, num_procs=float(jobs.num_procs), compat=True)
    assert f"bsld {m['bsld']:,.2f}" in said


def _engine_is_the_oracle(monkeypatch, shift=None):
    """Replace simulate's engine by the plain-Python oracle (no compile); ``shift(starts)``
    spoils its schedule."""
    import jaxsched.cli.simulate as S

    def starts(args, jobs, length, compat):
        window = jobs.window(args.start, length)
        got = np.asarray(_oracle_starts(window, args.policy, args.backfill, compat), np.int64)
        return got if shift is None else shift(got)

    monkeypatch.setattr(S, "_heuristic_starts", starts)


@pytest.mark.parametrize("name", ["s.swf", "s.csv", "s.swf.gz"])
@pytest.mark.parametrize("old", [True, False])
def test_a_kill_during_the_write_leaves_the_old_file(tmp_path, monkeypatch, name, old):
    """Killed half way through writing the schedule: the final name holds the old file (or
    nothing), and no temporary is left in the folder."""
    import jaxsched.workload.swf_write as W
    from jaxsched import fileio

    def killed_half_way(path, data, *, gzip_by_suffix=False):
        data = data.encode() if isinstance(data, str) else data
        with fileio.atomic_writer(path, gzip_by_suffix=gzip_by_suffix) as fh:
            fh.write(data[: len(data) // 2])
            fh.flush()
            raise KeyboardInterrupt  # the signal arrives in the middle of the write

    _engine_is_the_oracle(monkeypatch)
    monkeypatch.setattr(W, "atomic_write", killed_half_way)
    out = tmp_path / name
    if old:
        out.write_bytes(b"the old schedule\n")
    with pytest.raises(KeyboardInterrupt):
        main(["simulate", TINY, "--out", str(out), *RULES])
    assert [p.name for p in tmp_path.iterdir()] == ([name] if old else [])
    if old:
        assert out.read_bytes() == b"the old schedule\n"


@pytest.mark.parametrize(
    "spoil, says",
    [
        (lambda s: np.where(np.arange(s.size) == 3, -1, s), "was never started (start -1)"),
        (lambda s: np.where(s > 0, s - 1, s), "before its submit time"),
        (lambda s: np.zeros_like(s) + s.max(), "processors of"),  # all at once
    ],
    ids=["never-started", "before-submit", "over-allocated"],
)
def test_an_invalid_schedule_is_not_written(tmp_path, monkeypatch, capsys, spoil, says):
    """The engine's schedule is validated before anything is written: exit 2, one line naming
    the job, the final name untouched (an old file stays, no new file appears)."""
    _engine_is_the_oracle(monkeypatch, spoil)
    old, new = tmp_path / "old.swf", tmp_path / "new.csv"
    old.write_text("the old schedule\n")
    for out in (old, new):
        assert main(["simulate", TINY, "--out", str(out), *RULES]) == 2
        err = capsys.readouterr().err
        assert err.startswith("jaxsched: error: schedule of ") and err.count("\n") == 1, err
        assert says in err and " job " in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.swf"]
    assert old.read_text() == "the old schedule\n"
