"""XLA's own cost figures of the compiled RLScheduler rollout (no execution needed): flops,
bytes accessed, fusions and copies of ``jit(scan(vmap(AutoResetWrapper(env).step)))``.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/compiled_cost.py [--backfill none] [--batch 256]
        [--steps 256] [--json FILE]

Uses only the public API (``RLSchedulerEnv``, ``AutoResetWrapper``, ``read_swf``), so
``benchmarks/speed/compare_checkouts.py`` runs this file under an older checkout's ``PYTHONPATH`` as
well: two versions of the environment compared as programs, not only as timings.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

# a whole program: 64-bit mode for its process (jaxsched/precision.py)
jax.config.update("jax_enable_x64", True)
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv
from jaxsched.workload import read_swf

TRACE = Path(__file__).resolve().parents[2] / "traces" / "lublin-1.swf"


def compiled_rollout(env, batch: int, steps: int):
    """The compiled rollout of ``batch`` envs for ``steps`` random valid actions, and its
    arguments."""
    keys = jax.random.split(jax.random.PRNGKey(0), batch)
    st, ts = jax.jit(jax.vmap(env.reset))(keys)

    def roll(st, ts, key):
        def body(c, k):
            st, ts = c
            logits = jnp.where(ts.observation.mask, 0.0, -1e9)
            a = jax.vmap(jax.random.categorical)(jax.random.split(k, batch), logits)
            st, ts = jax.vmap(env.step)(st, a)
            return (st, ts), ts.reward

        return jax.lax.scan(body, (st, ts), jax.random.split(key, steps))

    return jax.jit(roll).lower(st, ts, jax.random.PRNGKey(1)).compile()


def cost(compiled) -> dict:
    ca = compiled.cost_analysis()
    ca = ca[0] if isinstance(ca, list) else ca
    text = compiled.as_text()
    ops = re.findall(r"= \S+ ([\w-]+)\(", text)
    return {
        "flops": float(ca.get("flops", float("nan"))),
        "bytes_accessed": float(ca.get("bytes accessed", float("nan"))),
        "fusions": ops.count("fusion"),
        "copies": ops.count("copy"),
        "hlo_lines": len(text.splitlines()),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", type=Path, default=TRACE)
    p.add_argument("--backfill", default="none")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", type=int, default=256)
    p.add_argument("--length", type=int, default=256)
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    jobs = read_swf(a.trace).jobs("rlscheduler")
    env = AutoResetWrapper(RLSchedulerEnv(jobs, length=a.length, backfill=a.backfill))
    res = {"backfill": a.backfill, "batch": a.batch, "steps": a.steps}
    res.update(cost(compiled_rollout(env, a.batch, a.steps)))
    print(" ".join(f"{k} {v:,}" if isinstance(v, (int, float)) else f"{k} {v}"
                   for k, v in res.items()))  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
