"""Learned schedulers of the other papers as baselines in the split-window environment (spec
``split_window.md`` §7, Fig. 4), as picks of the heuristics' cycle
(:func:`jaxsched.envs.splitwindow_baselines.run_picker`); back-filling works around their
choice as around a heuristic's.

**RLScheduler** (:func:`rlscheduler_pick`): a trained policy network chooses which queued job
goes next.
The network sees RLScheduler's own observation (spec ``rlscheduler.md`` §2.9) built from the
split-window state: the first ``max_queue`` queued jobs in arrival order (with the reference's
cut-off when more wait, or the FCFS cut-off, as the model's run recorded), eight features per
job (wait so far over 12 h, requested time, processors, memory, user, group, executable, "can
run now" against the free cores) and the greedy (argmax) choice among them. Requested times
are the trace's; the split-window clock runs jobs for their actual run time, as it does for
the heuristics.

**SchedInspector, online** (:func:`inspector_pick`): the base heuristic (SJF by requested
time, F1, ...: :data:`jaxsched.policies.inspector_bases.BASES`) proposes its first queued job
and a trained inspector accepts or rejects it from the seven features of spec
``schedinspector.md`` §3.4 (compat mode). A rejection starts nothing until the next event
(the online environment has no 600 s timer: an arrival or a completion comes first); an
accepted job that does not fit stays accepted (back-filling works around it) and is not
inspected again. Each job's rejections are counted; after
:data:`jaxsched.sim.inspect.MAX_REJECTIONS` it can no longer be rejected (the evaluation mask
of §3.5).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs import rlscheduler_features as F
from jaxsched.envs.schedinspector import compat_features
from jaxsched.errors import ConfigError
from jaxsched.policies.inspector_bases import trace_rank
from jaxsched.sim.inspect import MAX_REJECTIONS

__all__ = ["RLData", "rlscheduler_data", "rlscheduler_pick", "inspector_pick", "inspector_aux"]


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
    """``pick(sim, aux) -> (int32 queue position, aux)``, for
    :func:`jaxsched.envs.splitwindow_baselines.run_picker`: the greedy choice of an
    RLScheduler policy among the queued jobs. ``logits_fn(obs [max_queue, 8], mask
    [max_queue]) -> float [max_queue]`` is the trained network (e.g. ``lambda o, m:
    net.apply(params, o, m)`` of :func:`jaxsched.systems.rlscheduler.evaluate.load_policy`);
    ``max_queue`` and ``cutoff`` as its run recorded them."""
    data = rlscheduler_data(jobs, cutoff)
    mq = int(max_queue)

    def pick(sim, aux):
        obs, mask, vis = observation(data, sim, mq)
        logits = jnp.where(mask, logits_fn(obs, mask), -jnp.inf)
        return jnp.maximum(vis[jnp.argmax(logits)], 0).astype(jnp.int32), aux

    return pick


class _SIData(NamedTuple):
    submit: jax.Array  # int64 [J]
    req: jax.Array  # int64 [J] requested time (compat: the run time)
    procs: jax.Array  # int64 [J]
    nodes: jax.Array  # int32 [J]
    rank: jax.Array  # int32 [J] the base's order


def inspector_aux(n_jobs: int):
    """The per-episode state of :func:`inspector_pick`: int32 ``[J]`` rejections per trace job
    and the int32 accepted job (−1 none)."""
    return jnp.zeros(n_jobs, jnp.int32), jnp.asarray(-1, jnp.int32)


def inspector_pick(si_jobs, logits_fn, *, base: str = "sjf", swf_wait=None, env_submit=None):
    """``pick(sim, aux) -> (int32 queue position or −1 = rejected, aux)`` of SchedInspector
    online (module docstring); ``aux`` starts as :func:`inspector_aux`.

    Args:
      si_jobs: :func:`jaxsched.workload.schedinspector.inspector_jobs` of the trace (compat
        mode), the same jobs in the same order as the split-window environment's.
      logits_fn: ``(features float32 [7], mask bool [2]) -> float [2]`` (accept, reject), e.g.
        a loaded inspector's ``InspectorPolicy().apply(params, o, m)``.
      base: the base heuristic; swf_wait: the SWF wait field (the multifactor base only).
      env_submit: the environment's submit times, checked against ``si_jobs``'s.
    """
    if env_submit is not None and not np.array_equal(np.asarray(env_submit), si_jobs.submit):
        raise ConfigError(
            "the inspector's job list differs from the split-window environment's (another "
            "trace, or jobs dropped by one loader)"
        )
    nodes = np.ceil(si_jobs.procs / si_jobs.procs_per_node).astype(np.int32)
    rank = trace_rank(base, si_jobs.submit, si_jobs.req_time, si_jobs.procs, swf_wait,
                      si_jobs.num_procs)  # fmt: skip
    d = _SIData(
        submit=jnp.asarray(si_jobs.submit, jnp.int64),
        req=jnp.asarray(si_jobs.req_time, jnp.int64),
        procs=jnp.asarray(si_jobs.procs, jnp.int64),
        nodes=jnp.asarray(nodes),
        rank=jnp.asarray(rank, jnp.int32),
    )
    n_nodes, n_procs = float(si_jobs.num_nodes), float(si_jobs.num_procs)
    max_exec = float(si_jobs.max_exec_time)

    def pick(sim, aux):
        rejections, accepted = aux
        qv = jnp.arange(sim.q_job.shape[0]) < sim.q_len
        g = jnp.maximum(sim.q_job, 0)
        p = jnp.argmin(jnp.where(qv, d.rank[g], jnp.iinfo(jnp.int32).max)).astype(jnp.int32)
        j = g[p]
        free = jnp.sum(sim.core_tag < 0).astype(jnp.int32)
        feats = compat_features(
            sim.t, d.submit[j], d.req[j], d.procs[j], d.nodes[j], free, rejections[j], d.req[g],
            qv, max_exec_time=max_exec, num_procs=n_procs, num_nodes=n_nodes,
        )  # fmt: skip
        feats = jnp.stack(feats).astype(jnp.float32)
        mask = jnp.stack([jnp.asarray(True), rejections[j] < MAX_REJECTIONS])
        choice = jnp.argmax(jnp.where(mask, logits_fn(feats, mask), -jnp.inf))
        reject = (sim.q_len > 0) & (j != accepted) & (choice == 1)
        aux = (rejections.at[j].add(reject.astype(jnp.int32)), jnp.where(reject, accepted, j))
        return jnp.where(reject, -1, p).astype(jnp.int32), aux

    return pick
