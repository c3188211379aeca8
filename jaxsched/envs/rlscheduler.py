"""RLScheduler's "pick a job" environment (SchedGym ``HPCEnv``) as a pure, vmappable JAX env.

The agent is asked for a decision at every scheduling point of the engine
(:mod:`jaxsched.sim.engine`): it sees up to ``max_queue`` waiting jobs, one feature row each,
and picks the observation slot of the job to commit. Everything between two decisions (arrivals,
releases, backfilling, the wait of a committed job that does not fit) runs inside ``step``.

API (the contract of :mod:`jaxsched.envs.core`; every method is pure and can be ``jit``-ed
and ``vmap``-ed)::

    env = RLSchedulerEnv(jobs, length=256, backfill="none", metric="bsld")
    state, ts = env.reset(key)           # sampled sequence, first decision
    state, ts = env.step(state, action)  # action = observation slot (int)
    state, ts = env.reset_at(start)      # jobs start .. start+length-1 (evaluation)
    env = AutoResetWrapper(env)          # a finished episode is replaced by a fresh one

``ts`` is a :class:`~jaxsched.envs.core.TimeStep`: ``observation`` (:class:`Observation`:
``obs`` float32 ``[max_queue, 8]``, ``mask`` bool ``[max_queue]``, ``critic_obs``), ``reward``
(float32), ``discount`` (float32: 0 at the end of the sequence, else 1), ``step_type`` (FIRST,
MID, LAST), ``terminated`` (True at the end of the sequence), ``truncated`` (always False),
``extras`` (``metric``: float64 sequence metric once the episode is over, else 0; ``start``:
the sequence's first trace index; ``decisions``: decisions taken so far).

This module holds the decision protocol, the observation and the reward; the engine's fast
transitions are :func:`jaxsched.sim.nobf.schedule_nobf` (no backfilling, closed form) and
:func:`jaxsched.sim.batching.schedule_engine` (micro-steps, compacting batching rule), the
feature and cut-off helpers :mod:`jaxsched.envs.rlscheduler_features`.

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
  observation feature is ``user_feature=True`` (below).
* **Critic observation** (§5.2): the reference's value network reads the same 128 × 8
  observation as the policy (its whole-sequence "critic observation" is dead code), so
  ``Observation.critic_obs`` is ``obs``.
* Backfill scan order of RL episodes (§2.8.3): (submit, index), i.e. the engine with static
  rank ``arange(length)``.

Trace data (the whole job list, as device arrays) is a pytree leaf of the env, so
``jax.jit(lambda env, s, a: env.step(s, a))`` takes it as an argument (one compile for every
env of the same configuration and trace length) while ``jax.jit(env.step)`` embeds it as a
constant. ``backfill``, ``compat``, ``cutoff`` and ``job_slice`` are leaves too (no
recompilation between them); ``length``, ``max_queue``, ``metric`` and ``user_feature`` are
static.

``user_feature=True`` adds the fairness environment's ninth feature (the reference's
``HPCEnvFair``, spec §3's fairness variant): per visible job, how far its user's mean bounded
slowdown so far lies below the worst user's (:func:`~jaxsched.envs.rlscheduler_features.user_info`).
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
from jaxsched.envs.rlscheduler_features import (
    CUTOFFS,
    JOB_FEATURES,
    USER_JOB_FEATURES,
    _concrete,
    dense_users,
    fcfs_order,
    job_rows,
    prior_column,
    prior_order,
    prior_rank,
    queue_orders,
    static_features,
    user_info,
    visible_slots,
)
from jaxsched.envs.starts import sample_accepted_starts
from jaxsched.errors import ConfigError, as_int
from jaxsched.sim import engine as E
from jaxsched.sim import metrics as M
from jaxsched.sim.batching import schedule_engine, sparse_cond
from jaxsched.sim.nobf import schedule_nobf
from jaxsched.sim.types import sequence_window
from jaxsched.workload.capacity import running_capacity

__all__ = ["RLSchedulerEnv", "EnvState", "Observation", "jit_reset", "jit_reset_at", "jit_step"]

# The observation rows and visible-slot rules are in envs/rlscheduler_features.py; the
# engine fast paths in sim/nobf.py and sim/batching.py; the auto-reset in envs/wrappers.py.


# ----------------------------------------------------------------------------------------------
# Pytrees
# ----------------------------------------------------------------------------------------------
@struct.dataclass
class Observation(core.Observation):
    """What the agent sees at a decision.

    Attributes:
      mask: bool ``[max_queue]``, True where the slot holds a waiting job (spec §2.10).
      obs: float32 ``[max_queue, 8]`` job rows (spec §2.9; ``[max_queue, 9]`` with the
        fairness environment's user feature); ``obs.reshape(-1)`` is the reference's flat
        1024-vector for ``max_queue = 128``.
    """

    obs: jax.Array

    @property
    def critic_obs(self) -> jax.Array:
        """The value network's input (spec §5.2): the same rows as the policy, no mask."""
        return self.obs


@struct.dataclass
class EnvState:
    """Environment state of one episode.

    Attributes:
      sim: the engine's :class:`~jaxsched.sim.engine.SimState` (at a decision, or done).
      start: int32 trace index of the sequence's first job.
      visible_slots: int32 ``[max_queue]`` queue slot (into ``sim.queue_job``) shown in each
        observation slot, −1 for empty slots.
      decisions: int32 decisions taken in this episode.
      key: PRNG key for the next sampled sequence (used by :class:`AutoResetWrapper` through
        :meth:`~jaxsched.envs.core.Environment.next_episode`).
    """

    sim: E.SimState
    start: jax.Array
    visible_slots: jax.Array
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
    user_dense: jax.Array  # int32 [M]: the user as an index 0 .. n_users-1
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
    rank_prior: jax.Array  # int32 [M]: rank in the residual prior's order (zeros without one)


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
    user_feature: bool = False  # the fairness environment's ninth feature
    n_users: int = 1  # distinct users of the trace (bins of the per-user feature)
    prior: bool = False  # a residual prior: its order, cut-off and column (``prior=``)


# ----------------------------------------------------------------------------------------------
# The environment
# ----------------------------------------------------------------------------------------------
class RLSchedulerEnv(Environment):
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
        (:meth:`jaxsched.systems.rlscheduler.filtering.TrajectoryFilter.start_table`): :meth:`reset` then
        draws starts uniformly among the accepted ones inside the sampling range (what the
        reference's redraw-until-accepted loop converges to). None: every start of the range.
      user_feature: add the per-user feature of the reference's fairness environment
        (``HPCEnvFair``): observation rows of 9 features instead of 8.
      prior: a static heuristic (``"f1"``, ``"sjf"``, ``"tuned:PATH"``, ...;
        :func:`~jaxsched.envs.rlscheduler_features.prior_rank`) for a residual policy
        (issue 49), or ``""`` (default: none). With a prior the visible jobs are the prior's
        first ``max_queue`` waiting jobs (its own cut-off; ``cutoff`` is not used), laid out
        in the prior's order (slot 0 = the job the heuristic would pick), each row gets one
        more last feature, the prior column (slot i: ``i / 128``, empty slots 1), and the
        sequence's static policy rank (the reference semantics' backfill order among jobs
        submitted at the same second) is the prior's, as in the heuristic's own runs. So a
        policy that always picks slot 0 schedules exactly as the heuristic does.

    Contract hooks (:mod:`jaxsched.envs.core`): :meth:`init_state`, :meth:`init_state_at`,
    :meth:`transition`, :meth:`observe`, :meth:`reset_extras`; ``reset``, ``reset_at`` and
    ``step`` are the base class's.
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
        user_feature: bool = False,
        prior: str = "",
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
        nodes = jobs.node_demand
        if (nodes > jobs.num_nodes).any():
            j = int(np.argmax(nodes > jobs.num_nodes))
            raise ConfigError(
                f"job {int(jobs.job_id[j])} needs {int(nodes[j])} nodes but the "
                f"machine has {jobs.num_nodes}; it could never start"
            )
        # the most jobs that can run at once in any sequence (Lublin-1, 256 jobs: 135 of 256)
        run_cap = running_capacity(nodes, int(jobs.num_nodes), length)
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
        # the per-user feature's bins (only computed when it is on)
        user_dense, n_users = dense_users(jobs.user) if user_feature else (np.zeros(m, np.int32), 1)
        self._config = _Config(
            length=length,
            max_queue=max_queue,
            metric=metric,
            n_trace=m,
            sample_ok=u - length - 1 > length,
            queue_cap=length,
            run_cap=run_cap,
            num_nodes=int(jobs.num_nodes),
            num_procs=float(jobs.num_procs),
            index_order=bool(np.all(np.diff(np.asarray(jobs.submit)) >= 0)),
            filtered=start_table is not None,
            user_feature=bool(user_feature),
            n_users=n_users,
            prior=bool(prior),
        )
        rank_prior = prior_rank(jobs, prior, compat) if prior else np.zeros(m, np.int32)
        r_fcfs, r_l1, r_l2 = queue_orders(jobs)
        i64 = lambda a: jnp.asarray(np.asarray(a, np.int64))  # noqa: E731
        self._data = _Data(
            submit=i64(jobs.submit),
            run=i64(jobs.run),
            req=i64(jobs.req_time),
            procs=i64(jobs.procs),
            nodes=jnp.asarray(nodes.astype(np.int32)),
            user=i64(jobs.user),
            user_dense=jnp.asarray(user_dense),
            feat=jnp.asarray(static_features(jobs).astype(np.float32)),
            rank_fcfs=jnp.asarray(r_fcfs),
            rank_l1=jnp.asarray(r_l1),
            rank_l2=jnp.asarray(r_l2),
            backfill=jnp.asarray(bcode, jnp.int32),
            compat=jnp.asarray(bool(compat)),
            ref_cutoff=jnp.asarray(cutoff == "reference" and not prior),
            sample_low=jnp.asarray(length, jnp.int32),
            sample_high=jnp.asarray(u - length - 1, jnp.int32),
            accept=jnp.asarray(accept),
            rank_prior=jnp.asarray(rank_prior),
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
    def user_feature(self) -> bool:
        """True when the rows carry the fairness environment's per-user feature."""
        return self._config.user_feature

    @property
    def prior(self) -> bool:
        """True when the env has a residual prior (its order and its last column)."""
        return self._config.prior

    @property
    def obs_shape(self) -> tuple[int, int]:
        nf = USER_JOB_FEATURES if self._config.user_feature else JOB_FEATURES
        return (self._config.max_queue, nf + int(self._config.prior))

    def __repr__(self) -> str:
        c = self._config
        return (
            f"RLSchedulerEnv(length={c.length}, max_queue={c.max_queue}, "
            f"metric={c.metric!r}, trace_jobs={c.n_trace}"
            + (", user_feature=True" if c.user_feature else "")
            + (", prior=True)" if c.prior else ")")
        )

    # -- the episode's workload ---------------------------------------------------------------
    def _sequence(self, start) -> E.Sequence:
        c = self._config
        return sequence_window(self._data, start, c.length, c.num_nodes)

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
            return sample_accepted_starts(key, d.accept)
        return jax.random.randint(key, (), d.sample_low, d.sample_high, dtype=jnp.int32)

    def init_state(self, key) -> EnvState:
        """The first decision of a sampled sequence (the state :meth:`reset` returns)."""
        key, sub = jax.random.split(key)
        return self._reset_state(self.sample_start(sub), key)

    def init_state_at(self, start, key=None) -> EnvState:
        """The first decision of the sequence ``start .. start+length-1`` (0-based trace
        index; values outside ``[0, n_trace - length]`` are clipped into it; ``state.start``
        holds the one used). ``key`` (default ``PRNGKey(0)``) is kept in the state for later
        auto-resets."""
        if isinstance(start, (int, np.integer)) and not 0 <= start <= self.n_trace - self.length:
            raise ConfigError(
                f"start {start} is outside [0, {self.n_trace - self.length}] "
                f"for sequences of {self.length} jobs"
            )
        if key is None:
            key = jax.random.PRNGKey(0)
        return self._reset_state(jnp.asarray(start, jnp.int32), key)

    def _reset_state(self, start, key) -> EnvState:
        c = self._config
        start = jnp.clip(jnp.asarray(start, jnp.int32), 0, c.n_trace - c.length)
        seq = self._sequence(start)
        prank = jnp.arange(c.length, dtype=jnp.int32)  # RL backfill order: (submit, index)
        if c.prior:  # the prior's rank within the sequence (its trace ranks are distinct)
            g = jax.lax.dynamic_slice_in_dim(self._data.rank_prior, start, c.length)
            prank = jnp.zeros(c.length, jnp.int32).at[jnp.argsort(g)].set(prank)
        # the initial state is a scheduling point (queue = [first job] in slot 0, spec §2.2)
        sim = E.reset(seq, prank, c.queue_cap, c.run_cap)
        vis = jnp.full((c.max_queue,), -1, jnp.int32).at[0].set(0)
        return EnvState(
            sim=sim, start=start, visible_slots=vis, decisions=jnp.asarray(0, jnp.int32), key=key
        )

    def reset_extras(self, state: EnvState) -> dict:
        return self._extras(state, jnp.asarray(False))

    # -- step -----------------------------------------------------------------------------------
    def transition(self, state: EnvState, action):
        """Commit the job shown in observation slot ``action`` and run the simulator to the
        next decision (or the end of the sequence): ``(state, reward, terminated, truncated,
        extras)``. On a finished episode nothing changes (reward 0, terminated; use
        :class:`AutoResetWrapper` to continue with a new sequence). An action on a masked or
        out-of-range slot schedules the job in slot 0.

        Without backfilling the transition is computed in closed form by
        :func:`~jaxsched.sim.nobf.schedule_nobf` (no micro-step loop); with backfilling the
        engine runs it micro-step by micro-step
        (:func:`~jaxsched.sim.batching.schedule_engine`). When the env's data are concrete
        (the env is closed over by the jitted function, as in ``jax.jit(env.step)`` or a
        training loop) only the needed path is compiled; when they are traced (the env is an
        argument, as in :data:`jit_step`) both are, behind a ``lax.cond`` on ``backfill``
        (same results, slower: the cond's outputs are the whole simulator state, which XLA
        then materialises once more)."""
        seq = self._sequence(state.start)
        slot = self._slot_of(state, action)
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
            visible_slots=vis,
            decisions=state.decisions + (~was_done).astype(jnp.int32),
            key=state.key,
        )
        return self._outcome(new, was_done)

    def _slot_of(self, state: EnvState, action) -> jax.Array:
        """int32 queue slot of the job shown in observation slot ``action`` (slot 0's job for
        a masked or out-of-range action)."""
        MQ = self._config.max_queue
        a = jnp.asarray(action, jnp.int32)
        ok = (a >= 0) & (a < MQ)
        slot = state.visible_slots[jnp.clip(a, 0, MQ - 1)]
        return jnp.maximum(jnp.where(ok & (slot >= 0), slot, state.visible_slots[0]), 0)

    def _outcome(self, new: EnvState, was_done):
        """``(new, reward, terminated, truncated, extras)`` of a transition that led to
        ``new`` (``was_done``: the episode was over before it)."""
        sim, start = new.sim, new.start
        ended = sim.done & ~was_done
        # the metric is only needed once the episode is over: computed for those rows only
        value = sparse_cond(sim.done, _metric_fn, _zero_metric, self, start, sim.start)
        reward = jnp.where(ended, self._sign() * value, 0.0).astype(jnp.float32)
        done = sim.done
        return new, reward, done, jnp.zeros_like(done), self._extras(new, done, value)

    # -- asynchronous rows (jaxsched.train.async_rollout's protocol) -----------------------------
    @property
    def async_ok(self) -> bool:
        """True when the transition is micro-stepped (backfilling on, data concrete)."""
        bf = _concrete(self._data.backfill)
        return bf is not None and bf != E.BACKFILL_NONE

    def async_observe(self, state: EnvState):
        """At a decision: ``(state with its visible slots, observation)``."""
        vis = self._visible(state.start, state.sim)
        state = state.replace(visible_slots=vis)
        return state, self._features(state.start, state.sim, vis)

    def async_decide(self, state: EnvState, action) -> EnvState:
        """The decision's micro-step (the first of :func:`~jaxsched.sim.engine.schedule`)."""
        seq = self._sequence(state.start)
        sim = E.micro_step(seq, self._params(), state.sim, self._slot_of(state, action))
        return state.replace(sim=sim)

    def async_pending(self, state: EnvState) -> jax.Array:
        """bool: the transition needs more micro-steps."""
        return ~state.sim.done & ~E.at_decision(state.sim)

    def async_drain(self, state: EnvState) -> EnvState:
        """One more micro-step of the transition."""
        seq = self._sequence(state.start)
        zero = jnp.asarray(0, jnp.int32)
        return state.replace(sim=E.micro_step(seq, self._params(), state.sim, zero))

    def async_finish(self, state: EnvState, arrived):
        """The end of the transition where ``arrived`` (bool) holds, as :meth:`transition`'s
        (visible slots are computed by :meth:`async_observe`); elsewhere the state is kept."""
        new = state.replace(decisions=state.decisions + jnp.asarray(arrived, jnp.int32))
        return self._outcome(new, jnp.asarray(False))

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
        c = self._config
        if c.prior:
            return prior_order(sim, c.max_queue)
        return fcfs_order(self._data, start, sim, c.max_queue, c.index_order, compact)

    def _visible_from(self, start, sim: E.SimState, order) -> jax.Array:
        return visible_slots(self._data, start, sim, order)

    def _visible(self, start, sim: E.SimState) -> jax.Array:
        """int32 ``[max_queue]``: the queue slot shown in each observation slot (−1 = empty),
        for a queue in any slot layout."""
        return self._visible_from(start, sim, self._fcfs_order(start, sim, compact=False))

    def _features(self, start, sim: E.SimState, vis) -> Observation:
        col = self._user_col(start, sim, vis) if self._config.user_feature else None
        obs, mask = job_rows(self._data, start, sim, vis, col)
        if self._config.prior:
            obs = jnp.concatenate([obs, prior_column(mask)[:, None]], axis=1)
        return Observation(obs=obs, mask=mask)

    def _user_col(self, start, sim: E.SimState, vis) -> jax.Array:
        """float64 ``[max_queue]``: the per-user feature of the visible jobs."""
        c, d = self._config, self._data
        seq = self._sequence(start)
        users = jax.lax.dynamic_slice_in_dim(d.user_dense, start, c.length)
        job = jnp.where(vis >= 0, sim.queue_job[jnp.maximum(vis, 0)], 0)
        return user_info(users, seq.submit, seq.run, sim.start, users[job], c.n_users)

    def observe(self, state: EnvState) -> Observation:
        """The observation of ``state`` (as returned in its timestep): the rows of the jobs in
        the visible slots ``state.visible_slots``."""
        return self._features(state.start, state.sim, state.visible_slots)

    def recompute_observation(self, state: EnvState) -> Observation:
        """:meth:`observe` with the visible slots recomputed from the queue (sorts and the
        cut-off; the same result, for tests)."""
        return self._features(state.start, state.sim, self._visible(state.start, state.sim))

    def visible_jobs(self, state: EnvState) -> jax.Array:
        """int32 ``[max_queue]``: the sequence index (0 .. length−1) of the job shown in each
        observation slot, −1 for empty slots."""
        vis = state.visible_slots
        return jnp.where(vis >= 0, state.sim.queue_job[jnp.maximum(vis, 0)], -1)


# ----------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------
# Module-level helpers (sparse_cond branches take every traced value as an operand)
# ----------------------------------------------------------------------------------------------
def _metric_fn(env, start, starts):
    return env._metric_from(start, starts)


def _zero_metric(env, start, starts):
    return jnp.zeros((), jnp.float64)


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
