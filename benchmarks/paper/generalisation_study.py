"""Issue 49's study: every held-out learned-versus-baseline measurement of the project in one
table, the row that came closest to (or furthest ahead of) its baseline, and two plots.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/generalisation_study.py [FILE]
        [--system RLScheduler,...] [--all-baselines] [--no-commands] [--plots DIR]

``FILE`` (default ``benchmarks/data/generalisation-study.json``) holds one row per measurement,
copied from the notebook section the row names (this script measures nothing). Printed: a
markdown table grouped by method, then trace; each row's paired margin model − baseline
(negative = the model is better) in the metric's units, in % of the baseline's mean and in
standard errors; the margin against F1 where the source gives one; then the row with the
smallest margin in standard errors and the one with the smallest margin in %, over all rows and
per system, among the rows whose baseline is the strongest of its table (``--all-baselines``:
among every row); then each row's command. ``--plots DIR`` writes
``DIR/generalisation-margin-vs-jobs.png`` (the margin in % against the jobs scheduled in
training, log scale, one marker per trace and backfilling, hollow where the baseline is not the
strongest; error bars one standard error; lines at 0 and at issue 49's −5 %) and
``DIR/generalisation-margin-by-method.png`` (the margin in % by method). Rows without a % or
without a count of training jobs are left out of the plots that need them, and the plots say
how many.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import BENCH  # noqa: E402

#: the study's rows (notebook §22.8)
DEFAULT = BENCH / "data" / "generalisation-study.json"
#: issue 49's bar: the model ahead of the strongest baseline by this many % (and by 2 s.e.)
TARGET_PCT = -5.0
#: the two plots' file names under ``--plots DIR``
PLOT_FILES = ("generalisation-margin-vs-jobs.png", "generalisation-margin-by-method.png")
MINUS = "\u2212"


#: fields only the planner rows store (None elsewhere): the per-sequence best of the cells in
#: hindsight (a ceiling, not a baseline), its margin in %, and the share of the gap closed
OPTIONAL = ("ceiling_mean", "ceiling_margin_pct", "gap_closed")


def load(path) -> list[dict]:
    """The rows of a study file (``{"rows": [...]}``), each with ``jobs_scheduled_in_training``
    derived: epochs × sequences per epoch × training sequence length (None where one is None),
    and the :data:`OPTIONAL` fields (None where a row has none)."""
    rows = json.loads(Path(path).read_text())["rows"]
    for r in rows:
        for k in OPTIONAL:
            r.setdefault(k, None)
        counts = (r["epochs"], r["sequences_per_epoch"], r["training_sequence_length"])
        r["jobs_scheduled_in_training"] = None if None in counts else math.prod(counts)
    return rows


def decimals(x) -> int:
    """How many decimals ``x`` was given with (at most 4)."""
    return next((d for d in range(5) if abs(round(x, d) - x) < 1e-9), 4)


def num(x, signed: bool = False, at_least: int = 0) -> str:
    """``x`` with as many decimals as it was given (at most 4; at least ``at_least``), thousands
    separators, a true minus sign, ``+`` when ``signed``; ``—`` for None."""
    if x is None:
        return "—"
    s = f"{abs(x):,.{max(decimals(x), at_least)}f}"
    if x < 0 and float(s.replace(",", "")) != 0:
        return MINUS + s
    return ("+" if signed else "") + s


def pm(mean, se) -> str:
    """``mean ± se``, the mean signed, both with the decimals of the one given with more
    (``−1.17 ± 4.70``: JSON keeps no trailing zero)."""
    d = max(decimals(mean), decimals(se))
    return f"{num(mean, True, d)} ± {num(se, False, d)}"


def signed1(x: float) -> str:
    """``x`` to one decimal with its sign (``−0.0`` for a small negative)."""
    return f"{x:+,.1f}".replace("-", MINUS)


def z(row) -> float | None:
    """The margin in standard errors (None when the standard error is 0)."""
    return row["margin_mean"] / row["margin_se"] if row["margin_se"] else None


def pct_se(row) -> float | None:
    """One standard error of the margin in % of the baseline's mean: scaled like the source's
    % where the margin is not 0, else from the baseline's mean; None when neither is given."""
    if row["margin_pct"] is not None and row["margin_mean"]:
        return abs(row["margin_se"] * row["margin_pct"] / row["margin_mean"])
    if row["baseline_mean"]:
        return 100 * row["margin_se"] / abs(row["baseline_mean"])
    return None


def ordered(rows) -> list[dict]:
    """Grouped by method (in the order the methods first appear), then by trace."""
    first = {}
    for r in rows:
        first.setdefault(r["method"], len(first))
    return sorted(rows, key=lambda r: (first[r["method"]], r["trace"]))


def _jobs(n) -> str:
    return "—" if n is None else f"{n:,}"


def table(rows) -> str:
    """The markdown table of ``rows`` (grouped by :func:`ordered`)."""
    head = ("method", "trace", "backfilling", "model", "metric", "training jobs (distinct)",
            "jobs scheduled in training", "chosen on", "test: sequences × jobs", "baseline: mean",
            "strongest", "model − baseline (paired)", "%", "in s.e.", "− F1 (paired)", "id", "§")  # fmt: skip
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * 5 + "---:|" * 2 + "---|" * 4 + "---:|" * 3
           + "---|" * 3]  # fmt: skip
    for r in ordered(rows):
        f1 = (
            pm(r["margin_vs_f1_mean"], r["margin_vs_f1_se"])
            + (
                f" ({num(r['margin_vs_f1_pct'], True, 1)} %)"
                if r["margin_vs_f1_pct"] is not None
                else ""
            )
            if r["margin_vs_f1_mean"] is not None
            else ""
        )
        zz = z(r)
        pct = "—" if r["margin_pct"] is None else num(r["margin_pct"], True, 1) + " %"
        if r["margin_pct"] is not None and r["margin_pct_derived"]:
            pct += " (derived)"
        length = "—" if r["test_sequence_length"] is None else f"{r['test_sequence_length']:,}"
        cells = (r["method"], r["trace"], r["backfilling"], f"`{r['model']}`", r["metric"],
                 _jobs(r["training_jobs_distinct"]), _jobs(r["jobs_scheduled_in_training"]),
                 r["chosen_on"], f"{r['test_sequences']} × {length}",
                 f"{r['baseline']}: {num(r['baseline_mean'])}", "yes" if r["vs_strongest"] else "no",
                 pm(r["margin_mean"], r["margin_se"]), pct,
                 "—" if zz is None else signed1(zz), f1, r["id"],
                 r["section"])  # fmt: skip
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def closest(rows, all_baselines: bool = False) -> dict:
    """``{"se": row, "pct": row}``: the rows with the smallest margin in standard errors and in %
    (among the rows against the strongest baseline unless ``all_baselines``); None where no
    row has the figure."""
    pool = [r for r in rows if all_baselines or r["vs_strongest"]]
    by_se = [r for r in pool if z(r) is not None]
    by_pct = [r for r in pool if r["margin_pct"] is not None]
    return {
        "se": min(by_se, key=z, default=None),
        "pct": min(by_pct, key=lambda r: r["margin_pct"], default=None),
    }


def verdict(row) -> str:
    """What the row's margin says at two standard errors, and against issue 49's bar."""
    zz = z(row)
    if zz is None:
        return "no standard error"
    if zz < -2:
        bar = row["margin_pct"] is not None and row["margin_pct"] <= TARGET_PCT
        return "beats it at two standard errors, " + (
            f"by {num(-TARGET_PCT)} % or more (issue 49's bar, in this row's setting)"
            if bar
            else f"by under {num(-TARGET_PCT)} %"
        )
    return "loses" if zz > 2 else "within two standard errors (a tie)"


def describe(row) -> str:
    pct = "" if row["margin_pct"] is None else f", {num(row['margin_pct'], True, 1)} %"
    zz = z(row)
    se = "" if zz is None else f", {signed1(zz)} s.e."
    return (
        f"{row['id']} ({row['method']}; {row['trace']}, backfilling {row['backfilling']}; "
        f"`{row['model']}` against {row['baseline']}): {pm(row['margin_mean'], row['margin_se'])}"
        f"{pct}{se}: {verdict(row)} [{row['section']}]"
    )


def summary(rows, all_baselines: bool = False) -> str:
    """The closest rows over all ``rows`` and per system."""
    scope = "every row" if all_baselines else "the rows against the strongest baseline"
    lines = [f"Closest to its baseline (smallest margin; among {scope}):"]
    groups = [("all systems", rows)]
    systems = list(dict.fromkeys(r["system"] for r in rows))
    if len(systems) > 1:
        groups += [(s, [r for r in rows if r["system"] == s]) for s in systems]
    for name, group in groups:
        c = closest(group, all_baselines)
        for key, what in (("se", "in standard errors"), ("pct", "in %")):
            row = c[key]
            lines.append(f"- {name}, {what}: " + ("none" if row is None else describe(row)))
    return "\n".join(lines)


def commands(rows) -> str:
    """Each distinct command once, with the rows it reproduces."""
    by = {}
    for r in ordered(rows):
        by.setdefault(r["command"], []).append(r["id"])
    return "\n".join(f"- {', '.join(ids)}:\n\n      {cmd}\n" for cmd, ids in by.items())


def _style(rows):
    """Colour per trace and marker per backfilling, in the order they appear."""
    import matplotlib as mpl

    traces = list(dict.fromkeys(r["trace"] for r in rows))
    palette = mpl.colormaps["tab10"].colors + mpl.colormaps["Dark2"].colors
    colour = {t: palette[i % len(palette)] for i, t in enumerate(traces)}
    markers = {"none": "o", "rlscheduler": "s"}
    return colour, lambda bf: markers.get(bf, "^")


def _legend(ax, entries, hollow_colour, **kw):
    """A legend of filled proxy markers ``(label, colour, marker)``, one hollow marker for the rows
    whose baseline is not the strongest, and the two reference lines."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker=m, color=c, label=lab) for lab, c, m in entries]
    handles.append(Line2D([], [], ls="", marker="o", color=hollow_colour, mfc="none",
                          label="hollow: baseline not the strongest"))  # fmt: skip
    handles.append(
        Line2D(
            [],
            [],
            color="tab:red",
            ls="--",
            label=f"target: {num(-TARGET_PCT)} % ahead of the strongest baseline",
        )
    )
    ax.legend(handles=handles, fontsize=7, **kw)


def plot_vs_jobs(rows, path) -> Path:
    """The margin in % against the jobs scheduled in training (log x)."""
    from jaxsched.plots import pyplot, save_png

    pts = [r for r in rows if r["margin_pct"] is not None and r["jobs_scheduled_in_training"]]
    colour, marker = _style(pts)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for r in pts:
        c = colour[r["trace"]]
        ax.errorbar(r["jobs_scheduled_in_training"], r["margin_pct"], yerr=pct_se(r), fmt=marker(r["backfilling"]),
                    color=c, mfc=c if r["vs_strongest"] else "none", ms=6, capsize=2, lw=0.8)  # fmt: skip
    ax.axhline(0, color="black", lw=0.8)
    ax.axhline(TARGET_PCT, color="tab:red", ls="--", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=10)
    ax.set(xlabel="jobs scheduled in training (epochs × sequences × length; log)",
           ylabel="held-out margin, model − baseline (% of baseline)")  # fmt: skip
    left = len(rows) - len(pts)
    ax.set_title(f"Held out: margin against training jobs ({len(pts)} rows; {left} without a % or "
                 "with no job count left out)\nnegative = the model is better; linear within ±10 %, "
                 "logarithmic beyond", fontsize=9)  # fmt: skip
    ax.grid(alpha=0.3, which="both")
    keys = list(dict.fromkeys((r["trace"], r["backfilling"]) for r in pts))
    entries = [(f"{t}, {bf}", colour[t], marker(bf)) for t, bf in keys]
    _legend(ax, entries, "gray", loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save_png(fig, path)


def plot_by_method(rows, path) -> Path:
    """The margin in % per method, one dot per row, error bars one standard error."""
    from jaxsched.plots import pyplot, save_png

    pts = [r for r in rows if r["margin_pct"] is not None]
    methods = list(dict.fromkeys(r["method"] for r in ordered(pts)))
    systems = list(dict.fromkeys(r["system"] for r in pts))
    plt = pyplot()
    palette = plt.get_cmap("tab10").colors
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(methods) + 1.8))
    for i, m in enumerate(methods):
        group = [r for r in pts if r["method"] == m]
        for k, r in enumerate(group):
            y = i + 0.7 * ((k + 1) / (len(group) + 1) - 0.5)
            c = palette[systems.index(r["system"]) % len(palette)]
            ax.errorbar(r["margin_pct"], y, xerr=pct_se(r), fmt="o", color=c, ms=4, capsize=2,
                        mfc=c if r["vs_strongest"] else "none", lw=0.8)  # fmt: skip
    ax.axvline(0, color="black", lw=0.8)
    ax.axvline(TARGET_PCT, color="tab:red", ls="--", lw=1)
    ax.set_xscale("symlog", linthresh=10)
    ax.set_yticks(range(len(methods)), methods, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("held-out margin, model − baseline (% of baseline; negative = the model is better; "
                  "linear within ±10 %)")  # fmt: skip
    left = len(rows) - len(pts)
    ax.set_title(f"Held out, by method ({len(pts)} rows; {left} without a % left out)", fontsize=9)
    ax.grid(alpha=0.3, axis="x", which="both")
    entries = [(s_, palette[i % len(palette)], "o") for i, s_ in enumerate(systems)]
    _legend(ax, entries, "gray", loc="lower right")
    return save_png(fig, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default=str(DEFAULT), help="the study's JSON rows")
    ap.add_argument("--system", default=None, help="only these systems (comma list)")
    ap.add_argument("--all-baselines", action="store_true",
                    help="choose the closest row among every row, not only those against the "
                         "strongest baseline")  # fmt: skip
    ap.add_argument("--no-commands", action="store_true", help="leave the commands out")
    ap.add_argument(
        "--plots", type=Path, default=None, metavar="DIR", help="write the two PNGs here"
    )
    args = ap.parse_args(argv)
    rows = load(args.file)
    if args.system:
        want = {s.strip().lower() for s in args.system.split(",")}
        rows = [r for r in rows if r["system"].lower() in want]
        if not rows:
            print(f"error: no row of system {args.system!r}", file=sys.stderr)
            return 2
    print(table(rows))
    print()
    print(summary(rows, args.all_baselines))
    if not args.no_commands:
        print("\nCommands (each reproduces the rows named):\n")
        print(commands(rows))
    if args.plots is not None:
        args.plots.mkdir(parents=True, exist_ok=True)
        for f, fn in zip(PLOT_FILES, (plot_vs_jobs, plot_by_method), strict=True):
            print(f"wrote {fn(rows, args.plots / f)}")
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
