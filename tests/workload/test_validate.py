"""The schedule validator (jaxsched/workload/validate.py) on hand-computed schedules: a valid one
passes, each kind of violation is caught and names the right job; and its verdict equals a
brute-force check on small random schedules.  Host-side numpy only."""

from __future__ import annotations

import numpy as np
import pytest
from shared_data import DATA

from jaxsched.errors import JaxschedError, ScheduleError
from jaxsched.workload import read_swf
from jaxsched.workload.validate import check_schedule, validate_schedule

# 4 processors in 2 nodes of 2.  Job numbers 11..15 (row r is job 11 + r).
SUBMIT = np.array([0, 0, 5, 5, 6])
RUN = np.array([10, 5, 5, 0, 4])
PROCS = np.array([2, 1, 2, 4, 1])
IDS = np.arange(11, 16)
# job 11 runs 0-10 on node 1; 12 runs 0-5 on node 2; 13 starts at 5 when 12 ends (ends free
# their processors before starts at equal times); 14 (4 processors, run 0) at 10 when 11 ends
# and 13 ends; 15 at 10 as well (14 takes no time).
START = np.array([0, 0, 5, 10, 10])
MACHINE = dict(num_procs=4, num_nodes=2, procs_per_node=2.0, job_id=IDS)


def check(start=START, **kw):
    args = dict(MACHINE)
    args.update(kw)
    submit, run, procs = (
        args.pop(k, d) for k, d in (("submit", SUBMIT), ("run", RUN), ("procs", PROCS))
    )
    check_schedule(submit, run, procs, np.asarray(start), **args)


def fails(match, start=START, **kw):
    with pytest.raises(ScheduleError, match=match) as e:
        check(start, **kw)
    assert "\n" not in str(e.value) and isinstance(e.value, JaxschedError)
    return str(e.value)


def test_a_valid_schedule_passes():
    check()
    check(end=START + RUN)
    check(num_nodes=None, procs_per_node=None)  # processors alone
    check(scheduled_ids=IDS[::-1], start=START[::-1])  # rows keyed by job number
    check_schedule([], [], [], [], num_procs=1)  # no jobs


def test_never_started_and_negative_starts():
    fails(r"job 13 was never started \(start -1\)", start=[0, 0, -1, 10, 10])
    fails("job 12 starts at -3, a negative time", start=[0, -3, 5, 10, 10], submit=[0, -5, 5, 5, 6])


def test_start_before_submit_names_the_lowest_row():
    msg = fails("job 14 starts at 4, before its submit time 5", start=[0, 0, 5, 4, 3])
    assert msg == "schedule: job 14 starts at 4, before its submit time 5"


def test_one_start_per_job():
    fails("4 start times for 5 jobs", start=START[:4])
    fails("job 13 is not scheduled", scheduled_ids=[11, 12, 14, 14, 15])
    fails("job 14 is scheduled 2 times", scheduled_ids=[11, 12, 13, 14, 14])
    fails("job 99 is scheduled but is not a loaded job", scheduled_ids=[11, 12, 13, 99, 15])


def test_ends_and_run_times():
    fails("job 13 ends at 9, not start [+] run = 10", end=[10, 5, 9, 10, 14])
    fails("job 12 has a negative run time -1", run=[10, -1, 5, 0, 4])


def test_processor_over_allocation():
    # job 13 one second early: 11 (2) + 12 (1) still run at 4, 13 needs 2 more
    msg = fails(
        "job 13 starts at 4 when 5 processors of 4", start=[0, 0, 4, 10, 10], submit=[0, 0, 4, 5, 6]
    )
    assert "(3 nodes of 2)" in msg
    # 12 running to 7: at 6, 11 (2) + 12 (1) + 15 (1) fit in 4 processors, not in 2 nodes of 2
    start, run = [0, 0, 10, 10, 6], [10, 7, 5, 0, 4]
    check(start, run=run, num_nodes=None, procs_per_node=None)
    fails(
        "job 15 starts at 6 when 4 processors of 4 would be busy [(]3 nodes of 2[)]", start, run=run
    )


def test_zero_length_jobs_hold_nothing():
    check_schedule([0, 0], [0, 5], [4, 4], [0, 0], num_procs=4)
    # jobs 0 and 1 both start at 3 on the whole machine; job 2 (run 0) at 3 too is not blamed
    with pytest.raises(ScheduleError, match="job 1 starts at 3 when 8 processors of 4"):
        check_schedule([0, 0, 0], [5, 5, 0], [4, 4, 4], [3, 3, 3], num_procs=4)


def test_a_job_larger_than_the_machine():
    fails("job 14 needs 5 processors; the machine has 4", procs=[2, 1, 2, 5, 1])
    fails("job 15 needs 2 nodes; the machine has 1", procs=[1, 1, 1, 1, 2], num_nodes=1,
          procs_per_node=1.5, num_procs=4, start=[0, 10, 15, 20, 20])  # fmt: skip


def test_equal_times_end_before_start():
    # a job that ends at t and one that starts at t on the whole machine: valid
    check_schedule([0, 0], [5, 5], [4, 4], [0, 5], num_procs=4)
    with pytest.raises(ScheduleError, match="job 1 starts at 4 when 8 processors of 4"):
        check_schedule([0, 0], [5, 5], [4, 4], [0, 4], num_procs=4)


def test_validate_schedule_reads_the_jobs_machine():
    jobs = read_swf(DATA / "tiny.swf").jobs("default")
    t, starts = 0, []
    for s, r in zip(jobs.submit.tolist(), jobs.run.tolist()):  # one job at a time: valid
        t = max(t, s)
        starts.append(t)
        t += r
    serial = np.asarray(starts)
    validate_schedule(jobs, serial)
    late = serial.copy()
    late[1] = jobs.submit[1] - 1
    with pytest.raises(ScheduleError, match=f"tiny.swf: job {int(jobs.job_id[1])} starts at"):
        validate_schedule(jobs, late)


def _brute_force_ok(submit, run, procs, start, cap) -> bool:
    if (start < submit).any():
        return False
    for t in set(start.tolist()):  # usage only grows at starts; after every event at t
        if procs[(start <= t) & (t < start + run)].sum() > cap:
            return False
    return True


def test_verdict_equals_brute_force_on_random_schedules():
    rng = np.random.default_rng(64)
    verdicts = []
    for _ in range(300):
        n = int(rng.integers(1, 9))
        submit = np.sort(rng.integers(0, 6, n))
        run = rng.integers(0, 5, n)
        procs = rng.integers(0, 4, n)
        start = submit + rng.integers(0, 6, n)
        ok = _brute_force_ok(submit, run, procs, start, 4)
        verdicts.append(ok)
        try:
            check_schedule(submit, run, procs, start, num_procs=4)
            assert ok, (submit, run, procs, start)
        except ScheduleError:
            assert not ok, (submit, run, procs, start)
    assert 50 < sum(verdicts) < 250  # both verdicts are exercised
