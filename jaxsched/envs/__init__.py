"""Reinforcement-learning environments over the scheduling engine (pure JAX, jit/vmap-able).

* :class:`RLSchedulerEnv`: RLScheduler's job-picking SchedGym environment
  (:mod:`jaxsched.envs.rlscheduler`), with :class:`AutoResetWrapper`.
"""

from jaxsched.envs.rlscheduler import (
    FIRST,
    LAST,
    MID,
    AutoResetWrapper,
    EnvState,
    Observation,
    RLSchedulerEnv,
    TimeStep,
)

__all__ = [
    "RLSchedulerEnv",
    "AutoResetWrapper",
    "EnvState",
    "Observation",
    "TimeStep",
    "FIRST",
    "MID",
    "LAST",
]
