"""Optimisers of the trainers (optax): Adam with an optional linear learning-rate decay that
ends exactly on its end value, and RMSProp (A2C's optimiser); both with optional global-norm
gradient clipping."""

from __future__ import annotations

import jax.numpy as jnp
import optax

__all__ = ["linear_decay", "adam", "rmsprop"]

_F32 = jnp.float32


def linear_decay(start: float, end: float, steps: int):
    """Learning rate ``start`` at optimiser step 0 going linearly to ``end`` at step ``steps``
    and exactly ``end`` from then on (``optax.linear_schedule`` can land a rounding error away
    from it under jit, where XLA turns ``count / steps`` into a product with ``1 / steps``).
    Returns ``schedule(count int) -> float32``."""

    def schedule(count):
        ramp = start + (end - start) * (jnp.asarray(count, _F32) / steps)
        return jnp.where(count >= steps, jnp.asarray(end, _F32), ramp)

    return schedule


def _schedule(lr: float, decay_steps: int, end_fraction: float):
    if decay_steps:
        return linear_decay(lr, lr * end_fraction, decay_steps)
    return lr


def _clipped(tx, max_grad_norm):
    if max_grad_norm is None:
        return tx
    return optax.chain(optax.clip_by_global_norm(max_grad_norm), tx)


def adam(
    lr: float,
    *,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    decay_steps: int = 0,
    end_fraction: float = 0.0,
    max_grad_norm: float | None = None,
) -> optax.GradientTransformation:
    """optax Adam; ``decay_steps`` > 0: the learning rate decays linearly to
    ``lr * end_fraction`` over that many optimiser steps (:func:`linear_decay`; the step count
    lives in the optimiser state, so a resumed run continues the schedule); ``max_grad_norm``:
    clip gradients to this global norm first."""
    tx = optax.adam(_schedule(lr, decay_steps, end_fraction), b1=b1, b2=b2, eps=eps)
    return _clipped(tx, max_grad_norm)


def rmsprop(
    lr: float,
    *,
    decay: float = 0.99,
    eps: float = 1e-5,
    centered: bool = False,
    decay_steps: int = 0,
    end_fraction: float = 0.0,
    max_grad_norm: float | None = None,
) -> optax.GradientTransformation:
    """optax RMSProp (A2C's optimiser; defaults of the A2C baselines: decay 0.99, ε 1e-5), with
    the same optional linear decay and gradient clipping as :func:`adam`."""
    tx = optax.rmsprop(
        _schedule(lr, decay_steps, end_fraction), decay=decay, eps=eps, centered=centered
    )
    return _clipped(tx, max_grad_norm)


def adam_for_steps(lr, cfg, steps_per_update: int):
    """Adam of one network from a run configuration with the fields ``adam_b1``, ``adam_b2``,
    ``adam_eps``, ``lr_anneal_epochs``, ``lr_end_fraction`` and ``max_grad_norm`` (e.g.
    :class:`jaxsched.train.ppo.PPOConfig`); ``steps_per_update`` optimiser steps per update (the
    decay is counted in optimiser steps)."""
    decay = cfg.lr_anneal_epochs * max(int(steps_per_update), 1) if cfg.lr_anneal_epochs else 0
    return adam(
        lr,
        b1=cfg.adam_b1,
        b2=cfg.adam_b2,
        eps=cfg.adam_eps,
        decay_steps=decay,
        end_fraction=cfg.lr_end_fraction,
        max_grad_norm=cfg.max_grad_norm,
    )
