"""Split-window DBF run configuration: :class:`RunConfig` (``run.json``), the run's
environment and its PPO settings (spec §6 defaults, with the assumptions the training driver's
docstring lists)."""

from __future__ import annotations

import dataclasses

from jaxsched.envs.splitwindow import SplitWindowEnv
from jaxsched.errors import ConfigError
from jaxsched.train.ppo import PPOConfig

__all__ = ["SYSTEM_NAME", "VAL_METRICS", "RunConfig", "make_env", "ppo_config", "new_run_config"]

SYSTEM_NAME = "splitwindow"
#: the §8 metrics logged for validation (prefix ``val_``)
VAL_METRICS = ("avg_wait", "util", "avg_queue_len", "avg_bsld", "job_load", "mean_invisible")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What a run trains (``run.json``)."""

    trace: str
    head: int
    tail: int
    placements: int = 1000
    queue_cap: int = 4096
    sigma: str = "remaining"
    mask: bool = False
    hidden: tuple = (1024, 512, 256)
    activation: str = "relu"
    seed: int = 0
    val_episodes: int = 100
    val_seed: int = 1
    ppo: dict = dataclasses.field(default_factory=dict)
    weights: tuple = (1 / 3, 1 / 3, 1 / 3)
    max_util_loss: float | None = None

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return {"system": SYSTEM_NAME, **d, "hidden": list(self.hidden),
                "weights": list(self.weights)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        d = {k: v for k, v in d.items() if k != "system"}
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ConfigError(f"run.json: unknown field(s) {', '.join(unknown)}")
        tuples = {k: tuple(d[k]) for k in ("hidden", "weights") if k in d}
        return cls(**{**d, **tuples})


def make_env(jobs, rc: RunConfig) -> SplitWindowEnv:
    """The run's environment (observation float32)."""
    return SplitWindowEnv(
        jobs, rc.head, rc.tail, placements=rc.placements, queue_cap=rc.queue_cap,
        sigma=rc.sigma, mask=rc.mask, weights=rc.weights,
    )  # fmt: skip


def ppo_config(**over) -> PPOConfig:
    """Spec §6 PPO settings (module docstring), overridable."""
    base = dict(
        num_envs=16, episodes_per_env=1, max_episode_steps=4096, gamma=0.99, gae_lambda=0.95,
        clip_ratio=0.2, pi_lr=3e-4, vf_lr=3e-4, train_pi_iters=10, train_v_iters=10,
        target_kl=None, minibatch_size=128, max_grad_norm=0.5, value_target="gae",
    )  # fmt: skip
    return PPOConfig(**{**base, **over})


def new_run_config(trace, head: int, tail: int, settings: dict) -> RunConfig:
    """The :class:`RunConfig` of a fresh run (``settings``: its other fields, ``ppo`` a dict of
    :class:`PPOConfig` overrides of :func:`ppo_config`)."""
    settings = dict(settings)
    ppo = ppo_config(**settings.pop("ppo", {})).to_dict()
    return RunConfig(trace=str(trace), head=head, tail=tail, ppo=ppo, **settings)
