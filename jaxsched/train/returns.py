"""Return and advantage estimates over time-major rollouts with episode boundaries.

All functions take float rewards/values and bool ``dones`` of shape ``[T, ...]`` (time first,
any batch axes after it).  ``dones[t]`` is True when the transition taken at ``t`` ended its
episode: the next entry belongs to a new episode, nothing flows across the boundary, and the
value of the state after a terminal step is 0.  ``last_value`` (``[...]``, default 0) is
``V(s_T)``, used to bootstrap a final step that is not terminal.  Results are float32.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = [
    "gae_advantages",
    "reward_to_go",
    "nstep_targets",
    "q_learning_targets",
    "masked_discounted_cumsum",
    "masked_standardize",
]

_F32 = jnp.float32


def _last(values, last_value):
    return jnp.zeros_like(values[0]) if last_value is None else jnp.asarray(last_value, _F32)


def gae_advantages(rewards, values, dones, gamma: float, lam: float, last_value=None):
    """GAE(γ, λ) advantages and discounted reward-to-go.

    Args:
        rewards: float ``[T, ...]``; ``rewards[t]`` is the reward of the transition taken at t.
        values: float ``[T, ...]``; ``values[t] = V(s_t)``.
        dones: bool ``[T, ...]`` (module docstring).
        gamma, lam: discount and GAE λ.
        last_value: ``V(s_T)`` (default 0).

    Returns:
        ``(advantages, returns)``, float32 ``[T, ...]``:
        ``δ_t = r_t + γ(1−d_t)V(s_{t+1}) − V(s_t)``, ``A_t = δ_t + γλ(1−d_t)A_{t+1}``,
        ``G_t = r_t + γ(1−d_t)G_{t+1}`` (with ``G_T = last_value``).
    """
    rewards = jnp.asarray(rewards, _F32)
    values = jnp.asarray(values, _F32)
    notdone = 1.0 - jnp.asarray(dones).astype(_F32)
    last = _last(values, last_value)
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


def reward_to_go(rewards, dones, gamma: float, last_value=None):
    """Discounted reward-to-go ``G_t = r_t + γ(1−d_t)G_{t+1}``, ``G_T = last_value`` (default
    0): float32 ``[T, ...]`` (REINFORCE's return; :func:`gae_advantages` gives the same
    second result)."""
    rewards = jnp.asarray(rewards, _F32)
    notdone = 1.0 - jnp.asarray(dones).astype(_F32)
    last = _last(rewards, last_value)

    def back(ret_next, inp):
        r, nd = inp
        ret = r + gamma * nd * ret_next
        return ret, ret

    _, ret = jax.lax.scan(back, last, (rewards, notdone), reverse=True)
    return ret.astype(_F32)


def nstep_targets(rewards, values, dones, gamma: float, n: int, last_value=None):
    """n-step TD targets (A2C): ``G_t = Σ_{k<m} γ^k r_{t+k} + γ^m V(s_{t+m})``, float32
    ``[T, ...]``.

    ``m`` is ``n``, or less where the episode ends first (then there is no bootstrap term: the
    value after a terminal step is 0) or the rollout ends first (then ``V(s_T) = last_value``
    bootstraps, as A2C does with the truncated tail of its rollout).  ``n = 1`` is the one-step
    target ``r_t + γ(1−d_t)V(s_{t+1})``; ``n >= T`` with ``last_value`` 0 on complete episodes
    is the reward-to-go.

    Args:
        rewards, values, dones: ``[T, ...]`` (module docstring); ``values[t] = V(s_t)``.
        gamma: discount; n: static number of steps (>= 1).
        last_value: ``V(s_T)`` (default 0).
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"nstep_targets: n must be >= 1, got {n}")
    rewards = jnp.asarray(rewards, _F32)
    values = jnp.asarray(values, _F32)
    dones = jnp.asarray(dones).astype(bool)
    T = rewards.shape[0]
    next_values = jnp.concatenate([values[1:], _last(values, last_value)[None]], axis=0)
    t = jnp.arange(T).reshape((T,) + (1,) * (rewards.ndim - 1))

    def shifted(a, k, fill):
        if k == 0:
            return a
        pad = jnp.full((min(k, T),) + a.shape[1:], fill, a.dtype)
        return jnp.concatenate([a[k:], pad], axis=0)[:T]

    target = jnp.zeros_like(rewards)
    alive = jnp.ones(rewards.shape, bool)  # no episode end before step t + k
    for k in range(n):
        inside = (t + k) < T
        live = alive & inside
        target = target + jnp.where(live, (gamma**k) * shifted(rewards, k, 0.0), 0.0)
        d_k = shifted(dones, k, True)
        last_step = (t + k == T - 1) | (k == n - 1)
        boot = live & ~d_k & last_step
        target = target + jnp.where(boot, (gamma ** (k + 1)) * shifted(next_values, k, 0.0), 0.0)
        alive = live & ~d_k
    return target.astype(_F32)


def q_learning_targets(rewards, dones, next_q, gamma: float):
    """One-step Q-learning targets ``r_t + γ(1−d_t) max_a Q(s_{t+1}, a)``: rewards/dones
    ``[B]``, ``next_q`` float ``[B, A]`` (already masked to valid actions, e.g. with
    ``MASKED_LOGIT``; a target network's values for DQN) -> float32 ``[B]``."""
    rewards = jnp.asarray(rewards, _F32)
    notdone = 1.0 - jnp.asarray(dones).astype(_F32)
    return (rewards + gamma * notdone * jnp.max(jnp.asarray(next_q, _F32), axis=-1)).astype(_F32)


def masked_discounted_cumsum(x, valid, gamma: float):
    """``y_t = x_t + γ · y_{t'}`` with ``t'`` the next valid entry after ``t`` (0 past the
    last), over the valid entries of one batch (padding may sit anywhere and is skipped);
    invalid entries give 0.  x float ``[T]``, valid bool ``[T]`` -> float32 ``[T]``.  (DRAS's
    within-batch discounted returns, and its λ-weighted sums of TD errors.)"""
    x = jnp.asarray(x, _F32)
    valid = jnp.asarray(valid, bool)

    def back(carry, inp):
        xi, vi = inp
        y = xi + gamma * carry
        return jnp.where(vi, y, carry), jnp.where(vi, y, 0.0)

    _, y = jax.lax.scan(back, jnp.zeros((), _F32), (x, valid), reverse=True)
    return y.astype(_F32)


def masked_standardize(x, valid):
    """``(x − mean) / std`` over the valid entries (population std; std := 1 when it is 0, as
    DRAS's code does); invalid entries give 0.  x float ``[T]``, valid bool ``[T]`` -> float32."""
    x = jnp.asarray(x, _F32)
    w = jnp.asarray(valid, bool)
    n = jnp.maximum(jnp.sum(w.astype(_F32)), 1.0)
    mu = jnp.sum(jnp.where(w, x, 0.0)) / n
    std = jnp.sqrt(jnp.sum(jnp.where(w, (x - mu) ** 2, 0.0)) / n)
    std = jnp.where(std > 0, std, 1.0)
    return jnp.where(w, (x - mu) / std, 0.0).astype(_F32)
