"""``python -m jaxsched.systems.dras [TRACE] --model DIR``: see :func:`cli.evaluate_main`."""

import sys

from jaxsched.systems.dras.cli import evaluate_main

sys.exit(evaluate_main())
