"""64-bit mode scoped to jaxsched's own computation, not the process.

The engine's times and priority keys are int64/float64 (spec §4; the "infinite" time
:data:`jaxsched.sim.types.BIG` is int64 max // 4), so jaxsched computes with JAX's 64-bit mode
on. It no longer turns the mode on for the whole process at import: a user's float32 program
(``jnp.zeros(3).dtype == float32``) keeps its dtypes, and jaxsched enters the mode only around
its own work:

* every method of an environment (:class:`jaxsched.envs.core.Environment` subclasses, their
  construction included) runs under :func:`x64`; the public ``reset``/``reset_at``/``step``
  (and :class:`~jaxsched.envs.wrappers.AutoResetWrapper`'s) hand a caller whose mode is off a
  :class:`~jaxsched.envs.core.TimeStep` cast to 32 bits (:func:`to_32bit`); the environment
  *state* keeps its int64 leaves (it is opaque: pass it back to ``step``; it can be a
  ``jit``/``vmap``/``lax.scan`` carry in a 32-bit program);
* the ``jaxsched`` command and the host drivers (:func:`jaxsched.sim.evaluate.evaluate`) run
  under :func:`x64`;
* the engine's own entry points (:func:`jaxsched.sim.engine.reset`, the CQSim and no-backfill
  resets) raise :class:`X64Required` when traced with the mode off, naming the fix.

Code that calls the engine directly wraps its work in ``with jaxsched.x64():`` or turns the
mode on for its process (``jax.config.update("jax_enable_x64", True)``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

import jax
import jax.numpy as jnp

__all__ = [
    "X64Required",
    "x64",
    "scoped",
    "require_x64",
    "to_32bit",
    "x64_enabled",
    "caller_is_32bit",
    "draw_int",
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
def x64():
    """Context manager: JAX's 64-bit mode on inside, the caller's setting restored after
    (``jax.enable_x64(True)``; thread-local, nestable; also inside a ``jit`` trace)."""
    if x64_enabled():
        yield
        return
    token = _FROM_32BIT.set(True)
    try:
        with jax.enable_x64(True):
            yield
    finally:
        _FROM_32BIT.reset(token)


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
    """Decorator: run ``fn`` under :func:`x64` (a no-op when the mode is already on)."""

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


def to_32bit(tree):
    """``tree`` with every 64-bit array leaf cast to its 32-bit dtype (other leaves as they
    are): what a caller whose 64-bit mode is off sees of a timestep."""

    def one(x):
        dt = getattr(x, "dtype", None)
        if dt is None or jnp.dtype(dt) not in _NARROW:
            return x
        return x.astype(_NARROW[jnp.dtype(dt)])

    return jax.tree_util.tree_map(one, tree)
