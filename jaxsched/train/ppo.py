"""PPO-clip as RLScheduler trains it (spec ``rlscheduler.md`` §6), as pure, compiled JAX functions.

:func:`make_train` builds, PureJaxRL-style, an ``init(key) -> TrainState`` and an
``update(train_state) -> (train_state, metrics)`` function.  One ``update`` is one epoch of the
reference: roll out complete episodes, compute GAE advantages and reward-to-go targets, run up
to ``train_pi_iters`` full-batch policy steps with the KL early stop, then ``train_v_iters``
full-batch value steps.  The whole epoch is a single jit-compiled XLA computation, and
``jax.vmap(update)`` trains a batch of independent seeds at once.

Environment interface (jumanji-like; nothing here imports :mod:`jaxsched.envs`):

* ``env.reset(key) -> (env_state, timestep)`` and ``env.step(env_state, action) -> (env_state,
  timestep)`` for ONE environment (the trainer ``vmap``-s them); ``action`` is an int32 scalar.
* ``timestep.observation`` carries ``obs`` (float ``[N, F]``) and ``mask`` (bool ``[N]``, True =
  valid action; ``action_mask`` is accepted too).  Other fields (a critic observation, ...) are
  ignored unless ``obs_fn`` picks them.
* ``timestep.reward`` is the reward of the transition that produced the timestep;
  ``timestep.last()`` (or a ``done`` field, or else ``discount == 0``) marks the end of an
  episode.  ``done_fn`` overrides this.
* The environment resets itself when an episode ends (auto-reset): the timestep returned by the
  final step carries the final reward and ``last() == True`` while its observation may already
  belong to the next episode.  Episodes must terminate; a truncated episode is not bootstrapped.

Episode collection (how a fixed-size scan yields exactly ``num_envs * episodes_per_env``
complete episodes of variable length):

Every update resets ``num_envs`` environments with fresh keys and scans
``T = episodes_per_env * max_episode_steps`` steps of all of them in lockstep.  Step ``t`` of
environment ``e`` is *valid* when fewer than ``episodes_per_env`` episodes of that environment
had ended before it, i.e. it belongs to one of the environment's first ``episodes_per_env``
episodes.  Steps after that (the auto-reset has already started another episode) are computed
but carry zero weight in every loss, normalisation and statistic.  Because an episode can never
be longer than ``max_episode_steps``, every environment finishes its episodes inside the scan;
if one does not (``max_episode_steps`` set too small), the unfinished episode is dropped (its
steps become invalid) and counted in the metric ``incomplete_episodes`` — the batch never
contains a cut episode, as in the reference ("episodes are never cut").  The number of valid
steps, like the reference's steps per epoch, varies from update to update.

Reference details kept (§6): γ = 1 and λ = 0.97 by default; all rewards are per transition and
the value of the state after a terminal step is 0, which for RLScheduler (reward 0 except the
terminal −metric) and γ = 1 gives exactly the reference's δ, advantages and targets (the
reference stores each reward one step late and feeds the terminal reward as the bootstrap
value, so with γ < 1 its last δ and its targets carry one extra factor γ); value targets are the
discounted reward-to-go (not GAE returns); advantages are normalised over the whole epoch with
the population std; the clipped objective in Spinning Up's form; approx-KL =
mean(logp_old − logp_new) is measured in the same pass as each policy gradient (i.e. at the
parameters *before* that step), the step is applied, and the loop stops once the KL exceeds
``kl_stop_factor * target_kl`` (1.5 × 0.01); value steps always run ``train_v_iters`` times.
Adam is optax's (TF1's Adam puts ε slightly differently; the difference only matters while
``sqrt(v)`` is of the order of 1e-8).

Metrics of one update (dict of arrays; scalars unless noted): ``update`` (1-based index),
``episodes`` (collected episodes), ``incomplete_episodes`` (cut by the scan, dropped),
``steps`` (valid decisions), ``episode_return`` / ``episode_length`` / ``reward_per_step``
(means over collected episodes / steps), ``value_mean``, ``pi_loss_old`` / ``pi_loss``
(before / after the policy phase), ``pi_iters`` (policy steps taken), ``kl_stopped``,
``approx_kl_seen`` (last KL reading of the loop), ``approx_kl`` (KL of the final policy),
``entropy`` (of the acting policy), ``clip_frac``, ``v_loss_old`` / ``v_loss``, and per episode
slot ``[num_envs * episodes_per_env]`` the ``episode_info_*`` arrays of
:func:`episode_summaries`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import flax.struct
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxsched.errors import ConfigError

__all__ = [
    "PPOConfig",
    "TrainState",
    "Transition",
    "NetInput",
    "PPOTrainer",
    "make_train",
    "fit",
    "gae_advantages",
    "kl_early_stop_loop",
    "episode_summaries",
    "masked_mean",
    "valid_step_mask",
    "default_obs_fn",
    "default_done_fn",
    "MASKED_LOGIT",
]

MASKED_LOGIT = -1e30
"""Logit the trainer gives to invalid actions (finite in float32; probability exactly 0)."""

_F32 = jnp.float32


# ----------------------------------------------------------------------------------------------
# configuration
# ----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Hyper-parameters of :func:`make_train`; defaults are RLScheduler's (spec §6).

    Attributes:
        num_envs: environments rolled out in parallel; each contributes ``episodes_per_env``
            complete episodes per update (the reference's 100 trajectories per epoch).
        episodes_per_env: complete episodes collected from each environment per update.
        max_episode_steps: upper bound on the number of decisions in one episode (256 for
            256-job sequences); the rollout scans ``episodes_per_env * max_episode_steps`` steps.
        gamma: discount γ (the reference's command line passes 1.0).
        gae_lambda: GAE λ.
        clip_ratio: PPO clip ε.
        pi_lr, vf_lr: Adam learning rates of the policy and the value network.
        adam_b1, adam_b2, adam_eps: Adam constants (TF1 defaults).
        train_pi_iters: maximum full-batch policy steps per update.
        train_v_iters: full-batch value steps per update (always all of them).
        target_kl: KL target; the policy loop stops after the step at which the measured
            approx-KL exceeded ``kl_stop_factor * target_kl``.  None disables the early stop.
        kl_stop_factor: 1.5 in Spinning Up / RLScheduler.
        normalize_advantages: normalise advantages over the epoch's valid steps (reference: yes).
        adv_eps: added to the std in the normalisation (the reference adds nothing; this only
            keeps a zero std from producing NaN).
        value_target: ``"reward_to_go"`` (reference: discounted sum of the episode's remaining
            rewards) or ``"gae"`` (advantage + value estimate, PureJaxRL style).
        entropy_coef: weight of an entropy bonus in the policy loss (reference: 0).
        max_grad_norm: clip gradients to this global norm before Adam (reference: None).
        lr_anneal_epochs: decay both learning rates linearly to ``lr_end_fraction`` times their
            value over this many updates, counted in optimiser steps (``train_pi_iters`` resp.
            ``train_v_iters`` per update; a KL-stopped policy phase takes fewer, so its decay
            runs a little later); after that they stay at the end value. 0 (default, the
            reference): constant learning rates. The step count lives in the optimiser state, so
            ``--resume`` continues the schedule.
        lr_end_fraction: end value of the decay as a fraction of the initial learning rate.
    """

    num_envs: int = 100
    episodes_per_env: int = 1
    max_episode_steps: int = 256
    gamma: float = 1.0
    gae_lambda: float = 0.97
    clip_ratio: float = 0.2
    pi_lr: float = 3e-4
    vf_lr: float = 1e-3
    adam_b1: float = 0.9
    adam_b2: float = 0.999
    adam_eps: float = 1e-8
    train_pi_iters: int = 80
    train_v_iters: int = 80
    target_kl: float | None = 0.01
    kl_stop_factor: float = 1.5
    normalize_advantages: bool = True
    adv_eps: float = 1e-8
    value_target: str = "reward_to_go"
    entropy_coef: float = 0.0
    max_grad_norm: float | None = None
    lr_anneal_epochs: int = 0
    lr_end_fraction: float = 0.0

    def __post_init__(self):
        def need(cond, what):
            if not cond:
                raise ConfigError(f"PPOConfig: {what}")

        for name in ("num_envs", "episodes_per_env", "max_episode_steps"):
            v = getattr(self, name)
            need(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1,
                f"{name} must be an integer >= 1, got {v!r}",
            )
        for name in ("train_pi_iters", "train_v_iters"):
            v = getattr(self, name)
            need(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0,
                f"{name} must be an integer >= 0, got {v!r}",
            )
        need(0.0 <= self.gamma <= 1.0, f"gamma must be in [0, 1], got {self.gamma!r}")
        need(
            0.0 <= self.gae_lambda <= 1.0, f"gae_lambda must be in [0, 1], got {self.gae_lambda!r}"
        )
        need(self.clip_ratio >= 0.0, f"clip_ratio must be >= 0, got {self.clip_ratio!r}")
        need(self.pi_lr >= 0.0 and self.vf_lr >= 0.0, "learning rates must be >= 0")
        need(
            self.target_kl is None or self.target_kl >= 0.0,
            f"target_kl must be None or >= 0, got {self.target_kl!r}",
        )
        need(self.kl_stop_factor > 0.0, f"kl_stop_factor must be > 0, got {self.kl_stop_factor!r}")
        need(self.adv_eps >= 0.0, f"adv_eps must be >= 0, got {self.adv_eps!r}")
        need(
            self.value_target in ("reward_to_go", "gae"),
            f"value_target must be 'reward_to_go' or 'gae', got {self.value_target!r}",
        )
        need(
            self.max_grad_norm is None or self.max_grad_norm > 0.0,
            f"max_grad_norm must be None or > 0, got {self.max_grad_norm!r}",
        )
        v = self.lr_anneal_epochs
        need(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0,
            f"lr_anneal_epochs must be an integer >= 0, got {v!r}",
        )
        need(
            0.0 <= self.lr_end_fraction <= 1.0,
            f"lr_end_fraction must be in [0, 1], got {self.lr_end_fraction!r}",
        )

    @property
    def rollout_steps(self) -> int:
        """Length of the rollout scan: ``episodes_per_env * max_episode_steps``."""
        return self.episodes_per_env * self.max_episode_steps

    @property
    def num_episodes(self) -> int:
        """Complete episodes collected per update (when none is cut or filtered out)."""
        return self.num_envs * self.episodes_per_env

    def to_dict(self) -> dict:
        """All fields, except those added after the first checkpoints were written
        (:data:`_LATER_FIELDS`) while they keep their defaults — so the configuration saved in
        older checkpoints still equals the one of a run that does not use them (resume)."""
        d = dataclasses.asdict(self)
        for name, default in _LATER_FIELDS.items():
            if d[name] == default:
                del d[name]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PPOConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ConfigError(f"PPOConfig: unknown field(s) {', '.join(unknown)}")
        return cls(**dict(d))


#: fields added to :class:`PPOConfig` after checkpoints were first saved, with their defaults
#: (left out of ``to_dict`` while at the default)
_LATER_FIELDS = {"lr_anneal_epochs": 0, "lr_end_fraction": 0.0}


# ----------------------------------------------------------------------------------------------
# pytrees
# ----------------------------------------------------------------------------------------------


@flax.struct.dataclass
class TrainState:
    """Everything an update reads and writes.  ``rng`` is raw uint32 key data (threefry, shape
    ``[2]``) so that the state serialises and vmaps plainly; ``step`` counts updates done."""

    policy_params: Any
    value_params: Any
    policy_opt_state: Any
    value_opt_state: Any
    rng: jax.Array
    step: jax.Array


class NetInput(NamedTuple):
    """What the default ``obs_fn`` keeps of an observation: float32 ``obs`` [N, F] and bool
    ``mask`` [N]."""

    obs: jax.Array
    mask: jax.Array


@flax.struct.dataclass
class Transition:
    """Rollout data, time-major ``[T, num_envs, ...]``.

    ``x``: the stored network input (``obs_fn`` of the observation the action was chosen on);
    ``mask``: valid actions at that step; ``logp``/``value``/``entropy``: of the acting policy
    and value net at that step; ``reward``/``done``: of the transition;
    ``valid``: the step belongs to a collected (complete, accepted) episode;
    ``info``: dict of ``episode_info_fn`` values read at that step (empty without one)."""

    x: Any
    mask: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    entropy: jax.Array
    reward: jax.Array
    done: jax.Array
    valid: jax.Array
    info: Any = flax.struct.field(default_factory=dict)


# ----------------------------------------------------------------------------------------------
# pure building blocks
# ----------------------------------------------------------------------------------------------


def gae_advantages(rewards, values, dones, gamma: float, lam: float, last_value=None):
    """GAE(γ, λ) advantages and discounted reward-to-go, time-major, with episode boundaries.

    Args:
        rewards: float ``[T, ...]``; ``rewards[t]`` is the reward of the transition taken at t.
        values: float ``[T, ...]``; ``values[t] = V(s_t)``.
        dones: bool ``[T, ...]``; True when the transition at t ended its episode — the next
            entry then starts a new episode and nothing flows across the boundary (the value
            after a terminal step is 0).
        gamma, lam: discount and GAE λ.
        last_value: ``V(s_T)`` used to bootstrap a final step that is not terminal (default 0).

    Returns:
        ``(advantages, returns)``, float32 ``[T, ...]``:
        ``δ_t = r_t + γ(1−d_t)V(s_{t+1}) − V(s_t)``, ``A_t = δ_t + γλ(1−d_t)A_{t+1}``,
        ``G_t = r_t + γ(1−d_t)G_{t+1}`` (with ``G_T = last_value``).
    """
    rewards = jnp.asarray(rewards, _F32)
    values = jnp.asarray(values, _F32)
    notdone = 1.0 - jnp.asarray(dones).astype(_F32)
    last = jnp.zeros_like(values[0]) if last_value is None else jnp.asarray(last_value, _F32)
    next_values = jnp.concatenate([values[1:], last[None]], axis=0)

    def back(carry, inp):
        adv_next, ret_next = carry
        r, v, v_next, nd = inp
        delta = r + gamma * nd * v_next - v
        adv = delta + (gamma * lam) * nd * adv_next
        ret = r + gamma * nd * ret_next
        return (adv, ret), (adv, ret)

    init = (jnp.zeros_like(last), last)
    _, (adv, ret) = jax.lax.scan(back, init, (rewards, values, next_values, notdone), reverse=True)
    return adv.astype(_F32), ret.astype(_F32)


def valid_step_mask(dones, episodes_per_env: int):
    """Which steps of a time-major ``[T, E]`` rollout belong to the first ``episodes_per_env``
    *complete* episodes of each environment.

    Returns ``(valid bool [T, E], completed int32 [E])``; ``completed`` is the number of
    collected episodes per environment (``episodes_per_env`` unless the scan was too short)."""
    d = jnp.asarray(dones).astype(jnp.int32)
    ended_before = jnp.cumsum(d, axis=0) - d
    completed = jnp.minimum(jnp.sum(d, axis=0), episodes_per_env).astype(jnp.int32)
    return ended_before < completed[None], completed


def kl_early_stop_loop(step_fn: Callable, carry, max_iters: int, kl_limit: float | None):
    """Spinning Up's policy loop as a ``lax.while_loop``.

    ``step_fn(carry) -> (carry, kl)`` performs one optimisation step and returns the approx-KL
    it measured *before* the step (in the same pass as the gradient).  The loop runs at most
    ``max_iters`` steps and stops after the first step whose KL exceeded ``kl_limit`` (that step
    is kept, as in the reference).  ``kl_limit=None`` never stops early.

    Returns ``(carry, iterations int32, stopped bool, last_kl float32)``.
    """

    def cond(c):
        i, _, stop, _ = c
        return (i < max_iters) & jnp.logical_not(stop)

    def body(c):
        i, inner, _, _ = c
        inner, kl = step_fn(inner)
        kl = jnp.asarray(kl, _F32)
        stop = jnp.zeros((), bool) if kl_limit is None else kl > kl_limit
        return i + 1, inner, stop, kl

    init = (jnp.zeros((), jnp.int32), carry, jnp.zeros((), bool), jnp.zeros((), _F32))
    i, carry, stopped, kl = jax.lax.while_loop(cond, body, init)
    return carry, i, stopped, kl


def episode_summaries(tr: Transition, episodes_per_env: int) -> dict:
    """Per-episode values of a rollout, one entry per episode slot.

    Slot ``e * episodes_per_env + j`` is the ``j``-th episode of environment ``e``.  Returns
    ``episode_info_valid`` (bool: the slot holds a collected episode — complete and accepted by
    the filter), ``episode_info_return`` (float32, sum of its rewards),
    ``episode_info_length`` (int32, its steps) and ``episode_info_<key>`` for every key of
    ``tr.info`` (the value at the episode's first step).  Entries of invalid slots are
    meaningless."""
    done = tr.done.astype(jnp.int32)
    ended_before = jnp.cumsum(done, axis=0) - done  # [T, E]
    j = jnp.arange(episodes_per_env, dtype=ended_before.dtype)
    in_ep = ended_before[None] == j[:, None, None]  # [k, T, E]
    first = jnp.argmax(in_ep, axis=1)  # [k, E]
    started = jnp.any(in_ep, axis=1)
    take = lambda a: jnp.take_along_axis(
        a, first.reshape(first.shape + (1,) * (a.ndim - 2)), axis=0
    )  # [k, E, ...]
    valid = started & take(tr.valid)
    steps = in_ep & tr.valid[None]
    out = {
        "episode_info_valid": valid,
        "episode_info_return": jnp.sum(jnp.where(steps, tr.reward[None], 0.0), axis=1),
        "episode_info_length": jnp.sum(steps, axis=1).astype(jnp.int32),
    }
    for name, a in tr.info.items():
        out[f"episode_info_{name}"] = take(jnp.asarray(a))
    # [k, E, ...] -> [E * k, ...], environment-major
    return {k: jnp.reshape(jnp.swapaxes(v, 0, 1), (-1,) + v.shape[2:]) for k, v in out.items()}


def masked_mean(x, w):
    """Mean of ``x`` over the entries where ``w`` is True (0 when there are none)."""
    w = jnp.asarray(w)
    n = jnp.maximum(jnp.sum(w.astype(_F32)), 1.0)
    return jnp.sum(jnp.where(w, x, 0.0)) / n


def default_obs_fn(observation) -> NetInput:
    """``NetInput(obs float32, mask bool)`` from an observation with ``obs`` and ``mask`` (or
    ``action_mask``) fields."""
    mask = getattr(observation, "mask", None)
    if mask is None:
        mask = observation.action_mask
    return NetInput(jnp.asarray(observation.obs).astype(_F32), jnp.asarray(mask).astype(bool))


def default_done_fn(timestep):
    """End of episode: ``timestep.last()`` if it exists, else ``timestep.done``, else
    ``timestep.discount == 0``."""
    last = getattr(timestep, "last", None)
    if callable(last):
        return jnp.asarray(last()).astype(bool)
    done = getattr(timestep, "done", None)
    if done is not None:
        return jnp.asarray(done).astype(bool)
    return jnp.asarray(timestep.discount) == 0


def _default_policy_inputs(x):
    return (x.obs, x.mask)


def _default_value_inputs(x):
    return (x.obs,)


def _to_f32(tree):
    """Cast floating leaves to float32 (64-bit mode must not leak into params/observations)."""

    def cast(a):
        a = jnp.asarray(a)
        return a.astype(_F32) if jnp.issubdtype(a.dtype, jnp.floating) else a

    return jax.tree_util.tree_map(cast, tree)


def _key_data(key):
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(key)
    return key.astype(jnp.uint32)


def _sample_categorical(key, logits):
    """Gumbel-max sample over the last axis (int32).  Same distribution as
    ``jax.random.categorical``, but the noise is drawn as one flat vector: XLA:CPU compiles
    threefry on 2-D shapes with a short last axis many times slower."""
    u = jax.random.uniform(key, (logits.size,), _F32, minval=jnp.finfo(_F32).tiny, maxval=1.0)
    gumbel = -jnp.log(-jnp.log(jnp.reshape(u, logits.shape)))
    return jnp.argmax(logits + gumbel, axis=-1).astype(jnp.int32)


def _linear_decay(start: float, end: float, steps: int):
    """Learning rate ``start`` at optimiser step 0 going linearly to ``end`` at step ``steps``
    and exactly ``end`` from then on (``optax.linear_schedule`` can land a rounding error away
    from it under jit, where XLA turns ``count / steps`` into a product with ``1 / steps``)."""

    def schedule(count):
        ramp = start + (end - start) * (jnp.asarray(count, _F32) / steps)
        return jnp.where(count >= steps, jnp.asarray(end, _F32), ramp)

    return schedule


def _make_adam(lr, cfg: PPOConfig, steps_per_update: int):
    if cfg.lr_anneal_epochs:
        lr = _linear_decay(
            lr, lr * cfg.lr_end_fraction, cfg.lr_anneal_epochs * max(int(steps_per_update), 1)
        )
    adam = optax.adam(lr, b1=cfg.adam_b1, b2=cfg.adam_b2, eps=cfg.adam_eps)
    if cfg.max_grad_norm is None:
        return adam
    return optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), adam)


# ----------------------------------------------------------------------------------------------
# the trainer
# ----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PPOTrainer:
    """Functions returned by :func:`make_train` (all pure; ``init``/``update``/``train``/
    ``collect`` are jit-compiled and may be ``vmap``-ed over seeds).

    * ``init(key) -> TrainState`` — ``key`` a PRNG key (raw uint32 ``[2]`` or typed).
    * ``update(train_state) -> (train_state, metrics)`` — one epoch (see module docstring).
    * ``train(train_state, num_updates) -> (train_state, metrics)`` — ``num_updates`` updates
      in one ``lax.scan`` (static ``num_updates``; metrics stacked on a leading axis).
    * ``collect(policy_params, value_params, key, step) -> (Transition, completed)`` — the
      rollout part of an update (``step`` = update index, used by the trajectory filter).
    * ``policy_logits(policy_params, x) -> logits [N]`` — masked logits for one stored input
      ``x = obs_fn(observation)``; ``value(value_params, x) -> scalar``.
    * ``policy_loss_and_grad(policy_params, x, action, logp_old, adv, w) -> ((loss, (kl,
      entropy, clip_frac)), grad)`` — the clipped policy loss of a flat batch (leading axis =
      samples; ``adv`` already normalised, ``w`` bool weights) and its gradient, as one policy
      step of ``update`` computes them (``slot_buckets`` included).
    * ``value_loss_and_grad(value_params, x, target, w) -> (loss, grad)`` — the same for one
      value step.
    """

    config: PPOConfig
    init: Callable
    update: Callable
    train: Callable
    collect: Callable
    policy_logits: Callable
    value: Callable
    trajectory_filter: Any = None
    policy_loss_and_grad: Callable | None = None
    value_loss_and_grad: Callable | None = None

    def run_config(self) -> dict:
        """JSON-able description of everything that shapes training (for checkpoint headers)."""
        flt = self.trajectory_filter
        return {
            "ppo": self.config.to_dict(),
            "trajectory_filter": None if flt is None else dataclasses.asdict(flt),
        }


def make_train(
    config: PPOConfig,
    env,
    policy_net,
    value_net,
    *,
    obs_fn: Callable = default_obs_fn,
    done_fn: Callable = default_done_fn,
    policy_inputs: Callable = _default_policy_inputs,
    value_inputs: Callable = _default_value_inputs,
    trajectory_filter=None,
    filter_value_fn: Callable | None = None,
    episode_info_fn: Callable | None = None,
    slot_buckets: Sequence[int] | None = None,
    chunk_size: int = 512,
    value_pad_row: Sequence[float] | None = None,
) -> PPOTrainer:
    """Build the PPO functions for ``env`` and two Flax modules.

    Args:
        config: :class:`PPOConfig`.
        env: object with ``reset(key)`` and ``step(state, action)`` for one environment (module
            docstring).
        policy_net: module; ``policy_net.apply(params, *policy_inputs(x))`` gives logits ``[N]``
            for one observation (a net that handles extra leading axes works as well).  The
            trainer masks the logits again with ``x.mask`` (``MASKED_LOGIT``), so raw or
            already-masked logits are both fine.
        value_net: module; ``value_net.apply(params, *value_inputs(x))`` gives one number.
        obs_fn: ``observation -> x``, the per-step network input that is stored for the
            updates (default :class:`NetInput` of ``obs`` and ``mask``; include e.g. a critic
            observation here if the value net needs it).  Float leaves are cast to float32.
            ``x`` must have a ``mask`` field (bool ``[N]``).
        done_fn: ``timestep -> bool``, end of episode (default :func:`default_done_fn`).
        policy_inputs, value_inputs: ``x -> tuple`` of positional arguments for the nets'
            ``init``/``apply`` (defaults ``(obs, mask)`` and ``(obs,)``).
        trajectory_filter: optional :class:`jaxsched.train.filtering.TrajectoryFilter`; with
            ``filter_value_fn`` it drops the episodes it rejects from the update (they carry no
            weight and are not counted).  Rejection at reset time in the environment (spec §7,
            :func:`jaxsched.train.filtering.sample_accepted_starts`) is the alternative that
            keeps the number of episodes fixed.
        filter_value_fn: ``timestep -> float``, the filter value of the episode the timestep
            belongs to (e.g. the episode's SJF average bsld, provided by the environment); it
            must be constant within an episode.  It is read on the timestep an action is
            chosen on.
        episode_info_fn: ``timestep -> dict`` of per-episode values to report (e.g. the
            sequence's start index from the environment's extras); read on the timestep of the
            episode's first decision and returned in the metrics as ``episode_info_<key>``
            (see :func:`episode_summaries`).
        slot_buckets: computation only (the update's numbers change by float rounding at
            most; not part of :meth:`PPOTrainer.run_config`). For a *per-slot* policy — the
            logits of slot ``i`` depend only on slot ``i`` of the inputs, as in the kernel
            network — whose valid slots always form a prefix (``x.mask`` True on slots
            ``0 .. n−1``, as :class:`jaxsched.envs.RLSchedulerEnv` fills them): the policy
            steps of the update sort the samples by their number of valid slots, cut them into
            chunks of ``chunk_size`` and evaluate each chunk on its first ``K`` slots only,
            ``K`` the smallest bucket that holds the chunk's largest ``n`` (the full slot count
            is always a bucket). The kernel policy on Lublin-1 mostly sees short queues, so
            this skips most of the padding rows (several times faster). The policy inputs
            must be ``x.obs`` ``[N, F]`` and ``x.mask`` ``[N]`` (slot axis first). None: off.
        chunk_size: samples per chunk with ``slot_buckets``.
        value_pad_row: with ``slot_buckets``, run the value steps on slot prefixes as well:
            every slot past an observation's valid prefix holds exactly this row (the
            environment's padding row, :data:`jaxsched.envs.PAD_ROW`) and the value net
            accepts ``apply(params, obs_prefix, n_slots=N, pad_row=row)``, giving the value of
            ``obs_prefix`` followed by ``N − K`` copies of ``row``
            (:class:`jaxsched.nets.KernelValue` does: its per-slot kernel sees the padding row
            once). None: value steps on the full width.

    Returns:
        :class:`PPOTrainer`.
    """
    if not isinstance(config, PPOConfig):
        raise ConfigError(f"make_train: config must be a PPOConfig, got {type(config).__name__}")
    if (trajectory_filter is None) != (filter_value_fn is None):
        raise ConfigError("make_train: trajectory_filter and filter_value_fn go together")
    if slot_buckets is not None:
        if (
            not isinstance(chunk_size, (int, np.integer))
            or isinstance(chunk_size, bool)
            or chunk_size < 1
        ):
            raise ConfigError(f"make_train: chunk_size must be an integer >= 1, got {chunk_size!r}")
        bad = [
            b
            for b in slot_buckets
            if not isinstance(b, (int, np.integer)) or isinstance(b, bool) or b < 1
        ]
        if bad or not len(slot_buckets):
            raise ConfigError(
                f"make_train: slot_buckets must be integers >= 1, got {slot_buckets!r}"
            )
    cfg = config
    E = cfg.num_envs
    T = cfg.rollout_steps
    pi_tx = _make_adam(cfg.pi_lr, cfg, cfg.train_pi_iters)
    v_tx = _make_adam(cfg.vf_lr, cfg, cfg.train_v_iters)
    kl_limit = None if cfg.target_kl is None else cfg.kl_stop_factor * cfg.target_kl

    def get_x(observation):
        return _to_f32(obs_fn(observation))

    def policy_logits(params, x):
        logits = jnp.asarray(policy_net.apply(params, *policy_inputs(x))).astype(_F32)
        mask = jnp.asarray(x.mask).astype(bool)
        logits = jnp.reshape(logits, mask.shape)
        return jnp.where(mask, logits, jnp.asarray(MASKED_LOGIT, _F32))

    def value(params, x):
        v = jnp.asarray(value_net.apply(params, *value_inputs(x))).astype(_F32)
        return jnp.reshape(v, ())

    batched_logits = jax.vmap(policy_logits, in_axes=(None, 0))
    batched_value = jax.vmap(value, in_axes=(None, 0))

    # -- init ------------------------------------------------------------------------------
    def init(key) -> TrainState:
        key = jax.random.wrap_key_data(_key_data(key))
        k_env, k_pi, k_v, k_state = jax.random.split(key, 4)
        _, ts = env.reset(k_env)
        x = get_x(ts.observation)
        pparams = _to_f32(policy_net.init(k_pi, *policy_inputs(x)))
        vparams = _to_f32(value_net.init(k_v, *value_inputs(x)))
        return TrainState(
            policy_params=pparams,
            value_params=vparams,
            policy_opt_state=pi_tx.init(pparams),
            value_opt_state=v_tx.init(vparams),
            rng=jax.random.key_data(k_state),
            step=jnp.zeros((), jnp.int32),
        )

    # -- rollout ---------------------------------------------------------------------------
    def collect(pparams, vparams, key, step):
        # one split for all keys of the rollout (each threefry call site costs compile time)
        keys = jax.random.split(key, E + T)
        env_state, ts = jax.vmap(env.reset)(keys[:E])

        def body(carry, k):
            env_state, ts = carry
            x = get_x(ts.observation)
            logits = batched_logits(pparams, x)  # [E, N]
            v = batched_value(vparams, x)  # [E]
            action = _sample_categorical(k, logits)
            logp_all = jax.nn.log_softmax(logits, axis=-1)
            logp = jnp.take_along_axis(logp_all, action[:, None], axis=-1)[:, 0]
            ent = -jnp.sum(jnp.exp(logp_all) * logp_all, axis=-1)
            if filter_value_fn is not None:
                fval = jnp.asarray(jax.vmap(filter_value_fn)(ts), _F32)
                accept = trajectory_filter.accept(fval, step)
            else:
                accept = jnp.ones((E,), bool)
            info = {} if episode_info_fn is None else dict(jax.vmap(episode_info_fn)(ts))
            env_state, ts_next = jax.vmap(env.step)(env_state, action)
            out = dict(
                x=x,
                action=action,
                logp=logp,
                value=v,
                entropy=ent,
                reward=jnp.asarray(ts_next.reward).astype(_F32),
                done=jax.vmap(done_fn)(ts_next),
                accept=accept,
                info=info,
            )
            return (env_state, ts_next), out

        _, traj = jax.lax.scan(body, (env_state, ts), keys[E:])
        valid, completed = valid_step_mask(traj["done"], cfg.episodes_per_env)
        valid = valid & traj["accept"]
        tr = Transition(
            x=traj["x"],
            mask=traj["x"].mask,
            action=traj["action"],
            logp=traj["logp"],
            value=traj["value"],
            entropy=traj["entropy"],
            reward=traj["reward"],
            done=traj["done"],
            valid=valid,
            info=traj["info"],
        )
        return tr, completed

    # -- losses ----------------------------------------------------------------------------
    def pi_terms(logits, action, logp_old, adv, w, total):
        """The clipped policy loss's share of the samples ``w`` (sums divided by ``total``)
        and the (kl, entropy, clip) sums of those samples, from their masked logits."""
        logp_all = jax.nn.log_softmax(logits, axis=-1)
        logp = jnp.take_along_axis(logp_all, action[:, None], axis=-1)[:, 0]
        ratio = jnp.exp(logp - logp_old)
        clipped = jnp.where(adv > 0, 1.0 + cfg.clip_ratio, 1.0 - cfg.clip_ratio) * adv
        surrogate = jnp.minimum(ratio * adv, clipped)
        ent = -jnp.sum(jnp.exp(logp_all) * logp_all, axis=-1)
        clip = (jnp.abs(ratio - 1.0) > cfg.clip_ratio).astype(_F32)
        s = lambda v: jnp.sum(jnp.where(w, v, 0.0)).astype(_F32)  # noqa: E731
        loss = -(s(surrogate) + cfg.entropy_coef * s(ent)) / total
        return loss.astype(_F32), (s(logp_old - logp), s(ent), s(clip))

    def pi_loss_fn(params, x, action, logp_old, adv, w):
        total = jnp.maximum(jnp.sum(w.astype(_F32)), 1.0)
        loss, sums = pi_terms(batched_logits(params, x), action, logp_old, adv, w, total)
        return loss, tuple(v / total for v in sums)

    def v_loss_fn(params, x, target, w):
        v = batched_value(params, x)
        return masked_mean((target - v) ** 2, w)

    # -- the losses on slot prefixes (slot_buckets) ----------------------------------------
    def _sorted_chunks(x, action, logp_old, adv, target, w):
        """The samples sorted by their number of valid slots and cut into chunks:
        ``(bucket [n_chunks] int32, chunks, total weight, buckets)``; ``chunks`` holds ``(x,
        action, logp_old, adv, target, w)`` with leading axes ``[n_chunks, C]``; padding
        samples (copies of sample 0) carry no weight."""
        n_slots = x.mask.shape[-1]
        buckets = sorted({min(int(b), n_slots) for b in slot_buckets} | {n_slots})
        S = action.shape[0]
        C = min(int(chunk_size), S)
        n_chunks = -(-S // C)
        key = jnp.where(w, jnp.sum(x.mask, axis=-1, dtype=jnp.int32), 0)
        order = jnp.argsort(key)
        order = jnp.concatenate([order, jnp.zeros((n_chunks * C - S,), order.dtype)])
        real = jnp.arange(n_chunks * C) < S  # False: padding (a copy, no weight)
        chunk = lambda a: jnp.reshape(a, (n_chunks, C) + a.shape[1:])  # noqa: E731
        data = jax.tree_util.tree_map(lambda a: chunk(a[order]), (x, action, logp_old, adv, target))
        data = data + (chunk(w[order] & real),)
        kmax = jnp.max(chunk(jnp.where(real, key[order], 0)), axis=1)
        bucket = jnp.searchsorted(jnp.asarray(buckets, jnp.int32), kmax, side="left")
        total = jnp.maximum(jnp.sum(w.astype(_F32)), 1.0)
        return bucket.astype(jnp.int32), data, total, tuple(buckets)

    def _prefix(x, K):
        return x._replace(obs=x.obs[:, :K], mask=x.mask[:, :K])

    def _pi_chunk(params, K, total, x, action, logp_old, adv, target, w):
        """Policy-loss share and (kl, entropy, clip) sums of one chunk on its first K slots
        (weightless samples may point past the prefix: their action is clipped)."""
        logits = batched_logits(params, _prefix(x, K))  # [C, K]
        return pi_terms(logits, jnp.minimum(action, K - 1), logp_old, adv, w, total)

    def _v_chunk(params, K, total, x, action, logp_old, adv, target, w):
        """Value-loss share of one chunk, the value net run on the first K slots (the rest
        are ``value_pad_row``)."""
        n_slots = x.mask.shape[-1]
        pad = jnp.asarray(value_pad_row, _F32)
        v = jax.vmap(lambda o: value_net.apply(params, o, n_slots=n_slots, pad_row=pad))(
            x.obs[:, :K]
        )
        v = jnp.reshape(jnp.asarray(v, _F32), target.shape)
        err = (jnp.asarray(target, _F32) - v) ** 2
        return (jnp.sum(jnp.where(w, err, 0.0)) / total).astype(_F32), ()

    def _chunked(terms, with_grad: bool):
        """``f(params, bucket, chunks, total, buckets)``: the sum over the chunks of
        ``terms`` (``(loss share, aux sums)``), each chunk on its bucket's slot prefix, and the
        gradient when ``with_grad`` (accumulated chunk by chunk)."""

        def f(params, bucket, chunks, total, buckets):
            def branch(K):
                def g(params, c):
                    if with_grad:
                        (l, aux), grad = jax.value_and_grad(terms, has_aux=True)(
                            params, K, total, *c
                        )
                        return l, aux, grad
                    l, aux = terms(params, K, total, *c)
                    return l, aux, None

                return g

            branches = [branch(K) for K in buckets]
            aux0 = jax.eval_shape(
                lambda: terms(
                    params, buckets[0], total, *jax.tree_util.tree_map(lambda a: a[0], chunks)
                )[1]
            )
            aux0 = jax.tree_util.tree_map(lambda a: jnp.zeros(a.shape, a.dtype), aux0)
            g0 = jax.tree_util.tree_map(jnp.zeros_like, params) if with_grad else None

            def body(carry, inp):
                b, c = inp
                l, aux, g = jax.lax.switch(b, branches, params, c)
                loss, sums, gs = carry
                sums = jax.tree_util.tree_map(jnp.add, sums, aux)
                if with_grad:
                    gs = jax.tree_util.tree_map(jnp.add, gs, g)
                return (loss + l, sums, gs), None

            (loss, sums, g), _ = jax.lax.scan(
                body, (jnp.zeros((), _F32), aux0, g0), (bucket, chunks)
            )
            sums = tuple(v / total for v in sums)
            out = (loss, sums) if sums else loss
            return (out, g) if with_grad else out

        return f

    def _loss_fns(x, action, logp_old, adv, target, w):
        """``(pi_grad, pi_loss, v_grad, v_loss, pi_data, v_data)``: ``pi_grad(params,
        *pi_data)`` = ``((loss, (kl, entropy, clip_frac)), grad)`` of the policy loss over the
        flat batch, ``pi_loss`` the same without the gradient; ``v_grad(params, *v_data)`` =
        ``(loss, grad)`` of the value loss, ``v_loss`` the loss alone."""
        if slot_buckets is None:
            pi_data, v_data = (x, action, logp_old, adv, w), (x, target, w)
            return (
                jax.value_and_grad(pi_loss_fn, has_aux=True),
                pi_loss_fn,
                jax.value_and_grad(v_loss_fn),
                v_loss_fn,
                pi_data,
                v_data,
            )
        data = _sorted_chunks(x, action, logp_old, adv, target, w)
        if value_pad_row is None:
            v = (jax.value_and_grad(v_loss_fn), v_loss_fn, (x, target, w))
        else:
            v = (_chunked(_v_chunk, True), _chunked(_v_chunk, False), data)
        return (_chunked(_pi_chunk, True), _chunked(_pi_chunk, False), v[0], v[1], data, v[2])

    def policy_loss_and_grad(params, x, action, logp_old, adv, w):
        f = _loss_fns(x, action, logp_old, adv, jnp.zeros_like(adv), w)
        return f[0](params, *f[4])

    def value_loss_and_grad(params, x, target, w):
        f = _loss_fns(x, jnp.zeros(target.shape, jnp.int32), target, target, target, w)
        return f[2](params, *f[5])

    # -- one update ------------------------------------------------------------------------
    def update(ts: TrainState):
        key = jax.random.wrap_key_data(ts.rng)
        key, k_roll = jax.random.split(key)
        tr, completed = collect(ts.policy_params, ts.value_params, k_roll, ts.step)

        adv, rtg = gae_advantages(tr.reward, tr.value, tr.done, cfg.gamma, cfg.gae_lambda)
        target = rtg if cfg.value_target == "reward_to_go" else adv + tr.value
        w = tr.valid
        n_valid = jnp.sum(w.astype(_F32))
        if cfg.normalize_advantages:
            mu = masked_mean(adv, w)
            std = jnp.sqrt(masked_mean((adv - mu) ** 2, w))
            adv = (adv - mu) / (std + cfg.adv_eps)
        adv = jnp.where(w, adv, 0.0)

        flat = lambda a: jnp.reshape(a, (T * E,) + a.shape[2:])
        x = jax.tree_util.tree_map(flat, tr.x)
        action, logp_old, adv_f, target_f, w_f = map(flat, (tr.action, tr.logp, adv, target, w))

        grad_pi, pi_eval, grad_v, v_eval, pi_data, v_data = _loss_fns(
            x, action, logp_old, adv_f, target_f, w_f
        )

        # policy: full-batch steps; KL measured with the gradient (before the step), stop after
        # the step at which it exceeded the limit (Spinning Up / RLScheduler).
        def pi_step(c):
            params, opt = c
            (_, (kl, _, _)), g = grad_pi(params, *pi_data)
            upd, opt = pi_tx.update(g, opt, params)
            return (optax.apply_updates(params, upd), opt), kl

        (pparams, pi_opt), pi_iters, stopped, kl_seen = kl_early_stop_loop(
            pi_step, (ts.policy_params, ts.policy_opt_state), cfg.train_pi_iters, kl_limit
        )

        # at the old parameters the ratio is 1: the loss needs no forward pass
        ent_old = masked_mean(tr.entropy, w)
        pi_loss_old = -masked_mean(adv, w) - cfg.entropy_coef * ent_old
        pi_loss_new, (kl_new, _, clip_frac) = pi_eval(pparams, *pi_data)

        # value: always all iterations
        def v_body(c, _):
            params, opt = c
            loss, g = grad_v(params, *v_data)
            upd, opt = v_tx.update(g, opt, params)
            return (optax.apply_updates(params, upd), opt), loss

        (vparams, v_opt), v_losses = jax.lax.scan(
            v_body, (ts.value_params, ts.value_opt_state), None, length=cfg.train_v_iters
        )
        v_loss_old = v_losses[0] if cfg.train_v_iters > 0 else v_eval(ts.value_params, *v_data)
        v_loss_new = v_eval(vparams, *v_data)

        n_episodes = jnp.sum((tr.done & w).astype(jnp.int32))
        n_eps_f = jnp.maximum(n_episodes.astype(_F32), 1.0)
        ret_sum = jnp.sum(jnp.where(w, tr.reward, 0.0))
        metrics = {
            "update": ts.step + 1,
            "episodes": n_episodes,
            "incomplete_episodes": jnp.asarray(cfg.num_episodes - jnp.sum(completed), jnp.int32),
            "steps": n_valid.astype(jnp.int32),
            "episode_return": ret_sum / n_eps_f,
            "episode_length": n_valid / n_eps_f,
            "reward_per_step": ret_sum / jnp.maximum(n_valid, 1.0),
            "value_mean": masked_mean(tr.value, w),
            "pi_loss_old": pi_loss_old,
            "pi_loss": pi_loss_new,
            "pi_iters": pi_iters,
            "kl_stopped": stopped,
            "approx_kl_seen": kl_seen,
            "approx_kl": kl_new,
            "entropy": ent_old,
            "clip_frac": clip_frac,
            "v_loss_old": v_loss_old,
            "v_loss": v_loss_new,
        }
        metrics.update(episode_summaries(tr, cfg.episodes_per_env))
        metrics = {
            k: (v.astype(_F32) if jnp.issubdtype(v.dtype, jnp.floating) else v)
            for k, v in metrics.items()
        }
        new_ts = TrainState(
            policy_params=pparams,
            value_params=vparams,
            policy_opt_state=pi_opt,
            value_opt_state=v_opt,
            rng=jax.random.key_data(key),
            step=ts.step + 1,
        )
        return new_ts, metrics

    def train(ts: TrainState, num_updates: int):
        def body(s, _):
            return update(s)

        return jax.lax.scan(body, ts, None, length=num_updates)

    return PPOTrainer(
        config=cfg,
        init=jax.jit(init),
        update=jax.jit(update),
        train=jax.jit(train, static_argnums=1),
        collect=jax.jit(collect),
        policy_logits=policy_logits,
        value=value,
        trajectory_filter=trajectory_filter,
        policy_loss_and_grad=jax.jit(policy_loss_and_grad),
        value_loss_and_grad=jax.jit(value_loss_and_grad),
    )


# ----------------------------------------------------------------------------------------------
# host loop
# ----------------------------------------------------------------------------------------------


def fit(
    trainer: PPOTrainer,
    train_state: TrainState,
    num_updates: int,
    *,
    history: list | None = None,
    checkpoint_dir=None,
    checkpoint_every: int = 0,
    keep: int = 1,
    callback: Callable | None = None,
):
    """Run ``num_updates`` updates from Python, collecting metrics and checkpointing.

    Args:
        trainer, train_state: from :func:`make_train` (a batch of vmapped states is not
            supported here; use ``jax.vmap(trainer.update)`` directly for that).
        num_updates: updates to run now.
        history: metrics of earlier updates (e.g. from a loaded checkpoint); appended to.
        checkpoint_dir: if given, a checkpoint is written every ``checkpoint_every`` updates
            (0: only at the end) and at the end, keeping the last ``keep``.
        callback: ``callback(epoch, metrics)`` after each update (host values).

    Returns:
        ``(train_state, history)``; ``history[i]`` is the metrics dict (numpy scalars) of epoch
        ``i + 1``.  The epoch number of a checkpoint is ``len(history)``.
    """
    history = list(history or [])
    saved_at = None
    for _ in range(num_updates):
        train_state, metrics = trainer.update(train_state)
        metrics = jax.device_get(metrics)
        history.append(metrics)
        epoch = len(history)
        if callback is not None:
            callback(epoch, metrics)
        if checkpoint_dir is not None and checkpoint_every and epoch % checkpoint_every == 0:
            _save(trainer, checkpoint_dir, train_state, epoch, history, keep)
            saved_at = epoch
    if checkpoint_dir is not None and saved_at != len(history):
        _save(trainer, checkpoint_dir, train_state, len(history), history, keep)
    return train_state, history


def _save(trainer, directory, state, epoch, history, keep):
    from jaxsched.train.checkpoint import save_checkpoint

    save_checkpoint(
        directory,
        state,
        epoch=epoch,
        config=trainer.run_config(),
        metrics_history=history,
        keep=keep,
    )
