"""Paths the tests share: the checkout, the test data and the read-only project data.

``SHARED`` is ``$JAXSCHED_SHARED`` if set, else ``shared/`` next to the checkout (CI puts it
there) or inside it. Missing data is an error, never a skip: the reference-number tests must run.
"""

import importlib.util
import os
import sys
from pathlib import Path

#: The top of the checkout.
REPO = Path(__file__).resolve().parent.parent
#: Small data files of the tests (``tests/data``).
DATA = REPO / "tests" / "data"


def shared_dir() -> Path:
    """The shared/ folder: ``$JAXSCHED_SHARED``, else ``../shared`` or ``./shared``."""
    if os.environ.get("JAXSCHED_SHARED"):
        cands = [Path(os.environ["JAXSCHED_SHARED"])]
    else:
        cands = [REPO.parent / "shared", REPO / "shared"]
    for c in cands:
        if (c / "traces").is_dir() and (c / "reference").is_dir():
            return c
    raise FileNotFoundError(
        "shared/ (traces, reference, spec) not found: set JAXSCHED_SHARED "
        f"or put it next to the checkout (looked in {', '.join(map(str, cands))})"
    )


SHARED = shared_dir()


def subprocess_env(devices: int | None = None) -> dict:
    """The environment of a command a test starts: this process's (the suite's XLA flags
    included), JAX's 64-bit mode on for the whole child as in the suite's own process
    (``JAX_ENABLE_X64=1``, tests/conftest.py), the checkout first on ``PYTHONPATH``, and any
    fake CPU device count of ``XLA_FLAGS`` replaced by ``devices`` (none when None)."""
    env = dict(os.environ)
    env["JAX_ENABLE_X64"] = "1"
    count = "xla_force_host_platform_device_count"
    flags = [f for f in env.get("XLA_FLAGS", "").split() if count not in f]
    if devices:
        flags.append(f"--{count}={int(devices)}")
    env["XLA_FLAGS"] = " ".join(flags)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_python(args: list, devices: int | None = None, timeout: int = 600) -> str:
    """``python ARGS`` in the checkout with :func:`subprocess_env` (``devices`` fake CPU devices);
    asserts it exits 0 (showing the end of its stderr) and returns its stdout."""
    import subprocess

    out = subprocess.run(
        [sys.executable, *map(str, args)],
        env=subprocess_env(devices),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def last_json_line(stdout: str):
    """The JSON object a child process printed on its last line."""
    import json

    return json.loads(stdout.strip().splitlines()[-1])


def load_benchmark(name: str):
    """The script ``benchmarks/<folder>/<name>.py`` imported as the module ``_bench_<name>``
    (registered in ``sys.modules``, where its dataclasses look themselves up)."""
    (path,) = (REPO / "benchmarks").glob(f"*/{name}.py")
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
