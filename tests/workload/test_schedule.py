"""Schedules read back from files, placed on processors and turned into time series
(jaxsched.workload.schedule), and the pictures of `jaxsched plot schedule|compare`."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsched.cli import main
from jaxsched.errors import ScheduleError
from jaxsched.workload.schedule import Schedule, place_on_processors, read_schedule, time_series
from jaxsched.workload.swf import parse_swf
from jaxsched.workload.swf_write import write_schedule_csv, write_schedule_swf


def _schedule(submit, start, run, procs, num_procs, user=None) -> Schedule:
    a = [np.asarray(x, np.int64) for x in (submit, start, run, procs)]
    n = a[0].size
    users = np.zeros(n, np.int64) if user is None else np.asarray(user, np.int64)
    return Schedule(np.arange(1, n + 1), *a, users, num_procs=num_procs, path="hand")


def test_first_fit_placement_by_hand():
    # 4 processors. A(2) on 0-1 and B(1) on 2 start at 0 and end at 10; finishes come before
    # starts, so C(3) starting at 10 gets 0-2 and D(1) gets 3.
    s = _schedule([0, 0, 5, 5], [0, 0, 10, 10], [10, 10, 5, 5], [2, 1, 3, 1], 4)
    rows, first, count = place_on_processors(s)
    assert rows.tolist() == [0, 1, 2, 3]
    assert first.tolist() == [0, 2, 0, 3] and count.tolist() == [2, 1, 3, 1]
    # B runs longer: C finds 0, 1, 3 free -> split into [0, 2) and [3, 4)
    s = _schedule([0, 0, 5], [0, 0, 10], [10, 20, 5], [2, 1, 3], 4)
    rows, first, count = place_on_processors(s)
    assert rows.tolist() == [0, 1, 2, 2]
    assert first.tolist() == [0, 2, 0, 3] and count.tolist() == [2, 1, 2, 1]


def test_overcommitted_log_goes_above_the_machine():
    s = _schedule([0, 0], [0, 0], [10, 10], [3, 3], 4)
    rows, first, count = place_on_processors(s)
    assert first.tolist() == [0, 3] and count.tolist() == [3, 3]  # second job uses 3..5


def test_time_series_by_hand():
    s = _schedule([0, 0, 5], [0, 2, 10], [10, 10, 5], [2, 1, 3], 4)
    ts = time_series(s)
    assert ts.time.tolist() == [0, 2, 5, 10, 12, 15]
    assert ts.busy.tolist() == [2, 3, 3, 4, 3, 0]
    assert ts.running.tolist() == [1, 2, 2, 2, 1, 0]
    assert ts.waiting.tolist() == [1, 0, 1, 0, 0, 0]
    busy_seconds = 2 * 2 + 3 * 3 + 3 * 5 + 4 * 2 + 3 * 3
    assert ts.mean_utilisation() == pytest.approx(busy_seconds / (4 * 15))


def _random_feasible(rng, n, procs):
    """A random FCFS schedule without backfilling: each job starts at the first time, not
    before the previous start, when enough processors are free (feasible by construction: no
    later start exists, so usage only falls after that time)."""
    submit = np.sort(rng.integers(0, 500, n))
    run = rng.integers(1, 100, n)
    size = rng.integers(1, procs + 1, n)
    start = np.zeros(n, np.int64)
    for j in range(n):
        t = max(submit[j], start[j - 1] if j else 0)
        while size[j] + sum(size[i] for i in range(j) if start[i] + run[i] > t) > procs:
            t = min(start[i] + run[i] for i in range(j) if start[i] + run[i] > t)
        start[j] = t
    return _schedule(submit, start, run, size, procs)


@pytest.mark.parametrize("seed", range(5))
def test_placement_never_overlaps_and_stays_on_the_machine(seed):
    rng = np.random.default_rng(seed)
    s = _random_feasible(rng, 40, 16)
    rows, first, count = place_on_processors(s)
    assert np.bincount(rows, weights=count, minlength=s.n_jobs).tolist() == s.procs.tolist()
    assert (first >= 0).all() and (first + count <= s.num_procs).all()
    for t in np.unique(np.concatenate([s.start, s.end])):
        live = (s.start[rows] <= t) & (t < s.end[rows])
        used = np.zeros(s.num_procs, np.int64)
        for f, c in zip(first[live], count[live]):
            used[f : f + c] += 1
        assert used.max(initial=0) <= 1
        assert used.sum() == time_series(s).busy[np.searchsorted(time_series(s).time, t)]


def _jobs(tmp_path):
    text = "; MaxProcs: 8\n" + "".join(
        f"{i + 1} {10 * i} -1 {20 + i} 2 -1 -1 {1 + i % 4} 50 -1 1 {i % 3} 1 1 -1 -1 -1 -1\n"
        for i in range(6)
    )
    return parse_swf(text, path=str(tmp_path / "t.swf")).jobs("default")


def test_swf_and_csv_round_trip(tmp_path):
    jobs = _jobs(tmp_path)
    starts = jobs.submit + np.array([0, 5, 0, 30, 1, -1 - jobs.submit[5]])  # last never ran
    write_schedule_swf(jobs, starts, tmp_path / "s.swf")
    write_schedule_csv(jobs, starts, tmp_path / "s.csv")
    for name in ("s.swf", "s.csv"):
        s = read_schedule(tmp_path / name)
        assert s.n_jobs == 5 and s.skipped == 1
        assert s.start.tolist() == starts[:5].tolist()
        assert s.procs.tolist() == jobs.procs[:5].tolist()
        assert s.run.tolist() == jobs.run[:5].tolist()
    assert read_schedule(tmp_path / "s.swf").user.tolist() == jobs.user[:5].tolist()
    pandas = pytest.importorskip("pandas")
    df = pandas.read_csv(tmp_path / "s.csv")
    ran = df[df.success == 1]
    np.testing.assert_array_equal(ran.waiting_time.to_numpy(), (starts - jobs.submit)[:5])
    np.testing.assert_array_equal(
        ran.finish_time.to_numpy(), (starts + jobs.run)[:5]
    )  # execution_time = run


def test_bad_files_are_one_line(tmp_path):
    with pytest.raises(ScheduleError, match="no such file"):
        read_schedule(tmp_path / "missing.swf")
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submission_time,starting_time,execution_time,"
                   "requested_number_of_resources\n1,0,5,10,2\n2,0,x,10,2\n")  # fmt: skip
    with pytest.raises(ScheduleError) as e:
        read_schedule(bad)
    assert str(e.value) == f"{bad}:3: starting_time: 'x' is not a number"
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ScheduleError, match="not a Batsim jobs CSV"):
        read_schedule(other)


def test_cli_plot_schedule_and_compare(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    jobs = _jobs(tmp_path)
    a, b = tmp_path / "a.swf", tmp_path / "b.csv"
    write_schedule_swf(jobs, jobs.submit, a)
    write_schedule_csv(jobs, jobs.submit + 7, b)
    assert main(["plot", "schedule", str(a), "--out", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").stat().st_size > 10_000
    rc = main(["plot", "compare", str(a), str(b), "--out", str(tmp_path / "c.png")])
    assert rc == 0 and (tmp_path / "c.png").stat().st_size > 10_000
    capsys.readouterr()
    rc = main(["plot", "schedule", str(a), "--from", "999999", "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert rc == 2 and "no job runs between" in err and len(err.strip().splitlines()) == 1
    rc = main(["plot", "compare", str(a), str(b), "--labels", "only-one"])
    assert rc == 2 and "--labels" in capsys.readouterr().err
