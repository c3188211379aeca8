"""Where the time of a backfilling decision goes (issue 19 §5): the RLScheduler environment with
the reference's backfilling, stepped in a batch with uniformly random valid actions.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/bf_decision_anatomy.py [--batch 256] [--steps 256]
        [--sizes 1,4,16,64,256] [--iterations 200] [--length 256] [--trace PATH]
        [--json FILE]

Three measurements in one run (Lublin-1 by default, 256-job sequences, compat mode):

1. The micro-steps of each decision (``sim.steps`` before and after ``env.step``): mean,
   percentiles, the largest in each batch step (the batch waits for it), and what they are
   (starts, arrivals, releases, and commits: decisions whose job does not fit now).
2. The cost of one iteration of the vmapped micro-step (``jaxsched.sim.engine.micro_step``) in a
   compiled loop at several batch sizes K, from states in the middle of episodes.
3. The environment's own steps/s (``jax.vmap(env.step)`` in one compiled scan, as
   ``benchmarks/speed/env_throughput.py``), beside a model of it: the stages of
   :func:`jaxsched.sim.batching.schedule_engine` (B, B/4, ... 4 rows), each running until at
   most the next stage's rows still need micro-steps, timed with part 2's per-iteration cost.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, use  # noqa: E402

use("speed")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from env_throughput import random_valid_actions  # noqa: E402

from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv  # noqa: E402
from jaxsched.sim import engine as E  # noqa: E402
from jaxsched.sim.batching import stage_sizes  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402

DEFAULT_TRACE = REPO / "traces" / "lublin-1.swf"
PERCENTILES = (50, 75, 90, 94, 98.5, 99.5, 100)


def decision_records(env, batch: int, steps: int, seed: int = 0):
    """Run ``steps`` batch steps of ``batch`` auto-reset environments and return per-decision
    numpy records ``[steps, batch]`` (micro-steps, starts, arrivals; ``live`` is False where
    the episode ended, whose state is then the next episode's), the final carry, and the
    compile and run seconds."""
    wrapped = AutoResetWrapper(env)
    keys = jax.random.split(jax.random.PRNGKey(seed), batch)
    st, ts = jax.vmap(wrapped.reset)(keys)

    def body(c, k):
        st, ts = c
        a = random_valid_actions(k, ts.observation.mask)[0]
        new, ts2 = jax.vmap(wrapped.step)(st, a)
        s0, s1 = st.sim, new.sim
        rec = dict(
            micro=s1.steps - s0.steps,
            starts=s1.n_started - s0.n_started,
            arrivals=s1.next - s0.next,
            releases=s1.n_started - s0.n_started - (s1.n_running - s0.n_running),
            live=~ts2.last(),
        )
        return (new, ts2), rec

    run = jax.jit(lambda c, ks: jax.lax.scan(body, c, ks))
    ks = jax.random.split(jax.random.PRNGKey(seed + 1), steps)
    t0 = time.perf_counter()
    c, _ = jax.block_until_ready(run((st, ts), ks))  # compile + warm-up from the resets
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, rec = jax.block_until_ready(run(c, ks))
    run_s = time.perf_counter() - t0
    return {k: np.asarray(v) for k, v in rec.items()}, c, compile_s, run_s


def micro_iteration_cost(env, states, sizes, iterations: int) -> dict:
    """Seconds per iteration of a compiled ``while_loop`` of the vmapped micro-step at each
    batch size K (the first K rows of ``states``; the micro-step alone, without the drain's
    select of the rows that need it),
    best of 3."""
    seqs = jax.vmap(env._sequence)(states.start)
    params = env._params()
    micro = jax.vmap(E.micro_step, in_axes=(0, None, 0, 0))

    def loop(seq, sim):
        zero = jnp.zeros(sim.done.shape, jnp.int32)

        def body(c):
            i, s = c
            return i + 1, micro(seq, params, s, zero)

        return jax.lax.while_loop(lambda c: c[0] < iterations, body, (0, sim))[1]

    f = jax.jit(loop)
    out = {}
    for K in sizes:
        sub, sq = jax.tree_util.tree_map(lambda x, K=K: x[:K], (states.sim, seqs))
        jax.block_until_ready(f(sq, sub))
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            jax.block_until_ready(f(sq, sub))
            best = min(best, time.perf_counter() - t0)
        out[K] = best / iterations
    return out


def stage_model(micro: np.ndarray, live: np.ndarray, cost: dict, batch: int):
    """Per batch step, the drain iterations each stage of ``schedule_engine`` runs (after the
    decision micro-step, which the whole batch takes) and the modelled seconds; the stage
    costs are interpolated in K from ``cost`` (seconds per iteration)."""
    sizes = stage_sizes(batch)
    ks = np.array(sorted(cost))
    per_it = {K: float(np.interp(K, ks, [cost[k] for k in ks])) for K in sizes}
    iters = np.zeros((micro.shape[0], len(sizes)))
    for s in range(micro.shape[0]):
        more = np.sort(np.where(live[s], micro[s] - 1, 0))[::-1]  # drain steps, largest first
        done_at = 0
        for i in range(len(sizes)):
            nxt = sizes[i + 1] if i + 1 < len(sizes) else 0
            until = more[nxt] if nxt < len(more) else 0  # at most nxt rows still need more
            iters[s, i] = max(0, until - done_at)
            done_at = max(done_at, until)
    secs = iters.mean(axis=0) * np.array([per_it[K] for K in sizes])
    return sizes, iters.mean(axis=0), secs, per_it[batch]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=256)
    ap.add_argument("--sizes", default="1,4,16,64,256")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--length", type=int, default=256, help="jobs per sequence (256)")
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    sizes = sorted({int(x) for x in a.sizes.split(",") if x} | {a.batch})
    jobs = read_swf(a.trace).jobs("rlscheduler")
    env = RLSchedulerEnv(jobs, length=a.length, backfill="rlscheduler", compat=True)
    print(f"device: {jax.devices()}; trace {a.trace.name}; B = {a.batch}, {a.steps} batch steps")

    rec, carry, compile_s, run_s = decision_records(env, a.batch, a.steps)
    live = rec["live"]
    m = rec["micro"][live]
    starts, arr, rel = (rec[k][live] for k in ("starts", "arrivals", "releases"))
    commits = m.mean() - starts.mean() - arr.mean() - rel.mean()
    print(f"\n1. micro-steps per decision ({m.size} decisions)")
    print(f"   mean {m.mean():.2f}: starts {starts.mean():.2f}, arrivals {arr.mean():.2f}, "
          f"releases {rel.mean():.2f}, commits {commits:.2f} (a decision whose job does not "
          f"fit; one that fits is its start)")  # fmt: skip
    pct = {q: float(np.percentile(m, q)) for q in PERCENTILES}
    print("   percentiles " + ", ".join(f"p{q:g} {v:.0f}" for q, v in pct.items()))
    worst = np.where(live, rec["micro"], 0).max(axis=1)
    print(f"   largest in a batch step: mean {worst.mean():.1f}, median {np.median(worst):.0f}")

    cost = micro_iteration_cost(env, carry[0], sizes, a.iterations)
    print(f"\n2. one iteration of the vmapped micro-step ({a.iterations} in a compiled loop)")
    for K, c in cost.items():
        print(f"   K = {K:4d}: {c * 1e6:8.1f} us per iteration, {c * 1e6 / K:6.2f} us per row")

    st_sizes, iters, secs, dec = stage_model(rec["micro"], live, cost, a.batch)
    measured = run_s / a.steps
    print(f"\n3. one batch step: measured {measured * 1e3:.2f} ms "
          f"({a.batch * a.steps / run_s:,.0f} env steps/s; compile {compile_s:.1f} s)")  # fmt: skip
    print(f"   model: decision micro-step {dec * 1e3:.2f} ms (B rows, once), then the drain:")
    for K, it, sc in zip(st_sizes, iters, secs):
        print(f"   stage of {K:4d} rows: {it:6.1f} iterations, {sc * 1e3:6.2f} ms")
    model = dec + secs.sum()
    print(f"   modelled micro-steps {model * 1e3:.2f} ms of the measured {measured * 1e3:.2f} ms "
          f"(the rest: observation, reward, auto-reset, stage compaction)")  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(dict(
            batch=a.batch, steps=a.steps, percentiles=pct, mean=float(m.mean()),
            largest_mean=float(worst.mean()), cost_per_iteration=cost,
            stages=dict(zip(map(str, st_sizes), iters.tolist())), measured_s=measured,
            modelled_s=model,
        ), indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
