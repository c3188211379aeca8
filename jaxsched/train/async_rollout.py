"""Rollouts whose rows step asynchronously (issue 48): one micro-step per row per iteration.

A synchronous rollout (:func:`jaxsched.train.rollout.make_collect`) steps every environment of
the batch by one *decision* per scan step; with backfilling a decision is a data-dependent
drain of micro-steps, so every scan step waits for the batch's slowest row (~240 micro-steps
where the mean row needs ~9, benchmarks/RESULTS.md §4.1). Here one compiled ``while_loop``
advances every row by one micro-step per iteration; a row that reaches a decision takes its
action from the policy (at most ``chunk`` rows per iteration, gathered), writes its transition
at its own decision counter into ``[rows, T]`` buffers, and auto-resets on its own. A rollout
of ``T`` decisions per row then costs about (mean micro-steps per decision × T + one row's
tail) iterations, not T × (the slowest row's micro-steps).

The loop itself is the environment's (``env.run_async``, :mod:`jaxsched.envs.async_rows`,
which names the protocol an environment implements; the training room imports no
environment); this module builds the trainer's ``collect`` on it.

Key schedule (the one difference from :func:`make_collect`'s default): the action of row ``e``
at its decision ``t`` is drawn with ``fold_in(fold_in(base, e), t)``, ``base`` the key after
the ``E`` reset keys of ``split(key, E + T)`` (:func:`jaxsched.train.rollout.row_key`), and
``act`` is applied to that row alone (a batch of one). ``make_collect(..., row_keys=True)`` uses the same schedule, so both
give identical transitions (tests/train/test_async_rollout.py).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxsched.train.rollout import row_act, row_key, to_f32, transitions_of

__all__ = ["supports_async", "make_collect_async"]

_F32 = jnp.float32


def supports_async(env) -> bool:
    """True when ``env`` runs the asynchronous loop (``env.run_async``: an auto-reset wrapper)
    and its transition is micro-stepped (``env.async_ok``, e.g. backfilling on)."""
    return hasattr(env, "run_async") and bool(getattr(env, "async_ok", False))


def _initial(env, keys):
    """Reset states and their FIRST timesteps without observations (computed when needed)."""
    state, ts = jax.vmap(env.reset)(keys)
    return state, ts.replace(observation=None)


def make_collect_async(
    env,
    act: Callable,
    *,
    num_envs: int,
    episodes_per_env: int,
    rollout_steps: int,
    obs_fn: Callable,
    done_fn: Callable | None = None,
    accept_fn: Callable | None = None,
    episode_info_fn: Callable | None = None,
    chunk: int | None = None,
) -> Callable:
    """:func:`jaxsched.train.rollout.make_collect` (same arguments, same outputs) with rows
    that step asynchronously (the module docstring); the key schedule of ``row_keys=True``.

    ``chunk``: rows that may decide in one iteration (default ``max(8, E // 4)``). ``done_fn``
    is ignored: the end of an episode is ``terminated | truncated``.
    """
    E, T = num_envs, rollout_steps
    K = chunk if chunk else max(8, E // 4)

    def collect(params, key, step):
        keys = jax.random.split(key, E + T)
        state, ts = _initial(env, keys[:E])
        base = keys[E]

        def decide_fn(rows, t, tk):
            x = to_f32(obs_fn(tk.observation))
            ks = jax.vmap(lambda r, s: row_key(base, r, s))(rows, t)
            action, fields = row_act(act, params, x, ks)
            if accept_fn is not None:
                accept = accept_fn(tk, step)
            else:
                accept = jnp.ones(action.shape, bool)
            info = {} if episode_info_fn is None else dict(jax.vmap(episode_info_fn)(tk))
            rec = dict(x=x, action=action, fields=dict(fields), accept=accept, info=info)
            return action, rec

        _, _, out = env.run_async(decide_fn, state, ts, T, K)
        tm = jax.tree_util.tree_map(lambda a: jnp.swapaxes(a, 0, 1), out["record"])
        done = jnp.swapaxes(out["done"], 0, 1)
        reward = jnp.swapaxes(out["reward"], 0, 1)
        return transitions_of(tm, reward, done, episodes_per_env)

    return collect
