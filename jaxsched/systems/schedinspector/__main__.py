"""``python -m jaxsched.systems.schedinspector TRACE --model DIR``: see :func:`cli.evaluate_main`."""

import sys

from jaxsched.precision import x64
from jaxsched.systems.schedinspector.cli import evaluate_main

with x64():  # 64-bit mode for the command only (jaxsched/precision.py)
    rc = evaluate_main()
sys.exit(rc)
