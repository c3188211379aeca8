"""Split-window deep back-filling (Wang, Harwood, Rodriguez, HPCC 2022): the reproduction driver of
Figs. 4–6.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/splitwindow.py               # the parts
    PYTHONPATH=. .venv/bin/python benchmarks/paper/splitwindow.py PART [ARGS]   # one part

Each part is a script of this folder (benchmarks/README.md: what it measures, its command and
its write-up); this driver only names them in one place.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import paper_driver  # noqa: E402

PARTS = {
    "fig4": ("splitwindow_fig4", "Fig. 4 from speed/splitwindow_env.py --json"),
    "sweep": ("splitwindow_sweep", "the window sweep of Figs. 5 and 6 from trained runs"),
}


def main(argv=None) -> int:
    return paper_driver("split window", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
