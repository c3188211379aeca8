"""DRAS observations (spec ``dras.md`` §3) and rewards (§6) as pure JAX functions of plain arrays.

Nothing here knows the engine: the environment (``jaxsched.envs.dras``) passes its arrays in.

Inputs (any leading shapes are not supported: one state at a time; ``vmap`` for batches):

* job arrays of length J: ``size`` n_j (nodes), ``estimate`` t_j (s), ``priority`` p_j ∈ {0, 1},
  ``submit`` s_j (s);
* a window: ``win`` int ``[W]`` job indices (slot order) and ``count`` (slots in use; the
  others are ignored and given zero rows);
* node arrays of length N in node-index order: ``owner`` (int, < 0 = free; or bool busy) and
  ``est_end`` (start + estimate of the owner, s);
* ``now`` (s).

Layout: job slot k -> rows 2k ``[n, t]`` and 2k + 1 ``[p, now − s]``; node row ``[1, 0]`` if
free else ``[0, est_end − now]``.  PG input ``[2W + N, 2]`` (empty slots zero), DQL input of
one candidate ``[2 + N, 2]``.  Raw units by default (paper and code); ``scales=(n_scale,
t_scale)`` divides job row A's size by ``n_scale`` and every time entry (column 1) by
``t_scale`` — the same normalisation as the networks' ``input_norm`` option.  Outputs float32.

Rewards, all for one selected job (float32 scalars):

* :func:`code_reward` — the code's type 5 (§6.2) with the 6-hour floor on ``max_wait``; when the
  reward is computed after the job started, pass ``started=True``: with
  ``double_count=True`` (code mode) the started job is counted in ``running`` *and* added
  again by the "fits" branch, with ``False`` the fits branch uses the free nodes before the start.
* :func:`paper_reward` — Eq. 1 (capability sites), weights 1/3 by default, no floor (``t_max``
  0 -> that term 0).
* :func:`capacity_reward` — Eq. 2 (capacity sites): ``Σ_{j ∈ queue} −1/t_j / c`` with t_j the
  runtime **estimate** (the paper leaves t_j undefined; this is the DeepRM reading, spec §6.1)
  and c the number of waiting jobs (0 for an empty queue); per decision, like the others.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = [
    "WAIT_FLOOR",
    "job_rows",
    "node_rows",
    "pg_observation",
    "dql_observation",
    "dql_observations",
    "max_wait",
    "code_reward",
    "paper_reward",
    "capacity_reward",
]

WAIT_FLOOR = 21_600.0
"""The code's floor on ``max_wait`` in the wait term (6 hours, s)."""
_F32 = jnp.float32


def _scale(x, scales, job_rows: int):
    if scales is None:
        return x
    n_scale, t_scale = scales
    is_a = (jnp.arange(x.shape[0]) < job_rows) & (jnp.arange(x.shape[0]) % 2 == 0)
    col0 = jnp.where(is_a, x[:, 0] / n_scale, x[:, 0])
    return jnp.stack([col0, x[:, 1] / t_scale], axis=-1)


def job_rows(idx, valid, size, estimate, priority, submit, now):
    """``[2K, 2]`` float32 rows of the jobs ``idx`` int ``[K]`` (rows of invalid slots, bool
    ``valid [K]``, are zero)."""
    a = jnp.stack([size[idx], estimate[idx]], axis=-1).astype(_F32)
    b = jnp.stack([priority[idx], now - submit[idx]], axis=-1).astype(_F32)
    rows = jnp.stack([a, b], axis=1)  # [K, 2, 2]
    rows = jnp.where(valid[:, None, None], rows, 0.0)
    return rows.reshape(-1, 2)


def node_rows(owner, est_end, now):
    """``[N, 2]`` float32: ``[1, 0]`` for a free node, ``[0, est_end − now]`` for a busy one
    (``owner`` int, < 0 = free, or bool busy)."""
    busy = owner if owner.dtype == jnp.bool_ else owner >= 0
    left = jnp.where(busy, est_end - now, 0).astype(_F32)
    return jnp.stack([jnp.where(busy, 0.0, 1.0).astype(_F32), left], axis=-1)


def pg_observation(win, count, jobs, owner, est_end, now, scales=None):
    """DRAS-PG input float32 ``[2W + N, 2]``: ``win`` int ``[W]``, ``count`` int, ``jobs`` =
    ``(size, estimate, priority, submit)`` arrays ``[J]``, node arrays ``[N]``, ``now``."""
    valid = jnp.arange(win.shape[0]) < count
    x = jnp.concatenate([job_rows(win, valid, *jobs, now), node_rows(owner, est_end, now)])
    return _scale(x, scales, 2 * win.shape[0])


def dql_observation(j, jobs, owner, est_end, now, scales=None):
    """DRAS-DQL input of candidate job ``j`` (int): float32 ``[2 + N, 2]``."""
    rows = job_rows(jnp.asarray(j)[None], jnp.ones((1,), bool), *jobs, now)
    return _scale(jnp.concatenate([rows, node_rows(owner, est_end, now)]), scales, 2)


def dql_observations(cands, jobs, owner, est_end, now, scales=None):
    """The DQL inputs of candidates ``cands`` int ``[K]``: float32 ``[K, 2 + N, 2]``."""
    return jax.vmap(lambda j: dql_observation(j, jobs, owner, est_end, now, scales))(cands)


def max_wait(submit, waiting, now):
    """Largest queued time ``now − s_j`` over the waiting jobs (bool ``waiting [J]``); 0 if
    none."""
    return jnp.max(jnp.where(waiting, now - submit, 0)).astype(_F32)


def code_reward(n, wait, free, n_nodes, mwait, *, started=False, double_count=True):
    """Reward type 5 of the code (§6.2): ``(util + waitr + size) / 3`` for a job of ``n`` nodes
    queued ``wait`` s, with ``free`` idle nodes at the time of the computation, ``mwait`` the
    batch's max wait (:func:`max_wait`); module docstring for ``started`` / ``double_count``."""
    n, N = jnp.asarray(n, _F32), jnp.asarray(n_nodes, _F32)
    free = jnp.asarray(free, _F32)
    free = jnp.where(jnp.asarray(started) & (not double_count), free + n, free)
    running = N - free
    util = jnp.where(free < n, running / N, (n + running) / N)
    mwait = jnp.asarray(mwait, _F32)
    waitr = jnp.asarray(wait, _F32) / jnp.where(mwait >= WAIT_FLOOR, mwait, WAIT_FLOOR)
    return ((util + waitr + n / N) / 3.0).astype(_F32)


def paper_reward(n, wait, used, n_nodes, mwait, weights=(1 / 3, 1 / 3, 1 / 3)):
    """Eq. 1: ``w1 · wait / t_max + w2 · n / N + w3 · used / N`` (``used`` occupied nodes)."""
    w1, w2, w3 = weights
    mwait = jnp.asarray(mwait, _F32)
    wt = jnp.where(mwait > 0, jnp.asarray(wait, _F32) / jnp.where(mwait > 0, mwait, 1.0), 0.0)
    N = jnp.asarray(n_nodes, _F32)
    return (w1 * wt + w2 * jnp.asarray(n, _F32) / N + w3 * jnp.asarray(used, _F32) / N).astype(_F32)


def capacity_reward(estimate, waiting):
    """Eq. 2: ``Σ_{waiting j} −1 / t_j`` divided by the number of waiting jobs (0 if none):
    estimate ``[J]`` (s), waiting bool ``[J]``."""
    c = jnp.sum(waiting.astype(_F32))
    s = jnp.sum(jnp.where(waiting, -1.0 / jnp.maximum(estimate, 1).astype(_F32), 0.0))
    return jnp.where(c > 0, s / jnp.maximum(c, 1.0), 0.0).astype(_F32)
