"""PPO-clip as RLScheduler trains it (spec ``rlscheduler.md`` §6), composed from the
algorithm-generic pieces of :mod:`jaxsched.train`.

:func:`make_train` builds, PureJaxRL-style, an ``init(key) -> TrainState`` and an
``update(train_state) -> (train_state, metrics)`` function.  One ``update`` is one epoch of the
reference: roll out complete episodes (:func:`jaxsched.train.rollout.make_collect`; the
environment interface and the episode collection are described there), compute GAE advantages
and reward-to-go targets (:mod:`jaxsched.train.returns`), run up to ``train_pi_iters``
full-batch policy steps with the KL early stop (:mod:`jaxsched.train.kl_stop`), then
``train_v_iters`` full-batch value steps (losses: :mod:`jaxsched.train.losses`; optimisers:
:mod:`jaxsched.train.optim`; optional slot prefixes: :mod:`jaxsched.train.prefix`).  The whole
epoch is a single jit-compiled XLA computation, and ``jax.vmap(update)`` trains a batch of
independent seeds at once.

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
:func:`jaxsched.train.rollout.episode_summaries`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import flax.struct
import jax
import jax.numpy as jnp
import optax

from jaxsched.errors import ConfigError
from jaxsched.nets.categorical import (
    apply_mask,
    entropy_of,
    gumbel_argmax,
    log_prob_of,
    log_softmax,
)
from jaxsched.train import optim, parallel
from jaxsched.train.async_rollout import make_collect_async, supports_async
from jaxsched.train.kl_stop import kl_early_stop_loop
from jaxsched.train.losses import masked_mean, ppo_clip_terms, value_loss
from jaxsched.train.ppo_config import PPOConfig
from jaxsched.train.ppo_minibatch import minibatch_phases, update_metrics
from jaxsched.train.prefix import SlotPrefix, check_buckets, chunked, prefix_input, sorted_chunks
from jaxsched.train.returns import gae_advantages
from jaxsched.train.rollout import (
    NetInput,
    Transition,
    default_done_fn,
    default_obs_fn,
    make_collect,
    make_collect_seeds,
    to_f32,
)
from jaxsched.train.sweep import make_sweep_update

__all__ = [
    "PPOConfig",
    "TrainState",
    "PPOTrainer",
    "EpisodeFilter",
    "make_train",
    "NetInput",
    "Transition",
]


@dataclasses.dataclass(frozen=True)
class EpisodeFilter:
    """Trainer-side episode filtering, the system's hook into :func:`make_train`: the episodes
    it rejects are collected but carry no weight in the update and are not counted.

    Attributes:
        rule: object with ``accept(values float32 [E], update int32) -> bool [E]`` (e.g.
            :class:`jaxsched.systems.rlscheduler.filtering.TrajectoryFilter`); a dataclass, so
            that :meth:`PPOTrainer.run_config` can record it.
        value: ``timestep -> float``, the filter value of the episode the timestep belongs to
            (e.g. the episode's SJF average bsld, provided by the environment); it must be
            constant within an episode, and is read on the timestep an action is chosen on.
    """

    rule: Any
    value: Callable


_F32 = jnp.float32


# ----------------------------------------------------------------------------------------------
# configuration and state
# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# the trainer
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
      step of ``update`` computes them (``slot_prefix`` included).
    * ``value_loss_and_grad(value_params, x, target, w) -> (loss, grad)`` — the same for one
      value step.
    * ``sweep_update(train_states) -> (train_states, metrics)`` — not compiled: ``update`` of
      a stack of independent runs (leading axis ``[S]`` on every leaf, a sweep over seeds),
      each run's as ``update`` alone gives it, with the rollouts of all runs stepped as one
      flat batch of environments (:func:`jaxsched.train.rollout.make_collect_seeds`) and the
      rest vmapped over the runs (axis name ``seed_axis``); what
      :class:`jaxsched.train.sweep.SeedSweep` compiles.
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
    sweep_update: Callable | None = None

    def run_config(self) -> dict:
        """JSON-able description of everything that shapes training (for checkpoint headers)."""
        flt = self.trajectory_filter
        return {
            "ppo": self.config.to_dict(),
            "trajectory_filter": None if flt is None else dataclasses.asdict(flt),
        }


def _default_policy_inputs(x):
    return (x.obs, x.mask)


def _default_value_inputs(x):
    return (x.obs,)


def _key_data(key):
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(key)
    return key.astype(jnp.uint32)


@dataclasses.dataclass(frozen=True)
class _Nets:
    """The two networks of a PPO run, applied to one stored input ``x`` or a batch of them."""

    policy_net: Any
    value_net: Any
    policy_inputs: Callable
    value_inputs: Callable
    data_axis: str | None = None

    def policy_logits(self, params, x):
        """Masked logits float32 ``[N]`` for one stored input ``x``."""
        logits = jnp.asarray(self.policy_net.apply(params, *self.policy_inputs(x))).astype(_F32)
        mask = jnp.asarray(x.mask).astype(bool)
        return apply_mask(jnp.reshape(logits, mask.shape), mask)

    def value(self, params, x):
        """``V(x)``, float32 scalar."""
        v = jnp.asarray(self.value_net.apply(params, *self.value_inputs(x))).astype(_F32)
        return jnp.reshape(v, ())

    def batched_logits(self, params, x):
        return jax.vmap(self.policy_logits, in_axes=(None, 0))(params, x)

    def batched_value(self, params, x):
        return jax.vmap(self.value, in_axes=(None, 0))(params, x)

    def act(self, params, x, key):
        """The rollout's acting function (:func:`jaxsched.train.rollout.make_collect`): a
        sampled action of every environment with its log-probability, value and entropy."""
        pparams, vparams = params
        logits = self.batched_logits(pparams, x)  # [E, N]
        v = self.batched_value(vparams, x)  # [E]
        if self.data_axis is None:
            action = gumbel_argmax(key, logits)
        else:
            action = parallel.gumbel_argmax_rows(key, logits, self.data_axis)
        logp_all = log_softmax(logits)
        return action, {
            "logp": log_prob_of(logp_all, action),
            "value": v,
            "entropy": entropy_of(logp_all),
        }


def _loss_builder(cfg: PPOConfig, nets: _Nets, prefix: SlotPrefix | None, seed_axis=None, dp=None):
    """``loss_fns(x, action, logp_old, adv, target, w) -> (pi_grad, pi_loss, v_grad, v_loss,
    pi_data, v_data)`` over a flat batch (leading axis = samples): ``pi_grad(params,
    *pi_data)`` = ``((loss, (kl, entropy, clip_frac)), grad)`` of the clipped policy loss,
    ``pi_loss`` the same without the gradient; ``v_grad(params, *v_data)`` = ``(loss, grad)`` of
    the value loss, ``v_loss`` the loss alone.  With ``prefix`` the batch is evaluated on
    slot prefixes (:mod:`jaxsched.train.prefix`). ``dp``: the data axis (losses, their aux and
    gradients summed over it; the totals are the whole batch's)."""
    count = lambda w: jnp.maximum(parallel.psum(jnp.sum(w.astype(_F32)), dp), 1.0)  # noqa: E731

    def pi_terms(logits, action, logp_old, adv, w, total):
        return ppo_clip_terms(
            logits,
            action,
            logp_old,
            adv,
            w,
            total,
            clip_ratio=cfg.clip_ratio,
            entropy_coef=cfg.entropy_coef,
        )

    def pi_loss_fn(params, x, action, logp_old, adv, w):
        total = count(w)
        loss, sums = pi_terms(nets.batched_logits(params, x), action, logp_old, adv, w, total)
        return loss, tuple(v / total for v in sums)

    def v_loss_fn(params, x, target, w):
        if dp is None:
            return value_loss(nets.batched_value(params, x), target, w)
        return value_loss(nets.batched_value(params, x), target, w, count(w))

    def pi_chunk(params, K, total, x, action, logp_old, adv, target, w):
        # weightless samples may point past the prefix: their action is clipped
        logits = nets.batched_logits(params, prefix_input(x, K))  # [C, K]
        return pi_terms(logits, jnp.minimum(action, K - 1), logp_old, adv, w, total)

    def v_chunk(params, K, total, x, action, logp_old, adv, target, w):
        # the value net on the first K slots; the rest are value_pad_row
        n_slots = x.mask.shape[-1]
        pad = jnp.asarray(prefix.value_pad_row, _F32)
        v = jax.vmap(lambda o: nets.value_net.apply(params, o, n_slots=n_slots, pad_row=pad))(
            x.obs[:, :K]
        )
        v = jnp.reshape(jnp.asarray(v, _F32), target.shape)
        return value_loss(v, jnp.asarray(target, _F32), w, total), ()

    def loss_fns(*args):
        fns = _loss_fns(*args)
        if dp is None:
            return fns
        summed = lambda f: lambda *a: parallel.psum(f(*a), dp)  # noqa: E731
        return tuple(map(summed, fns[:4])) + fns[4:]

    def _loss_fns(x, action, logp_old, adv, target, w):
        if prefix is None:
            return (
                jax.value_and_grad(pi_loss_fn, has_aux=True),
                pi_loss_fn,
                jax.value_and_grad(v_loss_fn),
                v_loss_fn,
                (x, action, logp_old, adv, w),
                (x, target, w),
            )
        bucket, chunks, total, buckets = sorted_chunks(
            x,
            (action, logp_old, adv, target),
            w,
            prefix.buckets,
            prefix.chunk_size,
            seed_axis,
            prefix.max_valid,
        )
        if dp is not None:  # the whole batch's weight (NaN kept: see sorted_chunks)
            total = jnp.where(jnp.isnan(total), jnp.nan, count(w))
        data = (bucket, chunks, total, buckets)
        # the losses without gradient (the epoch's metrics, once each) on the full width: the
        # same values up to float rounding, and no bucket branches to trace and compile
        pi_eval = lambda params, *_: pi_loss_fn(params, x, action, logp_old, adv, w)  # noqa: E731
        v_eval = lambda params, *_: v_loss_fn(params, x, target, w)  # noqa: E731
        if prefix.value_pad_row is None:
            return (chunked(pi_chunk, True), pi_eval, jax.value_and_grad(v_loss_fn), v_eval,
                    data, (x, target, w))  # fmt: skip
        return (chunked(pi_chunk, True), pi_eval, chunked(v_chunk, True), v_eval, data, data)

    return loss_fns


def _make_update(cfg: PPOConfig, collect, loss_fns, pi_tx, v_tx, dp=None):
    """``update(train_state) -> (train_state, metrics)``, one epoch (module docstring), from the
    rollout ``collect(policy_params, value_params, key, step)``, the loss builder of
    :func:`_loss_builder` and the two optimisers; and ``learn(train_state, key, transitions,
    completed)``, the epoch after its rollout (``key``: what is left of the state's key).
    ``dp``: the data axis (:mod:`jaxsched.train.parallel`) or None."""
    learn = _make_learn(cfg, loss_fns, pi_tx, v_tx, dp)

    def update(ts: TrainState):
        key = jax.random.wrap_key_data(ts.rng)
        key, k_roll = jax.random.split(key)
        tr, completed = collect(ts.policy_params, ts.value_params, k_roll, ts.step)
        return learn(ts, key, tr, completed)

    return update, learn


def _make_learn(cfg: PPOConfig, loss_fns, pi_tx, v_tx, dp=None):
    """The epoch of :func:`_make_update` after its rollout."""
    kl_limit = None if cfg.target_kl is None else cfg.kl_stop_factor * cfg.target_kl

    def learn(ts: TrainState, key, tr, completed):
        # kept as one function: it is the epoch, read top to bottom (advantages, policy
        # phase, value phase, metrics); the pieces it calls live in their own modules
        adv, rtg = gae_advantages(tr.reward, tr.value, tr.done, cfg.gamma, cfg.gae_lambda)
        target = rtg if cfg.value_target == "reward_to_go" else adv + tr.value
        w, mmean = tr.valid, parallel.batch_mean(dp, masked_mean)
        if cfg.normalize_advantages:
            mu = mmean(adv, w)
            std = jnp.sqrt(mmean((adv - mu) ** 2, w))
            adv = (adv - mu) / (std + cfg.adv_eps)
        adv = jnp.where(w, adv, 0.0)

        flat = lambda a: jnp.reshape(a, (-1,) + a.shape[2:])  # noqa: E731
        x = jax.tree_util.tree_map(flat, tr.x)
        action, logp_old, adv_f, target_f, w_f = map(flat, (tr.action, tr.logp, adv, target, w))
        grad_pi, pi_eval, grad_v, v_eval, pi_data, v_data = loss_fns(
            x, action, logp_old, adv_f, target_f, w_f
        )
        if cfg.minibatch_size:
            key, k_mb = jax.random.split(key)
            pi_res, v_res = minibatch_phases(
                parallel.local_minibatch(cfg, dp),
                k_mb,
                ts,
                (grad_pi, grad_v, v_eval),
                pi_data,
                v_data,
                pi_tx,
                v_tx,
            )
            (pparams, pi_opt), pi_iters, stopped, kl_seen = pi_res
            (vparams, v_opt), v_loss_old = v_res
            return _finish_update(
                cfg, ts, tr, completed, w, adv, key, pi_eval, v_eval, pi_data, v_data,
                (pparams, pi_opt, pi_iters, stopped, kl_seen), (vparams, v_opt, v_loss_old), dp,
            )  # fmt: skip

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
        return _finish_update(
            cfg, ts, tr, completed, w, adv, key, pi_eval, v_eval, pi_data, v_data,
            (pparams, pi_opt, pi_iters, stopped, kl_seen), (vparams, v_opt, v_loss_old), dp,
        )  # fmt: skip

    return learn


def _finish_update(cfg, ts, tr, completed, w, adv, key, pi_eval, v_eval, pi_data, v_data, p, v,
                   dp=None):  # fmt: skip
    """The metrics and new :class:`TrainState` of an update, full-batch or minibatched (``p`` =
    policy params, opt state, iterations, stopped, kl_seen; ``v`` = value params, opt state,
    first loss). At the old parameters the ratio is 1: the old policy loss needs no forward
    pass."""
    pparams, pi_opt, pi_iters, stopped, kl_seen = p
    vparams, v_opt, v_loss_old = v
    mmean = parallel.batch_mean(dp, masked_mean)
    ent_old = mmean(tr.entropy, w)
    pi_loss_old = -mmean(adv, w) - cfg.entropy_coef * ent_old
    pi_loss_new, (kl_new, _, clip_frac) = pi_eval(pparams, *pi_data)
    pi = (pi_loss_old, pi_loss_new, pi_iters, stopped, kl_seen, kl_new, clip_frac, ent_old)
    v = (v_loss_old, v_eval(vparams, *v_data))
    metrics = update_metrics(cfg, ts, tr, completed, w, pi, v, dp)
    new_ts = TrainState(
        policy_params=pparams,
        value_params=vparams,
        policy_opt_state=pi_opt,
        value_opt_state=v_opt,
        rng=jax.random.key_data(key),
        step=ts.step + 1,
    )
    return new_ts, metrics


def _check_args(config, episode_filter, prefix):
    if not isinstance(config, PPOConfig):
        raise ConfigError(f"make_train: config must be a PPOConfig, got {type(config).__name__}")
    if episode_filter is not None and not isinstance(episode_filter, EpisodeFilter):
        raise ConfigError(
            f"make_train: episode_filter must be an EpisodeFilter, got {type(episode_filter).__name__}"
        )
    if prefix is not None:
        if not isinstance(prefix, SlotPrefix):
            raise ConfigError(
                f"make_train: slot_prefix must be a SlotPrefix, got {type(prefix).__name__}"
            )
        check_buckets(prefix.buckets, prefix.chunk_size, prefix.max_valid)
        if config.minibatch_size:
            raise ConfigError("make_train: minibatch_size and slot_prefix do not go together")


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
    episode_filter: EpisodeFilter | None = None,
    episode_info_fn: Callable | None = None,
    slot_prefix: SlotPrefix | None = None,
    seed_axis: str | None = None,
    data_axis: str | None = None,
    async_rows: bool | None = None,
    episode_end_fn: Callable | None = None,
) -> PPOTrainer:
    """Build the PPO functions for ``env`` and two Flax modules.

    (Most of this function's length is the argument documentation below; the epoch itself is
    :func:`_make_update`.)

    Args:
        config: :class:`PPOConfig`.
        env: object with ``reset(key)`` and ``step(state, action)`` for one environment (:mod:`jaxsched.train.rollout`).
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
        episode_filter: optional :class:`EpisodeFilter`: drops the episodes its rule rejects from
            the update.  Rejection at reset time in the environment (spec §7,
            ``jaxsched.systems.rlscheduler.filtering.sample_accepted_starts``) is the
            alternative that keeps the number of episodes fixed.
        episode_info_fn: ``timestep -> dict`` of per-episode values to report (e.g. the
            sequence's start index from the environment's extras); read on the timestep of the
            episode's first decision and returned in the metrics as ``episode_info_<key>``
            (see :func:`jaxsched.train.rollout.episode_summaries`).
        episode_end_fn: ``timestep -> dict`` of per-episode values read on the timestep that
            ends the episode (its last transition's, e.g. whether the environment's queue
            overflowed), returned as ``episode_info_end_<key>``; with it the rollout is the
            synchronous one.
        slot_prefix: :class:`jaxsched.train.prefix.SlotPrefix`, computation only (the
            update's numbers change by float rounding at most; not part of
            :meth:`PPOTrainer.run_config`). For a *per-slot* policy — the logits of slot ``i``
            depend only on slot ``i`` of the inputs, as in the kernel network — whose valid
            slots always form a prefix (``x.mask`` True on slots ``0 .. n−1``, as
            :class:`jaxsched.envs.RLSchedulerEnv` fills them): the policy steps of the update
            sort the samples by their number of valid slots, cut them into chunks of
            ``chunk_size`` and evaluate each chunk on its first ``K`` slots only, ``K`` the
            smallest bucket that holds the chunk's largest ``n``. The kernel policy on Lublin-1
            mostly sees short queues, so this skips most of the padding rows (several times
            faster). The policy inputs must be ``x.obs`` ``[N, F]`` and ``x.mask`` ``[N]``
            (slot axis first). Its ``value_pad_row`` runs the value steps on slot prefixes as
            well: every slot past an observation's valid prefix holds exactly this row (the
            environment's padding row, :data:`jaxsched.envs.PAD_ROW`) and the value net
            accepts ``apply(params, obs_prefix, n_slots=N, pad_row=row)``, giving the value of
            ``obs_prefix`` followed by ``N − K`` copies of ``row``
            (:class:`jaxsched.nets.KernelValue` does: its per-slot kernel sees the padding row
            once). None: off.
        seed_axis: computation only, with ``slot_prefix``: the trainer's ``update`` is to run
            under ``jax.vmap(..., axis_name=seed_axis)`` over independent runs (a sweep over
            seeds, :class:`jaxsched.train.sweep.SeedSweep`); each chunk then takes the widest
            bucket of all the runs, so the bucket switch stays a branch instead of running
            every bucket's branch. ``update`` may then only be called under that vmap.
        data_axis: data-parallel training (:mod:`jaxsched.train.parallel`): ``update`` and
            ``train`` are then to run under ``shard_map`` over a mesh axis of this name, each
            device rolling out ``num_envs / D`` of the environments, the batch statistics,
            losses and gradients summed over the axis (use
            :func:`jaxsched.train.parallel.data_parallel`). None: one device.
        async_rows: roll out with rows that step asynchronously
            (:func:`jaxsched.train.async_rollout.make_collect_async`: the same transitions
            under its per-row key schedule). None: on an accelerator, wherever the env
            supports it (a micro-stepped transition: backfilling) and ``data_axis`` is None
            (on the CPU the synchronous rollout is faster: benchmarks/RESULTS.md §4.5).

    Returns:
        :class:`PPOTrainer`.
    """
    _check_args(config, episode_filter, slot_prefix)
    cfg = config
    pi_tx = optim.adam_for_steps(cfg.pi_lr, cfg, cfg.train_pi_iters)
    v_tx = optim.adam_for_steps(cfg.vf_lr, cfg, cfg.train_v_iters)
    nets = _Nets(policy_net, value_net, policy_inputs, value_inputs, data_axis)
    loss_fns = _loss_builder(cfg, nets, slot_prefix, seed_axis, data_axis)

    def init(key) -> TrainState:
        key = jax.random.wrap_key_data(_key_data(key))
        k_env, k_pi, k_v, k_state = jax.random.split(key, 4)
        _, ts = env.reset(k_env)
        x = to_f32(obs_fn(ts.observation))
        pparams = to_f32(policy_net.init(k_pi, *policy_inputs(x)))
        vparams = to_f32(value_net.init(k_v, *value_inputs(x)))
        return TrainState(
            policy_params=pparams,
            value_params=vparams,
            policy_opt_state=pi_tx.init(pparams),
            value_opt_state=v_tx.init(vparams),
            rng=jax.random.key_data(k_state),
            step=jnp.zeros((), jnp.int32),
        )

    accept_fn = None
    if episode_filter is not None:

        def accept_fn(ts, step):
            fval = jnp.asarray(jax.vmap(episode_filter.value)(ts), _F32)
            return episode_filter.rule.accept(fval, step)

    rollout_kw = dict(
        num_envs=cfg.num_envs,
        episodes_per_env=cfg.episodes_per_env,
        rollout_steps=cfg.rollout_steps,
        obs_fn=obs_fn,
        done_fn=done_fn,
        accept_fn=accept_fn,
        episode_info_fn=episode_info_fn,
    )
    if episode_end_fn is not None:
        rollout_kw["episode_end_fn"] = episode_end_fn
        async_rows = False  # the asynchronous rows record decisions only
    if async_rows is None:  # asynchronous rows where a decision drains, on an accelerator
        async_rows = data_axis is None and supports_async(env) and jax.default_backend() != "cpu"
    if async_rows:
        collect_ = make_collect_async(env, nets.act, **rollout_kw)
    else:
        collect_ = make_collect(env, nets.act, data_axis=data_axis, **rollout_kw)

    def collect(pparams, vparams, key, step):
        return collect_((pparams, vparams), key, step)

    def policy_loss_and_grad(params, x, action, logp_old, adv, w):
        f = loss_fns(x, action, logp_old, adv, jnp.zeros_like(adv), w)
        return f[0](params, *f[4])

    def value_loss_and_grad(params, x, target, w):
        f = loss_fns(x, jnp.zeros(target.shape, jnp.int32), target, target, target, w)
        return f[2](params, *f[5])

    update, learn = _make_update(cfg, collect, loss_fns, pi_tx, v_tx, data_axis)
    collect_seeds = make_collect_seeds(env, nets.act, **rollout_kw)

    def train(ts: TrainState, num_updates: int):
        return jax.lax.scan(lambda s, _: update(s), ts, None, length=num_updates)

    return PPOTrainer(
        config=cfg,
        init=jax.jit(init),
        update=jax.jit(update),
        train=jax.jit(train, static_argnums=1),
        collect=jax.jit(collect),
        policy_logits=nets.policy_logits,
        value=nets.value,
        trajectory_filter=None if episode_filter is None else episode_filter.rule,
        policy_loss_and_grad=jax.jit(policy_loss_and_grad),
        value_loss_and_grad=jax.jit(value_loss_and_grad),
        sweep_update=make_sweep_update(collect_seeds, learn, seed_axis or "seed"),
    )
