"""Micro-step iterations per decision with backfilling (issue 48 §2): how many loop
iterations a decision's drain takes now that an advance skips the events that start nothing,
against one event per iteration (the engine's work counter ``steps`` still counts one per
event, start and decision: the iteration count of the engine before the skip).

    PYTHONPATH=. .venv/bin/python benchmarks/bf_iterations.py [--batch 64] [--decisions 256]
        [--backfill rlscheduler] [--length 256] [--seed 0] [--json FILE]

RLScheduler's environment on Lublin-1 (compat), ``--batch`` rows, ``--decisions`` uniformly
random valid actions per row (auto-reset), every decision stepped through the asynchronous-row
hooks (the decision's micro-step, then one micro-step per iteration until the next decision).
Prints, per decision, the mean iterations (now) and events + starts + decisions (one per
iteration before), their percentiles, and the mean over batch steps of the slowest row's count
(what a synchronous batch step waits for). Counts, not times: the machine's load does not
matter.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from jaxsched.envs import RLSchedulerEnv  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402

PERCENTILES = (50, 90, 99, 100)


def counts(env, batch: int, decisions: int, seed: int):
    """int ``[decisions, batch]`` arrays: iterations now, and one per event (``steps``)."""

    def one(state, key):
        s, obs = env.async_observe(state)
        n = jnp.sum(obs.mask, dtype=jnp.int32)
        a = jnp.minimum((jax.random.uniform(key) * n).astype(jnp.int32), jnp.maximum(n - 1, 0))
        before = s.sim.steps
        s = env.async_decide(s, a)
        s, it = jax.lax.while_loop(
            lambda c: env.async_pending(c[0]),
            lambda c: (env.async_drain(c[0]), c[1] + 1),
            (s, jnp.asarray(1, jnp.int32)),
        )
        work = s.sim.steps - before
        s = env.async_finish(s, True)[0]
        s = jax.lax.cond(s.sim.done, env.next_episode, lambda x: x, s)
        return s, (it, work)

    @jax.jit
    def run(key):
        k0, k1 = jax.random.split(key)
        state = jax.vmap(env.init_state)(jax.random.split(k0, batch))

        def body(st, k):
            return jax.vmap(one)(st, jax.random.split(k, batch))

        return jax.lax.scan(body, state, jax.random.split(k1, decisions))[1]

    it, work = run(jax.random.PRNGKey(seed))
    return np.asarray(it), np.asarray(work)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--decisions", type=int, default=256)
    p.add_argument("--backfill", default="rlscheduler")
    p.add_argument("--length", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--trace", type=Path, default=REPO / "traces" / "lublin-1.swf")
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    jobs = read_swf(a.trace).jobs("rlscheduler")
    env = RLSchedulerEnv(jobs, length=a.length, backfill=a.backfill, compat=True)
    it, work = counts(env, a.batch, a.decisions, a.seed)
    print(f"{a.trace.name}, backfill {a.backfill}, {a.batch} rows x {a.decisions} random "
          f"decisions ({it.size} decisions)")  # fmt: skip
    res = {}
    for name, x in (("iterations now", it), ("one event per iteration", work)):
        pct = "/".join(f"{v:g}" for v in np.percentile(x, PERCENTILES))
        slow = float(x.max(axis=1).mean())
        res[name] = {"mean": float(x.mean()), "percentiles": pct, "slowest_row_mean": slow}
        print(f"  {name:<25} per decision {x.mean():6.2f}  p50/p90/p99/max {pct:<16}  "
              f"slowest row of a batch step {slow:7.1f}")  # fmt: skip
    ratio = work.mean() / it.mean()
    slow_ratio = work.max(axis=1).mean() / it.max(axis=1).mean()
    print(f"  fewer iterations: x{ratio:.2f} per decision, x{slow_ratio:.2f} for the slowest row")
    if a.json:
        a.json.write_text(json.dumps({**res, "ratio": ratio, "slowest_ratio": slow_ratio}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
