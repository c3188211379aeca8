"""SchedInspector's run configuration (``run.json``), its environments and PPO settings
(spec ``schedinspector.md`` §6)."""

from __future__ import annotations

import dataclasses

from jaxsched.errors import ConfigError
from jaxsched.train.ppo import PPOConfig

__all__ = ["SYSTEM_NAME", "RunConfig", "load_jobs", "make_env", "ppo_config"]

SYSTEM_NAME = "schedinspector"


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What a run trains (spec §6 defaults): base scheduler, metric, backfilling, mode, the
    training sequences (``length`` jobs from the first ``job_slice`` jobs), PPO (``num_envs``
    trajectories per epoch, ``max_steps`` decisions per trajectory: longer ones are dropped,
    or with ``cap_reward`` ended there with that reward and trained on; ``util_weight`` adds
    the relative utilisation change to the training reward),
    validation (``validate`` held-out sequences of ``eval_length`` jobs every
    ``validate_every`` epochs, starts drawn with ``validate_seed``; with ``max_util_loss`` an
    epoch whose validation utilisation is more than that many percentage points below the
    base's is never kept as the best checkpoint). ``split`` / ``jobs_seen``: with ``--split
    train`` the run's split and the job range it drew from
    (:func:`jaxsched.workload.splits.with_training_split`; validation then draws from the
    validation range); empty otherwise and left out of ``run.json``."""

    trace: str
    base: str = "sjf"
    metric: str = "bsld"
    backfill: str = "none"
    mode: str = "compat"
    length: int = 128
    job_slice: int = 10000
    seed: int = 0
    num_envs: int = 100
    max_steps: int = 1280
    cap_reward: float | None = None
    util_weight: float = 0.0
    gamma: float = 1.0
    gae_lambda: float = 0.97
    clip_ratio: float = 0.2
    pi_lr: float = 3e-4
    vf_lr: float = 1e-3
    train_pi_iters: int = 80
    train_v_iters: int = 80
    target_kl: float = 0.01
    validate: int = 0
    validate_every: int = 10
    validate_seed: int = 2
    eval_length: int = 256
    max_util_loss: float | None = None
    split: dict = dataclasses.field(default_factory=dict)
    jobs_seen: list = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict:
        d = {"system": SYSTEM_NAME, **dataclasses.asdict(self)}
        for key in ("split", "jobs_seen"):  # only with --split: run.json as before otherwise
            if not d[key]:
                del d[key]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        # "devices": run.json's record of the device count it started on (computation only)
        unknown = set(d) - names - {"system", "devices", "trace_sha256"}
        if unknown:
            raise ConfigError(f"unknown run settings: {', '.join(sorted(unknown))}")
        from jaxsched.systems import check_run_values

        bounds = {"length": (1, 1 << 22), "num_envs": (1, 1 << 20), "max_steps": (1, 1 << 24),
                  "eval_length": (1, 1 << 22)}  # fmt: skip
        check_run_values(cls, d, bounds)
        return cls(**{k: v for k, v in d.items() if k in names})


def load_jobs(trace_path: str, mode: str):
    """``(jobs, swf_wait)`` of a trace under SchedInspector's parse rules."""
    from jaxsched.workload import read_swf
    from jaxsched.workload.schedinspector import inspector_jobs

    return inspector_jobs(read_swf(trace_path), mode)


def make_env(rc: RunConfig, jobs, wait, *, length: int | None = None, evaluation: bool = False):
    """The training environment (no rejection mask, spec §3.5; with ``rc.cap_reward`` a
    trajectory reaching ``rc.max_steps`` decisions ends there with that reward; the reward
    includes ``rc.util_weight``'s term) or, with ``evaluation``, the evaluation one (mask on,
    every start allowed, no cap, no utilisation term)."""
    from jaxsched.envs.schedinspector import SchedInspectorEnv

    capped = rc.cap_reward is not None and not evaluation

    return SchedInspectorEnv(
        jobs,
        base=rc.base,
        length=length or rc.length,
        backfill=rc.backfill,
        metric=rc.metric,
        mode=rc.mode,
        max_rejections_mask=evaluation,
        job_slice=0 if evaluation else rc.job_slice,
        swf_wait=wait,
        step_cap=rc.max_steps if capped else 0,
        cap_reward=rc.cap_reward if capped else -1.0,
        util_weight=0.0 if evaluation else rc.util_weight,
    )


def ppo_config(rc: RunConfig) -> PPOConfig:
    """Spec §6: one trajectory per environment per epoch, scanned for ``max_steps`` steps."""
    return PPOConfig(
        num_envs=rc.num_envs,
        episodes_per_env=1,
        max_episode_steps=rc.max_steps,
        gamma=rc.gamma,
        gae_lambda=rc.gae_lambda,
        clip_ratio=rc.clip_ratio,
        pi_lr=rc.pi_lr,
        vf_lr=rc.vf_lr,
        train_pi_iters=rc.train_pi_iters,
        train_v_iters=rc.train_v_iters,
        target_kl=rc.target_kl,
    )
