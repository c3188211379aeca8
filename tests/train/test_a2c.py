"""A2C (jaxsched.train.a2c): n-step targets and loss wiring on the toy environment, a learning
test (the toy environment's random policy earns 0.29 per step, a learned one close to 1), and
the A2cScheduler networks' shapes and Table 3 variants."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_env import RANDOM_REWARD_PER_STEP, PickSmallestEnv

from jaxsched.envs import AutoResetWrapper
from jaxsched.errors import ConfigError
from jaxsched.nets.a2cscheduler import ARCHS, Actor, Critic
from jaxsched.nets.categorical import apply_mask
from jaxsched.train.a2c import A2CConfig, make_a2c


class SlotScore(nn.Module):
    @nn.compact
    def __call__(self, obs):  # [..., N, 8] -> [..., N]
        return nn.Dense(1)(nn.relu(nn.Dense(16)(obs)))[..., 0]


class MeanValue(nn.Module):
    @nn.compact
    def __call__(self, obs):  # [..., N, 8] -> [...]
        return nn.Dense(1)(jnp.mean(obs, axis=-2))[..., 0]


def test_a2c_learns_the_toy_task():
    env = AutoResetWrapper(PickSmallestEnv())
    actor_net, critic_net = SlotScore(), MeanValue()
    x0 = jnp.zeros((6, 8), jnp.float32)
    key = jax.random.PRNGKey(0)
    params = {"actor": actor_net.init(key, x0), "critic": critic_net.init(key, x0)}
    cfg = A2CConfig(num_envs=16, n_steps=4, gamma=0.0, lr=1e-2, optimizer="adam")
    init, update = make_a2c(
        env,
        lambda p, x, m: apply_mask(actor_net.apply(p, x), m),
        critic_net.apply,
        cfg,
        lambda o: (o.obs, o.mask),
    )
    state = jax.jit(init)(jax.random.PRNGKey(1), params)
    step = jax.jit(update)
    rewards = []
    for _ in range(160):
        state, m = step(state)
        rewards.append(float(m["reward"]))
    rewards = [np.mean(rewards[i : i + 20]) for i in (0, 140)]
    assert abs(rewards[0] - RANDOM_REWARD_PER_STEP) < 0.25  # starts near random
    assert rewards[-1] > 0.75, rewards
    assert int(state.update) == 160 and np.isfinite(float(m["loss"]))


def test_entropy_bonus_anneals_linearly_to_zero():
    """β = 0.1 annealed over 4 updates: 0.1, 0.075, 0.05, 0.025, then 0 for good; 0 updates
    keeps β constant."""
    env = AutoResetWrapper(PickSmallestEnv())
    net = SlotScore()
    x0 = jnp.zeros((6, 8), jnp.float32)
    params = {"actor": net.init(jax.random.PRNGKey(0), x0), "critic": MeanValue().init(
        jax.random.PRNGKey(0), x0)}  # fmt: skip
    actor = lambda p, x, m: apply_mask(net.apply(p, x), m)  # noqa: E731

    def betas(anneal):
        cfg = A2CConfig(num_envs=2, n_steps=2, lr=0.0, entropy_coef=0.1, optimizer="adam",
                        entropy_anneal_updates=anneal)  # fmt: skip
        init, update = make_a2c(env, actor, MeanValue().apply, cfg, lambda o: (o.obs, o.mask))
        state, step, out = init(jax.random.PRNGKey(1), params), jax.jit(update), []
        for _ in range(6):
            state, m = step(state)
            out.append(float(m["entropy_coef"]))
        return out

    np.testing.assert_allclose(betas(4), [0.1, 0.075, 0.05, 0.025, 0.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(betas(0), [0.1] * 6, rtol=1e-6)
    with pytest.raises(ConfigError, match="entropy_anneal_updates"):
        A2CConfig(entropy_anneal_updates=-1)


def test_networks_shapes_and_variants():
    img = jnp.zeros((2, 20, 124), jnp.float32)
    mask = jnp.array([[True] * 5 + [False], [True] * 6])
    key = jax.random.PRNGKey(0)
    for arch in ARCHS:  # shapes only (traced, not compiled)
        actor, critic = Actor(6, arch), Critic(arch)
        pa = jax.eval_shape(actor.init, key, img[0])
        pc = jax.eval_shape(critic.init, key, img[0])
        logits = jax.eval_shape(actor.apply, pa, img, mask)
        v = jax.eval_shape(critic.apply, pc, img)
        assert logits.shape == (2, 6) and logits.dtype == jnp.float32 and v.shape == (2,)
    n_params = sum(x.size for x in jax.tree_util.tree_leaves(pa))
    assert n_params == 20 * 124 * 20 + 20 + 20 * 6 + 6  # "fc": flatten + dense 20 + output
    conv16 = Actor(6, "conv16")
    p16 = jax.jit(conv16.init)(key, img[0])
    assert p16["params"]["Trunk_0"]["Conv_0"]["kernel"].shape == (3, 3, 1, 16)  # one 3x3, 16
    assert p16["params"]["Dense_0"]["kernel"].shape == (20 * 124 * 16, 6)
    logits = jax.jit(conv16.apply)(p16, img, mask)
    assert float(logits[0, 5]) < -1e29 and np.all(np.isfinite(np.asarray(logits[1])))
    with pytest.raises(ConfigError):
        jax.eval_shape(Actor(6, "conv8").init, key, img[0])
    with pytest.raises(ConfigError):
        A2CConfig(optimizer="sgd")


def test_max_pool_2x2_equals_flax_max_pool():
    """The reshape-and-max pooling of the Table 3 variants gives nn.max_pool's values (odd
    sizes: the last row and column dropped, VALID) and, without ties, its gradient."""
    from jaxsched.nets.a2cscheduler import max_pool_2x2

    x = jax.random.normal(jax.random.PRNGKey(3), (2, 7, 10, 3))
    ref = lambda v: nn.max_pool(v, (2, 2), strides=(2, 2))  # noqa: E731
    np.testing.assert_array_equal(max_pool_2x2(x), ref(x))
    g = jax.grad(lambda v: jnp.sum(jnp.sin(max_pool_2x2(v))))(x)
    g_ref = jax.grad(lambda v: jnp.sum(jnp.sin(ref(v))))(x)
    np.testing.assert_allclose(g, g_ref, rtol=1e-6)
