"""DRASEnv (envs/dras.py): the environment contract on a tiny job list and the first
observation's layout (the decision loop itself is tested at the engine level,
tests/sim/test_cqsim_engine.py)."""

import jax
import jax.numpy as jnp
import numpy as np

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
