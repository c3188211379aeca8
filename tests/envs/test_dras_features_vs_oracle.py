"""DRAS's JAX observation builder and rewards (jaxsched.envs.dras_features) against the
plain-Python CQSim oracle (jaxsched.sim.oracle_cqsim): every level-1/level-2 state of a DRAS-PG
run with random picks over the first jobs of a reference slice, some DQL candidate states, and
the type-5 and Eq. 1 rewards on random arguments."""

from __future__ import annotations

import json
import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shared_data import SHARED

from jaxsched.envs import dras_features as F
from jaxsched.sim import oracle_cqsim as C

SLICE = SHARED / "reference" / "cqsim" / "SDSC-SP2-1998-4.2-cln-a0-n2000.json"
W = 50


def _view_arrays(view):
    jobs = tuple(
        jnp.asarray(np.asarray(a, np.float64))
        for a in (view.nodes, view.req_time, view.priority, view.submit)
    )
    owner = jnp.asarray(view.node_owner)
    est_end = jnp.asarray(np.asarray(view.node_est_end, np.float64))
    return jobs, owner, est_end


def test_states_of_a_random_run_equal_the_oracle():
    ref = json.loads(SLICE.read_text())
    inp, n_nodes, n_jobs = ref["slices"][0]["input"], ref["machine_size"], 160
    args = [inp[k][:n_jobs] for k in ("submit", "nodes", "run", "req_time")]
    pg, dq = jax.jit(F.pg_observation), jax.jit(F.dql_observations)
    rng, seen = random.Random(0), {"pg": 0, "dql": 0}

    def policy(level, window, view):
        win = list(view.window[:W])
        jobs, owner, est_end = _view_arrays(view)
        slots = jnp.asarray(win + [0] * (W - len(win)))
        got = pg(slots, len(win), jobs, owner, est_end, float(view.t))
        np.testing.assert_array_equal(np.asarray(got), np.asarray(C.pg_state(view, W), np.float32))
        seen["pg"] += 1
        if seen["pg"] % 10 == 0 and win:
            g = dq(jnp.asarray(win[:1]), jobs, owner, est_end, float(view.t))
            want = np.asarray(C.dql_state(view, win[0]), np.float32)
            np.testing.assert_array_equal(np.asarray(g[0]), want)
            seen["dql"] += 1
        return rng.randrange(len(window))

    priority = [int(n > 0.2 * n_nodes) for n in args[1]]
    C.simulate_cqsim(*args, num_nodes=n_nodes, mode="dras", policy=policy, priority=priority)
    assert seen["pg"] > 100 and seen["dql"] > 5


@pytest.mark.parametrize("seed", [1, 2])
def test_rewards_equal_the_oracle(seed):
    r, n_nodes = random.Random(seed), 128
    for _ in range(100):
        n, free = r.randint(1, n_nodes), r.randint(0, n_nodes)
        wait = r.uniform(0, 1e5)
        mwait = max(wait, r.choice([r.uniform(0, 3e4), r.uniform(0, 2e5)]))
        a, b = (
            C.reward_type5(n, wait, free, n_nodes, mwait),
            F.code_reward(n, wait, free, n_nodes, mwait),
        )
        assert float(b) == pytest.approx(a, rel=1e-5, abs=1e-6)
        a = C.reward_paper(n, wait, free, n_nodes, mwait)
        b = F.paper_reward(n, wait, n_nodes - free, n_nodes, mwait)
        assert float(b) == pytest.approx(a, rel=1e-5, abs=1e-6)
