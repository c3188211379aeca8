"""A2cScheduler (Liang, Yang, Jin, Chen, PAKDD 2020): the reproduction driver of Tables 1–2 and Fig. 3.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/a2cscheduler.py               # the parts
    PYTHONPATH=. .venv/bin/python benchmarks/paper/a2cscheduler.py PART [ARGS]   # one part

Each part is a script of this folder (benchmarks/README.md: what it measures, its command and
its write-up); this driver only names them in one place.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import paper_driver  # noqa: E402

PARTS = {
    "tables": ("a2c_tables", "Tables 1-2 and the real-trace table, paired against SJF"),
    "fig3": ("a2c_fig3", "Fig. 3: A2C and DeepRM learning curves from the runs logs"),
}


def main(argv=None) -> int:
    return paper_driver("A2cScheduler", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
