"""benchmarks/experiments/a2c_rlscheduler.py: the generic A2C trainer (written for the data-centre
cluster) builds and updates on RLScheduler's environment with the kernel networks."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from shared_data import REPO, load_benchmark

from jaxsched import nets
from jaxsched.systems.rlscheduler.config import RunConfig
from jaxsched.train.a2c import A2CConfig
from jaxsched.workload import read_swf

AR = load_benchmark("a2c_rlscheduler")


@pytest.mark.extended  # an experiment script (benchmarks/experiments)
def test_a2c_updates_the_kernel_networks_on_the_rlscheduler_env():
    trace = REPO / "traces" / "lublin-1.swf"
    jobs = read_swf(trace).jobs("rlscheduler")
    rc = RunConfig(trace=str(trace), length=16)
    cfg = A2CConfig(num_envs=2, n_steps=20, gamma=1.0, optimizer="adam", normalize_advantages=True)
    init, update, policy, value = AR.build(jobs, rc, cfg)
    k_a, k_c, k_e = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"actor": nets.init_params(policy, k_a), "critic": nets.init_params(value, k_c)}
    state, m = update(init(k_e, params))
    # 2 envs x 20 decisions of 16-job episodes: at least one episode ended, with its bsld
    assert float(m["episodes"]) >= 2 and float(m["ep_metric"]) >= float(m["episodes"])
    assert all(np.isfinite(float(v)) for v in m.values())
    moved = jax.tree_util.tree_map(lambda a, b: bool(np.any(a != b)), params, state.params)
    assert any(jax.tree_util.tree_leaves(moved["actor"]))
    assert any(jax.tree_util.tree_leaves(moved["critic"]))
    assert int(state.update) == 1
