"""Tune a priority function on a trace's training jobs (issue 47 §2) and write it as a tiny
model that ``jaxsched evaluate --policy tuned:DIR`` runs: a wrapper of the installed
``jaxsched tune TRACE --out DIR ...`` (its logic lives in :mod:`jaxsched.policies.tune`), kept
so that the notebook's commands stay valid.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/tune_priority.py TRACE --out DIR
        [--train-range A,B] [--backfill easy] [--compat] [--metric bsld] [--jobs 1024]
        [--sequences 32] [--rounds 6] [--population 12] [--seed 0] [--val-range A,B]

is ``jaxsched tune`` with the same arguments (the model file records that command).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

from jaxsched.cli import main as jaxsched_main  # noqa: E402


def main(argv=None) -> int:
    return jaxsched_main(["tune", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
