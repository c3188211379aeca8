"""Heuristic baselines of the split-window paper (spec ``split_window.md`` §7) in the same
online environment: FCFS, SJF (fewest requested cores, the paper's definition; ``sjf-run``:
shortest requested run time, RLScheduler's SJF) and LCFS, each without back-filling or with

* ``"rlscheduler"`` back-filling: when the highest-priority job p does not fit, compute its
  earliest start (shadow) from the running jobs' end times, then start, in arrival order,
  every queued job that fits now and ends (now + r) no later than the shadow;
* ``"easy"``: true EASY — also jobs that fit now and need no more than the cores left over at
  the shadow after p's reservation (those then shrink).

The heuristics see the whole queue (no window). At every cycle (an arrival or the
completions of one instant, the same events as the agent's) they start jobs until neither p
nor a back-fill candidate can start, then the next event is processed; the episode ends on
the ``placements``-th placement like the agent's, so :meth:`SplitWindowEnv.metrics` applies.
Per cycle the ``steps`` counter grows by one, the invisible-job counters use the env's window
size M, and ``reward_sum`` adds ℜ(t) at the end of each cycle (what a Fwd would get).

Policy and back-filling are int codes, traceable or fixed: :func:`run_baselines` compiles one
call per combination with both fixed, vmapped over the episodes.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs.splitwindow import SplitWindowEnv
from jaxsched.errors import ConfigError
from jaxsched.sim import cores as C
from jaxsched.sim.types import BIG

__all__ = ["PRIORITIES", "BACKFILLS", "baseline_names", "run_baselines", "run_picker"]

PRIORITIES = ("fcfs", "sjf", "lcfs", "sjf-run")
BACKFILLS = ("none", "rlscheduler", "easy")


def _priority_pos(env: SplitWindowEnv, sim: C.CoreState, prio):
    """int32 queue position of the highest-priority queued job (ties: arrival order)."""
    q = sim.q_job.shape[0]
    pos = jnp.arange(q, dtype=jnp.int64)
    j = jnp.maximum(sim.q_job, 0)
    primary = jnp.stack(
        [jnp.zeros_like(pos), env.data.cores[j].astype(jnp.int64), -pos, env.data.run[j]]
    )[prio]
    key = jnp.where(pos < sim.q_len, primary * (2 * q) + pos, BIG)
    return jnp.argmin(key).astype(jnp.int32)


def _backfill_pos(env: SplitWindowEnv, sim: C.CoreState, p, bf):
    """int32 queue position of the first (arrival order) back-fill candidate, −1 if none."""
    busy = sim.core_tag >= 0
    free = jnp.sum(~busy).astype(jnp.int32)
    need = env.data.cores[jnp.maximum(sim.q_job[p], 0)]
    ends = jnp.sort(jnp.where(busy, sim.core_end, BIG))
    shadow = ends[jnp.clip(need - free - 1, 0, ends.shape[0] - 1)]
    extra = free + jnp.sum(busy & (sim.core_end <= shadow)) - need
    pos = jnp.arange(sim.q_job.shape[0], dtype=jnp.int32)
    j = jnp.maximum(sim.q_job, 0)
    c, r = env.data.cores[j], env.data.run[j]
    ok = (pos < sim.q_len) & (pos != p) & (c <= free)
    short = sim.t + r <= shadow
    ok = ok & jnp.where(bf == 2, short | (c <= extra), short) & (bf > 0)
    return jnp.where(ok.any(), jnp.argmax(ok).astype(jnp.int32), -1)


def _cycle(env: SplitWindowEnv, sim: C.CoreState, prio, bf, pick=None, aux=None):
    """Start jobs at the current clock until nothing more can start (or the episode ends).
    ``pick(sim, aux) -> (int32 queue position, aux)`` replaces the priority ``prio`` when
    given; a negative position starts nothing and ends the cycle (a veto). Returns
    ``(sim, aux)``."""

    def body(c):
        s, _, aux = c
        if pick is None:
            p = _priority_pos(env, s, prio)
        else:
            p, aux = pick(s, aux)
        veto = p < 0
        p = jnp.maximum(p, 0)
        j = jnp.maximum(s.q_job[p], 0)
        fits = (s.q_len > 0) & (env.data.cores[j] <= jnp.sum(s.core_tag < 0))
        b = jnp.where(fits | (s.q_len == 0) | veto, -1, _backfill_pos(env, s, p, bf))
        pos = jnp.where(veto, -1, jnp.where(fits, p, b))
        s2, ok = C.start_job(env.data, s, pos, pos >= 0)
        return s2, ok & (s2.placed < env.cfg.placements), aux

    sim, _, aux = jax.lax.while_loop(lambda c: c[1], body, (sim, jnp.asarray(True), aux))
    return sim, aux


def _episode(env: SplitWindowEnv, start, prio, bf, pick=None, aux=None) -> dict:
    cfg, m = env.cfg, env.window
    w1, w2, w3 = cfg.weights

    def body(c):
        s, aux = c
        L = s.sim.q_len
        sim, aux = _cycle(env, s.sim, prio, bf, pick, aux)
        end = sim.placed >= cfg.placements
        t1, t2, t3 = C.reward_terms(sim, cfg.n_cores)
        r = jnp.where(end, 0.0, -(w1 * t1 + w2 * t2 + w3 * t3))
        sim = C.advance_one(env.data, sim, cfg.completions, enabled=~end)
        s = s.replace(
            sim=sim,
            steps=s.steps + 1,
            sum_invisible=s.sum_invisible + jnp.maximum(L - m, 0),
            partial=s.partial + (L > m).astype(jnp.int32),
            reward_sum=s.reward_sum + r,
            done=end | sim.exhausted | sim.overflow,
        )
        return s, aux

    s, _ = jax.lax.while_loop(lambda c: ~c[0].done, body, (env.init_state_at(start), aux))
    return env.metrics(s)


def baseline_names(priorities=PRIORITIES, backfills=BACKFILLS) -> list[str]:
    """Labels ``"<priority>+<backfill>"`` (e.g. ``"sjf+easy"``) in :func:`run_baselines`
    order."""
    return [f"{p}+{b}" for p in priorities for b in backfills]


def run_baselines(env: SplitWindowEnv, starts, priorities=PRIORITIES, backfills=BACKFILLS):
    """§8 metrics of every heuristic × back-filling on the episodes ``starts``: dict of host
    arrays ``[H, B]`` (H = ``len(priorities) * len(backfills)``, in :func:`baseline_names`
    order). One compiled call per heuristic × back-filling, vmapped over the episodes: with
    both fixed, each program holds its own branches only and its loop runs as long as its own
    slowest episode (one call vmapped over all twelve ran every branch for every row, as long
    as the slowest of all: 51 s against 39 s for 10 episodes, 2,277 s against 301 s for
    100, benchmarks/RESULTS.md §6.7). Raises
    :class:`~jaxsched.sim.cores.QueueOverflow` if a queue outgrew ``queue_cap``."""
    for p in priorities:
        if p not in PRIORITIES:
            raise ConfigError(f"unknown heuristic {p!r}; choose from {', '.join(PRIORITIES)}")
    for b in backfills:
        if b not in BACKFILLS:
            raise ConfigError(f"unknown back-filling {b!r}; choose from {', '.join(BACKFILLS)}")
    starts = jnp.asarray(starts, jnp.int32)
    rows = [
        jax.tree_util.tree_map(
            np.asarray, _run(PRIORITIES.index(p), BACKFILLS.index(b))(env, starts)
        )
        for p in priorities
        for b in backfills
    ]
    out = jax.tree_util.tree_map(lambda *r: np.stack(r), *rows)
    C.check_overflow(out["overflow"], env.cfg.queue_cap)
    return out


def run_picker(env: SplitWindowEnv, starts, pick, backfill: str = "rlscheduler", aux=None) -> dict:
    """§8 metrics (host arrays ``[B]``) of a priority given as a traceable ``pick(sim, aux) ->
    (int32 queue position, aux)`` (a learned scheduler's choice among the queued jobs; a
    negative position vetoes: nothing starts until the next event) with ``backfill`` around
    it, on the episodes ``starts``, in the heuristics' cycle and end rules. ``aux`` (a pytree,
    e.g. per-job counters) starts every episode as given and is threaded through the picks.
    One compiled, vmapped call."""
    if backfill not in BACKFILLS:
        raise ConfigError(f"unknown back-filling {backfill!r}; choose from {', '.join(BACKFILLS)}")
    bf = BACKFILLS.index(backfill)
    run = jax.jit(jax.vmap(lambda e, s, a: _episode(e, s, 0, bf, pick, a), in_axes=(None, 0, None)))
    out = jax.tree_util.tree_map(np.asarray, run(env, jnp.asarray(starts, jnp.int32), aux))
    C.check_overflow(out["overflow"], env.cfg.queue_cap)
    return out


@functools.cache
def _run(prio: int, bf: int):
    """``(env, starts [E]) -> metrics [E]`` of one heuristic and back-filling, compiled once."""
    return jax.jit(jax.vmap(lambda env, start: _episode(env, start, prio, bf), in_axes=(None, 0)))
