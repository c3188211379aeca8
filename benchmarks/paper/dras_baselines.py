"""DRAS's §8 baselines through the plain-Python CQSim oracle on a trace's test period (§9, §10),
and which PWA trace has the widest jobs relative to its machine (issue 17 §4).

    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras_baselines.py                  # SDSC-SP2
    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras_baselines.py --jobs 5000      # a prefix
    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras_baselines.py --widths         # trace widths
    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras_baselines.py --plots DIR      # + Fig. 6/7/9

Loading follows CQSim (reference README "How the job list is loaded"): fields 1, 2, 4, 8, 9,
the run time cut to the estimate, jobs with id/submit/run/estimate/size <= 0 dropped, N = the
header's MaxProcs; jobs wider than N are dropped here (CQSim keeps them but could never place
them).  Split (§9): months of 30 days from the first submit, months 1–2 training, month 3
validation, the rest test; the test period is one continuous simulation from an empty machine
with times shifted to its first submit (``--jobs K`` keeps its first K jobs).  Methods:
FCFS + EASY, BinPacking, Random (seed 0), Optimization (capability values).  The job loader
here is a stand-in for the engine's CQSim loader (``jaxsched/workload/cqsim.py``, H1).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import shared_dir  # noqa: E402
from jaxsched.policies.dras_baselines import BASELINES, baseline_kwargs
from jaxsched.sim.oracle_cqsim import simulate_cqsim
from jaxsched.systems.dras.report import format_table, method_table
from jaxsched.workload.swf import read_swf

MONTH = 30 * 86400
WIDTH_TRACES = (
    "SDSC-SP2-1998-4.2-cln", "CTC-SP2-1996-3.1-cln", "KTH-SP2-1996-2.1-cln",
    "LANL-CM5-1994-4.1-cln", "SDSC-BLUE-2000-4.2-cln", "RICC-2010-2", "CEA-Curie-2011-2.1-cln",
    "HPC2N-2002-2.2-cln",
)  # fmt: skip


def load_cqsim(path) -> dict:
    """The CQSim job list of a trace: int arrays submit, nodes, run, req_time and N."""
    tr = read_swf(path)
    run = np.where(tr.run > tr.req_time, tr.req_time, tr.run)
    keep = (tr.job_id > 0) & (tr.submit >= 0) & (run > 0) & (tr.req_time > 0) & (tr.req_procs > 0)
    N = int(tr.max_procs)
    return dict(submit=tr.submit[keep], nodes=tr.req_procs[keep], run=run[keep],
                req_time=tr.req_time[keep], N=N)  # fmt: skip


def split_test_period(jobs: dict, limit: int | None) -> tuple[dict, int]:
    """The jobs submitted from month 4 on (at most ``limit``), times shifted to start at 0;
    and the number of jobs wider than N dropped."""
    s = jobs["submit"]
    m = (s - s[0]) >= 3 * MONTH
    wide = m & (jobs["nodes"] > jobs["N"])
    m &= ~wide
    out = {k: jobs[k][m] for k in ("submit", "nodes", "run", "req_time")}
    if limit:
        out = {k: v[:limit] for k, v in out.items()}
    out["submit"] = out["submit"] - out["submit"][0]
    return out, int(wide.sum())


def run_baselines(test: dict, N: int) -> tuple[dict, dict]:
    schedules, seconds = {}, {}
    for name in BASELINES:
        t0 = time.perf_counter()
        res = simulate_cqsim(test["submit"], test["nodes"], test["run"], test["req_time"],
                             num_nodes=N, **baseline_kwargs(name, seed=0))  # fmt: skip
        seconds[name] = time.perf_counter() - t0
        schedules[name] = dict(test, start=res.start, cls=res.cls)
    return schedules, seconds


def widths(shared: Path) -> None:
    """Per trace: N, share of jobs and of node-seconds above 20 % of N, mean and p99 of n/N."""
    print(f"{'trace':<26}{'N':>7}{'jobs':>9}{'>20% jobs':>11}{'>20% work':>11}{'mean n/N':>10}"
          f"{'p99 n/N':>9}")  # fmt: skip
    for name in WIDTH_TRACES:
        tr = read_swf(shared / "traces" / f"{name}.swf.gz")
        n = np.where(tr.req_procs > 0, tr.req_procs, tr.alloc_procs).astype(np.float64)
        ok = (n > 0) & (tr.run > 0)
        n, r, N = n[ok], tr.run[ok].astype(np.float64), float(tr.num_procs)
        big = n > 0.2 * N
        print(f"{name:<26}{int(N):>7}{n.size:>9}{100 * big.mean():>10.2f}%"
              f"{100 * (n * r)[big].sum() / (n * r).sum():>10.2f}%{(n / N).mean():>10.4f}"
              f"{np.percentile(n / N, 99):>9.4f}")  # fmt: skip


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", default="SDSC-SP2-1998-4.2-cln")
    ap.add_argument("--jobs", type=int, default=None, help="first K jobs of the test period")
    ap.add_argument("--shared", default=None)
    ap.add_argument("--widths", action="store_true", help="only the trace-width table")
    ap.add_argument("--plots", default=None, help="write Fig. 6/7/9 PNGs into this folder")
    a = ap.parse_args(argv)
    shared = shared_dir(a.shared)
    if a.widths:
        widths(shared)
        return
    jobs = load_cqsim(shared / "traces" / f"{a.trace}.swf.gz")
    test, wide = split_test_period(jobs, a.jobs)
    N = jobs["N"]
    print(f"{a.trace}: {jobs['submit'].size} loaded jobs, N = {N}; test period "
          f"{test['submit'].size} jobs ({wide} wider than N dropped)")  # fmt: skip
    schedules, seconds = run_baselines(test, N)
    table = method_table(schedules, N=N)
    print(format_table(table))
    base = table["fcfs"]["max_wait"]
    print("max wait / FCFS+EASY's:", ", ".join(
        f"{m} {table[m]['max_wait'] / 3600:.1f} h ({table[m]['max_wait'] / base:.2f}x)"
        for m in table))  # fmt: skip
    print("oracle seconds:", ", ".join(f"{m} {s:.1f}" for m, s in seconds.items()))
    if a.plots:
        from jaxsched.systems.dras import plot

        out = Path(a.plots)
        out.mkdir(parents=True, exist_ok=True)
        for f in (plot.plot_kiviat(table, out / "kiviat.png"),
                  plot.plot_wait_vs_size(schedules, out / "wait_vs_size.png"),
                  plot.plot_weekly(schedules, out / "weekly.png")):  # fmt: skip
            print("wrote", f)


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    main()
