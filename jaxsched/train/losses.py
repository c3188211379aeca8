"""Losses of the policy-gradient and value-based trainers, on flat batches with sample weights.

Conventions: a batch has a leading sample axis ``[B]``; ``w`` is bool ``[B]`` (True = the
sample counts; padding and invalid rollout steps are False); logits are the *masked* logits
float32 ``[B, N]`` (:func:`jaxsched.nets.categorical.apply_mask`).  Losses are float32 scalars
to minimise.  The PPO loss returns sums over the weighted samples divided by a given ``total``
so that it can be accumulated chunk by chunk (:mod:`jaxsched.train.prefix`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxsched.nets.categorical import entropy_of, log_prob_of, log_softmax
from jaxsched.train.returns import masked_standardize

__all__ = [
    "masked_mean",
    "masked_sum",
    "ppo_clip_terms",
    "value_loss",
    "policy_gradient_loss",
    "actor_critic_loss",
    "q_regression_loss",
]

_F32 = jnp.float32


def masked_mean(x, w):
    """Mean of ``x`` over the entries where ``w`` is True (0 when there are none)."""
    w = jnp.asarray(w)
    n = jnp.maximum(jnp.sum(w.astype(_F32)), 1.0)
    return jnp.sum(jnp.where(w, x, 0.0)) / n


def masked_sum(x, w):
    """Sum of ``x`` over the entries where ``w`` is True, float32 scalar."""
    return jnp.sum(jnp.where(w, x, 0.0)).astype(_F32)


def ppo_clip_terms(
    logits, action, logp_old, adv, w, total, *, clip_ratio: float, entropy_coef: float = 0.0
):
    """PPO's clipped surrogate (Spinning Up's form) on the samples ``w``.

    Args:
        logits: masked logits float32 ``[B, N]``; action int32 ``[B]``; logp_old float32 ``[B]``
            (of the acting policy); adv float32 ``[B]`` (already normalised); w bool ``[B]``;
        total: float32 scalar the sums are divided by (the weight of the whole batch).
        clip_ratio: ε; entropy_coef: weight of the entropy bonus.

    Returns:
        ``(loss, (kl_sum, entropy_sum, clip_sum))``: ``loss`` =
        ``−(Σ_w min(ρA, clip(ρ)A) + c·Σ_w H) / total`` (float32), and the sums over the
        weighted samples of the approx-KL ``logp_old − logp``, the entropy and the clip
        indicator ``|ρ − 1| > ε`` (divide by ``total`` for means).
    """
    logp_all = log_softmax(logits)
    logp = log_prob_of(logp_all, action)
    ratio = jnp.exp(logp - logp_old)
    clipped = jnp.where(adv > 0, 1.0 + clip_ratio, 1.0 - clip_ratio) * adv
    surrogate = jnp.minimum(ratio * adv, clipped)
    ent = entropy_of(logp_all)
    clip = (jnp.abs(ratio - 1.0) > clip_ratio).astype(_F32)
    s = lambda v: masked_sum(v, w)  # noqa: E731
    loss = -(s(surrogate) + entropy_coef * s(ent)) / total
    return loss.astype(_F32), (s(logp_old - logp), s(ent), s(clip))


def value_loss(v, target, w, total=None):
    """Squared error ``Σ_w (target − v)² / total`` (``total`` default: the number of weighted
    samples, i.e. the masked mean): v, target float ``[B]``, w bool ``[B]`` -> float32."""
    err = (target - v) ** 2
    if total is None:
        return masked_mean(err, w)
    return (jnp.sum(jnp.where(w, err, 0.0)) / total).astype(_F32)


def policy_gradient_loss(logits, action, returns, w, *, entropy_coef: float = 0.0):
    """REINFORCE: ``−mean_w(log π(a|s) · G) − c · mean_w H``.

    Args: logits masked float32 ``[B, N]``; action int32 ``[B]``; returns float ``[B]`` (the
    reward-to-go, or any baseline-corrected return; treated as a constant); w bool ``[B]``.
    Returns ``(loss, entropy_mean)``, float32 scalars.
    """
    logp_all = log_softmax(logits)
    logp = log_prob_of(logp_all, action)
    ent = masked_mean(entropy_of(logp_all), w)
    g = jax.lax.stop_gradient(jnp.asarray(returns, _F32))
    loss = -masked_mean(logp * g, w) - entropy_coef * ent
    return loss.astype(_F32), ent.astype(_F32)


def actor_critic_loss(
    logits,
    action,
    values,
    targets,
    w,
    *,
    value_coef: float = 0.5,
    entropy_coef: float = 0.0,
    normalize_advantages: bool = False,
):
    """A2C: policy term ``−mean_w(log π(a|s) · (G − V))`` with the advantage held constant
    (with ``normalize_advantages``: standardised over the batch's ``w`` samples, so the entropy
    bonus keeps its weight whatever the scale of the returns), ``value_coef · mean_w (G − V)²``
    and ``− entropy_coef · mean_w H``.

    Args: logits masked float32 ``[B, N]``; action int32 ``[B]``; values float ``[B]`` (the
    critic's ``V(s)``, differentiated through the value term); targets float ``[B]`` (e.g.
    :func:`jaxsched.train.returns.nstep_targets`, held constant); w bool ``[B]``.
    Returns ``(loss, (policy_loss, value_loss, entropy_mean))``, float32 scalars.
    """
    targets = jax.lax.stop_gradient(jnp.asarray(targets, _F32))
    adv = jax.lax.stop_gradient(targets - values)
    if normalize_advantages:
        adv = masked_standardize(adv, w)
    logp_all = log_softmax(logits)
    logp = log_prob_of(logp_all, action)
    pi = -masked_mean(logp * adv, w)
    v = masked_mean((targets - values) ** 2, w)
    ent = masked_mean(entropy_of(logp_all), w)
    loss = pi + value_coef * v - entropy_coef * ent
    return loss.astype(_F32), (pi.astype(_F32), v.astype(_F32), ent.astype(_F32))


def q_regression_loss(q, action, target, w, *, huber_delta: float | None = None):
    """One-step TD / Q regression: ``mean_w ℓ(target − Q(s, a))`` with ℓ the square (default) or
    the Huber loss of width ``huber_delta`` (DQN).

    Args: q float ``[B, A]`` (all actions' values); action int32 ``[B]``; target float ``[B]``
    (e.g. :func:`jaxsched.train.returns.q_learning_targets`, held constant); w bool ``[B]``.
    Returns float32 scalar.
    """
    q_sa = jnp.take_along_axis(q, jnp.asarray(action)[:, None], axis=-1)[:, 0]
    err = jax.lax.stop_gradient(jnp.asarray(target, _F32)) - q_sa
    if huber_delta is None:
        per = err**2
    else:
        a = jnp.abs(err)
        d = huber_delta
        per = jnp.where(a <= d, 0.5 * err**2, d * (a - 0.5 * d))
    return masked_mean(per, w).astype(_F32)
