"""Advantage actor-critic with n-step TD targets (A3C's synchronous variant; spec §7.2), built
from the generic pieces (:func:`~jaxsched.train.returns.nstep_targets`,
:func:`~jaxsched.train.losses.actor_critic_loss`, :mod:`~jaxsched.train.optim`).

``E`` environments run in lockstep and are never reset by the trainer (they auto-reset, so
episodes continue across updates). One update: ``n`` steps of every environment (actions
sampled from the actor), targets ``G_t = Σ_{k<m} γ^k r_{t+k} + γ^m V(s_{t+m})`` up to the end
of the rollout (the value of the state after it bootstraps; an episode end stops it), the loss
``−mean(log π(a|s)·(G − V)) + c_v·mean((G − V)²) − β·H``, one optimiser step. The whole update is
one compiled function. ``n = 1`` is the paper's Algorithm 1 (one-step actor-critic).

Environment interface (nothing here imports :mod:`jaxsched.envs`): ``env.reset(key)`` /
``env.step(state, action)`` for one environment, returning ``(state, timestep)`` with
``timestep.observation``, ``reward``, ``last()`` and ``extras`` (a dict of scalars); the
trainer ``vmap``-s them. ``obs_fn(observation) -> (x, mask)``: the network input (any pytree)
and the bool action mask ``[A]``. Actor and critic have separate parameters
(``params = {"actor": ..., "critic": ...}``): ``actor(params["actor"], x, mask) -> masked
logits [..., A]``, ``critic(params["critic"], x) -> [...]``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxsched.errors import ConfigError
from jaxsched.nets.categorical import gumbel_argmax
from jaxsched.train import optim
from jaxsched.train.losses import actor_critic_loss
from jaxsched.train.returns import nstep_targets
from jaxsched.train.rollout import to_f32

__all__ = ["A2CConfig", "A2CState", "make_a2c", "make_optimizer"]


@dataclasses.dataclass(frozen=True)
class A2CConfig:
    """Hyper-parameters (spec §7.2 defaults; DeepRM's RMSProp: lr 1e-3, ρ 0.9, ε 1e-9).

    Attributes: num_envs ``E``; n_steps ``n`` (rollout length per update and TD horizon);
    gamma; lr; optimizer (``"rmsprop"`` or ``"adam"``); rms_decay, rms_eps; entropy_coef β;
    value_coef; max_grad_norm (None: no clipping), applied to the actor's and the critic's
    gradients separately (the critic's, on returns of large magnitude, would otherwise take
    the whole global-norm budget and freeze the actor); normalize_advantages: standardise
    each update's advantages (not in the spec; off by default); entropy_anneal_updates: the
    entropy bonus falls linearly from β to 0 over this many updates and stays 0 (0: constant
    β, the default)."""

    num_envs: int = 16
    n_steps: int = 5
    gamma: float = 0.99
    lr: float = 1e-3
    optimizer: str = "rmsprop"
    rms_decay: float = 0.9
    rms_eps: float = 1e-9
    entropy_coef: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float | None = 10.0
    normalize_advantages: bool = False
    entropy_anneal_updates: int = 0

    def __post_init__(self):
        if self.num_envs < 1 or self.n_steps < 1:
            raise ConfigError("num_envs and n_steps must be >= 1")
        if self.entropy_anneal_updates < 0:
            raise ConfigError("entropy_anneal_updates must be >= 0 (0: constant entropy bonus)")
        if self.optimizer not in ("rmsprop", "adam"):
            raise ConfigError(f"optimizer must be 'rmsprop' or 'adam', got {self.optimizer!r}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ConfigError(f"gamma must be in [0, 1], got {self.gamma}")
        for name in ("lr", "entropy_coef", "value_coef"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0.0):
                raise ConfigError(f"{name} must be finite and >= 0, got {v!r}")


@struct.dataclass
class A2CState:
    """Trainer state: ``params`` ({"actor", "critic"}), ``opt_state``, the ``E`` environments'
    ``env_state`` and current ``timestep``, ``key``, ``update`` (int32 updates done)."""

    params: Any
    opt_state: Any
    env_state: Any
    timestep: Any
    key: jax.Array
    update: jax.Array


def make_optimizer(cfg: A2CConfig) -> optax.GradientTransformation:
    """RMSProp or Adam of :mod:`jaxsched.train.optim` with the config's settings, after
    clipping each top-level part of the parameters (actor, critic) to ``max_grad_norm``."""
    if cfg.optimizer == "adam":
        tx = optim.adam(cfg.lr)
    else:
        tx = optim.rmsprop(cfg.lr, decay=cfg.rms_decay, eps=cfg.rms_eps)
    if cfg.max_grad_norm is None:
        return tx
    clip = optax.clip_by_global_norm(cfg.max_grad_norm)

    def update(grads, state, params=None):
        grads = {k: clip.update(g, clip.init(g))[0] for k, g in grads.items()}
        return tx.update(grads, state, params)

    return optax.GradientTransformation(tx.init, update)


def make_a2c(env, actor: Callable, critic: Callable, cfg: A2CConfig, obs_fn: Callable):
    """``(init, update)``: ``init(key, params) -> A2CState`` (resets the ``E`` environments),
    ``update(state) -> (state, metrics)`` (jit it; metrics are float32 scalars: ``loss``,
    ``policy_loss``, ``value_loss``, ``entropy``, ``entropy_coef`` (β used), ``reward`` (mean
    per step), ``steps`` (environment steps taken: E·n), ``episodes``
    (episodes ended in the update) and ``ep_<k>`` for each key of ``timestep.extras``: its sum
    over the episodes that ended)."""
    tx = make_optimizer(cfg)
    E, n = cfg.num_envs, cfg.n_steps

    def init(key, params) -> A2CState:
        k_env, k = jax.random.split(key)
        env_state, ts = jax.vmap(env.reset)(jax.random.split(k_env, E))
        return A2CState(params, tx.init(params), env_state, ts, k, jnp.zeros((), jnp.int32))

    def act_step(params, carry, key):
        env_state, ts = carry
        x, mask = to_f32(obs_fn(ts.observation))
        logits = actor(params["actor"], x, mask)
        a = gumbel_argmax(key, logits).astype(jnp.int32)
        env_state, nts = jax.vmap(env.step)(env_state, a)
        done = jnp.asarray(nts.last(), bool)
        extras = {k: jnp.where(done, v, 0.0).astype(jnp.float32) for k, v in nts.extras.items()}
        out = dict(x=x, mask=mask, a=a, r=nts.reward.astype(jnp.float32), done=done, ex=extras)
        return (env_state, nts), out

    def entropy_coef(update):
        """β at this update (float32 scalar): constant, or annealed linearly to 0."""
        if cfg.entropy_anneal_updates == 0:
            return jnp.float32(cfg.entropy_coef)
        left = 1.0 - update.astype(jnp.float32) / cfg.entropy_anneal_updates
        return jnp.float32(cfg.entropy_coef) * jnp.clip(left, 0.0, 1.0)

    def loss_fn(params, tr, targets, beta):
        flat = lambda v: v.reshape((E * n,) + v.shape[2:])  # noqa: E731
        x = jax.tree_util.tree_map(flat, tr["x"])
        logits = actor(params["actor"], x, flat(tr["mask"]))
        values = critic(params["critic"], x)
        w = jnp.ones((E * n,), bool)
        return actor_critic_loss(logits, flat(tr["a"]), values, flat(targets), w,
                                 value_coef=cfg.value_coef, entropy_coef=beta,
                                 normalize_advantages=cfg.normalize_advantages)  # fmt: skip

    def update(state: A2CState):
        key, k_roll = jax.random.split(state.key)
        carry, tr = jax.lax.scan(
            lambda c, k: act_step(state.params, c, k),
            (state.env_state, state.timestep),
            jax.random.split(k_roll, n),
        )
        values = critic(state.params["critic"], tr["x"])  # [n, E]
        x_last, _ = to_f32(obs_fn(carry[1].observation))
        last_value = critic(state.params["critic"], x_last)
        targets = nstep_targets(tr["r"], values, tr["done"], cfg.gamma, n, last_value)
        beta = entropy_coef(state.update)
        (loss, (pi, v, ent)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            state.params, tr, targets, beta
        )
        upd, opt_state = tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, upd)
        metrics = dict(loss=loss, policy_loss=pi, value_loss=v, entropy=ent, entropy_coef=beta,
                       reward=jnp.mean(tr["r"]), steps=jnp.float32(E * n),
                       episodes=jnp.sum(tr["done"]).astype(jnp.float32))  # fmt: skip
        metrics |= {f"ep_{k}": jnp.sum(v) for k, v in tr["ex"].items()}
        new = A2CState(params, opt_state, carry[0], carry[1], key, state.update + 1)
        return new, metrics

    return init, update
