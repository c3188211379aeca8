"""DRASEnv: the DRAS-PG decision protocol (spec dras.md §2.5, code mode; §2.4, the paper's
loop, with ``loop="paper"``) as an environment of
the contract (:mod:`jaxsched.envs.core`), a thin layer over the CQSim engine mode
(:mod:`jaxsched.sim.cqsim.engine`).

One episode is ``length`` consecutive jobs of a CQSim job list (submits shifted to 0, empty
machine). A step is one decision: at a *level-1* point (``phase`` 1) the action is a slot of
the window of the first ``W = 50`` waiting jobs — a job that fits starts, one that does not
ends level 1 (the oldest job is reserved — in the paper's loop the pick, for this pass only —
and level 2 begins); at a *level-2* point (``phase``
2) it is a slot of the window of the first ``W`` backfill candidates. Between decisions the
engine runs by itself (events, the skipped level 1 while the reserved job waits at the head,
starting the chosen backfilled jobs). Masking (spec §4): the first ``count`` slots are valid.

Observation (spec §3, PG): ``obs`` float32 ``[2W + N, 2]`` raw units — slot k's rows 2k, 2k+1
are ``[n, t]`` and ``[priority, wait]``, zero for empty slots; node rows ``[1, 0]`` (free) or
``[0, estimated end − now]``; ``phase`` int32; ``mask`` bool ``[W]``.

Reward: ``reward_fn(seq, sim_state, job, phase) -> float32`` for the picked job, evaluated at
the decision (before it applies). The default is the code's reward type 5 (spec §6.2) at that
point; the paper's two (§6.1) are :func:`reward_capability` (Eq. 1) and
:func:`reward_capacity` (Eq. 2), named in :data:`REWARDS`. H3's
``jaxsched.envs.dras_features`` builds the exact variants (level-2 rewards after the start)
and the observation options on the same engine functions.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxsched.envs.core import Environment, Observation
from jaxsched.envs.dras_features import capacity_reward, code_reward, max_wait, paper_reward
from jaxsched.errors import ConfigError
from jaxsched.precision import draw_int
from jaxsched.sim.cqsim import engine as CE
from jaxsched.sim.cqsim.types import (
    BF_DRAS,
    BF_DRAS_PAPER,
    BF_IMMEDIATE,
    POL_FIRST,
    RT_CODE,
    RT_PAPER,
    CQParams,
    CQState,
)
from jaxsched.sim.types import Sequence, sequence_window

__all__ = ["DRASEnv", "DRASObservation", "DRASState", "pg_observation", "reward_type5",
           "reward_capability", "reward_capacity", "REWARDS", "queue_max_wait"]  # fmt: skip

W = 50


@struct.dataclass
class DRASObservation(Observation):
    """``mask`` bool ``[W]``; ``obs`` float32 ``[2W + N, 2]``; ``phase`` int32 (1 or 2; 0 when
    the episode is over)."""

    obs: jax.Array
    phase: jax.Array


@struct.dataclass
class DRASState:
    """``sim``: the engine state at a decision point (or done); ``start``: int32 first job of
    the episode in the job list; ``key``: PRNG key of the next episode."""

    sim: CQState
    start: jax.Array
    key: jax.Array


def pg_observation(seq: Sequence, st: CQState) -> jax.Array:
    """float32 ``[2W + N, 2]``: the DRAS-PG input of spec §3 at the state's decision point."""
    win, _ = CE.window(st, W)
    j = jnp.maximum(win, 0)
    ok = (win >= 0)[:, None, None]
    a = jnp.stack([seq.nodes[j], seq.req[j]], -1).astype(jnp.float32)
    b = jnp.stack([st.priority[j], st.t - seq.submit[j]], -1).astype(jnp.float32)
    jobs = jnp.where(ok, jnp.stack([a, b], 1), 0.0).reshape(2 * W, 2)
    busy = st.node_owner >= 0
    nodes = jnp.stack([(~busy).astype(jnp.float32),
                       jnp.where(busy, st.node_end - st.t, 0).astype(jnp.float32)], -1)  # fmt: skip
    return jnp.concatenate([jobs, nodes], 0)


def queue_max_wait(seq: Sequence, st: CQState) -> jax.Array:
    """float32: the longest wait (s) among the jobs in the engine's queue (0 if it is empty):
    :func:`~jaxsched.envs.dras_features.max_wait` over the queue."""
    return max_wait(seq.submit[jnp.maximum(st.queue_job, 0)], _queued(st), st.t)


def reward_type5(seq: Sequence, st: CQState, job, phase) -> jax.Array:
    """Reward type 5 of the code (spec §6.2) for ``job`` at the state's clock: (util + waitr +
    size) / 3 with the 6-hour floor on the longest wait
    (:func:`~jaxsched.envs.dras_features.code_reward` before the pick starts)."""
    N = st.node_owner.shape[0]
    wait = st.t - seq.submit[job]
    return code_reward(seq.nodes[job], wait, st.free, N, queue_max_wait(seq, st))


def _queued(st: CQState) -> jax.Array:
    """bool ``[Q]``: the engine's queue slots in use."""
    return jnp.arange(st.queue_job.shape[0]) < st.n_queued


def reward_capability(seq: Sequence, st: CQState, job, phase) -> jax.Array:
    """The paper's Eq. 1 (spec §6.1, capability sites) for ``job`` at the state's clock:
    ``(wait / t_max + n / N + used / N) / 3`` with ``t_max`` the longest wait in the queue
    (no floor; 0 when nobody has waited) and ``used`` the busy nodes before the pick."""
    N = st.node_owner.shape[0]
    wait = st.t - seq.submit[job]
    return paper_reward(seq.nodes[job], wait, N - st.free, N, queue_max_wait(seq, st))


def reward_capacity(seq: Sequence, st: CQState, job, phase) -> jax.Array:
    """The paper's Eq. 2 (spec §6.1, capacity sites): the mean of ``−1 / t_j`` over the jobs
    left waiting once the pick applies — ``job`` leaves the queue when it fits now (a level-1
    pick that does not fit, and every job behind it, stays). ``t_j`` is the runtime estimate
    (the DeepRM reading; the paper leaves it undefined). Taken after the pick, not before,
    so that the reward depends on the action: picking a short job removes its large
    ``−1 / t_j`` term (before the pick every choice would score the same)."""
    qj = jnp.maximum(st.queue_job, 0)
    starts = (phase == 2) | (st.free >= seq.nodes[job])  # level-2 candidates fit by construction
    left = _queued(st) & ~((st.queue_job == job) & starts)
    return capacity_reward(seq.req[qj], left)


REWARDS = {"code": reward_type5, "capability": reward_capability, "capacity": reward_capacity}
"""Reward names of ``jaxsched train dras --reward`` → the ``reward_fn`` of :class:`DRASEnv`."""


@struct.dataclass
class _Data:
    """The job list on the device: int64 ``[U]`` submit, run, req, procs; int32 ``[U]`` nodes,
    priority."""

    submit: jax.Array
    run: jax.Array
    req: jax.Array
    procs: jax.Array
    nodes: jax.Array
    priority: jax.Array


@dataclasses.dataclass(frozen=True)
class _Config:
    length: int
    num_nodes: int
    queue_cap: int
    n_trace: int
    runtime: int
    reward_fn: object
    loop: int = BF_DRAS


class DRASEnv(Environment):
    """See the module docstring.

    Args:
      jobs: a :class:`~jaxsched.workload.cqsim.CQSimTrace` (``load_cqsim(path)``) or
        :class:`~jaxsched.workload.cqsim.CQSimJobs` (its whole list is the source of episodes;
        ``priority`` from CQSimJobs, else 0).
      length: jobs per episode. runtime: ``"code"`` (waiting jobs' actual run times in the
      profile) or ``"paper"`` (estimates). queue_cap: the engine's queue slots (default
      ``length``: never overflows). reward_fn: see the module docstring (a module-level
      function, so equal configurations compare equal). loop: ``"code"`` (spec §2.5: the
      oldest job holds a persistent reservation; ``"persistent"`` is the same loop by what it
      does), ``"paper"`` (§2.4, §12: the level-1 pick that does not fit is reserved, for
      this pass only; the engine's ``BF_DRAS_PAPER``) or ``"immediate"`` (the Decima-PG
      baseline of §8: no reservation, no backfilling; every decision is a level-2-phase pick
      among the waiting jobs of the first W that fit now, which starts at once).
    """

    #: loop name → the engine's backfill mode (:class:`~jaxsched.envs.dras_dql.DRASDQLEnv`
    #: maps ``"code"`` to its own loop)
    LOOPS = {"code": BF_DRAS, "persistent": BF_DRAS, "paper": BF_DRAS_PAPER,
             "immediate": BF_IMMEDIATE}  # fmt: skip

    def __init__(self, jobs, length: int = 256, runtime: str = "code", queue_cap=None,
                 reward_fn=reward_type5, loop: str = "code"):  # fmt: skip
        n = int(len(jobs.submit))
        if not 1 <= length <= n:
            raise ConfigError(f"length {length} must be in [1, {n}] (the job list's size)")
        if runtime not in ("code", "paper"):
            raise ConfigError(f"runtime must be 'code' or 'paper', got {runtime!r}")
        if loop not in self.LOOPS:
            raise ConfigError(f"loop must be one of {', '.join(self.LOOPS)}, got {loop!r}")
        prio = getattr(jobs, "priority", np.zeros(n, np.int32))
        a = lambda x, dt=jnp.int64: jnp.asarray(np.asarray(x), dt)  # noqa: E731
        self._data = _Data(
            submit=a(jobs.submit), run=a(jobs.run), req=a(jobs.req_time), procs=a(jobs.nodes),
            nodes=a(jobs.nodes, jnp.int32), priority=a(prio, jnp.int32),
        )  # fmt: skip
        q = int(queue_cap or length)
        rt = RT_PAPER if runtime == "paper" else RT_CODE
        self._config = _Config(length, int(jobs.num_nodes), q, n, rt, reward_fn, self.LOOPS[loop])

    def tree_flatten(self):
        return (self._data,), self._config

    @classmethod
    def tree_unflatten(cls, config, children):
        obj = object.__new__(cls)
        obj._config, obj._data = config, children[0]
        return obj

    @property
    def num_actions(self) -> int:
        return W

    def _params(self) -> CQParams:
        i = lambda v: jnp.asarray(v, jnp.int32)  # noqa: E731
        c = self._config
        return CQParams(backfill=i(c.loop), policy=i(POL_FIRST), runtime=i(c.runtime))

    def _seq(self, start) -> tuple[Sequence, jax.Array]:
        c = self._config
        d = self._data
        seq = sequence_window(d, start, c.length, c.num_nodes)
        prio = jax.lax.dynamic_slice_in_dim(d.priority, start, c.length)
        return seq.replace(submit=seq.submit - seq.submit[0]), prio

    def _first(self, start, key) -> DRASState:
        c = self._config
        seq, prio = self._seq(start)
        st = CE.reset(seq, c.num_nodes, c.queue_cap, min(c.num_nodes, c.length), prio)
        return DRASState(CE.start_episode(seq, self._params(), st), start, key)

    def init_state(self, key) -> DRASState:
        key, sub = jax.random.split(key)
        start = draw_int(sub, 0, self._config.n_trace - self._config.length + 1)
        return self._first(start.astype(jnp.int32), key)

    def init_state_at(self, start, key=None) -> DRASState:
        hi = self._config.n_trace - self._config.length
        if isinstance(start, (int, np.integer)) and not 0 <= start <= hi:
            raise ConfigError(f"start {start} is outside [0, {hi}]")
        key = jax.random.PRNGKey(0) if key is None else key
        return self._first(jnp.clip(jnp.asarray(start, jnp.int32), 0, hi), key)

    def transition(self, s: DRASState, action):
        seq, _ = self._seq(s.start)
        win, cnt = CE.window(s.sim, W)
        slot = jnp.clip(jnp.asarray(action, jnp.int32), 0, jnp.maximum(cnt - 1, 0))
        job = jnp.maximum(win[slot], 0)
        reward = jnp.where(s.sim.done, 0.0, self._config.reward_fn(seq, s.sim, job, s.sim.phase))
        sim = CE.decide(seq, self._params(), s.sim, slot)
        extras = {"overflow": (sim.overflow != 0).astype(jnp.float32)}
        return s.replace(sim=sim), reward.astype(jnp.float32), sim.done, jnp.asarray(False), extras

    def reset_extras(self, s: DRASState) -> dict:
        return {"overflow": (s.sim.overflow != 0).astype(jnp.float32)}

    def observe(self, s: DRASState) -> DRASObservation:
        seq, _ = self._seq(s.start)
        _, cnt = CE.window(s.sim, W)
        mask = jnp.arange(W) < cnt
        mask = mask.at[0].set(True)  # a finished episode still offers one (ignored) action
        phase = jnp.where(s.sim.done, 0, s.sim.phase).astype(jnp.int32)
        return DRASObservation(mask=mask, obs=pg_observation(seq, s.sim), phase=phase)
