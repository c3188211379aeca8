"""Moved to :mod:`jaxsched.sim.batching`; this module re-exports :func:`sparse_cond` for old
imports."""

from jaxsched.sim.batching import sparse_cond

__all__ = ["sparse_cond"]
