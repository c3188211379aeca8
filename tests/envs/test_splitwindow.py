"""Split-window environment (spec split_window.md): a hand-computed episode, the window rule,
the queue-capacity error, the environment contract, and the conformance schema on files of
the plain-Python oracle (tests/splitwindow_oracle.py) and on a subset of the shipped file."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shared_data import SHARED
from splitwindow_oracle import play

from jaxsched.conformance import check_file
from jaxsched.envs.splitwindow import SplitWindowEnv, window_positions
from jaxsched.envs.testing import check_env_contract
from jaxsched.sim import cores as C
from jaxsched.workload import read_swf

THIRD = 1.0 / 3.0


def _write_swf(path, sub, run, cores, n_cores):
    lines = [f"; MaxNodes: {n_cores}", f"; MaxProcs: {n_cores}"]
    for i, (s, r, c) in enumerate(zip(sub, run, cores)):
        lines.append(f"{i + 1} {s} 0 {r} {c} -1 -1 {c} -1 -1 1 1 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def hand_jobs(tmp_path_factory):
    """4 cores: j0 (s 0, r 10, c 2), j1 (s 0, r 5, c 4), j2 (s 3, r 2, c 1)."""
    p = _write_swf(tmp_path_factory.mktemp("sw") / "hand.swf", [0, 0, 3], [10, 5, 2], [2, 4, 1], 4)
    return read_swf(p).jobs("rlscheduler")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """120 random jobs on 16 cores with tied submits and tied completions; (dir, name, jobs)."""
    rng = np.random.RandomState(0)
    n = 120
    sub = np.cumsum(rng.choice([0, 0, 5, 10, 30], size=n))
    run = rng.choice([5, 10, 20, 40, 100, 300], size=n)
    cores = rng.choice([1, 2, 3, 4, 8, 16], size=n)
    d = tmp_path_factory.mktemp("swt")
    p = _write_swf(d / "tiny16.swf", sub, run, cores, 16)
    return d, p.name, read_swf(p).jobs("rlscheduler")


def test_window_positions_overlap_rule():
    wp = lambda L, h, t, o="distinct": np.asarray(window_positions(jnp.int32(L), h, t, o))  # noqa: E731
    np.testing.assert_array_equal(wp(5, 2, 3), [0, 1, 4, 3, 2])
    np.testing.assert_array_equal(wp(3, 2, 3), [0, 1, 2, -1, -1])
    np.testing.assert_array_equal(wp(1, 2, 3), [0, -1, -1, -1, -1])
    np.testing.assert_array_equal(wp(1, 2, 3, "repeat"), [0, -1, 0, -1, -1])
    np.testing.assert_array_equal(wp(2, 0, 3), [1, 0, -1])


def test_hand_episode(hand_jobs):
    """Serialised arrivals, a valid pick (reward 0, same clock), an invalid pick, back-filling
    on the lowest free core, the rewards of spec §5 and the §8 metrics, by hand."""
    env = SplitWindowEnv(hand_jobs, 2, 0, placements=3, margin=0, dtype="float64", mask=True)
    step = jax.jit(lambda e, s, a: e.step(s, a))
    s, ts = jax.jit(lambda e: e.reset_at(0))(env)
    o = np.asarray(ts.observation.obs)
    np.testing.assert_array_equal(o, [0, 0, 0, 0, 0.5, 1.0, 0.0, 0, 0, 0])
    np.testing.assert_array_equal(ts.observation.mask, [True, False, True])
    expect = [  # action, reward, clock after, queue length after
        (0, 0.0, 0, 0),  # j0 starts on cores 0, 1
        (2, -0.5 * THIRD, 0, 1),  # Fwd: eta 0.5, L 0; then j1 arrives at the same instant
        (0, -(0.5 + 1.0) * THIRD, 3, 2),  # j1 (4 cores) does not fit: invalid; j2 arrives
        (1, 0.0, 3, 1),  # j2 back-fills on core 2
        (2, -(0.25 + 0.5 + 1.0) * THIRD, 5, 1),  # Fwd; j2 completes at 5
        (2, -(0.5 + 0.5 + 1.0) * THIRD, 10, 1),  # Fwd; j0 completes at 10
        (0, 0.0, 10, 0),  # j1 starts: third placement, the episode ends
    ]
    for k, (a, r, t, L) in enumerate(expect):
        if k == 3:
            o = np.asarray(ts.observation.obs)
            np.testing.assert_allclose(o[:4], [0.7, 0.7, 0, 0], atol=1e-15)
            np.testing.assert_allclose(o[4:], [1.0, 0.5, 1.0, 0.25, 0.2, 0.0], atol=1e-15)
        s, ts = step(env, s, a)
        assert float(ts.reward) == pytest.approx(r, abs=1e-7), k
        assert (int(s.sim.t), int(s.sim.q_len)) == (t, L), k
        assert bool(ts.last()) == (k == len(expect) - 1)
    m = jax.tree_util.tree_map(np.asarray, jax.jit(lambda e, s: e.metrics(s))(env, s))
    assert (m["steps"], m["fwd"], m["invalid"], m["placements"]) == (7, 3, 1, 3)
    assert m["util"] == pytest.approx(22 / 40) and m["avg_queue_len"] == pytest.approx(1.0)
    # the arrival span [0, 3] (j2, the third job, arrives at 3): j0 alone busy (2 cores), j1
    # queued throughout
    assert m["util_arrival_span"] == pytest.approx(6 / 12)
    assert m["avg_queue_len_arrival_span"] == pytest.approx(1.0)
    assert m["avg_wait"] == pytest.approx(10 / 3) and m["avg_bsld"] == pytest.approx(3.5 / 3)
    assert m["job_load"] == pytest.approx(10 * 4 * 5 / 10)
    assert (m["L_max"], m["W_max"], m["queue_at_end"]) == (2, 10, 0)
    # job types (cores bin x run bin): j2 (1 core, 2 s) -> 0, j0 (2, 10 s) -> 5, j1 (4, 5 s) -> 10
    assert np.flatnonzero(m["type_count"]).tolist() == [0, 5, 10]
    assert m["type_wait"][[0, 5, 10]].tolist() == [0.0, 0.0, 10.0]
    assert float(s.reward_sum) == pytest.approx(sum(e[1] for e in expect), abs=1e-14)


def test_core_primitives_and_elapsed_sigma(hand_jobs):
    env = SplitWindowEnv(hand_jobs, 2, 0, placements=3, margin=0, dtype="float64", sigma="elapsed")

    @jax.jit
    def run(e):
        sim = C.init_state(e.data, 0, 4, 8)
        sim = C.advance_until(e.data, sim, 3)  # j0, j1, j2 queued, clock 3
        a = (sim.q_len, sim.t, sim.w_max)
        sim, ok0 = C.start_job(e.data, sim, 0)
        ends0 = sim.core_end
        sim, ok1 = C.start_job(e.data, sim, 0)  # j1 needs 4 cores, 2 are free
        sim, ok2 = C.start_job(e.data, sim, 1)
        ends2 = sim.core_end
        sim = C.advance_one(e.data, sim)
        obs = e.observe(e.init_state_at(0).replace(sim=sim)).obs
        return a, (ok0, ok1, ok2), ends0, ends2, (sim.t, C.busy_cores(sim)), obs

    a, oks, ends0, ends2, b, obs = jax.tree_util.tree_map(np.asarray, run(env))
    assert [int(x) for x in a] == [3, 3, 6] and [bool(x) for x in oks] == [True, False, True]
    assert ends0.tolist() == [13, 13, -1, -1] and ends2.tolist() == [13, 13, 5, -1]
    assert [int(x) for x in b] == [5, 2]
    np.testing.assert_allclose(obs[:4], [0.2, 0.2, 0, 0])  # elapsed: (t - start) / r_max


def test_queue_capacity_is_an_error(hand_jobs):
    env = SplitWindowEnv(hand_jobs, 1, 0, placements=3, margin=0)
    sim = jax.jit(  # the second arrival finds the queue full
        lambda d: C.advance_one(d, C.advance_one(d, C.init_state(d, 0, 4, 1)))
    )(env.data)
    assert bool(sim.overflow) and int(sim.q_len) == 1
    with pytest.raises(C.QueueOverflow, match="more than 1 queued jobs"):
        C.check_overflow(np.asarray([sim.overflow]), 1)


def test_contract(tiny):
    env = SplitWindowEnv(tiny[2], 2, 2, placements=6, queue_cap=64)
    out = check_env_contract(env, starts=[0, 5, 40], batch=2, num_steps=24)
    assert out["episodes_ended"] >= 1


def _oracle_doc(jobs, name, head, tail, starts, policies, **opts):
    J = (jobs.submit.tolist(), jobs.run.tolist(), jobs.node_demand.tolist())
    eps, debug = [], []
    for pol in policies:
        for st in starts:
            row, log = play(J, head, tail, pol, st, n=16, placements=30, **opts)
            eps.append(row)
            if pol == "P1" and st == starts[0]:
                debug.append(dict(config=f"{head}-{tail}", policy=pol, start=st, first_step=5,
                                  steps=log[5:12]))  # fmt: skip
    return dict(trace=name, loaded_jobs=jobs.n_jobs, r_max=int(jobs.run.max()), n_cores=16,
                placements=30, episodes=eps, debug_traces=debug, **opts)  # fmt: skip


def test_conformance_on_oracle_files(tiny, tmp_path):
    d, name, jobs = tiny
    doc = _oracle_doc(jobs, name, 2, 2, [0, 7, 50], ["P1", "P2", "P3", "P4"])
    other = _oracle_doc(jobs, name, 0, 3, [3, 60], ["P1", "P2", "P3"], completions="each",
                        overlap="repeat")  # fmt: skip
    other["debug_traces"] = []  # one compile less; doc covers the excerpts
    for i, dd in enumerate((doc, other)):
        f = tmp_path / f"o{i}.json"
        f.write_text(json.dumps(dd))
        rep = check_file(f, d)
        assert rep.ok and rep.total > 100, [m.describe() for m in rep.mismatches[:3]]
    doc["episodes"][5]["reward_sum"] += 1e-6  # the check can fail
    doc["debug_traces"][0]["steps"][2]["obs"][20] += 1e-9
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    rep = check_file(f, d)
    assert {m.key.get("field") for m in rep.mismatches} == {"reward_sum", "obs max |diff|"}


def test_conformance_shipped_subset(tmp_path):
    """One episode of the shipped file (the whole file: ``jaxsched
    conformance shared/reference/splitwindow/*.json``, 924 values, about 20 s)."""
    ref = json.loads(
        (SHARED / "reference/splitwindow/lublin_256_new2-splitwindow.json").read_text()
    )
    ref["episodes"] = [e for e in ref["episodes"] if e["config"] == "16-4"][:1]
    ref["debug_traces"] = []  # excerpts: test_conformance_on_oracle_files
    ref["summary"] = []
    f = tmp_path / "sub.json"
    f.write_text(json.dumps(ref))
    rep = check_file(f, SHARED / "traces")
    assert rep.ok and rep.total == 20, [m.describe() for m in rep.mismatches[:3]]


def test_baselines_match_oracle(tiny):
    from splitwindow_oracle import play_heuristic

    from jaxsched.envs.splitwindow_baselines import BACKFILLS, PRIORITIES, run_baselines

    jobs = tiny[2]
    env = SplitWindowEnv(jobs, 2, 2, placements=30, margin=0)
    starts = [0, 50]
    m = run_baselines(env, starts)
    J = (jobs.submit.tolist(), jobs.run.tolist(), jobs.node_demand.tolist())
    h = 0
    waits = {}
    for p in PRIORITIES:
        for b in BACKFILLS:
            for k, st in enumerate(starts):
                steps, wait, util, clock, inv, util_win = play_heuristic(
                    J, p, b, st, n=16, placements=30, m=4
                )
                got = (m["steps"][h, k], m["avg_wait"][h, k], m["util"][h, k])
                assert got == pytest.approx((steps, wait, util), rel=1e-12), (p, b, st)
                assert m["util_arrival_span"][h, k] == pytest.approx(util_win, rel=1e-12)
                assert (m["final_clock"][h, k], m["mean_invisible"][h, k]) == pytest.approx(
                    (clock, inv)
                )
                waits[(p, b, st)] = wait
            h += 1
    # back-filling changes the schedules, EASY differently from RLScheduler's variant
    assert any(waits[("fcfs", "none", s)] != waits[("fcfs", "rlscheduler", s)] for s in starts)
    assert any(waits[(p, "easy", s)] != waits[(p, "rlscheduler", s)] for p in PRIORITIES
               for s in starts)  # fmt: skip


def test_bad_configuration_is_one_clear_error(hand_jobs, tiny, tmp_path):
    from jaxsched.conformance.base import FieldError
    from jaxsched.errors import ConfigError

    for kwargs, what in (
        (dict(head=0, tail=0), "at least one slot"),
        (dict(sigma="spent"), "unknown sigma"),
        (dict(overlap="x"), "unknown overlap"),
        (dict(completions="some"), "unknown completions"),
        (dict(weights=(1, 2)), "weights"),
        (dict(placements=10), "fewer than placements"),
    ):
        with pytest.raises(ConfigError, match=what):
            SplitWindowEnv(hand_jobs, **{"head": 2, "tail": 0, "placements": 3, **kwargs})
    d, name, _ = tiny
    doc = {"trace": name, "episodes": [{"m_head": 2, "m_tail": 0, "start": 0, "policy": "P9"}]}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(FieldError, match=r"episodes\[0\]\.policy: unknown policy"):
        check_file(f, d)
