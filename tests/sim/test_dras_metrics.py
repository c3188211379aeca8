"""Tests of DRAS's §10 evaluation (jaxsched/sim/dras_metrics.py) on hand-made schedules."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from shared_data import SHARED

from jaxsched.errors import ConfigError
from jaxsched.sim import dras_metrics as M

# N = 4: two 2-node jobs at 0, a 4-node job waiting 10 s
SCHED = dict(submit=[0, 0, 10], run=[10, 20, 5], nodes=[2, 2, 4], start=[0, 0, 20], cls=[1, 0, 2])


def test_schedule_metrics_hand_values():
    m = M.schedule_metrics(SCHED["submit"], SCHED["run"], SCHED["nodes"], SCHED["start"], N=4)
    assert m["jobs"] == 3
    assert m["avg_wait"] == pytest.approx(10 / 3) and m["max_wait"] == 10
    assert m["avg_response"] == pytest.approx(15) and m["max_response"] == 20
    assert m["avg_slowdown"] == pytest.approx((1 + 1 + 3) / 3)  # unbounded: 15 / 5
    assert m["util"] == pytest.approx(80 / (4 * 25))


def test_class_shares_jobs_and_core_hours():
    s = M.class_shares(SCHED["cls"], SCHED["nodes"], SCHED["run"])
    assert s["ready_jobs"] == pytest.approx(1 / 3)
    assert s["backfilled_core_hours"] == pytest.approx(0.5)  # 40 of 80 node-seconds
    assert s["reserved_core_hours"] == pytest.approx(0.25)
    assert sum(s[f"{c}_jobs"] for c in M.CLASSES.values()) == pytest.approx(1)
    e = M.evaluate_schedule(**SCHED, N=4)
    assert e["ready_core_hours"] == pytest.approx(0.25) and e["util"] == pytest.approx(0.8)
    with pytest.raises(ConfigError):
        M.class_shares([1, 3, 0], [1, 1, 1], [1, 1, 1])


TABLE = {
    "A": dict(avg_wait=10, max_wait=100, avg_slowdown=2, avg_response=20, util=0.5),
    "B": dict(avg_wait=20, max_wait=50, avg_slowdown=4, avg_response=40, util=0.8),
    "C": dict(avg_wait=40, max_wait=200, avg_slowdown=2, avg_response=10, util=0.6),
}


def test_kiviat_min_max_on_reciprocals():
    k = M.kiviat(TABLE)
    np.testing.assert_allclose(k["A"], [1, 1 / 3, 1, 1 / 3, 0], atol=1e-12)
    np.testing.assert_allclose(k["B"], [1 / 3, 1, 0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(k["C"], [0, 0, 1, 1, 1 / 3], atol=1e-12)
    s72 = math.sin(2 * math.pi / 5)
    assert M.kiviat_area(k["A"]) == pytest.approx(0.5 * s72 * 1.0)
    assert M.kiviat_area([1] * 5) == pytest.approx(2.5 * s72)
    assert M.kiviat({"only": TABLE["A"]})["only"] == [1.0] * 5  # all agree: all best


def test_weekly_cuts_jobs_at_week_bounds():
    W = M.WEEK
    w = M.weekly([0, W + 5], [7200, 100], [2, 1], [W - 3600, W + 105])
    np.testing.assert_allclose(w["core_hours"], [2.0, 2.0 + 100 / 3600])
    np.testing.assert_allclose(w["avg_wait"], [W - 3600, 100])
    assert list(w["week_start"]) == [0, W]


def test_bad_schedules():
    with pytest.raises(ConfigError, match="before its submit"):
        M.schedule_metrics([5], [1], [1], [4], N=1)
    with pytest.raises(ConfigError, match="positive"):
        M.schedule_metrics([0], [0], [1], [0], N=1)


def test_metrics_equal_the_reference_files():
    """On a reference run: util = the files' util_node_seconds, response = turnaround."""
    ref = json.loads(
        (SHARED / "reference/cqsim/SDSC-SP2-1998-4.2-cln-a40000-n2000.json").read_text()
    )
    inp, N = ref["slices"][0]["input"], ref["machine_size"]
    for run in ref["slices"][0]["runs"]:
        m = M.schedule_metrics(inp["submit"], inp["run"], inp["nodes"], run["start"], N=N)
        r = run["metrics"]
        for mine, theirs in (("avg_wait", "avg_wait"), ("max_wait", "max_wait"),
                             ("avg_response", "avg_turnaround"), ("avg_slowdown", "avg_slowdown"),
                             ("util", "util_node_seconds")):  # fmt: skip
            assert m[mine] == pytest.approx(r[theirs], rel=1e-9), (run["mode"], mine)
