"""The asynchronous-rows loop (issue 48): every row of a batch advances by one micro-step per
iteration, rows at a decision take their action in that same iteration and write their
transition at their own decision counter; auto-reset per row.

The protocol an environment implements for it (all for ONE environment; vmapped here)::

    async_ok: bool                                 # the transition is micro-stepped
    async_observe(state) -> (state, observation)   # at a decision: its observation
    async_decide(state, action) -> state           # the decision's own micro-step
    async_pending(state) -> bool                   # the transition needs more micro-steps
    async_drain(state) -> state                    # one more micro-step
    async_finish(state, arrived) -> (state, reward, terminated, truncated, extras)

(``async_finish`` ends the transition where ``arrived`` holds, as ``transition`` does, and
leaves the state alone elsewhere; its outputs are only read where ``arrived`` holds), so that
``async_finish(drain*(async_decide(s, a)), True)`` equals ``env.transition(s, a)`` and
``async_observe(s)[1]`` equals ``env.observe(s)``; the auto-reset is ``env.next_episode``.
:class:`jaxsched.envs.wrappers.AutoResetWrapper` exposes the loop as ``run_async`` (the
trainers reach it through the wrapper: :mod:`jaxsched.train.async_rollout`).
:func:`async_episodes` is the loop without auto-reset: every row plays its one episode to
its end (evaluation, ``jaxsched evaluate --model``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxsched.envs.core import LAST, MID, TimeStep
from jaxsched.sim.batching import sparse_cond

__all__ = ["async_rollout", "async_episodes"]

_F32 = jnp.float32


def _first_k(flag, K):
    """int32 ``[K]``: the first ``K`` rows where ``flag`` (bool ``[B]``) holds, ``B`` = none."""
    B = flag.shape[0]
    key = jnp.where(flag, jnp.arange(B, dtype=jnp.int32), B)
    return -jax.lax.top_k(-key, K)[0]


def _take(tree, idx):
    return jax.tree_util.tree_map(lambda v: v[idx], tree)


def _put(tree, idx, sub):
    """Rows ``idx`` (``B`` = none) of ``tree`` replaced by ``sub``."""
    return jax.tree_util.tree_map(lambda v, s: v.at[idx].set(s, mode="drop"), tree, sub)


def _put_at(buf, rows, t, val, B, T):
    """``buf[rows * T + t] = val`` in flat ``[B * T + 1, ...]`` buffers, for the rows named at
    their own decision counters ``t``; rows ``B`` (none) write the spare last entry. Every
    write is in bounds and unconditional: a masked or dropped write made XLA rewrite the whole
    buffer in every iteration."""
    flat = jnp.where(rows < B, rows * T + t, B * T)
    return jax.tree_util.tree_map(
        lambda b, v: b.at[flat].set(v, mode="promise_in_bounds"), buf, val
    )


def _where(m, a, b):
    return jax.tree_util.tree_map(
        lambda x, y: jnp.where(m.reshape(m.shape + (1,) * (x.ndim - 1)), x, y), a, b
    )


def _next_episode(env, state):
    return env.next_episode(state)


def _same(env, state):
    return state


def _buffers(B, T, proto):
    """Zero flat ``[B * T + 1, ...]`` buffers shaped like ``proto`` (a pytree of ``[K, ...]``;
    the last entry takes the writes of no row)."""
    return jax.tree_util.tree_map(lambda v: jnp.zeros((B * T + 1,) + v.shape[1:], v.dtype), proto)


def async_rollout(env, decide_fn: Callable, state, ts: TimeStep, T: int, chunk: int):
    """The asynchronous loop over a batch of ``B`` environments (every leaf of ``state`` and
    ``ts`` with a leading axis ``B``), ``T`` decisions per row.

    ``decide_fn(rows int32 [K], t int32 [K], ts) -> (action int32 [K], record)``: the action of
    the gathered rows at their decision ``t`` (``ts`` the :class:`TimeStep` the action is
    chosen on, observation included), and a pytree ``record`` of ``[K, ...]`` arrays to store
    at ``[row, t]``. At most ``chunk`` rows decide per iteration (the others wait: a row's
    results do not depend on when it steps).

    ``ts.observation`` is not read (pass None). Returns ``(state, ts, out)``: the final states
    and last timesteps (observation None) and ``out``, a dict of row-major ``[B, T, ...]``
    arrays ``record``, ``reward`` (float32) and ``done`` (bool), and ``iterations`` (int32
    scalar: loop iterations).
    """
    inner = env  # the env itself (not an auto-reset wrapper)
    B = jax.tree_util.tree_leaves(state)[0].shape[0]
    K = max(1, min(int(chunk), B))
    rows_all = jnp.arange(B, dtype=jnp.int32)
    observe = jax.vmap(inner.async_observe)
    pending_fn = jax.vmap(inner.async_pending)
    drain = jax.vmap(inner.async_drain)
    finish = jax.vmap(inner.async_finish)

    def decide(c):
        state, ts, d, moving, bufs = c[:5]
        ready = ~moving & (d < T)
        idx = _first_k(ready, K)
        safe = jnp.minimum(idx, B - 1)
        sk, obs = observe(_take(state, safe))
        tk = _take(ts, safe).replace(observation=obs)
        action, record = decide_fn(safe, d[safe], tk)
        sk = jax.vmap(inner.async_decide)(sk, action)
        bufs = dict(bufs, record=_put_at(bufs["record"], idx, d[safe], record, B, T))
        state = _put(state, idx, sk)
        return state, moving.at[idx].set(True, mode="drop"), bufs

    def body(c):
        state, ts, d, moving, bufs, it = c
        state, moving, bufs = decide(c)
        go = moving & pending_fn(state)
        state = _where(go, drain(state), state)
        arrived = moving & ~pending_fn(state)
        state, reward, term, trunc, extras = finish(state, arrived)
        ended = arrived & (term | trunc)
        state = jax.vmap(lambda e, s: sparse_cond(e, _next_episode, _same, inner, s))(ended, state)
        t_new = ts.replace(
            step_type=jnp.where(term | trunc, LAST, MID).astype(jnp.int8),
            reward=jnp.asarray(reward, _F32),
            discount=jnp.where(term, 0.0, 1.0).astype(_F32),
            extras=extras,
            terminated=jnp.asarray(term, bool),
            truncated=jnp.asarray(trunc, bool),
        )
        ts = _where(arrived, t_new, ts)
        rows = jnp.where(arrived, rows_all, B)
        bufs = dict(
            bufs,
            reward=_put_at(bufs["reward"], rows, d, jnp.asarray(reward, _F32), B, T),
            done=_put_at(bufs["done"], rows, d, term | trunc, B, T),
        )
        return state, ts, d + arrived.astype(jnp.int32), moving & ~arrived, bufs, it + 1

    def cond(c):
        return jnp.any(c[3] | (c[2] < T))

    ts = ts.replace(observation=None)

    def first_record():  # the record's structure (traced only: jax.eval_shape)
        z = jnp.zeros((K,), jnp.int32)
        obs = observe(_take(state, z))[1]
        return decide_fn(z, z, _take(ts, z).replace(observation=obs))[1]

    proto = jax.eval_shape(first_record)
    bufs = {
        "record": _buffers(B, T, proto),
        "reward": jnp.zeros((B * T + 1,), _F32),
        "done": jnp.zeros((B * T + 1,), bool),
    }
    zeros = jnp.zeros((B,), jnp.int32)
    c = (state, ts, zeros, jnp.zeros((B,), bool), bufs, jnp.asarray(0, jnp.int32))
    state, ts, _, _, bufs, it = jax.lax.while_loop(cond, body, c)
    bufs = jax.tree_util.tree_map(lambda b: b[: B * T].reshape((B, T) + b.shape[1:]), bufs)
    return state, ts, dict(bufs, iterations=it)


def async_episodes(env, decide_fn: Callable, state, aux, chunk: int):
    """Every row of a batch of ``B`` environments (``state``: every leaf with a leading axis
    ``B``, each at its first decision) plays its episode to its end, one micro-step per row
    and iteration as in :func:`async_rollout`, without auto-reset and without recording.

    ``decide_fn(rows int32 [K], observation, aux) -> (action int32 [K], aux)``: the actions of
    the gathered rows and their new per-row carry ``aux`` (a pytree of ``[B, ...]`` arrays,
    e.g. each row's PRNG key, gathered and scattered back with the rows). At most ``chunk``
    rows decide per iteration. An episode ends where the transition terminates or truncates.

    Returns ``(state, aux, iterations)``: the final states, the final carries and the loop's
    iterations (int32 scalar).
    """
    B = jax.tree_util.tree_leaves(state)[0].shape[0]
    K = max(1, min(int(chunk), B))
    pending_fn = jax.vmap(env.async_pending)
    drain = jax.vmap(env.async_drain)
    finish = jax.vmap(env.async_finish)

    def body(c):
        state, aux, moving, over, it = c
        idx = _first_k(~moving & ~over, K)
        safe = jnp.minimum(idx, B - 1)
        sk, obs = jax.vmap(env.async_observe)(_take(state, safe))
        action, ak = decide_fn(safe, obs, _take(aux, safe))
        sk = jax.vmap(env.async_decide)(sk, action)
        state, aux = _put(state, idx, sk), _put(aux, idx, ak)
        moving = moving.at[idx].set(True, mode="drop")
        go = moving & pending_fn(state)
        state = _where(go, drain(state), state)
        arrived = moving & ~pending_fn(state)
        fin, _, term, trunc, _ = finish(state, arrived)
        state = _where(arrived, fin, state)
        return state, aux, moving & ~arrived, over | (arrived & (term | trunc)), it + 1

    no = jnp.zeros((B,), bool)
    c = (state, aux, no, no, jnp.asarray(0, jnp.int32))
    state, aux, _, _, it = jax.lax.while_loop(lambda c: ~jnp.all(c[3]), body, c)
    return state, aux, it
