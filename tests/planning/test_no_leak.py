"""The planners see no future and no actual run time of an unfinished job (issue 63 item 3).

Over many random tiny sequences, two traces that differ only in (a) the jobs submitted after a
time T, or (b) the actual run time of one job X, must give the same start to every job started
before T (resp. before X finishes), for every planner.  A deliberately leaky planner (it reads
the actual run times through a closure) shows that the check can fail."""

import numpy as np
import pytest
from tiny_traces import planner_sequence

from jaxsched.planning import Choice, planner_policy, planner_view, run_planned, run_planner
from jaxsched.planning.view import PlannerView, QueuedJob, RunningJob

NODES = 6
COMPAT = [
    "window:n=1,cells=f1+sjf+fcfs/rlscheduler+rlscheduler-sjbf",
    "window:n=3,h=4,cells=saf+lcfs+wfp3/rlscheduler;f3/rlscheduler-sjbf",
    "window:w=20",
    "rollout:sjf,k=3,h=4",
    "rollout:f3,k=8,h=all,bf=rlscheduler-sjbf",
    "rollout:f1,k=4,h=8,q=3",
]
CORRECT = [
    "window:n=2,cells=fcfs+wfp3+saf/easy+easy-sjbf+rlscheduler",
    "rollout:unicep,k=4,h=3",
    "rollout:fcfs,k=3,h=all,bf=easy-sjbf",
    "window:n=1,q=3,cells=f1+sjf/easy+easy-sjbf",
]
CASES = [(name, True) for name in COMPAT] + [(name, False) for name in CORRECT]
SEEDS = range(40)


def _starts(name, compat, seq):
    s, r, q, n = seq
    res, _ = run_planner(planner_policy(name), s, r, q, n, num_nodes=NODES, procs_per_node=1.0,
                         compat=compat)  # fmt: skip
    return res.starts


def _future_changed(rng, seq):
    """The sequence with every job submitted after a random time T replaced (other count, run
    times, requests, sizes; still after T); returns (T, new sequence)."""
    s, r, q, n = seq
    T = int(rng.integers(s[0], s[-1] + 1))
    keep = sum(1 for v in s if v <= T)
    m = int(rng.integers(0, 8))
    other = planner_sequence(rng, L=max(m, 1), nodes=NODES)
    sub = sorted(T + 1 + v for v in other[0][:m])
    return T, tuple(a[:keep] + b[:m] for a, b in zip(seq, (sub, *other[1:])))


@pytest.mark.parametrize("name,compat", CASES)
def test_jobs_after_T_do_not_change_earlier_starts(name, compat):
    rng = np.random.default_rng(1)
    for _ in SEEDS:
        seq = planner_sequence(rng, nodes=NODES)
        T, other = _future_changed(rng, seq)
        a, b = _starts(name, compat, seq), _starts(name, compat, other)
        early = [i for i, v in enumerate(a) if v < T]
        assert [a[i] for i in early] == [b[i] for i in early], (name, seq, other, T)
        assert early == [i for i, v in enumerate(b) if v < T]


@pytest.mark.parametrize("name,compat", CASES)
def test_run_time_of_a_job_does_not_change_starts_before_it_ends(name, compat):
    rng = np.random.default_rng(2)
    for _ in SEEDS:
        seq = planner_sequence(rng, nodes=NODES)
        x = int(rng.integers(0, len(seq[0])))
        run2 = list(seq[1])
        run2[x] = int(rng.integers(0, 120))
        other = (seq[0], run2, seq[2], seq[3])
        a, b = _starts(name, compat, seq), _starts(name, compat, other)
        assert a[x] == b[x]
        end = a[x] + min(seq[1][x], run2[x])  # X finishes in neither trace before this
        early = [i for i, v in enumerate(a) if v < end]
        assert [a[i] for i in early] == [b[i] for i in early], (name, seq, x, run2[x])


def _leaky(run):
    """A planner that cheats: commits the queued job of shortest *actual* run time."""

    def decide(view):
        return Choice("fcfs", "rlscheduler", min((run[j.index], j.index) for j in view.queue)[1])

    return decide


def test_the_check_can_fail():
    rng = np.random.default_rng(2)
    caught = 0
    for _ in SEEDS:
        seq = planner_sequence(rng, nodes=NODES)
        x = int(rng.integers(0, len(seq[0])))
        run2 = list(seq[1])
        run2[x] = int(rng.integers(0, 120))
        out = []
        for r in (seq[1], run2):
            res, _ = run_planned(seq[0], r, seq[2], seq[3], num_nodes=NODES, procs_per_node=1.0,
                                 decide=_leaky(r), first_cell=("fcfs", "rlscheduler"))  # fmt: skip
            out.append(res.starts)
        end = out[0][x] + min(seq[1][x], run2[x])
        caught += any(u != v for u, v in zip(*out) if u < end)
    assert caught >= 5


def test_the_view_holds_no_run_time_and_no_future_job():
    rng = np.random.default_rng(3)
    s, r, q, n = planner_sequence(rng, L=30, nodes=NODES)
    seen = []

    def decide(view):
        seen.append(view)
        return Choice("sjf", "rlscheduler", None)

    run_planned(s, r, q, n, num_nodes=NODES, procs_per_node=1.0, decide=decide,
                first_cell=("sjf", "rlscheduler"))  # fmt: skip
    assert seen and all(type(v) is PlannerView for v in seen)
    assert QueuedJob._fields == ("index", "submit", "req", "procs", "nodes")
    assert RunningJob._fields == ("index", "start", "req", "procs", "nodes")
    assert not hasattr(seen[0], "__dict__")  # slots: nothing else can hang on it
    for v in seen:
        for f in ("t", "free_nodes", "num_nodes", "decision"):
            assert type(getattr(v, f)) is int
        assert all(type(j) is QueuedJob and s[j.index] <= v.t for j in v.queue)
        assert all(type(j) is RunningJob for j in v.running)
        assert all(type(x) is int for j in v.queue + v.running for x in j)
        starts = [j.start for j in v.running]
        assert starts == sorted(starts)  # in start order, not the oracle's list order
        assert all(v.predicted_end(j) == max(j.start + j.req, v.t) for j in v.running)
        assert v.free_nodes == NODES - sum(j.nodes for j in v.running)
    with pytest.raises(AttributeError):
        seen[0].t = 0
    assert planner_view  # (built by the driver; its own tests are the runs above)
