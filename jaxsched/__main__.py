"""``python -m jaxsched ...``: the ``jaxsched`` command without its installed entry point."""

import sys

from jaxsched.cli import main

if __name__ == "__main__":
    sys.exit(main())
