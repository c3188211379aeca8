"""Scheduling metrics computed from a final schedule (vectorised, jit/vmap friendly).

All functions take int64 ``[L]`` arrays of one sequence (``submit``, ``run``, ``procs``,
``start``) and a bool ``valid [L]`` mask of real (non-padding) jobs; they return float64
scalars. The per-job scores are RLScheduler's (spec §3):

==========  ===============================================  =========================
name        per job                                          sequence value
==========  ===============================================  =========================
bsld        max(1, (w + r) / max(r, 10))                     mean
sld         (w + r) / r                                      mean
wait        w = start - submit                               mean
turnaround  w + r                                            mean
util_ref    r · n                                            Σ / ((t_end − s_0) · P)
util_busy   r · n                                            Σ / ((max(start+r) − s_0) · P)
max_wait    w                                                max
makespan    —                                                max(start + r) − s_0
fairness    bsld                                             max over users of user mean
==========  ===============================================  =========================

``t_end`` is the clock when the episode ends, i.e. the latest start time (reference definition);
``util`` is ``util_ref`` in compat mode and ``util_busy`` otherwise.
"""

from __future__ import annotations

import jax.numpy as jnp

METRICS = (
    "bsld",
    "sld",
    "wait",
    "turnaround",
    "util",
    "util_ref",
    "util_busy",
    "max_wait",
    "makespan",
    "fairness",
)
#: metrics where larger is better (the RL reward is +value for these, -value otherwise)
HIGHER_IS_BETTER = ("util", "util_ref", "util_busy")
BSLD_BOUND = 10.0


def _mean(x, valid):
    return jnp.sum(jnp.where(valid, x, 0.0)) / jnp.sum(valid)


def per_job_bsld(submit, run, start):
    w = (start - submit).astype(jnp.float64)
    r = run.astype(jnp.float64)
    return jnp.maximum(1.0, (w + r) / jnp.maximum(r, BSLD_BOUND))


def all_metrics(submit, run, procs, start, valid, num_procs, compat, users=None):
    """Every metric of :data:`METRICS` as a dict of float64 scalars (``fairness`` needs
    ``users``: int ``[L]``, else it is NaN)."""
    w = (start - submit).astype(jnp.float64)
    r = run.astype(jnp.float64)
    s0 = submit[0]
    work = jnp.sum(jnp.where(valid, r * procs.astype(jnp.float64), 0.0))
    t_end = jnp.max(jnp.where(valid, start, jnp.iinfo(jnp.int64).min))
    finish = jnp.max(jnp.where(valid, start + run, jnp.iinfo(jnp.int64).min))
    makespan = (finish - s0).astype(jnp.float64)
    util_ref = work / ((t_end - s0).astype(jnp.float64) * num_procs)
    util_busy = work / (makespan * num_procs)
    bsld = per_job_bsld(submit, run, start)
    out = {
        "bsld": _mean(bsld, valid),
        "sld": _mean((w + r) / r, valid),
        "wait": _mean(w, valid),
        "turnaround": _mean(w + r, valid),
        "util_ref": util_ref,
        "util_busy": util_busy,
        "util": jnp.where(compat, util_ref, util_busy),
        "max_wait": jnp.max(jnp.where(valid, w, -jnp.inf)),
        "makespan": makespan,
    }
    if users is None:
        out["fairness"] = jnp.asarray(jnp.nan)
    else:
        out["fairness"] = user_max_mean(bsld, users, valid)
    return out


def user_max_mean(score, users, valid):
    """Maximum over users of the per-user mean of ``score`` (RLScheduler's fairness, Table VIII).

    O(L²) pairwise grouping; fine for evaluation sequences of a few thousand jobs.
    """
    same = (users[:, None] == users[None, :]) & valid[None, :] & valid[:, None]
    tot = jnp.sum(jnp.where(same, score[None, :], 0.0), axis=1)
    cnt = jnp.sum(same, axis=1)
    return jnp.max(jnp.where(valid, tot / jnp.maximum(cnt, 1), -jnp.inf))
