"""A2cScheduler's run configuration (``run.json``) and what it builds: the environment, the
networks and the A2C trainer."""

from __future__ import annotations

import dataclasses

from jaxsched.errors import ConfigError

__all__ = ["SYSTEM_NAME", "RunConfig", "build_env", "build_nets"]

SYSTEM_NAME = "a2c"

#: a trace's slices, in trace order: (first, end) fractions of each part
TRACE_PARTS = {"train": (0.0, 0.6), "validation": (0.6, 0.7), "test": (0.7, 1.0)}


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Everything a run is made of (written to ``run.json``; a resumed run must match).

    Environment: ``rate`` λ, ``num_res``, ``res_slot``, ``horizon``, ``num_slots`` N,
    ``backlog_size``, ``simu_len``, ``max_job_len`` (< horizon), ``step_cap``, ``future`` placement, ``mask`` invalid
    actions, ``no_idle_void`` (void masked on an idle cluster while a job can be placed). Networks: ``arch`` (:data:`jaxsched.nets.a2cscheduler.ARCHS`). A2C:
    ``num_envs``, ``n_steps``, ``gamma``, ``lr``, ``optimizer``, ``entropy_coef``,
    ``value_coef``, ``normalize_advantages``, ``entropy_anneal_updates`` (β falls linearly to 0
    over that many updates; 0: constant), ``updates_per_epoch``. ``algorithm``: ``"a2c"`` or
    ``"pg"``, DeepRM's Monte-Carlo policy gradient (:mod:`jaxsched.train.mc_pg`: ``num_envs``
    trajectories per update, ``pg_trajectories`` of them on each jobset, every one to its end
    or ``step_cap``; the same optimiser, γ, β and advantage standardisation; no critic).
    ``seed``; evaluation: ``eval_sequences`` fixed jobsets of seed ``eval_seed``. ``trace``
    (an SWF file that records memory; "" for DeepRM's generator): jobsets are its slices of
    ``trace_jobs`` jobs at ``trace_unit`` seconds per step
    (:func:`jaxsched.workload.datacenter_trace.trace_slices`), in trace order the first 60 %
    for training, the next 10 % for validation, the last 30 % for testing; ``trace_eval``
    (``validation`` or ``test``) are the fixed evaluation jobsets; ``rate`` is then unused."""

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
    trace: str = ""
    trace_unit: int = 600
    trace_jobs: int = 60
    trace_eval: str = "validation"
    algorithm: str = "a2c"
    pg_trajectories: int = 8
    seed: int = 0
    eval_sequences: int = 20
    eval_seed: int = 314159

    def __post_init__(self):
        if not 0.0 < self.rate <= 1.0:
            raise ConfigError(f"--rate must be in (0, 1], got {self.rate}")
        from jaxsched.nets.a2cscheduler import ARCHS

        if self.arch not in ARCHS:
            raise ConfigError(f"--arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if self.trace_eval not in TRACE_PARTS:
            raise ConfigError(f"--trace-eval must be validation or test, got {self.trace_eval!r}")
        if self.algorithm not in ("a2c", "pg"):
            raise ConfigError(f"--algorithm must be a2c or pg, got {self.algorithm!r}")
        if self.algorithm == "pg" and (self.num_envs % self.pg_trajectories or not self.step_cap):
            raise ConfigError(
                f"--algorithm pg needs --num-envs ({self.num_envs}) a multiple of "
                f"--pg-trajectories ({self.pg_trajectories}) and a step cap (--step-cap > 0)"
            )
        if not 1 <= self.max_job_len < self.horizon:
            raise ConfigError(
                f"--max-job-len must be in [1, horizon), got {self.max_job_len} with horizon "
                f"{self.horizon} (a job must fit in the horizon)"
            )

    def to_json(self) -> dict:
        return {"system": SYSTEM_NAME, **dataclasses.asdict(self)}

    @classmethod
    def from_json(cls, d: dict) -> RunConfig:
        from jaxsched.systems import check_run_values

        names = {f.name for f in dataclasses.fields(cls)}
        sizes = ("num_res", "res_slot", "horizon", "num_slots", "backlog_size", "simu_len",
                 "max_job_len", "num_envs", "n_steps")  # fmt: skip
        check_run_values(cls, d, {k: (1, 1 << 16) for k in sizes} | {"step_cap": (0, 1 << 24)})
        return cls(**{k: v for k, v in d.items() if k in names})

    def describe_jobsets(self) -> str:
        """The fixed evaluation jobsets in words: ``20 jobsets of seed 314159 at rate 0.7`` or
        ``20 jobsets of the test part of PATH (60 jobs, 600 s per step)``."""
        if self.trace:
            return (f"{self.eval_sequences} jobsets of the {self.trace_eval} part of {self.trace} "
                    f"({self.trace_jobs} jobs, {self.trace_unit} s per step)")  # fmt: skip
        return f"{self.eval_sequences} jobsets of seed {self.eval_seed} at rate {self.rate}"

    def a2c(self):
        """The :class:`jaxsched.train.a2c.A2CConfig`."""
        from jaxsched.train.a2c import A2CConfig

        return A2CConfig(num_envs=self.num_envs, n_steps=self.n_steps, gamma=self.gamma,
                         lr=self.lr, optimizer=self.optimizer, entropy_coef=self.entropy_coef,
                         value_coef=self.value_coef,
                         normalize_advantages=self.normalize_advantages,
                         entropy_anneal_updates=self.entropy_anneal_updates)  # fmt: skip

    def mc_pg(self):
        """The :class:`jaxsched.train.mc_pg.MCPGConfig` (rollouts of ``step_cap`` steps)."""
        from jaxsched.train.mc_pg import MCPGConfig

        chunk = max(d for d in range(1, 51) if self.step_cap % d == 0)
        return MCPGConfig(num_starts=self.num_envs // self.pg_trajectories,
                          trajectories=self.pg_trajectories, max_steps=self.step_cap,
                          chunk=chunk, gamma=self.gamma, lr=self.lr, optimizer=self.optimizer,
                          entropy_coef=self.entropy_coef,
                          normalize_advantages=self.normalize_advantages)  # fmt: skip


def build_env(rc: RunConfig, slices=None):
    """The :class:`jaxsched.envs.DataCenterEnv` of a run (max job size = R); ``slices``: the
    :class:`~jaxsched.workload.datacenter_trace.TraceSlices` of ``rc.trace`` if already cut."""
    from jaxsched.envs import DataCenterEnv
    from jaxsched.sim.datacenter import DCParams

    banks, simu_len = {}, rc.simu_len
    if rc.trace:
        slices = slices or trace_slices_of(rc)
        banks, simu_len = trace_banks(rc, slices), slices.steps
    p = DCParams(num_res=rc.num_res, res_slot=rc.res_slot, horizon=rc.horizon,
                 num_slots=rc.num_slots, backlog_size=rc.backlog_size, max_job_size=rc.res_slot,
                 max_job_len=rc.max_job_len, simu_len=simu_len, step_cap=rc.step_cap, future=rc.future)  # fmt: skip
    return DataCenterEnv(params=p, rate=rc.rate, mask_invalid=rc.mask, eval_seed=rc.eval_seed,
                         no_idle_void=rc.no_idle_void, **banks)  # fmt: skip


def trace_slices_of(rc: RunConfig):
    """``rc.trace`` cut into jobsets (:func:`jaxsched.workload.datacenter_trace.trace_slices`
    with the run's sizes)."""
    from jaxsched.workload.datacenter_trace import trace_slices
    from jaxsched.workload.swf import read_swf

    if rc.num_res != 2:
        raise ConfigError(
            f"--trace gives CPU and memory demands: --num-res must be 2, got {rc.num_res}"
        )
    return trace_slices(read_swf(rc.trace), jobs=rc.trace_jobs, unit=rc.trace_unit,
                        res_slot=rc.res_slot, max_len=rc.max_job_len)  # fmt: skip


def trace_banks(rc: RunConfig, sl) -> dict:
    """``{"jobsets": training JobBank, "eval_jobsets": the rc.trace_eval part}`` of the
    slices ``sl`` (see :class:`RunConfig`)."""
    from jaxsched.envs.datacenter import JobBank

    def part(name):
        a, b = TRACE_PARTS[name]
        s = sl.select(slice(int(a * sl.num_slices), int(b * sl.num_slices)))
        if s.num_slices == 0:
            raise ConfigError(
                f"{rc.trace}: too few slices of {rc.trace_jobs} jobs for a {name} part"
            )
        return JobBank(s.lens, s.dems)

    return {"jobsets": part("train"), "eval_jobsets": part(rc.trace_eval)}


def build_nets(rc: RunConfig, env):
    """``(actor module, critic module, actor_apply, critic_apply)``; ``*_apply`` as
    :func:`jaxsched.train.a2c.make_a2c` takes them."""
    from jaxsched.nets.a2cscheduler import Actor, Critic

    actor, critic = Actor(env.num_actions, rc.arch), Critic(rc.arch)
    return actor, critic, actor.apply, critic.apply
