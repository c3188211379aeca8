"""The hyper-parameters of PPO (:class:`PPOConfig`, used by :func:`jaxsched.train.ppo.make_train`),
their checks and their dictionary form (run directories and checkpoints store it)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from jaxsched.errors import ConfigError

__all__ = ["PPOConfig"]


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
        minibatch_size: 0 (default, the reference): full-batch steps. ``> 0``: minibatched
            PPO — ``train_pi_iters`` and ``train_v_iters`` then count *epochs*; each epoch
            shuffles the update's ``num_envs * rollout_steps`` samples (padding steps included;
            they carry no weight) and takes one step per minibatch of this many samples (the
            last one wraps around the shuffle); the KL early stop is checked after every
            policy minibatch step. Not combinable with ``slot_prefix``.
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
    minibatch_size: int = 0

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
        need(
            all(math.isfinite(x) and x >= 0.0 for x in (self.pi_lr, self.vf_lr)),
            f"learning rates must be finite and >= 0, got {self.pi_lr!r}, {self.vf_lr!r}",
        )
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
        v = self.minibatch_size
        need(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0,
            f"minibatch_size must be an integer >= 0, got {v!r}",
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
_LATER_FIELDS = {"lr_anneal_epochs": 0, "lr_end_fraction": 0.0, "minibatch_size": 0}
