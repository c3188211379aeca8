"""SchedInspector's Table 4 (with its transfer column) and Table 5's utilisation changes for
every shipped inspector, beside the paper's numbers, with paired standard errors.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/schedinspector_tables.py [--shared DIR]
        [--traces SDSC-SP2,CTC-SP2,Lublin,HPC2N] [--models DIR] [--sequences 50]
        [--fresh 100] [--json FILE]

For every SchedInspector run directory under ``--models`` (default: the shipped
``jaxsched/models``) and every trace of ``--traces`` (the model's own trace and the others:
Table 4's transfer), base alone and base + inspector run on the same sequences of 256 jobs
(:func:`jaxsched.systems.schedinspector.evaluate.inspect_runs`, evaluation mask on), in the
model's own base scheduler, metric and backfilling:

* ``paper protocol`` — spec schedinspector.md §8.2: ``--sequences`` starts drawn as the
  reference's test script draws them with seed 1 (Table 4) over the whole trace; the
  inspector's actions sampled from its softmax as the reference's test does, and greedy;
* ``utilisation`` — the same with seed 2 (Table 5's seed; greedy), base → inspected in
  percentage points;
* ``fresh`` — ``--fresh`` sequences drawn with seed 3 (neither test nor validation seed),
  greedy: the paired difference inspected − base ± its standard error, the honest figure.

The paper's numbers are printed beside each row: Table 4 (SJF base, bsld, no backfilling:
"Base → Y", "SDSC-SP2-model → Y", "Y-model → Y") and Table 5's utilisation Δ of the row's
base and backfilling.  All runs are greedy or sampled from one compiled program per trace.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO  # noqa: E402

DASH = "—"
#: the paper's trace names -> the trace files (shared traces folder; Lublin = RLScheduler's
#: Lublin-1, shipped in this repository as traces/lublin-1.swf)
TRACE_FILES = {
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "Lublin": "lublin_256.swf.gz",
    "HPC2N": "HPC2N-2002-2.2-cln.swf.gz",
}
REPO_TRACES = {"Lublin": "traces/lublin-1.swf"}
STEMS = {
    "sdsc-sp2-1998-4.2-cln": "SDSC-SP2",
    "ctc-sp2-1996-3.1-cln": "CTC-SP2",
    "lublin_256": "Lublin",
    "lublin-1": "Lublin",
    "hpc2n-2002-2.2-cln": "HPC2N",
}
#: Table 4 (SJF base, bsld, no backfilling): Y -> (base, SDSC-SP2-model -> Y, Y-model -> Y)
PAPER_T4 = {
    "SDSC-SP2": (149.5, 130.75, 130.75),
    "CTC-SP2": (13.36, 10.79, 10.1),
    "Lublin": (333.19, 320.39, 27.97),
    "HPC2N": (8.26, 4.39, 3.27),
}
#: Table 5: (trace, backfill) -> {base: (base %, inspected %)}
PAPER_T5 = {
    ("SDSC-SP2", "none"): {"sjf": (59.64, 59.37), "f1": (60.18, 60.59)},
    ("CTC-SP2", "none"): {"sjf": (51.35, 49.92), "f1": (54.40, 54.23)},
    ("Lublin", "none"): {"sjf": (61.49, 61.06), "f1": (67.37, 63.04)},
    ("HPC2N", "none"): {"sjf": (23.72, 23.47), "f1": (24.00, 23.79)},
    ("SDSC-SP2", "rlscheduler"): {"sjf": (78.45, 78.37), "f1": (76.71, 76.93)},
    ("CTC-SP2", "rlscheduler"): {"sjf": (74.98, 74.89), "f1": (75.47, 76.05)},
    ("Lublin", "rlscheduler"): {"sjf": (79.38, 77.71), "f1": (80.38, 78.08)},
    ("HPC2N", "rlscheduler"): {"sjf": (56.81, 57.10), "f1": (57.11, 56.57)},
}
#: the paper's improvements of a model on its own trace read from its figures (bsld, no
#: backfilling; spec schedinspector.md "Numbers given in the text / figures"): F1 base, and
#: Fig. 7's other bases on SDSC-SP2 (bsld gained at the end of training, B − I, and the
#: training rejection ratio)
PAPER_FIGURES = {
    ("Lublin", "f1"): "improvement ≈88 % (Fig. 10), ≈95 % (Fig. 4)",
    ("SDSC-SP2", "f1"): "improvement ≈40 % (Fig. 4)",
    ("CTC-SP2", "f1"): "improvement 13.6 % (Fig. 8)",
    ("SDSC-SP2", "lcfs"): "B − I = +144.9, rejection ratio 0.391 (Fig. 7)",
    ("SDSC-SP2", "srf"): "B − I = +52.9, rejection ratio 0.410 (Fig. 7)",
    ("SDSC-SP2", "saf"): "B − I = +34.5, rejection ratio 0.482 (Fig. 7)",
    ("SDSC-SP2", "fcfs"): "no gain, rejection ratio ≈0.5 -> ≈0.05 (Fig. 7)",
}
LENGTH = 256


def paper_trace(path) -> str | None:
    """The paper's name of a trace file (``traces/lublin-1.swf`` -> ``Lublin``), or None."""
    name = Path(str(path)).name.lower()
    for ext in (".gz", ".swf"):
        name = name[: -len(ext)] if name.endswith(ext) else name
    return STEMS.get(name)


def find_models(root: Path) -> list:
    """``(name, path)`` of every SchedInspector run directory directly under ``root`` (placed
    by :func:`jaxsched.systems.system_of_run`)."""
    from jaxsched.systems import system_of_run

    dirs = sorted(Path(root).iterdir()) if Path(root).is_dir() else []
    return [
        (d.name, d)
        for d in dirs
        if (d / "run.json").is_file() and system_of_run(d).name == "schedinspector"
    ]


def trace_path(shared: Path, name: str) -> Path:
    p = shared / "traces" / TRACE_FILES[name]
    return p if p.is_file() or name not in REPO_TRACES else REPO / REPO_TRACES[name]


def paper_t4(model_trace: str | None, y: str, rc) -> tuple:
    """``(paper base, paper inspected)`` of Table 4 for this model on trace ``y``, or dashes:
    Table 4 is SJF, bsld, no backfilling; its inspected column is the Y-model (the model's own
    trace) or the SDSC-SP2 model applied to Y."""
    if (rc.base, rc.metric, rc.backfill) != ("sjf", "bsld", "none") or y not in PAPER_T4:
        return DASH, DASH
    base, sdsc_model, own = PAPER_T4[y]
    if model_trace == y:
        return base, own
    return (base, sdsc_model) if model_trace == "SDSC-SP2" else (base, DASH)


def model_on_trace(model, path: Path, n_paper: int, n_fresh: int) -> dict:
    """Base vs inspected on one trace: the paper protocol (seed 1, sampled and greedy), seed 2
    (utilisation, greedy) and the fresh seed-3 sequences (greedy), as one batch per action
    mode."""
    from jaxsched.systems.schedinspector.config import load_jobs, make_env
    from jaxsched.systems.schedinspector.evaluate import (
        inspect_runs,
        mean_se,
        rejection_ratio,
        test_starts,
    )

    jobs, wait = load_jobs(str(path), model.run.mode)
    env = make_env(model.run, jobs, wait, length=LENGTH, evaluation=True)
    parts = {
        "paper": test_starts(jobs.n_jobs, LENGTH, n_paper, 1),
        "util": test_starts(jobs.n_jobs, LENGTH, n_paper, 2),
        "fresh": test_starts(jobs.n_jobs, LENGTH, n_fresh, 3),
    }
    starts = parts["paper"] + parts["util"] + parts["fresh"]
    t0 = time.perf_counter()
    greedy = inspect_runs(env, model.params, starts)
    sampled = inspect_runs(env, model.params, starts, sample=True)
    seconds = time.perf_counter() - t0
    a, b = 0, n_paper
    sl = {"paper": slice(a, b), "util": slice(b, 2 * b), "fresh": slice(2 * b, 2 * b + n_fresh)}
    metric = model.run.metric

    def vals(res, part, kind, m=metric):
        return np.asarray(res[kind][m], np.float64)[sl[part]]

    base_p = vals(greedy, "paper", "base")
    fresh_d = vals(greedy, "fresh", "inspected") - vals(greedy, "fresh", "base")
    return {
        "metric": metric,
        "paper_base": float(base_p.mean()),
        "paper_greedy": float(vals(greedy, "paper", "inspected").mean()),
        "paper_sampled": float(vals(sampled, "paper", "inspected").mean()),
        "paper_rejection_greedy": rejection_ratio(greedy, sl["paper"]),
        "paper_rejection_sampled": rejection_ratio(sampled, sl["paper"]),
        "util_base": float(vals(greedy, "util", "base", "util").mean()),
        "util_greedy": float(vals(greedy, "util", "inspected", "util").mean()),
        "fresh_base": mean_se(vals(greedy, "fresh", "base")),
        "fresh_greedy": mean_se(vals(greedy, "fresh", "inspected")),
        "fresh_difference": mean_se(fresh_d),
        "fresh_sequences": n_fresh,
        "seconds": seconds,
    }


def _f(v, digits=2) -> str:
    return v if isinstance(v, str) else f"{v:.{digits}f}"


def _pct(base, new) -> str:
    return f"{100 * (base - new) / base:+.1f}%" if base else DASH


def row_lines(name: str, rc, model_trace, y: str, r: dict) -> list:
    """Three lines per (model, trace): the paper protocol with the paper's Table 4 beside it,
    the utilisation with Table 5 beside it, the fresh paired difference."""
    pb, pi = paper_t4(model_trace, y, rc)
    pu = PAPER_T5.get((y, rc.backfill), {}).get(rc.base)
    where = "own trace" if model_trace == y else f"trained on {model_trace or '?'}"
    (fb, fbe), (fi, fie), (d, de) = r["fresh_base"], r["fresh_greedy"], r["fresh_difference"]
    paper_imp = _pct(pb, pi) if not isinstance(pi, str) else DASH
    fig = PAPER_FIGURES.get((y, rc.base)) if model_trace == y and rc.backfill == "none" else None
    paper_text = f"{_f(pb)} -> {_f(pi)}, {paper_imp}" if fig is None else fig
    lines = [
        f"{name} -> {y} ({where}; base {rc.base}, {r['metric']}, backfill {rc.backfill})",
        f"  paper protocol, seed 1: base {_f(r['paper_base'])} -> greedy "
        f"{_f(r['paper_greedy'])} ({_pct(r['paper_base'], r['paper_greedy'])} better), sampled "
        f"{_f(r['paper_sampled'])} ({_pct(r['paper_base'], r['paper_sampled'])}); rejection "
        f"ratio {r['paper_rejection_greedy']:.3f} / {r['paper_rejection_sampled']:.3f}   "
        f"[paper: {paper_text}]",
        f"  utilisation, seed 2: {100 * r['util_base']:.2f}% -> {100 * r['util_greedy']:.2f}% "
        f"({100 * (r['util_greedy'] - r['util_base']):+.2f} points)   [paper: "
        + (f"{pu[0]:.2f}% -> {pu[1]:.2f}% ({pu[1] - pu[0]:+.2f} points)]" if pu else f"{DASH}]"),
        f"  {r['fresh_sequences']} fresh sequences, seed 3, greedy: base {fb:.2f} ± {fbe:.2f}, "
        f"inspected {fi:.2f} ± {fie:.2f}, paired difference {d:+.2f} ± {de:.2f} "
        f"({_pct(fb, fi)} better)",
    ]
    return lines


def main(argv=None) -> int:
    from jaxsched.systems.schedinspector.evaluate import load_inspector

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=str(REPO.parent / "shared"), help="the shared folder")
    ap.add_argument("--traces", default="SDSC-SP2,CTC-SP2,Lublin,HPC2N")
    ap.add_argument("--models", default=str(REPO / "jaxsched" / "models"))
    ap.add_argument("--sequences", type=int, default=50, help="paper-protocol sequences")
    ap.add_argument("--fresh", type=int, default=100, help="fresh sequences (seed 3)")
    ap.add_argument("--json", default=None, help="write the numbers here")
    args = ap.parse_args(argv)
    traces = [t.strip() for t in args.traces.split(",") if t.strip()]
    unknown = [t for t in traces if t not in TRACE_FILES]
    if unknown:
        ap.error(f"unknown trace {unknown[0]!r}; known: {', '.join(TRACE_FILES)}")
    models = find_models(Path(args.models))
    if not models:
        ap.error(f"no SchedInspector model under {args.models}")
    out = []
    print(
        "SchedInspector, Table 4 (and its transfer column) and Table 5's utilisation; "
        f"{args.sequences} x {LENGTH} jobs per paper-protocol row, {args.fresh} fresh"
    )
    for name, path in models:
        model = load_inspector(path)
        mt = paper_trace(model.run.trace)
        print(f"\n{name}: epoch {model.epoch}, trained on {model.run.trace}")
        for y in traces:
            tp = trace_path(Path(args.shared), y)
            if not tp.is_file():
                print(f"  {y}: {tp} not found, skipped")
                continue
            r = model_on_trace(model, tp, args.sequences, args.fresh)
            print("\n".join(row_lines(name, model.run, mt, y, r)))
            print(f"  ({r['seconds']:.1f} s incl. compile)")
            out.append({"model": name, "model_trace": mt, "trace": y, **r})
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
