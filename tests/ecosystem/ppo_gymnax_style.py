"""A single-file PPO in the style of PureJaxRL (written here in our own words, not copied):
the whole training loop is one jitted function over a gymnax-style environment, with a
LogWrapper (episode returns in ``info``) and a NormalizeVecReward-style wrapper (rewards
divided by the running standard deviation of the discounted return, whose statistics live
in the environment state, so in the scan carry). It knows nothing of jaxsched: the tests give
it ``GymnaxEnv(jaxsched.make(...))``.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax import struct


@struct.dataclass
class LogState:
    env_state: Any
    episode_return: jax.Array
    episode_length: jax.Array
    last_return: jax.Array
    last_length: jax.Array


class LogWrapper:
    """Adds ``returned_episode_returns``/``returned_episode`` to ``info``."""

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name):
        return getattr(self.env, name)

    def reset(self, key, params):
        obs, st = self.env.reset(key, params)
        z = jnp.zeros((), jnp.float32)
        return obs, LogState(st, z, jnp.zeros((), jnp.int32), z, jnp.zeros((), jnp.int32))

    def step(self, key, state, action, params):
        obs, st, reward, done, info = self.env.step(key, state.env_state, action, params)
        ret = state.episode_return + reward
        length = state.episode_length + 1
        new = LogState(
            env_state=st,
            episode_return=ret * (1 - done),
            episode_length=length * (1 - done),
            last_return=jnp.where(done, ret, state.last_return),
            last_length=jnp.where(done, length, state.last_length),
        )
        info = {**info, "returned_episode_returns": new.last_return, "returned_episode": done}
        return obs, new, reward, done, info


@struct.dataclass
class NormState:
    env_state: Any
    mean: jax.Array
    var: jax.Array
    count: jax.Array
    ret: jax.Array


class NormalizeVecReward:
    """A batch of environments (vmapped inside) whose rewards are divided by the running
    standard deviation of the discounted return (statistics float32, in the state)."""

    def __init__(self, env, gamma: float):
        self.env, self.gamma = env, gamma

    def reset(self, keys, params):
        obs, st = jax.vmap(self.env.reset, in_axes=(0, None))(keys, params)
        n = keys.shape[0]
        return obs, NormState(st, jnp.float32(0.0), jnp.float32(1.0), jnp.float32(1e-4),
                              jnp.zeros((n,)))  # fmt: skip

    def step(self, keys, state, action, params):
        step = jax.vmap(self.env.step, in_axes=(0, 0, 0, None))
        obs, st, reward, done, info = step(keys, state.env_state, action, params)
        ret = state.ret * self.gamma * (1 - done) + reward
        b_mean, b_var, b_n = ret.mean(), ret.var(), ret.shape[0]
        delta, total = b_mean - state.mean, state.count + b_n
        mean = state.mean + delta * b_n / total
        m2 = state.var * state.count + b_var * b_n + delta**2 * state.count * b_n / total
        new = NormState(st, mean, m2 / total, total, ret)
        return obs, new, reward / jnp.sqrt(new.var + 1e-8), done, info


class ActorCritic(nn.Module):
    num_actions: int

    @nn.compact
    def __call__(self, x):
        h = nn.tanh(nn.Dense(32)(x))
        logits = nn.Dense(self.num_actions)(nn.tanh(nn.Dense(32)(h)))
        value = nn.Dense(1)(nn.tanh(nn.Dense(32)(x)))
        return logits, value[..., 0]


@struct.dataclass
class Transition:
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    info: dict


def make_train(config: dict, env, params):
    """``train(key) -> (runner_state, metrics)``; ``config``: NUM_ENVS, NUM_STEPS,
    NUM_UPDATES, UPDATE_EPOCHS, NUM_MINIBATCHES, LR, GAMMA, GAE_LAMBDA, CLIP_EPS, ENT_COEF,
    VF_COEF, MAX_GRAD_NORM."""
    c = config
    env = NormalizeVecReward(LogWrapper(env), c["GAMMA"])
    n_act = env.env.action_space(params).n
    net = ActorCritic(n_act)
    batch = c["NUM_ENVS"] * c["NUM_STEPS"]
    mb = batch // c["NUM_MINIBATCHES"]

    def train(key):
        key, k_net, k_env = jax.random.split(key, 3)
        obs_shape = env.env.observation_space(params).shape
        net_params = net.init(k_net, jnp.zeros(obs_shape))
        tx = optax.chain(optax.clip_by_global_norm(c["MAX_GRAD_NORM"]), optax.adam(c["LR"]))
        opt_state = tx.init(net_params)
        obs, env_state = env.reset(jax.random.split(k_env, c["NUM_ENVS"]), params)

        def env_step(carry, _):
            net_params, opt_state, env_state, obs, key = carry
            key, k_act, k_step = jax.random.split(key, 3)
            logits, value = net.apply(net_params, obs)
            action = jax.random.categorical(k_act, logits)
            log_prob = jax.nn.log_softmax(logits)[jnp.arange(c["NUM_ENVS"]), action]
            keys = jax.random.split(k_step, c["NUM_ENVS"])
            obs2, env_state, reward, done, info = env.step(keys, env_state, action, params)
            tr = Transition(done, action, value, reward, log_prob, obs, info)
            return (net_params, opt_state, env_state, obs2, key), tr

        def update(carry, _):
            carry, traj = jax.lax.scan(env_step, carry, None, c["NUM_STEPS"])
            net_params, opt_state, env_state, obs, key = carry
            _, last_value = net.apply(net_params, obs)

            def gae(acc, t):
                adv, next_value = acc
                delta = t.reward + c["GAMMA"] * next_value * (1 - t.done) - t.value
                adv = delta + c["GAMMA"] * c["GAE_LAMBDA"] * (1 - t.done) * adv
                return (adv, t.value), adv

            _, advantages = jax.lax.scan(
                gae, (jnp.zeros_like(last_value), last_value), traj, reverse=True
            )
            targets = advantages + traj.value

            def loss_fn(p, tr, adv, tgt):
                logits, value = net.apply(p, tr.obs)
                logp = jax.nn.log_softmax(logits)
                lp = jnp.take_along_axis(logp, tr.action[:, None], 1)[:, 0]
                ratio = jnp.exp(lp - tr.log_prob)
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                clipped = jnp.clip(ratio, 1 - c["CLIP_EPS"], 1 + c["CLIP_EPS"])
                actor = -jnp.minimum(ratio * adv, clipped * adv).mean()
                critic = 0.5 * ((value - tgt) ** 2).mean()
                entropy = -(jnp.exp(logp) * logp).sum(-1).mean()
                return actor + c["VF_COEF"] * critic - c["ENT_COEF"] * entropy

            def epoch(acc, _):
                net_params, opt_state, key = acc
                key, k = jax.random.split(key)
                perm = jax.random.permutation(k, batch)
                flat = jax.tree_util.tree_map(
                    lambda x: x.reshape((batch, *x.shape[2:]))[perm], (traj, advantages, targets)
                )
                mbs = jax.tree_util.tree_map(
                    lambda x: x.reshape((c["NUM_MINIBATCHES"], mb, *x.shape[1:])), flat
                )

                def minibatch(acc, m):
                    p, o = acc
                    loss, g = jax.value_and_grad(loss_fn)(p, *m)
                    upd, o = tx.update(g, o, p)
                    return (optax.apply_updates(p, upd), o), loss

                (net_params, opt_state), losses = jax.lax.scan(
                    minibatch, (net_params, opt_state), mbs
                )
                return (net_params, opt_state, key), losses

            (net_params, opt_state, key), losses = jax.lax.scan(
                epoch, (net_params, opt_state, key), None, c["UPDATE_EPOCHS"]
            )
            metrics = {"loss": losses.mean(), "return": traj.info["returned_episode_returns"]}
            return (net_params, opt_state, env_state, obs, key), metrics

        carry = (net_params, opt_state, env_state, obs, key)
        return jax.lax.scan(update, carry, None, c["NUM_UPDATES"])

    return train
