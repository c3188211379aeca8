"""The environment contract every jaxsched RL environment implements (jumanji-style:
``reset(key) -> (state, TimeStep)``, ``step(state, action) -> (state, TimeStep)``; the
gymnax-style view is :mod:`jaxsched.envs.interfaces.gymnax_env`).

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

64-bit mode (:mod:`jaxsched.precision`): every method an environment class defines, and its
construction, runs with JAX's 64-bit mode on, whatever the caller's setting. When the caller's
mode is off, ``reset``/``reset_at``/``step`` return the timestep cast to 32 bits (float32
rewards, discounts, observations and extras, int32 integers, bool masks) and the state with
its 64-bit leaves (times) packed as their bits (:class:`~jaxsched.precision.Packed64`,
uint32 ``[..., 2]``), so every leaf a 32-bit program holds is 32-bit: a ``jit`` argument, a
``vmap``-ed value, a ``lax.scan`` carry, a search tree's or replay buffer's
``jnp.zeros(shape, x.dtype)`` copy, all exact. Every environment method unpacks them.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxsched.precision import (
    caller_scope,
    has_packed,
    pack_64bit,
    to_32bit,
    unpack_64bit,
    x64_enabled,
)

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


#: methods an environment class defines that are not wrapped in the 64-bit scope
_UNSCOPED = frozenset({"tree_flatten", "tree_unflatten"})


def _scoped_method(fn):
    """``fn`` run under :func:`jaxsched.precision.x64`; for a 32-bit caller its arguments'
    packed 64-bit leaves (a state from ``reset``/``step``) are unpacked first."""

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if x64_enabled():
            return fn(self, *args, **kwargs)
        with caller_scope():
            if has_packed((args, kwargs)):
                args, kwargs = unpack_64bit((args, kwargs))
            return fn(self, *args, **kwargs)

    method.__jaxsched_x64__ = True
    return method


def _scope_methods(cls) -> None:
    """Wrap every plain function ``cls`` defines (and properties' getters) in
    :func:`_scoped_method`."""
    for name, value in list(vars(cls).items()):
        if name in _UNSCOPED or (name.startswith("__") and name != "__call__"):
            continue
        if callable(value) and not isinstance(value, type) and hasattr(value, "__code__"):
            if not getattr(value, "__jaxsched_x64__", False):
                setattr(cls, name, _scoped_method(value))
        elif isinstance(value, property) and value.fget is not None:
            if not getattr(value.fget, "__jaxsched_x64__", False):
                getter = _scoped_method(value.fget)
                setattr(cls, name, property(getter, value.fset, value.fdel, value.__doc__))


class _ScopedConstruction(type):
    """Metaclass of :class:`Environment`: an environment is built under the 64-bit scope (its
    device arrays keep their int64 times whatever the caller's mode)."""

    def __call__(cls, *args, **kwargs):
        with caller_scope():
            return super().__call__(*args, **kwargs)


def for_caller(caller_x64: bool, out):
    """``(state, timestep)`` as the caller sees it: when the caller's 64-bit mode is off, the
    timestep cast to 32 bits and the state's 64-bit leaves packed
    (:func:`jaxsched.precision.pack_64bit`: every leaf 32-bit, the values exact)."""
    state, ts = out
    return (state, ts) if caller_x64 else (pack_64bit(state), to_32bit(ts))


class Environment(metaclass=_ScopedConstruction):
    """Base class of the contract (see the module docstring).

    Subclasses are registered as pytrees automatically: they define ``tree_flatten(self) ->
    (leaves, aux)`` and the classmethod ``tree_unflatten(aux, leaves)``, or inherit the
    default, which has no leaves and uses the environment itself as the static part (it must
    then be hashable and compare equal when it is the same configuration, e.g. a frozen
    dataclass; otherwise every instance compiles its own functions).
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _scope_methods(cls)
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
        caller = x64_enabled()
        with caller_scope():
            state = self.init_state(key)
            out = state, first_timestep(self.observe(state), self.reset_extras(state))
        return for_caller(caller, out)

    def reset_at(self, start, key=None):
        """The episode ``start``: ``(state, FIRST timestep)``."""
        caller = x64_enabled()
        with caller_scope():
            state = self.init_state_at(start, key)
            out = state, first_timestep(self.observe(state), self.reset_extras(state))
        return for_caller(caller, out)

    def observation_spec(self):
        """The observation pytree with a :class:`jaxsched.envs.specs.Array` at each leaf (as
        the caller sees it: 32-bit when the caller's 64-bit mode is off); nothing is run."""
        from jaxsched.envs import specs

        shapes = jax.eval_shape(lambda k: self.reset(k)[1].observation, jax.random.PRNGKey(0))
        return specs.from_shapes(shapes)

    def action_spec(self):
        """The action: a :class:`jaxsched.envs.specs.DiscreteArray` (int32 scalar in
        ``[0, num_actions)``; ``observation.mask`` says which are valid now)."""
        from jaxsched.envs import specs

        n = int(self.num_actions)
        return specs.DiscreteArray(shape=(), dtype=jnp.dtype("int32"), name="action", num_values=n)

    def step(self, state, action):
        """One transition: ``(state, MID or LAST timestep)`` (no auto-reset)."""
        caller = x64_enabled()
        with caller_scope():
            state = state if caller else unpack_64bit(state)
            new, reward, terminated, truncated, extras = self.transition(state, action)
            ts = transition_timestep(reward, terminated, truncated, self.observe(new), extras)
        return for_caller(caller, (new, ts))
