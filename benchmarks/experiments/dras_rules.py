"""How much DRAS's scheduling loops allow: fixed rules in the learned policy's place (issue 17 §4).

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/dras_rules.py [--trace FILE] [--period val|test]
        [--jobs K] [--rules oldest,shortest,smallest,area,l1-shortest] [--loops code,paper]

A DRAS policy only chooses a window slot at each level-1 and level-2 decision; the loop around
it (spec ``dras.md`` §2.4 paper / §2.5 code) decides the rest: who holds the reservation,
whether it persists, and what may back-fill.  This script drives those loops (the plain-Python
CQSim oracle, ``simulate_cqsim(mode="dras")``) with fixed rules over the window — ``oldest``
(slot 0), ``shortest`` (smallest estimate), ``smallest`` (fewest nodes), ``area`` (smallest
nodes × estimate), ``l1-shortest`` (shortest at level 1, oldest at level 2), ``shortest-aged``
(shortest, but at level 1 the oldest once it has waited ``--age`` hours: an aging rule a
policy can learn, the waits being in its input) — and prints the
§10 table (:mod:`jaxsched.systems.dras.report`) beside FCFS + EASY and the §8 baselines on
the same period: what a perfect learner of each rule would reach.  Ties go to the older job.

Job list and split as ``jaxsched train dras`` (CQSim loading, jobs wider than N dropped, §9
months: ``--period val`` = month 3, ``test`` = the rest; ``--jobs K`` keeps the first K).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from jaxsched.policies.dras_baselines import BASELINES, baseline_kwargs
from jaxsched.sim.oracle_cqsim import fixed_policy, simulate_cqsim
from jaxsched.systems.dras.config import env_jobs, load_split
from jaxsched.systems.dras.report import format_table, method_table

DEFAULT_TRACE = "../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"

RULE_KEYS = {
    "shortest": lambda v, j: v.req_time[j],
    "area": lambda v, j: v.nodes[j] * v.req_time[j],
}
RULES = ("oldest", "shortest", "smallest", "area", "l1-shortest", "shortest-aged")


def rule_policy(name: str, age_h: float = 24.0):
    """``policy(level, window, view) -> slot`` of a fixed rule (module docstring); ``oldest``
    and ``smallest`` are the reference's own fixed policies (``fixed_policy``)."""
    if name in ("oldest", "smallest"):
        return fixed_policy("fcfs" if name == "oldest" else name)
    if name == "shortest-aged":
        short = rule_policy("shortest")

        def aged(level, window, view):
            old = level == 1 and view.t - view.submit[window[0]] > age_h * 3600
            return 0 if old else short(level, window, view)

        return aged
    if name == "l1-shortest":
        short = rule_policy("shortest")
        return lambda level, window, view: short(level, window, view) if level == 1 else 0
    key = RULE_KEYS[name]
    return lambda level, window, view: min(
        range(len(window)), key=lambda i: (key(view, window[i]), i)
    )


def schedules(cj, rules, loops, baselines=BASELINES, age_h=24.0) -> tuple[dict, dict]:
    """``({method: schedule}, {method: seconds})`` on the job list ``cj`` (CQSimJobs)."""
    base = dict(submit=cj.submit, run=cj.run, nodes=cj.nodes)
    runs = {b: baseline_kwargs(b, seed=0) for b in baselines}
    for loop in loops:
        for r in rules:
            runs[f"{loop}:{r}"] = dict(
                mode="dras", policy=rule_policy(r, age_h), paper=loop == "paper"
            )
    out, secs = {}, {}
    for name, kw in runs.items():
        t0 = time.perf_counter()
        res = simulate_cqsim(cj.submit, cj.nodes, cj.run, cj.req_time, num_nodes=cj.num_nodes,
                             **kw)  # fmt: skip
        secs[name] = time.perf_counter() - t0
        out[name] = dict(base, start=np.asarray(res.start), cls=np.asarray(res.cls))
    return out, secs


def main(argv=None, out=print) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=DEFAULT_TRACE)
    ap.add_argument("--period", choices=("val", "test"), default="val")
    ap.add_argument("--jobs", type=int, default=0, help="the period's first K jobs (0 = all)")
    ap.add_argument("--rules", default=",".join(RULES))
    ap.add_argument("--loops", default="code,paper")
    ap.add_argument("--age", type=float, default=24.0, help="hours, for shortest-aged")
    a = ap.parse_args(argv)
    rules, loops = a.rules.split(","), a.loops.split(",")
    bad = [r for r in rules if r not in RULES] + [x for x in loops if x not in ("code", "paper")]
    if bad:
        ap.error(f"unknown rule or loop {bad[0]!r}; rules {', '.join(RULES)}; loops code, paper")
    split = load_split(a.trace)
    part = split.val if a.period == "val" else split.test
    if a.jobs:
        part = part.select(slice(0, a.jobs))
    cj = env_jobs(part)
    sch, secs = schedules(cj, rules, loops, age_h=a.age)
    table = method_table(sch, N=cj.num_nodes)
    out(f"{a.trace}: {a.period} period, {len(cj.submit)} jobs, N = {cj.num_nodes}")
    out(format_table(table))
    fcfs = table["fcfs"]
    out("against FCFS + EASY (avg wait, max wait): " + ", ".join(
        f"{m} {t['avg_wait'] / fcfs['avg_wait']:.2f}x {t['max_wait'] / fcfs['max_wait']:.2f}x"
        for m, t in table.items() if m != "fcfs"))  # fmt: skip
    out("oracle seconds: " + ", ".join(f"{m} {s:.1f}" for m, s in secs.items()))
    return table


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    main()
