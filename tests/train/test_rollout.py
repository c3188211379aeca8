"""jaxsched.train.rollout: the valid-step mask, and a rollout of a counting environment whose
episodes are known in advance (lockstep, auto-reset, keys, episode summaries)."""

import flax.struct
import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.train.rollout import (
    NetInput,
    episode_summaries,
    make_collect,
    make_collect_seeds,
    valid_step_mask,
)


def test_valid_step_mask_hand_computed():
    # env 0: episodes end at t=1, 3, 4; env 1: one episode ends at t=2, the next is cut off
    dones = np.zeros((6, 2), bool)
    dones[[1, 3, 4], 0] = True
    dones[2, 1] = True
    valid, completed = valid_step_mask(dones, 2)
    np.testing.assert_array_equal(valid[:, 0], [1, 1, 1, 1, 0, 0])
    np.testing.assert_array_equal(valid[:, 1], [1, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(completed, [2, 1])


@flax.struct.dataclass
class _Obs:
    obs: jax.Array
    mask: jax.Array


@flax.struct.dataclass
class _TS:
    reward: jax.Array
    done: jax.Array
    observation: _Obs
    start: jax.Array


class CountEnv:
    """Episodes of ``lengths[b]`` steps, ``b`` the last bit of the reset key's data; reward =
    the action + 1; feature 0 of slot 0 and ``start`` hold the episode's length.  Auto-resets
    into an episode of the same length."""

    def __init__(self, lengths):
        self.lengths = jnp.asarray(lengths, jnp.int32)

    def _ts(self, t, length, reward, done):
        obs = jnp.zeros((3, 2), jnp.float32).at[0, 0].set(length.astype(jnp.float32))
        return _TS(
            reward=jnp.asarray(reward, jnp.float32),
            done=jnp.asarray(done),
            observation=_Obs(obs, jnp.array([True, True, False])),
            start=length,
        )

    def reset(self, key):
        if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
            key = jax.random.key_data(key)
        e = key[-1] % 2
        length = self.lengths[e]
        state = (jnp.int32(0), length)
        return state, self._ts(0, length, 0.0, False)

    def step(self, state, action):
        t, length = state
        t = t + 1
        done = t >= length
        nt = jnp.where(done, 0, t)
        return (nt, length), self._ts(nt, length, action + 1, done)


def test_collect_keeps_the_first_episodes_in_lockstep():
    env = CountEnv([2, 3])

    def act(params, x, key):
        assert isinstance(x, NetInput) and x.obs.dtype == jnp.float32
        a = jnp.ones(x.mask.shape[:1], jnp.int32) * params
        return a, {"value": jnp.zeros(a.shape, jnp.float32)}

    collect = make_collect(
        env,
        act,
        num_envs=4,
        episodes_per_env=2,
        rollout_steps=7,
        episode_info_fn=lambda ts: {"start": ts.start},
    )
    tr, completed = jax.jit(collect)(jnp.int32(1), jax.random.PRNGKey(0), jnp.int32(0))
    assert tr.reward.shape == (7, 4) and tr.logp is None and tr.entropy is None
    np.testing.assert_array_equal(tr.value, np.zeros((7, 4)))
    np.testing.assert_array_equal(tr.reward, np.full((7, 4), 2.0))  # action 1 -> reward 2
    lengths = np.asarray(tr.x.obs[0, :, 0, 0]).astype(int)
    for e, n in enumerate(lengths):
        assert n in (2, 3)
        # two episodes of n steps each are valid, the rest is not
        np.testing.assert_array_equal(tr.valid[:, e], np.arange(7) < 2 * n)
        np.testing.assert_array_equal(np.flatnonzero(tr.done[:, e])[:2], [n - 1, 2 * n - 1])
    np.testing.assert_array_equal(completed, [2, 2, 2, 2])
    s = episode_summaries(tr, 2)
    np.testing.assert_array_equal(s["episode_info_length"], np.repeat(lengths, 2))
    np.testing.assert_array_equal(s["episode_info_return"], 2.0 * np.repeat(lengths, 2))
    np.testing.assert_array_equal(s["episode_info_start"], np.repeat(lengths, 2))
    np.testing.assert_array_equal(s["episode_info_valid"], [True] * 8)


def test_collect_drops_episodes_the_accept_fn_rejects():
    env = CountEnv([2, 3])

    def act(params, x, key):
        return jnp.zeros(x.mask.shape[:1], jnp.int32), {}

    collect = make_collect(
        env,
        act,
        num_envs=4,
        episodes_per_env=1,
        rollout_steps=3,
        accept_fn=lambda ts, step: ts.start == 3,
    )
    tr, _ = collect(None, jax.random.PRNGKey(0), jnp.int32(0))
    lengths = np.asarray(tr.x.obs[0, :, 0, 0]).astype(int)
    np.testing.assert_array_equal(tr.valid.any(axis=0), lengths == 3)


def test_collect_seeds_gives_each_run_what_its_own_collect_gives():
    env = CountEnv([2, 3])

    def act(params, x, key):
        a = (jax.random.uniform(key, x.mask.shape[:1]) < 0.5).astype(jnp.int32) + params
        return a, {"value": a.astype(jnp.float32)}

    kw = dict(num_envs=3, episodes_per_env=1, rollout_steps=5,
              accept_fn=lambda ts, step: ts.start + step > 2)  # fmt: skip
    params, steps = jnp.array([0, 2], jnp.int32), jnp.array([0, 1], jnp.int32)
    keys = jax.random.split(jax.random.PRNGKey(3), 2)
    tr, completed = jax.jit(make_collect_seeds(env, act, **kw))(params, keys, steps)
    one = jax.jit(make_collect(env, act, **kw))
    for s in range(2):
        want, want_completed = one(params[s], keys[s], steps[s])
        for name in ("action", "reward", "done", "valid", "value"):
            np.testing.assert_array_equal(getattr(tr, name)[s], getattr(want, name), err_msg=name)
        np.testing.assert_array_equal(tr.x.obs[s], want.x.obs)
        np.testing.assert_array_equal(completed[s], want_completed)


def test_episode_end_info_is_read_at_the_episodes_last_step():
    # one env, two episodes (steps 0-1 and 2-4); "start" at the first step, "end_flag" at
    # the step whose transition ended the episode
    from jaxsched.train.rollout import Transition, episode_summaries

    done = jnp.array([[0], [1], [0], [0], [1]], bool)
    z = jnp.zeros((5, 1))
    tr = Transition(x=None, mask=None, action=z, logp=z, value=z, entropy=z, reward=z,
                    done=done, valid=jnp.ones((5, 1), bool),
                    info={"start": jnp.arange(5)[:, None],
                          "end_flag": jnp.array([[0], [7], [0], [0], [9]])})  # fmt: skip
    out = episode_summaries(tr, 2)
    assert out["episode_info_start"].tolist() == [0, 2]
    assert out["episode_info_end_flag"].tolist() == [7, 9]
