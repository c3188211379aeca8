"""The command line shows a warning raised during a command (here a UserWarning, as JAX
gives when a persistent-cache write fails) once, after the command, and returns: it used to
re-show it inside the block that records warnings, which recorded it again, forever."""

from __future__ import annotations

import os
import subprocess
import sys

from shared_data import REPO

SCRIPT = """
import warnings
import jaxsched.cli.trace as T
from jaxsched.cli import main

def handler(args):
    warnings.warn("cache write failed", UserWarning)
    return 0

T._cmd_trace_info = handler
print("rc", main(["trace", "info", "unused.swf"]))
"""


def test_warning_shown_once_and_command_returns():
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAXSCHED_CACHE": "off"}
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=60, env=env, cwd=REPO)  # fmt: skip
    assert p.returncode == 0 and p.stdout.strip() == "rc 0", p.stderr
    assert p.stderr.count("UserWarning: cache write failed") == 1, p.stderr
