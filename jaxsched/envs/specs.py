"""Observation and action specs of an environment (small dataclasses, jumanji-like).

:meth:`Environment.observation_spec() <jaxsched.envs.core.Environment.observation_spec>` is the
environment's observation pytree (its own :class:`~jaxsched.envs.core.Observation` subclass)
with an :class:`Array` spec at every leaf: shape and dtype as a caller of ``reset``/``step``
sees them (32-bit when the caller's 64-bit mode is off, :mod:`jaxsched.precision`); the
``mask`` leaf (bool ``[num_actions]``, True = a valid action) is a :class:`BoolArray`.
:meth:`~jaxsched.envs.core.Environment.action_spec` is a :class:`DiscreteArray` (int32 scalar in
``[0, num_actions)``).
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

__all__ = ["Array", "BoolArray", "DiscreteArray", "from_shapes"]


@dataclasses.dataclass(frozen=True)
class Array:
    """An array of fixed ``shape`` and ``dtype`` (numpy dtype); ``name``: its field path."""

    shape: tuple
    dtype: np.dtype
    name: str = ""

    def generate_value(self):
        """A zero array of this spec (numpy)."""
        return np.zeros(self.shape, self.dtype)

    def validate(self, value):
        """``value`` if it has this spec's shape and dtype, else ``ValueError``."""
        if tuple(np.shape(value)) != tuple(self.shape) or np.dtype(value.dtype) != self.dtype:
            raise ValueError(
                f"{self.name or 'value'}: expected {self.dtype}{list(self.shape)}, got "
                f"{np.dtype(value.dtype)}{list(np.shape(value))}"
            )
        return value


@dataclasses.dataclass(frozen=True)
class BoolArray(Array):
    """A bool array (the action mask: True = a valid action)."""


@dataclasses.dataclass(frozen=True)
class DiscreteArray(Array):
    """An integer scalar in ``[0, num_values)`` (the action)."""

    num_values: int = 0

    def generate_value(self):
        return np.zeros(self.shape, self.dtype)


def from_shapes(tree):
    """``tree`` (of ``jax.ShapeDtypeStruct``) with an :class:`Array` (or :class:`BoolArray`)
    at each leaf, named by its path."""

    def one(path, x):
        name = jax.tree_util.keystr(path, simple=True, separator=".")
        dt = np.dtype(x.dtype)
        cls = BoolArray if dt == np.bool_ else Array
        return cls(shape=tuple(x.shape), dtype=dt, name=name)

    return jax.tree_util.tree_map_with_path(one, tree)
