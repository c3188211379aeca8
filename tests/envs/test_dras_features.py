"""DRAS observation and rewards (jaxsched.envs.dras_features, spec dras.md §3, §6) on a
hand-computed 2-job, 4-node state; jit equals no-jit; the scales equal the nets' input_norm."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs import dras_features as F

NOW = 1000.0
# job 0: 2 nodes, estimate 3600, priority 1, submitted at 400 (waited 600)
# job 1: 1 node, estimate 7200, priority 0, submitted at 900 (waited 100)
JOBS = tuple(
    jnp.asarray(a) for a in ([2, 1], [3600.0, 7200.0], [1, 0], [400.0, 900.0])
)  # size, estimate, priority, submit
OWNER = jnp.asarray([7, -1, 3, -1])  # nodes 0 and 2 busy
EST_END = jnp.asarray([1500.0, 0.0, 4000.0, 0.0])
WIN, COUNT = jnp.asarray([1, 0, 0]), 2  # window of W = 3: job 1, job 0, empty

PG_EXPECTED = np.array(
    [[1, 7200], [0, 100], [2, 3600], [1, 600], [0, 0], [0, 0],  # window slots
     [0, 500], [1, 0], [0, 3000], [1, 0]],  # nodes
    np.float32,
)  # fmt: skip


PG_JIT = jax.jit(F.pg_observation)


def test_pg_observation_hand_case():
    x = PG_JIT(WIN, COUNT, JOBS, OWNER, EST_END, NOW)
    assert x.shape == (2 * 3 + 4, 2) and x.dtype == jnp.float32
    np.testing.assert_array_equal(x, PG_EXPECTED)
    np.testing.assert_array_equal(PG_JIT(WIN, COUNT, JOBS, OWNER >= 0, EST_END, NOW), x)


def test_dql_observations_hand_case():
    x = jax.jit(F.dql_observations)(jnp.asarray([0, 1]), JOBS, OWNER, EST_END, NOW)
    assert x.shape == (2, 2 + 4, 2)
    np.testing.assert_array_equal(x[0], np.concatenate([PG_EXPECTED[2:4], PG_EXPECTED[6:]]))
    np.testing.assert_array_equal(x[1], np.concatenate([PG_EXPECTED[0:2], PG_EXPECTED[6:]]))


@jax.jit
def _rewards():
    waiting = jnp.asarray([True, True])
    mw = F.max_wait(JOBS[3], waiting, NOW)
    return jnp.stack(
        [
            mw,
            F.code_reward(2, 600.0, 2, 4, mw),
            F.code_reward(3, 600.0, 2, 4, mw),
            F.code_reward(1, 100.0, 1, 4, mw, started=True),
            F.code_reward(1, 100.0, 1, 4, mw, started=True, double_count=False),
            F.code_reward(1, 30000.0, 2, 4, 60000.0),
            F.paper_reward(2, 600.0, 2, 4, mw),
            F.paper_reward(2, 0.0, 2, 4, 0.0),
            F.capacity_reward(JOBS[1], waiting),
            F.capacity_reward(JOBS[1], ~waiting),
        ]
    )


def test_rewards_hand_case():
    f = 21600
    want = [
        600.0,  # max wait
        (1.0 + 600 / f + 0.5) / 3,  # job 0 fits 2 free nodes: util (2 + 2)/4, 6-h floor, size
        (0.5 + 600 / f + 0.75) / 3,  # 3 nodes do not fit: util = running / N
        (1.0 + 100 / f + 0.25) / 3,  # job 1 after its start: the code counts it twice
        (0.75 + 100 / f + 0.25) / 3,  # ... the fixed rule once
        (0.75 + 0.5 + 0.25) / 3,  # max wait above the floor divides
        (1 + 0.5 + 0.5) / 3,  # Eq. 1
        (0 + 0.5 + 0.5) / 3,  # Eq. 1 with t_max = 0
        -(1 / 3600 + 1 / 7200) / 2,  # Eq. 2
        0.0,  # Eq. 2, empty queue
    ]
    np.testing.assert_allclose(_rewards(), want, rtol=1e-6)


def test_jit_equals_no_jit():
    args = (WIN, COUNT, JOBS, OWNER, EST_END, NOW)
    np.testing.assert_array_equal(PG_JIT(*args), F.pg_observation(*args))


def test_scales_equal_net_input_norm():
    from jaxsched.nets.dras import DRASPolicy

    raw = PG_JIT(WIN, COUNT, JOBS, OWNER, EST_END, NOW)
    scaled = jax.jit(F.pg_observation, static_argnames="scales")(
        WIN, COUNT, JOBS, OWNER, EST_END, NOW, scales=(4.0, 3600.0)
    )
    np.testing.assert_allclose(scaled[2], [0.5, 1.0])  # job row A: n / 4, t / 3600
    np.testing.assert_allclose(scaled[3], [1.0, 600 / 3600])  # row B: priority kept
    np.testing.assert_allclose(scaled[6:], raw[6:] / np.array([1.0, 3600.0]))  # nodes
    net = DRASPolicy(hidden=(3, 2), window=3)
    normed = DRASPolicy(hidden=(3, 2), window=3, input_norm=(4.0, 3600.0))
    p = jax.tree_util.tree_map(
        lambda s: jnp.full(s.shape, 0.3, jnp.float32),
        jax.eval_shape(net.init, jax.random.key(0), raw),
    )
    np.testing.assert_allclose(
        jax.jit(normed.apply)(p, raw), jax.jit(net.apply)(p, scaled), rtol=1e-5
    )
