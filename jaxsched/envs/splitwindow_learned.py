"""Learned schedulers of the other papers as baselines in the split-window environment (spec
``split_window.md`` §7, Fig. 4): a trained RLScheduler policy network chooses, at every pick of
the heuristics' cycle (:func:`jaxsched.envs.splitwindow_baselines.run_picker`), which queued
job goes next; back-filling works around its choice as around a heuristic's.

The network sees RLScheduler's own observation (spec ``rlscheduler.md`` §2.9) built from the
split-window state: the first ``max_queue`` queued jobs in arrival order (with the reference's
cut-off when more wait, or the FCFS cut-off, as the model's run recorded), eight features per
job (wait so far over 12 h, requested time, processors, memory, user, group, executable, "can
run now" against the free cores) and the greedy (argmax) choice among them. Requested times
are the trace's; the split-window clock runs jobs for their actual run time, as it does for
the heuristics.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs import rlscheduler_features as F
from jaxsched.errors import ConfigError

__all__ = ["RLData", "rlscheduler_data", "rlscheduler_pick"]


class RLData(NamedTuple):
    """RLScheduler's per-job arrays over the whole trace (the split-window queue holds trace
    indices): ``submit`` int64 ``[J]``, ``nodes`` int32 ``[J]``, ``feat`` float32 ``[J, 6]``,
    ``rank_l1``/``rank_l2`` int32 ``[J]`` (the cut-off's orders), ``ref_cutoff`` bool."""

    submit: jax.Array
    nodes: jax.Array
    feat: jax.Array
    rank_l1: jax.Array
    rank_l2: jax.Array
    ref_cutoff: jax.Array


class _SimView(NamedTuple):
    """The engine fields RLScheduler's observation helpers read, from a split-window state."""

    t: jax.Array
    free: jax.Array
    queue_job: jax.Array
    n_queued: jax.Array


def rlscheduler_data(jobs, cutoff: str = "reference") -> RLData:
    """:class:`RLData` of a trace's jobs (those the split-window environment was built from)."""
    if cutoff not in F.CUTOFFS:
        raise ConfigError(f"unknown cut-off {cutoff!r}; choose from {', '.join(F.CUTOFFS)}")
    _, l1, l2 = F.queue_orders(jobs)
    return RLData(
        submit=jnp.asarray(np.asarray(jobs.submit, np.int64)),
        nodes=jnp.asarray(np.asarray(jobs.node_demand, np.int32)),  # the env's cores
        feat=jnp.asarray(F.static_features(jobs).astype(np.float32)),
        rank_l1=jnp.asarray(l1, jnp.int32),
        rank_l2=jnp.asarray(l2, jnp.int32),
        ref_cutoff=jnp.asarray(cutoff == "reference"),
    )


def observation(data: RLData, sim, max_queue: int):
    """RLScheduler's observation of a split-window engine state ``sim``
    (:class:`jaxsched.sim.cores.CoreState`): float32 ``[max_queue, 8]`` rows, bool mask
    ``[max_queue]`` and int32 ``[max_queue]`` the queue position shown in each row (−1 none)."""
    view = _SimView(
        t=sim.t,
        free=jnp.sum(sim.core_tag < 0).astype(jnp.int32),
        queue_job=sim.q_job,
        n_queued=sim.q_len,
    )
    # the queue holds waiting jobs in slots 0 .. q_len-1 by increasing trace index
    order = F.fcfs_order(data, 0, view, max_queue, index_order=True, compact=True)
    vis = F.visible_slots(data, 0, view, order)
    obs, mask = F.job_rows(data, 0, view, vis)
    return obs, mask, vis


def rlscheduler_pick(jobs, logits_fn, *, max_queue: int = 128, cutoff: str = "reference"):
    """``pick(sim) -> int32`` queue position, for
    :func:`jaxsched.envs.splitwindow_baselines.run_picker`: the greedy choice of an
    RLScheduler policy among the queued jobs. ``logits_fn(obs [max_queue, 8], mask
    [max_queue]) -> float [max_queue]`` is the trained network (e.g. ``lambda o, m:
    net.apply(params, o, m)`` of :func:`jaxsched.systems.rlscheduler.evaluate.load_policy`);
    ``max_queue`` and ``cutoff`` as its run recorded them."""
    data = rlscheduler_data(jobs, cutoff)
    mq = int(max_queue)

    def pick(sim):
        obs, mask, vis = observation(data, sim, mq)
        logits = jnp.where(mask, logits_fn(obs, mask), -jnp.inf)
        return jnp.maximum(vis[jnp.argmax(logits)], 0).astype(jnp.int32)

    return pick
