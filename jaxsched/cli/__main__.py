"""``python -m jaxsched.cli``."""

import sys

from jaxsched.cli import main

sys.exit(main())
