"""RLScheduler's Tables V and VIII (and, with ``--transfer``, Table VII) with honest statistics:
the paper's five heuristics and every shipped learned model on the same fresh sequences.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/rlscheduler_tables.py [--tables V,VIII]
        [--transfer] [--traces Lublin-1,Lublin-2,SDSC-SP2,HPC2N] [--sequences 100] [--jobs 1024]
        [--seed 3] [--models DIR] [--shared DIR] [--json FILE] [--held-out [--held-out-jobs N]]

Protocol (issue 19): ``--sequences`` fresh sequences of ``--jobs`` jobs of each trace, drawn as
the reference draws its test sequences (``reference_starts(seed, K, L, 10000)``: the first
10,000 jobs, spec rlscheduler.md §8.2) with ``--seed`` (default 3: neither the paper's test
seed 1 nor the validation seed 2 on which the shipped models were chosen), reference
semantics (``compat``), without and with the reference's backfilling; greedy picks.  One
batched :func:`jaxsched.sim.evaluate.evaluate` call per trace runs the heuristics; the models
run through their system's ``model_rows`` (as ``jaxsched evaluate --model`` does), and the
statistics are :class:`~jaxsched.sim.evaluate.EvalResult`'s ``table`` / ``sem`` / ``paired``
(as ``jaxsched evaluate --versus`` and ``jaxsched demo``).

Every cell is the mean over the sequences ± its standard error; each learned row adds the
paired difference learned − best heuristic of that row (on the same sequences) ± its standard
error, the relative margin (learned / best − 1) and, beside them, the paper's 10-sequence
numbers (its RL and its best heuristic, spec §9).  The models are found under ``--models``
(default: the shipped ``jaxsched/models``): every RLScheduler run directory there, placed by
its ``run.json`` (trace, metric, backfill).  Table V takes the bsld models, Table VIII the
``fairness`` models, each on the trace it was trained on; a row without a model prints "—".
Table VIII has the paper's rows only (SDSC-SP2, HPC2N: the Lublin traces have one user, so
there fairness = bsld).
Table VII evaluates every bsld model on every trace, in the backfilling it was trained with.

``--held-out`` (issue 47 §3) runs ``benchmarks/paper/rlscheduler_heldout.py`` with the other options
(``--held-out-jobs`` as its ``--test-jobs``): the tables on the test split, with F2-F4, SJF
backfilling, the tuned priorities and the in-sample column; see that script. Before issue 47
(RESULTS §14.14) it meant what ``--held-out-legacy`` does now (:func:`run_tables`'s
``held_out``): the same tables on jobs no model was trained on. The paper's protocol (above)
draws its test sequences from the first 10,000 jobs, which are the jobs every shipped model
trained on (new starting points, seen jobs). Held out: for SDSC-SP2 and HPC2N the sequences
start uniformly (``RandomState(seed)``) among the jobs after the first 10,000; Lublin-1 and
Lublin-2 are 10,000-job traces drawn from the Lublin model, so a fresh trace of
``--held-out-jobs`` jobs is drawn from the same preset with the generator seed
:data:`FRESH_LUBLIN_SEED` (``jaxsched trace generate lublin --preset lublin-1 --jobs N --seed
S``; written to a temporary folder) and the sequences start uniformly over it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, use  # noqa: E402

use("paper")

import paper_tables as PT  # noqa: E402  (the heuristic columns, trace files, paper numbers)

DASH = "—"
TABLE_METRIC = {"V": "bsld", "VIII": "fairness"}
#: the traces of each table's rows (the Lublin traces have one user: fairness = bsld)
TABLE_TRACES = {"V": ("Lublin-1", "SDSC-SP2", "HPC2N", "Lublin-2"), "VIII": ("SDSC-SP2", "HPC2N")}
TABLE_TITLE = {
    "V": "average bounded slowdown",
    "VIII": "max over users of the per-user average bounded slowdown (fairness)",
}
#: Table V's RL column (spec §9)
PAPER_RL_V = {
    "none": {"Lublin-1": 254.67, "SDSC-SP2": 466.44, "HPC2N": 117.01, "Lublin-2": 724.51},
    "rlscheduler": {"Lublin-1": 58.64, "SDSC-SP2": 397.82, "HPC2N": 86.14, "Lublin-2": 118.79},
}
#: Table VIII (spec §9): FCFS WFP3 UNICEP SJF F1 RL
PAPER_VIII = {
    "none": {"SDSC-SP2": (7257, 14858, 12234, 12185, 8260, 4116), "HPC2N": (2058, 5107, 5145, 1255, 1310, 1147)},
    "rlscheduler": {"SDSC-SP2": (7356, 8464, 3840, 10121, 7799, 2712), "HPC2N": (1502, 2125, 2081, 1491, 583, 519)},
}  # fmt: skip
#: Table VII (spec §9): trace Y -> (best heuristic, worst heuristic, RL trained on X ...)
VII_MODELS = ("Lublin-1", "SDSC-SP2", "HPC2N", "Lublin-2")
PAPER_VII = {
    "none": {
        "Lublin-1": (("F1", 258.37), ("UNICEP", 22274.74), (254.67, 482.62, 283.00, 334.73)),
        "SDSC-SP2": (("F1", 1232.06), ("WFP3", 3000.88), (1543.40, 466.44, 1016.83, 1329.41)),
        "HPC2N": (("F1", 118.01), ("UNICEP", 660.77), (169.91, 300.43, 186.42, 236.00)),
        "Lublin-2": (("F1", 698.34), ("UNICEP", 11265.3), (665.49, 805.16, 648.52, 724.51)),
    },
    "rlscheduler": {
        "Lublin-1": (("SJF", 73.31), ("UNICEP", 307.23), (58.64, 93.16, 54.65, 64.45)),
        "SDSC-SP2": (("UNICEP", 548.01), ("SJF", 2167.84), (1364.43, 397.82, 746.65, 1192.97)),
        "HPC2N": (("F1", 71.95), ("UNICEP", 175.12), (115.93, 128.73, 115.79, 144.54)),
        "Lublin-2": (("SJF", 91.99), ("UNICEP", 379.59), (172.15, 183.98, 139.80, 118.79)),
    },
}
#: trace file stems (lower case, without .swf/.gz) -> the paper's trace name
TRACE_STEMS = {
    "lublin-1": "Lublin-1",
    "lublin_256": "Lublin-1",
    "lublin-2": "Lublin-2",
    "lublin_256_new2": "Lublin-2",
    "sdsc-sp2-1998-4.2-cln": "SDSC-SP2",
    "hpc2n-2002-2.2-cln": "HPC2N",
}
#: the repository's own copies, used when the shared folder lacks a trace
REPO_TRACES = {"Lublin-1": "traces/lublin-1.swf", "Lublin-2": "traces/lublin-2.swf"}
#: the Lublin generator's preset of each synthetic trace, and the generator seed of the fresh
#: trace ``--held-out`` draws from it (not the presets' own seeds, 1487089399 / 1568124476)
LUBLIN_PRESETS = {"Lublin-1": "lublin-1", "Lublin-2": "lublin-2"}
FRESH_LUBLIN_SEED = 20261128


def paper_trace(path) -> str | None:
    """The paper's name of a trace file (``traces/lublin-1.swf`` -> ``Lublin-1``), or None."""
    name = Path(str(path)).name.lower()
    for ext in (".gz", ".swf"):
        name = name[: -len(ext)] if name.endswith(ext) else name
    return TRACE_STEMS.get(name)


@dataclasses.dataclass(frozen=True)
class Model:
    """A learned model found by :func:`find_models`: its name (directory), path, the paper's
    name of its training trace (None for another trace), metric and backfilling."""

    name: str
    path: Path
    trace: str | None
    metric: str
    backfill: str


def find_models(root: Path) -> list:
    """Every RLScheduler run directory directly under ``root`` (a ``run.json`` whose
    ``system`` is absent or ``rlscheduler``), sorted by name, as :class:`Model`."""
    out = []
    for d in sorted(Path(root).iterdir()) if Path(root).is_dir() else []:
        try:
            rj = json.loads((d / "run.json").read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(rj, dict) or rj.get("system", "rlscheduler") != "rlscheduler":
            continue
        trace = paper_trace(rj.get("trace", ""))
        metric, bf = rj.get("metric", "bsld"), rj.get("backfill", "none")
        out.append(Model(d.name, d, trace, metric, bf))
    return out


def paper_heuristics(table: str, backfill: str, trace: str) -> dict | None:
    """The paper's heuristic numbers of a row, ``{policy: value}``, or None."""
    if table == "V":
        row = PT.PAPER["V"][backfill].get(trace)
        return None if row is None else dict(zip(PT.POLICIES, map(float, row.split())))
    row = PAPER_VIII[backfill].get(trace)
    return None if row is None else dict(zip(PT.POLICIES, map(float, row[:5])))


def paper_rl(table: str, backfill: str, trace: str) -> float | None:
    if table == "V":
        return PAPER_RL_V[backfill].get(trace)
    row = PAPER_VIII[backfill].get(trace)
    return None if row is None else float(row[5])


def row_stats(res, metric: str, backfill: str, heuristics, model: str | None) -> dict:
    """Statistics of one table row from an EvalResult: every heuristic's mean and standard
    error, the best heuristic (lowest mean), and for ``model`` (None or absent: no learned
    row) its mean ± s.e., the paired difference to the best heuristic ± s.e. and the relative
    margin ``diff / best mean`` (= learned / best − 1)."""
    means, sems = res.table(metric), res.sem(metric)
    heur = {p: (means[(p, backfill)], sems[(p, backfill)]) for p in heuristics}
    best = min(heuristics, key=lambda p: heur[p][0])
    out = {"heuristics": heur, "best": best, "model": None}
    if model is None or (model, backfill) not in means:
        return out
    diff, diff_se = res.paired(metric, best)[(model, backfill)]
    out.update(
        model=model,
        mean=means[(model, backfill)],
        se=sems[(model, backfill)],
        diff=diff,
        diff_se=diff_se,
        margin=diff / heur[best][0],
    )
    return out


def _pm(v, e) -> str:
    from jaxsched.formatting import number, std_error

    return f"{number(v)} ± {std_error(e)}"


def learned_cells(st: dict, paper_h: dict | None, prl: float | None) -> list:
    """The printed learned-row cells of :func:`row_stats` output ``st`` beside the paper's
    numbers: model, learned mean ± s.e., best heuristic, learned − best ± s.e., margin, paper
    RL, paper best, paper margin ("—" where there is nothing)."""
    from jaxsched.formatting import number, std_error

    best = st["best"]
    bm, be = st["heuristics"][best]
    if paper_h:
        pb = min(paper_h, key=paper_h.get)
        pbest = f"{paper_h[pb]:g} ({PT.HEADS[pb]})"
        pmargin = f"{100 * (prl / paper_h[pb] - 1):+.1f} %" if prl is not None else DASH
    else:
        pbest, pmargin = DASH, DASH
    cells = [st["model"] or DASH]
    if st["model"] is None:
        cells += [DASH, f"{_pm(bm, be)} ({PT.HEADS[best]})", DASH, DASH]
    else:
        cells += [
            _pm(st["mean"], st["se"]),
            f"{_pm(bm, be)} ({PT.HEADS[best]})",
            f"{number(st['diff'], signed=True)} ± {std_error(st['diff_se'])}",
            f"{100 * st['margin']:+.1f} %",
        ]
    return cells + [DASH if prl is None else f"{prl:g}", pbest, pmargin]


def format_grid(head: list, rows: list) -> str:
    """Columns padded to their widest cell (first two left-aligned)."""
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    fmt = lambda r: "  ".join(
        str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))
    )
    return "\n".join([fmt(head), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])


LEARNED_HEAD = ["trace", "backfilling", "model", "learned", "best heuristic (ours)",
                "learned − best", "margin", "paper RL", "paper best", "paper margin"]  # fmt: skip


def table_text(table: str, results: dict, models: list, traces) -> tuple[str, list]:
    """Table V or VIII as text (heuristics ± s.e., then the learned rows) and its JSON rows."""
    metric = TABLE_METRIC[table]
    heur_rows, learned_rows, js = [], [], []
    for bf in PT.BACKFILLS:
        for tr in [t for t in traces if t in TABLE_TRACES[table]]:
            res = results[tr]
            ph = paper_heuristics(table, bf, tr)
            cands = [m.name for m in models if (m.trace, m.metric, m.backfill) == (tr, metric, bf)]
            base = row_stats(res, metric, bf, PT.POLICIES, None)
            heur_rows.append(
                [tr, PT.BF_TITLE[bf]] + [_pm(*base["heuristics"][p]) for p in PT.POLICIES]
            )
            heur_rows.append(
                ["", "  paper"] + [DASH if ph is None else f"{ph[p]:g}" for p in PT.POLICIES]
            )
            for name in cands or [None]:
                st = row_stats(res, metric, bf, PT.POLICIES, name)
                prl = paper_rl(table, bf, tr)
                learned_rows.append([tr, PT.BF_TITLE[bf]] + learned_cells(st, ph, prl))
                js.append({"table": table, "trace": tr, "backfill": bf, "metric": metric,
                           **st, "paper_rl": prl, "paper_heuristics": ph})  # fmt: skip
    heads = ["trace", "backfilling"] + [PT.HEADS[p] for p in PT.POLICIES]
    text = format_grid(heads, heur_rows) + "\n\n" + format_grid(LEARNED_HEAD, learned_rows)
    return text, js


def transfer_text(results: dict, models: list, traces) -> tuple[str, list]:
    """Table VII: every bsld model (columns, grouped by training trace) on every trace
    (rows), in its own backfilling, beside the paper's numbers; "—" for a missing model."""
    from jaxsched.formatting import number, std_error

    lines, js = [], []
    for bf in PT.BACKFILLS:
        cols = []  # (training trace, model name or None)
        for x in VII_MODELS:
            ms = [m.name for m in models if (m.trace, m.metric, m.backfill) == (x, "bsld", bf)]
            cols += [(x, n) for n in ms] or [(x, None)]
        head = ["trace Y", ""] + ["best heuristic", "worst heuristic"]
        head += [f"RL-{x}" + (f" {n}" if n else "") for x, n in cols]
        rows = []
        for tr in traces:
            res = results[tr]
            st = row_stats(res, "bsld", bf, PT.POLICIES, None)
            h = st["heuristics"]
            worst = max(h, key=lambda p: h[p][0])
            ours = ["ours", f"{_pm(*h[st['best']])} ({PT.HEADS[st['best']]})"]
            ours.append(f"{_pm(*h[worst])} ({PT.HEADS[worst]})")
            diffs = ["", f"learned − {PT.HEADS[st['best']]}", ""]
            pbest, pworst, prl = PAPER_VII[bf].get(tr, (None, None, (None,) * 4))
            paper = ["paper", f"{pbest[1]:g} ({pbest[0]})" if pbest else DASH]
            paper.append(f"{pworst[1]:g} ({pworst[0]})" if pworst else DASH)
            for x, n in cols:
                s = row_stats(res, "bsld", bf, PT.POLICIES, n)
                pv = prl[VII_MODELS.index(x)]
                paper.append(DASH if pv is None else f"{pv:g}")
                if s["model"] is None:
                    ours.append(DASH)
                    diffs.append(DASH)
                    continue
                ours.append(_pm(s["mean"], s["se"]))
                diffs.append(f"{number(s['diff'], signed=True)} ± {std_error(s['diff_se'])}")
                js.append({"table": "VII", "trace": tr, "backfill": bf, "trained_on": x,
                           **s, "paper_rl": pv})  # fmt: skip
            rows += [[tr] + ours, [""] + diffs, [""] + paper]
        lines += [f"  {PT.BF_TITLE[bf]}", format_grid(head, rows), ""]
    return "\n".join(lines).rstrip(), js


def trace_path(shared: Path, tr: str) -> Path:
    p = shared / "traces" / PT.TRACES[tr]
    return p if p.is_file() or tr not in REPO_TRACES else REPO / REPO_TRACES[tr]


def paper_starts(n_jobs: int, n_seq: int, length: int, seed: int):
    """The paper's protocol: ``n_seq`` starts drawn as the reference draws its test
    sequences, from the first 10,000 jobs."""
    from jaxsched.workload import reference_starts

    return reference_starts(seed, n_seq, length, min(PT.SLICE, n_jobs))


def held_out_starts(low: int):
    """A draw of starts among the jobs from ``low`` on: ``(n_jobs, n_seq, length, seed) ->``
    int array, uniform over ``[low, n_jobs - length]`` with ``RandomState(seed)``."""
    import numpy as np

    def draw(n_jobs: int, n_seq: int, length: int, seed: int):
        if n_jobs - length < low:
            raise ValueError(f"no sequence of {length} jobs after job {low} ({n_jobs} jobs)")
        return np.random.RandomState(seed).randint(low, n_jobs - length + 1, size=n_seq)

    return draw


def held_out_source(shared: Path, tr: str, folder: Path, n_jobs: int) -> tuple:
    """``(trace file, draw)`` of ``--held-out`` for the paper trace ``tr``: a Lublin trace's
    fresh twin of ``n_jobs`` jobs (generated into ``folder``) with starts over all of it, or
    the real trace with starts after its first 10,000 jobs."""
    if tr not in LUBLIN_PRESETS:
        return trace_path(shared, tr), held_out_starts(PT.SLICE)
    from jaxsched.workload import lublin

    path = folder / f"{LUBLIN_PRESETS[tr]}-seed{FRESH_LUBLIN_SEED}-{n_jobs}.swf"
    if not path.is_file():
        lublin.generate_cli(LUBLIN_PRESETS[tr], None, True, n_jobs, FRESH_LUBLIN_SEED, 0, path)
    return path, held_out_starts(0)


def evaluate_trace(
    path: Path, metrics, models: list, n_seq: int, length: int, seed: int, backfills=None,
    draw=paper_starts,
):  # fmt: skip
    """One batched ``evaluate`` of the five heuristics (in ``backfills``, default both of
    Table V's) on ``n_seq`` sequences drawn with ``seed`` (``draw(n_jobs, n_seq, length,
    seed)``: the paper's protocol by default), plus the rows of ``models`` (each in its own
    backfilling) on the same sequences: an EvalResult, and the seconds the models took."""
    from jaxsched import systems
    from jaxsched.sim.evaluate import evaluate
    from jaxsched.workload import read_swf

    jobs = read_swf(path).jobs("rlscheduler")
    starts = draw(jobs.n_jobs, n_seq, length, seed)
    res = evaluate(
        jobs,
        starts,
        length,
        list(PT.POLICIES),
        list(backfills or PT.BACKFILLS),
        compat=True,
        metrics=metrics,
    )
    t0 = time.perf_counter()
    for m in models:
        system, pol = systems.load_model(m.path)
        res.rows += system.model_rows(
            pol, jobs, res.starts, length, [m.backfill], res.metrics, True, name=m.name
        )
        res.policies.append(m.name)
    return res, time.perf_counter() - t0


def run_tables(
    shared, traces, tables, transfer, models, n_seq, length, seed, out=print, held_out=None
) -> dict:
    """Evaluate, print and return every table (see the module docstring). ``held_out``: None
    (the paper's protocol) or ``(folder, n_jobs)``: the sequences of ``--held-out``, the fresh
    Lublin traces of ``n_jobs`` jobs generated into ``folder``."""
    tables = [t for t in tables if set(traces) & set(TABLE_TRACES[t])]
    metrics = sorted({TABLE_METRIC[t] for t in tables} | ({"bsld"} if transfer else set()))
    results, info = {}, {}
    for tr in traces:
        need = [m for m in models if m.backfill in PT.BACKFILLS and m.metric in metrics
                and (m.trace == tr or (transfer and m.metric == "bsld"))]  # fmt: skip
        path, draw = trace_path(shared, tr), paper_starts
        if held_out is not None:
            path, draw = held_out_source(shared, tr, *held_out)
        t0 = time.perf_counter()
        res, model_s = evaluate_trace(path, metrics, need, n_seq, length, seed, draw=draw)
        results[tr] = res
        info[tr] = {"path": str(path), "starts": [int(s) for s in res.starts],
                    "models": [m.name for m in need], "wall_s": time.perf_counter() - t0,
                    "models_s": model_s, "timing": dict(res.timing)}  # fmt: skip
        out(
            f"{tr}: {path.name}, heuristics {res.timing['runs']} runs (compile "
            f"{res.timing['compile_s']:.1f} s, run {res.timing['run_s']:.1f} s), "
            f"models {', '.join(m.name for m in need) or DASH} ({model_s:.1f} s)"
        )
    if held_out is None:
        where = (f"drawn as the reference draws its test sequences, from the first {PT.SLICE} "
                 "jobs, the jobs the models trained on; the paper's test seed is 1, the models "
                 "were chosen on seed 2")  # fmt: skip
    else:
        where = (f"HELD-OUT JOBS: starts drawn uniformly after the first {PT.SLICE} jobs of the "
                 f"real traces, and over a fresh {held_out[1]:,}-job trace of each Lublin "
                 f"preset (generator seed {FRESH_LUBLIN_SEED}); no model trained on these "
                 "jobs")  # fmt: skip
    out(
        f"\n{n_seq} fresh sequences x {length} jobs per trace, seed {seed} ({where}), "
        f"reference semantics, greedy picks; mean ± standard error over the sequences. The "
        f"paper's numbers are means over its 10 test sequences (seed 1)."
    )
    js = {"config": {"traces": list(traces), "tables": list(tables), "transfer": transfer,
                     "sequences": n_seq, "jobs": length, "seed": seed,
                     "held_out_jobs": None if held_out is None else held_out[1],
                     "models": [dataclasses.asdict(m) for m in models]},
          "traces": info, "tables": {}}  # fmt: skip
    for t in tables:
        text, rows = table_text(t, results, models, traces)
        out(f"\nTable {t} — {TABLE_TITLE[t]} (lower is better)\n{text}")
        js["tables"][t] = rows
    if transfer:
        text, rows = transfer_text(results, models, traces)
        out(f"\nTable VII — bsld of RL models trained on X applied to trace Y\n{text}")
        js["tables"]["VII"] = rows
    return js


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--held-out" in argv:  # issue 47 §3: the test split, benchmarks/paper/rlscheduler_heldout.py
        import rlscheduler_heldout

        rest = [a for a in argv if a != "--held-out"]
        return rlscheduler_heldout.main(["--test-jobs" if a == "--held-out-jobs" else a
                                         for a in rest])  # fmt: skip
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=",".join(PT.TRACES), help="comma list of paper traces")
    ap.add_argument("--tables", default="V,VIII", help="comma list of V, VIII (default both)")
    ap.add_argument("--transfer", action="store_true", help="also Table VII (every bsld model "
                    "on every trace)")  # fmt: skip
    ap.add_argument("--sequences", type=int, default=100, metavar="K")
    ap.add_argument("--jobs", type=int, default=1024, metavar="L")
    ap.add_argument("--seed", type=int, default=3, metavar="S")
    ap.add_argument("--models", type=Path, default=None, metavar="DIR",
                    help="folder of run directories (default: the shipped jaxsched/models)")  # fmt: skip
    ap.add_argument("--shared", type=Path, default=None, help="shared data folder")
    ap.add_argument("--json", type=Path, default=None, help="write every number to FILE")
    ap.add_argument("--held-out-legacy", dest="held_out", action="store_true",
                    help="RESULTS §14.14's held-out tables: sequences of jobs no model "
                    "trained on (the module docstring)")  # fmt: skip
    ap.add_argument("--held-out-jobs", type=int, default=100_000, metavar="N",
                    help="jobs of the fresh Lublin traces of --held-out (100,000)")  # fmt: skip
    a = ap.parse_args(argv)
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    from jaxsched.models import ROOT

    shared = a.shared or PT.default_shared()
    traces = PT._names(a.traces, PT.TRACES, "trace")
    tables = [] if a.tables.strip() == "" else PT._names(a.tables, TABLE_METRIC, "table")
    models = find_models(a.models or ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        held = (Path(tmp), a.held_out_jobs) if a.held_out else None
        res = run_tables(shared, traces, tables, a.transfer, models, a.sequences, a.jobs,
                         a.seed, held_out=held)  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(res, indent=1, default=_jsonable) + "\n")
        print(f"wrote {a.json}")
    return 0


def _jsonable(x):
    return str(x) if isinstance(x, Path) else float(x)


if __name__ == "__main__":
    sys.exit(main())
