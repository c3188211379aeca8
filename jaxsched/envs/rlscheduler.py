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
from typing import Any, Tuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

import jaxsched.sim  # noqa: F401  (turns on JAX's 64-bit mode)
from jaxsched.errors import ConfigError
from jaxsched.sim import engine as E
from jaxsched.sim import metrics as M

__all__ = [
    "RLSchedulerEnv", "AutoResetWrapper", "EnvState", "Observation", "TimeStep",
    "FIRST", "MID", "LAST", "JOB_FEATURES", "MAX_WAIT_TIME", "PAD_ROW", "CUTOFFS",
    "static_features", "jit_reset", "jit_reset_at", "jit_step",
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
    submit: jax.Array      # int64 [M]
    run: jax.Array         # int64 [M]
    req: jax.Array         # int64 [M]
    procs: jax.Array       # int64 [M]
    nodes: jax.Array       # int32 [M]
    user: jax.Array        # int64 [M]
    feat: jax.Array        # float32 [M, 6]: the static features 1..6 of spec §2.9
    backfill: jax.Array    # int32 scalar
    compat: jax.Array      # bool scalar
    ref_cutoff: jax.Array  # bool scalar: True = the reference's cut-off, False = FCFS
    sample_low: jax.Array  # int32 scalar: reset draws starts from [sample_low, sample_high)
    sample_high: jax.Array


@dataclasses.dataclass(frozen=True)
class _Config:
    length: int
    max_queue: int
    metric: str
    n_trace: int
    sample_ok: bool        # U - length - 1 > length: reset can sample a start
    queue_cap: int
    run_cap: int
    num_nodes: int
    num_procs: float


# ----------------------------------------------------------------------------------------------
# Host-side helpers
# ----------------------------------------------------------------------------------------------
def _ratio_feature(x: np.ndarray, denom: float, minus_one_is_one: bool) -> np.ndarray:
    x = x.astype(np.float64)
    if denom > 0:
        v = np.minimum(x / float(denom), _C)
    else:                       # only 0 / 0 can happen (maxima are >= every value); the
        v = np.zeros_like(x)    # reference would raise ZeroDivisionError
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


def _as_int(v, name, minimum):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ConfigError(f"{name} must be an integer, got {v!r}")
    if v < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {v}")
    return int(v)


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
    """

    def __init__(self, jobs, length: int = 256, backfill: str = "none", compat: bool = True,
                 metric: str = "bsld", max_queue: int = 128, cutoff: str = "reference",
                 job_slice: int = 0):
        length = _as_int(length, "length", 1)
        max_queue = _as_int(max_queue, "max_queue", 1)
        job_slice = _as_int(job_slice, "job_slice", 0)
        bcode = E.backfill_code(backfill)
        if compat and bcode == E.BACKFILL_EASY:
            raise ConfigError("backfill 'easy' is not part of the reference simulator; "
                              "use compat=False")
        if metric not in M.METRICS:
            raise ConfigError(f"unknown metric {metric!r}; choose from {', '.join(M.METRICS)}")
        if cutoff not in CUTOFFS:
            raise ConfigError(f"unknown cutoff {cutoff!r}; choose from {', '.join(CUTOFFS)}")
        m = jobs.n_jobs
        u = min(m, job_slice) if job_slice else m       # U of the sampling rule
        if length > m:
            raise ConfigError(f"sequence length {length} is longer than the trace ({m} jobs)")
        nodes = np.ceil(jobs.procs / jobs.procs_per_node).astype(np.int64)
        if (nodes > jobs.num_nodes).any():
            j = int(np.argmax(nodes > jobs.num_nodes))
            raise ConfigError(f"job {int(jobs.job_id[j])} needs {int(nodes[j])} nodes but the "
                              f"machine has {jobs.num_nodes}; it could never start")
        # at most `length` jobs wait or run; a job takes >= 1 node unless procs <= 0
        run_cap = min(length, int(jobs.num_nodes)) if (nodes >= 1).all() else length
        self._config = _Config(
            length=length, max_queue=max_queue, metric=metric, n_trace=m,
            sample_ok=u - length - 1 > length, queue_cap=length,
            run_cap=max(run_cap, 1), num_nodes=int(jobs.num_nodes),
            num_procs=float(jobs.num_procs))
        i64 = lambda a: jnp.asarray(np.asarray(a, np.int64))  # noqa: E731
        self._data = _Data(
            submit=i64(jobs.submit), run=i64(jobs.run), req=i64(jobs.req_time),
            procs=i64(jobs.procs), nodes=jnp.asarray(nodes.astype(np.int32)),
            user=i64(jobs.user),
            feat=jnp.asarray(static_features(jobs).astype(np.float32)),
            backfill=jnp.asarray(bcode, jnp.int32), compat=jnp.asarray(bool(compat)),
            ref_cutoff=jnp.asarray(cutoff == "reference"),
            sample_low=jnp.asarray(length, jnp.int32),
            sample_high=jnp.asarray(u - length - 1, jnp.int32))

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
    def start_range(self) -> Tuple[int, int]:
        """``(low, high)``: :meth:`reset` draws starts from ``low <= start < high``
        (spec §2.2: ``[length, U - length - 1)``)."""
        return int(self._data.sample_low), int(self._data.sample_high)

    @property
    def obs_shape(self) -> Tuple[int, int]:
        return (self._config.max_queue, JOB_FEATURES)

    def __repr__(self) -> str:
        c = self._config
        return (f"RLSchedulerEnv(length={c.length}, max_queue={c.max_queue}, "
                f"metric={c.metric!r}, trace_jobs={c.n_trace})")

    # -- the episode's workload ---------------------------------------------------------------
    def _sequence(self, start) -> E.Sequence:
        d, L = self._data, self._config.length
        cut = lambda a: jax.lax.dynamic_slice_in_dim(a, start, L)  # noqa: E731
        return E.Sequence(submit=cut(d.submit), run=cut(d.run), req=cut(d.req),
                          procs=cut(d.procs), nodes=cut(d.nodes),
                          n_jobs=jnp.asarray(L, jnp.int32),
                          num_nodes=jnp.asarray(self._config.num_nodes, jnp.int32))

    def _params(self) -> E.SimParams:
        return E.SimParams(policy=jnp.asarray(0, jnp.int32), backfill=self._data.backfill,
                           compat=self._data.compat)

    # -- sampling and reset -------------------------------------------------------------------
    def sample_start(self, key) -> jax.Array:
        """A sequence start drawn as the reference's training ``reset`` does (spec §2.2):
        uniform over ``[length, U - length - 1)``."""
        if not self._config.sample_ok:
            raise ConfigError(
                f"cannot sample sequences of {self.length} jobs: the reference draws starts "
                f"from [length, U - length - 1), which needs U >= {2 * self.length + 2} jobs "
                f"(U = the trace's jobs, or job_slice)")
        d = self._data
        return jax.random.randint(key, (), d.sample_low, d.sample_high, dtype=jnp.int32)

    def reset(self, key) -> Tuple[EnvState, TimeStep]:
        """Start a sampled sequence; returns the state and timestep of the first decision."""
        key, sub = jax.random.split(key)
        return self._reset(self.sample_start(sub), key)

    def reset_at(self, start, key=None) -> Tuple[EnvState, TimeStep]:
        """Start the sequence ``start .. start+length-1`` (0-based trace index; values outside
        ``[0, n_trace - length]`` are clipped into it; ``state.start`` holds the one used).
        ``key`` (default ``PRNGKey(0)``) is kept in the state for later auto-resets."""
        if isinstance(start, (int, np.integer)) and not 0 <= start <= self.n_trace - self.length:
            raise ConfigError(f"start {start} is outside [0, {self.n_trace - self.length}] "
                              f"for sequences of {self.length} jobs")
        if key is None:
            key = jax.random.PRNGKey(0)
        return self._reset(jnp.asarray(start, jnp.int32), key)

    def _reset(self, start, key) -> Tuple[EnvState, TimeStep]:
        c = self._config
        start = jnp.clip(jnp.asarray(start, jnp.int32), 0, c.n_trace - c.length)
        seq = self._sequence(start)
        prank = jnp.arange(c.length, dtype=jnp.int32)    # RL backfill order: (submit, index)
        # the initial state is a scheduling point (queue = [first job], spec §2.2)
        sim = E.reset(seq, prank, c.queue_cap, c.run_cap)
        # one waiting job: no sorting needed (keeps auto-reset cheap)
        first = jnp.argmax(sim.q_job >= 0).astype(jnp.int32)
        vis = jnp.full((c.max_queue,), -1, jnp.int32).at[0].set(first)
        obs = self._features(seq, start, sim, vis)
        state = EnvState(sim=sim, start=start, vis=vis, decisions=jnp.asarray(0, jnp.int32),
                         key=key)
        ts = TimeStep(step_type=jnp.asarray(FIRST, jnp.int8),
                      reward=jnp.asarray(0.0, jnp.float32),
                      discount=jnp.asarray(1.0, jnp.float32), observation=obs,
                      extras=self._extras(state, jnp.asarray(False)))
        return state, ts

    # -- step -----------------------------------------------------------------------------------
    def step(self, state: EnvState, action) -> Tuple[EnvState, TimeStep]:
        """Commit the job shown in observation slot ``action`` and run the simulator to the
        next decision (or the end of the sequence). A step on a finished episode changes
        nothing and returns a LAST timestep with reward 0 (use :class:`AutoResetWrapper` to
        continue with a new sequence)."""
        seq = self._sequence(state.start)
        MQ = self._config.max_queue
        a = jnp.asarray(action, jnp.int32)
        ok = (a >= 0) & (a < MQ)
        slot = state.vis[jnp.clip(a, 0, MQ - 1)]
        slot = jnp.where(ok & (slot >= 0), slot, state.vis[0])
        was_done = state.sim.done
        sim = E.schedule(seq, self._params(), state.sim, jnp.maximum(slot, 0))
        vis, obs = self._observe(seq, state.start, sim)
        new = EnvState(sim=sim, start=state.start, vis=vis,
                       decisions=state.decisions + (~was_done).astype(jnp.int32), key=state.key)
        ended = sim.done & ~was_done
        value = self._metric_of(seq, state.start, sim)
        reward = jnp.where(ended, self._sign() * value, 0.0).astype(jnp.float32)
        ts = TimeStep(step_type=jnp.where(sim.done, LAST, MID).astype(jnp.int8),
                      reward=reward, discount=jnp.where(sim.done, 0.0, 1.0).astype(jnp.float32),
                      observation=obs, extras=self._extras(new, sim.done, value))
        return new, ts

    # -- metrics ---------------------------------------------------------------------------------
    def _metric_of(self, seq: E.Sequence, start, sim: E.SimState) -> jax.Array:
        c = self._config
        users = None
        if c.metric == "fairness":
            users = jax.lax.dynamic_slice_in_dim(self._data.user, start, c.length)
        return M.all_metrics(seq.submit, seq.run, seq.procs, sim.start,
                             jnp.ones(c.length, bool), c.num_procs, self._data.compat,
                             users=users)[c.metric]

    def _sign(self) -> float:
        return 1.0 if self._config.metric in M.HIGHER_IS_BETTER else -1.0

    def metric_value(self, state: EnvState) -> jax.Array:
        """float64 value of the env's metric for the schedule in ``state`` (final once the
        episode is over)."""
        return self._metric_of(self._sequence(state.start), state.start, state.sim)

    def terminal_reward(self, state: EnvState) -> jax.Array:
        """float32 reward the last step of a finished episode pays: −metric, or +metric for
        the utilisation metrics (spec §3)."""
        return (self._sign() * self.metric_value(state)).astype(jnp.float32)

    def _extras(self, state: EnvState, done, value=None) -> dict:
        if value is None:
            value = jnp.asarray(0.0, jnp.float64)
        return {"metric": jnp.where(done, value, 0.0).astype(jnp.float64),
                "start": state.start, "decisions": state.decisions}

    # -- observation ----------------------------------------------------------------------------
    def _visible(self, seq: E.Sequence, sim: E.SimState) -> jax.Array:
        """int32 ``[max_queue]``: the queue slot shown in each observation slot (−1 = empty)."""
        c = self._config
        MQ, Q = c.max_queue, sim.q_job.shape[0]
        i32 = jnp.int32
        qv = sim.q_job >= 0
        j = jnp.where(qv, sim.q_job, 0)
        idx = jnp.where(qv, sim.q_job, jnp.iinfo(i32).max)
        inval = (~qv).astype(i32)
        s = seq.submit[j]
        fcfs = jnp.lexsort((idx, s, inval)).astype(i32)

        if Q > MQ:
            def rank(perm):
                return jnp.zeros(Q, i32).at[perm].set(jnp.arange(Q, dtype=i32))

            def interleave(_):
                q = seq.req[j]
                n = seq.procs[j]
                qf, nf, sf = (x.astype(jnp.float64) for x in (q, n, s))
                f2 = jnp.sqrt(qf) * nf + 25600.0 * jnp.log10(sf)
                f1 = (jnp.log10(jnp.where(qf > 0, qf, 0.1)) * nf
                      + 870.0 * jnp.log10(jnp.where(sf > 0, sf, 0.1)))
                r1 = rank(jnp.lexsort((idx, f1, f2, s, q, inval)))
                r2 = rank(jnp.lexsort((idx, f1, f2, q, s, n, inval)))
                big = 4 * Q
                p = jnp.minimum(jnp.where(r1 < MQ, 2 * r1, big),
                                jnp.where(r2 < MQ, 2 * r2 + 1, big))
                p = jnp.where(qv, p, big)
                return jnp.argsort(p, stable=True).astype(i32)

            order = jax.lax.cond(self._data.ref_cutoff & (sim.n_q > MQ), interleave,
                                 lambda _: fcfs, None)
        else:
            order = fcfs
        if Q >= MQ:
            order = order[:MQ]
        else:
            order = jnp.concatenate([order, jnp.zeros(MQ - Q, i32)])
        n_vis = jnp.minimum(sim.n_q, MQ)
        return jnp.where(jnp.arange(MQ) < n_vis, order, -1)

    def _observe(self, seq: E.Sequence, start, sim: E.SimState):
        vis = self._visible(seq, sim)
        return vis, self._features(seq, start, sim, vis)

    def _features(self, seq: E.Sequence, start, sim: E.SimState, vis) -> Observation:
        valid = vis >= 0
        vj = jnp.where(valid, sim.q_job[jnp.maximum(vis, 0)], 0)
        wait = (sim.t - seq.submit[vj]).astype(jnp.float64) / float(MAX_WAIT_TIME)
        wait = jnp.minimum(wait, _C).astype(jnp.float32)
        stat = self._data.feat[start + vj]
        canrun = jnp.where(seq.nodes[vj] <= sim.free, np.float32(_C), np.float32(_EPS))
        rows = jnp.concatenate([wait[:, None], stat, canrun[:, None]], axis=1)
        pad = jnp.asarray(np.asarray(PAD_ROW, np.float32))
        obs = jnp.where(valid[:, None], rows, pad[None, :]).astype(jnp.float32)
        return Observation(obs=obs, mask=valid)

    def observe(self, state: EnvState) -> Observation:
        """The observation of ``state`` (as returned in the last timestep)."""
        return self._observe(self._sequence(state.start), state.start, state.sim)[1]

    def visible_jobs(self, state: EnvState) -> jax.Array:
        """int32 ``[max_queue]``: the sequence index (0 .. length−1) of the job shown in each
        observation slot, −1 for empty slots."""
        vis = state.vis
        return jnp.where(vis >= 0, state.sim.q_job[jnp.maximum(vis, 0)], -1)


# ----------------------------------------------------------------------------------------------
# Auto-reset
# ----------------------------------------------------------------------------------------------
class AutoResetWrapper:
    """Continue with a freshly sampled sequence whenever an episode ends (jumanji's
    ``AutoResetWrapper`` / gymnax's select-based auto-reset).

    ``step`` returns the terminal transition's ``reward``, ``discount`` (0), ``step_type``
    (LAST) and ``extras`` (the finished episode's ``metric`` and ``start``), but the state and
    the observation of the *new* episode's first decision, so ``jax.lax.scan`` over ``step``
    can run forever. The new start is drawn with ``state.key`` (which is split). The reset is
    computed every step and selected (what ``vmap`` would do anyway; a reset is cheap: the
    first decision needs no simulation).
    """

    def __init__(self, env: RLSchedulerEnv):
        self.env = env

    def __getattr__(self, name: str) -> Any:
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, key) -> Tuple[EnvState, TimeStep]:
        return self.env.reset(key)

    def reset_at(self, start, key=None) -> Tuple[EnvState, TimeStep]:
        return self.env.reset_at(start, key)

    def step(self, state: EnvState, action) -> Tuple[EnvState, TimeStep]:
        state, ts = self.env.step(state, action)
        rstate, rts = self.env.reset(state.key)
        done = ts.last()
        pick = lambda a, b: jnp.where(done, a, b)  # noqa: E731
        state = jax.tree_util.tree_map(pick, rstate, state)
        obs = jax.tree_util.tree_map(pick, rts.observation, ts.observation)
        return state, ts.replace(observation=obs)


jax.tree_util.register_pytree_node(
    AutoResetWrapper, lambda w: ((w.env,), None), lambda _, ch: AutoResetWrapper(ch[0]))


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
