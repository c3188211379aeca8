"""Tests of the plain-Python oracle simulator (jaxsched/sim/oracle.py).

1. every value of shared/reference/*-seq1024.json (reference SchedGym, 2 traces x 10 sequences x
   9 policies x 2 backfill settings x 5 metrics), relative error <= 1e-9;
2. the oracle table of spec rlscheduler.md §8.4 (Lublin-1/2, paper seeds 1, 2, 20);
3. hand-computed schedules of 3-6 jobs;
4. the closed-form tie rules of §2.8.1/§2.8.2 against the literal list emulation;
5. hypothesis properties (invariants, EASY reservation guarantee, random-choice driving).
"""

from __future__ import annotations

import functools
import json
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxsched.sim import oracle as O
from jaxsched.workload.swf import read_swf
from jaxsched.workload.validate import check_schedule

REFERENCE_POLICIES = ("fcfs", "sjf", "wfp3", "unicep", "f1", "f2", "f3", "f4", "smallest")


from shared_data import SHARED


# ----------------------------------------------------------------------------------------------
# Trace loading (the project's SWF reader with the reference's parse rules, spec §1)
# ----------------------------------------------------------------------------------------------
@functools.cache
def load_trace(name: str) -> dict:
    jobs = read_swf(SHARED / "traces" / name).jobs(rules="rlscheduler")
    return dict(
        submit=jobs.submit.tolist(),
        run=jobs.run.tolist(),
        req_time=jobs.req_time.tolist(),
        procs=jobs.procs.tolist(),
        num_nodes=int(jobs.num_nodes),
        num_procs=jobs.num_procs,
        procs_per_node=float(jobs.procs_per_node),
    )


def run_window(
    trace: dict, start: int, length: int, policy: str, backfill: str, compat: bool = True
) -> dict:
    sl = slice(start, start + length)
    sub, run, req, procs = (trace[x][sl] for x in ("submit", "run", "req_time", "procs"))
    starts = O.simulate(
        sub,
        run,
        req,
        procs,
        num_nodes=trace["num_nodes"],
        procs_per_node=trace["procs_per_node"],
        policy=policy,
        backfill=backfill,
        compat=compat,
    )
    return O.metrics(sub, run, procs, starts, num_procs=trace["num_procs"], compat=compat)


# ----------------------------------------------------------------------------------------------
# 1. Reference values
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ref_file, trace_file",
    [
        ("lublin_256_new2-seq1024.json", "lublin_256_new2.swf.gz"),
        ("HPC2N-2002-2.2-cln-seq1024.json", "HPC2N-2002-2.2-cln.swf.gz"),
    ],
)
def test_reference_values(ref_file, trace_file):
    ref = json.loads((SHARED / "reference" / ref_file).read_text())
    trace = load_trace(trace_file)
    assert len(trace["submit"]) == ref["loaded_jobs"]
    cache: dict = {}
    worst, bad, seen = 0.0, [], set()
    for row in ref["results"]:
        key = (row["start"], row["jobs"], row["policy"], row["backfill"])
        if key not in cache:
            cache[key] = run_window(trace, *key)
        value = cache[key][row["metric"]]
        err = abs(value - row["value"]) / abs(row["value"])
        worst = max(worst, err)
        seen.add((row["policy"], row["backfill"], row["metric"]))
        if not err <= 1e-9:
            bad.append((row, value))
    # all 9 policies x 2 backfill x 5 metrics x 10 sequences
    assert len(ref["results"]) == 900 and len(seen) == 90 and len(cache) == 180
    assert {p for p, _, _ in seen} == set(REFERENCE_POLICIES)
    assert not bad, f"{len(bad)} mismatches (max rel err {worst:.3g}), first: {bad[:3]}"


# ----------------------------------------------------------------------------------------------
# 2. Spec §8.4 oracle table (paper seeds)
# ----------------------------------------------------------------------------------------------
SEED_STARTS = {
    1: [1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085],
    2: [5316, 6704, 7470, 7238, 7216, 1167, 8814, 2516, 6433, 7528],
    20: [1131, 5655, 1684, 6977, 1245, 5498, 6628, 5299, 7328, 8682],
}
TABLE_POLICIES = ("fcfs", "wfp3", "unicep", "sjf", "f1")
# (trace, seed) -> {(metric, backfill): values in TABLE_POLICIES order}
TABLE_84 = {
    ("lublin_256.swf.gz", 1): {
        ("bsld", "none"): (7273.771360, 19753.527528, 22274.744676, 277.348341, 258.366372),
        ("bsld", "rlscheduler"): (235.817305, 133.873761, 307.232858, 73.306497, 75.068151),
        ("util", "none"): (0.656603, 0.746515, 0.690843, 0.761601, 0.815952),
        ("util", "rlscheduler"): (0.868172, 0.864352, 0.883390, 0.778415, 0.840126),
    },
    ("lublin_256_new2.swf.gz", 1): {
        ("bsld", "none"): (7842.470887, 9523.175073, 11265.311477, 787.887380, 698.336791),
        ("bsld", "rlscheduler"): (247.606741, 318.353081, 379.592399, 91.993360, 148.249385),
        ("util", "none"): (0.404068, 0.543274, 0.510429, 0.561872, 0.477525),
        ("util", "rlscheduler"): (0.587014, 0.582865, 0.586529, 0.592752, 0.551859),
    },
    ("lublin_256.swf.gz", 2): {
        ("sld", "none"): (9711.105413, 26630.895016, 29995.021475, 397.248208, 339.338099),
        ("sld", "rlscheduler"): (316.724349, 199.668069, 478.208297, 91.824605, 87.365684),
    },
    ("lublin_256_new2.swf.gz", 2): {
        ("sld", "none"): (13913.533930, 18948.406060, 21977.977494, 1489.680114, 1925.391025),
        ("sld", "rlscheduler"): (275.545422, 310.056239, 423.610682, 162.572697, 133.157602),
    },
    ("lublin_256.swf.gz", 20): {
        ("wait", "none"): (241111.291211, 476218.575000, 683473.848047, 42509.916406, 18936.351172),
        ("wait", "rlscheduler"): (
            24887.564746,
            19112.030469,
            32110.481836,
            30099.951074,
            12692.977832,
        ),
    },
    ("lublin_256_new2.swf.gz", 20): {
        ("wait", "none"): (134542.207031, 178924.053418, 202814.313379, 18278.375488, 26104.975684),
        ("wait", "rlscheduler"): (6300.899512, 8713.203320, 8155.599707, 4011.754785, 5828.306250),
    },
}


@pytest.mark.parametrize("trace_file, seed", sorted(TABLE_84))
def test_spec_table_8_4(trace_file, seed):
    trace = load_trace(trace_file)
    assert len(trace["submit"]) == 10000 and trace["num_nodes"] == 256
    assert trace["num_procs"] == 256
    cells = TABLE_84[(trace_file, seed)]
    for backfill in ("none", "rlscheduler"):
        for p_i, policy in enumerate(TABLE_POLICIES):
            runs = [run_window(trace, a, 1024, policy, backfill) for a in SEED_STARTS[seed]]
            for (metric, bf), values in cells.items():
                if bf != backfill:
                    continue
                mean = sum(m[metric] for m in runs) / len(runs)
                # the table has 6 decimals: half a unit of the last digit
                assert abs(mean - values[p_i]) <= 5e-7 + 1e-12 * abs(mean), (
                    trace_file,
                    seed,
                    metric,
                    backfill,
                    policy,
                    mean,
                    values[p_i],
                )


# ----------------------------------------------------------------------------------------------
# 3. Hand-computed schedules
# ----------------------------------------------------------------------------------------------
def sim(jobs, N, policy="fcfs", backfill="none", compat=True, ppn=1.0, detailed=False):
    """jobs: list of (submit, run, req_time, procs)."""
    s, r, q, n = (list(c) for c in zip(*jobs))
    res = O.simulate_detailed(
        s, r, q, n, num_nodes=N, procs_per_node=ppn, policy=policy, backfill=backfill, compat=compat
    )
    return res if detailed else res.starts


def test_no_backfill_committed_pick():
    # N = 4.  t=0: job0 (3 nodes) starts, 1 node free.  Queue empty -> next event: arrival of
    # job1 at t=1; it is the only waiting job, so it is committed although it does not fit
    # (needs 2).  While it waits job2 (1 node, would fit in the free node) arrives at t=2 but is
    # not considered: the next decision happens only after job1 starts.  Release of job0 at
    # t=10 -> job1 starts at 10, then (same clock) job2 starts at 10.  Same for SJF, whose
    # shorter job2 was not there when job1 was picked.
    jobs = [(0, 10, 10, 3), (1, 5, 5, 2), (2, 2, 2, 1)]
    for policy in ("fcfs", "sjf", "f1"):
        for compat in (True, False):
            assert sim(jobs, 4, policy, compat=compat) == [0, 10, 10]


def test_equal_submit_times_presented_one_by_one():
    # N = 1, three jobs submitted at t=0.  Only job0 is in the queue at the first decision ->
    # starts at 0.  The queue is empty, so one event: arrival of job1 (0 <= finish 10) -> it
    # alone is decided on (committed), waits; meanwhile job2 arrives.  job1 starts at 10, then
    # job2 at 15 -- although SJF with all three visible would run job2 (1 s) before job1 (5 s).
    jobs = [(0, 10, 10, 1), (0, 5, 5, 1), (0, 1, 1, 1)]
    assert sim(jobs, 1, "sjf") == [0, 10, 15]
    assert sim(jobs, 1, "sjf", compat=False) == [0, 10, 15]


def test_arrival_wins_tie_with_release():
    # N = 2, SJF, no backfill.  job0 (2 nodes) runs 0..10.  job1 (1 node) arrives at t=1 and is
    # committed (waits).  job2 (q=30) arrives at t=2.  At t=10 two events coincide: the arrival
    # of job3 (q=5) and the release of job0.  The arrival goes first, so job3 is in the queue
    # when job1 starts at 10 and the next SJF decision (same clock) sees {job2, job3}: job3
    # (shorter) starts at 10, taking the last node; job2 waits for job3's release at 15.
    # (Release first would have given job1@10, job2@10 and job3@30.)
    jobs = [(0, 10, 10, 2), (1, 20, 20, 1), (2, 30, 30, 1), (10, 5, 5, 1)]
    assert sim(jobs, 2, "sjf") == [0, 10, 15, 10]
    assert sim(jobs, 2, "sjf", compat=False) == [0, 10, 15, 10]


# Shared instance for the two backfilling flavours (N = 5, FCFS):
#   job0 (0, r10, q10, 3 nodes) runs 0..10, 2 nodes free.
#   job1 (1, 5, 5, 3) committed at t=1, does not fit.  Reservation: job0's estimated end 10
#        frees 2 + 3 = 5 >= 3 nodes -> shadow 10; extra nodes at the shadow = 5 - 3 = 2.
#   job2 (2, 8, 8, 1): ends by its estimate at 2 + 8 = 10 == shadow.
#   job3 (3, 6, 6, 1): ends at 9 < shadow.
#   job4 (4, 100, 100, 1): long, fits in a free node, would fit beside job1 (extra node).
BF_JOBS = [(0, 10, 10, 3), (1, 5, 5, 3), (2, 8, 8, 1), (3, 6, 6, 1), (4, 100, 100, 1)]


def test_rlscheduler_backfill_strict_and_no_extra_nodes():
    # Reference greedy backfilling: t=2 job2 is NOT backfilled (10 < 10 is false: strict <).
    # t=3 job3 is backfilled (9 < 10, 1 <= 2 free) -> 1 node free.  t=4 job4 fits in the free
    # node and would fit beside job1 at the shadow, but 104 >= 10 and there is no extra-nodes
    # rule -> not backfilled.  Events: release job3 at 9 (2 free), release job0 at 10 (5 free)
    # -> job1 starts at 10 (2 free); FCFS decisions at t=10: job2 (1 free), job4 (0 free).
    for compat in (True, False):
        res = sim(BF_JOBS, 5, "fcfs", "rlscheduler", compat=compat, detailed=True)
        assert res.starts == [0, 10, 10, 3, 10]
        assert res.entry_shadow == {1: 10}
        assert res.backfilled == [False, False, False, True, False]
    # without backfilling job3 waits as well: job1, job2, job3 at 10, job4 at job1's end 15
    assert sim(BF_JOBS, 5, "fcfs") == [0, 10, 10, 10, 15]


def test_easy_backfill_on_the_same_instance():
    # True EASY (compat=False): t=2 job2 ends at 10 <= shadow 10 (non-strict) -> backfilled
    # (1 free).  t=3: reservation recomputed: job3 ends 9 <= 10, fits -> backfilled (0 free).
    # t=4: job4 cannot start (no free node).  t=9: release of job3 (1 free); the reservation is
    # recomputed: 1 free + job2's 1 + job0's 3 at 10 = 5 >= 3 -> shadow 10, extra 2, so the long
    # job4 is backfilled at 9 by the extra-nodes rule (0 free).  t=10: job0 (started before
    # job2) is released first -> 3 free -> job1 starts at 10, its shadow.
    res = sim(BF_JOBS, 5, "fcfs", "easy", compat=False, detailed=True)
    assert res.starts == [0, 10, 2, 3, 9]
    assert res.backfilled == [False, False, True, True, True]
    assert res.entry_shadow == {1: 10} and res.entry_extra == {1: 2}


# EASY extra-nodes rule (N = 6, FCFS):
#   job0 (0, 10, 10, 3) runs 0..10, 3 free.
#   job1 (1, 5, 5, 4) committed, needs 4: shadow 10 (3 + 3 = 6 >= 4), extra = 2.
#   job2, job3, job4 (t = 2, 3, 4; r = q = 100; 1 node): long jobs, only the extra rule applies.
#   job5 (5, 5, 5, 1): ends at exactly 10 = the shadow.
EXTRA_JOBS = [
    (0, 10, 10, 3),
    (1, 5, 5, 4),
    (2, 100, 100, 1),
    (3, 100, 100, 1),
    (4, 100, 100, 1),
    (5, 5, 5, 1),
]


def test_easy_extra_nodes_rule():
    # t=2: job2 fits (3 free) and 1 <= extra 2 -> backfilled; extra 1, 2 free.
    # t=3: reservation recomputed: 2 free + job0's 3 at 10 = 5 >= 4 -> shadow 10, extra 1 ->
    #      job3 backfilled by the extra rule; 1 free.
    # t=4: 1 free + 3 = 4 -> shadow 10, extra 0: job4 fits now but would delay job1 -> NOT
    #      backfilled.
    # t=5: job5 ends by its estimate at 10 <= 10 (EASY's time rule is not strict) ->
    #      backfilled (0 free).  t=10: job0 is released first (started first; 3 free), the
    #      pass keeps job4 out (extra 0), job5 is released (4 free) -> job1 starts at 10 (its
    #      shadow).  job4 (FCFS) waits for job1's end at 15.
    res = sim(EXTRA_JOBS, 6, "fcfs", "easy", compat=False, detailed=True)
    assert res.starts == [0, 10, 2, 3, 15, 5]
    assert res.entry_shadow == {1: 10, 4: 15} and res.entry_extra == {1: 2, 4: 3}
    # reference greedy backfilling: nothing is backfilled (job5: 5 + 5 < 10 is false); job1 at
    # 10, then the FCFS decisions at t=10 start job2 and job3 (2 free), job4 is committed and
    # waits for job1's end (shadow 15); job5 cannot be backfilled (no free node) -> 15 too.
    for compat in (True, False):
        assert sim(EXTRA_JOBS, 6, "fcfs", "rlscheduler", compat=compat) == [0, 10, 10, 10, 15, 15]


def test_easy_extra_nodes_are_used_up_within_a_pass():
    # N = 4, FCFS, EASY.  job0 (4 nodes) runs 0..10.  job1 (2 nodes) is committed at t=1;
    # job2 (3 nodes), job3 and job4 (1 node, 100 s) arrive while nothing is free.  t=10:
    # job1 starts (2 free); job2 is committed: shadow = job1's end 15 (2 + 2 = 4 >= 3),
    # extra = 1.  One pass at t=10 sees both long jobs: job3 takes the extra node (extra 0,
    # 1 free), job4 fits in the free node but would delay job2 -> not backfilled.
    # job2 starts at 15; job4 is committed then and waits for job2's end at 20.
    jobs = [(0, 10, 10, 4), (1, 5, 5, 2), (2, 5, 5, 3), (3, 100, 100, 1), (4, 100, 100, 1)]
    res = sim(jobs, 4, "fcfs", "easy", compat=False, detailed=True)
    assert res.starts == [0, 10, 15, 10, 20]
    assert res.entry_shadow[2] == 15 and res.entry_extra[2] == 1


def test_easy_extra_counts_all_jobs_ending_at_the_shadow():
    # N = 4, FCFS, EASY.  job0 (1 node) and job1 (2 nodes) both end at 10 (1 free).  job2
    # (2 nodes) committed at t=1: 1 free + job0's node at 10 = 2 >= 2 -> shadow 10; job1 also
    # ends at 10, so 4 nodes are free then and extra = 2.  job3 (1 node, 100 s) is backfilled
    # at 2 by the extra rule.  job2 starts at 10 after both releases.
    jobs = [(0, 10, 10, 1), (0, 10, 10, 2), (1, 5, 5, 2), (2, 100, 100, 1)]
    res = sim(jobs, 4, "fcfs", "easy", compat=False, detailed=True)
    assert res.starts == [0, 0, 10, 2]
    assert res.entry_shadow == {2: 10} and res.entry_extra == {2: 2}


def test_one_release_per_event_and_release_ties():
    # N = 5, FCFS, reference backfilling.  job0 (0, r10, q20, 1 node) and job1 (0, r10, q15,
    # 3 nodes) both start at 0 and both really finish at 10.  job2 (1, 5, 5, 5 nodes) is
    # committed at t=1 with 1 free node.  Shadow: the running list is re-sorted by estimated
    # finish -> [job1 (15), job0 (20)]; 1 + 3 < 5, 1 + 3 + 1 = 5 -> shadow 20.  job3 (2, 5, 5,
    # 3 nodes) arrives at t=2: 7 < 20 but 3 > 1 free.
    # compat: at t=10 the running list is stably re-sorted by actual finish; both finish at
    # 10, so the e-order persists and job1 is released FIRST (one release per event) -> 4 free;
    # the backfill pass between the two releases starts job3 (15 < 20, 3 <= 4).  Then job0 is
    # released (2 free); job2 must wait for job3's end at 15.
    # compat=False: the job started first (job0) is released first -> 2 free, job3 does not
    # fit; then job1 -> 5 free -> job2 starts at 10, job3 follows at its end 15.
    jobs = [(0, 10, 20, 1), (0, 10, 15, 3), (1, 5, 5, 5), (2, 5, 5, 3)]
    assert sim(jobs, 5, "fcfs", "rlscheduler", compat=True) == [0, 0, 15, 10]
    assert sim(jobs, 5, "fcfs", "rlscheduler", compat=False) == [0, 0, 10, 15]
    # no backfilling: no pass, no difference
    assert sim(jobs, 5, "fcfs", compat=True) == sim(jobs, 5, "fcfs", compat=False) == [0, 0, 10, 15]


def test_node_granularity_ppn2():
    # N = 4 nodes x 2 processors.  job0 and job1 request 3 processors -> ceil(3/2) = 2 nodes
    # each: the 4 nodes are full although only 6 of 8 processors are requested.  job2 (1
    # processor = 1 node) cannot start until t=10 (it would at t=1 if processors were counted).
    jobs = [(0, 10, 10, 3), (0, 10, 10, 3), (1, 5, 5, 1)]
    for compat in (True, False):
        for bf in ("none", "rlscheduler"):
            assert sim(jobs, 4, "fcfs", bf, compat=compat, ppn=2.0) == [0, 0, 10]
    s, r, _, n = zip(*jobs)
    m = O.metrics(s, r, n, [0, 0, 10], num_procs=8, compat=True)
    # utilization is normalised by processors and uses requested processors (not nodes*ppn):
    # work = 10*3 + 10*3 + 5*1 = 65; util_ref over (last start 10 - first submit 0) * 8.
    assert m["util_ref"] == m["util"] == 65 / 80
    assert m["util_busy"] == 65 / 120 and m["makespan"] == 15
    assert O.metrics(s, r, n, [0, 0, 10], num_procs=8, compat=False)["util"] == 65 / 120
    with pytest.raises(ValueError):  # 9 processors = 5 nodes > 4
        sim([(0, 1, 1, 9)], 4, ppn=2.0)


def test_wfp3_unicep_bug_vs_correct_mode():
    # N = 2.  job0 (2 nodes) runs 0..100.  job1 arrives at 1 and is committed; jobs 2 (s=2,
    # q=50) and 3 (s=3, q=5) arrive while it waits.  At t=100 job1 starts (1 node left) and
    # the next decision compares job2 and job3 (both 1 processor):
    #  compat (reference bug, w = -1 - s):  WFP3 key ((1+s)/q)^3*n: job2 (3/50)^3 = 2.2e-4 <
    #    job3 (4/5)^3 = 0.51 -> job2 at 100, job3 at job1's end 110.  UNICEP (1+s)/(log2(n)q)
    #    likewise prefers job2 (3/50 < 4/5).
    #  correct (w = t - s at t=100): WFP3 -(98/50)^3 = -7.5 vs -(97/5)^3 = -7301 -> job3 first
    #    (at 100), job2 at job3's end 105; UNICEP -98/50 vs -97/5 -> job3 too.
    jobs = [(0, 100, 100, 2), (1, 10, 10, 1), (2, 50, 50, 1), (3, 5, 5, 1)]
    for policy in ("wfp3", "unicep"):
        assert sim(jobs, 2, policy, compat=True) == [0, 100, 100, 110]
        assert sim(jobs, 2, policy, compat=False) == [0, 100, 105, 100]


def test_static_compat_keys():
    # spot values of the reference formulas (spec §4)
    assert O._static_key("wfp3", 9, 5, 2) == -math.pow(-10.0 / 5, 3) * 2 == 16.0
    assert O._static_key("unicep", 3, 2, 4) == pytest.approx(4 / (2 * 2))
    assert O._static_key("sjf", 7, 3, 1) == (3, 7)
    assert O._static_key("smallest", 7, 3, 1) == (1, 7)
    assert O._static_key("f1", 100, 10, 4) == pytest.approx(4 + 870 * 2)
    assert O._static_key("f1", 0, 0, 4) == pytest.approx(4 * -1 + 870 * -1)


def test_errors():
    with pytest.raises(ValueError):  # k > N: never loop forever
        sim([(0, 1, 1, 1), (1, 1, 1, 3)], 2)
    with pytest.raises(ValueError):
        sim([(0, 1, 1, 1)], 2, backfill="easy", compat=True)
    with pytest.raises(ValueError):
        sim([(0, 1, 1, 1)], 2, policy="nope")
    with pytest.raises(ValueError):
        sim([(5, 1, 1, 1), (4, 1, 1, 1)], 2)  # submit must be nondecreasing
    with pytest.raises(ValueError):
        O.simulate_with_choices(
            [0, 0], [1, 1], [1, 1], [1, 1], num_nodes=1, procs_per_node=1, choose=lambda v: 7
        )
    assert O.simulate([], [], [], [], num_nodes=1, procs_per_node=1, policy="fcfs") == []


def test_numpy_inputs_and_detailed_agree():
    import numpy as np

    tr = load_trace("lublin_256.swf.gz")
    cols = [tr[c][1981 : 1981 + 300] for c in ("submit", "run", "req_time", "procs")]
    kw = dict(num_nodes=256, procs_per_node=1.0, policy="sjf", backfill="rlscheduler")
    a = O.simulate(*cols, **kw)
    b = O.simulate(*(np.asarray(c, dtype=np.int64) for c in cols), **kw)
    c = O.simulate_detailed(*(np.asarray(c, dtype=np.int32) for c in cols), **kw)
    assert a == b == c.starts and all(type(v) is int for v in b)
    assert c.end_time == max(a) and any(c.backfilled)


def test_metrics_hand_values():
    # two jobs, P = 4: job0 waits 0 (r=5), job1 submitted 1, starts 5 (w=4, r=20), users 1, 2
    s, r, n, starts = [0, 1], [5, 20], [2, 4], [0, 5]
    m = O.metrics(s, r, n, starts, num_procs=4, compat=True, users=[1, 2])
    assert m["bsld"] == (1.0 + 24 / 20) / 2  # job0: max(1, 5/10) = 1
    assert m["sld"] == (1.0 + 24 / 20) / 2
    assert m["wait"] == 2.0 and m["turnaround"] == (5 + 24) / 2 and m["max_wait"] == 4
    assert m["util_ref"] == (5 * 2 + 20 * 4) / ((5 - 0) * 4)
    assert m["makespan"] == 25 and m["util_busy"] == 90 / 100
    assert m["fairness"] == 1.2
    assert math.isnan(O.metrics(s, r, n, starts, num_procs=4, compat=True)["fairness"])


# ----------------------------------------------------------------------------------------------
# Hypothesis strategies and invariants
# ----------------------------------------------------------------------------------------------
@st.composite
def instances(draw, max_jobs=40, exact=False, overest=False):
    """Random small trace + machine: (jobs, N, ppn).  Many equal submit times and keys."""
    N = draw(st.integers(1, 8))
    ppn = draw(st.sampled_from([1.0, 1.0, 2.0, 1.5, 4.0]))
    max_procs = int(N * ppn)
    L = draw(st.integers(1, max_jobs))
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 5, 8, 20]), min_size=L, max_size=L))
    jobs = []
    t = draw(st.integers(0, 50))
    for g in gaps:
        t += g
        r = draw(st.sampled_from([0, 1, 2, 3, 5, 8, 10, 13, 20]))
        if exact:
            q = r
        elif overest:
            q = r + draw(st.sampled_from([0, 0, 1, 4, 10]))
        else:
            q = draw(st.sampled_from([1, 2, 3, 5, 8, 10, 13, 20]))
        n = draw(st.integers(1, max_procs))
        jobs.append((t, r, max(q, 1), n))
    return jobs, N, ppn


def check_invariants(jobs, N, ppn, starts):
    s, r, q, n = (list(c) for c in zip(*jobs))
    # every job once, none before its submit time, no over-allocation of nodes or processors
    # (the package's validator, checked against a brute force in tests/workload/test_validate.py)
    check_schedule(s, r, n, starts, num_procs=N * ppn, num_nodes=N, procs_per_node=ppn)


HYP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALL_MODES = [
    (True, "none"),
    (True, "rlscheduler"),
    (False, "none"),
    (False, "rlscheduler"),
    (False, "easy"),
]


def _args(jobs):
    return tuple(list(c) for c in zip(*jobs))


@HYP
@given(inst=instances(), policy=st.sampled_from(O.POLICIES))
def test_prop_invariants_all_policies(inst, policy):
    jobs, N, ppn = inst
    for compat, bf in ALL_MODES:
        res = O.simulate_detailed(
            *_args(jobs), num_nodes=N, procs_per_node=ppn, policy=policy, backfill=bf, compat=compat
        )
        check_invariants(jobs, N, ppn, res.starts)
        # every job started exactly once: by a decision or by a backfill pass
        assert res.decisions + sum(res.backfilled) == len(jobs)
        assert res.end_time == max(res.starts)
        if bf == "none":
            assert not any(res.backfilled)
        if policy == "fcfs" and bf == "none":  # in-order without backfilling
            assert res.starts == sorted(res.starts)


@HYP
@given(inst=instances(), seed=st.integers(0, 2**32 - 1))
def test_prop_random_choice_terminates(inst, seed):
    jobs, N, ppn = inst
    for compat, bf in ALL_MODES:
        rng = random.Random(seed)
        views = []

        def choose(v):
            assert list(v.queue) == sorted(v.queue, key=lambda b: (v.submit[b], b))
            assert v.queue and all(v.starts[b] == -1 and v.submit[b] <= v.t for b in v.queue)
            views.append(len(v.queue))
            return rng.choice(v.queue)

        res = O.simulate_detailed(
            *_args(jobs), num_nodes=N, procs_per_node=ppn, choose=choose, backfill=bf, compat=compat
        )
        check_invariants(jobs, N, ppn, res.starts)
        assert len(views) == res.decisions
        assert res.decisions + sum(res.backfilled) == len(jobs)


@HYP
@given(inst=instances(overest=True), policy=st.sampled_from(O.POLICIES), exact=st.booleans())
def test_prop_reservation_is_kept(inst, policy, exact):
    """With requested >= actual run times, a committed job that has to wait starts no later
    than the reservation (shadow) computed when it entered the wait -- backfilled jobs never
    delay it -- in EASY and in the reference's greedy backfilling.  With exact estimates it
    starts exactly at that time (releases happen exactly at the estimates, so fewer than k
    nodes are free before it)."""
    jobs, N, ppn = inst
    if exact:
        jobs = [(s, r, max(r, 1), n) for s, r, _, n in jobs]
        jobs = [(s, q, q, n) for s, _, q, n in jobs]
    for compat, bf in [(True, "rlscheduler"), (False, "rlscheduler"), (False, "easy")]:
        res = O.simulate_detailed(
            *_args(jobs), num_nodes=N, procs_per_node=ppn, policy=policy, backfill=bf, compat=compat
        )
        check_invariants(jobs, N, ppn, res.starts)
        for j, shadow in res.entry_shadow.items():
            if exact:
                assert res.starts[j] == shadow, (j, bf, compat)
            else:
                assert res.starts[j] <= shadow, (j, bf, compat)


@HYP
@given(
    inst=instances(), policy=st.sampled_from([p for p in O.POLICIES if p not in ("wfp3", "unicep")])
)
def test_prop_compat_equals_correct_without_backfill(inst, policy):
    """Without backfilling the reference's list behaviour reduces to the closed forms: the pick
    is min (key, index) and the release order among equal finishes is the start order -- so
    compat and correct mode agree for every static-key policy."""
    jobs, N, ppn = inst
    a = O.simulate(*_args(jobs), num_nodes=N, procs_per_node=ppn, policy=policy, compat=True)
    b = O.simulate(*_args(jobs), num_nodes=N, procs_per_node=ppn, policy=policy, compat=False)
    assert a == b


def _min_key_chooser(policy, compat):
    def choose(v):
        def key(b):
            if policy in ("wfp3", "unicep") and not compat:
                w = v.t - v.submit[b]
                f = O._wfp3_dynamic if policy == "wfp3" else O._unicep_dynamic
                return (f(w, v.req_time[b], v.procs[b]), b)
            return (O._static_key(policy, v.submit[b], v.req_time[b], v.procs[b]), b)

        return min(v.queue, key=key)

    return choose


@HYP
@given(inst=instances(), policy=st.sampled_from(O.POLICIES))
def test_prop_choice_hook_reproduces_heuristics(inst, policy):
    jobs, N, ppn = inst
    # correct mode: the backfill scan order is (submit, index) for every policy, so driving
    # the simulator with "min (key, index)" gives exactly the heuristic run
    modes = [(False, "none"), (False, "rlscheduler"), (False, "easy"), (True, "none")]
    if policy == "fcfs":  # FCFS: the compat heuristic scan order is (submit, index) as well
        modes.append((True, "rlscheduler"))
    for compat, bf in modes:
        a = O.simulate(
            *_args(jobs), num_nodes=N, procs_per_node=ppn, policy=policy, backfill=bf, compat=compat
        )
        b = O.simulate_with_choices(
            *_args(jobs),
            num_nodes=N,
            procs_per_node=ppn,
            choose=_min_key_chooser(policy, compat),
            backfill=bf,
            compat=compat,
        )
        assert a == b, (compat, bf)


# ----------------------------------------------------------------------------------------------
# 4. Closed-form tie rules of spec §2.8 vs the literal list emulation
# ----------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(), policy=st.sampled_from(O.POLICIES))
def test_closed_form_tie_rules(inst, policy):
    """§2.8.1: the heuristic pick is the smallest (key, trace index).  §2.8.2: every backfill
    pass scans the queue in the order (s, late, key if not late, index), late = arrived after
    the committed job was picked."""
    jobs, N, ppn = inst
    s, r, q, n = _args(jobs)
    res = O.simulate_detailed(
        s,
        r,
        q,
        n,
        num_nodes=N,
        procs_per_node=ppn,
        policy=policy,
        backfill="rlscheduler",
        compat=True,
        record=True,
    )
    keys = O.priority_keys(policy, s, q, n)
    for _t, j, _arrived, queue in res.decision_log:
        assert j == min(queue, key=lambda b: (keys[b], b))
    for _t, _j, arrived, order in res.pass_log:

        def closed(b):
            return (s[b], 1, b) if b >= arrived else (s[b], 0, keys[b], b)

        assert list(order) == sorted(order, key=closed)


def test_closed_form_tie_rules_are_exercised():
    # a fixed stress instance where the §2.8.2 order differs from (s, index): several jobs
    # share a submit time and SJF puts the later index first
    jobs = [(0, 10, 10, 2), (1, 5, 5, 2), (1, 2, 9, 1), (1, 2, 3, 1), (1, 2, 3, 1), (2, 1, 2, 1)]
    s, r, q, n = _args(jobs)
    res = O.simulate_detailed(
        s,
        r,
        q,
        n,
        num_nodes=2,
        procs_per_node=1,
        policy="sjf",
        backfill="rlscheduler",
        compat=True,
        record=True,
    )
    orders = [list(o) for *_, o in res.pass_log]
    assert any(o != sorted(o, key=lambda b: (s[b], b)) for o in orders), orders
