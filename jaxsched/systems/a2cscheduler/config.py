"""A2cScheduler's run configuration (``run.json``) and what it builds: the environment, the
networks and the A2C trainer."""

from __future__ import annotations

import dataclasses

from jaxsched.errors import ConfigError

__all__ = ["SYSTEM_NAME", "RunConfig", "build_env", "build_nets"]

SYSTEM_NAME = "a2c"


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Everything a run is made of (written to ``run.json``; a resumed run must match).

    Environment: ``rate`` λ, ``num_res``, ``res_slot``, ``horizon``, ``num_slots`` N,
    ``backlog_size``, ``simu_len``, ``max_job_len`` (< horizon), ``step_cap``, ``future`` placement, ``mask`` invalid
    actions, ``no_idle_void`` (void masked on an idle cluster while a job can be placed). Networks: ``arch`` (:data:`jaxsched.nets.a2cscheduler.ARCHS`). A2C:
    ``num_envs``, ``n_steps``, ``gamma``, ``lr``, ``optimizer``, ``entropy_coef``,
    ``value_coef``, ``normalize_advantages``, ``entropy_anneal_updates`` (β falls linearly to 0
    over that many updates; 0: constant), ``updates_per_epoch``. ``seed``; evaluation: ``eval_sequences`` fixed
    jobsets of seed ``eval_seed``."""

    rate: float = 0.7
    num_res: int = 2
    res_slot: int = 10
    horizon: int = 20
    num_slots: int = 5
    backlog_size: int = 60
    simu_len: int = 50
    max_job_len: int = 15
    step_cap: int = 500
    future: bool = False
    mask: bool = False
    no_idle_void: bool = False
    arch: str = "conv16"
    num_envs: int = 16
    n_steps: int = 5
    gamma: float = 0.99
    lr: float = 1e-3
    optimizer: str = "rmsprop"
    entropy_coef: float = 0.01
    value_coef: float = 0.5
    normalize_advantages: bool = False
    entropy_anneal_updates: int = 0
    updates_per_epoch: int = 50
    seed: int = 0
    eval_sequences: int = 20
    eval_seed: int = 314159

    def __post_init__(self):
        if not 0.0 < self.rate <= 1.0:
            raise ConfigError(f"--rate must be in (0, 1], got {self.rate}")
        from jaxsched.nets.a2cscheduler import ARCHS

        if self.arch not in ARCHS:
            raise ConfigError(f"--arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if not 1 <= self.max_job_len < self.horizon:
            raise ConfigError(
                f"--max-job-len must be in [1, horizon), got {self.max_job_len} with horizon "
                f"{self.horizon} (a job must fit in the horizon)"
            )

    def to_json(self) -> dict:
        return {"system": SYSTEM_NAME, **dataclasses.asdict(self)}

    @classmethod
    def from_json(cls, d: dict) -> RunConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def a2c(self):
        """The :class:`jaxsched.train.a2c.A2CConfig`."""
        from jaxsched.train.a2c import A2CConfig

        return A2CConfig(num_envs=self.num_envs, n_steps=self.n_steps, gamma=self.gamma,
                         lr=self.lr, optimizer=self.optimizer, entropy_coef=self.entropy_coef,
                         value_coef=self.value_coef,
                         normalize_advantages=self.normalize_advantages,
                         entropy_anneal_updates=self.entropy_anneal_updates)  # fmt: skip


def build_env(rc: RunConfig):
    """The :class:`jaxsched.envs.DataCenterEnv` of a run (max job size = R)."""
    from jaxsched.envs import DataCenterEnv
    from jaxsched.sim.datacenter import DCParams

    p = DCParams(num_res=rc.num_res, res_slot=rc.res_slot, horizon=rc.horizon,
                 num_slots=rc.num_slots, backlog_size=rc.backlog_size, max_job_size=rc.res_slot,
                 max_job_len=rc.max_job_len, simu_len=rc.simu_len, step_cap=rc.step_cap, future=rc.future)  # fmt: skip
    return DataCenterEnv(params=p, rate=rc.rate, mask_invalid=rc.mask, eval_seed=rc.eval_seed,
                         no_idle_void=rc.no_idle_void)  # fmt: skip


def build_nets(rc: RunConfig, env):
    """``(actor module, critic module, actor_apply, critic_apply)``; ``*_apply`` as
    :func:`jaxsched.train.a2c.make_a2c` takes them."""
    from jaxsched.nets.a2cscheduler import Actor, Critic

    actor, critic = Actor(env.num_actions, rc.arch), Critic(rc.arch)
    return actor, critic, actor.apply, critic.apply
