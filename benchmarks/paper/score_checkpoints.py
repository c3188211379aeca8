"""Score every kept checkpoint of one or more training runs on validation sequences: a wrapper
of the installed ``jaxsched select RUN [RUN ...] --rescore N`` (its logic lives in
:mod:`jaxsched.systems.rlscheduler.rescore`), kept so that the notebook's commands stay valid.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/score_checkpoints.py RUN_DIR [RUN_DIR ...]
        [--val-seed 2] [--val-sequences 10] [--jobs 1024] [--epochs A-B] [--minutes M]
        [--top K] [--test] [--json FILE]

is ``jaxsched select RUN_DIR [RUN_DIR ...] --rescore 10 [--val-seed 2] [--jobs 1024]
[--epochs A-B] [--minutes M] [--top K] [--test]``, with the same report; ``--json FILE``
writes the JSON document (``jaxsched select --rescore N --json`` prints it instead of the
report). See that module for what is scored and chosen.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

from jaxsched.cli.args import epoch_range  # noqa: E402
from jaxsched.errors import JaxschedError  # noqa: E402
from jaxsched.systems.rlscheduler.rescore import (  # noqa: E402, F401 (the script's old API)
    TEST_JOBS,
    TEST_SEED,
    TEST_SEQUENCES,
    TEST_SLICE,
    best_row,
    format_rescore,
    rescore,
    score_run,
    test_value,
    top_validated,
)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--val-seed", type=int, default=2)
    p.add_argument("--val-sequences", type=int, default=10)
    p.add_argument("--jobs", type=int, default=1024, help="jobs per validation sequence")
    p.add_argument(
        "--epochs",
        type=epoch_range,
        default=None,
        help="only epochs A..B of every run (e.g. 1-40)",
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="only the epochs a run had finished within M minutes of training",
    )
    p.add_argument(
        "--top",
        type=int,
        default=None,
        metavar="K",
        help="only each run's K best epochs on its own training validation (log.jsonl)",
    )
    p.add_argument(
        "--test",
        action="store_true",
        help="also score each chosen checkpoint on the paper's test sequences",
    )
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    try:
        doc = rescore(a.runs, a.val_sequences, val_seed=a.val_seed, jobs=a.jobs,
                      epochs=a.epochs, minutes=a.minutes, top=a.top, test=a.test)  # fmt: skip
    except JaxschedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_rescore(doc))
    if a.json:
        a.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
