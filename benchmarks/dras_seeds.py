"""Choose among several DRAS training runs (seeds) on their validation month alone, from their
``log.jsonl`` (issue 17 §3; benchmarks/RESULTS.md §12.3).

    PYTHONPATH=. .venv/bin/python benchmarks/dras_seeds.py RUN [RUN ...] [--bound 1.5]

Per run: its epochs, the epoch of lowest validation average wait (with that epoch's maximum
wait), and the epoch ``jaxsched train dras --best-by bounded-wait`` keeps (the lowest average
wait among the epochs whose maximum wait is at most ``--bound`` × FCFS + EASY's on the
validation month, from the plain-Python oracle).  Then the choice across the runs by each rule.
The runs must share a trace (the first run's validation month gives the bound).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxsched.systems.dras.config import RunConfig, env_jobs, load_split, resolve_trace
from jaxsched.systems.dras.evaluate import baseline_schedules
from jaxsched.systems.dras.run import OUTSIDE_BOUND, bounded_wait_score
from jaxsched.train.loop import read_log


def fcfs_max_wait(run: Path) -> float:
    """FCFS + EASY's maximum wait (s) on ``run``'s validation month."""
    rc = RunConfig.from_dict(json.loads((run / "run.json").read_text()))
    cj = env_jobs(load_split(resolve_trace(rc.trace, run)).val, rc.priority)
    start = baseline_schedules(cj, ["fcfs"])["fcfs"]["start"]
    return float(np.max(start - np.asarray(cj.submit)))


def best_epochs(rows: list, bound: float) -> tuple:
    """``(best by average wait, best within the bound or None)``: log rows with validation."""
    rows = [r for r in rows if "val_max_wait" in r]
    by_wait = min(rows, key=lambda r: r["val_wait"])
    bw = min(rows, key=lambda r: bounded_wait_score(r["val_wait"], r["val_max_wait"], bound))
    inside = bounded_wait_score(bw["val_wait"], bw["val_max_wait"], bound) < OUTSIDE_BOUND
    return by_wait, bw if inside else None


def _cell(r) -> str:
    if r is None:
        return "none"
    return f"{r['val_wait']:.1f} s ({r['val_max_wait'] / 3600:.2f} h, ep. {r['epoch']})"


def main(argv=None, out=print) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--bound", type=float, default=1.5, help="x FCFS + EASY's maximum wait")
    a = ap.parse_args(argv)
    f = fcfs_max_wait(a.runs[0])
    bound = a.bound * f
    out(f"FCFS + EASY's validation maximum wait {f / 3600:.2f} h; bound {bound / 3600:.2f} h")
    out("| run | epochs | best average wait | best within the bound |")
    out("|---|---:|---|---|")
    picks = {}
    for run in a.runs:
        rows = read_log(run, nonempty=True)
        picks[str(run)] = best_epochs(rows, bound)
        out(f"| {run} | {len(rows)} | {_cell(picks[str(run)][0])} | {_cell(picks[str(run)][1])} |")
    by_wait = min(picks, key=lambda k: picks[k][0]["val_wait"])
    inside = [k for k in picks if picks[k][1] is not None]
    by_bound = min(inside, key=lambda k: picks[k][1]["val_wait"]) if inside else None
    out(f"choice by average wait: {by_wait} epoch {picks[by_wait][0]['epoch']}")
    if by_bound:
        out(f"choice within the bound: {by_bound} epoch {picks[by_bound][1]['epoch']}")
    else:
        out("choice within the bound: none")
    return {"bound": bound, "picks": picks, "by_wait": by_wait, "by_bound": by_bound}


if __name__ == "__main__":
    from jaxsched.errors import ConfigError

    try:
        main()
    except ConfigError as e:  # a run without a log, or another trace: one line, no traceback
        raise SystemExit(f"dras_seeds.py: {e}") from None
