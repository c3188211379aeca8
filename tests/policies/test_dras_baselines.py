"""Tests of DRAS's §8 baselines on the CQSim oracle (jaxsched/policies/dras_baselines.py):
the knapsack optimum and the BinPacking order on hand-computed cases, Random's seeding, the
Decima hook's mask, and Table IV's structure (only FCFS starts jobs by reservation and
backfilling) on a prefix of a reference slice."""

from __future__ import annotations

import functools
import json

import pytest
from shared_data import SHARED

from jaxsched.errors import ConfigError
from jaxsched.policies import dras_baselines as B
from jaxsched.sim import oracle_cqsim as C

# a 10-node blocker until 50000 s; then jobs 1..4 wait 49000, 48000, 10000, 5000 s
CASE = dict(
    submit=[0, 1000, 2000, 40000, 45000],
    nodes=[10, 5, 5, 3, 6],
    run=[50000, 100, 100, 100, 100],
    req_time=[50000, 100, 100, 100, 100],
)


def _sim(case, N, **kw):
    return C.simulate_cqsim(case["submit"], case["nodes"], case["run"], case["req_time"],
                            num_nodes=N, **kw)  # fmt: skip


def test_knapsack_hand_optimum():
    # capacity 10: {5, 5} (value 1.6) beats the greedy {6, 3} (1.3) and {5, 3} (1.1)
    assert B.knapsack([0.8, 0.8, 0.3, 0.5], [5, 5, 3, 6], 10) == [0, 1]
    assert B.knapsack([0.8, 0.8, 0.9, 0.9], [5, 5, 3, 6], 10) == [2, 3]  # 1.8 > 1.6
    assert B.knapsack([1.0, 1.0], [4, 4], 4) == [0]  # tie: the earlier item
    assert B.knapsack([1.0], [5], 4) == []


def test_optimization_starts_the_knapsack_optimum():
    res = _sim(CASE, 10, **B.baseline_kwargs("optimization"))
    # at 50000 (t_max 49000 s): {1, 2} has value (1 + 48/49 + 2)/3 > {3, 4}, {1, 3}, ...
    assert res.start == [0, 50000, 50000, 50100, 50100]
    assert res.cls == [C.READY] * 5


def test_binpacking_largest_first_arrival_on_ties():
    res = _sim(CASE, 10, **B.baseline_kwargs("binpacking"))
    # at 50000: 6 nodes (job 4), then 3 (job 3); at 50100 job 4 ends first: job 1 (5 nodes,
    # before job 2 on the tie), then job 3 ends: job 2
    assert res.start == [0, 50100, 50100, 50000, 50000]
    assert res.cls == [C.READY] * 5
    fcfs = _sim(CASE, 10, **B.baseline_kwargs("fcfs"))
    assert fcfs.start == [0, 50000, 50000, 50100, 50100]


def test_capacity_value_prefers_short_jobs():
    case = dict(CASE, req_time=[50000, 900, 100, 100, 200])
    res = _sim(case, 10, mode="immediate", policy=B.Optimization("capacity"))
    # 1/t: {2, 3} (0.02) beats {3, 4} (0.015) and {1, 2}; when job 2 ends, job 4 (1/200)
    # beats job 1 (1/900)
    assert res.start == [0, 50200, 50000, 50000, 50100]
    with pytest.raises(ConfigError):
        B.Optimization("fast")


def test_random_is_seeded():
    a = _sim(CASE, 10, **B.baseline_kwargs("random", seed=3))
    b = _sim(CASE, 10, **B.baseline_kwargs("random", seed=3))
    assert a.start == b.start and a.cls == [C.READY] * 5
    seen = {tuple(_sim(CASE, 10, **B.baseline_kwargs("random", seed=s)).start) for s in range(8)}
    assert len(seen) > 1


def test_decima_hook_masks_to_runnable():
    calls = []

    def pick(window, runnable, view):
        calls.append((view.t, window, runnable))
        return runnable.index(True)

    res = _sim(CASE, 10, mode="immediate", policy=B.decima_policy(pick, window=3))
    assert res.start == [0, 50000, 50000, 50100, 50100]
    assert (50000, (1, 2, 3), (True, True, True)) in calls
    assert (50000, (2, 3, 4), (True, True, False)) in calls  # 5 free after job 1
    bad = B.decima_policy(lambda w, r, v: r.index(False) if False in r else 0)
    with pytest.raises(ConfigError, match="runnable"):
        _sim(CASE, 10, mode="immediate", policy=bad)
    with pytest.raises(ConfigError):
        B.baseline_kwargs("sjf")


@functools.cache
def _slice_prefix(n: int = 2000):
    ref = json.loads((SHARED / "reference" / "cqsim" / "SDSC-SP2-1998-4.2-cln-a0-n2000.json")
                     .read_text())  # fmt: skip
    inp = ref["slices"][0]["input"]
    return {k: inp[k][:n] for k in ("submit", "nodes", "run", "req_time")}, ref["machine_size"]


@pytest.mark.parametrize("name", B.BASELINES)
def test_table_iv_structure(name):
    case, N = _slice_prefix()
    res = _sim(case, N, **B.baseline_kwargs(name, seed=1))
    assert all(s >= x for s, x in zip(res.start, case["submit"]))
    shares = {c: res.cls.count(c) for c in (C.BACKFILLED, C.READY, C.RESERVED)}
    if name == "fcfs":
        assert shares[C.BACKFILLED] > 0 and shares[C.RESERVED] > 0
    else:
        assert shares == {C.BACKFILLED: 0, C.READY: len(res.cls), C.RESERVED: 0}
