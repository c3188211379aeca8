"""Wrappers over any environment of the contract (:mod:`jaxsched.envs.core`).

* :class:`AutoResetWrapper`: a finished episode continues with a fresh one inside ``step``.
"""

from __future__ import annotations

from typing import Any

import jax

from jaxsched.envs.async_rows import async_rollout
from jaxsched.envs.core import Environment, for_caller, transition_timestep
from jaxsched.precision import caller_scope, unpack_64bit, x64_enabled
from jaxsched.sim.batching import sparse_cond

__all__ = ["AutoResetWrapper"]


def _next_episode(env, state):
    return env.next_episode(state)


def _same_state(env, state):
    return state


class AutoResetWrapper:
    """Continue with a fresh episode whenever one ends (jumanji's ``AutoResetWrapper`` /
    gymnax's select-based auto-reset), for any :class:`~jaxsched.envs.core.Environment`.

    ``step`` returns the ending transition's ``reward``, ``discount``, ``step_type`` (LAST),
    ``terminated``/``truncated`` and ``extras`` (the finished episode's), but the state and the
    observation of the *next* episode's first decision (``env.next_episode(state)``, by
    default ``env.init_state(state.key)``), so ``jax.lax.scan`` over ``step`` can run forever.
    Under ``vmap`` the next episode's state is computed only for the environments whose
    episode ended (:func:`~jaxsched.sim.batching.sparse_cond`; selecting a fresh state for
    every row at every step used to cost as much as the step itself), then the observation is
    built once, from the resulting state. Every other attribute is the wrapped env's.
    """

    def __init__(self, env: Environment):
        self.env = env

    def __getattr__(self, name: str) -> Any:
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, key):
        return self.env.reset(key)

    def reset_at(self, start, key=None):
        return self.env.reset_at(start, key)

    def step(self, state, action):
        caller = x64_enabled()
        env = self.env
        with caller_scope():
            state = state if caller else unpack_64bit(state)
            new, reward, terminated, truncated, extras = env.transition(state, action)
            nxt = sparse_cond(terminated | truncated, _next_episode, _same_state, env, new)
            ts = transition_timestep(reward, terminated, truncated, env.observe(nxt), extras)
        return for_caller(caller, (nxt, ts))

    def run_async(self, decide_fn, state, ts, T: int, chunk: int):
        """The asynchronous-rows loop over a batch of the wrapped env
        (:func:`jaxsched.envs.async_rows.async_rollout`; the env implements its protocol)."""
        with caller_scope():
            return async_rollout(self.env, decide_fn, state, ts, T, chunk)


jax.tree_util.register_pytree_node(
    AutoResetWrapper, lambda w: ((w.env,), None), lambda _, ch: AutoResetWrapper(ch[0])
)
