"""RLScheduler (Zhang, Dai, He, Bao, Xie, SC'20): the reproduction driver of the paper's tables, on its
own protocol and held out.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/rlscheduler.py               # the parts
    PYTHONPATH=. .venv/bin/python benchmarks/paper/rlscheduler.py PART [ARGS]   # one part

Each part is a script of this folder (benchmarks/README.md: what it measures, its command and
its write-up); this driver only names them in one place.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import paper_driver  # noqa: E402

PARTS = {
    "heuristics": (
        "paper_tables",
        "the heuristic columns of Tables V, VI, X, XI against the printed numbers",
    ),
    "tables": ("rlscheduler_tables", "Tables V, VIII (VII with --transfer) on fresh sequences"),
    "heldout": (
        "rlscheduler_heldout",
        "Tables V and VIII on the test split, the strongest baselines",
    ),
    "networks": ("rlscheduler_networks", "Table IV and Fig. 8: the network study"),
    "generalise": ("generalise", "the held-out study of training runs (issue 49)"),
    "study": (
        "generalisation_study",
        "issue 49's study: every held-out learned-versus-baseline measurement, table and plots",
    ),
}


def main(argv=None) -> int:
    return paper_driver("RLScheduler", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
