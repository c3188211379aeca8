"""RLScheduler's "pick a job" environment (SchedGym ``HPCEnv``) as a pure, vmappable JAX env.

The agent is asked for a decision at every scheduling point of the engine
(:mod:`jaxsched.sim.engine`): it sees up to ``max_queue`` waiting jobs, one feature row each,
and picks the observation slot of the job to commit. Everything between two decisions (arrivals,
releases, backfilling, the wait of a committed job that does not fit) runs inside ``step``.

API (jumanji-like; every method is pure and can be ``jit``-ed and ``vmap``-ed)::

    env = RLSchedulerEnv(jobs, length=256, backfill="none", metric="bsld")
    state, ts = env.reset(key)           # sampled sequence, first decision
    state, ts = env.step(state, action)  # action = observation slot (int)
    state, ts = env.reset_at(start)      # jobs start .. start+length-1 (evaluation)
    env = AutoResetWrapper(env)          # a finished episode is replaced by a fresh one

``ts`` is a :class:`TimeStep`: ``observation`` (:class:`Observation`: ``obs`` float32
``[max_queue, 8]``, ``mask`` bool ``[max_queue]``, ``critic_obs``), ``reward`` (float32),
``discount`` (float32: 0 at the end of the sequence, else 1), ``step_type`` (FIRST, MID,
LAST), ``extras`` (``metric``: float64 sequence metric once the episode is over, else 0;
``start``: the sequence's first trace index; ``decisions``: decisions taken so far).

Rules of the reference implemented here (spec ``rlscheduler.md``):

* **Sequence sampling** (§2.2): ``reset`` draws ``start`` uniformly from
  ``[length, U - length - 1)`` (upper bound excluded), U = number of loaded jobs, or
  ``job_slice`` (the reference's ``batch_job_slice``) when non-zero; the sequence is the
  ``length`` consecutive jobs ``start .. start+length-1`` on an idle cluster, clock at the first
  submit. The draw uses JAX's PRNG, so the distribution is the reference's but not its
  MT19937 stream; to replay the reference's exact sequences, draw the starts on the host with
  :func:`jaxsched.workload.reference_starts` and call ``reset_at``.
* **Visible jobs and slot order** (§2.9): at most ``max_queue`` waiting jobs are shown.
  When no more wait, all of them in (submit, index) order. When more wait:
  ``cutoff="reference"`` (the code): L1 = the first ``max_queue`` jobs in
  (q, s, f2, f1, index) order, L2 = the first ``max_queue`` in (n, s, q, f2, f1, index)
  order (f2 = sqrt(q)·n + 25600·log10(s), f1 = the F1 score), visible = L1[0], L2[0], L1[1],
  L2[1], ... with repeats skipped, in that order; ``cutoff="fcfs"`` (the paper): the first
  ``max_queue`` jobs in (submit, index) order.
* **Features** (§2.9), computed in float64 and stored as float32, C = 1 − 1e−5:
  ``min((t − s)/43200, C)``, ``min(q / max_exec_time, C)``, ``min(n / P, C)``, then memory,
  user, group, executable: ``1`` if the field is −1 else ``min(x / max_x, C)`` (``0`` where the
  reference would divide 0 by 0), and ``C`` if the job fits in the free nodes now else ``1e−5``.
  Empty slots are ``[0, 1, 1, 1, 1, 1, 1, 0]``.
* **Mask** (§2.10): True for slots holding a waiting job. An action on a masked or
  out-of-range slot schedules the job in slot 0 instead (the reference's policy cannot pick
  one: masked logits are −1e6).
* **Reward** (§3): 0 at every decision, at the last one −(sequence metric), or +metric for the
  utilisation metrics; metrics from :func:`jaxsched.sim.metrics.all_metrics` over all
  ``length`` jobs (backfilled ones included). ``fairness`` is the max over users of the
  per-user mean bounded slowdown (``HPCEnvFair`` with ``user_score_type`` 1); its extra
  observation feature is not implemented.
* **Critic observation** (§5.2): the reference's value network reads the same 128 × 8
  observation as the policy (its whole-sequence "critic observation" is dead code), so
  ``Observation.critic_obs`` is ``obs``.
* Backfill scan order of RL episodes (§2.8.3): (submit, index), i.e. the engine with static
  rank ``arange(length)``.

Trace data (the whole job list, as device arrays) is a pytree leaf of the env, so
``jax.jit(lambda env, s, a: env.step(s, a))`` takes it as an argument (one compile for every
env of the same configuration and trace length) while ``jax.jit(env.step)`` embeds it as a
constant. ``backfill``, ``compat``, ``cutoff`` and ``job_slice`` are leaves too (no
recompilation between them); ``length``, ``max_queue`` and ``metric`` are static.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

import jaxsched.sim  # noqa: F401  (turns on JAX's 64-bit mode)
from jaxsched.envs.batching import sparse_cond
from jaxsched.errors import ConfigError, as_int
from jaxsched.policies import heuristics as H
from jaxsched.sim import engine as E
from jaxsched.sim import metrics as M

__all__ = [
    "RLSchedulerEnv",
    "AutoResetWrapper",
    "EnvState",
    "Observation",
    "TimeStep",
    "FIRST",
    "MID",
    "LAST",
    "JOB_FEATURES",
    "MAX_WAIT_TIME",
    "PAD_ROW",
    "CUTOFFS",
    "static_features",
    "queue_orders",
    "schedule_nobf",
    "schedule_engine",
    "jit_reset",
    "jit_reset_at",
    "jit_step",
]

#: Features per job row (spec §2.9).
JOB_FEATURES = 8
#: Normaliser of the waiting-time feature: 12 hours.
MAX_WAIT_TIME = 12 * 60 * 60
_C = 1.0 - 1e-5
_EPS = 1e-5
#: The row of an empty observation slot.
PAD_ROW = (0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)
#: Cut-off rules when more than ``max_queue`` jobs wait.
CUTOFFS = ("reference", "fcfs")
#: Step types (dm_env / jumanji convention).
FIRST, MID, LAST = 0, 1, 2


# ----------------------------------------------------------------------------------------------
# Pytrees
# ----------------------------------------------------------------------------------------------
@struct.dataclass
class Observation:
    """What the agent sees at a decision.

    Attributes:
      obs: float32 ``[max_queue, 8]`` job rows (spec §2.9); ``obs.reshape(-1)`` is the
        reference's flat 1024-vector for ``max_queue = 128``.
      mask: bool ``[max_queue]``, True where the slot holds a waiting job (spec §2.10).
    """

    obs: jax.Array
    mask: jax.Array

    @property
    def critic_obs(self) -> jax.Array:
        """The value network's input (spec §5.2): the same rows as the policy, no mask."""
        return self.obs


@struct.dataclass
class TimeStep:
    """One transition's output. ``discount`` is 0 only when the sequence has ended
    (termination; episodes are never truncated)."""

    step_type: jax.Array
    reward: jax.Array
    discount: jax.Array
    observation: Observation
    extras: dict

    def first(self) -> jax.Array:
        return self.step_type == FIRST

    def mid(self) -> jax.Array:
        return self.step_type == MID

    def last(self) -> jax.Array:
        return self.step_type == LAST

    @property
    def done(self) -> jax.Array:
        """True when the episode is over (same as :meth:`last`)."""
        return self.step_type == LAST


@struct.dataclass
class EnvState:
    """Environment state of one episode.

    Attributes:
      sim: the engine's :class:`~jaxsched.sim.engine.SimState` (at a decision, or done).
      start: int32 trace index of the sequence's first job.
      vis: int32 ``[max_queue]`` queue slot (into ``sim.q_job``) shown in each observation
        slot, −1 for empty slots.
      decisions: int32 decisions taken in this episode.
      key: PRNG key for the next sampled sequence (used by :class:`AutoResetWrapper`).
    """

    sim: E.SimState
    start: jax.Array
    vis: jax.Array
    decisions: jax.Array
    key: jax.Array


@struct.dataclass
class _Data:
    """Device-side trace data (whole job list) and the run-time semantics."""

    submit: jax.Array  # int64 [M]
    run: jax.Array  # int64 [M]
    req: jax.Array  # int64 [M]
    procs: jax.Array  # int64 [M]
    nodes: jax.Array  # int32 [M]
    user: jax.Array  # int64 [M]
    feat: jax.Array  # float32 [M, 6]: the static features 1..6 of spec §2.9
    rank_fcfs: jax.Array  # int32 [M]: rank in (submit, index) order
    rank_l1: jax.Array  # int32 [M]: rank in the cut-off's L1 order (q, s, f2, f1, index)
    rank_l2: jax.Array  # int32 [M]: rank in the cut-off's L2 order (n, s, q, f2, f1, index)
    backfill: jax.Array  # int32 scalar
    compat: jax.Array  # bool scalar
    ref_cutoff: jax.Array  # bool scalar: True = the reference's cut-off, False = FCFS
    sample_low: jax.Array  # int32 scalar: reset draws starts from [sample_low, sample_high)
    sample_high: jax.Array
    accept: jax.Array  # bool [M]: starts the trajectory filter accepts (used if filtered)


@dataclasses.dataclass(frozen=True)
class _Config:
    length: int
    max_queue: int
    metric: str
    n_trace: int
    sample_ok: bool  # U - length - 1 > length: reset can sample a start
    queue_cap: int
    run_cap: int
    num_nodes: int
    num_procs: float
    index_order: bool  # submit times never decrease: (submit, index) order = index order
    filtered: bool = False  # reset draws among the starts of ``_Data.accept``


# ----------------------------------------------------------------------------------------------
# Host-side helpers
# ----------------------------------------------------------------------------------------------
def _ratio_feature(x: np.ndarray, denom: float, minus_one_is_one: bool) -> np.ndarray:
    x = x.astype(np.float64)
    if denom > 0:
        v = np.minimum(x / float(denom), _C)
    else:  # only 0 / 0 can happen (maxima are >= every value); the
        v = np.zeros_like(x)  # reference would raise ZeroDivisionError
    if minus_one_is_one:
        v = np.where(x == -1, 1.0, v)
    return v


def static_features(jobs) -> np.ndarray:
    """float64 ``[n_jobs, 6]``: features 1–6 of spec §2.9 (requested time, processors,
    memory, user, group, executable), which do not depend on the simulator state."""
    cols = [
        _ratio_feature(jobs.req_time, jobs.max_exec_time, False),
        _ratio_feature(jobs.procs, jobs.num_procs, False),
        _ratio_feature(jobs.req_mem, jobs.max_req_mem, True),
        _ratio_feature(jobs.user, jobs.max_user, True),
        _ratio_feature(jobs.group, jobs.max_group, True),
        _ratio_feature(jobs.executable, jobs.max_executable, True),
    ]
    return np.stack(cols, axis=1)


def queue_orders(jobs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int32 ``[n_jobs]`` ×3: the rank of every job of the trace in the FCFS order
    (submit, index) and in the two orders of the reference's cut-off (spec §2.9): L1 =
    (q, s, f2, f1, index), L2 = (n, s, q, f2, f1, index). All keys are static job attributes,
    so restricted to the jobs of one sequence each rank orders them exactly as the keys with
    the sequence index would. f1 and f2 are the heuristics' exact host keys (libm, as the
    reference); a NaN key (no square root of a negative time) sorts after every number."""
    q = np.asarray(jobs.req_time, np.int64)
    s = np.asarray(jobs.submit, np.int64)
    n = np.asarray(jobs.procs, np.int64)
    f1 = H.host_keys("f1", s, q, n)[0]
    f2 = H.host_keys("f2", s, q, n)[0]
    return H.rank_by((s,)), H.rank_by((q, s, f2, f1)), H.rank_by((n, s, q, f2, f1))


# ----------------------------------------------------------------------------------------------
# The environment
# ----------------------------------------------------------------------------------------------
@jax.tree_util.register_pytree_node_class
class RLSchedulerEnv:
    """SchedGym's job-picking environment over one loaded trace (see the module docstring).

    Args:
      jobs: a :class:`jaxsched.workload.swf.Jobs`, e.g.
        ``read_swf(path).jobs("rlscheduler")`` (must be in simulation order).
      length: jobs per sequence (256 = the reference's training length).
      backfill: ``"none"``, ``"rlscheduler"`` (the reference's greedy backfilling) or
        ``"easy"`` (true EASY, only with ``compat=False``).
      compat: True = the reference's semantics, False = the engine's correct mode.
      metric: a name of :data:`jaxsched.sim.metrics.METRICS` (bsld, sld, wait, turnaround,
        util, util_ref, util_busy, max_wait, makespan, fairness).
      max_queue: observation slots (MAX_QUEUE_SIZE, 128 in the reference).
      cutoff: ``"reference"`` or ``"fcfs"``: which jobs to show when more than ``max_queue``
        wait.
      job_slice: sample starts only from the first ``job_slice`` jobs (0 = all; the
        reference's ``batch_job_slice``).
      start_table: optional bool ``[n_jobs]``, the trajectory filter of spec §7
        (:meth:`jaxsched.train.filtering.TrajectoryFilter.start_table`): :meth:`reset` then
        draws starts uniformly among the accepted ones inside the sampling range (what the
        reference's redraw-until-accepted loop converges to). None: every start of the range.
    """

    def __init__(
        self,
        jobs,
        length: int = 256,
        backfill: str = "none",
        compat: bool = True,
        metric: str = "bsld",
        max_queue: int = 128,
        cutoff: str = "reference",
        job_slice: int = 0,
        start_table=None,
    ):
        length = as_int(length, "length", 1)
        max_queue = as_int(max_queue, "max_queue", 1)
        job_slice = as_int(job_slice, "job_slice", 0)
        bcode = E.backfill_code(backfill)
        if compat and bcode == E.BACKFILL_EASY:
            raise ConfigError(
                "backfill 'easy' is not part of the reference simulator; use compat=False"
            )
        if metric not in M.METRICS:
            raise ConfigError(f"unknown metric {metric!r}; choose from {', '.join(M.METRICS)}")
        if cutoff not in CUTOFFS:
            raise ConfigError(f"unknown cutoff {cutoff!r}; choose from {', '.join(CUTOFFS)}")
        m = jobs.n_jobs
        u = min(m, job_slice) if job_slice else m  # U of the sampling rule
        if length > m:
            raise ConfigError(f"sequence length {length} is longer than the trace ({m} jobs)")
        nodes = np.ceil(jobs.procs / jobs.procs_per_node).astype(np.int64)
        if (nodes > jobs.num_nodes).any():
            j = int(np.argmax(nodes > jobs.num_nodes))
            raise ConfigError(
                f"job {int(jobs.job_id[j])} needs {int(nodes[j])} nodes but the "
                f"machine has {jobs.num_nodes}; it could never start"
            )
        # at most `length` jobs wait or run; a job takes >= 1 node unless procs <= 0
        run_cap = min(length, int(jobs.num_nodes)) if (nodes >= 1).all() else length
        low, high = length, u - length - 1
        accept = np.zeros(m, bool)
        if start_table is not None:
            table = np.asarray(start_table)
            if table.shape != (m,) or table.dtype != np.bool_:
                raise ConfigError(
                    f"start_table must be bool [{m}] (one flag per loaded job), "
                    f"got {table.dtype} {table.shape}"
                )
            accept[max(low, 0) : max(high, 0)] = table[max(low, 0) : max(high, 0)]
            if u - length - 1 > length and not accept.any():
                raise ConfigError(
                    f"the trajectory filter accepts none of the starts "
                    f"[{low}, {high}); widen its bounds or switch it off"
                )
        self._config = _Config(
            length=length,
            max_queue=max_queue,
            metric=metric,
            n_trace=m,
            sample_ok=u - length - 1 > length,
            queue_cap=length,
            run_cap=max(run_cap, 1),
            num_nodes=int(jobs.num_nodes),
            num_procs=float(jobs.num_procs),
            index_order=bool(np.all(np.diff(np.asarray(jobs.submit)) >= 0)),
            filtered=start_table is not None,
        )
        r_fcfs, r_l1, r_l2 = queue_orders(jobs)
        i64 = lambda a: jnp.asarray(np.asarray(a, np.int64))  # noqa: E731
        self._data = _Data(
            submit=i64(jobs.submit),
            run=i64(jobs.run),
            req=i64(jobs.req_time),
            procs=i64(jobs.procs),
            nodes=jnp.asarray(nodes.astype(np.int32)),
            user=i64(jobs.user),
            feat=jnp.asarray(static_features(jobs).astype(np.float32)),
            rank_fcfs=jnp.asarray(r_fcfs),
            rank_l1=jnp.asarray(r_l1),
            rank_l2=jnp.asarray(r_l2),
            backfill=jnp.asarray(bcode, jnp.int32),
            compat=jnp.asarray(bool(compat)),
            ref_cutoff=jnp.asarray(cutoff == "reference"),
            sample_low=jnp.asarray(length, jnp.int32),
            sample_high=jnp.asarray(u - length - 1, jnp.int32),
            accept=jnp.asarray(accept),
        )

    # -- pytree protocol: the data are leaves, the configuration is static ------------------
    def tree_flatten(self):
        return (self._data,), self._config

    @classmethod
    def tree_unflatten(cls, config, children):
        obj = object.__new__(cls)
        obj._config = config
        obj._data = children[0]
        return obj

    # -- properties --------------------------------------------------------------------------
    @property
    def length(self) -> int:
        return self._config.length

    @property
    def max_queue(self) -> int:
        """Observation slots = number of actions."""
        return self._config.max_queue

    @property
    def num_actions(self) -> int:
        return self._config.max_queue

    @property
    def metric(self) -> str:
        return self._config.metric

    @property
    def cutoff(self) -> str:
        """``"reference"`` or ``"fcfs"`` (reads a device scalar: not under tracing)."""
        return "reference" if bool(self._data.ref_cutoff) else "fcfs"

    @property
    def n_trace(self) -> int:
        """Jobs in the loaded trace."""
        return self._config.n_trace

    @property
    def start_range(self) -> tuple[int, int]:
        """``(low, high)``: :meth:`reset` draws starts from ``low <= start < high``
        (spec §2.2: ``[length, U - length - 1)``)."""
        return int(self._data.sample_low), int(self._data.sample_high)

    @property
    def obs_shape(self) -> tuple[int, int]:
        return (self._config.max_queue, JOB_FEATURES)

    def __repr__(self) -> str:
        c = self._config
        return (
            f"RLSchedulerEnv(length={c.length}, max_queue={c.max_queue}, "
            f"metric={c.metric!r}, trace_jobs={c.n_trace})"
        )

    # -- the episode's workload ---------------------------------------------------------------
    def _sequence(self, start) -> E.Sequence:
        d, L = self._data, self._config.length
        cut = lambda a: jax.lax.dynamic_slice_in_dim(a, start, L)  # noqa: E731
        return E.Sequence(
            submit=cut(d.submit),
            run=cut(d.run),
            req=cut(d.req),
            procs=cut(d.procs),
            nodes=cut(d.nodes),
            n_jobs=jnp.asarray(L, jnp.int32),
            num_nodes=jnp.asarray(self._config.num_nodes, jnp.int32),
        )

    def _params(self) -> E.SimParams:
        return E.SimParams(
            policy=jnp.asarray(0, jnp.int32), backfill=self._data.backfill, compat=self._data.compat
        )

    # -- sampling and reset -------------------------------------------------------------------
    def sample_start(self, key) -> jax.Array:
        """A sequence start drawn as the reference's training ``reset`` does (spec §2.2):
        uniform over ``[length, U - length - 1)``, or over the starts there that the
        ``start_table`` accepts (spec §7)."""
        if not self._config.sample_ok:
            raise ConfigError(
                f"cannot sample sequences of {self.length} jobs: the reference draws starts "
                f"from [length, U - length - 1), which needs U >= {2 * self.length + 2} jobs "
                f"(U = the trace's jobs, or job_slice)"
            )
        d = self._data
        if self._config.filtered:
            from jaxsched.train.filtering import sample_accepted_starts

            return sample_accepted_starts(key, d.accept)
        return jax.random.randint(key, (), d.sample_low, d.sample_high, dtype=jnp.int32)

    def reset(self, key) -> tuple[EnvState, TimeStep]:
        """Start a sampled sequence; returns the state and timestep of the first decision."""
        key, sub = jax.random.split(key)
        return self._reset(self.sample_start(sub), key)

    def reset_at(self, start, key=None) -> tuple[EnvState, TimeStep]:
        """Start the sequence ``start .. start+length-1`` (0-based trace index; values outside
        ``[0, n_trace - length]`` are clipped into it; ``state.start`` holds the one used).
        ``key`` (default ``PRNGKey(0)``) is kept in the state for later auto-resets."""
        if isinstance(start, (int, np.integer)) and not 0 <= start <= self.n_trace - self.length:
            raise ConfigError(
                f"start {start} is outside [0, {self.n_trace - self.length}] "
                f"for sequences of {self.length} jobs"
            )
        if key is None:
            key = jax.random.PRNGKey(0)
        return self._reset(jnp.asarray(start, jnp.int32), key)

    def _reset(self, start, key) -> tuple[EnvState, TimeStep]:
        state = self._reset_state(start, key)
        obs = self._features(state.start, state.sim, state.vis)
        ts = TimeStep(
            step_type=jnp.asarray(FIRST, jnp.int8),
            reward=jnp.asarray(0.0, jnp.float32),
            discount=jnp.asarray(1.0, jnp.float32),
            observation=obs,
            extras=self._extras(state, jnp.asarray(False)),
        )
        return state, ts

    def _reset_state(self, start, key) -> EnvState:
        c = self._config
        start = jnp.clip(jnp.asarray(start, jnp.int32), 0, c.n_trace - c.length)
        seq = self._sequence(start)
        prank = jnp.arange(c.length, dtype=jnp.int32)  # RL backfill order: (submit, index)
        # the initial state is a scheduling point (queue = [first job] in slot 0, spec §2.2)
        sim = E.reset(seq, prank, c.queue_cap, c.run_cap)
        vis = jnp.full((c.max_queue,), -1, jnp.int32).at[0].set(0)
        return EnvState(sim=sim, start=start, vis=vis, decisions=jnp.asarray(0, jnp.int32), key=key)

    def _sampled_reset_state(self, key) -> EnvState:
        """The state :meth:`reset` returns for ``key``."""
        key, sub = jax.random.split(key)
        return self._reset_state(self.sample_start(sub), key)

    # -- step -----------------------------------------------------------------------------------
    def step(self, state: EnvState, action) -> tuple[EnvState, TimeStep]:
        """Commit the job shown in observation slot ``action`` and run the simulator to the
        next decision (or the end of the sequence). A step on a finished episode changes
        nothing and returns a LAST timestep with reward 0 (use :class:`AutoResetWrapper` to
        continue with a new sequence).

        Without backfilling the transition is computed in closed form by
        :func:`schedule_nobf` (no micro-step loop); with backfilling the engine's
        :func:`~jaxsched.sim.engine.schedule` runs it micro-step by micro-step. When the env's
        data are concrete (the env is closed over by the jitted function, as in
        ``jax.jit(env.step)`` or a training loop) only the needed path is compiled; when they
        are traced (the env is an argument, as in :data:`jit_step`) both are, behind a
        ``lax.cond`` on ``backfill`` (same results, slower: the cond's outputs are the whole
        simulator state, which XLA then materialises once more)."""
        new, out = self._transition(state, action)
        return new, self._timestep(new, out, self._features(new.start, new.sim, new.vis))

    def _transition(self, state: EnvState, action):
        """The new state and the timestep's fields other than the observation."""
        seq = self._sequence(state.start)
        MQ = self._config.max_queue
        a = jnp.asarray(action, jnp.int32)
        ok = (a >= 0) & (a < MQ)
        slot = state.vis[jnp.clip(a, 0, MQ - 1)]
        slot = jnp.maximum(jnp.where(ok & (slot >= 0), slot, state.vis[0]), 0)
        was_done = state.sim.done
        start = state.start

        def closed_form(sim):
            sim = schedule_nobf(seq, sim, slot)
            return sim, self._fcfs_order(start, sim, compact=True)

        def engine(sim):
            sim = schedule_engine(seq, self._params(), sim, slot)
            return sim, self._fcfs_order(start, sim, compact=False)

        bf = _concrete(self._data.backfill)
        if bf is None:
            sim, order = jax.lax.cond(
                self._data.backfill == E.BACKFILL_NONE, closed_form, engine, state.sim
            )
        else:
            sim, order = (closed_form if bf == E.BACKFILL_NONE else engine)(state.sim)
        vis = self._visible_from(start, sim, order)
        new = EnvState(
            sim=sim,
            start=start,
            vis=vis,
            decisions=state.decisions + (~was_done).astype(jnp.int32),
            key=state.key,
        )
        ended = sim.done & ~was_done
        # the metric is only needed once the episode is over: computed for those rows only
        value = sparse_cond(sim.done, _metric_fn, _zero_metric, self, start, sim.start)
        reward = jnp.where(ended, self._sign() * value, 0.0).astype(jnp.float32)
        return new, {"reward": reward, "done": sim.done, "value": value}

    def _timestep(self, state: EnvState, out: dict, obs: Observation) -> TimeStep:
        done = out["done"]
        return TimeStep(
            step_type=jnp.where(done, LAST, MID).astype(jnp.int8),
            reward=out["reward"],
            discount=jnp.where(done, 0.0, 1.0).astype(jnp.float32),
            observation=obs,
            extras=self._extras(state, done, out["value"]),
        )

    # -- metrics ---------------------------------------------------------------------------------
    def _metric_from(self, start, starts) -> jax.Array:
        c = self._config
        seq = self._sequence(start)
        users = None
        if c.metric == "fairness":
            users = jax.lax.dynamic_slice_in_dim(self._data.user, start, c.length)
        return M.all_metrics(
            seq.submit,
            seq.run,
            seq.procs,
            starts,
            jnp.ones(c.length, bool),
            c.num_procs,
            self._data.compat,
            users=users,
        )[c.metric].astype(jnp.float64)

    def _sign(self) -> float:
        return 1.0 if self._config.metric in M.HIGHER_IS_BETTER else -1.0

    def metric_value(self, state: EnvState) -> jax.Array:
        """float64 value of the env's metric for the schedule in ``state`` (final once the
        episode is over)."""
        return self._metric_from(state.start, state.sim.start)

    def terminal_reward(self, state: EnvState) -> jax.Array:
        """float32 reward the last step of a finished episode pays: −metric, or +metric for
        the utilisation metrics (spec §3)."""
        return (self._sign() * self.metric_value(state)).astype(jnp.float32)

    def _extras(self, state: EnvState, done, value=None) -> dict:
        if value is None:
            value = jnp.asarray(0.0, jnp.float64)
        return {
            "metric": jnp.where(done, value, 0.0).astype(jnp.float64),
            "start": state.start,
            "decisions": state.decisions,
        }

    # -- observation ----------------------------------------------------------------------------
    def _fcfs_order(self, start, sim: E.SimState, compact: bool) -> jax.Array:
        """int32 ``[max_queue]``: queue slots of the first waiting jobs in (submit, index)
        order (entries past ``n_q`` are unspecified). ``compact`` (static): the queue is in
        :func:`schedule_nobf`'s layout (waiting jobs in slots 0 .. n_q−1 by increasing index),
        so when submit times never decrease the order is the slots themselves."""
        c = self._config
        MQ, Q = c.max_queue, sim.q_job.shape[0]
        if compact and c.index_order:
            order = jnp.arange(min(Q, MQ), dtype=jnp.int32)
        else:
            qv = sim.q_job >= 0
            j = jnp.maximum(sim.q_job, 0)
            key = j if c.index_order else self._data.rank_fcfs[start + j]
            order = _order_by(jnp.where(qv, key, jnp.iinfo(jnp.int32).max), Q)[:MQ]
        if order.shape[0] < MQ:
            order = jnp.concatenate([order, jnp.zeros(MQ - order.shape[0], jnp.int32)])
        return order

    def _visible_from(self, start, sim: E.SimState, order) -> jax.Array:
        """The visible slots (−1 = empty) from the FCFS order; the reference's cut-off, when
        more than ``max_queue`` jobs wait, is computed only for the rows that need it."""
        c = self._config
        MQ, Q = c.max_queue, sim.q_job.shape[0]
        n_vis = jnp.minimum(sim.n_q, MQ)
        vis = jnp.where(jnp.arange(MQ) < n_vis, order, -1)
        if Q > MQ and _concrete(self._data.ref_cutoff) != 0:
            vis = sparse_cond(
                self._data.ref_cutoff & (sim.n_q > MQ),
                _interleave_fn,
                _keep_vis,
                self._data,
                start,
                sim.q_job,
                vis,
                chunk=16,
                loop=True,
            )
        return vis

    def _visible(self, start, sim: E.SimState) -> jax.Array:
        """int32 ``[max_queue]``: the queue slot shown in each observation slot (−1 = empty),
        for a queue in any slot layout."""
        return self._visible_from(start, sim, self._fcfs_order(start, sim, compact=False))

    def _observe(self, start, sim: E.SimState):
        vis = self._visible(start, sim)
        return vis, self._features(start, sim, vis)

    def _features(self, start, sim: E.SimState, vis) -> Observation:
        d = self._data
        valid = vis >= 0
        g = start + jnp.where(valid, sim.q_job[jnp.maximum(vis, 0)], 0)  # trace index
        wait = (sim.t - d.submit[g]).astype(jnp.float64) / float(MAX_WAIT_TIME)
        wait = jnp.minimum(wait, _C).astype(jnp.float32)
        canrun = jnp.where(d.nodes[g] <= sim.free, np.float32(_C), np.float32(_EPS))
        rows = jnp.concatenate([wait[:, None], d.feat[g], canrun[:, None]], axis=1)
        pad = jnp.asarray(np.asarray(PAD_ROW, np.float32))
        obs = jnp.where(valid[:, None], rows, pad[None, :]).astype(jnp.float32)
        return Observation(obs=obs, mask=valid)

    def observe(self, state: EnvState) -> Observation:
        """The observation of ``state`` (as returned in the last timestep)."""
        return self._observe(state.start, state.sim)[1]

    def visible_jobs(self, state: EnvState) -> jax.Array:
        """int32 ``[max_queue]``: the sequence index (0 .. length−1) of the job shown in each
        observation slot, −1 for empty slots."""
        vis = state.vis
        return jnp.where(vis >= 0, state.sim.q_job[jnp.maximum(vis, 0)], -1)


# ----------------------------------------------------------------------------------------------
# Observation and metric helpers (module level: sparse_cond branches take every traced value
# as an operand)
# ----------------------------------------------------------------------------------------------
def _concrete(x):
    """``int(x)`` when ``x`` is a concrete value (not traced), else None."""
    if isinstance(x, jax.core.Tracer):
        return None
    return int(x)


def _order_by(key, Q: int) -> jax.Array:
    """int32 ``[Q]``: the slots 0..Q−1 sorted by the non-negative int ``key`` (ties by slot),
    with ONE sort of packed int64 words (XLA's multi-operand sorts are several times slower
    on CPU)."""
    bits = max(1, (Q - 1).bit_length())
    packed = (key.astype(jnp.int64) << bits) | jnp.arange(Q, dtype=jnp.int64)
    return (jnp.sort(packed) & ((1 << bits) - 1)).astype(jnp.int32)


def _interleave(data: _Data, start, q_job, MQ: int) -> jax.Array:
    """The reference's cut-off (spec §2.9) for a queue of more than ``MQ`` jobs: L1 and L2
    are the first ``MQ`` waiting jobs by the static ranks ``rank_l1``/``rank_l2``; the visible
    list is L1[0], L2[0], L1[1], L2[1], ... with repeats skipped (the first ``MQ`` of it).

    Two sorts of packed (rank, slot) words give L1 and L2; the merged list's repeats are
    found with a scatter-min of positions, and the kept entries are compacted with a prefix
    count (an associative scan: XLA's ``cumsum`` is quadratic on CPU) and a scatter."""
    Q = q_job.shape[0]
    i32 = jnp.int32
    qv = q_job >= 0
    g = start + jnp.maximum(q_job, 0)
    bits = max(1, (Q - 1).bit_length())
    kt = i32 if (data.rank_l1.shape[0] + 1) << bits < 2**31 else jnp.int64
    big = jnp.asarray(data.rank_l1.shape[0], kt)  # above every rank
    slots = jnp.arange(Q, dtype=kt)
    low = (1 << bits) - 1

    def first(rank):
        key = (jnp.where(qv, rank[g].astype(kt), big) << bits) | slots
        return (jnp.sort(key)[:MQ] & low).astype(i32)

    merged = jnp.stack([first(data.rank_l1), first(data.rank_l2)], axis=1).reshape(-1)
    pos = jnp.arange(2 * MQ, dtype=i32)
    keep = jnp.full(Q, 2 * MQ, i32).at[merged].min(pos)[merged] == pos
    dest = jnp.where(keep, jax.lax.associative_scan(jnp.add, keep.astype(i32)) - 1, MQ)
    return jnp.zeros(MQ, i32).at[dest].set(merged, mode="drop")


def _interleave_fn(data, start, q_job, vis):
    return _interleave(data, start, q_job, vis.shape[0])


def _keep_vis(data, start, q_job, vis):
    return vis


def _metric_fn(env, start, starts):
    return env._metric_from(start, starts)


def _zero_metric(env, start, starts):
    return jnp.zeros((), jnp.float64)


def _fresh_state(env, state):
    """The auto-reset state: a new sampled sequence, drawn with ``state.key``."""
    return env._sampled_reset_state(state.key)


def _same_state(env, state):
    return state


# ----------------------------------------------------------------------------------------------
# Closed-form transition without backfilling
# ----------------------------------------------------------------------------------------------
def schedule_nobf(seq: E.Sequence, st: E.SimState, slot, enabled=True) -> E.SimState:
    """:func:`jaxsched.sim.engine.schedule` with ``backfill = none`` (both modes agree there)
    computed in closed form, for a state in this module's *no-backfill layout*: the waiting
    jobs fill queue slots ``0 .. n_q−1`` in increasing job index, and the running jobs fill
    slots ``0 .. n_r−1`` in release order (actual finish ``r_f``, then start order ``r_cnt``),
    ``r_cum`` their running node sum. :func:`jaxsched.sim.engine.reset` returns such a state
    and this function keeps the layout, which is a valid engine layout too (the engine's
    no-backfill semantics do not depend on slot positions).

    The decision is at a scheduling point, so nothing is committed: the chosen job ``j``
    (queue ``slot``) starts now if it fits. Otherwise it waits; the engine would then
    alternate arrivals (a job arrives when its submit time is <= the earliest finish; ties
    go to the arrival) and releases (in release order) until ``j`` fits, i.e. up to and
    including the first release after which the free nodes reach ``j``'s, at ``T`` = that
    release's finish: every job of the arrival prefix with submit <= T has arrived by then.
    ``j`` starts at ``max(t, T)``. If the queue is then empty and jobs are still to come, the
    engine releases every job that finishes before the next submit (in order, ``j`` included)
    and lets that job arrive: a new scheduling point. If the queue is empty and nothing is to
    come, the episode is over. The counters ``steps`` (micro-steps) and ``decisions`` are the
    engine's. The backfilling bookkeeping, which the engine reads only when it backfills
    (``cslot``, ``shadow``, ``nac``, ``q_b``, ``g_arr``), is left as it was. O(queue + running
    + length) work, no loop.
    """
    L = seq.submit.shape[0]
    Q, R = st.q_job.shape[0], st.r_job.shape[0]
    i32, i64 = jnp.int32, jnp.int64
    qi = jnp.arange(Q, dtype=i32)
    ri = jnp.arange(R, dtype=i32)
    li = jnp.arange(L, dtype=i32)
    active = ~st.done & enabled
    slot = jnp.clip(jnp.asarray(slot, i32), 0, Q - 1)
    j = jnp.maximum(st.q_job[slot], 0)
    kj = seq.nodes[j]
    fits = kj <= st.free
    rv = ri < st.n_r

    # --- j waits: releases in order up to the one that makes it fit, arrivals meanwhile
    crit = E._argmax_bool(rv & (st.free + st.r_cum >= kj))
    T = jnp.where(fits, st.t, st.r_f[crit])
    c_wait = jnp.where(fits, 0, crit + 1)
    beyond = (li >= st.next) & ((li >= seq.n_jobs) | (seq.submit > T))
    m_wait = jnp.where(fits, 0, jnp.min(jnp.where(beyond, li, L)) - st.next)
    t1 = jnp.maximum(st.t, T)
    nxt1 = st.next + m_wait
    nq1 = st.n_q - 1 + m_wait
    r_over = st.n_r - c_wait >= R

    # --- j starts at t1: its place in release order among the jobs running before the wait
    fj = t1 + seq.run[j]
    pos = jnp.sum(rv & (st.r_f <= fj)).astype(i32)
    done = (nq1 == 0) & (nxt1 >= seq.n_jobs)

    # --- empty queue: every release before the next submit, then that arrival
    idle = (nq1 == 0) & ~done
    sb = seq.submit[jnp.minimum(nxt1, L - 1)]
    n_before = (jnp.sum(rv & (st.r_f < sb)) + (fj < sb)).astype(i32)
    c = jnp.where(idle, n_before, c_wait)  # released: the first c of (running + j)
    t = jnp.where(idle, jnp.maximum(t1, sb), t1)
    m = m_wait + idle.astype(i32)
    n_q = nq1 + idle.astype(i32)
    nxt = st.next + m

    # --- running list: j inserted at pos, the first c dropped
    p = ri + c
    src = jnp.clip(jnp.where(p < pos, p, p - 1), 0, R - 1)
    at_j = p == pos
    n_r = st.n_r + 1 - c
    rvalid = ri < n_r

    def run_list(a, v, fill):
        return jnp.where(rvalid, jnp.where(at_j, v, a[src]), fill)

    cum_pos = jnp.where(pos > 0, st.r_cum[jnp.maximum(pos - 1, 0)], 0) + kj

    def merged_cum(q):  # running node sum of (running + j) at index q
        return jnp.where(
            q < pos,
            st.r_cum[jnp.clip(q, 0, R - 1)],
            jnp.where(q == pos, cum_pos, st.r_cum[jnp.clip(q - 1, 0, R - 1)] + kj),
        )

    released = jnp.where(c > 0, merged_cum(c - 1), 0)
    r_cum = jnp.where(
        rvalid,
        jnp.where(at_j, cum_pos, jnp.where(p < pos, st.r_cum[src], st.r_cum[src] + kj)) - released,
        0,
    )

    # --- queue: slot removed, the m arrivals appended (jobs next .. next+m-1)
    n_keep = st.n_q - 1
    kept = jnp.where(qi < slot, st.q_job, jnp.roll(st.q_job, -1))
    q_job = jnp.where(
        qi < n_keep, kept, jnp.where(qi < n_keep + m, st.next + qi - n_keep, -1)
    ).astype(i32)
    qj = jnp.maximum(q_job, 0)
    qv = q_job >= 0

    new = st.replace(
        t=t.astype(i64),
        free=(st.free - kj + released).astype(i32),
        next=nxt.astype(i32),
        q_job=q_job,
        q_k=jnp.where(qv, seq.nodes[qj], 0).astype(st.q_k.dtype),
        q_req=jnp.where(qv, E._req32(seq.req[qj]), 0).astype(st.q_req.dtype),
        q_s=jnp.where(qv, seq.submit[qj], 0).astype(st.q_s.dtype),
        q_rank=jnp.where(qv, st.prank[qj], 0).astype(st.q_rank.dtype),
        n_q=n_q.astype(i32),
        r_job=run_list(st.r_job, j, -1),
        r_f=run_list(st.r_f, fj, 0),
        r_e=run_list(st.r_e, t1 + seq.req[j], 0),
        r_k=run_list(st.r_k, kj, 0),
        r_flag=run_list(st.r_flag, False, False),
        r_cnt=run_list(st.r_cnt, st.cnt, 0),
        r_cum=r_cum.astype(i32),
        n_r=n_r.astype(i32),
        cj=jnp.asarray(-1, i32),
        cnt=st.cnt + 1,
        start=st.start.at[j].set(t1),
        done=done | r_over,
        overflow=st.overflow | (2 * r_over.astype(i32)),
        decisions=st.decisions + 1,
        steps=(
            st.steps
            + 1
            + jnp.where(fits, 0, m_wait + c_wait + 1)
            + jnp.where(idle, c - c_wait + 1, 0)
        ).astype(i32),
    )
    return jax.tree_util.tree_map(lambda x, y: jnp.where(active, x, y), new, st)


# ----------------------------------------------------------------------------------------------
# Engine transition with batch compaction
# ----------------------------------------------------------------------------------------------
def _needs_more(st: E.SimState) -> jax.Array:
    return ~st.done & ~E.at_decision(st)


@jax.custom_batching.custom_vmap
def schedule_engine(seq: E.Sequence, params: E.SimParams, st: E.SimState, slot) -> E.SimState:
    """:func:`jaxsched.sim.engine.schedule` (the same result), with a batching rule for
    ``vmap``: a vmapped ``while_loop`` runs every environment of the batch until the slowest
    one reaches its next decision, although most need a few micro-steps and a few need
    hundreds. The rule instead runs the decision micro-step for the whole batch, then
    micro-steps only the rows that still need them, in stages: whenever at most a quarter of
    the current rows still run, they are gathered into a batch four times smaller (down to 4
    rows; rows that are done or at a decision are left as they are) and the results are
    scattered back. Same results, micro-step by micro-step; about ten times faster for a
    batch of 64 to 256 environments with backfilling."""
    return E.schedule(seq, params, st, slot)


#: batch shrink factor between the stages of :func:`schedule_engine`'s batching rule, and the
#: size of its last stage
_SHRINK, _LAST_STAGE = 4, 4


def _stage_sizes(B: int):
    """Batch sizes of the stages: B, B/4, B/16, ... down to a last stage of at most 4 rows
    (each stage compiles its own copy of the micro-step)."""
    sizes = [B]
    while sizes[-1] > _LAST_STAGE:
        sizes.append(max(_LAST_STAGE, sizes[-1] // _SHRINK))
    return sizes


@schedule_engine.def_vmap
def _schedule_engine_rule(axis_size, in_batched, seq, params, st, slot):
    B = axis_size
    seq_b, params_b, st_b, slot_b = in_batched
    bcast = lambda x, b: x if b else jnp.broadcast_to(x, (B,) + jnp.shape(x))  # noqa: E731
    seq = jax.tree_util.tree_map(bcast, seq, seq_b)
    st = jax.tree_util.tree_map(bcast, st, st_b)
    slot = bcast(jnp.asarray(slot, jnp.int32), slot_b)
    p_axes = jax.tree_util.tree_map(lambda b: 0 if b else None, params_b)
    micro = jax.vmap(E.micro_step, in_axes=(0, p_axes, 0, 0))
    sizes = _stage_sizes(B)

    def take(tree, idx):
        return jax.tree_util.tree_map(lambda x: x[idx], tree)

    def drain(seq, params, st, level):
        """Micro-steps the rows of ``st`` (``sizes[level]`` of them) that need more."""
        K = sizes[level]
        nxt = sizes[level + 1] if level + 1 < len(sizes) else 0
        zero = jnp.zeros((K,), jnp.int32)

        def cond(s):
            n = jnp.sum(_needs_more(s).astype(jnp.int32))
            return (n > nxt) | ((nxt == 0) & (n > 0))

        def body(s):
            go = _needs_more(s)
            new = micro(seq, params, s, zero)
            return jax.tree_util.tree_map(
                lambda a, b: jnp.where(go.reshape(go.shape + (1,) * (a.ndim - 1)), a, b), new, s
            )

        st = jax.lax.while_loop(cond, body, st)
        if nxt == 0:
            return st
        go = _needs_more(st)

        def compact(st):
            key = jnp.where(go, jnp.arange(K, dtype=jnp.int32), K)
            idx = -jax.lax.top_k(-key, nxt)[0]  # the rows still running (K = none)
            safe = jnp.minimum(idx, K - 1)
            sub = take(st, safe)
            sub = sub.replace(done=sub.done | (idx >= K))  # padding rows: never stepped
            p_sub = jax.tree_util.tree_map(lambda x, b: x[safe] if b else x, params, params_b)
            sub = drain(take(seq, safe), p_sub, sub, level + 1)
            sub = sub.replace(done=jnp.where(idx >= K, st.done[safe], sub.done))
            return jax.tree_util.tree_map(lambda a, b: a.at[idx].set(b, mode="drop"), st, sub)

        return jax.lax.cond(jnp.any(go), compact, lambda s: s, st)

    st = micro(seq, params, st, slot)  # the decision itself
    out = drain(seq, params, st, 0)
    return out, jax.tree_util.tree_map(lambda _: True, out)


# ----------------------------------------------------------------------------------------------
# Auto-reset
# ----------------------------------------------------------------------------------------------
class AutoResetWrapper:
    """Continue with a freshly sampled sequence whenever an episode ends (jumanji's
    ``AutoResetWrapper`` / gymnax's select-based auto-reset).

    ``step`` returns the terminal transition's ``reward``, ``discount`` (0), ``step_type``
    (LAST) and ``extras`` (the finished episode's ``metric`` and ``start``), but the state and
    the observation of the *new* episode's first decision, so ``jax.lax.scan`` over ``step``
    can run forever. The new start is drawn with ``state.key`` (which is split). Under
    ``vmap`` the reset state is computed only for the environments whose episode ended
    (:func:`~jaxsched.envs.batching.sparse_cond`; selecting a fresh state for every row at
    every step used to cost as much as the step itself), then the observation is built once,
    from the new state.
    """

    def __init__(self, env: RLSchedulerEnv):
        self.env = env

    def __getattr__(self, name: str) -> Any:
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, key) -> tuple[EnvState, TimeStep]:
        return self.env.reset(key)

    def reset_at(self, start, key=None) -> tuple[EnvState, TimeStep]:
        return self.env.reset_at(start, key)

    def step(self, state: EnvState, action) -> tuple[EnvState, TimeStep]:
        env = self.env
        new, out = env._transition(state, action)
        # the terminal timestep's reward, discount, step type and extras are the finished
        # episode's; its state and observation are the next episode's first decision
        nxt = sparse_cond(out["done"], _fresh_state, _same_state, env, new)
        return nxt, env._timestep(new, out, env._features(nxt.start, nxt.sim, nxt.vis))


jax.tree_util.register_pytree_node(
    AutoResetWrapper, lambda w: ((w.env,), None), lambda _, ch: AutoResetWrapper(ch[0])
)


# ----------------------------------------------------------------------------------------------
# Compiled entry points shared by every env of the same configuration
# ----------------------------------------------------------------------------------------------
#: ``jit_reset(env, key)``: :meth:`RLSchedulerEnv.reset`, compiled once per env configuration
#: (the env's trace data are arguments, not constants).
jit_reset = jax.jit(lambda env, key: env.reset(key))
#: ``jit_reset_at(env, start)``: :meth:`RLSchedulerEnv.reset_at`, compiled.
jit_reset_at = jax.jit(lambda env, start: env.reset_at(start))
#: ``jit_step(env, state, action)``: :meth:`RLSchedulerEnv.step`, compiled.
jit_step = jax.jit(lambda env, state, action: env.step(state, action))
