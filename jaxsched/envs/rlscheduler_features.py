"""RLScheduler's observation (spec ``rlscheduler.md`` §2.9): the job features, the queue
orders of the visible-job cut-off, and the device-side helpers that build the rows.

* host side: :func:`static_features` (features 1–6 of every job), :func:`queue_orders` (each
  job's rank in the FCFS order and in the cut-off's two orders);
* device side: :func:`fcfs_order` and :func:`visible_slots` (which waiting jobs are shown, in
  which slot: the FCFS order and the reference's cut-off), :func:`job_rows` (float32
  ``[MQ, 8]`` rows and the mask), :func:`user_info` (the ninth feature of the reference's
  fairness environment, ``HPCEnvFair``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.policies import heuristics as H
from jaxsched.sim.batching import sparse_cond
from jaxsched.sim.metrics import per_job_bsld

__all__ = [
    "JOB_FEATURES",
    "USER_JOB_FEATURES",
    "MAX_WAIT_TIME",
    "PAD_ROW",
    "USER_PAD_ROW",
    "CUTOFFS",
    "static_features",
    "queue_orders",
    "fcfs_order",
    "visible_slots",
    "job_rows",
    "pad_row",
    "dense_users",
    "user_info",
    "PRIOR_RANK_SCALE",
    "prior_rank",
    "prior_order",
    "prior_column",
]

#: Features per job row (spec §2.9).
JOB_FEATURES = 8
#: Normaliser of the waiting-time feature: 12 hours.
MAX_WAIT_TIME = 12 * 60 * 60
_C = 1.0 - 1e-5
_EPS = 1e-5
#: The row of an empty observation slot.
PAD_ROW = (0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)
#: Features per job row with the fairness environment's per-user feature (spec §3, the
#: fairness variant): the eighth of nine, before "can run now".
USER_JOB_FEATURES = 9
#: The empty slot's row with the per-user feature.
USER_PAD_ROW = (0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)


#: The prior column (a residual policy's heuristic, :func:`prior_column`) holds a visible
#: job's rank among the visible jobs divided by this (exact in float32); empty slots hold 1.
PRIOR_RANK_SCALE = 128.0


def pad_row(user_feature: bool = False, prior: bool = False) -> tuple:
    """The empty slot's row: :data:`PAD_ROW`, or :data:`USER_PAD_ROW` with the per-user
    feature, followed by the prior column's 1.0 with ``prior`` (the value net's slot
    prefixes pad with the same row)."""
    return (USER_PAD_ROW if user_feature else PAD_ROW) + ((1.0,) if prior else ())


#: Cut-off rules when more than ``max_queue`` jobs wait.
CUTOFFS = ("reference", "fcfs")


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


def _order_by(key, Q: int) -> jax.Array:
    """int32 ``[Q]``: the slots 0..Q−1 sorted by the non-negative int ``key`` (ties by slot),
    with ONE sort of packed int64 words (XLA's multi-operand sorts are several times slower
    on CPU)."""
    bits = max(1, (Q - 1).bit_length())
    packed = (key.astype(jnp.int64) << bits) | jnp.arange(Q, dtype=jnp.int64)
    return (jnp.sort(packed) & ((1 << bits) - 1)).astype(jnp.int32)


def _interleave(data, start, q_job, MQ: int) -> jax.Array:
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


def job_rows(data, start, sim, vis, user_col=None) -> tuple[jax.Array, jax.Array]:
    """The observation rows (spec §2.9): float32 ``[MQ, 8]`` rows of the jobs in queue slots
    ``vis`` (int32 ``[MQ]``, −1 = empty: :data:`PAD_ROW`) and the mask (bool ``[MQ]``).

    Args:
      data: the env's trace data (``submit`` int64 ``[M]``, ``nodes`` int32 ``[M]``, ``feat``
        float32 ``[M, 6]``); start: int32 trace index of the sequence's first job; sim: the
        engine state (clock ``t``, ``free`` nodes, ``queue_job``).
      user_col: optional float ``[MQ]`` (:func:`user_info`): inserted before "can run
        now", giving ``[MQ, 9]`` rows padded with :data:`USER_PAD_ROW`."""
    valid = vis >= 0
    g = start + jnp.where(valid, sim.queue_job[jnp.maximum(vis, 0)], 0)  # trace index
    wait = (sim.t - data.submit[g]).astype(jnp.float64) / float(MAX_WAIT_TIME)
    wait = jnp.minimum(wait, _C).astype(jnp.float32)
    canrun = jnp.where(data.nodes[g] <= sim.free, np.float32(_C), np.float32(_EPS))
    cols = [wait[:, None], data.feat[g]]
    if user_col is not None:
        cols.append(user_col[:, None].astype(jnp.float32))
    rows = jnp.concatenate(cols + [canrun[:, None]], axis=1)
    pad = jnp.asarray(np.asarray(pad_row(user_col is not None), np.float32))
    obs = jnp.where(valid[:, None], rows, pad[None, :]).astype(jnp.float32)
    return obs, valid


def dense_users(user: np.ndarray) -> tuple[np.ndarray, int]:
    """Each job's user as a dense int32 index ``0 .. n_users-1`` (the distinct user ids of the
    trace in increasing order; −1, "unknown", is a user like any other, as in the reference's
    per-user dict) and ``n_users``."""
    ids, dense = np.unique(np.asarray(user), return_inverse=True)
    return dense.astype(np.int32).reshape(-1), max(int(ids.shape[0]), 1)


def user_info(seq_user, seq_submit, seq_run, started_at, vis_user, n_users: int) -> jax.Array:
    """The fairness environment's per-user feature (``HPCEnvFair.build_observation``): for a
    visible job of user u, ``1 - a_u / max_v a_v``, where ``a_v`` is the mean bounded
    slowdown of user v's jobs started so far in the episode (the reference's
    ``per_user_scores(scheduled_rl)``); 1 when u has no started job or the maximum is 0.

    Args:
      seq_user: int32 ``[L]`` dense user index (:func:`dense_users`) of the sequence's jobs;
        seq_submit, seq_run: int64 ``[L]``; started_at: int64 ``[L]`` start times (−1 = not
        started); vis_user: int32 ``[MQ]`` dense user of each visible job (any value for
        empty slots, which the padding row replaces); n_users: static bin count.
    Returns:
      float64 ``[MQ]``."""
    on = started_at >= 0
    score = jnp.where(on, per_job_bsld(seq_submit, seq_run, started_at), 0.0)
    tot = jnp.zeros(n_users, jnp.float64).at[seq_user].add(score)
    cnt = jnp.zeros(n_users, jnp.int32).at[seq_user].add(on.astype(jnp.int32))
    mean = tot / jnp.maximum(cnt, 1)
    top = jnp.max(jnp.where(cnt > 0, mean, 0.0))
    mine = mean[vis_user]
    safe = jnp.where(top > 0, top, 1.0)
    return jnp.where((cnt[vis_user] > 0) & (top > 0), 1.0 - mine / safe, 1.0)


def _concrete(x):
    """``int(x)`` when ``x`` is a concrete value (not traced), else None."""
    if isinstance(x, jax.core.Tracer):
        return None
    return int(x)


def _interleave_fn(data, start, q_job, vis):
    return _interleave(data, start, q_job, vis.shape[0])


def _keep_vis(data, start, q_job, vis):
    return vis


def fcfs_order(data, start, sim, MQ: int, index_order: bool, compact: bool) -> jax.Array:
    """int32 ``[MQ]``: queue slots of the first waiting jobs in (submit, index) order (entries
    past ``sim.n_queued`` are unspecified).

    Args:
      data: the env's trace data (``rank_fcfs`` int32 ``[M]``); start: int32 trace index of
        the sequence's first job; sim: the engine state (``queue_job`` int32 ``[Q]``).
      index_order (static): submit times never decrease in the trace, so (submit, index)
        order is index order.
      compact (static): the queue is in :func:`~jaxsched.sim.nobf.schedule_nobf`'s layout
        (waiting jobs in slots 0 .. n_queued−1 by increasing index), so with ``index_order``
        the order is the slots themselves."""
    Q = sim.queue_job.shape[0]
    if compact and index_order:
        order = jnp.arange(min(Q, MQ), dtype=jnp.int32)
    else:
        qv = sim.queue_job >= 0
        j = jnp.maximum(sim.queue_job, 0)
        key = j if index_order else data.rank_fcfs[start + j]
        order = _order_by(jnp.where(qv, key, jnp.iinfo(jnp.int32).max), Q)[:MQ]
    if order.shape[0] < MQ:
        order = jnp.concatenate([order, jnp.zeros(MQ - order.shape[0], jnp.int32)])
    return order


def visible_slots(data, start, sim, order) -> jax.Array:
    """int32 ``[MQ]``: the queue slot shown in each observation slot (−1 = empty), from the
    FCFS ``order`` (:func:`fcfs_order`); the reference's cut-off (``data.ref_cutoff``), when
    more than ``MQ`` jobs wait, is computed only for the rows that need it."""
    MQ, Q = order.shape[0], sim.queue_job.shape[0]
    n_vis = jnp.minimum(sim.n_queued, MQ)
    vis = jnp.where(jnp.arange(MQ) < n_vis, order, -1)
    if Q > MQ and _concrete(data.ref_cutoff) != 0:
        vis = sparse_cond(
            data.ref_cutoff & (sim.n_queued > MQ),
            _interleave_fn,
            _keep_vis,
            data,
            start,
            sim.queue_job,
            vis,
            chunk=16,
            loop=True,
        )
    return vis


# ----------------------------------------------------------------------------------------------
# A residual policy's prior: a static heuristic's order (issue 49)
# ----------------------------------------------------------------------------------------------
def prior_rank(jobs, name: str, compat: bool) -> np.ndarray:
    """int32 ``[n_jobs]``: every job's rank over the whole trace in the ascending (key, index)
    order of the static heuristic ``name`` (a name of
    :data:`~jaxsched.policies.heuristics.POLICIES` or ``tuned:PATH``), exact host keys as the
    heuristics' runs use (:func:`~jaxsched.policies.heuristics.host_keys`). Restricted to one
    sequence it orders the jobs as that heuristic does. ConfigError for ``random`` and for
    WFP3/UNICEP in the correct mode (their keys depend on the clock)."""
    from jaxsched.errors import ConfigError
    from jaxsched.policies import tuned as T

    s = np.asarray(jobs.submit, np.int64)
    q = np.asarray(jobs.req_time, np.int64)
    n = np.asarray(jobs.procs, np.int64)
    tp = T.as_tuned(name)
    if tp is not None:
        return tp.rank(s, q, n).astype(np.int32)
    code = H.policy_code(name)
    if code == H.RANDOM or (not compat and code in (H.WFP3, H.UNICEP)):
        raise ConfigError(
            f"residual prior {name!r}: needs a static priority key (not random, and WFP3 / "
            "UNICEP only in the reference semantics, where their keys are static)"
        )
    return H.rank_by(H.host_keys(code, s, q, n)).astype(np.int32)


def prior_order(sim, MQ: int) -> jax.Array:
    """int32 ``[MQ]``: queue slots of the first ``MQ`` waiting jobs in the order of the
    sequence's static policy rank ``sim.policy_rank`` (a residual policy's prior; entries past
    ``sim.n_queued`` are unspecified). With more than ``MQ`` waiting jobs these are the
    prior's first ``MQ`` (the prior's own cut-off)."""
    Q = sim.queue_job.shape[0]
    qv = sim.queue_job >= 0
    key = jnp.where(qv, sim.policy_rank[jnp.maximum(sim.queue_job, 0)], jnp.iinfo(jnp.int32).max)
    bits = max(1, (Q - 1).bit_length())
    packed = (key.astype(jnp.int64) << bits) | jnp.arange(Q, dtype=jnp.int64)
    order = (jnp.sort(packed) & ((1 << bits) - 1)).astype(jnp.int32)[:MQ]
    if order.shape[0] < MQ:
        order = jnp.concatenate([order, jnp.zeros(MQ - order.shape[0], jnp.int32)])
    return order


def prior_column(mask) -> jax.Array:
    """float32 ``[MQ]``: the prior column of observation slots in the prior's order (slot i
    holds the i-th job of the prior among the visible ones): ``i / PRIOR_RANK_SCALE`` where
    ``mask`` (bool ``[MQ]``) is True, 1.0 elsewhere."""
    i = jnp.arange(mask.shape[0], dtype=jnp.float32)
    return jnp.where(mask, i / np.float32(PRIOR_RANK_SCALE), np.float32(1.0))
