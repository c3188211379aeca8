"""DRAS (Fan, Childers, Rich, Allcock, Papka, Lan, IPDPS'21): the reproduction driver of the test-period
tables (§8–§10).

    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras.py               # the parts
    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras.py PART [ARGS]   # one part

Each part is a script of this folder (benchmarks/README.md: what it measures, its command and
its write-up); this driver only names them in one place.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import paper_driver  # noqa: E402

PARTS = {
    "baselines": ("dras_baselines", "the §8 baselines through the CQSim oracle, §10 table"),
    "test-period": ("dras_test_period", "DRAS models and the baselines in one §10 table"),
}


def main(argv=None) -> int:
    return paper_driver("DRAS", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
