"""Monte-Carlo policy gradient with a time-dependent baseline: DeepRM's training rule (its
``pg_re``), the method A2cScheduler's paper compares its multi-step TD against (spec §7).

One update draws ``S`` episode starts and runs ``G`` trajectories from each (``E = S·G``
environments; the ``G`` copies of a start share its reset key, so they see the same jobset,
and differ only in their sampled actions), every trajectory to its end or to ``max_steps``.
Returns are the discounted rewards-to-go ``R_t`` (γ = 1 in DeepRM), the baseline ``b_t`` of a
start is the mean of its ``G`` trajectories' ``R_t`` at the same step index ``t`` (a trajectory
that has ended counts with 0, as DeepRM pads), and the loss is
``−Σ log π(a_t|s_t)·(R_t − b_t) / K − β·Σ H_t / K`` over the ``K`` steps taken before the
ends (with ``normalize_advantages`` the advantages are standardised over those steps first).

Memory: the rollout keeps only actions, rewards and the live mask ``[T, E]``; the gradient is
then summed over chunks of ``chunk`` steps, each chunk's observations recomputed by replaying
the recorded actions from the chunk's first state (the environment is deterministic given its
state and the action; chunks where every trajectory has ended are skipped). Storing every
image of a 500-step rollout of 64 environments would take ~0.3 GB, its activations ~5 GB.

Environment interface as :func:`jaxsched.train.a2c.make_a2c`'s (nothing here imports an
environment): ``env.reset(key)``, ``env.step(state, action)`` for one environment, with
``timestep.observation``, ``reward``, ``last()``, ``extras``; ``step`` must be deterministic
(the replay relies on it; what it does after an end does not matter, those steps carry no
weight). ``actor(params["actor"], x, mask) -> masked logits [..., A]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxsched.errors import ConfigError
from jaxsched.nets.categorical import entropy_of, gumbel_argmax, log_prob_of, log_softmax
from jaxsched.train.a2c import A2CConfig, make_optimizer
from jaxsched.train.returns import masked_standardize, reward_to_go
from jaxsched.train.rollout import to_f32

__all__ = ["MCPGConfig", "MCPGState", "make_mc_pg", "time_baseline_advantages"]


@dataclasses.dataclass(frozen=True)
class MCPGConfig:
    """Hyper-parameters. ``num_starts`` S episode starts per update, ``trajectories`` G per
    start (DeepRM: 10), ``max_steps`` T (the rollout length: an episode still running then is
    cut), ``chunk`` steps per gradient chunk (must divide T); ``gamma`` (DeepRM: 1);
    optimiser settings as :class:`jaxsched.train.a2c.A2CConfig`'s (DeepRM: RMSProp, lr 1e-3);
    ``entropy_coef`` β (DeepRM: 0); ``normalize_advantages``."""

    num_starts: int = 8
    trajectories: int = 8
    max_steps: int = 500
    chunk: int = 50
    gamma: float = 1.0
    lr: float = 1e-3
    optimizer: str = "rmsprop"
    rms_decay: float = 0.9
    rms_eps: float = 1e-9
    entropy_coef: float = 0.0
    max_grad_norm: float | None = 10.0
    normalize_advantages: bool = False

    def __post_init__(self):
        if min(self.num_starts, self.trajectories, self.max_steps, self.chunk) < 1:
            raise ConfigError("num_starts, trajectories, max_steps and chunk must be >= 1")
        if self.max_steps % self.chunk:
            raise ConfigError(f"chunk ({self.chunk}) must divide max_steps ({self.max_steps})")
        if not 0.0 <= self.gamma <= 1.0:
            raise ConfigError(f"gamma must be in [0, 1], got {self.gamma}")

    @property
    def num_envs(self) -> int:
        return self.num_starts * self.trajectories

    def optimizer_config(self) -> A2CConfig:
        return A2CConfig(lr=self.lr, optimizer=self.optimizer, rms_decay=self.rms_decay,
                         rms_eps=self.rms_eps, max_grad_norm=self.max_grad_norm)  # fmt: skip


@struct.dataclass
class MCPGState:
    """Trainer state: ``params`` ({"actor": ...}), ``opt_state``, ``key``, ``update`` (int32)."""

    params: Any
    opt_state: Any
    key: jax.Array
    update: jax.Array


def time_baseline_advantages(rewards, live, gamma: float, trajectories: int):
    """DeepRM's advantages. ``rewards`` float ``[T, E]`` (0 after an end), ``live`` bool
    ``[T, E]`` (the step was taken before the end), environments grouped start-major
    (``E = S·G``, environment ``s·G + g`` is trajectory g of start s). Returns float32
    ``[T, E]``: ``R_t − mean_g R_t`` within each start, 0 where not live."""
    T, E = rewards.shape
    ret = reward_to_go(rewards, jnp.zeros((T, E), bool), gamma)  # rewards are 0 after an end
    grouped = ret.reshape(T, E // trajectories, trajectories)
    base = jnp.mean(grouped, axis=2, keepdims=True)
    return jnp.where(live, (grouped - base).reshape(T, E), 0.0)


def make_mc_pg(env, actor: Callable, cfg: MCPGConfig, obs_fn: Callable, tx=None):
    """``(init, update)``: ``init(key, params) -> MCPGState``, ``update(state) -> (state,
    metrics)`` (jit it; float32 scalar metrics: ``loss``, ``policy_loss``, ``entropy``,
    ``reward`` (mean per step taken), ``steps`` (steps taken), ``episodes`` (trajectories
    that ended within ``max_steps``) and ``ep_<k>``: the sum over those trajectories of each
    ``timestep.extras`` value at their last step). ``tx``: an optax transformation instead
    of the config's optimiser."""
    tx = make_optimizer(cfg.optimizer_config()) if tx is None else tx
    S, G, T, C = cfg.num_starts, cfg.trajectories, cfg.max_steps, cfg.chunk
    E = S * G

    def init(key, params) -> MCPGState:
        return MCPGState(params, tx.init(params), key, jnp.zeros((), jnp.int32))

    def reset(key):
        starts = jnp.repeat(jax.random.split(key, S), G, axis=0)
        return jax.vmap(env.reset)(starts)

    def rollout(params, carry, key):
        """One step of every trajectory (skipped once all have ended)."""
        idle = dict(a=jnp.zeros((E,), jnp.int32), r=jnp.zeros((E,), jnp.float32),
                    live=jnp.zeros((E,), bool),
                    ex={k: jnp.zeros((E,), jnp.float32) for k in carry[1].extras})  # fmt: skip
        return jax.lax.cond(jnp.all(carry[2]), lambda: (carry, idle),
                            lambda: rollout_step(params, carry, key))  # fmt: skip

    def rollout_step(params, carry, key):
        env_state, ts, ended = carry
        x, mask = to_f32(obs_fn(ts.observation))
        a = gumbel_argmax(key, actor(params["actor"], x, mask)).astype(jnp.int32)
        env_state, nts = jax.vmap(env.step)(env_state, a)
        last = jnp.asarray(nts.last(), bool) & ~ended
        extras = {k: jnp.where(last, v, 0.0).astype(jnp.float32) for k, v in nts.extras.items()}
        out = dict(a=a, r=jnp.where(ended, 0.0, nts.reward).astype(jnp.float32), live=~ended,
                   ex=extras)  # fmt: skip
        return (env_state, nts, ended | last), out

    def chunk_grad(params, carry, tr, adv, total):
        """Replay one chunk's recorded actions; the gradient of its share of the loss."""

        def replay(c, a):
            env_state, ts = c
            x, mask = to_f32(obs_fn(ts.observation))
            env_state, nts = jax.vmap(env.step)(env_state, a)
            return (env_state, nts), (x, mask)

        carry, (x, mask) = jax.lax.scan(replay, carry, tr["a"])

        def loss(p):
            flat = lambda v: v.reshape((C * E,) + v.shape[2:])  # noqa: E731
            xs = jax.tree_util.tree_map(flat, x)
            logp_all = log_softmax(actor(p["actor"], xs, flat(mask)))
            w = flat(tr["live"]).astype(jnp.float32)
            pi = -jnp.sum(log_prob_of(logp_all, flat(tr["a"])) * flat(adv) * w) / total
            ent = jnp.sum(entropy_of(logp_all) * w) / total
            return pi - cfg.entropy_coef * ent, (pi, ent)

        (_, (pi, ent)), g = jax.value_and_grad(loss, has_aux=True)(params)
        return carry, g, pi, ent

    def update(state: MCPGState):
        key, k_reset, k_roll = jax.random.split(state.key, 3)
        env_state, ts = reset(k_reset)
        start = (env_state, ts, jnp.zeros((E,), bool))
        (_, _, ended), tr = jax.lax.scan(lambda c, k: rollout(state.params, c, k), start,
                                         jax.random.split(k_roll, T))  # fmt: skip
        adv = time_baseline_advantages(tr["r"], tr["live"], cfg.gamma, G)
        if cfg.normalize_advantages:
            adv = jnp.where(tr["live"], masked_standardize(adv, tr["live"]), 0.0)
        total = jnp.maximum(jnp.sum(tr["live"]), 1).astype(jnp.float32)
        chunks = jax.tree_util.tree_map(lambda v: v.reshape((T // C, C) + v.shape[1:]),
                                        {"a": tr["a"], "live": tr["live"], "adv": adv})  # fmt: skip
        zero = jax.tree_util.tree_map(jnp.zeros_like, state.params)

        def body(acc, ch):
            carry, grads, pi, ent = acc

            def run(_):
                c, g, p, e = chunk_grad(state.params, carry, ch, ch["adv"], total)
                return c, jax.tree_util.tree_map(jnp.add, grads, g), pi + p, ent + e

            return jax.lax.cond(jnp.any(ch["live"]), run, lambda _: acc, None), None

        acc0 = ((env_state, ts), zero, jnp.float32(0), jnp.float32(0))
        (_, grads, pi, ent), _ = jax.lax.scan(body, acc0, chunks)
        upd, opt_state = tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, upd)
        steps = jnp.sum(tr["live"]).astype(jnp.float32)
        metrics = dict(loss=pi - cfg.entropy_coef * ent, policy_loss=pi, entropy=ent,
                       reward=jnp.sum(tr["r"]) / jnp.maximum(steps, 1.0), steps=steps,
                       episodes=jnp.sum(ended).astype(jnp.float32))  # fmt: skip
        metrics |= {f"ep_{k}": jnp.sum(v) for k, v in tr["ex"].items()}
        return MCPGState(params, opt_state, key, state.update + 1), metrics

    return init, update
