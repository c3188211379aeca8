"""A2cScheduler's data-centre environment (spec §3–§5) in the platform contract.

:class:`DataCenterEnv` wraps the cluster of :mod:`jaxsched.sim.datacenter`:

* observation: the image of spec §3, float32 ``[H, W]`` with ``W = (R + M·N)·d + ⌈B/H⌉ + 1``
  (per resource: the cluster's occupancy, each slot job's ``len × demand`` block; then the
  backlog filled row by row; then the time since the last arrival / its cap), and ``mask`` bool
  ``[N + 1]``: all True (the implicit void, DeepRM) or, with ``mask_invalid``, only the slots
  whose job can be placed, and the void action; with ``no_idle_void`` (not in the paper) void
  is masked too while the cluster is idle and some slot's job can be placed, so a policy
  cannot idle an empty cluster (a greedy void there repeats for ever once arrivals stop);
* actions ``0 … N−1`` allocate a slot's job (the clock stays), ``N`` is void (the clock moves);
  an empty slot or a job that cannot be placed acts as void;
* reward (float32): ``−Σ 1/len`` over the jobs in the system at each time advance, 0 for an
  allocation (spec §5); with γ = 1 the return is minus the total slowdown;
* episodes: a fresh DeepRM jobset at rate ``rate`` drawn on the device (``init_state``;
  auto-reset draws the next from the state's key); ``init_state_at(start)`` is the fixed
  evaluation jobset number ``start`` (the same for every policy); :meth:`init_state_jobset`
  replays a given jobset. An episode ends when all jobs are done (or by ``params.end``) and is
  truncated after ``params.step_cap`` steps.

``extras``: ``slowdown`` (float32), the finished episode's mean slowdown on a LAST step, else 0;
``jobs`` (float32), its number of finished jobs.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxsched.envs.core import Environment, Observation
from jaxsched.precision import draw_int
from jaxsched.sim.datacenter import DCParams, DCState, baselines, cluster, generator

__all__ = ["DataCenterEnv", "DCObservation", "JobBank", "image"]


@dataclasses.dataclass(frozen=True, eq=False)
class JobBank:
    """Given jobsets: ``lens`` int ``[K, S]``, ``dems`` int ``[K, S, d]`` (numpy; ``S`` must be
    the cluster's ``simu_len``). Compared and hashed by identity, so an environment holding
    one stays a static jit argument."""

    lens: np.ndarray
    dems: np.ndarray

    def __len__(self) -> int:
        return int(self.lens.shape[0])

    def take(self, k):
        """Jobset ``k`` (int32 scalar, traced or not): ``(lens [S], dems [S, d])``."""
        return jnp.asarray(self.lens, jnp.int32)[k], jnp.asarray(self.dems, jnp.int32)[k]


@struct.dataclass
class DCObservation(Observation):
    """``mask`` bool ``[N + 1]``; ``image`` float32 ``[H, W]`` (spec §3)."""

    image: jax.Array


def image(p: DCParams, s: DCState) -> jax.Array:
    """The state image, float32 ``[H, W]`` (see the module docstring; DeepRM's layout with 0/1
    cells for the cluster: a row's occupied slots are always its lowest ones)."""
    H, R, M, N, d = p.horizon, p.res_slot, p.max_job_size, p.num_slots, p.num_res
    h = jnp.arange(H)[:, None, None]
    used = (R - s.avail)[:, :, None]  # [H, d, 1]
    clus = jnp.arange(R)[None, None, :] < used  # [H, d, R]
    ln = cluster.take(s.lens, s.slots)  # [N]
    dm = cluster.take(s.dems, s.slots)  # [N, d]
    rows = h[..., None] < ln[None, None, :, None]  # [H, 1, N, 1]
    cols = jnp.arange(M)[None, None, None, :] < dm.T[None, :, :, None]  # [1, d, N, M]
    jobs = (rows & cols).reshape(H, d, N * M)
    per_res = jnp.concatenate([clus, jobs], axis=2).reshape(H, -1)
    bw = p.backlog_width
    cell = jnp.arange(H)[:, None] * bw + jnp.arange(bw)[None, :]
    back = cell < s.bsize
    since = jnp.full((H, 1), s.since_new / p.max_track_since_new)
    parts = [per_res.astype(jnp.float32), back.astype(jnp.float32), since.astype(jnp.float32)]
    return jnp.concatenate(parts, axis=1)


def placeable(p: DCParams, s: DCState) -> jax.Array:
    """bool [N]: slots whose job can be allocated now (at some offset when ``p.future``)."""

    def one(e):
        ln, dm = cluster.take(s.lens, e), cluster.take(s.dems, e)
        return (e >= 0) & jnp.any(cluster.place_offsets(p, s.avail, ln, dm))

    return jax.vmap(one)(s.slots)


@dataclasses.dataclass(frozen=True)
class DataCenterEnv(Environment):
    """See the module docstring. ``params``: the cluster (default: DeepRM's sizes, 50-entry
    jobsets, all_done, a 500-step cap, start-now placement, no quirks); ``rate``: the job
    arrival rate λ; ``mask_invalid``: mask the slots that cannot be allocated; ``no_idle_void``:
    mask void while the cluster is idle and a job can be placed; ``eval_seed``: the seed of the
    fixed evaluation jobsets of ``init_state_at``. ``jobsets`` / ``eval_jobsets``
    (:class:`JobBank`, e.g. slices of a real trace): episodes draw a jobset of ``jobsets``
    uniformly instead of generating one, and ``init_state_at(k)`` is jobset ``k`` (modulo
    their number) of ``eval_jobsets``."""

    params: DCParams = DCParams(step_cap=500)
    rate: float = 0.7
    mask_invalid: bool = False
    eval_seed: int = 314159
    no_idle_void: bool = False
    jobsets: JobBank | None = None
    eval_jobsets: JobBank | None = None

    @property
    def num_actions(self) -> int:
        return self.params.num_actions

    def init_state(self, key) -> DCState:
        k_job, k_next = jax.random.split(key)
        if self.jobsets is not None:
            lens, dems = self.jobsets.take(draw_int(k_job, 0, len(self.jobsets)))
        else:
            lens, dems = generator.sample_jobset(self.params, k_job, self.rate)
        return cluster.reset(self.params, lens, dems, key=k_next)

    def init_state_at(self, start, key=None) -> DCState:
        """The evaluation jobset number ``start`` (int32 scalar), independent of ``key``."""
        if self.eval_jobsets is not None:
            k = jnp.asarray(start, jnp.int32) % len(self.eval_jobsets)
            return self.init_state_jobset(*self.eval_jobsets.take(k))
        base = jax.random.PRNGKey(self.eval_seed)
        return self.init_state(jax.random.fold_in(base, jnp.asarray(start, jnp.uint32)))

    def init_state_jobset(self, lens, dems, key=None) -> DCState:
        """A given jobset: ``lens`` int [S], ``dems`` int [S, d] (replay mode)."""
        key = jax.random.PRNGKey(0) if key is None else key
        return cluster.reset(self.params, lens, dems, key=key)

    def transition(self, state: DCState, action):
        new, reward, _, terminated, truncated = cluster.step(self.params, state, action)
        m = baselines.job_metrics(new)
        last = terminated | truncated
        extras = {
            "slowdown": jnp.where(last & (m["finished"] > 0), m["slowdown"], 0.0),
            "jobs": jnp.where(last, m["finished"], 0),
        }
        extras = {k: v.astype(jnp.float32) for k, v in extras.items()}
        return new, reward.astype(jnp.float32), terminated, truncated, extras

    def reset_extras(self, state: DCState) -> dict:
        return {"slowdown": jnp.zeros((), jnp.float32), "jobs": jnp.zeros((), jnp.float32)}

    def observe(self, state: DCState) -> DCObservation:
        p = self.params
        can = placeable(p, state)  # unused (and compiled away) without either option
        jobs = can if self.mask_invalid else jnp.ones((p.num_slots,), bool)
        idle = jnp.all(state.avail[0] == p.res_slot)
        void = ~(idle & jnp.any(can)) if self.no_idle_void else jnp.asarray(True)
        mask = jnp.concatenate([jobs, void[None]])
        return DCObservation(mask=mask, image=image(p, state))
