"""Throughput of the batched JAX engine against the plain-Python oracle, with a correctness check.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/throughput.py [--batch-multiplier 1,10] [--gpu-scale]
        [--json FILE] [--trace PATH] [--seed 1] [--sequences 10] [--length 1024]
        [--policies fcfs,wfp3,unicep,sjf,f1] [--backfills none,rlscheduler] [--reference DIR]

Workload (defaults): the 10 paper sequences of 1024 jobs of Lublin-1 (``traces/lublin-1.swf``,
start indices ``reference_starts(1, 10, 1024, 10000)``, i.e. Tables V/VI), the five paper
heuristics, without and with the reference's backfilling, ``compat=True`` (SchedGym semantics):
5 × 2 × 10 = 100 simulation runs.

(a) JAX: ONE ``jaxsched.sim.evaluate.evaluate`` call over all 100 runs, done ``--jax-runs`` (3)
    times. Throughput = the best ``timing["run_s"]`` of the calls after the first; compile
    time = the FIRST call's ``timing["compile_s"]`` (later calls reuse the compiled functions).
    ``--batch-multiplier K[,K...]`` replicates the sequence list K times (K × 100 runs in one
    call) to show how the throughput scales with the batch size; ``--gpu-scale`` = ``1,10,100``.
(b) Oracle: ``jaxsched.sim.oracle.simulate_detailed`` in a loop over the same 100 runs, each run
    timed on its own (best of ``--oracle-repeat``).

Decisions: a decision is one committed heuristic pick (jobs started by a backfill pass are not
decisions); without backfilling every job is one decision. Per-cell counts come from the
oracle's ``SimResult.decisions``; the JAX side only reports a batch total
(``timing["decisions"]``), which is checked against the oracle's total. The JAX engine's time is
not split per cell (one batched call), so JAX decisions/s is the batch aggregate
(total decisions / run_s) and the per-cell ratio is that aggregate over the oracle's decisions/s
in the cell; the geometric mean is taken over the cells. The aggregate ratio (oracle total
seconds / JAX run_s) is printed too.

Reference figures: the issue's timings of the original reference simulator (RLScheduler's
SchedGym) on this 2-core machine, no backfilling, ms per 1024-job Lublin-1 sequence. They are
converted to decisions/s with the decisions counted in that cell (1024 per sequence without
backfilling), and compared with the JAX aggregate decisions/s.

Devices: run as a script, the benchmark exposes every CPU core as a JAX device
(``use_all_cpu_cores``) so that ``evaluate`` runs one share of each batch per core (on the
2-core machine ~1.7x faster with backfilling, ~1.3x without, than one device driving both
cores); ``--one-device`` turns that off. The device list is printed.

``--reference DIR`` (a local clone of the paper's repository, DIR-LAB/deep-batch-scheduler;
never part of jaxsched): the reference simulator's own heuristic loop is timed on the same
runs in this process (:mod:`benchmarks.reference.reference_sim`), every cell with and without
backfilling, and its average bounded slowdown of every sequence is checked against ours.

Correctness: the start time of every job of every run (and every replica) must be identical in
JAX and in the oracle; the script prints OK or the number of differing runs (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks import common  # noqa: E402
from benchmarks.common import REPO  # noqa: E402

if __name__ == "__main__" and "--one-device" not in sys.argv:
    # one JAX device per CPU core (before JAX starts its backend): evaluate() then runs one
    # share of every batch per core (see jaxsched.sim.evaluate.use_all_cpu_cores)
    from jaxsched.sim.evaluate import use_all_cpu_cores  # noqa: E402

    use_all_cpu_cores()


from jaxsched.sim import oracle  # noqa: E402
from jaxsched.sim.evaluate import evaluate  # noqa: E402
from jaxsched.workload import read_swf, reference_starts  # noqa: E402

DEFAULT_TRACE = REPO / "traces" / "lublin-1.swf"
PAPER_POLICIES = ("fcfs", "wfp3", "unicep", "sjf", "f1")
BACKFILLS = ("none", "rlscheduler")
#: the issue's figures for the original reference simulator on this 2-core machine:
#: no backfilling, milliseconds per 1024-job Lublin-1 sequence
REFERENCE_MS_NO_BACKFILL = {"sjf": 11.0, "fcfs": 16.0, "f1": 44.0, "unicep": 90.0, "wfp3": 200.0}
REFERENCE_LENGTH = 1024


def geomean(xs) -> float:
    xs = [float(x) for x in xs]
    if not xs or any(not x > 0 for x in xs):
        return float("nan")
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def code_version() -> str:
    """``git describe`` of the checkout, ``+dirty`` if jaxsched/ has uncommitted changes."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            text=True,
            capture_output=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "jaxsched"],
            cwd=REPO,
            text=True,
            capture_output=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + ("+dirty" if dirty else "")


def machine_info() -> dict:
    """:func:`benchmarks.common.machine_info` with the CPU model and jaxsched's commit."""
    return {**common.machine_info(), "cpu_model": cpu_model(), "jaxsched_commit": code_version()}


def load(trace: Path, seed: int, n_seq: int, length: int):
    jobs = read_swf(trace).jobs("rlscheduler")
    starts = reference_starts(seed, n_seq, length, min(10000, jobs.n_jobs))
    return jobs, [int(a) for a in starts]


# ----------------------------------------------------------------------------------------------
# JAX side
# ----------------------------------------------------------------------------------------------
def run_jax(jobs, starts, length, policies, backfills, multiplier: int, runs: int) -> dict:
    """``runs`` identical ``evaluate`` calls on the start list replicated ``multiplier`` times."""
    rep = list(starts) * multiplier
    calls = []
    res = None
    for _ in range(runs):
        t0 = time.perf_counter()
        res = evaluate(jobs, rep, length, policies, backfills, compat=True, metrics=("bsld",))
        wall = time.perf_counter() - t0
        calls.append(
            {"compile_s": res.timing["compile_s"], "run_s": res.timing["run_s"], "wall_s": wall}
        )
    tm = res.timing
    # the first call compiles (timed separately); the run time is the best of the others
    run_s = min(c["run_s"] for c in (calls[1:] or calls))
    return {
        "multiplier": multiplier,
        "runs": tm["runs"],
        "sequences": len(rep),
        "compile_s_first_call": calls[0]["compile_s"],
        "run_s": run_s,
        "calls": calls,
        "decisions": tm["decisions"],
        "micro_steps": tm["micro_steps"],
        "capacities": tm["capacities"],
        "decisions_per_s": tm["decisions"] / run_s if run_s > 0 else float("nan"),
        "ms_per_sequence_run": 1e3 * run_s / tm["runs"],
        "start_times": res.start_times,  # [S*K, P, B, L]; dropped from the JSON, as is
        # bsld: [S*K, P, B] evaluate()'s value of every run (rows in (sequence, policy, backfill) order)
        "bsld": np.array([r["value"] for r in res.rows]).reshape(res.start_times.shape[:3]),
    }


# ----------------------------------------------------------------------------------------------
# Oracle side
# ----------------------------------------------------------------------------------------------
def run_oracle(jobs, starts, length, policies, backfills, repeat: int = 1) -> dict:
    """Every (sequence, policy, backfill) run in plain Python, timed one by one."""
    N, ppn = int(jobs.num_nodes), float(jobs.procs_per_node)
    cols = (jobs.submit, jobs.run, jobs.req_time, jobs.procs)
    windows = [tuple(c[a : a + length].tolist() for c in cols) for a in starts]
    S, P, B = len(starts), len(policies), len(backfills)
    start_times = np.full((S, P, B, length), -1, np.int64)
    cells = {}
    for pi, pol in enumerate(policies):
        for bi, bf in enumerate(backfills):
            secs, decs, bfd = [], [], []
            for si, w in enumerate(windows):
                best = float("inf")
                for _ in range(max(1, repeat)):
                    t0 = time.perf_counter()
                    r = oracle.simulate_detailed(
                        *w, num_nodes=N, procs_per_node=ppn, policy=pol, backfill=bf, compat=True
                    )
                    best = min(best, time.perf_counter() - t0)
                secs.append(best)
                decs.append(r.decisions)
                bfd.append(sum(r.backfilled))
                start_times[si, pi, bi] = r.starts
            tot = sum(secs)
            cells[(pol, bf)] = {
                "policy": pol,
                "backfill": bf,
                "seconds": tot,
                "ms_per_sequence": 1e3 * tot / S,
                "decisions": sum(decs),
                "decisions_per_sequence": sum(decs) / S,
                "backfilled": sum(bfd),
                "decisions_per_s": sum(decs) / tot if tot > 0 else float("nan"),
            }
    return {"cells": cells, "start_times": start_times}


def time_reference_cells(
    reference_dir, trace, starts, length, policies, backfills, groups, cells, jax_bsld, out=print
) -> dict:
    """Time the original reference simulator (a local checkout, see
    :mod:`benchmarks.reference.reference_sim`) on the same runs, print the JAX/reference ratios of every
    cell, and check its average bounded slowdown of every run against ``jax_bsld`` (float
    ``[S, P, B]``, evaluate()'s) to rel. 1e-9."""
    from benchmarks.reference.reference_sim import SCORE_FN, time_reference

    pols = [p for p in policies if p in SCORE_FN]
    bfs = [b for b in backfills if b in ("none", "rlscheduler")]
    rows = time_reference(reference_dir, trace, starts, length, pols, bfs)
    out("")
    out(
        f"vs the original reference simulator, timed in this run ({reference_dir}: its "
        f"HPCEnv.schedule_curr_sequence_reset, one run at a time; JAX ms = the backfill "
        f"group's batch aggregate):"
    )
    h = (
        f"{'policy':8s} {'backfill':12s} {'ref ms/seq':>10s} {'oracle ms':>10s} "
        f"{'JAX ms':>8s} {'JAX/ref':>8s} {'ref bsld':>12s} {'bsld':>6s}"
    )
    out(h)
    out("-" * len(h))
    bad = 0
    for r in rows:
        pi, bi = policies.index(r["policy"]), backfills.index(r["backfill"])
        ours = [float(x) for x in jax_bsld[: len(starts), pi, bi]]
        ok = all(abs(x - y) <= 1e-9 * max(1.0, abs(y)) for x, y in zip(r["values"], ours))
        bad += 0 if ok else 1
        jms = groups[r["backfill"]]["ms_per_sequence_run"]
        r.update(
            {
                "jax_ms_per_sequence": jms,
                "ratio_jax": r["ms_per_sequence"] / jms,
                "oracle_ms_per_sequence": cells[(r["policy"], r["backfill"])]["ms_per_sequence"],
                "bsld_reference": float(np.mean(r["values"])),
                "bsld_jax": float(np.mean(ours)),
                "bsld_agrees": ok,
            }
        )
        out(
            f"{r['policy']:8s} {r['backfill']:12s} {r['ms_per_sequence']:10.1f} "
            f"{r['oracle_ms_per_sequence']:10.1f} {jms:8.2f} {r['ratio_jax']:8.2f} "
            f"{r['bsld_reference']:12.4f} {'same' if ok else 'DIFF':>6s}"
        )
    out("-" * len(h))
    gm = geomean(r["ratio_jax"] for r in rows)
    by_bf = {b: geomean(r["ratio_jax"] for r in rows if r["backfill"] == b) for b in bfs}
    out(
        f"geometric mean over the {len(rows)} cells: JAX/reference {gm:.2f} ("
        + ", ".join(f"backfill {b}: {v:.2f}" for b, v in by_bf.items())
        + "); average "
        "bounded slowdown of every sequence "
        + ("identical to the reference's (rel. 1e-9)" if not bad else f"DIFFERS in {bad} cells")
    )
    return {
        "dir": str(reference_dir),
        "cells": rows,
        "geomean_ratio_jax": gm,
        "geomean_ratio_jax_by_backfill": by_bf,
        "metric_mismatches": bad,
    }


def count_mismatches(jax_st: np.ndarray, oracle_st: np.ndarray) -> tuple[int, int]:
    """(runs whose schedule differs, runs compared); JAX rows may be K replicas of the oracle's."""
    S = oracle_st.shape[0]
    K = jax_st.shape[0] // S
    ref = np.tile(oracle_st, (K, 1, 1, 1))
    if jax_st.shape != ref.shape:
        raise ValueError(f"shape mismatch: JAX {jax_st.shape} vs oracle {ref.shape}")
    bad = (jax_st != ref).any(axis=-1)
    return int(bad.sum()), int(bad.size)


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------
def _multipliers(args) -> list[int]:
    ks = [1]
    spec = "1,10,100" if args.gpu_scale else (args.batch_multiplier or "1")
    for tok in str(spec).split(","):
        if tok.strip():
            k = int(tok)
            if k < 1:
                raise SystemExit("--batch-multiplier values must be >= 1")
            if k not in ks:
                ks.append(k)
    return ks


def benchmark(
    trace=DEFAULT_TRACE,
    seed=1,
    n_seq=10,
    length=1024,
    policies=PAPER_POLICIES,
    backfills=BACKFILLS,
    multipliers=(1,),
    jax_runs=3,
    oracle_repeat=1,
    reference_dir=None,
    out=print,
) -> dict:
    """Run both sides, print the report through ``out`` and return every number."""
    policies = [p.strip().lower() for p in policies]
    backfills = [b.strip().lower() for b in backfills]
    info = machine_info()
    jobs, starts = load(Path(trace), seed, n_seq, length)
    n_runs = len(starts) * len(policies) * len(backfills)
    out(
        f"jaxsched throughput: {Path(trace).name}, {len(starts)} sequences x {length} jobs "
        f"(reference_starts seed {seed}: {starts}), policies {', '.join(policies)}, "
        f"backfill {', '.join(backfills)}, compat=True -> {n_runs} runs"
    )
    out(
        f"device: jax.devices() = {info['jax_devices']} (backend {info['jax_backend']}, "
        f"jax {info['jax_version']}); CPUs: os.cpu_count() = {info['cpu_count']}, usable "
        f"{info['cpus_usable']} ({info['cpu_model']}); Python {info['python']}; load average "
        f"at start {info['loadavg_start'][0]:.2f} (above the CPU count: other processes "
        f"compete and skew the timings); jaxsched at {info['jaxsched_commit']}"
    )

    # ---- JAX
    jx = {}
    for k in multipliers:
        jx[k] = run_jax(jobs, starts, length, policies, backfills, k, jax_runs)
    base = jx[multipliers[0]]

    # ---- oracle
    t0 = time.perf_counter()
    orc = run_oracle(jobs, starts, length, policies, backfills, oracle_repeat)
    oracle_wall = time.perf_counter() - t0
    cells = orc["cells"]
    o_dec = sum(c["decisions"] for c in cells.values())
    o_sec = sum(c["seconds"] for c in cells.values())
    o_dps = o_dec / o_sec

    # ---- correctness
    correctness = {}
    for k, r in jx.items():
        bad, total = count_mismatches(r["start_times"], orc["start_times"])
        correctness[k] = {
            "mismatched_runs": bad,
            "runs": total,
            "decisions_agree": r["decisions"] == k * o_dec,
        }
    mismatches = sum(c["mismatched_runs"] for c in correctness.values())

    # ---- JAX per backfill setting (the five policies batched, timed on their own)
    groups = {}
    for bf in backfills:
        groups[bf] = run_jax(jobs, starts, length, policies, [bf], 1, jax_runs)
        groups[bf].pop("start_times")
        groups[bf].pop("bsld")

    # ---- per-cell table (throughput in sequences: one run = one sequence under one policy)
    j_dps = base["decisions_per_s"]
    out("")
    out(
        f"JAX: one batched evaluate() call over the {base['runs']} runs, called {jax_runs}x; "
        f"compile time (1st call, all capacity buckets) {base['compile_s_first_call']:.2f} s; "
        f"run time (best of calls 2..{jax_runs}) {base['run_s']:.3f} s = "
        f"{base['ms_per_sequence_run']:.2f} ms per run (batch aggregate); "
        f"{base['decisions']} decisions, {base['micro_steps']} micro-steps; capacity passes "
        + ", ".join(f"Q{c['queue']}/R{c['running']}:{c['runs']}" for c in base["capacities"])
    )
    for bf, g in groups.items():
        out(
            f"JAX, backfill {bf} alone ({g['runs']} runs): {g['run_s']:.3f} s = "
            f"{g['ms_per_sequence_run']:.2f} ms per run; passes "
            + ", ".join(f"Q{c['queue']}/R{c['running']}:{c['runs']}" for c in g["capacities"])
        )
    out(
        f"oracle: plain-Python loop over the same {n_runs} runs, {o_sec:.2f} s "
        f"(best of {oracle_repeat} per run), {o_dec} decisions"
    )
    out(
        "throughput = sequences (1024-job runs) per second; JAX time per run = its backfill "
        "group's batched run_s / runs (the five policies run together);"
    )
    out("ratio = oracle ms per run / JAX ms per run (> 1: JAX faster).")
    out("")
    hdr = (
        f"{'policy':8s} {'backfill':12s} {'oracle ms/seq':>14s} {'JAX ms/seq':>11s} "
        f"{'ratio':>8s} {'decisions/seq':>14s}"
    )
    out(hdr)
    out("-" * len(hdr))
    rows = []
    for pol in policies:
        for bf in backfills:
            c = cells[(pol, bf)]
            jms = groups[bf]["ms_per_sequence_run"]
            ratio = c["ms_per_sequence"] / jms
            rows.append({**c, "jax_ms_per_sequence": jms, "ratio": ratio})
            out(
                f"{pol:8s} {bf:12s} {c['ms_per_sequence']:14.1f} {jms:11.2f} {ratio:8.2f} "
                f"{c['decisions_per_sequence']:14.1f}"
            )
    gm = geomean(r["ratio"] for r in rows)
    out("-" * len(hdr))
    out(f"geometric mean of the {len(rows)} per-cell ratios (JAX / oracle): {gm:.3f}")
    out(
        f"aggregate: oracle {o_sec:.2f} s vs JAX {base['run_s']:.3f} s for all {n_runs} runs "
        f"in one call: ratio {o_sec / base['run_s']:.3f}"
    )

    # ---- against the issue's reference figures
    ref_rows = []
    out("")
    if length == REFERENCE_LENGTH and "none" in backfills:
        out(
            "vs the original reference simulator (issue's figures, this 2-core machine, no "
            "backfilling, ms per 1024-job Lublin-1 sequence):"
        )
        h2 = (
            f"{'policy':8s} {'ref ms/seq':>10s} {'oracle ms':>10s} {'JAX ms':>8s} "
            f"{'JAX/ref':>8s} {'oracle/ref':>10s}"
        )
        out(h2)
        out("-" * len(h2))
        jms = groups["none"]["ms_per_sequence_run"]
        for pol in policies:
            if pol not in REFERENCE_MS_NO_BACKFILL:
                continue
            c = cells[(pol, "none")]
            ms = REFERENCE_MS_NO_BACKFILL[pol]
            ref_rows.append(
                {
                    "policy": pol,
                    "reference_ms_per_sequence": ms,
                    "jax_ms_per_sequence": jms,
                    "ratio_jax": ms / jms,
                    "ratio_oracle": ms / c["ms_per_sequence"],
                }
            )
            out(
                f"{pol:8s} {ms:10.0f} {c['ms_per_sequence']:10.1f} {jms:8.2f} {ms / jms:8.2f} "
                f"{ms / c['ms_per_sequence']:10.3f}"
            )
        out("-" * len(h2))
        out(
            f"geometric mean over the {len(ref_rows)} cells: JAX/reference "
            f"{geomean(r['ratio_jax'] for r in ref_rows):.2f}, oracle/reference "
            f"{geomean(r['ratio_oracle'] for r in ref_rows):.3f}"
        )
        if Path(trace).resolve() != DEFAULT_TRACE.resolve():
            out("(note: the reference figures are for Lublin-1; this run used another trace)")
    else:
        out("vs reference figures: n/a (they are for 1024-job sequences without backfilling)")

    # ---- against the reference simulator itself, timed now
    timed = None
    if reference_dir is not None:
        timed = time_reference_cells(
            reference_dir,
            trace,
            starts,
            length,
            policies,
            backfills,
            groups,
            cells,
            base["bsld"],
            out,
        )

    # ---- batch scaling
    if len(multipliers) > 1:
        out("")
        out(
            "batch scaling (the sequence list replicated K times, one evaluate() call; "
            "best run_s of the calls after the first):"
        )
        h3 = (
            f"{'K':>5s} {'runs':>7s} {'compile s':>10s} {'run s':>9s} {'ms/run':>8s} "
            f"{'JAX dec/s':>12s} {'vs oracle':>10s} {'schedules':>12s}"
        )
        out(h3)
        out("-" * len(h3))
        for k in multipliers:
            r = jx[k]
            cc = correctness[k]
            out(
                f"{k:5d} {r['runs']:7d} {r['compile_s_first_call']:10.2f} {r['run_s']:9.3f} "
                f"{r['ms_per_sequence_run']:8.3f} {r['decisions_per_s']:12.0f} "
                f"{r['decisions_per_s'] / o_dps:10.3f} "
                f"{'OK' if cc['mismatched_runs'] == 0 else str(cc['mismatched_runs']) + ' BAD':>12s}"
            )

    # ---- correctness summary
    out("")
    for k in multipliers:
        cc = correctness[k]
        tag = "OK" if cc["mismatched_runs"] == 0 else f"MISMATCH in {cc['mismatched_runs']} runs"
        out(
            f"schedules JAX vs oracle (K={k}): {tag} ({cc['runs'] - cc['mismatched_runs']}/"
            f"{cc['runs']} runs identical, every job's start time); decision totals "
            f"{'agree' if cc['decisions_agree'] else 'DIFFER'} "
            f"(JAX {jx[k]['decisions']}, oracle {k * o_dec})"
        )
    info["loadavg_end"] = list(os.getloadavg())
    out(
        f"JAX compile time: {base['compile_s_first_call']:.2f} s (first call); "
        f"oracle wall time {oracle_wall:.1f} s; load average at end "
        f"{info['loadavg_end'][0]:.2f}"
    )

    result = {
        "config": {
            "trace": str(trace),
            "seed": seed,
            "sequences": len(starts),
            "starts": starts,
            "length": length,
            "policies": policies,
            "backfills": backfills,
            "compat": True,
            "multipliers": list(multipliers),
            "jax_runs": jax_runs,
            "oracle_repeat": oracle_repeat,
        },
        "machine": info,
        "jax": {
            str(k): {kk: vv for kk, vv in r.items() if kk not in ("start_times", "bsld")}
            for k, r in jx.items()
        },
        "jax_compile_s": base["compile_s_first_call"],
        "jax_decisions_per_s": j_dps,
        "jax_by_backfill": groups,
        "oracle": {
            "seconds": o_sec,
            "decisions": o_dec,
            "decisions_per_s": o_dps,
            "wall_s": oracle_wall,
        },
        "cells": rows,
        "geomean_ratio_vs_oracle": gm,
        "aggregate_ratio_vs_oracle": o_sec / base["run_s"],
        "reference": {
            "figures_ms_per_sequence": REFERENCE_MS_NO_BACKFILL,
            "cells": ref_rows,
            "geomean_ratio_jax": geomean(r["ratio_jax"] for r in ref_rows),
            "geomean_ratio_oracle": geomean(r["ratio_oracle"] for r in ref_rows),
        },
        "reference_timed": timed,
        "correctness": {str(k): v for k, v in correctness.items()},
        "mismatches": mismatches + (timed["metric_mismatches"] if timed else 0),
    }
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--seed", type=int, default=1, help="reference_starts seed (1 = Tables V/VI)")
    ap.add_argument("--sequences", type=int, default=10)
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--policies", default=",".join(PAPER_POLICIES))
    ap.add_argument("--backfills", default=",".join(BACKFILLS))
    ap.add_argument(
        "--batch-multiplier",
        "--repeat",
        dest="batch_multiplier",
        default=None,
        help="comma list of K: replicate the sequence list K times (1 is always run)",
    )
    ap.add_argument("--gpu-scale", action="store_true", help="K = 1,10,100")
    ap.add_argument(
        "--jax-runs",
        type=int,
        default=3,
        help="evaluate() calls per K; the first compiles, the best of the others "
        "is the run time (default 3)",
    )
    ap.add_argument("--oracle-repeat", type=int, default=1, help="best of N per oracle run")
    ap.add_argument(
        "--one-device",
        action="store_true",
        help="one JAX device for all cores (default: one device per CPU core, "
        "each running a share of the batch)",
    )
    ap.add_argument(
        "--reference",
        type=Path,
        default=None,
        metavar="DIR",
        help="a local clone of DIR-LAB/deep-batch-scheduler (the paper's code): "
        "time its own heuristic loop on the same runs, side by side",
    )
    ap.add_argument("--json", type=Path, default=None, help="write all numbers to FILE")
    args = ap.parse_args(argv)
    if args.reference is not None:  # fail before the long JAX and oracle runs
        from benchmarks.reference.reference_sim import ReferenceUnavailable, load_reference

        try:
            load_reference(args.reference)
        except ReferenceUnavailable as e:
            ap.error(f"--reference: {e}")
    res = benchmark(
        trace=args.trace,
        seed=args.seed,
        n_seq=args.sequences,
        length=args.length,
        policies=args.policies.split(","),
        backfills=args.backfills.split(","),
        multipliers=_multipliers(args),
        jax_runs=max(1, args.jax_runs),
        oracle_repeat=args.oracle_repeat,
        reference_dir=args.reference,
    )
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=float) + "\n")
        print(f"wrote {args.json}")
    return 0 if res["mismatches"] == 0 else 1


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
