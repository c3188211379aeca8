"""Minibatched PPO (``PPOConfig.minibatch_size``): one minibatch of the whole batch is the
full-batch step (up to float rounding); small minibatches take epochs × minibatches steps."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_env import PickSmallestEnv

from jaxsched.envs import AutoResetWrapper
from jaxsched.errors import ConfigError
from jaxsched.train import PPOConfig, make_train
from jaxsched.train.ppo import _minibatch_index


class Policy(nn.Module):
    @nn.compact
    def __call__(self, obs, mask):
        return nn.Dense(1)(nn.tanh(nn.Dense(8)(obs)))[..., 0]


class Value(nn.Module):
    @nn.compact
    def __call__(self, obs):
        return nn.Dense(1)(jnp.mean(nn.tanh(nn.Dense(8)(obs)), axis=-2))[..., 0]


BASE = PPOConfig(num_envs=4, episodes_per_env=1, max_episode_steps=5, target_kl=None,
                 train_pi_iters=2, train_v_iters=2)  # fmt: skip
N = BASE.num_envs * BASE.rollout_steps  # 20 samples per update


def _update(cfg):
    tr = make_train(cfg, AutoResetWrapper(PickSmallestEnv()), Policy(), Value())
    ts = tr.init(jax.random.PRNGKey(3))
    return tr.update(ts)


def test_one_minibatch_is_the_full_batch():
    """Same rollout, same gradients up to summation order: Adam's first steps amplify the
    rounding only where a gradient is ~0, so nearly every parameter agrees to 1e-6."""
    full, m_full = _update(BASE)
    mb, m_mb = _update(PPOConfig(**{**BASE.__dict__, "minibatch_size": N}))
    for tree in ("policy_params", "value_params"):
        a = np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(getattr(full, tree))])
        b = np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(getattr(mb, tree))])
        d = np.abs(a - b)
        assert np.mean(d <= 1e-6) > 0.9 and d.max() <= 2 * 2 * BASE.pi_lr, tree
    assert int(m_full["pi_iters"]) == int(m_mb["pi_iters"]) == 2
    assert float(m_mb["v_loss_old"]) == pytest.approx(float(m_full["v_loss_old"]), rel=1e-5)


def test_minibatch_index():
    idx = np.asarray(_minibatch_index(jax.random.PRNGKey(0), 20, 8, 2))
    assert idx.shape == (6, 8)  # 2 epochs x ceil(20 / 8) minibatches
    for e in range(2):
        flat = idx[3 * e : 3 * e + 3].ravel()
        assert sorted(flat[:20]) == list(range(20))  # a shuffle of every sample
        np.testing.assert_array_equal(flat[20:], flat[:4])  # the last one wraps around
    assert not np.array_equal(idx[:3], idx[3:])


def test_bad_minibatch_size():
    with pytest.raises(ConfigError, match="minibatch_size"):
        PPOConfig(minibatch_size=-1)
    assert "minibatch_size" not in PPOConfig().to_dict()  # old checkpoints' config unchanged
