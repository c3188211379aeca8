"""JAX's persistent compilation cache for the ``jaxsched`` commands (one place for every
command that compiles)."""

from __future__ import annotations

import os

__all__ = ["enable_compile_cache"]


def enable_compile_cache(min_compile_seconds: float = 0.5) -> None:
    """Keep XLA's compiled programs in ``$JAXSCHED_CACHE`` (default ``~/.cache/jaxsched/xla``)
    so a repeated command skips compilation, unless the process already chose a cache (as
    the test suite does). ``JAXSCHED_CACHE=off`` disables it."""
    where = os.environ.get(
        "JAXSCHED_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "jaxsched", "xla")
    )
    if where.lower() in ("off", "0", "none", ""):
        return
    try:
        import jax

        if jax.config.jax_compilation_cache_dir:
            return
        jax.config.update("jax_compilation_cache_dir", where)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_seconds)
    except Exception:  # an old JAX without the option: just compile every time
        pass
