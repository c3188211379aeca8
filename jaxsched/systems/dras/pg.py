"""DRAS-PG parameter updates (spec ``dras.md`` §7.1–§7.2) as pure, algorithm-generic functions.

Nothing here knows the environment: a **batch** is the decisions (level-1 and level-2, in time
order) recorded during 10 scheduling instances, stored at a fixed capacity ``C`` with a
validity mask so that one update compiles once (:class:`PGBatch`).  Padding may sit anywhere;
it is skipped by every sum.  The collector must keep at most C decisions per batch: one
instance can make many (level-1 picks plus up to one level-2 pick per candidate), so size C
from the trace (or flush a full batch early and say so) — nothing here can detect an overflow.

Code mode (the CQSim DRAS branch, default): within-batch discounted returns
``G_k = Σ_{k'≥k} γ^{k'−k} r_{k'}`` with γ = 0.6, standardised over the batch (std := 1 if 0),
loss ``Σ_k −log(clip(π(a_k|s_k), 1e-8, 1 − 1e-8)) · Ĝ_k`` (a **sum**, with the *unmasked*
softmax over all W slots), one Adam step with learning rate 0.01.

Paper mode: undiscounted reward-to-go minus a running baseline, learning rate 0.001, log-prob of
the masked (truncated and renormalised) policy.  The baseline ("cumulative reward from step k
onwards averaged over all past parameter updates") is kept **per step index k** of the batch:
``b_k`` = mean of ``G_k`` over all earlier updates whose batch had a decision k (0 before the
first one); the current batch's returns join the average after it is used.

Many environments (``vmap``): :func:`make_pg` gives ``update`` (one environment: its own
parameters, optimiser and baseline — vmap it over stacked states and batches for the faithful
per-environment rule) and ``update_mean`` (one shared state; the per-environment gradients are
**averaged** over the environments, and the baseline absorbs every environment's returns — the
documented deviation of spec §13).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from jaxsched.errors import ConfigError
from jaxsched.nets.dras import masked_log_prob, unmasked_log_prob
from jaxsched.train.optim import adam
from jaxsched.train.returns import masked_discounted_cumsum, masked_standardize

__all__ = ["PGConfig", "PGBatch", "PGState", "pg_advantages", "pg_loss", "make_pg"]

_F32 = jnp.float32


@dataclass(frozen=True)
class PGConfig:
    """DRAS-PG settings; ``None`` fields take the mode's value (code / paper):
    ``gamma`` 0.6 / 1.0, ``lr`` 0.01 / 0.001, ``standardize`` True / False, ``baseline``
    False / True, ``masked_loss`` False / True."""

    mode: str = "code"
    gamma: float | None = None
    lr: float | None = None
    standardize: bool | None = None
    baseline: bool | None = None
    masked_loss: bool | None = None

    def resolved(self) -> PGConfig:
        if self.mode not in ("code", "paper"):
            raise ConfigError(f"unknown DRAS-PG mode {self.mode!r}; choose code or paper")
        code = self.mode == "code"
        pick = lambda v, c, p: (c if code else p) if v is None else v  # noqa: E731
        return PGConfig(
            self.mode,
            float(pick(self.gamma, 0.6, 1.0)),
            float(pick(self.lr, 0.01, 0.001)),
            bool(pick(self.standardize, True, False)),
            bool(pick(self.baseline, False, True)),
            bool(pick(self.masked_loss, False, True)),
        )


class PGBatch(NamedTuple):
    """One batch at capacity C: ``obs`` float ``[C, 2W + N, 2]``, ``action`` int32 ``[C]``
    (window slot), ``count`` int32 ``[C]`` (jobs in the window at that decision), ``reward``
    float32 ``[C]``, ``valid`` bool ``[C]``."""

    obs: jax.Array
    action: jax.Array
    count: jax.Array
    reward: jax.Array
    valid: jax.Array


class PGState(NamedTuple):
    """``params``, ``opt_state`` (Adam), and the paper baseline's per-step-index running sums
    ``base_sum`` float32 ``[C]`` and counts ``base_n`` float32 ``[C]``."""

    params: object
    opt_state: object
    base_sum: jax.Array
    base_n: jax.Array


def pg_advantages(reward, valid, base_sum, base_n, cfg: PGConfig):
    """Advantages and the updated baseline sums: reward float ``[C]``, valid bool ``[C]``,
    base_sum/base_n float ``[C]`` -> ``(adv [C], base_sum [C], base_n [C])`` (float32; adv is 0
    on padding).  ``cfg`` must be resolved."""
    g = masked_discounted_cumsum(reward, valid, cfg.gamma)
    if cfg.baseline:
        b = jnp.where(base_n > 0, base_sum / jnp.maximum(base_n, 1.0), 0.0)
        adv = jnp.where(valid, g - b, 0.0)
        base_sum = base_sum + jnp.where(valid, g, 0.0)
        base_n = base_n + valid.astype(_F32)
    else:
        adv = g
    if cfg.standardize:
        adv = masked_standardize(adv, valid)
    return adv.astype(_F32), base_sum, base_n


def pg_loss(params, apply_fn, batch: PGBatch, adv, masked: bool):
    """``Σ_valid −log π(a|s) · adv`` (float32 scalar): ``log π`` the clipped unmasked softmax
    (code) or the truncated policy's (``masked``, paper); ``adv`` held constant."""
    logits = apply_fn(params, batch.obs)
    if masked:
        logp = masked_log_prob(logits, batch.count, batch.action)
    else:
        logp = unmasked_log_prob(logits, batch.action)
    adv = jax.lax.stop_gradient(adv)
    return jnp.sum(jnp.where(batch.valid, -logp * adv, 0.0)).astype(_F32)


def make_pg(apply_fn, cfg: PGConfig = PGConfig(), capacity: int = 128):
    """``(init, update, update_mean)`` for a network ``apply_fn(params, obs [C, R, 2]) ->
    logits [C, W]`` (e.g. ``DRASPolicy(...).apply``):

    * ``init(params) -> PGState``;
    * ``update(state, batch) -> (state, metrics)``: one Adam step on one environment's batch
      (vmap over environments for the per-environment rule); a batch without a valid decision
      leaves the state unchanged (the code updates only when records exist);
    * ``update_mean(state, batches) -> (state, metrics)``: batches stacked ``[E, C, ...]``, one
      shared state, gradients averaged over the environments that have decisions.

    ``metrics``: ``loss`` (the sum above), ``mean_reward``, ``decisions`` (float32 scalars).
    All three are pure and jit-able; ``capacity`` C sizes the baseline arrays.
    """
    cfg = cfg.resolved()
    tx = adam(cfg.lr)

    def init(params) -> PGState:
        z = jnp.zeros((capacity,), _F32)
        return PGState(params, tx.init(params), z, z)

    def grads_of(state: PGState, batch: PGBatch):
        adv, bs, bn = pg_advantages(batch.reward, batch.valid, state.base_sum, state.base_n, cfg)
        loss, g = jax.value_and_grad(pg_loss)(state.params, apply_fn, batch, adv, cfg.masked_loss)
        n = jnp.sum(batch.valid.astype(_F32))
        mean_r = jnp.sum(jnp.where(batch.valid, batch.reward, 0.0)) / jnp.maximum(n, 1.0)
        return g, bs, bn, {"loss": loss, "mean_reward": mean_r, "decisions": n}

    def apply_grads(state: PGState, g, bs, bn, any_valid) -> PGState:
        upd, opt = tx.update(g, state.opt_state, state.params)
        new = PGState(optax.apply_updates(state.params, upd), opt, bs, bn)
        # a batch without decisions is no update at all (Adam's moments would still move)
        return jax.tree_util.tree_map(lambda a, b: jnp.where(any_valid, a, b), new, state)

    def update(state: PGState, batch: PGBatch):
        g, bs, bn, m = grads_of(state, batch)
        return apply_grads(state, g, bs, bn, m["decisions"] > 0), m

    def update_mean(state: PGState, batches: PGBatch):
        g, bs, bn, m = jax.vmap(grads_of, in_axes=(None, 0))(state, batches)
        w = (m["decisions"] > 0).astype(_F32)  # environments with decisions
        k = jnp.maximum(jnp.sum(w), 1.0)
        g = jax.tree_util.tree_map(lambda x: jnp.tensordot(w, x, axes=1) / k, g)
        bs = state.base_sum + jnp.sum(bs - state.base_sum, axis=0)
        bn = state.base_n + jnp.sum(bn - state.base_n, axis=0)
        mean = jax.tree_util.tree_map(lambda x: jnp.mean(x, axis=0), m)
        return apply_grads(state, g, bs, bn, jnp.sum(w) > 0), mean

    return init, update, update_mean
