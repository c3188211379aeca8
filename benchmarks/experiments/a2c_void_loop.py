"""Why a greedy A2cScheduler policy leaves jobs unallocated: the state at the end of each jobset.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/a2c_void_loop.py MODEL [--sequences 100]
        [--eval-seed S]

MODEL: a ``jaxsched train a2c`` run directory, checkpoint file or shipped model name. Runs the
greedy policy on the fixed evaluation jobsets (the run's own, or those of ``--eval-seed``) for
the step cap, then, for every jobset that ends with unallocated jobs, prints whether the
cluster is idle, how many waiting jobs can be placed, the greedy action, the probability of
void against all jobs together and the best job, and how many of the last 50 steps were void
with an unchanged image (50 and 50: a fixed point). RESULTS.md §7.3.3.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxsched.sim.datacenter import baselines  # noqa: E402
from jaxsched.systems.a2cscheduler.run import load_model  # noqa: E402


def end_states(model, n: int, eval_seed=None) -> dict:
    """Per jobset (numpy ``[n]`` each): ``unf`` unallocated jobs, ``nrun`` running jobs,
    ``placeable`` waiting jobs that fit, ``a`` greedy action at the end, ``pvoid`` /
    ``pjobs`` / ``pbest`` probabilities, ``tail_void`` / ``tail_same`` of the last 50 steps."""
    env = model.env if eval_seed is None else dataclasses.replace(model.env, eval_seed=eval_seed)
    T, N = env.params.step_cap, env.params.num_slots

    def probs(s):
        obs = env.observe(s)
        return obs, jax.nn.softmax(model.actor_apply(model.params, obs.image, obs.mask))

    def one(start):
        def body(s, _):
            obs, p = probs(s)
            a = jnp.argmax(p).astype(jnp.int32)
            s2 = env.transition(s, a)[0]
            return s2, (a, jnp.all(env.observe(s2).image == obs.image))

        s, (acts, same) = jax.lax.scan(body, env.init_state_at(start), None, length=T)
        obs, p = probs(s)
        return dict(unf=baselines.job_metrics(s)["unfinished"], nrun=s.nrun,
                    placeable=jnp.sum(obs.mask[:N]), a=jnp.argmax(p), pvoid=p[N],
                    pjobs=jnp.sum(p[:N]), pbest=jnp.max(p[:N]),
                    tail_void=jnp.sum(acts[-50:] == N), tail_same=jnp.sum(same[-50:]))  # fmt: skip

    r = jax.jit(jax.vmap(one))(jnp.arange(n, dtype=jnp.int32))
    return {k: np.asarray(v) for k, v in r.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--sequences", type=int, default=100)
    ap.add_argument("--eval-seed", type=int, default=None)
    a = ap.parse_args(argv)
    m = load_model(a.model)
    r = end_states(m, a.sequences, a.eval_seed)
    N = m.env.params.num_slots
    stuck = r["unf"] > 0
    print(f"{a.sequences} jobsets, {stuck.sum()} with unallocated jobs ({r['unf'].sum():.0f})")
    for i in np.where(stuck)[0][:15]:
        print(f"  jobset {i}: unallocated {r['unf'][i]:.0f}, running {r['nrun'][i]}, placeable "
              f"{r['placeable'][i]}, greedy {r['a'][i]}, p(void) {r['pvoid'][i]:.3f}, p(jobs) "
              f"{r['pjobs'][i]:.3f}, p(best job) {r['pbest'][i]:.3f}; last 50 steps: void "
              f"{r['tail_void'][i]}, image unchanged {r['tail_same'][i]}")  # fmt: skip
    if stuck.any():
        s = stuck
        print(f"stuck jobsets: mean p(void) {r['pvoid'][s].mean():.3f}, p(jobs) "
              f"{r['pjobs'][s].mean():.3f}, p(best job) {r['pbest'][s].mean():.3f}; cluster idle "
              f"in {(r['nrun'][s] == 0).sum()}, a job placeable in {(r['placeable'][s] > 0).sum()}, "
              f"greedy void in {(r['a'][s] == N).sum()}, fixed point (50 void, 50 unchanged) in "
              f"{((r['tail_void'][s] == 50) & (r['tail_same'][s] == 50)).sum()}, p(jobs) > "
              f"p(void) in {(r['pjobs'][s] > r['pvoid'][s]).sum()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
