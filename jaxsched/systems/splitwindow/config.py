"""Split-window DBF run configuration: :class:`RunConfig` (``run.json``), the run's
environment and its PPO settings (spec §6 defaults, with the assumptions the training driver's
docstring lists)."""

from __future__ import annotations

import dataclasses

from jaxsched.envs.splitwindow import SplitWindowEnv
from jaxsched.errors import ConfigError
from jaxsched.train.ppo import PPOConfig

__all__ = [
    "SYSTEM_NAME", "VAL_METRICS", "RunConfig", "make_env", "run_envs", "ppo_config",
    "new_run_config",
]  # fmt: skip

SYSTEM_NAME = "splitwindow"
#: the §8 metrics logged for validation (prefix ``val_``)
VAL_METRICS = ("avg_wait", "util", "avg_queue_len", "avg_bsld", "job_load", "mean_invisible")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What a run trains (``run.json``). ``job_slice``: episodes only from the first
    ``job_slice`` jobs (0: the whole trace); ``split`` / ``jobs_seen``: with ``--split train``
    the run's split and the job range it drew from
    (:func:`jaxsched.workload.splits.with_training_split`: ``job_slice`` = the training part's
    end, validation episodes from the validation part); the three are left out of
    ``run.json`` when unset."""

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
    job_slice: int = 0
    split: dict = dataclasses.field(default_factory=dict)
    jobs_seen: list = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict:
        d = {k: v for k, v in dataclasses.asdict(self).items()
             if k not in ("job_slice", "split", "jobs_seen") or v}  # fmt: skip
        return {"system": SYSTEM_NAME, **d, "hidden": list(self.hidden),
                "weights": list(self.weights)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        d = {k: v for k, v in d.items() if k not in ("system", "trace_sha256")}
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ConfigError(f"run.json: unknown field(s) {', '.join(unknown)}")
        from jaxsched.systems import check_run_values

        bounds = {"head": (0, 1 << 12), "tail": (0, 1 << 12), "placements": (1, 1 << 24),
                  "queue_cap": (1, 1 << 22), "val_episodes": (1, 1 << 20)}  # fmt: skip
        check_run_values(cls, d, bounds)
        tuples = {k: tuple(d[k]) for k in ("hidden", "weights") if k in d}
        return cls(**{**d, **tuples})


def make_env(jobs, rc: RunConfig) -> SplitWindowEnv:
    """The run's environment (observation float32)."""
    return SplitWindowEnv(
        jobs, rc.head, rc.tail, placements=rc.placements, queue_cap=rc.queue_cap,
        sigma=rc.sigma, mask=rc.mask, weights=rc.weights,
    )  # fmt: skip


def run_envs(jobs, rc: RunConfig) -> tuple[SplitWindowEnv, SplitWindowEnv]:
    """``(training env, validation env)`` of a run: the training episodes on the first
    ``rc.job_slice`` jobs (all with 0), the validation episodes on ``rc.split``'s validation
    jobs (without a split: the training env). Each env's run-time normaliser r_max is its own
    jobs' largest run time."""
    train_env = make_env(jobs.select(slice(0, rc.job_slice)) if rc.job_slice else jobs, rc)
    if not rc.split:
        return train_env, train_env
    first, last = rc.split["validation"]
    try:
        return train_env, make_env(jobs.select(slice(first, last)), rc)
    except ConfigError as e:
        raise ConfigError(f"--split: the validation jobs [{first}, {last}): {e}") from None


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
    :class:`PPOConfig` overrides of :func:`ppo_config`; ``split`` / ``split_fractions``: the
    ``--split`` flags, see :func:`jaxsched.workload.splits.with_training_split`)."""
    from jaxsched.workload import read_swf
    from jaxsched.workload.splits import with_training_split

    settings = dict(settings)
    split, fractions = settings.pop("split", None), settings.pop("split_fractions", None)
    validated = bool(settings.pop("validated", False))
    ppo = ppo_config(**settings.pop("ppo", {})).to_dict()
    rc = RunConfig(trace=str(trace), head=head, tail=tail, ppo=ppo, **settings)
    count = lambda: read_swf(rc.trace).jobs("rlscheduler").n_jobs  # noqa: E731
    return with_training_split(rc, count, split, fractions, validated=validated)
