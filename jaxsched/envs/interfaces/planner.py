"""A model view of a jaxsched environment for search libraries (mctx's ``recurrent_fn``).

``PlannerView(env).step(state, action) -> (state, reward, discount, observation)`` is one
transition without auto-reset (a finished state stays finished: reward 0, discount 0 from
there on), so a search tree can expand any node; ``state`` is a :class:`PlannerState` (the
environment's state and whether its episode has ended); ``root(key)``/``root_at(start)`` give the
state and observation to search from; ``mask(state)`` the valid actions. Batched use:
``jax.vmap`` the methods (mctx passes batches of states).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

__all__ = ["PlannerView", "PlannerState"]


@struct.dataclass
class PlannerState:
    """``env``: the environment's state; ``done``: bool, its episode has ended."""

    env: object
    done: jax.Array


class PlannerView:
    """Model view of ``env`` (see the module docstring)."""

    def __init__(self, env):
        self.env = env

    @property
    def num_actions(self) -> int:
        return int(self.env.num_actions)

    def root(self, key):
        """``(state, observation)`` of a sampled episode."""
        state, ts = self.env.reset(key)
        return PlannerState(state, jnp.asarray(False)), ts.observation

    def root_at(self, start, key=None):
        state, ts = self.env.reset_at(start, key)
        return PlannerState(state, jnp.asarray(False)), ts.observation

    def mask(self, state: PlannerState) -> jax.Array:
        return self.env.observe(state.env).mask

    def step(self, state, action):
        """``(state, reward, discount, observation)``; once an episode has ended every later
        step gives reward 0 and discount 0 (the state is the one ``env.step`` returns)."""
        new, ts = self.env.step(state.env, jnp.asarray(action, jnp.int32))
        reward = jnp.where(state.done, 0.0, ts.reward).astype(jnp.float32)
        done = state.done | ts.last()
        discount = jnp.where(done, 0.0, 1.0).astype(jnp.float32)
        return PlannerState(new, done), reward, discount, ts.observation


jax.tree_util.register_pytree_node(
    PlannerView, lambda p: ((p.env,), None), lambda _, ch: PlannerView(ch[0])
)
