"""A learned scheduler's pick in the split-window environment (envs/splitwindow_learned.py):
RLScheduler's observation of a split-window state by hand, and a "network" that scores by
fewest cores / oldest first reproducing the SJF and FCFS heuristics exactly."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.envs.splitwindow import SplitWindowEnv
from jaxsched.envs.splitwindow_baselines import run_baselines, run_picker
from jaxsched.envs.splitwindow_learned import observation, rlscheduler_data, rlscheduler_pick
from jaxsched.errors import ConfigError
from jaxsched.sim import cores as C
from jaxsched.workload import read_swf


def _jobs(tmp_path, sub, run, cores, n_cores, req=None):
    req = run if req is None else req
    lines = [f"; MaxNodes: {n_cores}", f"; MaxProcs: {n_cores}"]
    for i, (s, r, c, q) in enumerate(zip(sub, run, cores, req, strict=True)):
        lines.append(f"{i + 1} {s} 0 {r} {c} -1 -1 {c} {q} -1 1 1 1 1 1 1 -1 -1")
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    return read_swf(tmp_path / "t.swf").jobs("rlscheduler")


def _random16():
    """120 random jobs on 16 cores with tied submits: (submit, run, cores) columns."""
    rng = np.random.RandomState(0)
    n = 120
    sub = np.cumsum(rng.choice([0, 0, 5, 10, 30], size=n))
    return sub, rng.choice([5, 10, 20, 40, 100, 300], size=n), rng.choice([1, 2, 3, 4, 8, 16], n)


def test_observation_of_a_split_window_state_by_hand(tmp_path):
    # 4 cores; j0 (c 2, r 10) starts at 0; j1 (c 4) and j2 (c 1, request 3) wait at t = 3
    jobs = _jobs(tmp_path, [0, 0, 3], [10, 5, 2], [2, 4, 1], 4, req=[10, 5, 3])
    env = SplitWindowEnv(jobs, 1, 1, placements=3, margin=0)
    data = rlscheduler_data(jobs)
    s = env.init_state_at(0).sim
    s, ok = C.start_job(env.data, s, jnp.int32(0), jnp.asarray(True))
    assert bool(ok)
    for _ in range(2):  # j1 arrives at 0 (arrivals of one instant are one event each), j2 at 3
        s = C.advance_one(env.data, s, env.cfg.completions)
    assert int(s.t) == 3 and int(s.q_len) == 2
    obs, mask, vis = observation(data, s, 4)
    np.testing.assert_array_equal(np.asarray(vis), [0, 1, -1, -1])
    np.testing.assert_array_equal(np.asarray(mask), [True, True, False, False])
    o = np.asarray(obs)
    # wait / 12 h, requested time / longest request, processors / 4, ..., can run now
    assert o[0, 0] == pytest.approx(3 / 43200) and o[1, 0] == 0.0
    assert o[0, 1] == pytest.approx(5 / 10) and o[1, 1] == pytest.approx(3 / 10)
    assert o[0, 2] == pytest.approx(1 - 1e-5) and o[1, 2] == pytest.approx(1 / 4)
    assert o[0, 7] == pytest.approx(1e-5) and o[1, 7] == pytest.approx(1 - 1e-5)  # 2 cores free
    np.testing.assert_array_equal(o[2], [0, 1, 1, 1, 1, 1, 1, 0])  # an empty slot's row
    # one row for two waiting jobs: the reference's cut-off shows the shortest request first
    # (L1), the FCFS cut-off the oldest
    assert int(observation(data, s, 1)[2][0]) == 1
    assert int(observation(rlscheduler_data(jobs, "fcfs"), s, 1)[2][0]) == 0


@pytest.mark.parametrize("backfill", ["none", "rlscheduler", "easy"])
def test_scoring_networks_reproduce_sjf_and_fcfs(tmp_path, backfill):
    jobs = _jobs(tmp_path, *_random16(), 16)
    env = SplitWindowEnv(jobs, 2, 2, placements=30, margin=0, queue_cap=128)
    starts = [0, 50]
    want = run_baselines(env, starts, ("fcfs", "sjf"), (backfill,))
    fewest = lambda o, m: -o[:, 2]  # noqa: E731  (processors feature; ties: oldest first)
    oldest = lambda o, m: -jnp.arange(o.shape[0], dtype=jnp.float32)  # noqa: E731
    # every queued job visible (max_queue = the queue's capacity: no cut-off)
    for i, fn in enumerate((oldest, fewest)):
        got = run_picker(env, starts, rlscheduler_pick(jobs, fn, max_queue=128), backfill)
        for k in ("avg_wait", "util", "steps", "avg_queue_len"):
            np.testing.assert_allclose(got[k], want[k][i], rtol=1e-12, err_msg=f"{i} {k}")


def test_unknown_options_are_refused(tmp_path):
    jobs = _jobs(tmp_path, [0, 1], [5, 5], [1, 1], 2)
    with pytest.raises(ConfigError, match="unknown cut-off 'x'"):
        rlscheduler_data(jobs, "x")
    env = SplitWindowEnv(jobs, 1, 0, placements=1, margin=0)
    with pytest.raises(ConfigError, match="unknown back-filling 'x'"):
        run_picker(env, [0], lambda s, a: (jnp.int32(0), a), "x")


def _si(tmp_path, sub, run, cores, n_cores):
    from jaxsched.workload.schedinspector import inspector_jobs

    jobs = _jobs(tmp_path, sub, run, cores, n_cores)
    return jobs, inspector_jobs(read_swf(tmp_path / "t.swf"), "compat")[0]


@pytest.mark.parametrize("backfill", ["none", "rlscheduler", "easy"])
def test_an_accepting_inspector_is_its_base(tmp_path, backfill):
    from jaxsched.envs.splitwindow_learned import inspector_aux, inspector_pick

    jobs, si = _si(tmp_path, *_random16(), 16)
    n = jobs.n_jobs
    env = SplitWindowEnv(jobs, 2, 2, placements=30, margin=0)
    accept = lambda f, m: jnp.asarray([1.0, 0.0])  # noqa: E731
    pick = inspector_pick(si, accept, base="fcfs", env_submit=jobs.submit)
    got = run_picker(env, [0, 50], pick, backfill, inspector_aux(n))
    want = run_baselines(env, [0, 50], ("fcfs",), (backfill,))
    for k in ("avg_wait", "util", "steps"):
        np.testing.assert_allclose(got[k], want[k][0], rtol=1e-12, err_msg=k)


def test_inspector_rejections_by_hand(tmp_path):
    # 4 cores, one-core jobs of 5 s arriving every 100 s; the inspector rejects a job it has
    # not rejected yet (rejection feature 0). j0: rejected at 0, accepted at j1's arrival
    # (100, wait 100); j1: rejected at 100, accepted at j0's completion (105, wait 5); then
    # j2 and j3 the same: average wait (100 + 5 + 100 + 5) / 4
    from jaxsched.envs.splitwindow_learned import inspector_aux, inspector_pick

    jobs, si = _si(tmp_path, [0, 100, 200, 300, 400, 500], [5] * 6, [1] * 6, 4)
    env = SplitWindowEnv(jobs, 1, 0, placements=4, margin=0)
    once = lambda f, m: jnp.stack([jnp.float32(0), jnp.where(f[5] < 0.5 / 72, 1.0, -1.0)])  # noqa: E731
    pick = inspector_pick(si, once, base="fcfs")
    got = run_picker(env, [0], pick, "none", inspector_aux(6))
    assert got["avg_wait"][0] == pytest.approx(52.5)
    # a job rejected MAX_REJECTIONS times can no longer be rejected (the evaluation mask)
    never = lambda f, m: jnp.asarray([0.0, 1.0])  # noqa: E731
    pick = inspector_pick(si, never, base="fcfs")
    sim = env.init_state_at(0).sim  # j0 waits at t = 0
    rej, acc = inspector_aux(6)
    pos, (rej2, _) = pick(sim, (rej.at[0].set(71), acc))
    assert int(pos) == -1 and int(rej2[0]) == 72
    pos, (rej3, acc3) = pick(sim, (rej2, acc))
    assert int(pos) == 0 and int(rej3[0]) == 72 and int(acc3) == 0
    with pytest.raises(ConfigError, match="job list differs"):
        inspector_pick(si, never, env_submit=np.zeros(6, np.int64))
