"""RLScheduler's Tables V and VIII on the test split (issue 47 §3): every heuristic (the paper's
five and F2-F4), the tuned priority functions, in the reference's two backfilling orders, and
every shipped model, with each model's paired difference to the best heuristic and to the
tuned priority and, beside it, the same model under the paper's protocol (in-sample).

    PYTHONPATH=. .venv/bin/python benchmarks/paper/rlscheduler_heldout.py [--sequences 200]
        [--in-sample-sequences 100] [--jobs 1024] [--seed 47] [--traces ...] [--tables V,VIII]
        [--test-jobs 100000] [--models DIR] [--shared DIR] [--json FILE] [--parts DIR]

(``benchmarks/paper/rlscheduler_tables.py --held-out`` runs this script with the same options.)

Test sequences (``--split test`` semantics, docs/splits.md): SDSC-SP2 and HPC2N: ``--sequences``
starts drawn by :func:`jaxsched.workload.splits.starts_in_range` (``default_rng(seed)``) in the
last 40 % of the trace's jobs (:func:`~jaxsched.workload.splits.chronological_split`); Lublin-1
and Lublin-2: a fresh ``--test-jobs``-job trace of the same generator preset drawn with the
preset's named test seed (``seed_split("lublin-1").test``, 20261128), starts over all of it.
Every model's ``run.json`` is checked with :func:`~jaxsched.workload.splits.check_unseen`
(``--allow-seen`` semantics): a model that saw test jobs would be labelled "(in-sample)".

Reference semantics (``compat``), greedy picks. Backfilling: ``none``; ``rlscheduler`` (the
reference's greedy backfilling, in queue order) and ``rlscheduler-sjbf`` (the same, shortest
requested time first, docs/baselines.md) together form the "with backfilling" row: its best
heuristic is the lowest mean over both orders. EASY++ does not apply (the reference semantics
has no EASY; the Lublin traces have no user ids). The tuned priority functions
(``tuned-sdsc-easy``, ``tuned-lublin1-easy``) were tuned for bsld with EASY in the correct mode
on their trace's training split; here they run as they are in every reference-semantics mode
(Table V only, their trace only). Nothing is chosen on the test sequences but which heuristic
is "best", which the table names; the models were chosen (by their trainers) on validation
sequences of their training jobs.

Resumable: every (trace, policy or model, backfilling mode) computed is written to a part-file
under ``--parts`` (default ``FILE.parts/`` beside ``--json FILE``) as soon as it is done, and a
rerun with the same options reads it instead of running it again (all of it is deterministic:
greedy picks, no sampling). One process per trace (``--traces T --json T.json``) gives the same
numbers as one process for all: each trace's draw depends only on its seed and trace.

"In-sample" column: the same model, heuristics and statistics on ``--in-sample-sequences``
sequences drawn as the paper's protocol draws them (``reference_starts(seed, K, L, 10000)``,
the first 10,000 jobs: the jobs the models trained on; the shipped Lublin traces), with the
paper's five heuristics in the two original modes (``rlscheduler_tables.py``'s table).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import use  # noqa: E402

use("paper")

import paper_tables as PT  # noqa: E402
import rlscheduler_tables as RT  # noqa: E402

DASH = "—"
#: heuristics of the held-out table: the paper's five, then F2-F4
HEURISTICS = PT.POLICIES + ("f2", "f3", "f4")
HEADS = {**PT.HEADS, "f2": "F2", "f3": "F3", "f4": "F4"}
#: the backfilling orders of each row of Tables V / VIII (the model runs in the first)
ROW_MODES = {"none": ("none",), "rlscheduler": ("rlscheduler", "rlscheduler-sjbf")}
MODE_TAG = {"none": "", "rlscheduler": "", "rlscheduler-sjbf": " +SJBF"}
#: the shipped tuned priority function of a trace (tuned for bsld: Table V only)
TUNED = {
    "SDSC-SP2": "tuned-sdsc-easy",
    "Lublin-1": "tuned-lublin1-easy",
    "HPC2N": "tuned-hpc2n-easy",
    "Lublin-2": "tuned-lublin2-easy",
}


def test_draw(tr: str):
    """``(n_jobs, n_seq, length, seed) -> starts`` of the test split of paper trace ``tr``: the
    last 40 % of a real trace's jobs, all of a fresh Lublin trace (its own test jobs), and the
    job range ``(first, last)`` it draws from (via ``out``)."""
    from jaxsched.workload.splits import chronological_split, starts_in_range

    def draw(n_jobs, n_seq, length, seed):
        rng = (0, n_jobs) if tr in RT.LUBLIN_PRESETS else chronological_split(n_jobs).test
        draw.range = tuple(int(x) for x in rng)
        return starts_in_range(rng, length, n_seq, seed)

    return draw


def test_trace(shared: Path, tr: str, folder: Path, n_jobs: int) -> Path:
    """The trace file of ``tr``'s test split: the real trace, or the fresh Lublin trace of
    ``n_jobs`` jobs with the preset's test seed (generated into ``folder``)."""
    if tr not in RT.LUBLIN_PRESETS:
        return RT.trace_path(shared, tr)
    from jaxsched.workload import lublin
    from jaxsched.workload.splits import seed_split

    preset = RT.LUBLIN_PRESETS[tr]
    (seed,) = seed_split(preset).test
    path = folder / f"{preset}-seed{seed}-{n_jobs}.swf"
    if not path.is_file():
        lublin.generate_cli(preset, None, True, n_jobs, seed, 0, path)
    return path


def seen_label(model, path: Path, job_range) -> str:
    """The empty label for a model that saw none of the jobs ``job_range`` of ``path``, else
    " (in-sample)"."""
    from jaxsched.workload.splits import check_unseen

    run = json.loads((model.path / "run.json").read_text())
    return " (in-sample)" if check_unseen(run, model.name, path, job_range, True) else ""


class Parts:
    """Part-files of one held-out run (``--parts DIR``, by default ``FILE.parts/`` beside
    ``--json FILE``): one JSON file per (trace, policy or model, backfilling mode, column) with
    its per-sequence values, so that a rerun skips every part already computed. Heuristics,
    tuned priorities and greedy models are deterministic, so a part is reused whenever its key
    (trace file, starts, length, metrics) is the same; a part of another key is computed
    again. ``folder`` None: nothing is read or written."""

    def __init__(self, folder: Path | None):
        self.folder = None if folder is None else Path(folder)
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)

    def _file(self, tr: str, column: str, policy: str, mode: str) -> Path:
        name = "--".join((tr, column, policy, mode))
        return self.folder / ("".join(c if c.isalnum() or c in "-_." else "_" for c in name)
                              + ".json")  # fmt: skip

    def get(self, key: dict, tr: str, column: str, policy: str, mode: str) -> dict | None:
        """``{(policy name, backfill): {metric: float64 [S]}}`` of a stored part of this
        ``key``, else None."""
        import numpy as np

        if self.folder is None:
            return None
        f = self._file(tr, column, policy, mode)
        try:
            doc = json.loads(f.read_text())
        except (OSError, ValueError):
            return None
        if doc.get("key") != key:
            return None
        return {(c["policy"], c["backfill"]): {m: np.asarray(v, float) for m, v in
                                               c["values"].items()} for c in doc["cells"]}  # fmt: skip

    def put(self, key: dict, tr: str, column: str, policy: str, mode: str, cells: dict) -> None:
        """Store ``cells`` (as :meth:`get` returns them), written whole (temp file, rename)."""
        if self.folder is None:
            return
        doc = {"key": key, "cells": [{"policy": p, "backfill": b,
                                      "values": {m: [float(x) for x in v] for m, v in
                                                 vs.items()}} for (p, b), vs in cells.items()]}  # fmt: skip
        f = self._file(tr, column, policy, mode)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc) + "\n")
        tmp.replace(f)


def part_key(path: Path, starts, length: int, metrics) -> dict:
    """What a stored part must match to be reused."""
    return {"trace_file": Path(path).name, "starts": [int(s) for s in starts],
            "length": int(length), "metrics": sorted(metrics)}  # fmt: skip


def _cells(res, metrics) -> dict:
    """``{(policy, backfill): {metric: float64 [S]}}`` of an EvalResult (start order)."""
    per = {m: cell_values(res, m) for m in metrics}
    return {k: {m: per[m][k] for m in metrics} for k in per[metrics[0]]}


def _merge(vals: dict, cells: dict) -> None:
    """Add ``cells`` (``{(policy, backfill): {metric: values}}``) to ``vals`` (``{metric:
    {(policy, backfill): values}}``) in place."""
    for k, vs in cells.items():
        for m, v in vs.items():
            vals.setdefault(m, {})[k] = v


def evaluate_test(path: Path, tr: str, metrics, models, n_seq, length, seed, draw, chunk=3,
                  parts=None):  # fmt: skip
    """The held-out values of trace ``tr``: ``(starts, {metric: {(policy, backfill): float64
    [S]}})`` of every heuristic (and its tuned priority) in the three modes (``evaluate``
    calls of up to ``chunk`` policies x one mode, so that a 200-sequence HPC2N batch fits in
    memory; one compiled program serves every policy of a mode, the policy being an argument),
    every model of ``models`` in its own backfilling, on the same starts. ``parts``: a
    :class:`Parts`; every (policy, mode) and model already stored there is read, not run."""
    from jaxsched.sim.evaluate import evaluate
    from jaxsched.workload import read_swf

    parts = parts or Parts(None)
    jobs = read_swf(path).jobs("rlscheduler")
    starts = draw(jobs.n_jobs, n_seq, length, seed)
    metrics = list(metrics)
    key = part_key(path, starts, length, metrics)
    pols = list(HEURISTICS) + ([f"tuned:{TUNED[tr]}"] if tr in TUNED else [])
    vals: dict = {}
    for b in [b for m in ROW_MODES.values() for b in m]:
        todo = []
        for p in pols:
            got = parts.get(key, tr, "held-out", p, b)
            _merge(vals, got) if got is not None else todo.append(p)
        for i in range(0, len(todo), chunk):  # bounded memory
            res = evaluate(jobs, starts, length, todo[i : i + chunk], [b], compat=True,
                           metrics=metrics)  # fmt: skip
            cells = _cells(res, metrics)
            for p, name in zip(todo[i : i + chunk], res.policies):  # in the order asked
                parts.put(key, tr, "held-out", p, b, {(name, b): cells[(name, b)]})
            _merge(vals, cells)
    _merge(vals, model_cells(jobs, starts, length, metrics, models, parts, key, tr, "held-out"))
    return starts, vals


def model_cells(jobs, starts, length, metrics, models, parts, key, tr, column) -> dict:
    """``{(model name, backfill): {metric: float64 [S]}}`` of each model in its own
    backfilling (greedy), read from ``parts`` where stored, else run and stored."""
    from jaxsched import systems
    from jaxsched.sim.evaluate import EvalResult

    out = {}
    for m in models:
        got = parts.get(key, tr, column, m.name, m.backfill)
        if got is None:
            system, pol = systems.load_model(m.path)
            rows = system.model_rows(pol, jobs, starts, length, [m.backfill], list(metrics), True,
                                     name=m.name)  # fmt: skip
            res = EvalResult(rows=rows, starts=starts, policies=[m.name],
                             backfills=[m.backfill], metrics=list(metrics), start_times=None,
                             timing={})  # fmt: skip
            got = _cells(res, list(metrics))
            parts.put(key, tr, column, m.name, m.backfill, got)
        out.update(got)
    return out


def evaluate_in_sample(path: Path, tr: str, metrics, models, n_seq, length, parts=None) -> dict:
    """The in-sample column of trace ``tr``: ``{metric: {(policy, backfill): values}}`` of the
    paper's five heuristics in its two modes and the models on ``n_seq`` sequences of the
    paper's protocol (seed 3, the first 10,000 jobs), read from or stored to ``parts``."""
    from jaxsched.sim.evaluate import evaluate
    from jaxsched.workload import read_swf

    parts = parts or Parts(None)
    jobs = read_swf(path).jobs("rlscheduler")
    starts = RT.paper_starts(jobs.n_jobs, n_seq, length, 3)
    metrics = list(metrics)
    key = part_key(path, starts, length, metrics)
    vals: dict = {}
    got = parts.get(key, tr, "in-sample", "heuristics", "both")
    if got is None:
        res = evaluate(jobs, starts, length, list(PT.POLICIES), list(PT.BACKFILLS), compat=True,
                       metrics=metrics)  # fmt: skip
        got = _cells(res, metrics)
        parts.put(key, tr, "in-sample", "heuristics", "both", got)
    _merge(vals, got)
    _merge(vals, model_cells(jobs, starts, length, metrics, models, parts, key, tr, "in-sample"))
    return vals


def cell_values(res, metric: str) -> dict:
    """``{(policy, backfill): float array over the sequences, in start order}``."""
    import numpy as np

    by = res._cells(metric)
    return {k: np.asarray([x for s in sorted(v) for x in v[s]], float) for k, v in by.items()}


def best_cell(vals: dict, modes, policies) -> tuple:
    """The (policy, backfill) cell of the lowest mean among ``policies`` x ``modes``."""
    cells = [(p, b) for p in policies for b in modes if (p, b) in vals]
    return min(cells, key=lambda k: vals[k].mean())


def paired(a, b) -> tuple:
    """Mean and standard error of the paired difference ``a - b``."""
    from jaxsched.sim.evaluate import standard_error

    d = a - b
    return float(d.mean()), standard_error(d)


def _pm(v, e, signed=False) -> str:
    from jaxsched.formatting import number, std_error

    return f"{number(v, signed=signed)} ± {std_error(e)}"


def _cell_name(k) -> str:
    p, b = k
    name = "tuned" if p.startswith("tuned:") else HEADS.get(p, p)
    return name + MODE_TAG[b]


def heuristic_rows(vals: dict, tr: str, bf: str) -> list:
    """Printed heuristic rows of one (trace, row) pair: one per backfilling order."""
    rows = []
    for b in ROW_MODES[bf]:
        cells = [_pm(vals[(p, b)].mean(), _se(vals[(p, b)])) for p in HEURISTICS]
        t = f"tuned:{TUNED.get(tr)}"  # a dash where the trace has no tuned priority
        cells.append(_pm(vals[(t, b)].mean(), _se(vals[(t, b)])) if (t, b) in vals else DASH)
        rows.append([tr, PT.BF_TITLE[bf] + MODE_TAG[b]] + cells)
    return rows


def _se(v) -> float:
    from jaxsched.sim.evaluate import standard_error

    return standard_error(v)


def model_row(vals, ins_vals, tr, bf, model, label) -> tuple[list, dict]:
    """One learned row: held-out mean, − best heuristic (paired), margin, − tuned (paired),
    and the in-sample (paper protocol) − best and margin; with its JSON record."""
    modes = ROW_MODES[bf]
    best = best_cell(vals, modes, HEURISTICS)
    js = {"trace": tr, "backfill": bf, "model": model and model.name + label, "best": list(best)}
    if model is None or (model.name, model.backfill) not in vals:
        return [tr, PT.BF_TITLE[bf], DASH, DASH, _cell_name(best), DASH, DASH, DASH, DASH,
                DASH], js  # fmt: skip
    v = vals[(model.name, model.backfill)]
    d, de = paired(v, vals[best])
    js.update(mean=float(v.mean()), se=_se(v), diff=d, diff_se=de, margin=d / vals[best].mean())
    row = [tr, PT.BF_TITLE[bf], model.name + label, _pm(v.mean(), _se(v)),
           f"{_cell_name(best)} {_pm(vals[best].mean(), _se(vals[best]))}",
           _pm(d, de, True), f"{100 * d / vals[best].mean():+.1f} %"]  # fmt: skip
    tuned = [k for k in vals if k[0].startswith("tuned:") and k[1] in modes]
    if tuned:
        tb = min(tuned, key=lambda k: vals[k].mean())
        td, tde = paired(v, vals[tb])
        js.update(tuned=list(tb), tuned_diff=td, tuned_diff_se=tde)
        row.append(f"{_pm(td, tde, True)} ({_cell_name(tb)})")
    else:
        row.append(DASH)
    if ins_vals is not None and (model.name, model.backfill) in ins_vals:
        ib = best_cell(ins_vals, (bf,), PT.POLICIES)
        iv = ins_vals[(model.name, model.backfill)]
        idf, ide = paired(iv, ins_vals[ib])
        js.update(in_sample_best=list(ib), in_sample_diff=idf, in_sample_diff_se=ide,
                  in_sample_margin=idf / ins_vals[ib].mean())  # fmt: skip
        row += [f"{_pm(idf, ide, True)} ({_cell_name(ib)})",
                f"{100 * idf / ins_vals[ib].mean():+.1f} %"]  # fmt: skip
    else:
        row += [DASH, DASH]
    return row, js


LEARNED_HEAD = ["trace", "backfilling", "model", "held out", "best heuristic (held out)",
                "learned − best", "margin", "learned − tuned", "in-sample: learned − best",
                "in-sample margin"]  # fmt: skip


def run(shared, traces, tables, models, n_seq, n_in, length, seed, folder, n_test, out=print,
        parts=None):  # fmt: skip
    """Evaluate and print the held-out tables; their JSON record. ``folder``: where the fresh
    Lublin test traces are generated (reused when there); ``parts``: a :class:`Parts`."""
    tables = [t for t in tables if set(traces) & set(RT.TABLE_TRACES[t])]
    metrics = sorted({RT.TABLE_METRIC[t] for t in tables})
    vals, ins, info, labels = {}, {}, {}, {}
    parts = parts or Parts(None)
    for tr in traces:
        need = [m for m in models if m.trace == tr and m.metric in metrics
                and m.backfill in ROW_MODES]  # fmt: skip
        path, draw = test_trace(shared, tr, folder, n_test), test_draw(tr)
        t0 = time.perf_counter()
        starts, v = evaluate_test(path, tr, metrics, need, n_seq, length, seed, draw,
                                  parts=parts)  # fmt: skip
        vals[tr] = {m: v.get(m, {}) for m in metrics}
        labels[tr] = {m.name: seen_label(m, path, draw.range) for m in need}
        t1 = time.perf_counter()
        info[tr] = {"path": path.name, "test_range": list(draw.range),
                    "starts": [int(s) for s in starts], "held_out_s": t1 - t0,
                    "models": [m.name for m in need]}  # fmt: skip
        if n_in > 0 and need:
            iv = evaluate_in_sample(RT.trace_path(shared, tr), tr, metrics, need, n_in, length,
                                    parts)  # fmt: skip
            ins[tr] = {m: iv.get(m, {}) for m in metrics}
        info[tr]["in_sample_s"] = time.perf_counter() - t1
        out(f"{tr}: {path.name}, test jobs [{draw.range[0]}, {draw.range[1]}), models "
            f"{', '.join(need_.name for need_ in need) or DASH}; held out {t1 - t0:.0f} s, "
            f"in-sample {info[tr]['in_sample_s']:.0f} s")  # fmt: skip
    out(f"\nHELD OUT: {n_seq} test-split sequences x {length} jobs per trace (seed {seed}; "
        f"SDSC-SP2/HPC2N: the last 40 % of the jobs; Lublin: a fresh {n_test:,}-job trace, "
        "generator test seed 20261128), reference semantics, greedy picks; mean ± s.e. over "
        f"the sequences. In-sample: {n_in} sequences of the paper's protocol (seed 3, first "
        "10,000 jobs = the jobs the models trained on), the paper's five heuristics. Chosen "
        "on validation: only the models' checkpoints (by their trainers, on validation "
        "sequences of their training jobs); the tuned priorities were chosen on training "
        "sequences.")  # fmt: skip
    js = {"config": {"traces": list(traces), "tables": tables, "sequences": n_seq,
                     "in_sample_sequences": n_in, "jobs": length, "seed": seed,
                     "test_jobs": n_test}, "traces": info, "tables": {}}  # fmt: skip
    for t in tables:
        metric = RT.TABLE_METRIC[t]
        hrows, lrows, jrows = [], [], []
        for bf in ROW_MODES:
            for tr in [x for x in traces if x in RT.TABLE_TRACES[t]]:
                v = vals[tr][metric]
                hrows += heuristic_rows(v, tr, bf)
                ms = [m for m in models if (m.trace, m.metric, m.backfill) == (tr, metric, bf)]
                for m in ms or [None]:
                    lab = labels[tr].get(m.name, "") if m else ""
                    iv = ins.get(tr, {}).get(metric)
                    row, j = model_row(v, iv, tr, bf, m, lab)
                    lrows.append(row)
                    jrows.append({"table": t, **j})
        heads = ["trace", "backfilling"] + [HEADS[p] for p in HEURISTICS] + ["tuned"]
        out(
            f"\nTable {t} held out — {RT.TABLE_TITLE[t]} (lower is better)\n"
            + RT.format_grid(heads, hrows)
            + "\n\n"
            + RT.format_grid(LEARNED_HEAD, lrows)
        )
        js["tables"][t] = jrows
    return js


def add_arguments(ap) -> None:
    ap.add_argument("--traces", default=",".join(PT.TRACES), help="comma list of paper traces")
    ap.add_argument("--tables", default="V,VIII", help="comma list of V, VIII (default both)")
    ap.add_argument("--sequences", type=int, default=200, metavar="K")
    ap.add_argument("--in-sample-sequences", type=int, default=100, metavar="K",
                    help="sequences of the paper-protocol column (0: none)")  # fmt: skip
    ap.add_argument("--jobs", type=int, default=1024, metavar="L")
    ap.add_argument("--seed", type=int, default=47, metavar="S")
    ap.add_argument("--test-jobs", type=int, default=100_000, metavar="N",
                    help="jobs of the fresh Lublin test traces (100,000)")  # fmt: skip
    ap.add_argument("--models", type=Path, default=None, metavar="DIR")
    ap.add_argument("--shared", type=Path, default=None, help="shared data folder")
    ap.add_argument("--json", type=Path, default=None, help="write every number to FILE")
    ap.add_argument("--parts", type=Path, default=None, metavar="DIR",
                    help="part-files of every (trace, policy, mode) computed, reused on a rerun "
                    "(default: FILE.parts beside --json; none without --json)")  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    a = ap.parse_args(argv)
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    from jaxsched.models import ROOT

    shared = a.shared or PT.default_shared()
    traces = PT._names(a.traces, PT.TRACES, "trace")
    tables = [] if a.tables.strip() == "" else PT._names(a.tables, RT.TABLE_METRIC, "table")
    from jaxsched.compile_cache import enable_compile_cache

    enable_compile_cache()  # a rerun (or the next trace's process) skips the compiles
    models = RT.find_models(a.models or ROOT)
    where = a.parts or (a.json.with_name(a.json.name + ".parts") if a.json else None)
    parts = Parts(where)
    with tempfile.TemporaryDirectory() as tmp:  # the Lublin test traces: kept with the parts
        js = run(shared, traces, tables, models, a.sequences, a.in_sample_sequences, a.jobs,
                 a.seed, parts.folder or Path(tmp), a.test_jobs, parts=parts)  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(js, indent=1, default=RT._jsonable) + "\n")
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
