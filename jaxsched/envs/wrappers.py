"""Wrappers over any environment of the contract (:mod:`jaxsched.envs.core`).

* :class:`AutoResetWrapper`: a finished episode continues with a fresh one inside ``step``.
"""

from __future__ import annotations

from typing import Any

import jax

from jaxsched.envs.async_rows import async_rollout
from jaxsched.envs.core import Environment, for_caller, transition_timestep
from jaxsched.precision import caller_scope, pack_64bit, to_32bit, unpack_64bit, x64_enabled
from jaxsched.sim.batching import sparse_cond

__all__ = ["AutoResetWrapper"]


def _native_timestep(env, ts):
    """``ts`` (a batch, cast to 32 bits for a 32-bit caller) with the environment's own dtypes
    (its extras and observation; the observation may be None)."""
    native = jax.eval_shape(lambda k: env.reset(k)[1], jax.random.PRNGKey(0))

    def cast(tree, like):
        return jax.tree_util.tree_map(lambda x, s: x.astype(s.dtype), tree, like)

    obs = ts.observation
    return ts.replace(
        extras=cast(ts.extras, native.extras),
        observation=None if obs is None else cast(obs, native.observation),
    )


def _in_callers_mode(decide_fn):
    """A 32-bit caller's ``decide_fn`` run in its own mode (64-bit off) on the 32-bit
    timestep it knows, though the loop calling it runs in jaxsched's scope."""

    def decide(rows, t, ts):
        ts = to_32bit(ts)
        with jax.enable_x64(False):
            return decide_fn(rows, t, ts)

    return decide


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
        caller = x64_enabled()
        with caller_scope():
            if not caller:  # the caller's packed state and 32-bit timestep, as the env has them
                state, ts = unpack_64bit(state), _native_timestep(self.env, ts)
                decide_fn = _in_callers_mode(decide_fn)
            state, ts, out = async_rollout(self.env, decide_fn, state, ts, T, chunk)
        if caller:
            return state, ts, out
        return pack_64bit(state), to_32bit(ts), to_32bit(out)  # as for_caller hands them


jax.tree_util.register_pytree_node(
    AutoResetWrapper, lambda w: ((w.env,), None), lambda _, ch: AutoResetWrapper(ch[0])
)
