"""The cluster's transition (spec §2, DeepRM semantics; pure JAX, jit/vmap-able).

* :func:`reset` — an empty cluster at ``t = 0`` for a given jobset (``lens [S]``, ``dems [S, d]``);
  outside the ``deeprm`` mode entry 0 arrives at once.
* :func:`step` — one action: ``a < N`` tries to allocate slot ``a`` (several allocations per
  time step; the clock stays); the void action ``N``, an empty slot, or a job that cannot be
  placed ends the time step (:func:`advance`): the clock moves, the table shifts, finished jobs
  leave, the end test runs, the arrival of entry ``t`` enters the first empty slot, else the
  backlog, else it is dropped, and the reward ``−Σ 1/len`` over the jobs in the system
  (running list, slots, backlog) is returned. Allocations return reward 0.

Rewards are float64 (``jaxsched.sim`` turns on 64-bit mode), exact to the reference's 1e-9.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxsched.sim.datacenter.types import (
    ALL_DONE,
    NO_NEW_JOB,
    RUNNING,
    STEP_CAP,
    TIME_CAP,
    DCParams,
    DCState,
    i32,
)

__all__ = ["reset", "step", "advance", "allocate", "place_offsets", "fits_now", "in_system", "take"]


def reset(p: DCParams, lens, dems, key=None) -> DCState:
    """An empty cluster at ``t = 0`` for the jobset ``lens`` int [S], ``dems`` int [S, d]."""
    S, N, B = p.simu_len, p.num_slots, p.backlog_size
    neg = jnp.full((S,), -1, jnp.int32)
    s = DCState(
        lens=i32(lens),
        dems=i32(dems),
        t=i32(0),
        steps=i32(0),
        avail=jnp.full((p.horizon, p.num_res), p.res_slot, jnp.int32),
        slots=jnp.full((N,), -1, jnp.int32),
        backlog=jnp.full((B,), -1, jnp.int32),
        bsize=i32(0),
        run=neg,
        nrun=i32(0),
        start=neg,
        finish=neg,
        decided=neg,
        recorded=jnp.zeros((S,), bool),
        dropped=jnp.zeros((S,), bool),
        since_new=i32(0),
        stale_steps=i32(0),
        end=i32(RUNNING),
        key=jax.random.PRNGKey(0) if key is None else key,
    )
    return s if p.deeprm else _arrive(p, s)


def place_offsets(p: DCParams, avail, length, dem) -> jax.Array:
    """bool [H]: offsets ``τ`` at which a job of ``length`` and demands ``dem`` [d] fits in
    every resource for ``length`` rows, ``τ < H − length`` (the reference's range)."""
    H = p.horizon
    bad = jnp.any(avail < dem[None, :], axis=1)
    tau = jnp.arange(H, dtype=jnp.int32)
    window = (tau[None, :] >= tau[:, None]) & (tau[None, :] < tau[:, None] + length)
    ok = ~jnp.any(window & bad[None, :], axis=1) & (tau < H - length) & (length > 0)
    return ok if p.future else ok & (tau == 0)


def fits_now(p: DCParams, s: DCState) -> jax.Array:
    """bool [N]: slots holding a job whose demand fits in each of its next ``len`` rows (the
    heuristics' test; the job's rows beyond the horizon are not checked)."""
    ln, dm = take(s.lens, s.slots), take(s.dems, s.slots)
    rows = jnp.arange(p.horizon, dtype=jnp.int32)
    need = (rows[None, :] < ln[:, None])[:, :, None]
    ok = jnp.all(~need | (s.avail[None, :, :] >= dm[:, None, :]), axis=(1, 2))
    return ok & (s.slots >= 0)


def in_system(p: DCParams, s: DCState) -> jax.Array:
    """float64: the reward of a time advance, ``Σ penalty/len`` over the running list (delay
    penalty), the slots (hold) and the backlog (dismiss); −Σ 1/len with DeepRM's −1 each."""
    inv = jnp.where(s.lens > 0, 1.0 / jnp.maximum(s.lens, 1).astype(jnp.float64), 0.0)

    def total(ids, valid):
        return jnp.sum(jnp.where(valid, take(inv, ids), 0.0))

    k = jnp.arange(p.simu_len)
    b = jnp.arange(p.backlog_size)
    return (
        p.delay_penalty * total(s.run, k < s.nrun)
        + p.hold_penalty * total(s.slots, True)
        + p.dismiss_penalty * total(s.backlog, b < s.bsize)
    )


def allocate(p: DCParams, s: DCState, a) -> tuple[DCState, jax.Array]:
    """Try to allocate slot ``a`` (int32 in ``[0, N)``): ``(state, placed bool)``; the state
    is unchanged when the slot is empty or the job fits nowhere."""
    e = take(s.slots, a)
    ln, dm = take(s.lens, e), take(s.dems, e)
    ok = place_offsets(p, s.avail, ln, dm)
    placed = (e >= 0) & jnp.any(ok)
    tau = jax.lax.argmax(ok, 0, jnp.int32)  # int32 index: lowers under a 32-bit caller
    rows = jnp.arange(p.horizon, dtype=jnp.int32)
    use = ((rows >= tau) & (rows < tau + ln))[:, None] * dm[None, :]
    head = s.backlog[0]
    has_b = s.bsize > 0
    new = s.replace(
        avail=s.avail - use,
        start=_set(s.start, e, s.t + tau),
        finish=_set(s.finish, e, s.t + tau + ln),
        decided=_set(s.decided, e, s.t),
        run=_set(s.run, s.nrun, e),
        nrun=s.nrun + 1,
        slots=_set(s.slots, a, jnp.where(has_b, head, -1)),
        backlog=jnp.where(has_b, jnp.append(s.backlog[1:], -1), s.backlog),
        bsize=s.bsize - has_b.astype(jnp.int32),
    )
    return _select(placed, new, s), placed


def _prune(p: DCParams, s: DCState) -> DCState:
    """Drop finished jobs (``finish ≤ t``) from the running list, keeping its order. In deeprm
    mode a finished job right after a removed one is skipped (the reference removes while
    iterating): of a run of consecutive finished jobs every other one stays."""
    K = p.simu_len
    k = jnp.arange(K, dtype=jnp.int32)
    valid = k < s.nrun
    fin = valid & (take(s.finish, s.run) <= s.t)
    if p.deeprm:
        last_open = jax.lax.cummax(jnp.where(fin, -1, k))
        removed = fin & ((k - last_open - 1) % 2 == 0)
    else:
        removed = fin
    keep = valid & ~removed
    pos = jnp.where(keep, jnp.cumsum(keep) - 1, K)
    onto = pos[:, None] == k[None, :]  # [old, new] one-hot (no scatter: fast to compile)
    run = jnp.max(jnp.where(onto, s.run[:, None], -1), axis=0)
    nrun = jnp.sum(keep).astype(jnp.int32)
    return s.replace(
        run=run, nrun=nrun, stale_steps=s.stale_steps + jnp.sum(keep & fin).astype(jnp.int32)
    )


def _arrive(p: DCParams, s: DCState) -> DCState:
    """The arrival of entry ``t`` (if ``t < S`` and it holds a job): first empty slot, else
    the backlog's end, else dropped."""
    t = s.t
    e = jnp.minimum(t, p.simu_len - 1)
    comes = (t < p.simu_len) & (take(s.lens, e) > 0)
    empty = s.slots < 0
    to_slot = comes & jnp.any(empty)
    to_back = comes & ~to_slot & (s.bsize < p.backlog_size)
    drop = comes & ~to_slot & ~to_back
    # int32 index, then the default int: lowers under a 32-bit caller (jaxsched.precision)
    slot = jax.lax.argmax(empty, 0, jnp.int32).astype(int)
    here = jnp.arange(p.simu_len) == e
    return s.replace(
        slots=jnp.where(to_slot, _set(s.slots, slot, e), s.slots),
        backlog=jnp.where(to_back, _set(s.backlog, s.bsize, e), s.backlog),
        bsize=s.bsize + to_back.astype(jnp.int32),
        recorded=s.recorded | (here & (to_slot | to_back)),
        dropped=s.dropped | (here & drop),
        since_new=jnp.where(comes, 0, s.since_new),
    )


def _end_code(p: DCParams, s: DCState) -> jax.Array:
    """The end test of a time advance (before the arrival): an end code or RUNNING."""
    past = s.t >= p.simu_len
    if p.end == "no_new_job":
        return jnp.where(past, NO_NEW_JOB, RUNNING).astype(jnp.int32)
    empty = (s.nrun == 0) & jnp.all(s.slots < 0) & (s.bsize == 0)
    capped = (s.t > p.time_cap) if p.time_cap > 0 else False
    code = jnp.where(past & empty, ALL_DONE, jnp.where(capped, TIME_CAP, RUNNING))
    return code.astype(jnp.int32)


def advance(p: DCParams, s: DCState) -> tuple[DCState, jax.Array]:
    """End the time step: ``(state, reward float64)`` (see the module docstring)."""
    free = jnp.full((1, p.num_res), p.res_slot, jnp.int32)
    s = s.replace(
        t=s.t + 1,
        avail=jnp.concatenate([s.avail[1:], free], axis=0),
        since_new=jnp.minimum(s.since_new + 1, p.max_track_since_new),
    )
    s = _prune(p, s)
    end = _end_code(p, s)
    s = _select(end == RUNNING, _arrive(p, s), s).replace(end=end)
    return s, in_system(p, s)


def step(p: DCParams, s: DCState, action):
    """One action (int, ``N`` or anything outside ``[0, N)`` = void).

    Returns ``(state, reward float64, allocated bool, terminated bool, truncated bool)``.
    A step on an ended episode changes nothing and returns reward 0, both flags False."""
    a = i32(action)
    inside = (a >= 0) & (a < p.num_slots)
    s_alloc, placed = allocate(p, s, jnp.clip(a, 0, p.num_slots - 1))
    placed = placed & inside
    s_adv, r_adv = advance(p, s)
    new = _select(placed, s_alloc, s_adv)
    reward = jnp.where(placed, 0.0, r_adv)
    new = new.replace(steps=s.steps + 1)
    if p.step_cap > 0:
        cut = (new.end == RUNNING) & (new.steps >= p.step_cap)
        new = new.replace(end=jnp.where(cut, STEP_CAP, new.end).astype(jnp.int32))
    live = ~s.done
    new = _select(live, new, s)
    terminated = live & (new.end != RUNNING) & (new.end != STEP_CAP)
    truncated = live & (new.end == STEP_CAP)
    return new, jnp.where(live, reward, 0.0), live & placed, terminated, truncated


def take(x, idx):
    """``x[idx]`` along the first axis (``x`` [n, ...], ``idx`` int of any shape; 0 where
    ``idx`` is out of range), as a one-hot sum: no gather, which XLA compiles faster under
    ``vmap`` (the arrays are tiny)."""
    idx = jnp.asarray(idx)
    hot = idx[..., None] == jnp.arange(x.shape[0])
    hot = hot.reshape(hot.shape + (1,) * (x.ndim - 1))
    return jnp.sum(jnp.where(hot, x, jnp.zeros((), x.dtype)), axis=idx.ndim, dtype=x.dtype)


def _set(x, i, v):
    """``x`` [n] with entry ``i`` set to ``v`` (no change when ``i`` is out of range); a
    select, not a scatter, which XLA compiles faster under ``vmap``."""
    return jnp.where(jnp.arange(x.shape[0]) == i, v, x)


def _select(c, a, b):
    """Tree-wise ``where(c, a, b)``."""
    return jax.tree_util.tree_map(lambda x, y: jnp.where(c, x, y), a, b)
