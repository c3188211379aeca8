"""What each split-window DBF training run's own validation says, read from its ``log.jsonl``.

    PYTHONPATH=. .venv/bin/python benchmarks/splitwindow_runs.py RUN_DIR [RUN_DIR ...] \
        [--max-util-loss 1]

For every run directory (``jaxsched train splitwindow ... --validate K --out RUN_DIR``): each
validated epoch's greedy average wait and utilisation, with the utilisation points below FCFS +
EASY's on the same episodes where the run logged it (``--max-util-loss`` runs log
``val_util_fcfs_easy``); the epoch with the lowest wait; and the lowest wait among the epochs at
most ``--max-util-loss`` points below FCFS + EASY (the rule of ``train splitwindow
--max-util-loss``). Then the best of all runs under that rule, when they were validated on
the same episodes (the same FCFS + EASY utilisation). Nothing is re-run: these are the
numbers the training logged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from jaxsched.train.loop import epoch_rows  # noqa: E402


def util_gap(row: dict) -> float | None:
    """Points of utilisation below FCFS + EASY's on the validation episodes (None unlogged)."""
    ref = row.get("val_util_fcfs_easy")
    return None if ref is None else 100.0 * (ref - row["val_util"])


def summarise(run_dir, max_util_loss: float = 1.0) -> dict:
    """``{"run", "rows", "best", "best_within"}``: the validated log rows of one run, the one
    with the lowest average wait and the lowest among those within ``max_util_loss`` points
    of FCFS + EASY's utilisation (None if none, or if the run did not log the reference)."""
    run_dir = Path(run_dir)
    val = [r for r in epoch_rows(run_dir) if "val_avg_wait" in r]
    if not val:
        raise SystemExit(f"{run_dir / 'log.jsonl'}: no validated epoch (train with --validate K)")
    within = [r for r in val if util_gap(r) is not None and util_gap(r) <= max_util_loss]
    wait = lambda r: r["val_avg_wait"]  # noqa: E731
    return {
        "run": str(run_dir),
        "rows": val,
        "best": min(val, key=wait),
        "best_within": min(within, key=wait) if within else None,
    }


def _epoch(r: dict) -> str:
    gap = util_gap(r)
    below = "" if gap is None else f", {gap:+.2f} points below FCFS + EASY"
    return f"epoch {r['epoch']}: wait {r['val_avg_wait']:,.0f} s, util {r['val_util']:.4f}{below}"


def main(argv=None, out=print) -> list:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN_DIR")
    ap.add_argument("--max-util-loss", type=float, default=1.0, metavar="P")
    a = ap.parse_args(argv)
    res = [summarise(d, a.max_util_loss) for d in a.runs]
    for s in res:
        out(f"{s['run']}:")
        for r in s["rows"]:
            out(f"  {_epoch(r)}")
        out(f"  lowest wait: {_epoch(s['best'])}")
        w = s["best_within"]
        out(f"  within {a.max_util_loss:g} point(s): " + (_epoch(w) if w else "none"))
    ok = [s for s in res if s["best_within"] is not None]
    refs = {round(s["best_within"]["val_util_fcfs_easy"], 9) for s in ok}
    if len(refs) > 1:  # other episodes, trace or window count: not comparable
        out("not ranked over runs: their validations differ (FCFS + EASY's utilisation)")
    elif ok:
        top = min(ok, key=lambda s: s["best_within"]["val_avg_wait"])
        out(f"best within {a.max_util_loss:g} point(s) over all runs: {top['run']} "
            f"{_epoch(top['best_within'])}")  # fmt: skip
    else:
        out(f"no validated epoch of any run within {a.max_util_loss:g} point(s) of FCFS + EASY")
    return res


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
