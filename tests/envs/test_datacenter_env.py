"""jaxsched.envs.DataCenterEnv: the platform contract, the image of spec §3 against a plain
numpy drawing of the oracle's state, the reward of §5 (return = −total slowdown), the mask."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.envs import DataCenterEnv
from jaxsched.envs.testing import check_env_contract
from jaxsched.sim.datacenter import DCParams, baselines, oracle
from jaxsched.workload.deeprm import deeprm_jobset

# small sizes: N = 3 slots, H = 10, R = 6, backlog 4 (width 1), 12-entry jobsets
SMALL = DCParams(num_slots=3, horizon=10, res_slot=6, max_job_size=6, max_job_len=6,
                 backlog_size=4, simu_len=12, step_cap=60)  # fmt: skip
SHORT = dataclasses.replace(SMALL, step_cap=20)


@pytest.fixture(scope="module")
def env():
    return DataCenterEnv(params=SMALL, rate=0.9)


@pytest.fixture(scope="module")
def jstep(env):
    return jax.jit(env.step)


def test_contract():
    info = check_env_contract(DataCenterEnv(params=SHORT, rate=0.9),
                              batch=2, num_steps=40)  # fmt: skip
    assert info["episodes_ended"] >= 1


def np_image(p: DCParams, o: oracle.Oracle) -> np.ndarray:
    """Spec §3 drawn with loops from the oracle's state."""
    H, R, M = p.horizon, p.res_slot, p.max_job_size
    blocks = []
    for i in range(p.num_res):
        c = np.zeros((H, R))
        for h in range(H):
            c[h, : R - o.avail[h][i]] = 1
        blocks.append(c)
        for e in o.slots:
            b = np.zeros((H, M))
            if e is not None:
                b[: o.lens[e], : o.dems[e][i]] = 1
            blocks.append(b)
    bw = -(-p.backlog_size // H)
    b = np.zeros((H, bw))
    for k in range(len(o.backlog)):
        b[k // bw, k % bw] = 1
    blocks += [b, np.full((H, 1), o.since_new / p.max_track_since_new)]
    return np.concatenate(blocks, axis=1)


def test_image_and_return_against_oracle(env, jstep):
    p = env.params
    lens, dems = deeprm_jobset(4, 0.9, p.simu_len)
    lens, dems = np.minimum(lens, 6), np.minimum(dems, 6)
    o = oracle.Oracle(p, lens, dems.tolist())
    state, ts_obs = jax.jit(lambda ln, dm: (lambda s: (s, env.observe(s)))(
        env.init_state_jobset(ln, dm)))(lens, dems)  # fmt: skip
    rng = np.random.default_rng(0)
    first_fit = oracle.greedy(lambda o, e: 1.0)
    total, seen_backlog = 0.0, False
    for _ in range(p.step_cap):
        img = np.asarray(ts_obs.image)
        assert img.shape == (p.horizon, p.image_width)
        np.testing.assert_allclose(img, np_image(p, o), atol=1e-7)
        seen_backlog |= bool(o.backlog)
        a = int(rng.integers(0, p.num_actions)) if rng.random() < 0.3 else first_fit(o)
        state, ts = jstep(state, a)
        r, _ = o.step(a)
        assert abs(float(ts.reward) - r) < 1e-5
        total += float(ts.reward)
        ts_obs = ts.observation
        if bool(ts.last()):
            break
    assert o.end == "all_done" and bool(ts.terminated) and seen_backlog
    sd = [(o.finish[e] - e) / o.lens[e] for e in o.recorded]
    assert abs(total + sum(sd)) < 1e-4  # §5: the return is minus the total slowdown
    assert abs(float(ts.extras["slowdown"]) - np.mean(sd)) < 1e-5


def test_default_width_and_fixed_eval_jobsets(env):
    big = DataCenterEnv()
    assert big.params.image_width == 124 and big.num_actions == 6  # spec §3: 20 × 124
    assert DataCenterEnv(params=DCParams(num_slots=10)).params.image_width == 224
    at = jax.jit(lambda start, key: env.init_state_at(start, key).lens)
    a, b = at(3, jax.random.PRNGKey(0)), at(3, jax.random.PRNGKey(9))
    assert np.array_equal(np.asarray(a), np.asarray(b))
    assert not np.array_equal(np.asarray(a), np.asarray(at(4, jax.random.PRNGKey(0))))


def test_mask_marks_unplaceable_slots(env):
    menv = DataCenterEnv(params=SMALL, rate=0.9, mask_invalid=True)
    lens = np.array([6, 2, 0, 0] + [0] * 8, np.int32)
    dems = np.zeros((12, 2), np.int32)
    dems[0], dems[1] = (6, 6), (1, 1)

    @jax.jit
    def masks(lens, dems):
        s = menv.init_state_jobset(lens, dems)
        s = baselines.cluster.allocate(SMALL, s, 0)[0]  # the big job fills the cluster
        s = s.replace(slots=jnp.array([1, -1, -1], jnp.int32))
        return menv.observe(s).mask, env.observe(s).mask

    m_invalid, m_all = masks(lens, dems)
    assert np.asarray(m_invalid).tolist() == [False, False, False, True]
    assert np.asarray(m_all).all()


def test_no_idle_void_masks_void_only_on_an_idle_cluster_with_a_placeable_job(env):
    lens = np.array([6, 2, 0, 0] + [0] * 8, np.int32)
    dems = np.zeros((12, 2), np.int32)
    dems[0], dems[1] = (6, 6), (1, 1)
    strict = DataCenterEnv(params=SMALL, rate=0.9, mask_invalid=True, no_idle_void=True)
    loose = DataCenterEnv(params=SMALL, rate=0.9, no_idle_void=True)

    @jax.jit
    def masks(lens, dems):
        idle = strict.init_state_jobset(lens, dems).replace(slots=jnp.array([1, -1, -1], jnp.int32))
        busy = baselines.cluster.allocate(SMALL, idle.replace(slots=jnp.array([0, 1, -1],
                                          jnp.int32)), 0)[0]  # fmt: skip
        full = busy.replace(slots=jnp.array([-1, -1, -1], jnp.int32))  # nothing to place
        empty = idle.replace(slots=jnp.array([-1, -1, -1], jnp.int32))
        return [m.observe(s).mask for s in (idle, busy, full, empty) for m in (strict, loose)]

    got = [np.asarray(m).tolist() for m in masks(lens, dems)]
    assert got[0] == [True, False, False, False]  # idle, job 1 placeable: void masked
    assert got[1] == [True, True, True, False]  # every slot open, void still masked
    assert got[2][-1] and got[3][-1]  # the big job runs: void allowed
    assert got[4] == [False, False, False, True] and got[5][-1]  # nothing to place
    assert got[6] == [False, False, False, True] and got[7][-1]  # idle, empty queue
