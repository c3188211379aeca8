"""The asynchronous-rows rollout (jaxsched/envs/async_rows.py, jaxsched/train/async_rollout.py)
against the synchronous one (jaxsched/train/rollout.py ``make_collect(row_keys=True)``): for the
same keys every row's observations, masks, actions, rewards, episode ends, valid masks
and collected episodes are identical (log-probabilities up to float rounding of the policy,
evaluated on batches of different sizes), with the reference's backfilling (compat and
correct mode) and EASY (correct mode), batch sizes that leave rows waiting for the policy
(``chunk`` smaller than the rows at a decision) and not; the same for SchedInspector's
environment with backfilling (accepts drain, rejections do not); the protocol's hooks compose
to the env's own transition; ``supports_async`` is False without backfilling."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shared_data import REPO

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv
from jaxsched.envs.schedinspector import SchedInspectorEnv
from jaxsched.systems.schedinspector.config import load_jobs
from jaxsched.train.async_rollout import make_collect_async, supports_async
from jaxsched.train.rollout import NetInput, make_collect
from jaxsched.workload import read_swf

LUBLIN = read_swf(REPO / "traces" / "lublin-1.swf").jobs("rlscheduler")
SI_JOBS, SI_WAIT = load_jobs(str(REPO / "traces" / "lublin-1.swf"), "compat")


def si_env(**kw):
    return SchedInspectorEnv(
        SI_JOBS, base="sjf", length=32, backfill="rlscheduler", swf_wait=SI_WAIT, **kw
    )


def act(params, x, key):
    """A sampled action that depends on the observation (logits = w * row sums)."""
    logits = jnp.where(x.mask, jnp.sum(x.obs, -1) * params, -1e9)
    a = jnp.argmax(logits + jax.random.gumbel(key, logits.shape), -1).astype(jnp.int32)
    logp = jnp.take_along_axis(jax.nn.log_softmax(logits), a[:, None], 1)[:, 0]
    return a, {"logp": logp}


def obs_fn(o):
    return NetInput(o.obs, o.mask)


def _leaves(tree):
    return jax.tree_util.tree_leaves_with_path(tree)


@pytest.mark.parametrize(
    "backfill, compat, E, chunk",
    [
        ("rlscheduler", True, 12, 2),
        # the other two settings: the extended tier (make test-all)
        pytest.param("rlscheduler", False, 5, None, marks=pytest.mark.extended),
        pytest.param("easy", False, 8, 3, marks=pytest.mark.extended),
    ],
)
def test_async_collect_equals_sync(backfill, compat, E, chunk):
    env = AutoResetWrapper(RLSchedulerEnv(LUBLIN, length=48, backfill=backfill, compat=compat))
    assert supports_async(env)
    kw = dict(
        num_envs=E,
        episodes_per_env=2,
        rollout_steps=110,
        obs_fn=obs_fn,
        episode_info_fn=lambda ts: {"start": ts.extras["start"]},
    )
    sync = jax.jit(make_collect(env, act, row_keys=True, **kw))
    asy = jax.jit(make_collect_async(env, act, chunk=chunk, **kw))
    args = (jnp.float32(3.0), jax.random.PRNGKey(E), jnp.int32(0))
    want, got = sync(*args), asy(*args)
    assert int(np.sum(want[0].done)) >= 2 * E  # episodes ended and auto-reset inside the loop
    assert np.asarray(want[0].info["start"]).std() > 0
    for (path, x), y in zip(_leaves(want), jax.tree_util.tree_leaves(got)):
        name = jax.tree_util.keystr(path)
        if "logp" in name:  # the network's output: equal up to float rounding (batch of K or E)
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)


def test_hooks_compose_to_the_transition():
    inner = RLSchedulerEnv(LUBLIN, length=48, backfill="rlscheduler", compat=True)
    # each hook compiled (one program each; run eagerly, every primitive compiles on its own)
    transition, observe = jax.jit(inner.transition), jax.jit(inner.observe)
    async_observe, async_decide = jax.jit(inner.async_observe), jax.jit(inner.async_decide)
    async_pending, async_drain = jax.jit(inner.async_pending), jax.jit(inner.async_drain)
    async_finish = jax.jit(inner.async_finish)
    state, ts = inner.reset(jax.random.PRNGKey(1))
    for a in (5, 0, 3, 1, 7, 2, 0, 4):
        want = transition(state, a)
        s, obs = async_observe(state)
        np.testing.assert_array_equal(obs.obs, observe(state).obs)
        s = async_decide(s, a)
        n = 0
        while bool(async_pending(s)):
            s, n = async_drain(s), n + 1
        got = async_finish(s, True)
        for (path, x), y in zip(_leaves(want[1:]), jax.tree_util.tree_leaves(got[1:])):
            np.testing.assert_array_equal(x, y, err_msg=jax.tree_util.keystr(path))
        for (path, x), y in zip(_leaves(want[0].sim), jax.tree_util.tree_leaves(got[0].sim)):
            np.testing.assert_array_equal(x, y, err_msg=jax.tree_util.keystr(path))
        assert int(got[0].decisions) == int(want[0].decisions)
        state = want[0]


def test_no_async_without_backfilling():
    env = AutoResetWrapper(RLSchedulerEnv(LUBLIN, length=48, backfill="none"))
    assert not supports_async(env)


def act_si(params, x, key):
    """An accept/reject draw that depends on the features (reject often: both paths run)."""
    z = jnp.sum(x.obs, -1) * params
    logits = jnp.where(x.mask, jnp.stack([z, 1.0 - z], -1), -1e9)
    a = jnp.argmax(logits + jax.random.gumbel(key, logits.shape), -1).astype(jnp.int32)
    logp = jnp.take_along_axis(jax.nn.log_softmax(logits), a[:, None], 1)[:, 0]
    return a, {"logp": logp}


def test_schedinspector_async_collect_equals_sync():
    E = 6
    env = AutoResetWrapper(si_env(step_cap=40, cap_reward=-1.0))
    assert supports_async(env)
    kw = dict(num_envs=E, episodes_per_env=2, rollout_steps=90, obs_fn=obs_fn)
    sync = jax.jit(make_collect(env, act_si, row_keys=True, **kw))
    asy = jax.jit(make_collect_async(env, act_si, chunk=2, **kw))
    args = (jnp.float32(0.5), jax.random.PRNGKey(3), jnp.int32(0))
    want, got = sync(*args), asy(*args)
    assert int(np.sum(want[0].done)) >= E  # episodes ended (and some hit the step cap)
    assert 0 < float(np.mean(np.asarray(want[0].action))) < 1  # accepts and rejections
    for (path, x), y in zip(_leaves(want), jax.tree_util.tree_leaves(got)):
        name = jax.tree_util.keystr(path)
        if "logp" in name:
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)
