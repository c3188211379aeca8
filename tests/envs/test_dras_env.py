"""DRASEnv (envs/dras.py): the environment contract on a tiny job list and the first
observation's layout (the decision loop itself is tested at the engine level,
tests/sim/test_cqsim_engine.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.envs.dras import DRASEnv, W
from jaxsched.envs.testing import check_env_contract
from jaxsched.workload.cqsim import CQSimJobs


def _jobs(n=40, N=8, seed=0):
    rng = np.random.default_rng(seed)
    req = rng.integers(1, 8, n) * 10
    run = np.minimum(np.where(rng.random(n) < 0.5, req, rng.integers(1, 8, n) * 10), req)
    i64 = lambda a: np.asarray(a, np.int64)  # noqa: E731
    return CQSimJobs(
        job_id=np.arange(1, n + 1), submit=i64(np.sort(rng.integers(0, 40, n)) * 10),
        run=i64(run), req_time=i64(req), nodes=i64(rng.integers(1, N + 1, n)),
        priority=np.zeros(n, np.int32), num_nodes=N,
    )  # fmt: skip


def test_contract():
    env = DRASEnv(_jobs(), length=6)
    out = check_env_contract(env, starts=[0, 3, 34], batch=2, num_steps=10)
    assert out["episodes_ended"] >= 1


def test_first_observation_layout():
    """Spec §3 rows at the first decision: job 0 alone in the window ([n, t], [priority, wait]),
    every node free ([1, 0]), phase 1 (level 1), one valid slot."""
    jobs = _jobs(n=12, seed=2)
    env = DRASEnv(jobs, length=12)
    _, ts = jax.jit(lambda s: env.reset_at(s))(jnp.int32(0))
    o = ts.observation
    obs = np.asarray(o.obs)
    assert obs.shape == (2 * W + 8, 2) and obs.dtype == np.float32
    assert obs[0].tolist() == [jobs.nodes[0], jobs.req_time[0]] and obs[1].tolist() == [0, 0]
    assert (obs[2 : 2 * W] == 0).all() and (obs[2 * W :] == [1, 0]).all()
    assert int(o.phase) == 1 and np.asarray(o.mask).tolist() == [True] + [False] * (W - 1)


def _paper_rewards_by_hand(jobs, sim, job, phase, N):
    """Eq. 1 and Eq. 2 of spec §6.1 in numpy over the engine's queue (all waiting jobs, not
    only the window: at level 2 the window holds the back-fill candidates):
    ``(capability, capacity)``."""
    q = np.asarray(sim.queue_job)[: int(sim.n_queued)]
    now, free = int(sim.t), int(sim.free)
    wait = now - jobs.submit[q]
    n = jobs.nodes[job]
    cap = ((now - jobs.submit[job]) / wait.max() if wait.max() > 0 else 0.0) + n / N
    cap = (cap + (N - free) / N) / 3
    leaves = phase == 2 or free >= n
    left = [j for j in q if not (leaves and j == job)]
    capacity = float(np.mean([-1.0 / jobs.req_time[j] for j in left])) if left else 0.0
    return cap, capacity


def test_paper_rewards_match_their_formulas():
    """reward_capability and reward_capacity at every decision of random episodes (both
    levels) equal Eq. 1 and Eq. 2 computed by hand over the engine's queue; Eq. 2 counts the
    picked job as gone only when it starts (it fits now, or it is a level-2 candidate)."""
    from jaxsched.envs.dras import reward_capability, reward_capacity
    from jaxsched.sim.cqsim import engine as CE

    jobs, N = _jobs(n=40, seed=5), 8
    envs = {f: DRASEnv(jobs, length=40, reward_fn=f) for f in (reward_capability, reward_capacity)}
    e1 = envs[reward_capability]
    win_fn = jax.jit(lambda s: CE.window(s.sim, W))
    steps = {k: jax.jit(v.transition) for k, v in envs.items()}
    rng = np.random.default_rng(0)
    s = e1.init_state_at(0)
    seen = {1: 0, 2: 0, "nofit": 0}
    for _ in range(200):
        if bool(s.sim.done):
            break
        win, count = (np.asarray(x) for x in win_fn(s))
        slot, phase = int(rng.integers(count)), int(s.sim.phase)
        want = _paper_rewards_by_hand(jobs, s.sim, int(win[slot]), phase, N)
        _, r1, *_ = steps[reward_capability](s, slot)
        s2, r2, *_ = steps[reward_capacity](s, slot)
        np.testing.assert_allclose([float(r1), float(r2)], want, rtol=1e-5, atol=1e-7)
        seen[phase] += 1
        seen["nofit"] += phase == 1 and int(s.sim.free) < jobs.nodes[int(win[slot])]
        s = s2
    assert seen[1] > 10 and seen[2] > 3 and seen["nofit"] > 3, seen


@pytest.mark.parametrize(
    "variant, loop",
    [("pg", "paper"), ("dql", "paper"), ("dql", "persistent"), ("pg", "immediate")],
)
def test_loops_replay_the_oracle(variant, loop):
    """DRASEnv / DRASDQLEnv driven by random slots give the plain-Python oracle's schedule when
    it replays the same slots: every start time, every class, and the same number of
    decisions.  loop="paper" with runtime="paper" is the oracle's ``paper=True`` (the pick
    reserved, for one pass; estimates in the profile; one loop for both variants);
    loop="persistent" (DQL) is its default DRAS loop (the oldest job's persistent
    reservation, actual run times); loop="immediate" is its ``immediate`` mode driven by
    :func:`decima_policy` (the env's slot counts the runnable jobs of the first 50)."""
    from jaxsched.envs.dras_dql import DRASDQLEnv
    from jaxsched.policies.dras_baselines import decima_policy
    from jaxsched.sim import oracle_cqsim as C
    from jaxsched.sim.cqsim import engine as CE

    jobs = _jobs(n=40, seed=7)
    cls = DRASDQLEnv if variant == "dql" else DRASEnv
    env = cls(jobs, length=40, runtime=loop if loop == "paper" else "code", loop=loop)
    win_fn = jax.jit(lambda s: CE.window(s.sim, W)[1])
    step = jax.jit(env.transition)
    rng, slots = np.random.default_rng(1), []
    s = env.init_state_at(0)
    while not bool(s.sim.done):
        count = int(win_fn(s))
        slots.append(int(rng.integers(count)))
        s, *_ = step(s, slots[-1])
    replay = iter(slots)
    sub = (jobs.submit - jobs.submit[0]).tolist()  # the environment's clock starts at 0
    if loop == "immediate":
        pick = lambda jobs, runnable, view: [i for i, r in enumerate(runnable) if r][next(replay)]  # noqa: E731
        how = {"mode": "immediate", "policy": decima_policy(pick)}
    else:
        how = {"mode": "dras", "paper": loop == "paper",
               "policy": lambda level, window, view: next(replay)}  # fmt: skip
    arrays = (jobs.nodes.tolist(), jobs.run.tolist(), jobs.req_time.tolist())
    want = C.simulate_cqsim(sub, *arrays, num_nodes=8, **how)
    assert next(replay, None) is None
    assert np.asarray(s.sim.start).tolist() == list(want.start)
    assert np.asarray(s.sim.cls).tolist() == list(want.cls)
    assert len(slots) >= 40  # most jobs decided on
    # reservations held, except in the immediate loop, where every job is "ready"
    assert set(want.cls) == {1} if loop == "immediate" else 2 in want.cls


@pytest.mark.parametrize("reward", ["capability", "capacity"])
def test_dql_paper_reward_is_taken_at_each_decision(reward):
    """DRASDQLEnv with a paper reward: every decision of a random paper-loop episode is
    recorded, with the same reward and next state as DRASEnv's (the PG timing).  The default
    reward keeps the code's timing."""
    from jaxsched.envs.dras import REWARDS
    from jaxsched.envs.dras_dql import DRASDQLEnv
    from jaxsched.sim.cqsim import engine as CE

    jobs = _jobs(n=40, seed=11)
    kw = {"length": 40, "runtime": "paper", "loop": "paper", "reward_fn": REWARDS[reward]}
    dql, pg = DRASDQLEnv(jobs, **kw), DRASEnv(jobs, **kw)
    assert not dql.code_timing and DRASDQLEnv(jobs, length=40).code_timing
    win_fn = jax.jit(lambda s: CE.window(s.sim, W)[1])
    sd, sp = jax.jit(dql.transition), jax.jit(pg.transition)
    rng, s, rewards = np.random.default_rng(3), dql.init_state_at(0), []
    while not bool(s.sim.done):
        slot = int(rng.integers(int(win_fn(s))))
        s2, r, *_, ex = sd(s, slot)
        p2, rp, *_ = sp(s, slot)
        assert float(r) == float(rp) and float(ex["recorded"]) == 1.0
        assert np.array_equal(np.asarray(s2.sim.start), np.asarray(p2.sim.start))
        rewards.append(float(r))
        s = s2
    assert len(rewards) >= 40 and min(rewards) != max(rewards)
