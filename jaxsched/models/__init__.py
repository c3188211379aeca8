"""Shipped trained models (package data, so they come with an installed wheel too).

One run directory per model: ``README.md`` (the command that trained it, how the checkpoint was
chosen on validation sequences, its results), ``run.json``, the chosen checkpoint and the
training log.  Wherever a model directory is expected (``jaxsched evaluate --model``,
:func:`jaxsched.systems.load_model`) the bare name of a shipped model works too::

    jaxsched evaluate traces/lublin-1.swf --compat rlscheduler --model lublin1-bf-fast
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT", "names", "path", "resolve"]

#: the folder of the shipped models
ROOT = Path(__file__).resolve().parent


def names() -> list[str]:
    """The shipped models' names, sorted."""
    return sorted(d.name for d in ROOT.iterdir() if (d / "run.json").is_file())


def path(name: str) -> Path:
    """The run directory of the shipped model ``name`` (KeyError if there is none)."""
    if name not in names():
        raise KeyError(f"no shipped model {name!r}; shipped: {', '.join(names())}")
    return ROOT / name


def resolve(where) -> Path:
    """``where`` as a path if it exists, else the shipped model of that name if there is one,
    else ``where`` unchanged as a path (the caller reports it missing)."""
    p = Path(where)
    if p.exists() or str(where) not in names():
        return p
    return ROOT / str(where)
