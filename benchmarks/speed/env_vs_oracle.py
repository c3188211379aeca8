"""RLScheduler's environment with backfilling against the plain-Python oracle stepped through
the same decisions (issue 60 item 4b, first part): decisions per second, side by side in one
run, every schedule checked against the oracle's.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/env_vs_oracle.py [--trace PATH]
        [--batch 256] [--length 256] [--backfills rlscheduler,none] [--repeats 3] [--json FILE]

Workload: ``RLSchedulerEnv(jobs, length, backfill, compat=True, max_queue=length)`` (Lublin-1
by default; every waiting job visible, so that slot 0 is always the first waiting job), B
episodes from B fixed starts (``uniform_starts`` of seed 0), every decision the action 0 (the
first visible job: FCFS, tests/envs/test_rlscheduler.py §4), as a fixed policy stands in for
an agent. The environment: ``jit`` of ``vmap(env.step)`` in a ``while_loop`` from
``vmap(env.reset_at)`` until every episode has ended (finished episodes are no-ops; the batch
waits for its longest episode: ``batch steps``), compiled apart, best of ``--repeats``;
the oracle: :func:`jaxsched.sim.oracle.simulate_with_choices` episode after episode (one core)
with ``choose = view.queue[0]`` (the same job), best of ``--repeats``, in turn with the
environment. SchedInspector's environment is not covered yet.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, load_line, write_json  # noqa: E402


def env_fn(env, length: int):
    """Compiled ``(starts) -> (start times [B, L], decisions [B], batch steps)`` of action-0
    episodes: ``vmap(env.step)`` until every episode has ended (the batch waits for its
    longest episode, as a batch of fixed episodes does; finished episodes are no-ops)."""
    import jax
    import jax.numpy as jnp

    def roll(starts):
        st, ts = jax.vmap(env.reset_at)(starts)

        def body(c):
            st, it = c
            st, _ = jax.vmap(env.step)(st, jnp.zeros(starts.shape, jnp.int32))
            return st, it + 1

        def more(c):
            return jnp.any(~c[0].sim.done) & (c[1] < length)

        st, it = jax.lax.while_loop(more, body, (st, jnp.int32(0)))
        return st.sim.start, st.decisions, it

    return jax.jit(roll)


def measure(jobs, starts, length: int, backfill: str, repeats: int) -> dict:
    import jax
    import numpy as np

    from jaxsched.envs import RLSchedulerEnv
    from jaxsched.precision import x64
    from jaxsched.sim import oracle

    # every waiting job visible (max_queue = length): with a cut-off, slot 0 is not always
    # the first waiting job and the oracle's queue[0] would be another decision
    env = RLSchedulerEnv(jobs, length=length, backfill=backfill, compat=True, max_queue=length)
    kw = dict(num_nodes=int(jobs.num_nodes), procs_per_node=float(jobs.procs_per_node))
    wins = [jobs.window(int(s), length) for s in starts]

    def run_oracle():
        return np.array([oracle.simulate_with_choices(w.submit, w.run, w.req_time, w.procs,
                         choose=lambda v: v.queue[0], backfill=backfill, compat=True, **kw)
                         for w in wins])  # fmt: skip

    with x64():
        args = jax.numpy.asarray(starts, jax.numpy.int32)
        t0 = time.perf_counter()
        fn = env_fn(env, length).lower(args).compile()
        compile_s = time.perf_counter() - t0
        env_t, ora_t = [], []
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            got, dec, its = jax.block_until_ready(fn(args))
            env_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            want = run_oracle()
            ora_t.append(time.perf_counter() - t0)
    decisions = int(np.asarray(dec).sum())
    row = {"backfill": backfill, "batch": len(starts), "length": length, "decisions": decisions,
           "env_s": min(env_t), "oracle_s": min(ora_t), "compile_s": compile_s,
           "batch_steps": int(its),
           "same": bool(np.array_equal(np.asarray(got, np.int64), want))}  # fmt: skip
    row["env_decisions_per_s"] = decisions / row["env_s"]
    row["oracle_decisions_per_s"] = decisions / row["oracle_s"]
    row["ratio"] = row["oracle_s"] / row["env_s"]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=REPO / "traces" / "lublin-1.swf")
    ap.add_argument("--rules", default="rlscheduler", choices=("rlscheduler", "default"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--backfills", default="rlscheduler,none")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args(argv)

    import jax

    from jaxsched.workload import read_swf
    from jaxsched.workload.sampling import uniform_starts

    print(f"{jax.devices()[0].device_kind} x {jax.local_device_count()}; {load_line()}")
    jobs = read_swf(a.trace).jobs(a.rules)
    starts = uniform_starts(jobs.n_jobs, a.length, a.batch, 0)
    print("| backfill | B | L | decisions | batch steps | env s | oracle s | oracle / env | env dec/s | "
          "oracle dec/s | compile s | same |\n|---|---|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    rows = []
    for bf in a.backfills.split(","):
        r = measure(jobs, starts, a.length, bf, a.repeats)
        rows.append(r)
        print(f"| {bf} | {r['batch']} | {r['length']} | {r['decisions']:,} | {r['batch_steps']} | {r['env_s']:.3f} | "
              f"{r['oracle_s']:.3f} | {r['ratio']:.2f} | {r['env_decisions_per_s']:,.0f} | "
              f"{r['oracle_decisions_per_s']:,.0f} | {r['compile_s']:.2f} | {r['same']} |",
              flush=True)  # fmt: skip
    print(f"({load_line()})")
    write_json(a.json, rows)
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
