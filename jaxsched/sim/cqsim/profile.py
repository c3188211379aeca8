"""CQSim's availability profile (spec dras.md §2.3 with the reference README's exact rules) as
fixed-size sorted arrays with masking.

A profile is ``(prof_t, prof_a, n_prof)``: int64 ``[P]`` point times (ascending over the valid
prefix of ``n_prof`` points, ``BIG`` after it) and int32 ``[P]`` free nodes from that time to
the next point. All functions are pure and trace under ``jit``/``vmap``.

Rules: the first point is ``(now, free now)`` and is never merged; every running job adds its
nodes at its estimated end, equal ends merged (a running job ending at ``now`` gives a second
point at ``now``); a reservation starts at the first point from which every point before
``start + d`` has enough nodes (the search restarts after a failing point); placing it
subtracts its nodes at every point from the start point *by index* up to ``start + d``
(exclusive) and inserts a point at ``start + d`` (with the nodes given back) unless one exists;
a job fits now if every point in ``[now, now + d)`` has enough free nodes.

"By index" matters once: a reservation found at the second point at ``now`` (the first point
lacks the nodes, the pending releases at ``now`` give them) leaves the first point unchanged,
as CQSim's ``Node_struc.reserve`` walks the points from the one the search returned (issue 46).
The first point then keeps more free nodes than the second, and a job fits now only if both
have enough.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from jaxsched.sim.primitives import argmax_bool, running_insert
from jaxsched.sim.types import BIG, I32MAX

__all__ = ["build_profile", "reserve_search", "place", "fits_now"]


def build_profile(t, free, run_est, run_nodes, n_running, P: int):
    """The profile at time ``t`` (int64) with ``free`` (int32) free nodes and the running jobs
    ``run_est`` (int64 ``[R]``, ascending over the prefix of ``n_running``) / ``run_nodes``
    (int32 ``[R]``). Returns ``(prof_t [P] int64, prof_a [P] int32, n_prof int32)``;
    ``P >= R + 1`` (static)."""
    R = run_est.shape[0]
    ri = jnp.arange(R, dtype=jnp.int32)
    valid = ri < n_running
    cum = jnp.cumsum(jnp.where(valid, run_nodes, 0)).astype(jnp.int32)
    last = valid & ((ri == n_running - 1) | (run_est != jnp.roll(run_est, -1)))
    idx = jnp.where(last, jnp.cumsum(last), P)
    prof_t = jnp.full((P,), BIG, jnp.int64).at[0].set(t).at[idx].set(run_est, mode="drop")
    prof_a = jnp.zeros((P,), jnp.int32).at[0].set(free).at[idx].set(free + cum, mode="drop")
    return prof_t, prof_a, (1 + jnp.sum(last)).astype(jnp.int32)


def reserve_search(prof_t, prof_a, n_prof, need, d):
    """Index (int32) of the point where a job of ``need`` nodes and duration ``d`` is reserved,
    and whether one exists (bool; False only for ``need`` above the machine's free maximum).

    Point i qualifies if ``prof_a[i] >= need`` and no later point before ``prof_t[i] + d`` has
    fewer nodes; the first qualifying point is the restarting scan's answer."""
    P = prof_t.shape[0]
    pi = jnp.arange(P, dtype=jnp.int32)
    valid = pi < n_prof
    fail = valid & (prof_a < need)
    nf = jax.lax.cummin(jnp.where(fail, pi, P), reverse=True)  # first failing index >= i
    nf_after = jnp.concatenate([nf[1:], jnp.full((1,), P, nf.dtype)])
    t_nf = jnp.where(nf_after < P, prof_t[jnp.minimum(nf_after, P - 1)], BIG)
    good = valid & ~fail & (t_nf >= prof_t + d)
    return argmax_bool(good), jnp.any(good)


def place(prof_t, prof_a, n_prof, first, end, need, enabled):
    """The profile with ``need`` nodes taken at every point from index ``first`` (int32, the
    reservation's start point; 0 for a job started now) on whose time is before ``end``
    (int64, ``end`` > that point's time), where ``enabled``; points before ``first`` are left
    as they are even at the same time (module docstring). Returns ``(prof_t, prof_a, n_prof,
    full)`` with ``full`` (bool) set when a point was needed but the arrays were full."""
    P = prof_t.shape[0]
    pi = jnp.arange(P, dtype=jnp.int32)
    valid = pi < n_prof
    pos = jnp.sum(valid & (prof_t < end)).astype(jnp.int32)
    exists = (pos < n_prof) & (prof_t[jnp.minimum(pos, P - 1)] == end)
    ins = enabled & ~exists
    val = prof_a[jnp.maximum(pos - 1, 0)]
    prof_t = running_insert(prof_t, pos, end, ins)
    prof_a = running_insert(prof_a, pos, val, ins)
    n_prof = n_prof + ins.astype(jnp.int32)
    take = enabled & (pi < n_prof) & (pi >= first) & (prof_t < end)
    full = ins & (n_prof > P)
    return prof_t, prof_a - jnp.where(take, need, 0), jnp.minimum(n_prof, P), full


def fits_now(prof_t, prof_a, n_prof, t, need, d) -> chex.Array:
    """bool ``[Q]``: whether jobs of ``need`` nodes (int32 ``[Q]``) and durations ``d`` (int64
    ``[Q]``) fit at ``t`` (the first point's time): every point in ``[t, t + d)`` has
    ``>= need`` free nodes."""
    P = prof_t.shape[0]
    pm = jax.lax.cummin(jnp.where(jnp.arange(P) < n_prof, prof_a, I32MAX))
    cnt = jnp.searchsorted(prof_t, t + d, side="left")
    return pm[jnp.clip(cnt - 1, 0, P - 1)] >= need
