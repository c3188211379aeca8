"""EASY++ (issue 47 §2): the plain-Python version (sim/oracle_easypp.py) on a step-by-step worked
example, and the JAX version (sim/easypp.py) against it on the example and on random traces."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from test_engine import LMAX, NMAX, host_args, random_traces

import jaxsched.sim  # noqa: F401  (turns on jax x64)
from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H
from jaxsched.sim import engine as E
from jaxsched.sim import oracle as O
from jaxsched.sim.easypp import predict, run_easypp, user_ids
from jaxsched.sim.oracle_easypp import predict as predict_py
from jaxsched.sim.oracle_easypp import simulate_easypp

# The worked example: N = 5 nodes, FCFS main order; (submit, run, request, processors, user).
#   t=0   job0 (A, 2 nodes) and job1 (A, 2 nodes) start; no history: predictions = requests 100.
#   t=10  job0 ends: A's history [10].  t=20 job1 ends: A's history [10, 20].
#   t=21  job2 (B, 2 nodes, q 40) arrives; B has no history: prediction 40; starts (3 free).
#   t=25  job3 (B, 5 nodes, q 50) arrives (prediction 50), does not fit: committed.  Reservation
#         from predicted ends: job2 at 21 + 40 = 61 -> 3 + 2 = 5 nodes: shadow 61, extra 0.
#   t=26  job4 (A, 2 nodes, q 100, runs 30) arrives: prediction ceil((10 + 20) / 2) = 15.
#         26 + 15 = 41 <= 61: backfilled at 26 (1 free).  (EASY on requests: 126 > 61, no.)
#   t=45  job5 (B, 1 node, q 70) arrives: B's history is still empty -> prediction 70.
#         job4 outlived its prediction (41 < 45): corrected to its requested end 26 + 100 = 126.
#         Reservation: job2 at 61 (1 + 2 = 3 < 5), job4 at 126 (5): shadow 126, extra 0.
#         45 + 70 = 115 <= 126: job5 backfilled at 45 (0 free).  (Without the correction job4
#         would be expected now, 45: shadow 61 and 115 > 61 -> job5 would wait.)
#   t=56  job4 ends; t=61 job2 ends (4 free); t=115 job5 ends (5 free): job3 starts at 115.
# EASY on the requests: job4 and job5 never backfill; job3 starts at 61, job4 and job5 at 71.
EXAMPLE = [
    (0, 10, 100, 2, 1),
    (0, 20, 100, 2, 1),
    (21, 40, 40, 2, 2),
    (25, 10, 50, 5, 2),
    (26, 30, 100, 2, 1),
    (45, 70, 70, 1, 2),
]
EXAMPLE_STARTS = [0, 0, 21, 115, 26, 45]
EXAMPLE_PRED = [100, 100, 40, 50, 15, 70]


def test_prediction_rule():
    assert predict_py([], 500) == 500
    assert predict_py([30], 500) == 30
    assert predict_py([5, 10, 21], 500) == 16  # mean of the last two, rounded up
    assert predict_py([900, 1000], 500) == 500  # capped by the request
    for h, q in (([], 500), ([30], 500), ([10, 21], 500), ([900, 1000], 500)):
        h1 = h[-1] if h else 0
        h2 = h[-2] if len(h) > 1 else 0
        assert int(predict(h1, h2, len(h), q)) == predict_py(h, q)


def test_worked_example_oracle():
    s, r, q, n, u = (list(c) for c in zip(*EXAMPLE))
    res = simulate_easypp(s, r, q, n, u, num_nodes=5, procs_per_node=1)
    assert res.starts == EXAMPLE_STARTS
    assert res.predictions == EXAMPLE_PRED
    assert res.backfilled == [False, False, False, False, True, True]
    assert res.entry_shadow == {3: 61}
    easy = O.simulate(s, r, q, n, num_nodes=5, procs_per_node=1, policy="fcfs",
                      backfill="easy", compat=False)  # fmt: skip
    assert easy == [0, 0, 21, 61, 71, 71]


def _one(submit, run, req, procs, nodes, n_jobs, num_nodes, uid, prank, policy):
    seq = E.Sequence(
        submit=submit, run=run, req=req, procs=procs, nodes=nodes, n_jobs=n_jobs,
        num_nodes=num_nodes,
    )  # fmt: skip
    st, pred = run_easypp(seq, uid, prank, policy, LMAX, NMAX)
    return st.start, pred, st.done, st.stuck, st.overflow


RUN = jax.jit(jax.vmap(_one))


def _args(items):
    """items: (Trace, users [n], policy) -> stacked arguments of RUN."""
    cols = []
    for tr, users, policy in items:
        p = tr.padded()
        uid = np.zeros(LMAX, np.int32)
        uid[: tr.n] = user_ids(np.asarray(users))
        rank = host_args(tr, policy)[1]
        cols.append([p[k] for k in ("submit", "run", "req", "procs", "nodes", "n_jobs",
                                    "num_nodes")] + [uid, rank, np.int32(H.policy_code(policy))])  # fmt: skip
    return [np.stack(c) for c in zip(*cols)]


def test_worked_example_jax():
    from test_engine import trace_from_jobs

    tr = trace_from_jobs([j[:4] for j in EXAMPLE], 5)
    start, pred, done, stuck, over = RUN(*_args([(tr, [j[4] for j in EXAMPLE], "fcfs")]))
    assert start[0, : tr.n].tolist() == EXAMPLE_STARTS
    assert pred[0, : tr.n].tolist() == EXAMPLE_PRED
    assert done.all() and not stuck.any() and (over == 0).all()


def test_random_traces_equal_oracle():
    rng = np.random.default_rng(47)
    items = []
    for tr in random_traces(20261129, 60):
        users = rng.integers(0, int(rng.integers(1, 4)), tr.n)
        for policy in ("fcfs", "sjf", "f1"):
            items.append((tr, users, policy))
    start, pred, done, stuck, over = (np.asarray(a) for a in RUN(*_args(items)))
    assert done.all() and not stuck.any() and (over == 0).all()
    bad, differ_from_easy = [], 0
    for i, (tr, users, policy) in enumerate(items):
        want = simulate_easypp(tr.submit, tr.run, tr.req, tr.procs, users,
                               num_nodes=tr.num_nodes, procs_per_node=tr.ppn, policy=policy)  # fmt: skip
        if start[i, : tr.n].tolist() != want.starts or pred[i, : tr.n].tolist() != want.predictions:
            bad.append(i)
        easy = tr.oracle(policy=policy, compat=False, backfill="easy").starts
        differ_from_easy += easy != want.starts
    assert differ_from_easy > 30, differ_from_easy  # predictions really change schedules
    assert not bad, (len(bad), items[bad[0]][0], items[bad[0]][1:])


def test_no_user_ids_is_refused():
    with pytest.raises(ConfigError, match="no user ids"):
        user_ids(np.full((2, 5), -1))
    with pytest.raises(ConfigError, match="Lublin"):
        simulate_easypp([0, 1], [1, 1], [1, 1], [1, 1], [-1, -1], num_nodes=1, procs_per_node=1)


def test_evaluate_easypp_mode(tmp_path):
    """``evaluate(..., backfills=[..., "easy++"])`` = the oracle's EASY++, merged in order."""
    from tiny_traces import schedinspector_tiny

    from jaxsched.sim.evaluate import evaluate
    from jaxsched.workload import read_swf

    path = schedinspector_tiny(tmp_path / "t.swf")
    text = path.read_text().splitlines()
    # give the tiny trace three users (SWF field 12)
    rows = [ln.split() for ln in text[2:]]
    for i, r in enumerate(rows):
        r[11] = str(1 + i % 3)
    path.write_text("\n".join(text[:2] + [" ".join(r) for r in rows]) + "\n")
    jobs = read_swf(path).jobs("rlscheduler")
    res = evaluate(jobs, [0, 25], 40, ["fcfs", "sjf"], ["easy++", "easy"], compat=False,
                   metrics=("bsld", "wait"))  # fmt: skip
    assert res.backfills == ["easy++", "easy"]
    w = [jobs.submit, jobs.run, jobs.req_time, jobs.procs, jobs.user]
    for k, st in enumerate((0, 25)):
        for p_i, p in enumerate(("fcfs", "sjf")):
            sl = [a[st : st + 40] for a in w]
            want = simulate_easypp(*sl, num_nodes=jobs.num_nodes,
                                   procs_per_node=jobs.procs_per_node, policy=p)  # fmt: skip
            assert res.start_times[k, p_i, 0].tolist() == want.starts
            easy = O.simulate(*sl[:4], num_nodes=jobs.num_nodes,
                              procs_per_node=jobs.procs_per_node, policy=p, backfill="easy",
                              compat=False)  # fmt: skip
            assert res.start_times[k, p_i, 1].tolist() == easy
            want_wait = np.mean(np.asarray(want.starts) - sl[0])
            got = [r["value"] for r in res.rows if (r["start"], r["policy"], r["backfill"],
                   r["metric"]) == (st, p, "easy++", "wait")]  # fmt: skip
            assert got == [pytest.approx(want_wait)]
    with pytest.raises(ConfigError, match="EASY\\+\\+"):
        evaluate(jobs, [0], 40, ["fcfs"], ["easy++"], compat=True)


def test_cli_easypp_on_a_trace_without_users_is_a_one_line_error(capsys):
    from jaxsched.cli import main

    rc = main(["evaluate", "traces/lublin-1.swf", "--backfill", "easy,easy++", "--jobs", "64",
               "--starts", "0"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc != 0 and len(err) == 1 and "no user ids" in err[0], err
