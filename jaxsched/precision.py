"""64-bit mode scoped to jaxsched's own computation, not the process.

The engine's times and priority keys are int64/float64 (spec §4; the "infinite" time
:data:`jaxsched.sim.types.BIG` is int64 max // 4), so jaxsched computes with JAX's 64-bit mode
on. It no longer turns the mode on for the whole process at import: a user's float32 program
(``jnp.zeros(3).dtype == float32``) keeps its dtypes, and jaxsched enters the mode only around
its own work:

* every method of an environment (:class:`jaxsched.envs.core.Environment` subclasses, their
  construction included) runs under :func:`caller_scope`; the public ``reset``/``reset_at``/``step``
  (and :class:`~jaxsched.envs.wrappers.AutoResetWrapper`'s) hand a caller whose mode is off a
  :class:`~jaxsched.envs.core.TimeStep` cast to 32 bits (:func:`to_32bit`) and the state with
  its 64-bit leaves packed as their bits (:class:`Packed64`: uint32 ``[..., 2]``, exact), so a
  32-bit program's own code never holds (or truncates) a 64-bit leaf; every environment
  method unpacks them;
* the ``jaxsched`` command and the host drivers (:func:`jaxsched.sim.evaluate.evaluate`) run
  under :func:`x64`;
* the engine's own entry points (:func:`jaxsched.sim.engine.reset`, the CQSim and no-backfill
  resets) raise :class:`X64Required` when traced with the mode off, naming the fix.

Code that calls the engine directly wraps its work in ``with jaxsched.x64():`` or turns the
mode on for its process (``jax.config.update("jax_enable_x64", True)``).

Why the scope is not enough by itself (measured with jax 0.10.2): JAX lowers what a ``jit``
traced when the caller's ``jit`` compiles, under the caller's mode. Most primitives carry
their dtypes in their avals and lower fine; two kinds do not: 64-bit random bits
(``random_bits`` is lowered by re-tracing its implementation: a uint32/uint64 verifier error)
and ``jnp.argmax``/``argmin``'s int64 index (an int64 iota truncated): jaxsched's
environments draw with :func:`draw_int`, and the data centre takes int32 argmax indices. And a 32-bit caller's own
code truncates any int64 it touches (``x + 1`` is int32; ``jnp.zeros(s, int64)`` is int32):
hence the packed state.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

import jax
import jax.numpy as jnp
from flax import struct

__all__ = [
    "X64Required",
    "x64",
    "caller_scope",
    "scoped",
    "require_x64",
    "to_32bit",
    "x64_enabled",
    "caller_is_32bit",
    "draw_int",
    "Packed64",
    "pack_64bit",
    "unpack_64bit",
    "has_packed",
]

#: True inside a jaxsched scope entered from a caller whose 64-bit mode was off
_FROM_32BIT = contextvars.ContextVar("jaxsched_from_32bit", default=False)


class X64Required(RuntimeError):
    """A jaxsched engine function was traced with JAX's 64-bit mode off."""


def x64_enabled() -> bool:
    """JAX's 64-bit mode as it is here and now (the flag or an enclosing :func:`x64`)."""
    return bool(jax.config.jax_enable_x64)


def caller_is_32bit() -> bool:
    """True inside a jaxsched scope whose caller's 64-bit mode is off (then the caller's
    ``jit`` lowers what jaxsched traced with the mode off, see :func:`draw_int`)."""
    return _FROM_32BIT.get()


@contextlib.contextmanager
def _scope(from_32bit: bool):
    """64-bit mode inside (a no-op where it is on already), recording whether the code inside
    was called from a 32-bit caller (:func:`caller_is_32bit`)."""
    if x64_enabled():
        yield
        return
    token = _FROM_32BIT.set(from_32bit)
    try:
        with jax.enable_x64(True):
            yield
    finally:
        _FROM_32BIT.reset(token)


@contextlib.contextmanager
def x64():
    """Context manager: JAX's 64-bit mode on inside, the caller's setting restored after
    (``jax.enable_x64(True)``; thread-local, nestable). For a program's own block of 64-bit
    work (``with jaxsched.x64(): jax.jit(f)(...)``, the ``jaxsched`` command): what it
    compiles there compiles in 64-bit mode."""
    with _scope(from_32bit=False):
        yield


@contextlib.contextmanager
def caller_scope():
    """:func:`x64` for jaxsched's own methods called from a caller's code: with the mode off
    there, the caller's ``jit`` will lower what is traced here under its 32-bit mode, which
    :func:`caller_is_32bit` tells the code inside (see :func:`draw_int`)."""
    with _scope(from_32bit=True):
        yield


def draw_int(key, low, high) -> jax.Array:
    """``jax.random.randint(key, (), low, high)`` as it is drawn in 64-bit mode (64-bit
    random bits: the stream every jaxsched run had), except for a caller whose mode is off:
    there 32-bit bits (int32 bounds), because JAX lowers a jit's ``random_bits`` when the
    caller's jit is compiled, under the caller's mode, and 64-bit bits do not lower there (a
    ``uint32``/``uint64`` verifier error). The two draws differ for the same key."""
    if caller_is_32bit():
        return jax.random.randint(key, (), low, high, dtype=jnp.int32)
    return jax.random.randint(key, (), low, high)


def scoped(fn):
    """Decorator for a host entry point (it compiles and runs its own programs, as
    :func:`jaxsched.sim.evaluate.evaluate` does): run ``fn`` under :func:`x64` (a no-op when
    the mode is already on). Environment methods use :func:`caller_scope` instead."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if x64_enabled():
            return fn(*args, **kwargs)
        with x64():
            return fn(*args, **kwargs)

    wrapper.__jaxsched_x64__ = True
    return wrapper


def require_x64(where: str) -> None:
    """Raise :class:`X64Required` unless the 64-bit mode is on (call at trace time)."""
    if not x64_enabled():
        raise X64Required(
            f"{where} computes with 64-bit times (int64) and JAX's 64-bit mode is off: wrap "
            "the call in `with jaxsched.x64():` or turn the mode on for the process with "
            '`jax.config.update("jax_enable_x64", True)` (jaxsched\'s environments and '
            "commands do this themselves)"
        )


_NARROW = {
    jnp.dtype("float64"): jnp.float32,
    jnp.dtype("int64"): jnp.int32,
    jnp.dtype("uint64"): jnp.uint32,
    jnp.dtype("complex128"): jnp.complex64,
}


def _plain(dt) -> bool:
    """A numeric dtype (not None, not an extended dtype such as a typed PRNG key's)."""
    return dt is not None and not jax.dtypes.issubdtype(dt, jax.dtypes.extended)


def to_32bit(tree):
    """``tree`` with every 64-bit array leaf cast to its 32-bit dtype (other leaves as they
    are): what a caller whose 64-bit mode is off sees of a timestep."""

    def one(x):
        dt = getattr(x, "dtype", None)
        if not _plain(dt) or jnp.dtype(dt) not in _NARROW:
            return x
        return x.astype(_NARROW[jnp.dtype(dt)])

    return jax.tree_util.tree_map(one, tree)


@struct.dataclass
class Packed64:
    """A 64-bit array kept as its bits: ``bits`` uint32 ``[..., 2]`` (``lax.bitcast_convert_type``)
    and ``dtype`` (static) its dtype's name. What a 32-bit caller holds of an environment
    state's int64/float64 leaves: every leaf it sees is 32-bit, so its own code (``x + 1``,
    ``jnp.zeros(shape, x.dtype)`` in a search tree or a replay buffer) cannot truncate one."""

    bits: jax.Array
    dtype: str = struct.field(pytree_node=False)


def _is_packed(x) -> bool:
    return isinstance(x, Packed64)


def pack_64bit(tree):
    """``tree`` with every 64-bit array leaf replaced by its :class:`Packed64` (a no-op on
    packed leaves and on 32-bit ones)."""

    def one(x):
        dt = getattr(x, "dtype", None)
        if _is_packed(x) or not _plain(dt) or jnp.dtype(dt).itemsize != 8:
            return x
        return Packed64(jax.lax.bitcast_convert_type(x, jnp.uint32), jnp.dtype(dt).name)

    return jax.tree_util.tree_map(one, tree, is_leaf=_is_packed)


def has_packed(tree) -> bool:
    """True when ``tree`` holds a :class:`Packed64`."""
    leaves = jax.tree_util.tree_leaves(tree, is_leaf=_is_packed)
    return any(_is_packed(x) for x in leaves)


def unpack_64bit(tree):
    """The inverse of :func:`pack_64bit` (call it under :func:`x64`)."""

    def one(x):
        if not _is_packed(x):
            return x
        return jax.lax.bitcast_convert_type(x.bits, jnp.dtype(x.dtype))

    return jax.tree_util.tree_map(one, tree, is_leaf=_is_packed)
