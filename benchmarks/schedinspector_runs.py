"""What each SchedInspector training run's own validation says, read from its ``log.jsonl``.

    PYTHONPATH=. .venv/bin/python benchmarks/schedinspector_runs.py RUN_DIR [RUN_DIR ...]
        [--max-util-loss 1]

For every run directory (``jaxsched train schedinspector ... --validate K --out RUN_DIR``): the
epoch with the best validation value (bsld, wait or mbsld: lowest; util: highest) with the
utilisation points it lost against the base and its rejection ratio; the best among the epochs
that lost at most ``--max-util-loss`` points (the rule of ``--max-util-loss`` and of
``si-lublin1-sjf-u1``, ``si-lublin1-sjf-uw``); the last validated epoch; and the trajectories
dropped at the step cap over the whole run. Then the best of all runs under that rule, when they
were validated against the same base value (same base, metric and sequences). Nothing
is re-run: these are the numbers the training logged (benchmarks/RESULTS.md §8.5's tables).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from jaxsched.train.loop import epoch_rows  # noqa: E402


def util_loss(row: dict) -> float:
    """Percentage points of utilisation the inspector lost against the base on validation."""
    return 100.0 * (row["val_util_base"] - row["val_util"])


def summarise(run_dir, max_util_loss: float = 1.0) -> dict:
    """``{"run", "best", "best_within", "last", "dropped", "higher_is_better"}`` of one run:
    the log rows (dicts) of its best validated epoch, its best epoch within ``max_util_loss``
    points of the base's utilisation (None if none) and its last validated epoch."""
    run_dir = Path(run_dir)
    rows = epoch_rows(run_dir)  # a resumed epoch: its last line
    val = [r for r in rows if "val_inspected" in r]
    if not val:
        raise SystemExit(f"{run_dir / 'log.jsonl'}: no validated epoch (train with --validate K)")
    metric = json.loads((run_dir / "run.json").read_text()).get("metric", "bsld")
    higher = metric == "util"
    key = (lambda r: -r["val_inspected"]) if higher else (lambda r: r["val_inspected"])
    within = [r for r in val if util_loss(r) <= max_util_loss]
    return {
        "run": str(run_dir),
        "best": min(val, key=key),
        "best_within": min(within, key=key) if within else None,
        "last": val[-1],
        "dropped": sum(int(r.get("dropped", 0)) for r in rows),
        "higher_is_better": higher,
    }


def _epoch(r: dict) -> str:
    return (
        f"epoch {r['epoch']} {r['val_inspected']:.2f} (base {r['val_base']:.2f}; "
        f"utilisation {util_loss(r):+.1f} points lost; rejection ratio {r['val_rejection']:.2f})"
    )


def main(argv=None, out=print) -> list:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN_DIR")
    ap.add_argument("--max-util-loss", type=float, default=1.0, metavar="P")
    a = ap.parse_args(argv)
    res = [summarise(d, a.max_util_loss) for d in a.runs]
    for s in res:
        out(f"{s['run']}:")
        out(f"  best      {_epoch(s['best'])}")
        w = s["best_within"]
        out(f"  within {a.max_util_loss:g} point(s): " + (_epoch(w) if w else "none"))
        out(f"  last      {_epoch(s['last'])}")
        out(f"  trajectories dropped at the step cap: {s['dropped']}")
    ok = [s for s in res if s["best_within"] is not None]
    same = len({round(s["last"]["val_base"], 9) for s in res}) == 1  # base, metric, sequences
    if ok and same:
        sign = -1.0 if res[0]["higher_is_better"] else 1.0
        top = min(ok, key=lambda s: sign * s["best_within"]["val_inspected"])
        out(f"best within {a.max_util_loss:g} point(s) over all runs: {top['run']} "
            f"{_epoch(top['best_within'])}")  # fmt: skip
    return res


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
