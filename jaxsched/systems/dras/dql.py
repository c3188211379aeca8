"""DRAS-DQL value updates and ε-greedy selection (spec ``dras.md`` §7.3), pure functions.

A batch is the executed decisions of 10 scheduling instances at a fixed capacity ``C`` with a
validity mask (:class:`DQLBatch`; padding anywhere is skipped).  For each decision the network
input of the *chosen* candidate (``[2 + N, 2]``) and its reward are stored.

Code mode (what the CQSim DRAS branch runs): ``G_t = Σ_{k≥t} 0.6^{k−t} r_k`` within the batch,
``Ĝ_t = G_t / max_t G_t`` (a zero maximum divides by 1), ``δ_t = V(s_t) − Ĝ_t``,
``Δ_t = Σ_{i≥0} 0.6^i δ_{t+i}``; then, for each decision **in order**, one Adam step (lr 0.001)
with the gradient ``−Δ_t · ∇θ V(s_t)``.  ``V(s_t)`` and ``∇θ V(s_t)`` are those of decision time
(the code stores the gradient when it decides; inside one batch that is the batch's starting
parameters), while Adam's state and the parameters advance step by step.  With this sign a step
*raises* V where V already exceeds its target (the code's and the paper's printed sign).

``sign="descent"`` (the default of paper mode, and the "fixed" option): the gradient
``+Δ_t · ∇θ V(s_t)``, i.e. plain descent of ``Δ_t · V`` — V moves toward Ĝ.  This is a
deliberate deviation from both sources (spec Open ambiguity 4), documented as such.  On a
one-step test problem the code's sign saturates the sigmoid at 0 and its greedy picks end up
worse than random, while the descent sign learns (benchmarks/RESULTS.md §9,
``benchmarks/experiments/dras_bandit.py --variant dql``).  Paper mode
also uses ε decay 0.995; its max-bootstrapped Q-learning target is not reproduced (no discount,
replay or target network is given): paper mode keeps the code's Monte-Carlo targets.

ε-greedy (:func:`eps_greedy`, :func:`decay_epsilon`, :func:`episode_epsilon`): ε starts at 1.0,
is multiplied by ``eps_decay`` (0.99 code, 0.995 paper) after every level-1 *ready* start, floor
0.01; ``eps_reset="every_run"`` (code) resets it to the start value at every episode and every
test run, ``"never"`` carries it over; ``test_eps`` (None = as the reset rule says) fixes ε
during tests (e.g. 0 for greedy tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxsched.errors import ConfigError
from jaxsched.train.optim import adam
from jaxsched.train.returns import masked_discounted_cumsum

__all__ = [
    "DQLConfig",
    "DQLBatch",
    "DQLState",
    "dql_deltas",
    "make_dql",
    "eps_greedy",
    "decay_epsilon",
    "episode_epsilon",
]

_F32 = jnp.float32


@dataclass(frozen=True)
class DQLConfig:
    """DRAS-DQL settings; ``None`` fields take the mode's value (code / paper): ``sign``
    ``"code"`` / ``"descent"``, ``eps_decay`` 0.99 / 0.995.  Shared: γ = λ = 0.6, lr 0.001,
    ε start 1.0, floor 0.01, reset ``"every_run"``.  ``target_norm``: ``"max"`` (the code:
    Ĝ = G / max G, meaningful for the positive type-5 rewards) or ``"absmax"`` (G / max |G|,
    for rewards that can be negative such as Eq. 2, where dividing by a negative maximum would
    flip the targets' sign)."""

    mode: str = "code"
    gamma: float = 0.6
    lam: float = 0.6
    lr: float = 0.001
    sign: str | None = None
    eps_start: float = 1.0
    eps_decay: float | None = None
    eps_min: float = 0.01
    eps_reset: str = "every_run"
    test_eps: float | None = None
    target_norm: str = "max"

    def resolved(self) -> DQLConfig:
        if self.mode not in ("code", "paper"):
            raise ConfigError(f"unknown DRAS-DQL mode {self.mode!r}; choose code or paper")
        code = self.mode == "code"
        sign = self.sign or ("code" if code else "descent")
        if sign not in ("code", "descent"):
            raise ConfigError(f"unknown DQL update sign {sign!r}; choose code or descent")
        if self.target_norm not in ("max", "absmax"):
            raise ConfigError(f"unknown target_norm {self.target_norm!r}; choose max or absmax")
        if self.eps_reset not in ("every_run", "never"):
            raise ConfigError(f"unknown eps_reset {self.eps_reset!r}; choose every_run or never")
        decay = self.eps_decay if self.eps_decay is not None else (0.99 if code else 0.995)
        return DQLConfig(
            self.mode, self.gamma, self.lam, self.lr, sign, self.eps_start, decay,
            self.eps_min, self.eps_reset, self.test_eps, self.target_norm,
        )  # fmt: skip


class DQLBatch(NamedTuple):
    """One batch at capacity C: ``obs`` float ``[C, 2 + N, 2]`` (the chosen candidate's
    input), ``reward`` float32 ``[C]``, ``valid`` bool ``[C]``."""

    obs: jax.Array
    reward: jax.Array
    valid: jax.Array


class DQLState(NamedTuple):
    """``params`` and ``opt_state`` (Adam)."""

    params: object
    opt_state: object


def dql_deltas(values, reward, valid, gamma=0.6, lam=0.6, target_norm="max"):
    """``(Ĝ, Δ)`` float32 ``[C]`` of the code's update (module docstring) from the decision-time
    values ``V(s_t)`` float ``[C]``, rewards float ``[C]`` and valid bool ``[C]`` (0 on
    padding); ``target_norm`` as in :class:`DQLConfig`."""
    valid = jnp.asarray(valid, bool)
    g = masked_discounted_cumsum(reward, valid, gamma)
    gn = jnp.abs(g) if target_norm == "absmax" else g
    gmax = jnp.max(jnp.where(valid, gn, -jnp.inf))
    ghat = jnp.where(valid, g / jnp.where((gmax != 0) & jnp.isfinite(gmax), gmax, 1.0), 0.0)
    delta = jnp.where(valid, jnp.asarray(values, _F32) - ghat, 0.0)
    return ghat.astype(_F32), masked_discounted_cumsum(delta, valid, lam)


def make_dql(apply_fn, cfg: DQLConfig = DQLConfig()):
    """``(init, update)`` for a value network ``apply_fn(params, obs [..., 2 + N, 2]) -> [...]``
    (e.g. ``DRASValue(...).apply``): ``init(params) -> DQLState``; ``update(state, batch) ->
    (state, metrics)``, the per-decision Adam steps of one batch (pure, jit-able; vmap it over
    stacked states and batches for many environments).  ``metrics``: ``mean_abs_delta``,
    ``decisions`` (float32)."""
    cfg = cfg.resolved()
    tx = adam(cfg.lr)
    sgn = -1.0 if cfg.sign == "code" else 1.0
    grad_v = jax.grad(lambda p, s: apply_fn(p, s))

    def init(params) -> DQLState:
        return DQLState(params, tx.init(params))

    def update(state: DQLState, batch: DQLBatch):
        theta0 = state.params
        v = apply_fn(theta0, batch.obs)
        _, big_delta = dql_deltas(v, batch.reward, batch.valid, cfg.gamma, cfg.lam, cfg.target_norm)

        def adam_step(carry, s, d):
            params, opt = carry
            g = jax.tree_util.tree_map(lambda x: sgn * d * x, grad_v(theta0, s))
            upd, new_opt = tx.update(g, opt, params)
            return optax.apply_updates(params, upd), new_opt

        def step(carry, inp):
            s, d, ok = inp
            # cond, not a select: padding costs no pass over the parameters
            return jax.lax.cond(ok, adam_step, lambda c, s, d: c, carry, s, d), None

        (params, opt), _ = jax.lax.scan(
            step, (state.params, state.opt_state), (batch.obs, big_delta, batch.valid)
        )
        n = jnp.sum(batch.valid.astype(_F32))
        m = {"mean_abs_delta": jnp.sum(jnp.abs(big_delta)) / jnp.maximum(n, 1.0), "decisions": n}
        return DQLState(params, opt), m

    return init, update


def eps_greedy(key, values, valid, eps):
    """ε-greedy candidate: with probability ``eps`` a uniformly random valid candidate, else the
    valid argmax (lowest index on ties).  values float ``[K]``, valid bool ``[K]`` (at least one
    True), eps float scalar -> int32 scalar."""
    k1, k2 = jax.random.split(key)
    valid = jnp.asarray(valid, bool)
    greedy = jnp.argmax(jnp.where(valid, jnp.asarray(values, _F32), -jnp.inf))
    u = jax.random.uniform(k2, valid.shape)
    rand = jnp.argmax(jnp.where(valid, u, -1.0))
    return jnp.where(jax.random.uniform(k1) < eps, rand, greedy).astype(jnp.int32)


def decay_epsilon(eps, ready_start, cfg: DQLConfig):
    """ε after one level-1 decision: ``max(ε · decay, floor)`` if it started a ready job
    (bool ``ready_start``), unchanged otherwise (backfill picks never decay it)."""
    cfg = cfg.resolved()
    return jnp.where(ready_start, jnp.maximum(eps * cfg.eps_decay, cfg.eps_min), eps)


def episode_epsilon(eps, cfg: DQLConfig, training: bool = True) -> float:
    """ε at the start of an episode (training) or a test run: ``test_eps`` for tests when set,
    else ``eps_start`` under ``eps_reset="every_run"`` (the code), else the carried ``eps``."""
    cfg = cfg.resolved()
    if not training and cfg.test_eps is not None:
        return float(cfg.test_eps)
    return float(cfg.eps_start) if cfg.eps_reset == "every_run" else float(eps)
