"""SchedInspector's inspect-and-reject environment (``HPCEnvSkip``, spec ``schedinspector.md``
§3) as a pure, vmappable JAX environment of the platform contract (:mod:`jaxsched.envs.core`).

A fixed base scheduler (:mod:`jaxsched.policies.inspector_bases`) proposes its highest-priority
waiting job at every scheduling point; the agent answers **0 = accept** (the job is scheduled
exactly as the base would: the engine's decision, with or without the reference's greedy
backfilling) or **1 = reject** (the job stays queued; time moves on by one event or 600 s,
:func:`jaxsched.sim.inspect.reject`). ::

    env = SchedInspectorEnv.from_trace(read_swf(path), base="sjf", metric="bsld")
    state, ts = env.reset(key)            # a training sequence (spec §3.1)
    state, ts = env.reset_at(start)       # jobs start .. start+length-1
    state, ts = env.step(state, action)   # 0 accept, 1 reject

* **Observation** (:class:`InspectorObservation`): ``obs`` float32 ``[7]`` (``[8]`` in paper
  mode) the features of spec §3.4 of the proposed job, ``mask`` bool ``[2]``: reject is
  forbidden when the proposed job was rejected :data:`~jaxsched.sim.inspect.MAX_REJECTIONS`
  times and ``max_rejections_mask`` is on (evaluation, spec §3.5; the reference trains
  without it). :meth:`SchedInspectorEnv.features64` gives the float64 features.
* **Reward** (§3.6): 0 until the episode ends, then a comparison of the inspected run's
  sequence value I with the base scheduler's own run B on the same sequence (same backfilling):
  ``ratio`` (the code: (B − I)/max(B, I, 1)), ``percentage`` ((B − I)/B), ``native`` (B − I),
  ``winloss`` (sign(B − I)); for ``util`` the values enter negated, as in the reference. B is
  computed on the device when the episode ends, for the finished rows only
  (:func:`jaxsched.sim.batching.sparse_cond`).
* **Extras**: ``value`` (I) and ``base_value`` (B), float64, 0 until the episode ends;
  ``decisions`` and ``rejections`` (int32, this episode); ``start``.
* **Modes**: ``compat`` = the reference code (requested time := run time, 7 features, the
  submit-time quirk of §3.3, ratio reward); ``paper`` = estimates as requested times (build the
  jobs with ``inspector_jobs(trace, "paper")``), the 8th feature "backfilling contributions",
  percentage reward, no submit-time quirk.

Backfill scan order of the inspected run: by index (spec §10.13: the engine with rank
``arange(length)``); the base run's follows RLS §2.8.2 (the engine with the base's rank).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
from jaxsched.envs import core
from jaxsched.envs.core import Environment
from jaxsched.errors import ConfigError, as_int
from jaxsched.policies.inspector_bases import BASES, base_code, trace_rank, window_rank
from jaxsched.sim import engine as E
from jaxsched.sim import inspect as I
from jaxsched.sim.batching import schedule_engine, sparse_cond
from jaxsched.sim.nobf import run_static_nobf, schedule_nobf
from jaxsched.sim.primitives import argmin_unique
from jaxsched.sim.types import sequence_window
from jaxsched.workload.capacity import running_capacity

__all__ = [
    "SchedInspectorEnv",
    "InspectorState",
    "InspectorObservation",
    "METRICS",
    "REWARDS",
    "MODES",
    "BACKFILLS",
    "ACCEPT",
    "REJECT",
    "compat_features",
]

ACCEPT, REJECT = 0, 1
METRICS: tuple[str, ...] = I.VALUES
REWARDS: tuple[str, ...] = ("ratio", "percentage", "native", "winloss")
MODES: tuple[str, ...] = ("compat", "paper")
#: the backfilling an inspector runs with: the reference's two, and its greedy backfilling in
#: shortest-requested-time order (an extension, issue 49)
BACKFILLS: tuple[str, ...] = ("none", "rlscheduler", "rlscheduler-sjbf")
#: feature cap (spec §3.4), 12 h normaliser, queue-delay normaliser 600/10 · 128
C_CAP = 1.0 - 1e-5
HOURS12 = 43200.0
QDELAY_NORM = 600.0 / 10.0 * 128.0


@struct.dataclass
class InspectorObservation(core.Observation):
    """``mask`` bool ``[2]`` (accept, reject); ``obs`` float32 ``[n_features]``."""

    obs: jax.Array

    @property
    def critic_obs(self) -> jax.Array:
        """The value network's input: the same features (spec §5)."""
        return self.obs


@struct.dataclass
class InspectorState:
    """Environment state of one episode.

    Attributes:
      sim: the engine's :class:`~jaxsched.sim.engine.SimState` (at a scheduling point, or done).
      start: int32 trace index of the sequence's first job.
      base_rank: int32 ``[L]`` the base scheduler's rank of each sequence job.
      rejected: int32 ``[L]`` per-job rejection counters.
      decisions, rejections: int32 decisions (accepts + rejections) and rejections so far.
      key: PRNG key of the next sampled sequence (auto-reset).
    """

    sim: E.SimState
    start: jax.Array
    base_rank: jax.Array
    rejected: jax.Array
    decisions: jax.Array
    rejections: jax.Array
    key: jax.Array


@struct.dataclass
class _Data:
    submit: jax.Array  # int64 [M]
    run: jax.Array  # int64 [M]
    req: jax.Array  # int64 [M]
    procs: jax.Array  # int64 [M]
    nodes: jax.Array  # int32 [M]
    grank: jax.Array  # int32 [M] the base's rank over the whole trace
    base: jax.Array  # int32 scalar: the base's sched_algo index (for display)
    sample_low: jax.Array  # int32 scalar
    sample_high: jax.Array  # int32 scalar


@dataclasses.dataclass(frozen=True)
class _Config:
    length: int
    backfill: int
    metric: str
    mode: str
    reward: str
    max_rejections_mask: bool
    step_cap: int
    cap_reward: float
    util_weight: float
    n_trace: int
    sample_ok: bool
    queue_cap: int
    run_cap: int
    num_nodes: int
    num_procs: float
    max_exec_time: float


def _node_demand(jobs) -> np.ndarray:
    nodes = jobs.node_demand
    if (nodes > jobs.num_nodes).any():
        j = int(np.argmax(nodes > jobs.num_nodes))
        raise ConfigError(
            f"job {int(jobs.job_id[j])} needs {int(nodes[j])} nodes but the machine has "
            f"{jobs.num_nodes}; it could never start"
        )
    return nodes


class SchedInspectorEnv(Environment):
    """The inspector environment over one loaded trace (see the module docstring).

    Args:
      jobs: a :class:`~jaxsched.workload.jobs.Jobs` from
        :func:`jaxsched.workload.schedinspector.inspector_jobs` (every job kept).
      base: base scheduler name or ``sched_algo`` index (:data:`BASES`), default SJF.
      length: jobs per sequence (128 for training, 256 for evaluation).
      backfill: ``"none"`` or ``"rlscheduler"`` (the reference's greedy backfilling; static:
        each mode compiles only its own transition); ``"rlscheduler-sjbf"``, the same
        backfilling scanning the queue in shortest-requested-time order, is an extension (the
        reference has none: issue 49, where it makes F2-F4's strongest baselines).
      metric: ``bsld``, ``wait``, ``util`` or ``mbsld``.
      mode: ``"compat"`` or ``"paper"``. reward: one of :data:`REWARDS` (default: ``ratio``
        in compat, ``percentage`` in paper mode).
      max_rejections_mask: forbid rejecting a job rejected 72 times (evaluation, spec §3.5).
      step_cap, cap_reward: with ``step_cap > 0`` an episode still running after ``step_cap``
        decisions ends there (``terminated``) with reward ``cap_reward``, so that a trainer
        learns from it. Default 0: no cap here; the reference's trainer drops such
        trajectories instead (spec §6), which is what the rollout does with them.
      util_weight: W, not in the paper: the terminal reward adds ``W * (u_I - u_B) / u_B``,
        the relative change of the utilisation (spec §8.3) against the base's, so that a
        trainer pays for holding the machine idle. Default 0.
      job_slice: training starts come from the first ``job_slice`` jobs (0 = all; spec §3.1's
        ``batch_job_slice``, 10000 in the reference).
      swf_wait: int ``[n_jobs]`` SWF wait field (needed by the multifactor base only).
    """

    def __init__(
        self,
        jobs,
        base="sjf",
        length: int = 128,
        backfill: str = "none",
        metric: str = "bsld",
        mode: str = "compat",
        reward: str | None = None,
        max_rejections_mask: bool = True,
        job_slice: int = 10000,
        swf_wait=None,
        step_cap: int = 0,
        cap_reward: float = -1.0,
        util_weight: float = 0.0,
    ):
        length = as_int(length, "length", 1)
        step_cap = as_int(step_cap, "step_cap", 0)
        job_slice = as_int(job_slice, "job_slice", 0)
        code = base_code(base)
        bcode = E.backfill_code(backfill)
        if E.BACKFILLS[bcode] not in BACKFILLS:
            raise ConfigError(
                "SchedInspector backfills as the reference: 'none' or 'rlscheduler' (or "
                "'rlscheduler-sjbf', the same in shortest-requested-time order: an extension)"
            )
        if metric not in METRICS:
            raise ConfigError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
        if mode not in MODES:
            raise ConfigError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
        reward = reward or ("ratio" if mode == "compat" else "percentage")
        if reward not in REWARDS:
            raise ConfigError(f"unknown reward {reward!r}; choose from {', '.join(REWARDS)}")
        m = jobs.n_jobs
        if length > m:
            raise ConfigError(f"sequence length {length} is longer than the trace ({m} jobs)")
        nodes = _node_demand(jobs)
        u = min(m, job_slice) if job_slice else m
        grank = trace_rank(code, jobs.submit, jobs.req_time, jobs.procs, swf_wait, jobs.num_procs)
        # the most jobs that can run at once in any sequence (Lublin-1, 256 jobs: 135 of 256)
        run_cap = running_capacity(nodes, int(jobs.num_nodes), length)
        self._config = _Config(
            length=length,
            backfill=bcode,
            metric=metric,
            mode=mode,
            reward=reward,
            max_rejections_mask=bool(max_rejections_mask),
            step_cap=step_cap,
            cap_reward=float(cap_reward),
            util_weight=float(util_weight),
            n_trace=m,
            sample_ok=u - length - 1 > length,
            queue_cap=length,
            run_cap=run_cap,
            num_nodes=int(jobs.num_nodes),
            num_procs=float(jobs.num_procs),
            max_exec_time=float(jobs.max_exec_time),
        )
        i64 = lambda a: jnp.asarray(np.asarray(a, np.int64))  # noqa: E731
        self._data = _Data(
            submit=i64(jobs.submit),
            run=i64(jobs.run),
            req=i64(jobs.req_time),
            procs=i64(jobs.procs),
            nodes=jnp.asarray(nodes.astype(np.int32)),
            grank=jnp.asarray(grank.astype(np.int32)),
            base=jnp.asarray(code, jnp.int32),
            sample_low=jnp.asarray(length, jnp.int32),
            sample_high=jnp.asarray(u - length - 1, jnp.int32),
        )

    @classmethod
    def from_trace(cls, trace, mode: str = "compat", **kw) -> SchedInspectorEnv:
        """The environment of an SWF :class:`~jaxsched.workload.swf.Trace`, parsed with
        SchedInspector's rules of ``mode`` (spec §2)."""
        from jaxsched.workload.schedinspector import inspector_jobs

        jobs, wait = inspector_jobs(trace, mode)
        return cls(jobs, mode=mode, swf_wait=wait, **kw)

    # -- pytree protocol -----------------------------------------------------------------------
    def tree_flatten(self):
        return (self._data,), self._config

    @classmethod
    def tree_unflatten(cls, config, children):
        obj = object.__new__(cls)
        obj._config = config
        obj._data = children[0]
        return obj

    # -- properties ------------------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        return 2

    @property
    def length(self) -> int:
        return self._config.length

    @property
    def metric(self) -> str:
        return self._config.metric

    @property
    def mode(self) -> str:
        return self._config.mode

    @property
    def base(self) -> str:
        """The base scheduler's name (reads a device scalar: not under tracing)."""
        return BASES[int(self._data.base)]

    @property
    def n_trace(self) -> int:
        return self._config.n_trace

    @property
    def n_features(self) -> int:
        """7 (compat) or 8 (paper: + backfilling contributions)."""
        return 7 if self._config.mode == "compat" else 8

    @property
    def start_range(self) -> tuple[int, int]:
        """``(low, high)`` of the training starts (spec §3.1: ``[L, U − L − 1)``)."""
        return int(self._data.sample_low), int(self._data.sample_high)

    def with_options(self, **changes) -> SchedInspectorEnv:
        """A copy with other static options (``max_rejections_mask``, ``reward``, ``metric``)
        and the same data."""
        obj = object.__new__(type(self))
        obj._config = dataclasses.replace(self._config, **changes)
        obj._data = self._data
        return obj

    def __repr__(self) -> str:
        c = self._config
        return (
            f"SchedInspectorEnv(base={self.base!r}, length={c.length}, metric={c.metric!r}, "
            f"mode={c.mode!r}, trace_jobs={c.n_trace})"
        )

    # -- the episode's workload ----------------------------------------------------------------
    def _sequence(self, start) -> E.Sequence:
        c = self._config
        return sequence_window(self._data, start, c.length, c.num_nodes)

    def _params(self) -> E.SimParams:
        return E.SimParams(
            policy=jnp.asarray(0, jnp.int32),
            backfill=jnp.asarray(self._config.backfill, jnp.int32),
            compat=jnp.asarray(True),
        )

    def _s_after(self, start):
        """The submit time the rejection rule reads once every sequence job has arrived."""
        c, d = self._config, self._data
        after = start + c.length
        quirk = d.submit[jnp.minimum(after, c.n_trace - 1)]
        use = (after < c.n_trace) & (c.mode == "compat")
        return jnp.where(use, quirk, E.BIG)

    # -- reset ----------------------------------------------------------------------------------
    def sample_start(self, key) -> jax.Array:
        """A training start, uniform over ``[L, U − L − 1)`` (spec §3.1)."""
        if not self._config.sample_ok:
            raise ConfigError(
                f"cannot sample sequences of {self.length} jobs: starts are drawn from "
                f"[length, U - length - 1), which needs U >= {2 * self.length + 2} jobs"
            )
        d = self._data
        return jax.random.randint(key, (), d.sample_low, d.sample_high, dtype=jnp.int32)

    def init_state(self, key) -> InspectorState:
        key, sub = jax.random.split(key)
        return self._reset_state(self.sample_start(sub), key)

    def init_state_at(self, start, key=None) -> InspectorState:
        """The first decision of the sequence ``start .. start+length−1`` (clipped into the
        trace; a Python int outside it is an error)."""
        if isinstance(start, (int, np.integer)) and not 0 <= start <= self.n_trace - self.length:
            raise ConfigError(
                f"start {start} is outside [0, {self.n_trace - self.length}] "
                f"for sequences of {self.length} jobs"
            )
        if key is None:
            key = jax.random.PRNGKey(0)
        return self._reset_state(jnp.asarray(start, jnp.int32), key)

    def _reset_state(self, start, key) -> InspectorState:
        c = self._config
        start = jnp.clip(jnp.asarray(start, jnp.int32), 0, c.n_trace - c.length)
        seq = self._sequence(start)
        brank = window_rank(jax.lax.dynamic_slice_in_dim(self._data.grank, start, c.length))
        sim = E.reset(seq, jnp.arange(c.length, dtype=jnp.int32), c.queue_cap, c.run_cap)
        zero = jnp.asarray(0, jnp.int32)
        return InspectorState(
            sim=sim,
            start=start,
            base_rank=brank,
            rejected=jnp.zeros(c.length, jnp.int32),
            decisions=zero,
            rejections=zero,
            key=key,
        )

    def reset_extras(self, state: InspectorState) -> dict:
        z = jnp.zeros((), jnp.float64)
        return self._extras(state, z, z)

    # -- step -------------------------------------------------------------------------------------
    def proposed_slot(self, state: InspectorState) -> jax.Array:
        """int32 queue slot of the base's proposal: smallest base rank among waiting jobs."""
        sim = state.sim
        qv = sim.queue_job >= 0
        rank = state.base_rank[jnp.maximum(sim.queue_job, 0)]
        return argmin_unique(rank, qv, self._config.length)

    def proposed_job(self, state: InspectorState) -> jax.Array:
        """int32 sequence index of the proposed job (0 when nothing waits)."""
        return jnp.maximum(state.sim.queue_job[self.proposed_slot(state)], 0)

    def _reject_allowed(self, state: InspectorState, j) -> jax.Array:
        if not self._config.max_rejections_mask:
            return jnp.asarray(True)
        return state.rejected[j] < I.MAX_REJECTIONS

    def _accept(self, seq, sim, slot):
        """The engine's decision on ``slot`` (the no-backfill closed form without
        backfilling)."""
        if self._config.backfill == E.BACKFILL_NONE:
            return schedule_nobf(seq, sim, slot)
        return schedule_engine(seq, self._params(), sim, slot)

    def transition(self, state: InspectorState, action):
        """Accept (0) or reject (1) the proposed job: ``(state, reward, terminated,
        truncated, extras)``. A reject on a job whose reject is masked is an accept; any
        action other than 1 is an accept. A finished state is returned unchanged. With a
        ``step_cap``, the decision that reaches it on an unfinished episode terminates the
        episode with reward ``cap_reward``."""
        seq = self._sequence(state.start)
        slot = self.proposed_slot(state)
        j = jnp.maximum(state.sim.queue_job[slot], 0)
        was_done = state.sim.done
        rej = (jnp.asarray(action) == REJECT) & self._reject_allowed(state, j) & ~was_done
        accepted = self._accept(seq, state.sim, slot)
        rejected = I.reject(seq, self._params(), state.sim, self._s_after(state.start))
        sim = jax.tree_util.tree_map(lambda r, a: jnp.where(rej, r, a), rejected, accepted)
        return self._outcome(self._counted(state, sim, j, rej, was_done), was_done)

    def _counted(self, state: InspectorState, sim, j, rej, was_done) -> InspectorState:
        """``state`` with the simulator state ``sim`` after a decision on job ``j`` (``rej``:
        it was rejected; ``was_done``: the episode was over before) and its counters."""
        return state.replace(
            sim=sim,
            rejected=I.count_rejection(state.rejected, j, rej),
            decisions=state.decisions + (~was_done).astype(jnp.int32),
            rejections=state.rejections + rej.astype(jnp.int32),
        )

    def _outcome(self, new: InspectorState, was_done):
        """``(new, reward, terminated, truncated, extras)`` of a decision that led to ``new``
        (``was_done``: the episode was over before it)."""
        sim = new.sim
        ended = sim.done & ~was_done
        vals = sparse_cond(ended, _final_values, _zero_values, self, new)
        value, base = vals[0][self.metric], vals[1][self.metric]
        r = self._reward(base, value)
        if self._config.util_weight:
            ui, ub = vals[0]["util"], vals[1]["util"]
            r = r + self._config.util_weight * (ui - ub) / jnp.maximum(ub, 1e-12)
        reward = jnp.where(ended, r, 0.0)
        terminated = sim.done
        if self._config.step_cap:
            capped = ~sim.done & ~was_done & (new.decisions >= self._config.step_cap)
            reward = jnp.where(capped, self._config.cap_reward, reward)
            terminated = terminated | capped
        reward = reward.astype(jnp.float32)
        return new, reward, terminated, jnp.zeros((), bool), self._extras(new, value, base)

    # -- asynchronous rows (jaxsched.envs.async_rows's protocol) --------------------------------
    @property
    def async_ok(self) -> bool:
        """True when an accept is micro-stepped (backfilling on)."""
        return self._config.backfill != E.BACKFILL_NONE

    def async_observe(self, state: InspectorState):
        """At a decision: ``(state, observation)``."""
        return state, self.observe(state)

    def async_decide(self, state: InspectorState, action) -> InspectorState:
        """The decision's own step: an accept's first micro-step (the proposed job starts or
        is committed), or the whole rejection (one event or a wait: no drain)."""
        seq = self._sequence(state.start)
        slot = self.proposed_slot(state)
        j = jnp.maximum(state.sim.queue_job[slot], 0)
        was_done = state.sim.done
        rej = (jnp.asarray(action) == REJECT) & self._reject_allowed(state, j) & ~was_done
        accepted = E.micro_step(seq, self._params(), state.sim, slot)
        rejected = I.reject(seq, self._params(), state.sim, self._s_after(state.start))
        sim = jax.tree_util.tree_map(lambda r, a: jnp.where(rej, r, a), rejected, accepted)
        return self._counted(state, sim, j, rej, was_done)

    def async_pending(self, state: InspectorState) -> jax.Array:
        """bool: the accept needs more micro-steps."""
        return ~state.sim.done & ~E.at_decision(state.sim)

    def async_drain(self, state: InspectorState) -> InspectorState:
        """One more micro-step of an accept."""
        seq = self._sequence(state.start)
        zero = jnp.asarray(0, jnp.int32)
        return state.replace(sim=E.micro_step(seq, self._params(), state.sim, zero))

    def async_finish(self, state: InspectorState, arrived):
        """The end of the decision (the counters were taken by :meth:`async_decide`); read
        only where ``arrived`` holds."""
        return self._outcome(state, jnp.asarray(False))

    def _reward(self, b, i):
        """The terminal reward from the base's value ``b`` and the inspected ``i`` (§3.6)."""
        if self.metric == "util":  # the reference's utilisation values are negative
            b, i = -b, -i
        r = self._config.reward
        if r == "ratio":
            return (b - i) / jnp.maximum(jnp.maximum(b, i), 1.0)
        if r == "percentage":
            return (b - i) / jnp.where(b == 0, 1.0, jnp.abs(b))
        if r == "native":
            return b - i
        return jnp.sign(b - i)

    def _extras(self, state: InspectorState, value, base) -> dict:
        return {
            "value": jnp.asarray(value, jnp.float64),
            "base_value": jnp.asarray(base, jnp.float64),
            "decisions": state.decisions,
            "rejections": state.rejections,
            "start": state.start,
        }

    # -- final values -------------------------------------------------------------------------
    def inspected_values(self, state: InspectorState) -> dict:
        """float64 sequence values (:data:`METRICS`) of the inspected schedule (final once the
        episode is over)."""
        seq = self._sequence(state.start)
        return I.sequence_values(seq, state.sim.start, state.sim.t, self._config.num_procs)

    def base_values(self, state: InspectorState) -> dict:
        """float64 sequence values of the base scheduler alone on the same sequence."""
        c = self._config
        seq = self._sequence(state.start)
        if c.backfill == E.BACKFILL_NONE:
            fin = run_static_nobf(seq, state.base_rank, c.run_cap)
        else:
            fin = I.base_run(seq, self._params(), state.base_rank, c.queue_cap, c.run_cap)
        return I.sequence_values(seq, fin.start, fin.t, c.num_procs)

    # -- observation ----------------------------------------------------------------------------
    def features64(self, state: InspectorState) -> jax.Array:
        """float64 ``[n_features]``: the features of spec §3.4 of the proposed job."""
        c, sim = self._config, state.sim
        seq = self._sequence(state.start)
        j = self.proposed_job(state)
        qreq = seq.req[jnp.maximum(sim.queue_job, 0)]
        feats = compat_features(
            sim.t, seq.submit[j], seq.req[j], seq.procs[j], seq.nodes[j], sim.free,
            state.rejected[j], qreq, sim.queue_job >= 0, max_exec_time=c.max_exec_time,
            num_procs=c.num_procs, num_nodes=c.num_nodes,
        )  # fmt: skip
        if c.mode == "paper":
            feats.append(self._backfill_contributions(seq, sim, j))
        return jnp.stack(feats).astype(jnp.float64)

    def _backfill_contributions(self, seq, sim, j) -> jax.Array:
        """Paper feature 8: the share of the other waiting jobs that the reference's greedy
        backfilling could start now if ``j`` were accepted and had to wait (0 without
        backfilling or when ``j`` fits)."""
        rv = jnp.arange(sim.run_job.shape[0], dtype=jnp.int32) < sim.n_running
        kj = seq.nodes[j]
        shadow, _ = E.reservation(
            sim.run_est_finish, sim.run_nodes, sim.run_cum_nodes, rv, sim.free, kj, sim.t
        )
        qv = (sim.queue_job >= 0) & (sim.queue_job != j)
        ok = qv & (sim.queue_nodes <= sim.free) & (sim.t + sim.queue_req < shadow)
        n = jnp.sum(ok) * (kj > sim.free) * (self._config.backfill != E.BACKFILL_NONE)
        return jnp.minimum(n / self._config.length, C_CAP).astype(jnp.float64)

    def observe(self, state: InspectorState) -> InspectorObservation:
        j = self.proposed_job(state)
        mask = jnp.stack([jnp.asarray(True), self._reject_allowed(state, j)])
        return InspectorObservation(mask=mask, obs=self.features64(state).astype(jnp.float32))


def compat_features(
    t,
    submit,
    req,
    procs,
    nodes,
    free,
    rejections,
    queue_req,
    queue_valid,
    *,
    max_exec_time: float,
    num_procs: float,
    num_nodes: int,
) -> list:
    """The seven features of spec §3.4 of a proposed job (float64 scalars, in order): its wait
    ``t − submit``, requested time ``req``, processors ``procs``, the free nodes ``free``,
    whether its ``nodes`` fit, its ``rejections``, and the queue delays of the requested times
    ``queue_req`` (int ``[Q]``) where ``queue_valid`` (bool ``[Q]``). Shared by this
    environment and the online inspector of :mod:`jaxsched.envs.splitwindow_learned`."""
    qreq = queue_req.astype(jnp.float64)
    delay = jnp.sum(jnp.where(queue_valid, 600.0 / jnp.maximum(qreq, 10.0), 0.0)) / QDELAY_NORM
    return [
        jnp.minimum((t - submit).astype(jnp.float64) / HOURS12, C_CAP),
        jnp.minimum(req.astype(jnp.float64) / max_exec_time, C_CAP),
        jnp.minimum(procs.astype(jnp.float64) / num_procs, C_CAP),
        jnp.minimum(jnp.asarray(free).astype(jnp.float64) / num_nodes, C_CAP),
        jnp.where(nodes <= free, C_CAP, 1e-5),
        jnp.minimum(float(I.SKIP_TIME) * rejections / HOURS12, 1.0),
        jnp.minimum(delay, C_CAP),
    ]


# ----------------------------------------------------------------------------------------------
# sparse_cond branches (module level: they take every traced value as an operand)
# ----------------------------------------------------------------------------------------------
def _final_values(env, state):
    return env.inspected_values(state), env.base_values(state)


def _zero_values(env, state):
    z = {k: jnp.zeros((), jnp.float64) for k in METRICS}
    return z, dict(z)


# ----------------------------------------------------------------------------------------------
# Compiled entry points shared by every env of the same configuration
# ----------------------------------------------------------------------------------------------
#: ``jit_reset_at(env, start)``: :meth:`SchedInspectorEnv.reset_at`, compiled once per
#: configuration (the trace data are arguments).
jit_reset_at = jax.jit(lambda env, start: env.reset_at(start))
#: ``jit_step(env, state, action)``: :meth:`SchedInspectorEnv.step`, compiled.
jit_step = jax.jit(lambda env, state, action: env.step(state, action))
#: ``jit_features(env, state)``: float64 features (:meth:`SchedInspectorEnv.features64`).
jit_features = jax.jit(lambda env, state: env.features64(state))
#: ``jit_final(env, state)``: ``(inspected values, base values)`` of a state.
jit_final = jax.jit(lambda env, state: (env.inspected_values(state), env.base_values(state)))
