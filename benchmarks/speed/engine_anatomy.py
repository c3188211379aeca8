"""Where the compiled engine's time goes (issue 60 item 1): micro-steps per decision, what
each micro-step does, the queue's and running list's occupancy against their capacities, the
run time as the capacities shrink (the part of a micro-step proportional to Q and R), and
XLA's cost figures of one batched micro-step.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/engine_anatomy.py [--trace sdsc-sp2]
        [--policies f3,f4,sjf] [--backfills none,rlscheduler] [--length 1024]
        [--sequences 200] [--seed 47] [--caps 256x64,64x64,64x32,32x32] [--lengths 256,512,1024] [--repeats 3]
        [--json FILE]

Workload: :mod:`benchmarks.speed.evaluate_vs_oracle`'s (the distinct test-split starts of seed
47, SchedGym semantics). One JAX device (one core) throughout.

* ``occupancy``: the general micro-step engine (:func:`jaxsched.sim.engine.reset`, the batched
  micro-step of :func:`~jaxsched.sim.engine.run_heuristic_batch`) run under ``lax.scan`` for
  ``4 L + 8`` steps with every run's waiting and running counts recorded at every step; per
  backfilling mode: micro-steps per decision, the shares of decide / start / advance steps
  (an advance: one arrival or release), and mean / 99th percentile / max of the waiting and
  running jobs over the steps a run is active, against the default first capacities
  (``queue_cap`` 256, ``run_cap`` 64). Without backfilling ``evaluate`` runs static keys on its
  bitmask fast path (:mod:`jaxsched.sim.nobf`), not this loop; its occupancy is the same
  schedule's.
* ``capacities``: ``evaluate``'s backfilling runs (the modes other than ``none``) with each
  ``--caps`` ``QxR`` as first capacities (grown 4x on overflow, schedules unchanged), compiled
  apart, then timed in turn (best and median of ``--repeats``): run seconds, nanoseconds per
  run-micro-step, and whether a run overflowed and was re-run.
* ``cost``: ``compiled.cost_analysis()`` of one batched micro-step (``jit(vmap(micro_step))``
  at the batch size ``evaluate`` pads to) and of its heuristic pick and its phase 1
  (``_select``: the reservation, the backfill candidate, the next event) alone, per
  capacity pair.
* ``lengths``: ``evaluate``'s backfilling runs at each ``--lengths`` L (the same number of
  sequences, default capacities): nanoseconds per run-micro-step against the sequence length
  (a part of a micro-step proportional to L would show here).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import load_line, write_json  # noqa: E402
from benchmarks.speed.evaluate_vs_oracle import TRACES, split_starts  # noqa: E402


def _batch(jobs, starts, length, policies, backfill):
    """(Sequence, SimParams, prank) of every start x policy under one mode, batched."""
    import jax.numpy as jnp
    import numpy as np

    from jaxsched.sim import engine as E
    from jaxsched.sim import evaluate as V

    _, codes, _, bcodes = V._check_names(policies, [backfill], ["bsld"], True)
    arrays = V.window_arrays(jobs, starts, length)
    si, pi = (x.ravel() for x in np.meshgrid(np.arange(len(starts)), np.arange(len(policies)),
                                             indexing="ij"))  # fmt: skip
    prank = V._policy_ranks(arrays, si, pi, codes, length, 0)
    B = len(si)
    seq = E.Sequence(
        submit=jnp.asarray(arrays["submit"][si]), run=jnp.asarray(arrays["run"][si]),
        req=jnp.asarray(arrays["req"][si]), procs=jnp.asarray(arrays["procs"][si]),
        nodes=jnp.asarray(arrays["nodes"][si]), n_jobs=jnp.full((B,), length, jnp.int32),
        num_nodes=jnp.full((B,), int(jobs.num_nodes), jnp.int32),
        log2n=jnp.asarray(arrays["log2n"][si]),
    )  # fmt: skip
    params = E.SimParams(policy=jnp.asarray(np.asarray(codes)[pi], jnp.int32),
                         backfill=jnp.full((B,), bcodes[0], jnp.int32),
                         compat=jnp.full((B,), True))  # fmt: skip
    return seq, params, jnp.asarray(prank, jnp.int32)


def _step_fn(Q: int, R: int):
    import jax

    from jaxsched.sim import engine as E

    def step(seq, params, s):
        return jax.vmap(
            lambda q, p, x: E._micro(q, p, x, E.heuristic_choice(q, p, x, False), False)[0]
        )(seq, params, s)

    return step


def occupancy(jobs, starts, length, policies, backfill, Q=256, R=64) -> dict:
    """Per-step counts of the general engine (module docstring), summarised."""
    import jax
    import numpy as np

    from jaxsched.sim import engine as E

    seq, params, prank = _batch(jobs, starts, length, policies, backfill)
    big_q, big_r = length, min(length, int(jobs.num_nodes))  # no overflow
    step = _step_fn(big_q, big_r)

    @jax.jit
    def roll(seq, params, prank):
        st = jax.vmap(lambda q, p: E.reset(q, p, big_q, big_r))(seq, prank)

        def body(s, _):
            s2 = step(seq, params, s)
            rec = (~s.done, s.n_queued, s.n_running, s2.decisions - s.decisions,
                   s2.n_started - s.n_started)  # fmt: skip
            return s2, rec

        return jax.lax.scan(body, st, None, length=4 * length + 8)

    st, (act, nq, nr, dec, sta) = jax.tree_util.tree_map(np.asarray, roll(seq, params, prank))
    assert st.done.all() and (st.overflow == 0).all()
    a = act.astype(bool)
    steps = int(a.sum())
    decisions = int(dec[a].sum())
    starts_n = int(sta[a].sum())
    decide_starts = int((dec[a] & sta[a]).sum())
    q, r = nq[a], nr[a]
    return {
        "backfill": backfill, "runs": int(a.shape[1]), "micro_steps": steps,
        "decisions": decisions, "steps_per_decision": steps / decisions,
        "share_decide": decisions / steps,
        "share_start_only": (starts_n - decide_starts) / steps,
        "share_advance": (steps - decisions - starts_n + decide_starts) / steps,
        "waiting_mean": float(q.mean()), "waiting_p99": float(np.percentile(q, 99)),
        "waiting_max": int(q.max()), "running_mean": float(r.mean()),
        "running_p99": float(np.percentile(r, 99)), "running_max": int(r.max()),
        "queue_cap": Q, "run_cap": R,
        "max_waiting_per_run_median": float(np.median(np.where(a, nq, 0).max(0))),
    }  # fmt: skip


def capacities(jobs, starts, length, policies, backfills, caps, repeats) -> list:
    from jaxsched.sim.evaluate import evaluate

    bfs = [b for b in backfills if b != "none"]

    def call(Q, R):
        res = evaluate(jobs, starts, length, policies, bfs, compat=True, metrics=["bsld"],
                       queue_cap=Q, run_cap=R)  # fmt: skip
        return res

    first = {c: call(*c) for c in caps}  # compile apart
    runs = {c: [] for c in caps}
    for _ in range(max(1, repeats)):
        for c in caps:
            runs[c].append(call(*c).timing["run_s"])
    base = first[caps[0]].start_times
    rows = []
    for c in caps:
        t = first[c].timing
        best = min(runs[c])
        rows.append({
            "queue_cap": c[0], "run_cap": c[1], "compile_s": t["compile_s"], "run_s": best,
            "run_median_s": sorted(runs[c])[len(runs[c]) // 2],
            "ns_per_micro_step": 1e9 * best / t["micro_steps"],
            "us_per_decision": 1e6 * best / t["decisions"],
            "re_runs": len(t["capacities"]) - 1,
            "same": bool((first[c].start_times == base).all()),
        })  # fmt: skip
    return rows


def lengths(jobs, policies, backfills, sizes, sequences, seed, repeats) -> list:
    """evaluate's backfilling runs at each sequence length (default first capacities), timed in
    turn after compiling apart: nanoseconds per run-micro-step against L."""
    from jaxsched.sim.evaluate import evaluate

    bfs = [b for b in backfills if b != "none"]
    st = {L: split_starts(jobs, L, sequences, seed) for L in sizes}

    def call(L):
        return evaluate(jobs, st[L], L, policies, bfs, compat=True, metrics=["bsld"]).timing

    first = {L: call(L) for L in sizes}
    runs = {L: [] for L in sizes}
    for _ in range(max(1, repeats)):  # in turn
        for L in sizes:
            runs[L].append(call(L)["run_s"])
    best = {L: min(runs[L]) for L in sizes}
    return [{"length": L, "runs": len(st[L]) * len(policies) * len(bfs), "run_s": best[L],
             "ns_per_micro_step": 1e9 * best[L] / first[L]["micro_steps"],
             "re_runs": len(first[L]["capacities"]) - 1} for L in sizes]  # fmt: skip


def cost(jobs, starts, length, policies, backfill, caps) -> list:
    import jax

    from jaxsched.sim import engine as E
    from jaxsched.sim.evaluate import _bucket

    seq, params, prank = _batch(jobs, starts, length, policies, backfill)
    B = _bucket(seq.submit.shape[0])
    seq, params, prank = jax.tree_util.tree_map(lambda x: x[:B], (seq, params, prank))
    pad = B - seq.submit.shape[0]
    if pad:
        seq, params, prank = jax.tree_util.tree_map(
            lambda x: jax.numpy.concatenate([x, x[:pad]]), (seq, params, prank))  # fmt: skip
    rows = []
    for Q, R in caps:
        st = jax.vmap(lambda q, p, Q=Q, R=R: E.reset(q, p, Q, R))(seq, prank)
        parts = {
            "micro_step": _step_fn(Q, R),
            "heuristic_choice": lambda q, p, s: jax.vmap(
                lambda a, b, c: E.heuristic_choice(a, b, c, False))(q, p, s),
            "select": lambda q, p, s: jax.vmap(
                lambda a, b, c: E._select(a, b, c, E.heuristic_choice(a, b, c, False)))(q, p, s),
        }  # fmt: skip
        row = {"queue_cap": Q, "run_cap": R, "batch": B}
        for name, fn in parts.items():
            ca = jax.jit(fn).lower(seq, params, st).compile().cost_analysis()
            ca = ca[0] if isinstance(ca, list) else ca
            row[f"{name}_flops"] = float(ca.get("flops", float("nan")))
            row[f"{name}_bytes"] = float(ca.get("bytes accessed", float("nan")))
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default="sdsc-sp2", help=f"{', '.join(TRACES)} or an SWF path")
    ap.add_argument("--policies", default="f3,f4,sjf")
    ap.add_argument("--backfills", default="none,rlscheduler")
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--sequences", type=int, default=200)
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--caps", default="256x64,64x64,64x32,32x32", help="QxR first capacities")
    ap.add_argument("--lengths", default="256,512,1024", help="the lengths part's L")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parts", default="occupancy,capacities,lengths,cost")
    ap.add_argument("--shared", help="the shared folder")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args(argv)

    import jax

    from jaxsched.precision import x64
    from jaxsched.workload import read_swf

    caps = [tuple(int(x) for x in c.split("x")) for c in a.caps.split(",")]
    parts = a.parts.split(",")
    print(f"{jax.devices()[0].device_kind} x {jax.local_device_count()}; {load_line()}")
    path = TRACES[a.trace](a) if a.trace in TRACES else Path(a.trace)
    jobs = read_swf(path).jobs("rlscheduler")
    starts = split_starts(jobs, a.length, a.sequences, a.seed)
    pol, bfs = a.policies.split(","), a.backfills.split(",")
    out = {"trace": a.trace, "sequences": len(starts), "length": a.length, "policies": pol}
    with x64():
        if "occupancy" in parts:
            out["occupancy"] = [occupancy(jobs, starts, a.length, pol, b) for b in bfs]
            print("| backfill | micro-steps / decision | decide / start / advance | waiting "
                  "mean, p99, max (Q 256) | running mean, p99, max (R 64) |")  # fmt: skip
            print("|---|---|---|---|---|")
            for o in out["occupancy"]:
                print(f"| {o['backfill']} | {o['steps_per_decision']:.2f} | "
                      f"{o['share_decide']:.2f} / {o['share_start_only']:.2f} / "
                      f"{o['share_advance']:.2f} | {o['waiting_mean']:.1f}, "
                      f"{o['waiting_p99']:.0f}, {o['waiting_max']} | {o['running_mean']:.1f}, "
                      f"{o['running_p99']:.0f}, {o['running_max']} |", flush=True)  # fmt: skip
        if "capacities" in parts and any(b != "none" for b in bfs):
            t0 = time.perf_counter()
            out["capacities"] = capacities(jobs, starts, a.length, pol, bfs, caps, a.repeats)
            print("\n| Q x R | run s (best) | median | ns / run-micro-step | us / decision | "
                  "re-runs | compile s | same |\n|---|---|---|---|---|---|---|---|")  # fmt: skip
            for c in out["capacities"]:
                print(f"| {c['queue_cap']} x {c['run_cap']} | {c['run_s']:.3f} | "
                      f"{c['run_median_s']:.3f} | {c['ns_per_micro_step']:.0f} | "
                      f"{c['us_per_decision']:.1f} | {c['re_runs']} | {c['compile_s']:.2f} | "
                      f"{c['same']} |", flush=True)  # fmt: skip
            print(f"({time.perf_counter() - t0:.0f} s)")
        if "lengths" in parts and any(b != "none" for b in bfs):
            sizes = [int(x) for x in a.lengths.split(",")]
            out["lengths"] = lengths(jobs, pol, bfs, sizes, a.sequences, a.seed, a.repeats)
            print("\n| L | runs | run s | ns / run-micro-step | re-runs |\n|---|---|---|---|---|")
            for r in out["lengths"]:
                print(
                    f"| {r['length']} | {r['runs']} | {r['run_s']:.3f} | "
                    f"{r['ns_per_micro_step']:.0f} | {r['re_runs']} |",
                    flush=True,
                )
        if "cost" in parts:
            bf = next((b for b in bfs if b != "none"), bfs[0])
            out["cost"] = cost(jobs, starts, a.length, pol, bf, caps)
            print(f"\ncost analysis, one batched micro-step ({bf}):")
            print("| Q x R | batch | micro-step bytes | flops | pick bytes | phase-1 bytes |")
            print("|---|---|---|---|---|---|")
            for c in out["cost"]:
                print(f"| {c['queue_cap']} x {c['run_cap']} | {c['batch']} | "
                      f"{c['micro_step_bytes']:.3g} | {c['micro_step_flops']:.3g} | "
                      f"{c['heuristic_choice_bytes']:.3g} | {c['select_bytes']:.3g} |")  # fmt: skip
    print(f"({load_line()})")
    write_json(a.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
