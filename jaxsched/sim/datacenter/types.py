"""Types of the discrete-time data-centre cluster (A2cScheduler / DeepRM, spec §2).

:class:`DCParams` is the static configuration (hashable: a ``jit`` static argument);
:class:`DCState` the device state of one cluster (a leading batch axis under ``vmap``).

Jobs are indexed by their *entry* ``e`` in the jobset: entry ``e`` is the job that arrives at
time step ``e`` (at most one job per step, DeepRM's Bernoulli arrivals); length 0 = no job.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from flax import struct

from jaxsched.errors import ConfigError

__all__ = ["DCParams", "DCState", "END_NAMES", "RUNNING", "ALL_DONE", "NO_NEW_JOB", "TIME_CAP"]
__all__ += ["STEP_CAP", "deeprm_params"]

#: ``DCState.end`` codes: still running, then the four ways an episode ends
RUNNING, ALL_DONE, NO_NEW_JOB, TIME_CAP, STEP_CAP = 0, 1, 2, 3, 4
#: the reference file's names of the end codes (index = code)
END_NAMES = ("running", "all_done", "no_new_job", "time_cap", "step_cap")


@dataclasses.dataclass(frozen=True)
class DCParams:
    """Static configuration of the cluster.

    Attributes:
      num_res: resource types ``d``; res_slot: slots per resource ``R``; horizon: rows ``H`` of
        the availability table; num_slots: visible queue slots ``N``; backlog_size: backlog
        capacity; max_job_size / max_job_len: image block sizes (and the generator's bounds);
      simu_len: entries ``S`` of a jobset (arrivals happen at ``t < S``);
      max_track_since_new: cap of the time-since-last-arrival counter;
      end: ``"all_done"`` (all jobs finished, after the arrivals) or ``"no_new_job"``;
      time_cap: an ``all_done`` episode ends when ``t > time_cap`` (0 = never);
      step_cap: the episode is truncated after this many step calls (0 = never);
      deeprm: the reference's quirks (spec errata 1 and 4): entry 0 is never read and a
        finished job directly after a removed one stays in the running list one more step
        (counted by the reward and the ``all_done`` test). False (default): entry 0 arrives at
        reset and finished jobs always leave;
      future: allocation places a job at the earliest offset of the horizon where it fits
        (DeepRM, erratum 5); False: only a job that fits now can be allocated;
      delay_penalty, hold_penalty, dismiss_penalty: the reward's weights of ``1/len`` for the
        running jobs, the slot jobs and the backlog jobs (DeepRM: −1 each).
    """

    num_res: int = 2
    res_slot: int = 10
    horizon: int = 20
    num_slots: int = 5
    backlog_size: int = 60
    max_job_size: int = 10
    max_job_len: int = 15
    simu_len: int = 50
    max_track_since_new: int = 10
    end: str = "all_done"
    time_cap: int = 0
    step_cap: int = 0
    deeprm: bool = False
    future: bool = False
    delay_penalty: float = -1.0
    hold_penalty: float = -1.0
    dismiss_penalty: float = -1.0

    def __post_init__(self):
        for name in ("num_res", "res_slot", "horizon", "num_slots", "backlog_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("max_job_size", "max_job_len", "simu_len", "max_track_since_new"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.end not in ("all_done", "no_new_job"):
            raise ConfigError(f"end must be 'all_done' or 'no_new_job', got {self.end!r}")
        if self.time_cap < 0 or self.step_cap < 0:
            raise ConfigError("time_cap and step_cap must be >= 0 (0 = no cap)")

    @property
    def num_actions(self) -> int:
        """``N + 1``: a slot index, or ``N`` for the void action."""
        return self.num_slots + 1

    @property
    def backlog_width(self) -> int:
        """Columns of the image's backlog block: ``ceil(backlog_size / horizon)``."""
        return -(-self.backlog_size // self.horizon)

    @property
    def image_width(self) -> int:
        """``(R + max_job_size · N) · d + backlog_width + 1``."""
        per_res = self.res_slot + self.max_job_size * self.num_slots
        return per_res * self.num_res + self.backlog_width + 1


def deeprm_params(**kw) -> DCParams:
    """The ``deeprm`` compatibility mode: the reference ``parameters.py`` defaults (``simu_len``
    10, ``episode_max_length`` 200 as both the env's time cap and the evaluation loop's step
    cap), quirks on, future placement; keywords override."""
    base = dict(simu_len=10, time_cap=200, step_cap=200, deeprm=True, future=True)
    base.update(kw)
    return DCParams(**base)


@struct.dataclass
class DCState:
    """One cluster (all int32 unless noted; ``S`` = simu_len, ``d`` = num_res).

    Attributes:
      lens [S], dems [S, d]: the jobset (length 0 = no job at that entry);
      t: the clock; steps: step calls so far;
      avail [H, d]: free slots per future row and resource;
      slots [N]: entry in each visible slot (−1 empty); backlog [B]: entries, FIFO from index
        0, −1 padded; bsize: backlog length;
      run [S]: the running list in allocation order (entries, −1 padded); nrun: its length;
      start, finish, decided [S]: per entry, −1 until allocated (``decided``: clock at the
        allocating action); recorded bool [S]: arrived and not dropped; dropped bool [S];
      since_new: time since the last arrival (capped); stale_steps: job-steps of finished jobs
        left in the running list (deeprm mode); end: an end code (:data:`END_NAMES`);
      key: PRNG key for the next episode (environment use).
    """

    lens: jax.Array
    dems: jax.Array
    t: jax.Array
    steps: jax.Array
    avail: jax.Array
    slots: jax.Array
    backlog: jax.Array
    bsize: jax.Array
    run: jax.Array
    nrun: jax.Array
    start: jax.Array
    finish: jax.Array
    decided: jax.Array
    recorded: jax.Array
    dropped: jax.Array
    since_new: jax.Array
    stale_steps: jax.Array
    end: jax.Array
    key: jax.Array

    @property
    def done(self) -> jax.Array:
        """bool: the episode has ended (any end code)."""
        return self.end != RUNNING


def i32(x) -> jax.Array:
    """``x`` as an int32 array."""
    return jnp.asarray(x, jnp.int32)
