"""SchedInspector (Zhang, Dai, Xie, HPDC'22): the reproduction driver of Tables 4 and 5, on the
paper's protocol and held out.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/schedinspector.py               # the parts
    PYTHONPATH=. .venv/bin/python benchmarks/paper/schedinspector.py PART [ARGS]   # one part

Each part is a script of this folder (benchmarks/README.md: what it measures, its command and
its write-up); this driver only names them in one place.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import paper_driver  # noqa: E402

PARTS = {
    "tables": ("schedinspector_tables", "Table 4 (with transfer) and Table 5 for every inspector"),
    "heldout": ("schedinspector_heldout", "Table 4 and 5 rows on the test split; --versus"),
}


def main(argv=None) -> int:
    return paper_driver("SchedInspector", PARTS, argv)


if __name__ == "__main__":
    sys.exit(main())
