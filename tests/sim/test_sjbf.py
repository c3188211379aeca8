"""Shortest-job-first backfilling (``rlscheduler-sjbf``, ``easy-sjbf``; issue 47 §2): the engine
against hand-checked schedules and against the oracle on random traces (as the plain modes are
in test_engine.py, whose trace generator and batch runner this file reuses)."""

from __future__ import annotations

import numpy as np
import pytest
from test_engine import RUN_BATCH, build_args, check_hand, random_traces, to_numpy
from tiny_traces import schedinspector_tiny

import jaxsched.sim  # noqa: F401  (turns on jax x64)
from jaxsched.errors import ConfigError
from jaxsched.sim import engine as E
from jaxsched.sim import oracle as O
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload import read_swf

SJBF_MODES = ((True, "rlscheduler-sjbf"), (False, "rlscheduler-sjbf"), (False, "easy-sjbf"))


def test_backfill_names():
    assert E.backfill_code("easy-sjbf") == E.BACKFILL_EASY_SJBF
    assert E.backfill_code("greedy-sjbf") == E.BACKFILL_RLSCHEDULER_SJBF
    assert E.BACKFILLS[E.BACKFILL_RLSCHEDULER_SJBF] == "rlscheduler-sjbf"
    with pytest.raises(ConfigError):
        E.backfill_code("easy-sjf-typo")


def test_hand_sjbf_starts_the_shorter_candidate():
    # N = 3, FCFS.  job0 (1 node, 0..5) and jobA (2 nodes, 0..10) start at 0 (0 free).  job1
    # (3 nodes, 1 s) arrives at 1 and is committed: shadow 10 (1 + 2 = 3 nodes at 10).  job2
    # (q 4) and job3 (q 2), 1 node each, arrive at 2 and cannot fit.  t=5: job0 ends, 1 node:
    #   queue order (plain): job2 fits in time (5 + 4 = 9 < 10) and starts at 5; job3 then
    #     needs 9 + 2 = 11 > 10 at job2's end: it waits for job1 (10..11) and starts at 11.
    #   SJBF: job3 (the shorter) starts at 5 and ends at 7; job2 then needs 7 + 4 = 11 > 10:
    #     it starts at 11.
    # EASY is the same (no end equals the shadow, extra nodes 0); without backfilling both
    # wait for job1's end at 11.
    jobs = [(0, 5, 5, 1), (0, 10, 10, 2), (1, 1, 1, 3), (2, 4, 4, 1), (2, 2, 2, 1)]
    plain, sjbf, none = [0, 0, 10, 5, 11], [0, 0, 10, 11, 5], [0, 0, 10, 11, 11]
    for policy in ("fcfs", "sjf", "f1"):
        check_hand(
            jobs,
            3,
            policy,
            {
                (True, "none"): none,
                (True, "rlscheduler"): plain,
                (True, "rlscheduler-sjbf"): sjbf,
                (False, "rlscheduler"): plain,
                (False, "rlscheduler-sjbf"): sjbf,
                (False, "easy"): plain,
                (False, "easy-sjbf"): sjbf,
            },
        )


def test_hand_easy_sjbf_extra_nodes_in_requested_time_order():
    # N = 6, FCFS.  job0 (4 nodes, 0..10) and jobB (2 nodes, 0..3) start at 0 (0 free).  job1
    # (5 nodes) is committed at 1: 0 + 2 at 3, + 4 = 6 >= 5 at 10 -> shadow 10, extra 1.
    # job2 (q 30) and job3 (q 20), 1 node each, arrive at 2 (nothing free).  t=3: jobB ends
    # (2 free); by their request neither ends by 10, so only one takes the extra node:
    #   EASY (queue order): job2 at 3; job3 stays (extra 0).  t=10: job1 starts on the 5 free
    #     nodes; job3 is committed and starts at job1's end, 15.
    #   EASY-SJBF: job3 (q 20) at 3; job2 at 15.
    jobs = [(0, 10, 10, 4), (0, 3, 3, 2), (1, 5, 5, 5), (2, 30, 30, 1), (2, 20, 20, 1)]
    check_hand(
        jobs,
        6,
        "fcfs",
        {(False, "easy"): [0, 0, 10, 3, 15], (False, "easy-sjbf"): [0, 0, 10, 15, 3]},
    )


@pytest.fixture(scope="module")
def sjbf_batch():
    """48 random traces x FCFS/SJF/F1/WFP3/LCFS x the three SJBF modes, one compiled call, and
    the oracle's results of the same runs."""
    traces = random_traces(20261128, 48)
    policies = ("fcfs", "sjf", "f1", "wfp3", "lcfs")
    combos = [(tr, p, c, b) for tr in traces for p in policies for c, b in SJBF_MODES]
    final = to_numpy(RUN_BATCH(*build_args(combos)))
    oracle = [tr.oracle(policy=p, compat=c, backfill=b) for tr, p, c, b in combos]
    plain = [
        tr.oracle(policy=p, compat=c, backfill=b.removesuffix("-sjbf")) for tr, p, c, b in combos
    ]
    return dict(combos=combos, final=final, oracle=oracle, plain=plain)


def test_random_traces_sjbf_equal_oracle(sjbf_batch):
    combos, final, oracle = sjbf_batch["combos"], sjbf_batch["final"], sjbf_batch["oracle"]
    assert final.done.all() and not final.stuck.any() and (np.asarray(final.overflow) == 0).all()
    # the order matters on these traces: many schedules differ from the plain mode's
    differ = sum(o.starts != p.starts for o, p in zip(oracle, sjbf_batch["plain"]))
    assert differ > 50, differ
    bad = [
        i
        for i, ((tr, *_), res) in enumerate(zip(combos, oracle))
        if final.start[i][: tr.n].tolist() != res.starts or int(final.decisions[i]) != res.decisions
    ]
    assert not bad, (len(bad), combos[bad[0]][1:], final.start[bad[0]], oracle[bad[0]].starts)


def test_sjbf_pass_scans_shortest_request_first(sjbf_batch):
    """Every recorded pass of the oracle scans in (requested time, plain scan order)."""
    n = 0
    for tr, p, c, b in sjbf_batch["combos"][:60]:
        res = tr.oracle(policy=p, compat=c, backfill=b, record=True)
        for *_, scan in res.pass_log:
            q = [int(tr.req[x]) for x in scan]
            assert q == sorted(q)
            n += 1
    assert n > 20


def test_evaluate_sjbf_names_and_compat_refusal(tmp_path):
    jobs = read_swf(schedinspector_tiny(tmp_path / "t.swf")).jobs("rlscheduler")
    res = evaluate(jobs, [0, 30], 40, ["fcfs", "sjf"], ["easy", "easy-sjbf"], compat=False)
    assert res.backfills == ["easy", "easy-sjbf"]
    w = [jobs.submit, jobs.run, jobs.req_time, jobs.procs]
    for k, st in enumerate((0, 30)):
        for p_i, p in enumerate(("fcfs", "sjf")):
            want = O.simulate(
                *(a[st : st + 40] for a in w), num_nodes=jobs.num_nodes,
                procs_per_node=jobs.procs_per_node, policy=p, backfill="easy-sjbf", compat=False,
            )  # fmt: skip
            assert res.start_times[k, p_i, 1].tolist() == want
    with pytest.raises(ConfigError, match="easy-sjbf"):
        evaluate(jobs, [0], 40, ["fcfs"], ["easy-sjbf"], compat=True)
    with pytest.raises(ConfigError, match="reference counterpart"):
        O.simulate([0], [1], [1], [1], num_nodes=1, procs_per_node=1, policy="fcfs",
                   backfill="easy-sjbf", compat=True)  # fmt: skip
