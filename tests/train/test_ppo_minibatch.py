"""Minibatched PPO (``PPOConfig.minibatch_size``), checked on the minibatch phases with a
quadratic loss and plain SGD (cheap to compile): one minibatch of the whole batch is the
full-batch step; smaller minibatches take epochs × ceil(n / size) steps over shuffles."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxsched.errors import ConfigError
from jaxsched.train import PPOConfig
from jaxsched.train.ppo import TrainState
from jaxsched.train.ppo_minibatch import minibatch_index as _minibatch_index
from jaxsched.train.ppo_minibatch import minibatch_phases as _minibatch_phases

N = 20
X = jnp.asarray(np.random.RandomState(0).normal(size=(N,)), jnp.float32)
W = jnp.asarray(np.arange(N) % 5 != 4)  # some samples carry no weight


def _loss(p, x, w):
    """Weighted mean of (p − x)²; its gradient is 2 (p − mean_w x)."""
    return jnp.sum(jnp.where(w, (p["a"] - x) ** 2, 0.0)) / jnp.maximum(jnp.sum(w), 1)


def _phases(mb, epochs, lr=0.1):
    cfg = PPOConfig(num_envs=1, max_episode_steps=N, train_pi_iters=epochs,
                    train_v_iters=epochs, target_kl=None, minibatch_size=mb)  # fmt: skip
    tx = optax.sgd(lr)
    p0 = {"a": jnp.zeros((), jnp.float32)}
    ts = TrainState(p0, p0, tx.init(p0), tx.init(p0), jnp.zeros(2, jnp.uint32), jnp.int32(0))
    grad_pi = jax.value_and_grad(lambda p, x, w: (_loss(p, x, w), (0.0, 0.0, 0.0)), has_aux=True)
    fns = (grad_pi, jax.value_and_grad(_loss), _loss)
    return _minibatch_phases(cfg, jax.random.PRNGKey(1), ts, fns, (X, W), (X, W), tx, tx)


def test_minibatch_phases():
    mean = float(jnp.sum(jnp.where(W, X, 0)) / jnp.sum(W))
    (pi, iters, stopped, _), (v, v_first) = _phases(N, 1)
    # one minibatch of everything = one full-batch SGD step: a = 0 - 0.1 * 2 * (0 - mean)
    assert float(pi[0]["a"]) == pytest.approx(0.2 * mean, rel=1e-5)
    assert float(v[0]["a"]) == pytest.approx(0.2 * mean, rel=1e-5)
    assert int(iters) == 1 and not bool(stopped)
    assert float(v_first) == pytest.approx(float(_loss({"a": 0.0}, X, W)), rel=1e-6)
    (pi, iters, _, _), _ = _phases(8, 3, lr=0.2)
    assert int(iters) == 3 * 3  # 3 epochs x ceil(20 / 8) minibatches
    # the same nine SGD steps replayed in numpy over the phases' shuffles
    idx = np.asarray(_minibatch_index(jax.random.split(jax.random.PRNGKey(1))[0], N, 8, 3))
    a, x, w = 0.0, np.asarray(X, np.float64), np.asarray(W)
    for rows in idx:
        a -= 0.2 * 2 * np.sum(w[rows] * (a - x[rows])) / max(w[rows].sum(), 1)
    assert float(pi[0]["a"]) == pytest.approx(a, rel=1e-5)


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
