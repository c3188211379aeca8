"""The data-centre cluster (jaxsched.sim.datacenter) on hand-computed tiny cases, the host
generator against the reference jobsets, the device generator's distribution."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shared_data import SHARED

import jaxsched.sim  # noqa: F401  (64-bit mode)
from jaxsched.sim.datacenter import DCParams, baselines, cluster, generator
from jaxsched.workload.deeprm import deeprm_jobset, deeprm_jobsets

# d = 2, R = 3, H = 4, N = 2 slots, backlog 1, S = 4 entries
TINY = dict(num_res=2, res_slot=3, horizon=4, num_slots=2, backlog_size=1, simu_len=4)
TINY = dict(TINY, max_job_size=3, max_job_len=3)
# entry 0: len 1 (2, 1); entry 1: len 2 (2, 2); entry 2: len 1 (3, 3); entry 3: len 1 (1, 1)
LENS = np.array([1, 2, 1, 1], np.int32)
DEMS = np.array([[2, 1], [2, 2], [3, 3], [1, 1]], np.int32)


@pytest.fixture(scope="module")
def stepper():
    cache = {}

    def get(p):
        if p not in cache:
            cache[p] = jax.jit(lambda s, a: cluster.step(p, s, a))
        return cache[p]

    return get


def run(p, stepper, actions):
    s = cluster.reset(p, LENS, DEMS)
    out = []
    for a in actions:
        s, r, placed, term, trunc = stepper(p)(s, a)
        out.append((float(r), bool(placed), bool(term), bool(trunc)))
    return s, out


def test_default_mode_hand_case(stepper):
    p = DCParams(**TINY)
    # t=0: entry 0 in slot 0. Allocate it (fits now), then void.
    s, out = run(p, stepper, [0, 2, 1, 0, 2])
    assert out[0] == (0.0, True, False, False)
    # void at t=0 -> t=1: job 0 (finish 1) leaves; entry 1 arrives in slot 0; reward -1/2
    assert out[1] == (-0.5, False, False, False)
    # action 1: empty slot -> implicit void: t=2, entry 2 arrives in slot 1; in system: e1, e2
    assert out[2] == (-1.5, False, False, False)
    # allocate e1 at t=2 (start 2, finish 4), then void: t=3, entry 3 arrives in slot 0
    assert out[3][1] and int(s.start[1]) == 2 and int(s.finish[1]) == 4
    # in system at t=3: running e1 (1/2), slots e3 (1), e2 (1) -> -2.5
    assert out[4] == (-2.5, False, False, False)
    assert int(s.t) == 3 and list(np.asarray(s.slots)) == [3, 2]
    assert int(s.start[0]) == 0 and int(s.finish[0]) == 1


def test_deeprm_mode_skips_entry0_and_places_in_future(stepper):
    p = DCParams(**TINY, deeprm=True, future=True)
    s = cluster.reset(p, LENS, DEMS)
    assert int(jnp.sum(s.slots >= 0)) == 0  # entry 0 never arrives
    s, r, *_ = stepper(p)(s, 2)  # t=1: entry 1 arrives
    assert float(r) == -0.5
    s, r, placed, *_ = stepper(p)(s, 0)  # e1 start 1, finish 3
    s, r, *_ = stepper(p)(s, 2)  # t=2: entry 2 (3,3) arrives, cannot start before t=3
    s, r, placed, *_ = stepper(p)(s, 0)
    assert bool(placed) and int(s.start[2]) == 3 and int(s.decided[2]) == 2  # a reservation


def test_stale_running_job_quirk(stepper):
    # two jobs that finish at the same time: the reference's prune keeps the second one
    lens = np.array([0, 1, 1, 0], np.int32)
    dems = np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)
    for deeprm, want in ((True, [-1.0, 0.0]), (False, [0.0, 0.0])):
        p = DCParams(**TINY, deeprm=deeprm, future=deeprm)
        s = cluster.reset(p, lens, dems)
        s, *_ = stepper(p)(s, 2)  # t=1: e1 arrives
        s, *_ = stepper(p)(s, 2)  # t=2: e2 arrives (e1 waits)
        s, *_ = stepper(p)(s, 0)  # allocate e1 [2,3)
        s, *_ = stepper(p)(s, 1)  # allocate e2 [2,3)
        rewards, ends = [], []
        for _ in range(2):
            s, r, placed, term, _ = stepper(p)(s, 2)
            rewards.append(float(r))
            ends.append(bool(term))
        # t=3: both finished; in deeprm mode e2 is skipped by the prune and costs 1/1
        assert rewards == want and ends == [False, True], (deeprm, rewards, ends)
        assert int(s.stale_steps) == (1 if deeprm else 0)


def test_backlog_refill_and_drop(stepper):
    p = DCParams(**TINY)  # 2 slots, backlog 1
    lens = np.array([1, 1, 1, 1], np.int32)
    dems = np.ones((4, 2), np.int32)
    s = cluster.reset(p, lens, dems)  # e0 in slot 0
    for _ in range(3):  # t=1: e1 -> slot 1; t=2: e2 -> backlog; t=3: e3 dropped
        s, *_ = stepper(p)(s, 2)
    assert list(np.asarray(s.recorded)) == [True, True, True, False]
    assert bool(s.dropped[3]) and int(s.bsize) == 1
    s, _, placed, *_ = stepper(p)(s, 0)  # allocate e0, e2 moves up from the backlog
    assert bool(placed) and list(np.asarray(s.slots)) == [2, 1] and int(s.bsize) == 0


def test_step_after_end_is_a_no_op(stepper):
    p = DCParams(**TINY, end="no_new_job")
    s, out = run(p, stepper, [2, 2, 2, 2])
    assert out[3][2] and int(s.t) == 4  # t reaches S=4: no_new_job
    s2, r, placed, term, trunc = stepper(p)(s, 2)
    assert float(r) == 0.0 and not bool(term) and int(s2.t) == 4


def test_greedy_baselines_hand_case():
    p = DCParams(**TINY)
    s = cluster.reset(p, LENS, DEMS)
    s = s.replace(
        slots=jnp.array([1, 3], jnp.int32), avail=s.avail.at[0].set(jnp.array([2, 3], jnp.int32))
    )
    fn = jax.jit(lambda s, c: baselines.heuristic_action(p, s, c, 1.0, 0.5))
    act = {n: int(fn(s, baselines.policy_code(n))) for n in ("sjf", "packer", "first_fit")}
    # slot 0: len 2 (2,2) packer 2*2+3*2=10; slot 1: len 1 (1,1) packer 5, sjf prefers it
    assert act == {"sjf": 1, "packer": 0, "first_fit": 0}


def test_host_generator_matches_reference_sequences():
    doc = json.loads((SHARED / "reference" / "deeprm" / "deeprm-simu50.json").read_text())
    S = doc["config"]["simu_len"]
    for seq in doc["sequences"][:4]:
        lens, dems = deeprm_jobset(seq["seed"], seq["rate"], S)
        got = [[int(lens[i]), int(dems[i, 0]), int(dems[i, 1])] for i in range(S)]
        assert got == [e[1:] for e in seq["sequence"]]
    ls, _ = deeprm_jobsets(3, 0.5, 7, 2)
    assert ls.shape == (2, 7) and np.array_equal(ls[0], deeprm_jobset(3, 0.5, 14)[0][:7])


def test_device_generator_distribution():
    p = DCParams(simu_len=250)
    one_fn = jax.jit(lambda k: generator.sample_jobset(p, k, 0.7))
    keys = jax.random.split(jax.random.PRNGKey(1), 20)
    lens, dems = jax.jit(jax.vmap(one_fn))(keys)
    lens, dems = np.asarray(lens), np.asarray(dems)
    job = lens > 0
    assert abs(job.mean() - 0.7) < 0.02
    ln = lens[job]
    assert set(np.unique(ln)) == {1, 2, 3, 10, 11, 12, 13, 14, 15}
    assert abs(ln.mean() - 4.1) < 0.15
    dm = dems[job]
    assert np.all((dm.max(1) >= 5) & (dm.min(1) <= 2) & (dm.min(1) >= 1))
    assert np.all(dems[~job] == 0)
    assert np.array_equal(np.asarray(one_fn(keys[2])[0]), lens[2])  # vmap == one at a time
