"""Tests of the plain-Python CQSim / DRAS oracle (jaxsched/sim/oracle_cqsim.py).

1. every start time, job class and metric of shared/reference/cqsim/*.json (3 slices x 6 runs);
2. the availability profile (spec §2.3) on hand-made points;
3. event order (§2.1) and first-fit node identities (§2.2) on hand-computed schedules;
4. the DRAS-PG loop corner cases (§2.5), the DQL loop (§2.6), the paper-mode switches (§13);
5. the rewards (§6) and their recording times; the PG state rows (§3); input errors;
6. hypothesis: the loops under "always the oldest" equal FCFS + EASY; capacity and submit
   times respected under any fixed policy.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_data import SHARED

from jaxsched.errors import ConfigError
from jaxsched.sim import oracle_cqsim as C

REF_DIR = SHARED / "reference" / "cqsim"
REF_FILES = sorted(p.name for p in REF_DIR.glob("*.json"))


@functools.cache
def _ref(name: str) -> dict:
    return json.loads((REF_DIR / name).read_text())


def _run_ref(inp: dict, run: dict, N: int) -> C.CqsimResult:
    args = (inp["submit"], inp["nodes"], inp["run"], inp["req_time"])
    if run["mode"].startswith("dras"):
        return C.simulate_cqsim(
            *args, num_nodes=N, mode="dras", policy=C.fixed_policy(run["policy"])
        )
    return C.simulate_cqsim(*args, num_nodes=N, mode=run["mode"])


# ----------------------------------------------------------------------------------------------
# 1. Reference schedules
# ----------------------------------------------------------------------------------------------
def test_reference_files_present():
    assert len(REF_FILES) == 3


@pytest.mark.parametrize("name", REF_FILES)
def test_reference_runs_exact(name):
    ref = _ref(name)
    N = ref["machine_size"]
    modes = []
    for sl in ref["slices"]:
        inp = sl["input"]
        for run in sl["runs"]:
            modes.append(run["mode"])
            res = _run_ref(inp, run, N)
            assert res.start == run["start"], run["mode"]
            assert res.end == run["end"], run["mode"]
            if "class" in run:
                assert res.cls == run["class"], run["mode"]
            m = C.cqsim_metrics(inp["submit"], inp["nodes"], inp["run"], res.start,
                                num_nodes=N, util=res.util)  # fmt: skip
            for k, v in run["metrics"].items():
                if k in m:
                    assert m[k] == pytest.approx(v, rel=1e-9, abs=1e-12), (run["mode"], k)
    assert sorted(modes) == sorted(["easy", "cons", "none", "dras-fcfs", "dras-smallest",
                                    "dras-largest"])  # fmt: skip


def test_easy_classes_equal_dras_fcfs():
    """FCFS + EASY and the DRAS loop under "always the oldest" label jobs alike."""
    ref = _ref(REF_FILES[0])
    inp = ref["slices"][0]["input"]
    args = (inp["submit"], inp["nodes"], inp["run"], inp["req_time"])
    easy = C.simulate_cqsim(*args, num_nodes=ref["machine_size"], mode="easy")
    dras = C.simulate_cqsim(*args, num_nodes=128, mode="dras", policy=C.fixed_policy("fcfs"))
    assert easy.cls == dras.cls and easy.start == dras.start
    assert {0, 1, 2} <= set(easy.cls)


# ----------------------------------------------------------------------------------------------
# 2. Profile
# ----------------------------------------------------------------------------------------------
def test_profile_first_point_never_merged():
    p = C.Profile(0, 2, [(10, 1), (0, 3), (10, 2), (20, 4)])
    assert (p.t, p.f) == ([0, 0, 10, 20], [2, 5, 8, 12])
    assert p.earliest(4, 5) == 0  # from the second point at now
    assert p.earliest(6, 15) == 10
    assert not p.fits(4, 5) and p.fits(2, 100)


def test_profile_reserve_restart_and_place():
    p = C.Profile(0, 4, [(10, 4)])
    assert p.reserve(6, 10) == 10  # a point at 20 gives the nodes back
    assert (p.t, p.f) == ([0, 10, 20], [4, 2, 8])
    assert p.earliest(3, 10) == 0  # the dip at 10 is not before 0 + 10
    assert p.earliest(3, 15) == 20  # the dip at 10 restarts the search after it
    assert p.fits(3, 10) and not p.fits(3, 11) and not p.fits(5, 1)
    q = C.Profile(0, 4, [(10, 4)])
    q.place(0, 2, 10)  # a point at 10 exists: nothing inserted
    assert (q.t, q.f) == ([0, 10], [2, 8])
    with pytest.raises(ConfigError):
        q.earliest(9, 1)


def test_profile_reservation_at_the_second_point_leaves_the_first():
    """Issue 46: a reservation found at the second point at now takes its nodes from that
    point on (CQSim's ``Node_struc.reserve``), not from the first point."""
    p = C.Profile(10, 1, [(10, 3), (100, 1)])
    assert p.reserve(2, 20) == 10
    assert (p.t, p.f) == ([10, 10, 30, 100], [1, 2, 4, 5])
    assert p.fits(1, 50) and not p.fits(2, 5)


def test_second_point_schedule_by_hand():
    """The 6-job case of tests/sim/test_cqsim_engine.py (CQSim master's start times): job 5 is
    backfilled at 10 in EASY and DRAS-FCFS because the first point keeps its free node."""
    s, n, r = [0, 0, 0, 5, 5, 6], [1, 2, 1, 2, 3, 1], [10, 10, 100, 20, 10, 50]
    for mode, want in (("easy", [0, 0, 0, 10, 60, 10]), ("cons", [0, 0, 0, 10, 30, 40]),
                       ("none", [0, 0, 0, 10, 30, 40])):  # fmt: skip
        assert C.simulate_cqsim(s, n, r, r, num_nodes=4, mode=mode).start == want, mode
    dras = C.simulate_cqsim(s, n, r, r, num_nodes=4, mode="dras", policy=C.fixed_policy("fcfs"))
    assert dras.start == [0, 0, 0, 10, 60, 10]


# ----------------------------------------------------------------------------------------------
# 3. Events and nodes
# ----------------------------------------------------------------------------------------------
def test_finish_before_submit_at_equal_times():
    # the submit at 10 meets a free machine: a "ready" start (a submit-first order would
    # reserve it first, class 2)
    res = C.simulate_cqsim([0, 10], [4, 4], [10, 5], [10, 5], num_nodes=4, mode="easy")
    assert res.start == [0, 10] and res.cls == [C.READY, C.READY]
    assert res.passes == 4


# start order j0, j2 (backfilled at 2), j1 (10); j2 and j1 both finish at 20
CASE_C = dict(
    submit=[0, 1, 2, 15, 21], nodes=[3, 2, 1, 2, 1], run=[10, 10, 18, 5, 1],
    req_time=[10, 10, 18, 5, 1],
)  # fmt: skip


def _recorder(log):
    def policy(level, window, view):
        log.append((view.t, level, window, list(view.node_owner), C.pg_state(view, W=2),
                    C.dql_state(view, window[0])))  # fmt: skip
        return 0

    return policy


def test_equal_time_finishes_in_start_order_first_fit_nodes():
    log = []
    c = CASE_C
    res = C.simulate_cqsim(c["submit"], c["nodes"], c["run"], c["req_time"], num_nodes=4,
                           mode="dras", policy=_recorder(log))  # fmt: skip
    assert res.start == [0, 10, 2, 20, 21]
    assert res.cls == [C.READY, C.RESERVED, C.BACKFILLED, C.RESERVED, C.READY]
    easy = C.simulate_cqsim(c["submit"], c["nodes"], c["run"], c["req_time"], num_nodes=4)
    assert easy.start == res.start and easy.cls == res.cls
    # at 20 j2 (node 3, started 2nd) finishes before j1 (nodes 0-1): j3 takes nodes 2, 3
    t, level, window, owner, state, dql = log[-1]
    assert (t, level, window, owner) == (21, 1, (4,), [-1, -1, 3, 3])
    assert state == [(1, 1), (0, 0), (0, 0), (0, 0), (1, 0), (1, 0), (0, 4), (0, 4)]
    assert dql == [(1, 1), (0, 0), (1, 0), (1, 0), (0, 4), (0, 4)]
    # level 1 skipped while the reserved job heads the queue (at 2 only a level-2 decision)
    assert [(d.t, d.level, d.job) for d in res.decisions] == [
        (0, 1, 0), (1, 1, 1), (2, 2, 2), (15, 1, 3), (21, 1, 4)]  # fmt: skip


# ----------------------------------------------------------------------------------------------
# 4. The DRAS loops
# ----------------------------------------------------------------------------------------------
# j1 holds the reservation from 1 to 10; at 10 "largest" picks j3 (4 nodes, 3 free)
CASE_B = dict(submit=[0, 1, 2, 3], nodes=[4, 1, 1, 4], run=[10, 5, 5, 5], req_time=[10, 5, 5, 5])


def _sim(case, N, **kw):
    return C.simulate_cqsim(case["submit"], case["nodes"], case["run"], case["req_time"],
                            num_nodes=N, **kw)  # fmt: skip


def test_dras_reserves_the_oldest_even_if_it_fits():
    res = _sim(CASE_B, 4, mode="dras", policy=C.fixed_policy("largest"))
    # j2 fits at 10 but is only reserved; it starts at the next event (15)
    assert res.start == [0, 10, 15, 20]
    assert res.cls == [C.READY, C.RESERVED, C.RESERVED, C.RESERVED]
    assert [(d.t, d.job, d.slot) for d in res.decisions] == [(0, 0, 0), (1, 1, 0), (10, 3, 1),
                                                              (15, 3, 0)]  # fmt: skip
    calls = []
    fcfs = _sim(CASE_B, 4, mode="dras", policy=C.fixed_policy("fcfs"),
                after_pass=lambda i, d: calls.append((i, len(d))))  # fmt: skip
    assert fcfs.start == [0, 10, 10, 15]
    # passes: submits 0..3, finishes at 10 (j0), 15 (j1, j2 in start order), 20 (j3); at 10
    # level 1 is skipped for the reserved j1, then picks j2 (starts) and j3 (does not fit)
    assert calls == [(0, 1), (1, 2), (2, 2), (3, 2), (4, 4), (5, 4), (6, 4), (7, 4)]
    assert fcfs.passes == 8
    # level-1 reward before the (failed) start: util = running/N, wait 7 s, max_wait 8 s
    d = res.decisions[2]
    assert d.reward5 == pytest.approx((1 / 4 + 7 / 21600 + 4 / 4) / 3, rel=1e-12)
    assert d.reward_paper == pytest.approx((7 / 8 + 4 / 4 + 1 / 4) / 3, rel=1e-12)


def test_paper_mode_reserves_the_pick_and_is_not_persistent():
    res = _sim(CASE_B, 4, mode="dras", policy=C.fixed_policy("largest"), paper=True)
    assert res.start == [0, 15, 15, 10]
    assert res.cls == [C.READY, C.RESERVED, C.READY, C.RESERVED]


def test_dql_level1_jumps_ahead_of_the_oldest():
    res = _sim(CASE_B, 4, mode="dql", policy=C.fixed_policy("largest"), window=None)
    assert res.start == [0, 15, 15, 10]
    assert res.cls == [C.READY, C.RESERVED, C.READY, C.READY]
    # recorded after the start only (non-fitting picks are not recorded)
    assert [(d.t, d.job) for d in res.decisions] == [(0, 0), (10, 3), (15, 1), (15, 2)]


# j1 (8 nodes) reserved at 20; at 5 two nodes free up for j2, j3 (1 node) and j4 (2 nodes)
CASE_W = dict(
    submit=[0, 0, 1, 2, 3, 4], nodes=[6, 2, 8, 1, 1, 2], run=[20, 5, 5, 3, 3, 3],
    req_time=[20, 5, 5, 3, 3, 3],
)  # fmt: skip


def test_level2_window_limits_the_candidates():
    big = _sim(CASE_W, 8, mode="dras", policy=C.fixed_policy("largest"))
    small = _sim(CASE_W, 8, mode="dras", policy=C.fixed_policy("largest"), window=2)
    assert big.start == [0, 0, 20, 8, 8, 5]
    assert small.start == [0, 0, 20, 5, 5, 8]  # j5 beyond the 2-candidate window at 5
    assert small.cls == [C.READY, C.READY, C.RESERVED, C.BACKFILLED, C.BACKFILLED, C.BACKFILLED]
    l2 = [d for d in small.decisions if d.level == 2]
    assert [(d.t, d.job, d.slot, d.window_len) for d in l2][:2] == [(5, 3, 0, 2), (5, 4, 0, 1)]
    # level-2 rewards after each start: max_wait 4 s at the pass's start; j3 sees 1 free node
    assert l2[0].reward5 == pytest.approx((8 / 8 + 3 / 21600 + 1 / 8) / 3, rel=1e-12)
    assert l2[1].reward5 == pytest.approx((8 / 8 + 2 / 21600 + 1 / 8) / 3, rel=1e-12)
    assert l2[0].reward_paper == pytest.approx((3 / 4 + 1 / 8 + 7 / 8) / 3, rel=1e-12)


def test_durations_run_or_estimate():
    case = dict(submit=[0, 1, 2], nodes=[2, 4, 2], run=[10, 5, 5], req_time=[10, 5, 20])
    assert _sim(case, 4, mode="easy").start == [0, 10, 2]  # actual run time: ends by 10
    assert _sim(case, 4, mode="easy", durations="estimate").start == [0, 10, 15]


def test_cons_reserves_every_blocked_job():
    # j3 (1 node, 30 s) fits beside j1's reservation (EASY backfills it at 3) but would delay
    # the reservation of the blocked j2 at 20 (conservative keeps it until 30)
    case = dict(submit=[0, 1, 2, 3], nodes=[3, 3, 4, 1], run=[10, 10, 10, 30],
                req_time=[10, 10, 10, 30])  # fmt: skip
    easy = _sim(case, 4, mode="easy")
    assert easy.start == [0, 10, 33, 3]
    assert easy.cls == [C.READY, C.RESERVED, C.RESERVED, C.BACKFILLED]
    cons = _sim(case, 4, mode="cons")
    assert cons.start == [0, 10, 20, 30]
    assert cons.cls == [C.READY, C.RESERVED, C.RESERVED, C.RESERVED]
    assert _sim(case, 4, mode="none").start == [0, 10, 20, 30]


# ----------------------------------------------------------------------------------------------
# 5. Rewards, errors
# ----------------------------------------------------------------------------------------------
def test_reward_type5_hand_values():
    assert C.reward_type5(2, 3600, 1, 4, 7200) == pytest.approx((3 / 4 + 1 / 6 + 1 / 2) / 3)
    assert C.reward_type5(2, 3600, 2, 4, 43200) == pytest.approx((1 + 1 / 12 + 1 / 2) / 3)
    assert C.reward_paper(2, 3600, 1, 4, 7200) == pytest.approx((1 / 2 + 1 / 2 + 3 / 4) / 3)
    assert C.reward_paper(2, 0, 4, 4, 0) == pytest.approx((1 / 2) / 3)


@pytest.mark.parametrize(
    "kw, msg",
    [
        (dict(run=[5, 20]), "run 20 > req_time"),
        (dict(submit=[5, 0]), "nondecreasing"),
        (dict(nodes=[2, 9]), "never start"),
        (dict(nodes=[0, 1]), "CQSim drops it"),
        (dict(mode="fifo"), "unknown mode"),
        (dict(mode="dras"), "needs policy"),
        (dict(mode="dql", policy=C.fixed_policy("fcfs"), window=0), "window must be"),
    ],
)
def test_bad_input_one_line(kw, msg):
    args = dict(submit=[0, 1], nodes=[1, 2], run=[5, 5], req_time=[10, 10], mode="easy") | kw
    with pytest.raises(ConfigError, match=msg):
        C.simulate_cqsim(args.pop("submit"), args.pop("nodes"), args.pop("run"),
                         args.pop("req_time"), num_nodes=4, **args)  # fmt: skip


def test_bad_policy_answer():
    with pytest.raises(ConfigError, match="slot"):
        _sim(CASE_B, 4, mode="dras", policy=lambda level, window, view: 7)


# ----------------------------------------------------------------------------------------------
# 6. Properties on random small slices: the loops' switches reduce to each other
# ----------------------------------------------------------------------------------------------
@st.composite
def slices(draw):
    N = draw(st.sampled_from([4, 8]))
    L = draw(st.integers(1, 18))
    gaps = draw(st.lists(st.integers(0, 6), min_size=L, max_size=L))
    submit = [sum(gaps[: i + 1]) for i in range(L)]
    nodes = draw(st.lists(st.integers(1, N), min_size=L, max_size=L))
    req = draw(st.lists(st.integers(1, 12), min_size=L, max_size=L))
    run = [draw(st.integers(1, q)) for q in req]
    return dict(submit=submit, nodes=nodes, run=run, req_time=req), N


def _capacity_ok(res, case, N) -> bool:
    ev = sorted([(e, -n) for e, n in zip(res.end, case["nodes"])]
                + [(s, n) for s, n in zip(res.start, case["nodes"])])  # fmt: skip
    used = 0
    for _, dn in ev:  # releases first at equal times
        used += dn
        if used > N:
            return False
    return True


HYP = settings(max_examples=40, deadline=None)


@HYP
@given(inst=slices(), W=st.sampled_from([1, 2, 50]))
def test_fcfs_policy_loops_equal_easy(inst, W):
    case, N = inst
    easy = _sim(case, N, mode="easy")
    assert all(s >= x for s, x in zip(easy.start, case["submit"])) and _capacity_ok(easy, case, N)
    for kw in (dict(mode="dras", window=W), dict(mode="dql", window=None)):
        res = _sim(case, N, policy=C.fixed_policy("fcfs"), **kw)
        assert (res.start, res.cls) == (easy.start, easy.cls), kw
    paper = _sim(case, N, mode="dras", policy=C.fixed_policy("fcfs"), paper=True)
    assert paper.start == _sim(case, N, mode="easy", durations="estimate").start
    head = _sim(case, N, mode="immediate",
                policy=lambda v: [v.queue[0]] if v.nodes[v.queue[0]] <= v.free else [])  # fmt: skip
    assert head.start == _sim(case, N, mode="none").start


@HYP
@given(inst=slices(), name=st.sampled_from(["smallest", "largest"]), W=st.sampled_from([1, 3]))
def test_any_policy_respects_capacity_and_submit(inst, name, W):
    case, N = inst
    for kw in (dict(mode="dras", window=W), dict(mode="dql", window=W), dict(mode="cons")):
        pol = C.fixed_policy(name) if kw["mode"] != "cons" else None
        res = _sim(case, N, policy=pol, **kw)
        assert all(s >= x for s, x in zip(res.start, case["submit"])), kw
        assert _capacity_ok(res, case, N), kw
        if kw["mode"] == "dql":  # every start recorded once, after it
            assert sorted(d.job for d in res.decisions) == list(range(len(case["submit"])))


def test_easy_sjbf_scans_shortest_first():
    """Issue 47 §2's EASY-SJBF in CQSim semantics, hand-checked: at t = 10 two nodes free up
    under job 2's reservation at t = 20; EASY backfills job 3 (9 s, queue order) and job 4 waits
    until 25, shortest-first backfills job 4 (3 s) and job 3 (19 + 9 > 20) waits."""
    a = dict(submit=[0, 0, 1, 2, 3], nodes=[2, 2, 4, 2, 2], run=[10, 20, 5, 9, 3],
             req_time=[10, 20, 5, 9, 3], num_nodes=4)  # fmt: skip
    assert C.simulate_cqsim(**a, mode="easy").start == [0, 0, 20, 10, 25]
    r = C.simulate_cqsim(**a, mode="easy-sjbf")
    assert r.start == [0, 0, 20, 25, 10]
    assert r.cls == [1, 1, 2, 2, 0]
