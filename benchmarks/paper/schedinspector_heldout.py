"""SchedInspector's Table 4 rows (base → inspected) and Table 5's utilisation change on the test
split (issue 47 §3), for every shipped inspector on its own trace, beside the paper's protocol
(in-sample).

    PYTHONPATH=. .venv/bin/python benchmarks/paper/schedinspector_heldout.py [--sequences 200]
        [--paper-sequences 50] [--seed 47] [--test-jobs 100000] [--models DIR] [--shared DIR]
        [--only NAME,...] [--json FILE]

Test sequences of 256 jobs (``--split test`` semantics, docs/splits.md): on SDSC-SP2 (and the
other real traces) ``--sequences`` starts by :func:`jaxsched.workload.splits.starts_in_range`
(``default_rng(seed)``) in the last 40 % of the jobs; on Lublin (= Lublin-1) over a fresh
``--test-jobs``-job trace of the lublin-1 preset with its named test seed (20261128). Base alone
and base + inspector (greedy, evaluation mask on) on the same sequences, in the model's own base
scheduler, metric and backfilling: both means ± s.e., the paired difference inspected − base
± s.e., the improvement, and the utilisation base → inspected with its paired change.

Which inspectors saw test jobs: training drew from the first 10,000 jobs, but the validation
sequences that chose each checkpoint were drawn over the whole shipped trace (docs/systems/
schedinspector.md; ``run.json`` has no ``jobs_seen``, so :func:`~jaxsched.workload.splits.
jobs_seen_of` infers ``[0, end)``). The SDSC-SP2 inspectors were therefore chosen on jobs of the
SDSC-SP2 test split, and their rows are labelled "(chosen on test jobs)"; the Lublin
inspectors' test trace is a fresh one, held out from training and choice alike.

"Paper protocol" column: ``--paper-sequences`` starts drawn as the reference's test script
draws them (seed 1, over the whole shipped trace; in-sample), greedy, the improvement.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, use  # noqa: E402

use("paper")

import schedinspector_tables as ST  # noqa: E402

LENGTH = ST.LENGTH
#: the generator preset of a synthetic SchedInspector trace
PRESETS = {"Lublin": "lublin-1"}


def test_trace(shared: Path, name: str, folder: Path, n_jobs: int) -> Path:
    """The trace whose test split is evaluated: the real trace, or the fresh Lublin trace
    (preset lublin-1, its named test seed, ``n_jobs`` jobs, generated into ``folder``)."""
    if name not in PRESETS:
        return ST.trace_path(shared, name)
    from jaxsched.workload import lublin
    from jaxsched.workload.splits import seed_split

    (seed,) = seed_split(PRESETS[name]).test
    path = folder / f"{PRESETS[name]}-seed{seed}-{n_jobs}.swf"
    if not path.is_file():
        lublin.generate_cli(PRESETS[name], None, True, n_jobs, seed, 0, path)
    return path


def test_range(name: str, n_jobs: int) -> tuple:
    """The job range of the test split: all of a fresh Lublin trace, else the last 40 %."""
    from jaxsched.workload.splits import chronological_split

    return (0, n_jobs) if name in PRESETS else tuple(chronological_split(n_jobs).test)


def seen_label(run_json: dict, path: Path, job_range) -> str:
    """The label " (chosen on test jobs)" when the run's recorded or inferred ``jobs_seen`` overlaps
    ``job_range`` of the trace ``path`` (check_unseen with --allow-seen), else ""."""
    from jaxsched.workload.splits import check_unseen

    hit = check_unseen(run_json, "inspector", path, job_range, True)
    return " (chosen on test jobs)" if hit else ""


def inspected(r: dict, metric: str) -> dict:
    """Base vs inspected (greedy) from an :func:`~jaxsched.systems.schedinspector.evaluate.
    inspect_runs` result ``r``: means ± s.e., the paired difference, the utilisation change and
    the rejection ratio."""
    from jaxsched.systems.schedinspector.evaluate import mean_se, rejection_ratio

    b, i = (np.asarray(r[k][metric], np.float64) for k in ("base", "inspected"))
    ub, ui = (np.asarray(r[k]["util"], np.float64) for k in ("base", "inspected"))
    return {"base": mean_se(b), "inspected": mean_se(i), "difference": mean_se(i - b),
            "improvement": float((b.mean() - i.mean()) / b.mean()) if b.mean() else None,
            "util_base": mean_se(ub), "util_inspected": mean_se(ui),
            "util_difference": mean_se(ui - ub), "rejection": rejection_ratio(r),
            "sequences": len(b)}  # fmt: skip


def versus(model, env, jobs, wait, starts, names, runs=None) -> dict:
    """The greedy inspector against each heuristic of ``names`` on ``starts``
    (:func:`jaxsched.systems.schedinspector.evaluate.versus_heuristics`; ``runs``: its
    inspected runs, when computed already)."""
    from jaxsched.systems.schedinspector.evaluate import versus_heuristics

    return versus_heuristics(model, env, jobs, wait, starts, names, LENGTH, runs=runs)


def model_rows(name, mpath, shared, folder, n_seq, n_paper, seed, n_test,
               versus_names=()) -> dict | None:  # fmt: skip
    """Held out and paper-protocol figures of one inspector on its own trace (None when its
    trace is not one of Table 4's)."""
    from jaxsched.systems.schedinspector.config import load_jobs, make_env
    from jaxsched.systems.schedinspector.evaluate import inspect_runs, load_inspector, test_starts
    from jaxsched.workload.splits import starts_in_range

    model = load_inspector(mpath)
    tr = ST.paper_trace(model.run.trace)
    if tr is None:
        return None
    t0 = time.perf_counter()
    path = test_trace(shared, tr, folder, n_test)
    jobs, wait = load_jobs(str(path), model.run.mode)
    rng = test_range(tr, jobs.n_jobs)
    env = make_env(model.run, jobs, wait, length=LENGTH, evaluation=True)
    starts = starts_in_range(rng, LENGTH, n_seq, seed)
    runs = inspect_runs(env, model.params, starts)
    out = {"model": name, "trace": tr, "base": model.run.base, "metric": model.run.metric,
           "backfill": model.run.backfill, "test_trace": path.name, "test_range": list(rng),
           "label": seen_label(json.loads((Path(mpath) / "run.json").read_text()), path, rng),
           "held_out": inspected(runs, model.run.metric)}  # fmt: skip
    if versus_names:
        out["versus"] = versus(model, env, jobs, wait, starts, versus_names, runs)
    if n_paper > 0:
        own = ST.trace_path(shared, tr)
        jobs, wait = load_jobs(str(own), model.run.mode)
        env = make_env(model.run, jobs, wait, length=LENGTH, evaluation=True)
        ps = test_starts(jobs.n_jobs, LENGTH, n_paper, 1)
        out["paper"] = inspected(inspect_runs(env, model.params, ps), model.run.metric)
    out["seconds"] = time.perf_counter() - t0
    return out


def _pm(t) -> str:
    return f"{t[0]:.2f} ± {t[1]:.2f}"


def row_text(r: dict) -> list:
    h, p = r["held_out"], r.get("paper")
    imp = lambda x: "—" if x["improvement"] is None else f"{100 * x['improvement']:+.1f} %"
    return [
        r["model"] + r["label"], r["trace"], f"{r['base']}/{r['metric']}/{r['backfill']}",
        _pm(h["base"]), _pm(h["inspected"]), f"{h['difference'][0]:+.2f} ± {h['difference'][1]:.2f}",
        imp(h),
        f"{100 * h['util_base'][0]:.2f} → {100 * h['util_inspected'][0]:.2f} "
        f"({100 * h['util_difference'][0]:+.2f} ± {100 * h['util_difference'][1]:.2f})",
        f"{h['rejection']:.3f}",
        "—" if p is None else f"{p['base'][0]:.2f} → {p['inspected'][0]:.2f} ({imp(p)})",
    ]  # fmt: skip


HEAD = ["model", "trace", "base/metric/bf", "base (held out)", "inspected", "inspected − base",
        "improvement", "util % base → inspected (Δ ± s.e.)", "rejection",
        "paper protocol (in-sample)"]  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--models", default=str(REPO / "jaxsched" / "models"))
    ap.add_argument("--only", default=None, help="comma list of model names")
    ap.add_argument("--sequences", type=int, default=200)
    ap.add_argument("--paper-sequences", type=int, default=50)
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--test-jobs", type=int, default=100_000)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--versus",
        default=None,
        metavar="P,...",
        help="also pair each inspector with these heuristics on its test sequences (e.g. "
        "sjf,saf,f1,f2,f3,f4,tuned:tuned-sdsc-easy): SchedInspector's base rules run in its "
        "own environment, the others through jaxsched.sim.evaluate; NAME@BACKFILL runs NAME "
        "with that backfilling instead of the model's (e.g. f4@rlscheduler-sjbf)",
    )
    a = ap.parse_args(argv)
    names = tuple(a.versus.split(",")) if a.versus else ()
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)

    models = ST.find_models(Path(a.models))
    if a.only:  # in the order given
        keep = a.only.split(",")
        models = sorted([m for m in models if m[0] in keep], key=lambda m: keep.index(m[0]))
    rows, js = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, mpath in models:
            r = model_rows(name, mpath, Path(a.shared), Path(tmp), a.sequences,
                           a.paper_sequences, a.seed, a.test_jobs, names)  # fmt: skip
            if r is None:
                continue
            rows.append(row_text(r))
            js.append(r)
            print(f"{name}: {r['test_trace']} jobs {r['test_range']}, {r['seconds']:.0f} s: "
                  + " | ".join(rows[-1]), flush=True)  # fmt: skip
            if a.json:
                Path(a.json).write_text(json.dumps(js, indent=1))
    print(f"\nSchedInspector held out: {a.sequences} test-split sequences x {LENGTH} jobs "
          f"(seed {a.seed}; SDSC-SP2: the last 40 % of the jobs; Lublin: a fresh "
          f"{a.test_jobs:,}-job lublin-1 trace, test seed 20261128), greedy, mean ± s.e.; "
          f"paper protocol: {a.paper_sequences} sequences, seed 1, whole shipped trace. "
          "Chosen on validation: each model's checkpoint (validation drawn over the whole "
          "shipped trace, hence the SDSC-SP2 label).")  # fmt: skip
    import rlscheduler_tables as RT

    print(RT.format_grid(HEAD, rows))
    for r in js:
        if r.get("versus"):
            print(f"\n{r['model']}{r['label']}: inspected − heuristic on the same "
                  f"{a.sequences} test sequences ({r['metric']}, paired):")  # fmt: skip
            for n, v in r["versus"].items():
                print(f"  {n:24s} {_pm(v['heuristic']):>18s}   {v['difference'][0]:+.2f} ± "
                      f"{v['difference'][1]:.2f} ({100 * v['margin']:+.1f} %)  [{v['route']}]")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
