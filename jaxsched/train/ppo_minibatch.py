"""PPO pieces outside the update's control flow: the minibatched policy and value phases
(``PPOConfig.minibatch_size`` > 0) and the metrics every update reports.

* :func:`minibatch_index`: per epoch a shuffle of the batch cut into minibatches;
* :func:`minibatch_phases`: the policy phase (KL early stop) and the value phase over them;
* :func:`update_metrics`: the dict of one update's metrics (float32 / int32 scalars).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from jaxsched.train.kl_stop import kl_early_stop_loop
from jaxsched.train.losses import masked_mean
from jaxsched.train.parallel import gather_rows, psum
from jaxsched.train.parallel import masked_mean as pmean
from jaxsched.train.rollout import episode_summaries

_F32 = jnp.float32


def minibatch_index(key, n: int, mb: int, epochs: int):
    """int32 ``[epochs * ceil(n / mb), mb]``: per epoch a shuffle of ``0 .. n−1`` cut into
    minibatches (the last one wrapping around)."""
    n_mb = -(-n // mb)
    perms = jax.vmap(lambda k: jax.random.permutation(k, n))(jax.random.split(key, epochs))
    perms = jnp.take(perms, jnp.arange(n_mb * mb) % n, axis=1)
    return perms.reshape(epochs * n_mb, mb).astype(jnp.int32)


def minibatch_phases(cfg, key, ts, fns, pi_data, v_data, pi_tx, v_tx):
    """The policy and value phases of a minibatched update (``PPOConfig.minibatch_size``):
    returns ``((pi_carry, iters, stopped, kl_seen), (v_carry, v_loss_first))``."""
    grad_pi, grad_v, v_eval = fns
    n = jax.tree_util.tree_leaves(pi_data)[0].shape[0]
    mb = cfg.minibatch_size
    k_pi, k_v = jax.random.split(key)
    kl_limit = None if cfg.target_kl is None else cfg.kl_stop_factor * cfg.target_kl
    pi_idx = minibatch_index(k_pi, n, mb, max(cfg.train_pi_iters, 1))
    v_idx = minibatch_index(k_v, n, mb, max(cfg.train_v_iters, 1))
    take = lambda data, idx: jax.tree_util.tree_map(lambda a: a[idx], data)  # noqa: E731

    def pi_step(c):
        params, opt, i = c
        (_, (kl, _, _)), g = grad_pi(params, *take(pi_data, pi_idx[i]))
        upd, opt = pi_tx.update(g, opt, params)
        return (optax.apply_updates(params, upd), opt, i + 1), kl

    n_pi = cfg.train_pi_iters * pi_idx.shape[0] // max(cfg.train_pi_iters, 1)
    carry = (ts.policy_params, ts.policy_opt_state, jnp.zeros((), jnp.int32))
    (pp, po, _), iters, stopped, kl_seen = kl_early_stop_loop(pi_step, carry, n_pi, kl_limit)

    def v_body(c, idx):
        params, opt = c
        loss, g = grad_v(params, *take(v_data, idx))
        upd, opt = v_tx.update(g, opt, params)
        return (optax.apply_updates(params, upd), opt), loss

    n_v = cfg.train_v_iters * v_idx.shape[0] // max(cfg.train_v_iters, 1)
    (vp, vo), losses = jax.lax.scan(v_body, (ts.value_params, ts.value_opt_state), v_idx[:n_v])
    v_first = losses[0] if n_v > 0 else v_eval(ts.value_params, *v_data)
    return ((pp, po), iters, stopped, kl_seen), ((vp, vo), v_first)


def update_metrics(cfg, ts, tr, completed, w, pi, v, dp=None) -> dict:
    """The metrics of one update (see :mod:`jaxsched.train.ppo`); ``pi`` = ``(pi_loss_old, pi_loss_new,
    pi_iters, stopped, kl_seen, kl_new, clip_frac, ent_old)``, ``v`` = ``(v_loss_old,
    v_loss_new)``; ``dp``: the data axis the batch is split over (sums over it, episode
    summaries gathered in device order) or None."""
    pi_loss_old, pi_loss_new, pi_iters, stopped, kl_seen, kl_new, clip_frac, ent_old = pi
    n_valid = psum(jnp.sum(w.astype(_F32)), dp)
    n_episodes = psum(jnp.sum((tr.done & w).astype(jnp.int32)), dp)
    n_eps_f = jnp.maximum(n_episodes.astype(_F32), 1.0)
    ret_sum = psum(jnp.sum(jnp.where(w, tr.reward, 0.0)), dp)
    metrics = {
        "update": ts.step + 1,
        "episodes": n_episodes,
        "incomplete_episodes": jnp.asarray(
            cfg.num_episodes - psum(jnp.sum(completed), dp), jnp.int32
        ),
        "steps": n_valid.astype(jnp.int32),
        "episode_return": ret_sum / n_eps_f,
        "episode_length": n_valid / n_eps_f,
        "reward_per_step": ret_sum / jnp.maximum(n_valid, 1.0),
        "value_mean": masked_mean(tr.value, w) if dp is None else pmean(tr.value, w, dp),
        "pi_loss_old": pi_loss_old,
        "pi_loss": pi_loss_new,
        "pi_iters": pi_iters,
        "kl_stopped": stopped,
        "approx_kl_seen": kl_seen,
        "approx_kl": kl_new,
        "entropy": ent_old,
        "clip_frac": clip_frac,
        "v_loss_old": v[0],
        "v_loss": v[1],
    }
    metrics.update(gather_rows(episode_summaries(tr, cfg.episodes_per_env), dp))
    return {
        k: (v.astype(_F32) if jnp.issubdtype(v.dtype, jnp.floating) else v)
        for k, v in metrics.items()
    }
