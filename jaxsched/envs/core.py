"""The environment contract every jaxsched RL environment implements (gymnax-style).

An environment is a pytree (its device data are leaves, its configuration static) whose
methods are pure and can be ``jit``-ed and ``vmap``-ed. It writes only its own transition, as
a few public *hooks*; the base class :class:`Environment` owns ``reset``, ``reset_at`` and
``step``, and :class:`jaxsched.envs.wrappers.AutoResetWrapper` auto-resets any environment
through the same hooks.

Hooks an environment implements (``State`` is its own ``flax.struct`` pytree)::

    num_actions: int                                      # static
    init_state(key) -> State                              # a sampled episode, first decision
    init_state_at(start, key=None) -> State               # a given episode (evaluation)
    transition(state, action) -> (State, reward, terminated, truncated, extras)
    observe(state) -> Observation                         # subclass of Observation
    reset_extras(state) -> dict                           # optional: extras of a FIRST step
    next_episode(state) -> State                          # optional: the auto-reset state

* ``key``: a PRNG key; ``start``: an int32 scalar naming the episode (for a workload: the trace
  index of its first job). ``action``: int32 scalar in ``[0, num_actions)``.
* ``transition`` returns ``reward`` float32 scalar, ``terminated`` and ``truncated`` bool
  scalars (the episode ended by itself / was cut short; at most one matters for the
  discount) and ``extras``, a dict of scalars with the same structure as ``reset_extras``'s
  (so ``lax.scan`` over steps has a fixed carry). A transition on a finished state is allowed
  (it returns the state unchanged or any valid state; it must not fail or produce NaN).
* ``next_episode(state)`` is the state a finished episode continues with under auto-reset;
  the default is ``init_state(state.key)``, so a state that uses the default carries a PRNG
  ``key`` for the next episode (``init_state`` must store a key derived from its argument).
  An environment whose episodes follow from the state in another way overrides it.

What the base builds from them (all shapes per environment; a leading batch axis under vmap):

* :class:`TimeStep`: ``step_type`` int8 (:data:`FIRST`, :data:`MID`, :data:`LAST`),
  ``reward`` float32, ``discount`` float32 (0 only on termination, else 1), ``observation``,
  ``extras`` (dict), ``terminated`` and ``truncated`` bool (kept apart; ``last()`` = either).
* :class:`Observation`: ``mask`` bool ``[num_actions]`` (True = a valid action); environments
  subclass it with their own fields (e.g. ``obs``).

::

    state, ts = env.reset(key)            # ts.first()
    state, ts = env.reset_at(start, key)  # a given episode
    state, ts = env.step(state, action)   # ts.mid() or ts.last()
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

__all__ = ["FIRST", "MID", "LAST", "Observation", "TimeStep", "Environment"]

#: Step types (dm_env / jumanji convention).
FIRST, MID, LAST = 0, 1, 2


@struct.dataclass
class Observation:
    """What an agent sees; environments subclass it with their own fields.

    Attributes:
      mask: bool ``[num_actions]``, True for the actions allowed now.
    """

    mask: jax.Array


@struct.dataclass
class TimeStep:
    """One transition's output (see the module docstring for dtypes).

    ``discount`` is 0 only when the episode terminated; a truncated episode keeps discount 1
    (its value is bootstrapped). ``last()`` / ``done``: terminated or truncated."""

    step_type: jax.Array
    reward: jax.Array
    discount: jax.Array
    observation: Any
    extras: dict
    terminated: jax.Array
    truncated: jax.Array

    def first(self) -> jax.Array:
        return self.step_type == FIRST

    def mid(self) -> jax.Array:
        return self.step_type == MID

    def last(self) -> jax.Array:
        return self.step_type == LAST

    @property
    def done(self) -> jax.Array:
        """True when the episode is over (same as :meth:`last`)."""
        return self.step_type == LAST


def first_timestep(observation, extras: dict) -> TimeStep:
    """The FIRST timestep: reward 0, discount 1."""
    return TimeStep(
        step_type=jnp.asarray(FIRST, jnp.int8),
        reward=jnp.asarray(0.0, jnp.float32),
        discount=jnp.asarray(1.0, jnp.float32),
        observation=observation,
        extras=extras,
        terminated=jnp.asarray(False),
        truncated=jnp.asarray(False),
    )


def transition_timestep(reward, terminated, truncated, observation, extras: dict) -> TimeStep:
    """A MID or LAST timestep from a transition's outputs."""
    terminated = jnp.asarray(terminated, bool)
    truncated = jnp.asarray(truncated, bool)
    return TimeStep(
        step_type=jnp.where(terminated | truncated, LAST, MID).astype(jnp.int8),
        reward=jnp.asarray(reward, jnp.float32),
        discount=jnp.where(terminated, 0.0, 1.0).astype(jnp.float32),
        observation=observation,
        extras=extras,
        terminated=terminated,
        truncated=truncated,
    )


class Environment:
    """Base class of the contract (see the module docstring).

    Subclasses are registered as pytrees automatically: they define ``tree_flatten(self) ->
    (leaves, aux)`` and the classmethod ``tree_unflatten(aux, leaves)``, or inherit the
    default, which has no leaves and uses the environment itself as the static part (it must
    then be hashable and compare equal when it is the same configuration, e.g. a frozen
    dataclass; otherwise every instance compiles its own functions).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        jax.tree_util.register_pytree_node(
            cls, lambda env: env.tree_flatten(), lambda aux, ch: cls.tree_unflatten(aux, ch)
        )

    def tree_flatten(self):
        return (), self

    @classmethod
    def tree_unflatten(cls, aux, children):
        return aux

    # -- hooks -------------------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        raise NotImplementedError

    def init_state(self, key):
        raise NotImplementedError

    def init_state_at(self, start, key=None):
        raise NotImplementedError

    def transition(self, state, action):
        raise NotImplementedError

    def observe(self, state) -> Observation:
        raise NotImplementedError

    def reset_extras(self, state) -> dict:
        """Extras of the FIRST timestep (same structure as ``transition``'s)."""
        return {}

    def next_episode(self, state):
        """The state a finished episode continues with under auto-reset."""
        return self.init_state(state.key)

    # -- the API -----------------------------------------------------------------------------
    def reset(self, key):
        """A sampled episode: ``(state, FIRST timestep)``."""
        state = self.init_state(key)
        return state, first_timestep(self.observe(state), self.reset_extras(state))

    def reset_at(self, start, key=None):
        """The episode ``start``: ``(state, FIRST timestep)``."""
        state = self.init_state_at(start, key)
        return state, first_timestep(self.observe(state), self.reset_extras(state))

    def step(self, state, action):
        """One transition: ``(state, MID or LAST timestep)`` (no auto-reset)."""
        new, reward, terminated, truncated, extras = self.transition(state, action)
        return new, transition_timestep(reward, terminated, truncated, self.observe(new), extras)
