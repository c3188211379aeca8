"""`jaxsched simulate`'s engines against the plain-Python oracle (issue 60 items 3-4): seconds
to schedule every job of a whole trace, side by side in one run, and each engine's time over
the oracle's; every engine's schedule must equal the oracle's.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/simulate_vs_oracle.py
        [--traces lublin-1,sdsc-sp2,lublin-500k] [--policies fcfs,sjf,f1]
        [--backfill easy,none] [--engines oracle,host,auto,jax] [--repeats 3] [--json FILE]

Columns, per trace x policy x backfilling mode (the correct mode):

* ``oracle``: :func:`jaxsched.sim.oracle.simulate` on the trace's arrays (its own Python keys).
* ``host`` / ``auto``: what ``jaxsched simulate --engine host|auto --no-progress`` runs to
  schedule (:func:`jaxsched.cli.simulate._heuristic_starts`: the names checked, the engine
  chosen, the window gathered and checked, the schedule); reading the trace, writing the
  schedule and the printed metrics are outside every column alike.
* ``jax``: ``--engine jax --no-progress``'s call (:func:`jaxsched.sim.evaluate.evaluate`, one
  compiled loop) with the in-process program caches cleared first, so each row compiles as a
  fresh ``jaxsched simulate`` process does (simulate keeps no persistent compile cache); its
  compile and run seconds are reported apart and the ratio is of their sum.

The oracle, host and auto columns are the best of ``--repeats`` calls taken in turn (oracle,
host, auto, oracle, ...), the jax column one call; an oracle call that runs past
``--oracle-limit`` seconds is stopped (the oracle scans its whole queue at every decision,
quadratic where the queue keeps growing, as FCFS without backfilling on 500,000 Lublin-1 jobs)
and its row gives upper bounds of the ratios, the engines then checked against each other. Traces: ``lublin-1`` (bundled),
``sdsc-sp2`` (SDSC-SP2-1998-4.2-cln from the shared folder: ``--shared DIR``, else
``$JAXSCHED_SHARED``, else ``../shared`` beside the checkout), ``lublin-500k`` (``jaxsched
trace generate lublin --preset lublin-1 --jobs N``, N = ``--big-jobs``, written to a temporary
folder first: about 15 s), or any SWF path. Timings on a shared machine vary from call to call;
compare rows of one run only.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, load_line, shared_dir, write_json  # noqa: E402

TRACES = {
    "lublin-1": lambda a, tmp: REPO / "traces" / "lublin-1.swf",
    "sdsc-sp2": lambda a, tmp: shared_dir(a.shared) / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz",
    "lublin-500k": lambda a, tmp: _generate(a.big_jobs, tmp),
}
ENGINES = ("oracle", "host", "auto", "jax")


def _generate(n: int, tmp: Path) -> Path:
    from jaxsched.cli import main

    out = tmp / f"lublin-1-{n}.swf"
    t0 = time.perf_counter()
    if main(["trace", "generate", "lublin", "--preset", "lublin-1", "--jobs", str(n),
             "--out", str(out)]) != 0:  # fmt: skip
        raise SystemExit(f"could not generate {n} Lublin jobs")
    print(f"(generated {n:,} Lublin-1 jobs in {time.perf_counter() - t0:.1f} s)", flush=True)
    return out


def _oracle(jobs, policy, backfill):
    from jaxsched.sim import oracle

    return oracle.simulate(
        jobs.submit, jobs.run, jobs.req_time, jobs.procs, num_nodes=jobs.num_nodes,
        procs_per_node=jobs.procs_per_node, policy=policy, backfill=backfill, compat=False,
    )  # fmt: skip


def _simulate_call(path, jobs, policy, backfill, engine):
    """The scheduling call of ``jaxsched simulate PATH --engine ENGINE --no-progress``."""
    from jaxsched.cli import build_parser
    from jaxsched.cli.simulate import _heuristic_starts

    argv = ["simulate", str(path), "--policy", policy, "--backfill", backfill,
            "--engine", engine, "--no-progress", "--out", "unused.swf"]  # fmt: skip
    args = build_parser().parse_args(argv)
    return lambda: _heuristic_starts(args, jobs, jobs.n_jobs, False)


def _jax_cold(jobs, policy, backfill):
    """(compile s, run s, starts) of ``--engine jax --no-progress``, its programs compiled anew."""
    import jax

    from jaxsched.sim import evaluate as V

    V._COMPILED.clear()
    jax.clear_caches()
    res = V.evaluate(jobs, [0], jobs.n_jobs, [policy], [backfill], compat=False, metrics=["bsld"])
    return res.timing["compile_s"], res.timing["run_s"], res.start_times[0, 0, 0]


def main(argv=None) -> int:

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="lublin-1,sdsc-sp2,lublin-500k",
                    help=f"names ({', '.join(TRACES)}) or SWF paths, comma-separated")  # fmt: skip
    ap.add_argument("--policies", default="fcfs,sjf,f1")
    ap.add_argument("--backfill", default="easy,none")
    ap.add_argument("--engines", default=",".join(ENGINES), help="a subset of " + ",".join(ENGINES))
    ap.add_argument("--repeats", type=int, default=3, help="best of N for oracle/host/auto")
    ap.add_argument("--big-jobs", type=int, default=500_000, help="jobs of lublin-500k")
    ap.add_argument("--oracle-limit", type=float, default=120.0, metavar="S",
                    help="stop an oracle call after S seconds (its row then says '> S s' and "
                    "each ratio is an upper bound)")  # fmt: skip
    ap.add_argument("--rules", default="rlscheduler", choices=("rlscheduler", "default"))
    ap.add_argument("--shared", help="the shared folder")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    engines = [e for e in args.engines.split(",") if e]
    if not set(engines) <= set(ENGINES) or "oracle" not in engines:
        ap.error(f"--engines: oracle and any of {', '.join(ENGINES[1:])}")

    import jax

    import jaxsched.sim  # noqa: F401  (x64)
    from jaxsched.workload import read_swf

    print(f"{jax.devices()[0].device_kind}; {load_line()}")
    cols = [e for e in ENGINES[1:] if e in engines]
    head = ["trace", "jobs", "policy", "backfill", "oracle s"]
    for e in cols:
        head += (
            ["jax compile + run s", "jax / oracle"] if e == "jax" else [f"{e} s", f"{e} / oracle"]
        )
    print("| " + " | ".join(head + ["same"]) + " |")
    print("|" + "---|" * (len(head) + 1), flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.traces.split(","):
            path = TRACES[name](args, Path(tmp)) if name in TRACES else Path(name)
            jobs = read_swf(path).jobs(args.rules)
            for policy in args.policies.split(","):
                for backfill in args.backfill.split(","):
                    r = _row(name, path, jobs, policy, backfill, cols, args.repeats,
                             args.oracle_limit)  # fmt: skip
                    rows.append(r)
                    lt = "" if r["oracle_done"] else "< "
                    oracle_s = (
                        f"{r['oracle_s']:.2f}" if r["oracle_done"] else f"> {args.oracle_limit:g}"
                    )
                    cells = [name, f"{jobs.n_jobs:,}", policy, backfill, oracle_s]
                    for e in cols:
                        if e == "jax":
                            cells.append(f"{r['jax_compile_s']:.2f} + {r['jax_run_s']:.2f}")
                        else:
                            cells.append(f"{r[e + '_s']:.2f}")
                        cells.append(f"{lt}{r[e + '_ratio']:.2f}")
                    print("| " + " | ".join(cells + [str(r["same"])]) + " |", flush=True)
    print(f"({load_line()})")
    write_json(args.json, rows)
    return 0 if all(r["same"] for r in rows) else 1


class _Late(Exception):
    pass


def _limited(fn, seconds: float):
    """``fn()``, or None once it has run ``seconds`` (an alarm interrupts the Python loop)."""

    def ring(signum, frame):
        raise _Late

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    except _Late:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _row(name, path, jobs, policy, backfill, cols, repeats, limit) -> dict:
    import numpy as np

    fns = {"oracle": lambda: _oracle(jobs, policy, backfill)}
    fns.update({e: _simulate_call(path, jobs, policy, backfill, e) for e in cols if e != "jax"})
    best = {e: float("inf") for e in fns}
    out = {}
    for _ in range(max(1, repeats)):  # in turn: oracle, host, auto, oracle, ...
        for e, fn in fns.items():
            if e == "oracle" and "oracle" in out and out["oracle"] is None:
                continue  # it ran out of time once
            t0 = time.perf_counter()
            got = _limited(fn, limit) if e == "oracle" else fn()
            out[e] = None if got is None else np.asarray(got, np.int64)
            best[e] = min(best[e], time.perf_counter() - t0)
    row = {"trace": name, "jobs": int(jobs.n_jobs), "policy": policy, "backfill": backfill}
    row.update({f"{e}_s": best[e] for e in fns})
    row["oracle_done"] = out["oracle"] is not None
    if "jax" in cols:
        row["jax_compile_s"], row["jax_run_s"], out["jax"] = _jax_cold(jobs, policy, backfill)
        row["jax_s"] = row["jax_compile_s"] + row["jax_run_s"]
    for e in cols:  # an upper bound where the oracle ran out of time
        row[f"{e}_ratio"] = row[f"{e}_s"] / best["oracle"]
    ref = out["oracle"] if row["oracle_done"] else out[cols[0]]  # else: the engines agree
    row["same"] = all(np.array_equal(out[e], ref) for e in cols)
    return row


if __name__ == "__main__":
    raise SystemExit(main())
