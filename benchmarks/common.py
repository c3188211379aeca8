"""The plumbing every benchmark script repeats, in one place: where the checkout and the shared
data are, importing a script of another folder, best-of-N timing, the load average, JSON out and
the common command-line options (``--shared``, ``--json``).

A script in ``benchmarks/<folder>/`` starts with the one line that puts the checkout on
``sys.path`` (the scripts run as files, ``python benchmarks/speed/x.py``), then imports from here::

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
    from benchmarks.common import REPO, use  # noqa: E402

No JAX here: the reference adapters import this module in processes without it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: the checkout (the folder holding ``jaxsched/`` and ``benchmarks/``)
REPO = Path(__file__).resolve().parents[1]
#: ``benchmarks/``
BENCH = REPO / "benchmarks"
#: the script folders, by purpose (benchmarks/README.md)
FOLDERS = ("speed", "paper", "reference", "experiments")

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def use(*folders: str) -> None:
    """Put ``benchmarks/<folder>`` on ``sys.path`` for each folder, so that a script imports the
    scripts there by their bare names (``use("reference"); import reference_sim``)."""
    for f in folders:
        if f not in FOLDERS:
            raise ValueError(f"unknown benchmarks folder {f!r} (one of {FOLDERS})")
        p = str(BENCH / f)
        if p not in sys.path:
            sys.path.insert(0, p)


def script(name: str, root: Path = REPO) -> Path:
    """The file of the benchmark script ``name`` (``"env_throughput.py"``) under ``root``'s
    ``benchmarks/``: in one of its folders, or flat in ``benchmarks/`` (a checkout from before
    the folders, as ``compare_checkouts.py`` meets them)."""
    bench = root / "benchmarks"
    for cand in (*(bench / f / name for f in FOLDERS), bench / name):
        if cand.is_file():
            return cand
    raise FileNotFoundError(f"no benchmarks script {name} under {bench}")


def shared_dir(arg: str | Path | None = None, need: str = "traces") -> Path:
    """The shared data folder: ``arg`` (``--shared``), else ``$JAXSCHED_SHARED``, else
    ``../shared`` beside the checkout, else ``shared/`` inside it; the first that holds ``need``
    (a sub-folder). Exits with a message when none does."""
    cands = [arg, os.environ.get("JAXSCHED_SHARED"), REPO.parent / "shared", REPO / "shared"]
    for c in cands:
        if c and (Path(c) / need).is_dir():
            return Path(c)
    sys.exit(f"shared/{need} not found: pass --shared DIR or set JAXSCHED_SHARED")


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (timings taken above the CPU count are skewed)."""
    return [round(x, 2) for x in os.getloadavg()]


def machine_info() -> dict:
    """What a timing was taken on: JAX's devices, backend and version, the CPU count and how
    many this process may use, Python's version, the load average now (``loadavg_start``)."""
    import platform

    import jax

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (non-Linux)
        usable = os.cpu_count()
    return {
        "jax_devices": [str(d) for d in jax.devices()],
        "jax_backend": jax.default_backend(),
        "jax_version": jax.__version__,
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "python": platform.python_version(),
        "loadavg_start": list(os.getloadavg()),
    }


def load_line() -> str:
    """``"2 CPUs, load average 1.52 1.40 1.33"``: for a benchmark's header and footer."""
    return f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in load_average())}"


def best_of(fn: Callable[[], Any], n: int) -> tuple[float, Any]:
    """Call ``fn()`` ``n`` times (n >= 1); the shortest wall time in seconds and the last result."""
    best, out = float("inf"), None
    for _ in range(max(1, n)):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def write_json(path: str | Path | None, obj: Any, **kw) -> None:
    """Write ``obj`` to ``path`` as JSON (``indent=1``, non-JSON values as ``str``), nothing when
    ``path`` is None (an unset ``--json``)."""
    if path is None:
        return
    kw = {"indent": 1, "default": str, **kw}
    Path(path).write_text(json.dumps(obj, **kw) + "\n")


def add_common_args(ap: argparse.ArgumentParser, shared: bool = True, json_out: bool = True):
    """Declare ``--shared DIR`` (resolve it with ``shared_dir``) and ``--json FILE``."""
    if shared:
        ap.add_argument(
            "--shared",
            type=Path,
            default=None,
            help="shared data folder (default $JAXSCHED_SHARED, else ../shared)",
        )
    if json_out:
        ap.add_argument(
            "--json", type=Path, default=None, metavar="FILE", help="write the numbers here"
        )
    return ap


def paper_driver(paper: str, parts: dict, argv=None) -> int:
    """One reproduction driver per paper (``benchmarks/paper/<system>.py``): ``PART [ARGS]``
    runs the part's script of ``benchmarks/paper/`` with ``ARGS`` (its ``main(ARGS)``; ``PART
    --help`` shows that script's options); no part, ``-h`` or ``--help`` lists the parts.

    ``parts``: part name -> ``(script module name, what it reproduces)``. Returns the script's
    exit status, 0 for the listing and 2 (one line on stderr) for an unknown part."""
    import importlib

    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(f"{paper}: the reproduction scripts, one part each (PART --help: its options)\n")
        width = max(len(p) for p in parts)
        for part, (module, what) in parts.items():
            print(f"  {part:<{width}}  {what}  [benchmarks/paper/{module}.py]")
        return 0
    if argv[0] not in parts:
        known = ", ".join(parts)
        print(f"error: unknown part {argv[0]!r} of {paper} (one of {known})", file=sys.stderr)
        return 2
    use("paper")
    module = importlib.import_module(parts[argv[0]][0])
    return int(module.main(argv[1:]) or 0)
