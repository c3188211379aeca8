"""Fig. 4 of the split-window paper as one plot, from ``benchmarks/speed/splitwindow_env.py
--json``: every heuristic with back-filling, each trained agent and learned baseline, on the
same episodes, sorted by average wait; one panel per metric (average wait, queue length,
utilisation, job load, bounded slowdown), mean ± standard error. Printed first: every model
minus every heuristic on the same episodes (wait, bsld, and the utilisations over the
episode's span and over its arrival span in points; paired). Offline SchedInspector runs
(``--offline``, their own 128-job protocol) are on other sequences and are left out.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/splitwindow_fig4.py runs/fig4-eval100.json \
        --png fig4.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

#: panels: (metric key, axis label)
PANELS = (
    ("avg_wait", "average wait (s)"),
    ("avg_queue_len", "average queue length"),
    ("util", "utilisation"),
    ("job_load", "job load"),
    ("avg_bsld", "bounded slowdown"),
)


def fig4_rows(res: dict, backfills=("easy", "rlscheduler")) -> list:
    """``(label, {metric: [mean, s.e.]})`` of the heuristics with ``backfills`` and of every
    model row, sorted by average wait."""
    rows = [(n, m) for n, m in res.get("baselines", {}).items() if n.split("+")[1] in backfills]
    rows += [(r["name"], r["metrics"]) for r in res.get("models", {}).values()]
    return sorted(rows, key=lambda r: r[1]["avg_wait"][0])


def paired(res: dict, keys=("avg_wait", "avg_bsld", "util", "util_arrival_span")) -> dict:
    """Each model row minus each heuristic on the same episodes (from the JSON's per-episode
    values): ``{model name: {heuristic: {metric: [mean, s.e.]}}}``; utilisations in points;
    a metric the JSON does not hold (an older run of the script) is left out."""
    from benchmarks.speed.splitwindow_env import mean_se

    out = {}
    for r in res.get("models", {}).values():
        rows = {}
        for h, b in res.get("baselines_per_episode", {}).items():
            rows[h] = {}
            for k in (k for k in keys if k in b and k in r["per_episode"]):
                d = np.asarray(r["per_episode"][k], np.float64) - np.asarray(b[k], np.float64)
                rows[h][k] = mean_se(d * (100.0 if k.startswith("util") else 1.0))
        out[r["name"]] = rows
    return out


def colour(label: str) -> str:
    """DBF agents blue, other learned schedulers orange, heuristics grey."""
    if label.startswith("DBF"):
        return "tab:blue"
    return "tab:orange" if label.startswith(("RLScheduler", "SchedInspector")) else "tab:gray"


def plot(res: dict, path, backfills=("easy", "rlscheduler")) -> Path:
    from jaxsched.plots import pyplot, save_png

    rows = fig4_rows(res, backfills)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(PANELS), figsize=(4 * len(PANELS), 0.35 * len(rows) + 1.5),
                             sharey=True)  # fmt: skip
    y = range(len(rows))
    for ax, (k, label) in zip(axes, PANELS, strict=True):
        ax.barh(y, [m[k][0] for _, m in rows], xerr=[m[k][1] for _, m in rows], capsize=2,
                color=[colour(n) for n, _ in rows])  # fmt: skip
        ax.set(xlabel=label)
        if k in ("avg_wait", "avg_bsld", "avg_queue_len"):
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(plt.NullFormatter())
    axes[0].set_yticks(list(y), [n for n, _ in rows], fontsize=8)
    axes[0].invert_yaxis()
    models = list(res.get("models", {}).values())
    n = len(models[0]["per_episode"]["avg_wait"]) if models else None
    fig.suptitle(f"{res.get('trace', '')}" + (f", {n} episodes" if n else ""))
    fig.tight_layout()
    return save_png(fig, Path(path))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="benchmarks/speed/splitwindow_env.py --json output")
    ap.add_argument("--png", required=True)
    ap.add_argument("--backfill", action="append", default=None,
                    help="heuristics' back-filling to show (repeatable; default easy and rlscheduler)")  # fmt: skip
    a = ap.parse_args(argv)
    res = json.loads(Path(a.json).read_text())
    for name, rows in paired(res).items():  # model minus heuristic, utilisation in points
        for h, d in rows.items():
            print(f"{name} - {h}: " + "  ".join(
                f"{k} {v[0]:+.4g} ± {v[1]:.2g}" for k, v in d.items()))  # fmt: skip
    print(plot(res, a.png, tuple(a.backfill or ("easy", "rlscheduler"))))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
