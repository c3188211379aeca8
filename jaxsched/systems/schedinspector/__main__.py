"""``python -m jaxsched.systems.schedinspector TRACE --model DIR``: see :func:`cli.evaluate_main`."""

import sys

from jaxsched.systems.schedinspector.cli import evaluate_main

sys.exit(evaluate_main())
