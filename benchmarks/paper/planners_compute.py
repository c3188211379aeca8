"""The planners' margin against their compute (issue 63): one point per planner setting, trace
and split, from the per-sequence files of ``benchmarks/paper/planners_heldout.py``.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/planners_compute.py
        [--data benchmarks/data/planners] [--out docs/img/planners-margin-vs-compute.png]

x: the decisions the planner's forecasts simulated per real decision (log; a plain heuristic
simulates none); y: the paired bsld difference planner − baseline in % of the baseline's mean,
± one standard error, the baseline being the cell with the lowest mean on the trace's
validation files (as the report chooses it). Filled markers: the test split (held out); hollow:
the validation split (where the settings were chosen, so in-sample for that choice). Prints the
points as a table. Host-side, seconds (matplotlib, :func:`jaxsched.plots.save_png`).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import BENCH, REPO, use  # noqa: E402

use("paper")
import planners_heldout as H  # noqa: E402

DATA = BENCH / "data" / "planners"
OUT = REPO / "docs" / "img" / "planners-margin-vs-compute.png"


def points(data: Path = DATA) -> list[dict]:
    """``{"trace", "split", "planner", "sequences", "pct", "pct_se", "sim_per_decision"}`` for
    every planner of every trace folder with validation files."""
    out = []
    for trace in sorted(p for p in data.iterdir() if (p / "validation").is_dir()):
        baseline, _ = H.best_cell(H.load(trace / "validation"))
        for split in ("validation", "test"):
            if not (trace / split).is_dir():
                continue
            s = H.summary(H.load(trace / split), baseline)
            for name, f in s["planners"].items():
                out.append({"trace": trace.name, "split": split, "planner": name,
                            "sequences": f["sequences"], "baseline": baseline, "pct": f["pct"],
                            "pct_se": 100 * f["diff_se"] / f["baseline_mean"],
                            "sim_per_decision": f["simulated_decisions_per_decision"]})  # fmt: skip
    return out


def plot(pts: list[dict], path) -> Path:
    from jaxsched.plots import pyplot, save_png

    plt = pyplot()
    traces = list(dict.fromkeys(p["trace"] for p in pts))
    colour = {t: plt.get_cmap("tab10").colors[i % 10] for i, t in enumerate(traces)}
    marker = lambda name: "s" if name.startswith("window") else "o"  # noqa: E731
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for p in pts:
        c = colour[p["trace"]]
        ax.errorbar(p["sim_per_decision"], p["pct"], yerr=p["pct_se"], fmt=marker(p["planner"]),
                    color=c, mfc=c if p["split"] == "test" else "none", ms=6, capsize=2,
                    lw=0.8)  # fmt: skip
        if p["split"] == "test":
            ax.annotate(p["planner"], (p["sim_per_decision"], p["pct"]), fontsize=6,
                        xytext=(4, 2), textcoords="offset points")  # fmt: skip
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=20)
    ax.set(xlabel="decisions simulated by the forecasts per real decision (log)",
           ylabel="bsld, planner − baseline chosen on validation (% of baseline)")  # fmt: skip
    ax.set_title("Look-ahead planners: margin against compute (filled: test split, held out; "
                 "hollow: validation)\nsquares: window, circles: rollout; negative = better; "
                 "linear within ±20 %", fontsize=9)  # fmt: skip
    ax.grid(alpha=0.3, which="both")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=colour[t], label=t) for t in traces]
    ax.legend(handles=handles, fontsize=7, loc="best")
    return save_png(fig, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    pts = points(args.data)
    print("| trace | split | planner | sequences | baseline | − baseline (%) | sim. decisions "
          "/ decision |\n|---|---|---|---:|---|---:|---:|")  # fmt: skip
    for p in pts:
        se = "nan" if math.isnan(p["pct_se"]) else f"{p['pct_se']:.1f}"
        print(f"| {p['trace']} | {p['split']} | `{p['planner']}` | {p['sequences']} | "
              f"{p['baseline']} | {p['pct']:+.1f} ± {se} | {p['sim_per_decision']:.1f} |")  # fmt: skip
    print(f"wrote {plot(pts, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
