"""``jaxsched evaluate --model`` on the asynchronous rows (issue 48): with backfilling, a
shipped RLScheduler policy and a shipped inspector play the same episodes, decision for
decision, as on the synchronous loop (the path an accelerator takes by default, forced here on
the CPU): sampled actions, so the per-row key chains must match too."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
from shared_data import REPO

from jaxsched.systems.rlscheduler.evaluate import load_policy, policy_metric
from jaxsched.systems.schedinspector.config import load_jobs, make_env
from jaxsched.systems.schedinspector.evaluate import inspect_runs, load_inspector
from jaxsched.workload import read_swf

TRACE = REPO / "traces" / "lublin-1.swf"
STARTS = [300, 1200, 2500, 4000, 5100]


def test_rlscheduler_model_async_equals_sync():
    pol = load_policy(REPO / "jaxsched" / "models" / "lublin1-bf")
    jobs = read_swf(TRACE).jobs("rlscheduler")
    kw = dict(backfill="rlscheduler", sample=True, seed=4)
    v0, s0 = policy_metric(pol, jobs, STARTS, 64, async_rows=False, **kw)
    v1, s1 = policy_metric(pol, jobs, STARTS, 64, async_rows=True, **kw)
    np.testing.assert_array_equal(s0, s1)
    np.testing.assert_array_equal(v0, v1)


# the same engine: test_async_rollout.py's SchedInspector collect; the same route: the test above
@pytest.mark.extended
def test_schedinspector_model_async_equals_sync():
    model = load_inspector(REPO / "jaxsched" / "models" / "si-lublin1-sjf")
    rc = dataclasses.replace(model.run, backfill="rlscheduler")
    jobs, wait = load_jobs(str(TRACE), rc.mode)
    env = make_env(rc, jobs, wait, length=64, evaluation=True)
    assert env.async_ok
    kw = dict(sample=True, seed=2)
    want = inspect_runs(env, model.params, STARTS, async_rows=False, **kw)
    got = inspect_runs(env, model.params, STARTS, async_rows=True, **kw)
    assert int(np.sum(want["rejections"])) > 0
    for (path, x), y in zip(
        jax.tree_util.tree_leaves_with_path(want), jax.tree_util.tree_leaves(got)
    ):
        np.testing.assert_array_equal(x, y, err_msg=jax.tree_util.keystr(path))
