"""The planners' exact cases, the forward simulator's faithfulness, and the planner names."""

import numpy as np
import pytest
from tiny_traces import planner_sequence

from jaxsched.errors import ConfigError
from jaxsched.planning import (
    Choice,
    RolloutPlanner,
    WindowPlanner,
    forecast,
    planner_policy,
    run_planned,
    run_planner,
)
from jaxsched.sim import oracle as O

NODES = 6
KW = dict(num_nodes=NODES, procs_per_node=1.0)
COMPAT_BF = ("none", "rlscheduler", "rlscheduler-sjbf")
CORRECT_BF = ("none", "rlscheduler", "easy", "easy-sjbf")
CELLS = [(p, b, True) for p in O.POLICIES for b in COMPAT_BF] + [
    (p, b, False) for p in O.POLICIES for b in CORRECT_BF
]


def _seqs(seed, count=12):
    rng = np.random.default_rng(seed)
    return [planner_sequence(rng, L=int(rng.integers(1, 25)), nodes=NODES) for _ in range(count)]


@pytest.mark.parametrize("policy,bf,compat", CELLS)
def test_window_with_one_cell_and_rollout_k1_are_the_plain_oracle(policy, bf, compat):
    for s, r, q, n in _seqs(4):
        want = O.simulate(s, r, q, n, **KW, policy=policy, backfill=bf, compat=compat)
        cell = f"window:n=1,cells={policy}/{bf}"
        got, info = run_planner(planner_policy(cell), s, r, q, n, **KW, compat=compat)
        assert got.starts == want and info["switches"] == 0
        roll = planner_policy(f"rollout:{policy},k=1,bf={bf}")
        assert run_planner(roll, s, r, q, n, **KW, compat=compat)[0].starts == want


@pytest.mark.parametrize("compat", [True, False])
def test_naming_the_heuristics_head_is_the_heuristic(compat):
    """The driver's commit-this-job path: committing the base's own head at every decision."""
    from jaxsched.planning.planners import _base_order

    for policy in ("fcfs", "f3", "wfp3", "lcfs"):
        for s, r, q, n in _seqs(5, 6):
            want = O.simulate(s, r, q, n, **KW, policy=policy, backfill="rlscheduler",
                              compat=compat)  # fmt: skip

            def head(view, policy=policy):
                return Choice(policy, "rlscheduler", _base_order(view, policy, compat)[0])

            got, _ = run_planned(s, r, q, n, **KW, decide=head, compat=compat,
                                 first_cell=(policy, "rlscheduler"))  # fmt: skip
            assert got.starts == want


def test_forecast_is_exact_when_everything_is_known():
    """Correct mode, every run time = its request: from the first decision after the last
    arrival the forecast is the real run (nothing is unknown; the release ties go to the job
    started first in both; compat mode's list history is not in the view, module docstring)."""
    rng = np.random.default_rng(6)
    checked = 0
    for _ in range(10):
        s, r, q, n = planner_sequence(rng, L=14, nodes=NODES)
        r = list(q)
        for policy in ("sjf", "f1", "unicep", "ljf"):
            for bf in CORRECT_BF:
                want = O.simulate(s, r, q, n, **KW, policy=policy, backfill=bf, compat=False)
                views = []

                def grab(view, policy=policy, bf=bf):
                    last = view.t > s[-1] or view.queue[-1].index == len(s) - 1
                    if not views and last:  # every job has arrived
                        views.append(view)
                    return Choice(policy, bf, None)

                run_planned(s, r, q, n, **KW, decide=grab, first_cell=(policy, bf),
                            compat=False)  # fmt: skip
                if not views:
                    continue
                v = views[0]
                f = forecast(v, policy, bf, compat=False)
                assert f.starts == {j.index: want[j.index] for j in v.queue}
                bsld = sum(max(1.0, (want[j.index] - j.submit + j.req) / max(j.req, 10))
                           for j in v.queue)  # fmt: skip
                assert f.cost == pytest.approx(bsld) and f.decisions <= len(v.queue)
                checked += len(v.queue) > 2
    assert checked > 20


def test_forecast_horizon_and_first():
    rng = np.random.default_rng(7)
    s, r, q, n = planner_sequence(rng, L=16, nodes=NODES)
    views = []
    run_planned(s, r, q, n, **KW, first_cell=("fcfs", "none"),
                decide=lambda v: views.append(v) or Choice("fcfs", "none", None))  # fmt: skip
    v = max(views, key=lambda v: len(v.queue))
    assert len(v.queue) >= 4
    x = v.queue[-1].index
    f = forecast(v, "fcfs", "none", compat=True, horizon=3, first=x)
    assert f.decisions == 3 and len(f.starts) >= 3 and f.starts[x] >= v.t
    assert x not in forecast(v, "fcfs", "none", compat=True, horizon=1).starts
    assert f.cost >= len(v.queue)  # every queued job counts, the unstarted at the stop clock
    with pytest.raises(ConfigError, match="not a queued job"):
        forecast(v, "fcfs", "none", compat=True, first=v.running[0].index if v.running else 99)
    with pytest.raises(ConfigError, match="no reference counterpart"):
        forecast(v, "fcfs", "easy", compat=True)


def test_window_planner_switches_and_improves_sometimes():
    better = 0
    for s, r, q, n in _seqs(8, 20):
        base = O.simulate(s, r, q, n, **KW, policy="fcfs", backfill="rlscheduler", compat=True)
        res, info = run_planner(planner_policy("window:n=2"), s, r, q, n, **KW, compat=True)
        m = [
            O.metrics(s, r, n, st, num_procs=NODES, compat=True)["bsld"]
            for st in (base, res.starts)
        ]
        better += m[1] < m[0]
        assert info["decisions"] >= 1 and info["forecasts"] == 24 * info["choices"]
        assert info["simulated_jobs"] >= info["simulated_decisions"]
    assert better >= 3


def test_names():
    w = planner_policy("window:n=16,w=3600,h=64,cells=f1+f3/rlscheduler;saf/rlscheduler-sjbf")
    assert isinstance(w, WindowPlanner) and (w.n, w.w, w.h) == (16, 3600, 64)
    assert w.cells == (("f1", "rlscheduler"), ("f3", "rlscheduler"), ("saf", "rlscheduler-sjbf"))
    d = planner_policy("window")
    assert (d.n, d.w, d.h, len(d.cells_for(True))) == (32, None, None, 24)
    assert planner_policy("window:w=600").n is None
    r = planner_policy("rollout:f3,k=8,h=64")
    assert isinstance(r, RolloutPlanner) and (r.base, r.k, r.h, r.bf) == ("f3", 8, 64, None)
    assert r.first_cell(True) == ("f3", "rlscheduler") and r.first_cell(False) == ("f3", "easy")
    assert planner_policy("rollout:sjf,h=all").h is None


@pytest.mark.parametrize(
    "name,msg",
    [
        ("greedy:x", "unknown planner"),
        ("window:n=0", "positive integer"),
        ("window:n=3,n=4", "given twice"),
        ("window:k=3", "unknown option 'k'"),
        ("window:cells=f9/rlscheduler", "unknown policy 'f9'"),
        ("window:cells=f1+f3", "POLICY"),
        ("window:cells=f1/nope", "unknown backfill"),
        ("window:n", "KEY=VALUE"),
        ("rollout:", "base rule"),
        ("rollout:f3,k=x", "positive integer"),
        ("rollout:f3,bf=greedy", "unknown backfill"),
    ],
)
def test_bad_names_are_one_line_config_errors(name, msg):
    with pytest.raises(ConfigError, match=msg) as e:
        planner_policy(name)
    assert "\n" not in str(e.value)


def test_a_cell_the_mode_cannot_run_fails_at_the_start():
    s, r, q, n = _seqs(9, 1)[0]
    with pytest.raises(ConfigError, match="no reference counterpart"):
        run_planner(planner_policy("window:cells=f1/easy"), s, r, q, n, **KW, compat=True)


def test_a_zero_request_with_a_dividing_cell_fails_at_the_start():
    s, r, q, n = _seqs(9, 1)[0]
    q = [0] + q[1:]
    with pytest.raises(ConfigError, match="divides by the requested time"):
        run_planner(planner_policy("window:n=4"), s, r, q, n, **KW, compat=True)
    cells = "window:n=4,cells=f1+sjf/rlscheduler"
    assert len(run_planner(planner_policy(cells), s, r, q, n, **KW, compat=True)[0].starts) == len(
        s
    )


def test_the_queue_gate_plans_only_at_long_queues():
    """``q=Q``: below Q queued jobs no forecast; a gate above every queue is the base rule (the
    first cell), and q=2 is the default."""
    for s, r, q, n in _seqs(6, 6):
        base = O.simulate(s, r, q, n, **KW, policy="f1", backfill="rlscheduler", compat=True)
        res, info = run_planner(planner_policy("rollout:f1,q=1000"), s, r, q, n, **KW)
        assert res.starts == base and info["forecasts"] == 0
        win = planner_policy("window:n=1,q=1000,cells=f1/rlscheduler;sjf/rlscheduler")
        assert run_planner(win, s, r, q, n, **KW)[0].starts == base
        a = run_planner(planner_policy("rollout:f3,k=4,h=8"), s, r, q, n, **KW)[0].starts
        assert (
            a == run_planner(planner_policy("rollout:f3,k=4,h=8,q=2"), s, r, q, n, **KW)[0].starts
        )
    with pytest.raises(ConfigError, match="q='0' must be a positive integer"):
        planner_policy("rollout:f3,q=0")
