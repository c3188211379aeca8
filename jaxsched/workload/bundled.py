"""The demo's default trace, found in the checkout or regenerated where the package is installed.

Lublin-1 (10,000 jobs on 256 processors, the RLScheduler paper's synthetic trace) is
``traces/lublin-1.swf`` at the top of a checkout.  An installed package (a wheel, no checkout)
does not carry it: :func:`default_trace_path` then regenerates it once, bit for bit, with the
Lublin generator's ``lublin-1`` preset (a few seconds) into the user data folder
(``$JAXSCHED_DATA``, default ``~/.cache/jaxsched``) and reuses that file afterwards.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["DEFAULT_TRACE", "checkout_trace_path", "data_dir", "default_trace_path"]

#: the default trace's preset name (file ``<name>.swf``)
DEFAULT_TRACE = "lublin-1"


def checkout_trace_path(name: str = DEFAULT_TRACE) -> Path:
    """``traces/<name>.swf`` at the top of the checkout the package was imported from (it
    need not exist)."""
    import jaxsched

    return Path(jaxsched.__file__).resolve().parent.parent / "traces" / f"{name}.swf"


def data_dir() -> Path:
    """The user data folder for regenerated files: ``$JAXSCHED_DATA`` or ``~/.cache/jaxsched``."""
    env = os.environ.get("JAXSCHED_DATA")
    return Path(env) if env else Path.home() / ".cache" / "jaxsched"


def default_trace_path() -> Path:
    """The demo's trace: the checkout's ``traces/lublin-1.swf`` if there is one, else the
    regenerated copy in :func:`data_dir` (made on first use, see the module docstring)."""
    here = checkout_trace_path()
    if here.exists():
        return here
    path = data_dir() / "traces" / f"{DEFAULT_TRACE}.swf"
    if not path.exists():
        _regenerate(path)
    return path


def _regenerate(path: Path) -> None:
    """Write the preset's trace to ``path`` whole or not at all (:mod:`jaxsched.fileio`), so an
    interrupted run leaves no partial trace behind; the user data folder is made if missing."""
    from jaxsched.fileio import atomic_write
    from jaxsched.workload.lublin import PRESETS, generate, to_swf_text

    print(f"jaxsched: generating the default trace {DEFAULT_TRACE} into {path}", file=sys.stderr)
    config = PRESETS[DEFAULT_TRACE]
    command = f"jaxsched trace generate lublin --preset {DEFAULT_TRACE} --out {path}"
    text = to_swf_text(generate(config), config, command=command)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("ascii"))
