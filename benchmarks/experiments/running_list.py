"""The engine's running list and what its size costs (issue 48, notebook §4.8). Three parts:

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/running_list.py table [--lengths 64,128,256,1024]
    PYTHONPATH=. .venv/bin/python benchmarks/experiments/running_list.py probe \
        [--caps 256x256,256x135,128x135] [--rounds 3] [--batch 256] [--devices 2]
    PYTHONPATH=. .venv/bin/python benchmarks/experiments/running_list.py roll [--sizes 1,16,256] [--rounds 2]

* ``table``: for every trace (Lublin-1 and Lublin-2 of the checkout, every trace of the shared
  folder) and sequence length, the capacity before (``min(length, nodes)``, or ``length`` when
  a job needs no node) beside
  :func:`jaxsched.workload.capacity.running_capacity` and the seconds it took.
* ``probe``: RLScheduler's environment (Lublin-1, 256-job sequences, the reference's
  backfilling, random valid actions; ``env_throughput.bench_one``) with the queue and running
  capacities set by hand (``QxR``), the pairs interleaved over ``--rounds``; steps/s, the ratio
  to the first pair per round, and the finished episodes (a capacity that overflows ends
  episodes early, so a different count means a changed schedule).
* ``roll``: the shift of the running list's fields (``jnp.roll`` in
  :mod:`jaxsched.sim.primitives`) written four ways (``roll``, an explicit slice +
  concatenate, a pad, a gather), patched into the engine in turn: first every final state of
  64 rows x 64 batch steps compared with the first form's (the running node sums beyond the
  running prefix aside: the forms fill that unused slot differently), then the seconds of one iteration of
  the vmapped micro-step alone at each K (``bf_decision_anatomy.micro_iteration_cost``), and the
  operations of the drain loop's body in the optimised HLO of ``vmap(env.step)`` at B = 16.

Capacities and patches are throwaway settings of this probe; nothing here changes the package.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, shared_dir, use  # noqa: E402

use("speed", "experiments")


def _lublin():
    from jaxsched.workload import read_swf

    return read_swf(REPO / "traces" / "lublin-1.swf").jobs("rlscheduler")


def table(lengths, shared) -> None:
    import numpy as np

    from jaxsched.workload import read_swf
    from jaxsched.workload.capacity import running_capacity

    paths = [REPO / "traces" / "lublin-1.swf", REPO / "traces" / "lublin-2.swf"]
    paths += sorted(shared_dir(shared).joinpath("traces").glob("*.swf.gz"))
    print(
        f"{'trace':<32} {'jobs':>7} {'nodes':>6} {'length':>6} {'before':>8} {'bound':>6} {'s':>6}"
    )
    for p in paths:
        jobs = read_swf(p).jobs("rlscheduler")
        nodes = np.ceil(jobs.procs / jobs.procs_per_node).astype(np.int64)
        for L in lengths:
            if L > jobs.n_jobs:
                continue
            t0 = time.perf_counter()
            c = running_capacity(nodes, int(jobs.num_nodes), L)
            s = time.perf_counter() - t0
            before = min(L, int(jobs.num_nodes)) if (nodes >= 1).all() else L
            print(
                f"{p.name:<32} {jobs.n_jobs:>7} {jobs.num_nodes:>6} {L:>6} "
                f"{before:>8} {c:>6} {s:>6.2f}"
            )


def probe(caps, rounds: int, batch: int, devices: int) -> None:
    import numpy as np
    from env_throughput import bench_one

    from jaxsched.envs import RLSchedulerEnv

    jobs = _lublin()
    got = {c: [] for c in caps}
    for r in range(rounds):
        for q, rc in caps:
            env = RLSchedulerEnv(jobs, length=256, backfill="rlscheduler", compat=True)
            env._config = dataclasses.replace(env._config, queue_cap=q, run_cap=rc)
            x = bench_one(env, batch, 256, 3, 0, False, 2200.0, devices, "closed")
            got[(q, rc)].append(x["steps_per_s"])
            print(
                f"round {r + 1} {q}x{rc}: {x['steps_per_s']:,.0f} steps/s, "
                f"{x['episodes_finished']} episodes",
                flush=True,
            )
    for c in caps:
        ratios = [round(a / b, 2) for a, b in zip(got[c], got[caps[0]])]
        print(f"{c[0]}x{c[1]}: median {np.median(got[c]):,.0f} steps/s, per round x{ratios}")


def _shifts(form: str):
    """``(right, left)``: ``a`` shifted by one slot up / down (the edge slot keeps its value;
    the callers overwrite it)."""
    import jax.numpy as jnp

    if form == "concat":
        return (
            lambda a: jnp.concatenate([a[:1], a[:-1]]),
            lambda a: jnp.concatenate([a[1:], a[-1:]]),
        )
    if form == "pad":
        return (
            lambda a: jnp.pad(a[:-1], (1, 0), mode="edge"),
            lambda a: jnp.pad(a[1:], (0, 1), mode="edge"),
        )
    if form == "gather":
        return (
            lambda a: a[jnp.maximum(jnp.arange(a.shape[0]) - 1, 0)],
            lambda a: a[jnp.minimum(jnp.arange(a.shape[0]) + 1, a.shape[0] - 1)],
        )
    return lambda a: jnp.roll(a, 1), lambda a: jnp.roll(a, -1)


def _patch(form: str) -> None:
    """The running list's insert and drop of :mod:`jaxsched.sim.primitives` with ``form``'s
    shifts, in the primitives and in the engine that imported them."""
    import jax.numpy as jnp

    from jaxsched.sim import engine as E
    from jaxsched.sim import primitives as P

    right, left = _shifts(form)

    def insert(a, pos, v, on):
        i = jnp.arange(a.shape[0], dtype=jnp.int32)
        return jnp.where(on, jnp.where(i < pos, a, jnp.where(i == pos, v, right(a))), a)

    def cum_insert(cum, pos, k, on):
        i = jnp.arange(cum.shape[0], dtype=jnp.int32)
        return jnp.where(on, jnp.where(i < pos, cum, jnp.where(i == 0, 0, right(cum)) + k), cum)

    def drop(a, slot, fill, on):
        i = jnp.arange(a.shape[0], dtype=jnp.int32)
        out = jnp.where(i < slot, a, jnp.where(i == a.shape[0] - 1, fill, left(a)))
        return jnp.where(on, out, a)

    def cum_drop(cum, slot, k, on):
        i = jnp.arange(cum.shape[0], dtype=jnp.int32)
        return jnp.where(on, jnp.where(i < slot, cum, left(cum) - k), cum)

    for mod in (P, E):
        mod.running_insert, mod.running_cum_insert = insert, cum_insert
    P.running_drop, P.running_cum_drop = drop, cum_drop


def _body_ops(env) -> str:
    """The operation counts of the largest while-loop body in ``vmap(env.step)``'s optimised
    HLO at B = 16 (the first drain stage)."""
    import jax
    import jax.numpy as jnp

    st, _ = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), 16))
    txt = jax.jit(jax.vmap(env.step)).lower(st, jnp.zeros((16,), jnp.int32)).compile().as_text()
    bodies = set(re.findall(r"body=(%[\w.\-]+)", txt))
    counts = []
    for name in bodies:
        block = re.search(re.escape(name) + r" [^\n]*\{\n(.*?)\n\}", txt, re.S)
        ops = re.findall(r"= \S+ ([\w\-]+)\(", block.group(1)) if block else []
        counts.append((len(ops), {k: ops.count(k) for k in ("fusion", "copy", "concatenate")}))
    return str(max(counts, key=lambda c: c[0])[1]) if counts else "no loop"


def _valid_prefix(carry):
    """``carry`` with the running node sums beyond each row's running prefix set to 0: the
    forms leave different values there (``jnp.roll`` wraps the first slot into the last one,
    the others repeat the last), and no step reads them."""
    import jax.numpy as jnp

    st, ts = carry
    sim = st.sim
    live = jnp.arange(sim.run_cum_nodes.shape[-1]) < sim.n_running[:, None]
    return st.replace(sim=sim.replace(run_cum_nodes=jnp.where(live, sim.run_cum_nodes, 0))), ts


def roll(sizes, rounds: int, forms) -> None:
    import jax
    import numpy as np
    from bf_decision_anatomy import decision_records, micro_iteration_cost

    from jaxsched.envs import RLSchedulerEnv

    env = RLSchedulerEnv(_lublin(), length=256, backfill="rlscheduler", compat=True)
    first, states = None, None
    for f in forms:
        _patch(f)
        jax.clear_caches()
        _, carry, _, _ = decision_records(env, 64, 64, 0)
        leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(_valid_prefix(carry))]
        first = first or leaves
        same = all(np.array_equal(a, b) for a, b in zip(first, leaves))
        print(f"{f}: final states equal to {forms[0]}'s: {same}; loop body {_body_ops(env)}")
        states = carry[0]
    got = {f: {k: [] for k in sizes} for f in forms}
    for r in range(rounds):
        for f in forms:
            _patch(f)
            jax.clear_caches()
            cost = micro_iteration_cost(env, states, sizes, 200)
            for k in sizes:
                got[f][k].append(cost[k])
            print(
                f"round {r + 1} {f}: " + ", ".join(f"K={k} {cost[k] * 1e6:.1f} us" for k in sizes)
            )
    for f in forms:
        print(
            f"{f}: median " + ", ".join(f"K={k} {np.median(got[f][k]) * 1e6:.1f} us" for k in sizes)
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="part", required=True)
    t = sub.add_parser("table")
    t.add_argument("--lengths", default="64,128,256,1024")
    t.add_argument("--shared", default=None)
    p = sub.add_parser("probe")
    p.add_argument("--caps", default="256x256,256x135,128x135")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--devices", type=int, default=2)
    r = sub.add_parser("roll")
    r.add_argument("--sizes", default="1,16,256")
    r.add_argument("--rounds", type=int, default=2)
    r.add_argument("--forms", default="roll,concat,pad,gather")
    a = ap.parse_args(argv)
    if a.part == "table":
        table([int(x) for x in a.lengths.split(",")], a.shared)
    elif a.part == "probe":
        from jaxsched.train.parallel import expose_host_devices

        expose_host_devices(a.devices)  # before JAX uses a device
        caps = [tuple(int(v) for v in c.split("x")) for c in a.caps.split(",")]
        probe(caps, a.rounds, a.batch, a.devices)
    else:
        roll([int(x) for x in a.sizes.split(",")], a.rounds, a.forms.split(","))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
