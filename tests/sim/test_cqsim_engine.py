"""The CQSim engine mode (jaxsched.sim.cqsim): the availability profile's corner cases by hand
(eager = jit), the engine against a small plain-Python scheduler on random tiny traces, the
vmapped decision API = the unbatched runs, and one reference slice through
``jaxsched conformance``.

Two compiled programs: the engine at the reference shape (N 128, Q 256, L 2048; shared by the
plain-Python comparison, the unbatched side of the vmap test and the conformance test) and the
vmapped decision step at a tiny shape."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.sim import oracle_cqsim
from jaxsched.sim.cqsim import engine as CE
from jaxsched.sim.cqsim.profile import build_profile, fits_now, place, reserve_search
from jaxsched.sim.cqsim.run import sequence_of, simulate_cqsim
from jaxsched.sim.cqsim.types import CLASS_READY, cq_params
from jaxsched.sim.types import BIG
from jaxsched.workload.cqsim import CQSimJobs
from tests.shared_data import SHARED

MODES = (
    "none",
    "easy",
    "cons",
    "dras-fcfs",
    "dras-smallest",
    "dras-largest",
    "paper-fcfs",
    "paper-smallest",
    "paper-largest",
)  # paper-*: the paper's DRAS loop (not in the reference)


def _prof(points, P=8):
    t = np.full(P, int(BIG), np.int64)
    a = np.zeros(P, np.int32)
    for i, (tm, av) in enumerate(points):
        t[i], a[i] = tm, av
    return jnp.asarray(t), jnp.asarray(a), jnp.asarray(len(points), jnp.int32)


def _both(f, *args):
    """``f(*args)`` eagerly (no jit) and under ``jax.jit``: equal results; returns the eager one."""
    eager, jitted = f(*args), jax.jit(f)(*args)
    for a, b in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(jitted)):
        np.testing.assert_array_equal(a, b)
    return eager


def _points(pt, pa, n):
    return [(int(pt[i]), int(pa[i])) for i in range(int(n))]


def test_profile_first_point_never_merged_and_equal_ends_merged():
    # now = 100, 1 free; running: est 100 (2 nodes), 150 (1), 150 (3), 200 (1)
    est = jnp.asarray([100, 150, 150, 200, BIG, BIG], jnp.int64)
    k = jnp.asarray([2, 1, 3, 1, 0, 0], jnp.int32)
    pt, pa, n = _both(lambda *a: build_profile(*a, 8), jnp.int64(100), jnp.int32(1), est, k, 4)
    assert _points(pt, pa, n) == [(100, 1), (100, 3), (150, 7), (200, 8)]


def test_reserve_restarts_after_a_failing_point():
    # enough at 10 but a dip at 20 < 10 + 15; restart after 20: 30 is the start
    pt, pa, n = _prof([(0, 1), (10, 4), (20, 2), (30, 4), (50, 8)])
    i, ok = _both(reserve_search, pt, pa, n, 3, 15)
    assert bool(ok) and int(pt[i]) == 30
    i, ok = reserve_search(pt, pa, n, 3, 10)  # [10, 20): the dip at 20 is outside
    assert int(pt[i]) == 10
    _, ok = reserve_search(pt, pa, n, 9, 1)
    assert not bool(ok)


def test_place_inserts_the_end_point_once():
    pt, pa, n = _prof([(0, 2), (10, 4), (30, 8)])
    pt2, pa2, n2, full = _both(place, pt, pa, n, 1, 20, 3, jnp.asarray(True))  # from point 1
    assert _points(pt2, pa2, n2) == [(0, 2), (10, 1), (20, 4), (30, 8)] and not bool(full)
    pt3, pa3, n3, _ = place(
        pt2, pa2, n2, 0, 20, 1, jnp.asarray(True)
    )  # point at 20 exists (from point 0)
    assert _points(pt3, pa3, n3) == [(0, 1), (10, 0), (20, 4), (30, 8)]


def test_reservation_at_the_second_point_at_now_leaves_the_first():
    """Issue 46 (CQSim's ``Node_struc.reserve`` walks the points from the one its search
    returned): now = 10 with 1 free node and 3 more released at 10 (a finish still pending); a
    2-node reservation for 20 s starts at the second point, so only it and the later points
    lose the nodes; the first keeps its 1 free node, and a 1-node job of 50 s fits now."""
    pt, pa, n = _prof([(10, 1), (10, 4), (100, 5)])
    i, ok = _both(reserve_search, pt, pa, n, 2, 20)
    assert bool(ok) and int(i) == 1
    pt2, pa2, n2, _ = _both(place, pt, pa, n, i, 30, 2, jnp.asarray(True))
    assert _points(pt2, pa2, n2) == [(10, 1), (10, 2), (30, 4), (100, 5)]
    ok = fits_now(pt2, pa2, n2, jnp.int64(10), jnp.asarray([1, 2], jnp.int32),
                  jnp.asarray([50, 5], jnp.int64))  # fmt: skip
    assert ok.tolist() == [True, False]  # 2 nodes: the first point has only 1


#: issue 46 by hand, 4 "nodes" of 32 on the reference's 128-node machine (the compiled program of
#: the reference shape): jobs 0-2 fill the machine at 0, jobs 0 and 1 (1 and 2 nodes) both end at
#: 10; job 3 (2 nodes, 20 s), job 4 (3 nodes, 10 s), job 5 (1 node, 50 s) wait. At 10, in the
#: pass after job 0's finish (job 1's is pending), job 3 is reserved at the second point at 10;
#: the first point keeps its 1 free node, so job 5 is backfilled at 10 (EASY, DRAS-FCFS), and
#: job 4 waits for it until 60. CQSim master d8bdbb0 gives these start times; subtracting job
#: 3's nodes from the first point too (the engine before issue 46) gave 10, 30, 40.
SECOND_POINT = CQSimJobs(
    job_id=np.arange(1, 7), submit=np.array([0, 0, 0, 5, 5, 6]),
    run=np.array([10, 10, 100, 20, 10, 50]), req_time=np.array([10, 10, 100, 20, 10, 50]),
    nodes=np.array([1, 2, 1, 2, 3, 1]) * 32, priority=np.zeros(6, np.int32), num_nodes=128,
)  # fmt: skip
SECOND_POINT_STARTS = {"easy": [0, 0, 0, 10, 60, 10], "dras-fcfs": [0, 0, 0, 10, 60, 10],
                       "cons": [0, 0, 0, 10, 30, 40], "none": [0, 0, 0, 10, 30, 40]}  # fmt: skip


def test_second_point_at_now_schedule():
    runs = simulate_cqsim(SECOND_POINT, list(SECOND_POINT_STARTS), queue_cap=256)
    assert {r.mode: r.start.tolist() for r in runs} == SECOND_POINT_STARTS


def test_fits_over_now_to_now_plus_d():
    pt, pa, n = _prof([(100, 3), (100, 5), (150, 1), (200, 8)])
    need = jnp.asarray([3, 3, 4, 2], jnp.int32)
    d = jnp.asarray([50, 51, 1, 100], jnp.int64)
    ok = _both(fits_now, pt, pa, n, jnp.int64(100), need, d)
    assert ok.tolist() == [True, False, False, False]


def _tiny(seed, L=12, N=8, scale=1):
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 12, L)) * 10
    req = rng.integers(1, 8, L) * 10
    run = np.where(rng.random(L) < 0.5, req, rng.integers(1, 8, L) * 10)
    run = np.minimum(run, req)
    nodes = rng.integers(1, N + 1, L) * scale
    i64 = lambda a: np.asarray(a, np.int64)  # noqa: E731
    return CQSimJobs(
        job_id=np.arange(1, L + 1), submit=i64(submit), run=i64(run), req_time=i64(req),
        nodes=i64(nodes), priority=np.zeros(L, np.int32), num_nodes=N * scale,
    )  # fmt: skip


@pytest.mark.parametrize("seed, runtime", [(s, "code") for s in range(12)]
                         + [(s, "paper") for s in range(12, 18)])  # fmt: skip
def test_engine_matches_plain_python(seed, runtime):
    """The JAX engine mode against the plain-Python CQSim oracle (jaxsched.sim.oracle_cqsim),
    every mode, on random tiny traces: 8 "nodes" of 16 on the reference's 128-node machine,
    padded to the reference slices' length bucket (the same compiled program as the
    conformance tests below)."""
    jobs = _tiny(seed, scale=16)
    runs = simulate_cqsim(jobs, MODES, runtime, queue_cap=256)
    for r in runs:
        bf = r.mode.split("-")[0]
        pol = r.mode.split("-")[1] if "-" in r.mode else "fcfs"
        loop = {"reserve": "pick", "persistent": False} if bf == "paper" else {}
        want = oracle_cqsim.simulate_cqsim(
            *(x.tolist() for x in (jobs.submit, jobs.nodes, jobs.run, jobs.req_time)),
            num_nodes=jobs.num_nodes,
            mode="dras" if bf == "paper" else bf,
            policy=oracle_cqsim.fixed_policy(pol) if bf in ("dras", "paper") else None,
            durations="estimate" if runtime == "paper" else "run",
            **loop,
        )
        assert r.start.tolist() == list(want.start), r.mode
        if bf in ("dras", "paper"):
            assert r.cls.tolist() == list(want.cls), r.mode


def test_vmapped_decisions_reproduce_the_fixed_runs():
    """vmap = loop, and the decision API: a batch of three sequences driven decision by decision
    (vmapped ``decide`` with the fixed policy, ``window`` at each decision point) gives each
    sequence's unbatched ``run_fixed`` schedule, classes and decision count."""
    batch = [_tiny(s, scale=16) for s in (3, 4, 11)]
    seq = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *[sequence_of(j) for j in batch])
    p = cq_params("dras-largest")

    @jax.jit
    @jax.vmap
    def step(seq, st):
        win, cnt = CE.window(st)
        ok = ~CE.at_decision(st, p) | ((cnt >= 1) & jnp.all((win >= 0) == (jnp.arange(50) < cnt)))
        return CE.decide(seq, p, st, CE.fixed_choice(seq, p, st)), ok

    st = jax.vmap(lambda q: CE.reset(q, 128, 16, 12))(seq)
    for _ in range(200):
        st, ok = step(seq, st)
        assert np.asarray(ok).all()
        if np.asarray(st.done).all():
            break
    for b, jobs in enumerate(batch):
        (one,) = simulate_cqsim(jobs, ["dras-largest"], queue_cap=256)
        assert np.asarray(st.start[b]).tolist() == one.start.tolist()
        assert np.asarray(st.cls[b]).tolist() == one.cls.tolist()
        assert int(st.decisions[b]) == one.decisions
    assert CLASS_READY in np.asarray(st.cls)


def test_conformance_command_on_a_reference_slice(tmp_path):
    """Slice a0 with its `easy` run, replayed by the command."""
    from jaxsched.conformance.cli import main

    src = SHARED / "reference" / "cqsim" / "SDSC-SP2-1998-4.2-cln-a0-n2000.json"
    doc = json.loads(src.read_text())
    sl = doc["slices"][0]
    sl["runs"] = [r for r in sl["runs"] if r["mode"] == "easy"]
    f = tmp_path / "a0.json"
    f.write_text(json.dumps(doc))
    assert main([str(f), "--traces", str(SHARED / "traces")]) == 0


def test_evaluate_compat_cqsim():
    """``evaluate(..., compat="cqsim")`` selects this mode: its schedules and metrics are the
    engine's runs of the same slices."""
    from jaxsched.errors import ConfigError
    from jaxsched.sim.evaluate import evaluate
    from jaxsched.workload.cqsim import cqsim_slice, load_cqsim

    tr = load_cqsim(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    res = evaluate(tr, [5, 9], 300, ["fcfs"], ["cons", "dras"], compat="cqsim",
                   metrics=["wait", "max_wait"])  # fmt: skip
    assert res.start_times.shape == (2, 1, 2, 300)
    for i, s in enumerate((5, 9)):
        for k, mode in enumerate(("cons", "dras-fcfs")):
            (r,) = simulate_cqsim(cqsim_slice(tr, s, 300), [mode])
            assert res.start_times[i, 0, k].tolist() == r.start.tolist()
            row = [x for x in res.rows if x["start"] == s and x["metric"] == "max_wait"][k]
            assert row["value"] == r.metrics["max_wait"]
    with pytest.raises(ConfigError, match="policy 'sjf'"):
        evaluate(tr, [0], 2000, ["sjf"], ["easy"], compat="cqsim", metrics=["wait"])


def test_conformance_on_a_file_from_the_plain_python_oracle(tmp_path, capsys):
    """A cqsim-reference/1 file the engine has never seen: a tiny trace (written as SWF, with a
    job the loader drops) and runs computed by the plain-Python CQSim oracle; one wrong start
    is then reported as a mismatch (exit status 1)."""
    from jaxsched.conformance.cli import main

    jobs = _tiny(5, scale=16)
    lines = [f"{i} {s} -1 {r} {n} -1 -1 {n} {t} -1 1 -1 -1 -1 -1 -1 -1 -1"
             for i, s, r, n, t in zip(jobs.job_id, jobs.submit + 100, jobs.run, jobs.nodes,
                                      jobs.req_time)]  # fmt: skip
    lines.insert(3, "99 130 0 -1 4 -1 -1 4 50 -1 0 -1 -1 -1 -1 -1 -1 -1")  # run 0: dropped
    (tmp_path / "tiny-cq.swf").write_text("; MaxProcs: 128\n" + "\n".join(lines) + "\n")
    a = [x.tolist() for x in (jobs.submit, jobs.nodes, jobs.run, jobs.req_time)]
    runs = []
    for mode, bf, pol in [
        ("easy", 1, "fcfs"),
        ("cons", 2, "fcfs"),
        ("dras-smallest", 3, "smallest"),
    ]:
        kind = mode.split("-")[0]
        policy = oracle_cqsim.fixed_policy(pol) if kind == "dras" else None
        want = oracle_cqsim.simulate_cqsim(*a, num_nodes=128, mode=kind, policy=policy)
        start, cls = list(want.start), list(want.cls)
        wait = np.asarray(start) - jobs.submit
        run = {"mode": mode, "backfill": bf, "policy": pol, "start": start,
               "metrics": {"avg_wait": float(wait.mean()), "max_wait": int(wait.max())}}  # fmt: skip
        if bf == 3:
            run["class"] = cls
        runs.append(run)
    doc = {"schema": "cqsim-reference/1", "trace": "tiny-cq.swf", "machine_size": 128,
           "loaded_jobs": 12, "jobs_per_slice": 12,
           "slices": [{"start": 0, "input": {"submit": jobs.submit.tolist()}, "runs": runs}]}  # fmt: skip
    f = tmp_path / "tiny.json"
    f.write_text(json.dumps(doc))
    assert main([str(f), "--traces", str(tmp_path)]) == 0
    assert "all matched" in capsys.readouterr().out
    runs[1]["start"][4] += 1
    f.write_text(json.dumps(doc))
    assert main([str(f), "--traces", str(tmp_path)]) == 1
    assert "53/54 values matched" in capsys.readouterr().out


#: capacities (issue 46): jobs 0 and 1 (64 nodes, 100 s) run together, jobs 2-7 (the whole
#: machine, 10 s) queue up behind them, six at once: 100, 110, ..., 150
CAPS = CQSimJobs(
    job_id=np.arange(1, 9), submit=np.array([0, 0, 1, 2, 3, 4, 5, 6]),
    run=np.array([100, 100] + [10] * 6), req_time=np.array([100, 100] + [10] * 6),
    nodes=np.array([64, 64] + [128] * 6), priority=np.zeros(8, np.int32), num_nodes=128,
)  # fmt: skip
CAPS_STARTS = [0, 0, 100, 110, 120, 130, 140, 150]


def test_queue_and_running_capacities_grow_or_stop_naming_them():
    """A queue of 6 in 4 slots, 2 running jobs in 1 slot: with ``grow=False`` the run stops
    with one line naming the capacity; by default it is doubled and the schedule is exact."""
    from jaxsched.errors import ConfigError
    from jaxsched.sim.cqsim import run as RUN

    with pytest.raises(ConfigError, match=r"capacity exceeded: queue slots \(Q = 4\)"):
        simulate_cqsim(CAPS, ["easy"], queue_cap=4, grow=False)
    (r,) = simulate_cqsim(CAPS, ["easy"], queue_cap=4)
    assert r.start.tolist() == CAPS_STARTS
    with pytest.raises(ConfigError, match=r"capacity exceeded: running slots \(R = 1\)"):
        simulate_cqsim(CAPS, ["easy"], queue_cap=8, run_cap=1, grow=False)
    (r,) = simulate_cqsim(CAPS, ["cons"], queue_cap=8, run_cap=1)
    assert r.start.tolist() == CAPS_STARTS
    # the profile's points (R + Q + 2) cannot run out while the queue and running slots hold;
    # a full profile is flagged by place, and the driver names it
    pt, pa, n = _prof([(0, 1), (10, 4)], P=2)
    *_, full = place(pt, pa, n, 0, 5, 1, jnp.asarray(True))
    assert bool(full)
    out = (np.zeros(8, np.int64), np.zeros(8, np.int32), 4, False, 0, 0, 0)
    with pytest.raises(ConfigError, match=r"profile points \(P = R \+ Q \+ 2 = 14\)"):
        RUN._result(CAPS, "easy", out, 128, 8, 4)
