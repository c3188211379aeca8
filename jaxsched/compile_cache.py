"""JAX's persistent compilation cache for the ``jaxsched`` commands (one place for every
command that compiles, and for the test suite)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["enable_compile_cache", "use_cache_dir", "repair_cache_dir", "CACHE_MAX_BYTES"]

#: size bound of the cache folder (least recently used programs are evicted beyond it); a
#: bound also makes JAX take a file lock around every read and write, so several processes
#: (two training runs, the test workers) can share one folder safely
CACHE_MAX_BYTES = 4 << 30


def repair_cache_dir(where) -> int:
    """Make every entry of the bounded cache folder ``where`` whole again: a ``KEY-cache``
    program without its ``KEY-atime`` file (written by an unbounded cache, or by a process
    killed between the two writes) gets one, dated by the program's modification time, and
    a ``KEY-atime`` without its program is removed. JAX reads every entry's atime file before
    each write to a bounded cache, so a single orphan makes every later write fail with a
    warning. Runs under JAX's own lock of the folder. Returns the number of files mended."""
    import filelock

    folder = Path(where)
    if not folder.is_dir():
        return 0
    mended = 0
    with filelock.FileLock(folder / ".lockfile", timeout=30):
        names = {p.name for p in folder.iterdir()}
        for name in names:
            key, _, suffix = name.rpartition("-")
            path = folder / name
            if suffix == "cache" and f"{key}-atime" not in names:
                stamp = path.stat().st_mtime_ns.to_bytes(8, "little")
                (folder / f"{key}-atime").write_bytes(stamp)
                mended += 1
            elif suffix == "atime" and f"{key}-cache" not in names:
                path.unlink(missing_ok=True)
                mended += 1
    return mended


def use_cache_dir(where: str, min_compile_seconds: float) -> None:
    """Point JAX's persistent compilation cache at ``where``: programs that took at least
    ``min_compile_seconds`` to compile are kept; with the ``filelock`` package (a dependency)
    the folder is bounded by :data:`CACHE_MAX_BYTES` and shared safely between processes."""
    import jax

    jax.config.update("jax_compilation_cache_dir", where)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_seconds)
    try:
        import filelock  # noqa: F401
    except ImportError:  # unbounded and unlocked: one process per folder
        return
    try:
        repair_cache_dir(where)
    except (OSError, filelock.Timeout):  # a busy or read-only folder: JAX copes or warns
        pass
    jax.config.update("jax_compilation_cache_max_size", CACHE_MAX_BYTES)


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
        use_cache_dir(where, min_compile_seconds)
    except Exception:  # an old JAX without the option: just compile every time
        pass
