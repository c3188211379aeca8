"""Batched heuristic evaluation against the plain-Python oracle, side by side in one run (issue
60 item 4a): seconds to schedule every run of a ``jaxsched evaluate`` request, each engine's
speed over the oracle's, every schedule checked against the oracle's.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/evaluate_vs_oracle.py
        [--traces sdsc-sp2,lublin-1] [--policies f3,f4,sjf] [--backfills none,rlscheduler]
        [--length 1024] [--sequences 200] [--seed 47] [--repeats 3] [--json FILE]

Workload (defaults, the issue's setting): the distinct starts of ``--sequences`` test-split
sequences (``jaxsched evaluate --split test --seed 47``: :func:`jaxsched.workload.splits.
starts_in_range` on the chronological split's test range; 198 distinct on SDSC-SP2, 193 on
Lublin-1), ``--length`` jobs each, SchedGym semantics (``compat=True``, ``--compat
rlscheduler``), every policy without and with the reference's backfilling.

Columns, per trace (all cells of the request together) and per backfilling mode:

* ``oracle``: :func:`jaxsched.sim.oracle.simulate` run after run, one core (the baseline).
* ``host``: :func:`jaxsched.sim.single.host_starts` run after run, one core (the host engine:
  the oracle's loop on integer ranks, heaps without backfilling; a second exact baseline).
* ``jax-1``: :func:`jaxsched.sim.evaluate.evaluate`'s run seconds on ONE JAX device (its
  batch as one compiled loop; ``jax.local_device_count`` reads 1 during the call).
* ``jax-all``: the same call on every core (one JAX device per core,
  :func:`~jaxsched.sim.evaluate.use_all_cpu_cores`; one share of the batch per core).

Compile seconds of the two compiled columns are reported apart (first call); their run seconds
are the best of ``--repeats`` calls, as are the oracle's and the host's, the engines taken in
turn (oracle, host, jax-1, jax-all, oracle, ...). Ratios are oracle seconds over the
column's; ``per core`` divides the ``jax-all`` ratio by the number of cores. The machine may be
shared: compare rows of one run only (the load line is printed before and after).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, load_line, shared_dir, write_json  # noqa: E402

if __name__ == "__main__":  # one JAX device per core, before JAX starts its backend
    from jaxsched.sim.evaluate import use_all_cpu_cores

    use_all_cpu_cores()

TRACES = {
    "lublin-1": lambda a: REPO / "traces" / "lublin-1.swf",
    "sdsc-sp2": lambda a: shared_dir(a.shared) / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz",
}
COLUMNS = ("oracle", "host", "jax-1", "jax-all")


@contextlib.contextmanager
def one_device():
    """``jax.local_device_count()`` reads 1 inside (evaluate then compiles an unsharded loop,
    run on the first device)."""
    import jax

    saved = jax.local_device_count
    jax.local_device_count = lambda *a, **k: 1
    try:
        yield
    finally:
        jax.local_device_count = saved


def split_starts(jobs, length: int, sequences: int, seed: int):
    """The distinct starts of ``jaxsched evaluate --split test --sequences N --seed S``."""
    import numpy as np

    from jaxsched.workload.splits import DEFAULT_FRACTIONS, chronological_split, starts_in_range

    rng = chronological_split(jobs.n_jobs, DEFAULT_FRACTIONS).range("test")
    return np.unique(starts_in_range(rng, length, sequences, seed))


def _window(jobs, start: int, length: int):
    sl = slice(int(start), int(start) + length)
    return jobs.submit[sl], jobs.run[sl], jobs.req_time[sl], jobs.procs[sl]


def engines(jobs, starts, length, policies, backfill):
    """{column: () -> start times [runs, length]} for one backfilling mode (runs: starts x
    policies), and the compiled columns' per-call timing dicts."""
    import numpy as np

    from jaxsched.sim import oracle
    from jaxsched.sim.evaluate import evaluate
    from jaxsched.sim.single import check_names, host_starts

    wins = [_window(jobs, s, length) for s in starts]
    names = [check_names(p, backfill, True) for p in policies]
    kw = dict(num_nodes=int(jobs.num_nodes), procs_per_node=float(jobs.procs_per_node))

    def run_oracle():
        return np.array([oracle.simulate(*w, policy=p, backfill=backfill, compat=True, **kw)
                         for w in wins for p in policies])  # fmt: skip

    def run_host():
        return np.array([host_starts(jobs, s, length, n, True) for s in starts for n in names])

    timings = {}

    def compiled(col):
        def call():
            ctx = one_device() if col == "jax-1" else contextlib.nullcontext()
            with ctx:
                res = evaluate(jobs, starts, length, policies, [backfill], compat=True,
                               metrics=["bsld"])  # fmt: skip
            timings.setdefault(col, []).append(res.timing)
            return res.start_times[:, :, 0].reshape(-1, length)

        return call

    fns = {"oracle": run_oracle, "host": run_host}
    fns.update({c: compiled(c) for c in ("jax-1", "jax-all")})
    return fns, timings


def measure(jobs, starts, length, policies, backfill, repeats: int, columns) -> dict:
    """One row: best seconds per column (compiled columns: run seconds of the calls after the
    first; compile seconds of the first), the ratios, micro-steps and decisions, and whether
    every schedule is the oracle's."""
    import numpy as np

    fns, timings = engines(jobs, starts, length, policies, backfill)
    fns = {c: f for c, f in fns.items() if c in columns}
    for c in fns:  # compile apart
        if c.startswith("jax"):
            fns[c]()
    best = {c: [] for c in fns}
    got = {}
    for _ in range(max(1, repeats)):
        for c, fn in fns.items():
            t0 = time.perf_counter()
            got[c] = np.asarray(fn(), np.int64)
            wall = time.perf_counter() - t0
            best[c].append(timings[c][-1]["run_s"] if c in timings else wall)
    row = {"backfill": backfill, "runs": len(starts) * len(policies),
           "sequences": len(starts), "policies": list(policies)}  # fmt: skip
    for c in fns:
        row[f"{c}_s"] = min(best[c])
        row[f"{c}_median_s"] = float(np.median(best[c]))
        row[f"{c}_ratio"] = min(best["oracle"]) / min(best[c])
        if c in timings:
            row[f"{c}_compile_s"] = timings[c][0]["compile_s"]
            row["micro_steps"] = timings[c][0]["micro_steps"]
            row["decisions"] = timings[c][0]["decisions"]
    row["same"] = all(np.array_equal(got[c], got["oracle"]) for c in fns)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="sdsc-sp2,lublin-1",
                    help=f"names ({', '.join(TRACES)}) or SWF paths, comma-separated")  # fmt: skip
    ap.add_argument("--policies", default="f3,f4,sjf")
    ap.add_argument("--backfills", default="none,rlscheduler")
    ap.add_argument("--columns", default=",".join(COLUMNS), help="oracle and any of the others")
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--sequences", type=int, default=200)
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rules", default="rlscheduler", choices=("rlscheduler", "default"))
    ap.add_argument("--shared", help="the shared folder")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)
    cols = [c for c in a.columns.split(",") if c]
    if "oracle" not in cols or not set(cols) <= set(COLUMNS):
        ap.error(f"--columns: oracle and any of {', '.join(COLUMNS[1:])}")

    import jax

    from jaxsched.workload import read_swf

    n_dev = jax.local_device_count()
    print(f"{jax.devices()[0].device_kind} x {n_dev} devices, {os.cpu_count()} cores; "
          f"{load_line()}")  # fmt: skip
    head = ["trace", "backfill", "runs"]
    for c in cols:
        head += [f"{c} s"] + ([] if c == "oracle" else [f"oracle / {c}"])
    head += ["compile s (1 / all)", "per core (all)", "steps / decision", "same"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head), flush=True)
    rows = []
    policies = a.policies.split(",")
    for name in a.traces.split(","):
        path = TRACES[name](a) if name in TRACES else Path(name)
        jobs = read_swf(path).jobs(a.rules)
        starts = split_starts(jobs, a.length, a.sequences, a.seed)
        for bf in a.backfills.split(","):
            r = measure(jobs, starts, a.length, policies, bf, a.repeats, cols)
            r["trace"] = name
            rows.append(r)
            cells = [name, bf, str(r["runs"])]
            for c in cols:
                cells.append(f"{r[c + '_s']:.3f}")
                if c != "oracle":
                    cells.append(f"{r[c + '_ratio']:.2f}")
            comp = "/".join(f"{r[c + '_compile_s']:.2f}" for c in ("jax-1", "jax-all") if c in cols)
            pc = f"{r['jax-all_ratio'] / n_dev:.2f}" if "jax-all" in cols else "-"
            spd = f"{r['micro_steps'] / r['decisions']:.2f}" if "decisions" in r else "-"
            print("| " + " | ".join(cells + [comp or "-", pc, spd, str(r["same"])]) + " |",
                  flush=True)  # fmt: skip
    print(f"({load_line()})")
    write_json(a.json, rows)
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
