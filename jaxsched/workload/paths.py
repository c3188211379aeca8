"""Where a run directory's trace is: the path a run's settings store (relative to the checkout
holding the run, so a checkout moved elsewhere still finds it) and that stored path made usable
again. Used by every system that reads a run's trace back (DRAS's runs, ``jaxsched select
--rescore``)."""

from __future__ import annotations

import os
from pathlib import Path

from jaxsched.errors import ConfigError

__all__ = ["checkout_of", "portable_trace", "resolve_trace", "run_trace"]


def checkout_of(path) -> Path | None:
    """The checkout (the nearest directory with a ``.git`` entry) holding ``path``, or None."""
    p = Path(path).resolve()
    for d in (p, *p.parents):
        if (d / ".git").exists():
            return d
    return None


def portable_trace(trace, run_dir) -> str:
    """The trace path a run's settings store: relative to the checkout holding ``run_dir``
    (e.g. ``../shared/traces/X.swf.gz`` from a run under the checkout), as given when the run
    directory is in no checkout."""
    root = checkout_of(run_dir)
    if root is None:
        return str(trace)
    return os.path.relpath(Path(trace).resolve(), root)


def resolve_trace(trace, run_dir) -> str:
    """A stored trace path as a usable one: as stored if it exists from here (absolute, or
    relative to the current directory), else relative to the checkout holding ``run_dir``
    when that exists; else as stored."""
    if Path(trace).exists():
        return str(trace)
    root = checkout_of(run_dir)
    if root is not None and (root / trace).exists():
        return str(root / trace)
    return str(trace)


def run_trace(trace, run_dir) -> Path:
    """:func:`resolve_trace`, or a ConfigError naming the run when the trace is not found."""
    path = Path(resolve_trace(trace, run_dir))
    if not path.exists():
        raise ConfigError(
            f"{run_dir}: the run's trace {trace} is not found (from here or in the checkout "
            "holding the run)"
        )
    return path
