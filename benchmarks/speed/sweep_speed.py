"""A sweep over seeds as one compiled call against the same seeds one after another.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/sweep_speed.py [--seeds 8] [--epochs 3]
        [--trajectories 8] [--length 128] [--iters 20] [--trace traces/lublin-1.swf]
        [--json FILE]

RLScheduler's PPO update (kernel networks, slot prefixes, compat mode, no backfilling) on
Lublin-1, small epochs (``--trajectories`` sequences of ``--length`` jobs, ``--iters`` policy
and value steps): ``--seeds`` seeds trained for ``--epochs`` epochs

* sequentially: one compiled update (``make_train(...).update``), called for each seed in turn
  — what 8 ``jaxsched train --seed s`` runs do, minus their 8 compilations;
* batched: the seeds' states stacked and the update vmapped over them
  (:class:`jaxsched.train.sweep.SeedSweep`, what ``jaxsched train --seeds`` runs; with
  ``--flat-rollout`` the trainer's ``sweep_update``: the rollouts of all seeds as one flat
  batch of environments and the learning vmapped).

Each program is compiled ahead of time (``lower().compile()``, timed and reported apart);
the run times are the updates only (host transfer of the metrics included, no checkpoints or
logs).  Also printed: the largest difference between the two ways' final parameters (float
rounding: the batched program sums in another order) and the machine's load average, since
the development machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
import jax  # noqa: E402
import numpy as np  # noqa: E402

# a whole program: 64-bit mode for its process (jaxsched/precision.py)
jax.config.update("jax_enable_x64", True)
from benchmarks.common import REPO  # noqa: E402
from jaxsched import nets  # noqa: E402
from jaxsched.envs import AutoResetWrapper  # noqa: E402
from jaxsched.systems.rlscheduler.config import RunConfig, make_env, prefix_options  # noqa: E402
from jaxsched.train import PPOConfig, make_train  # noqa: E402
from jaxsched.train.sweep import SEED_AXIS, SeedSweep, stack_trees, tree_index  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402


def _trainer(jobs, args, seed_axis=None):
    ppo = PPOConfig(
        num_envs=args.trajectories,
        max_episode_steps=args.length,
        train_pi_iters=args.iters,
        train_v_iters=args.iters,
    )
    rc = RunConfig(trace=str(args.trace), length=args.length, ppo=ppo.to_dict())
    opts = prefix_options(rc)
    if seed_axis:
        opts["seed_axis"] = seed_axis
    env = AutoResetWrapper(make_env(jobs, rc))
    return make_train(ppo, env, nets.make_policy("kernel"), nets.make_value("kernel"), **opts)


def _compiled(fn, *args):
    t = time.perf_counter()
    c = fn.lower(*args).compile()
    return c, time.perf_counter() - t


def sequential(jobs, args, seeds):
    tr = _trainer(jobs, args)
    states = [tr.init(jax.random.PRNGKey(s)) for s in seeds]
    upd, compile_s = _compiled(tr.update, states[0])
    t = time.perf_counter()
    for i in range(len(states)):
        for _ in range(args.epochs):
            states[i], m = upd(states[i])
            jax.device_get(m)
    return states, compile_s, time.perf_counter() - t


def batched(jobs, args, seeds):
    tr = _trainer(jobs, args, SEED_AXIS)
    st = stack_trees([tr.init(jax.random.PRNGKey(s)) for s in seeds])
    upd, compile_s = _compiled(SeedSweep(tr, args.flat_rollout).update, st)
    t = time.perf_counter()
    for _ in range(args.epochs):
        st, m = upd(st)
        jax.device_get(m)
    return [tree_index(st, i) for i in range(len(seeds))], compile_s, time.perf_counter() - t


def _max_diff(a, b) -> float:
    return max(
        float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64))))
        for s, t in zip(a, b)
        for x, y in zip(
            jax.tree_util.tree_leaves(s.policy_params), jax.tree_util.tree_leaves(t.policy_params)
        )
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--trajectories", type=int, default=8)
    p.add_argument("--length", type=int, default=128)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--trace", type=Path, default=REPO / "traces" / "lublin-1.swf")
    p.add_argument("--json", default=None, metavar="FILE")
    p.add_argument(
        "--flat-rollout",
        action="store_true",
        help="batched = the trainer's sweep_update (all seeds' rollouts as one flat batch)",
    )
    p.add_argument(
        "--cache",
        default=None,
        metavar="DIR",
        help="JAX's persistent compile cache (then the compile times are mostly cache loads)",
    )
    args = p.parse_args(argv)
    if args.cache:
        jax.config.update("jax_compilation_cache_dir", args.cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    jobs = read_swf(args.trace).jobs("rlscheduler")
    seeds = list(range(args.seeds))
    load0 = os.getloadavg()
    seq, seq_c, seq_r = sequential(jobs, args, seeds)
    bat, bat_c, bat_r = batched(jobs, args, seeds)
    load1 = os.getloadavg()
    res = {
        "device": str(jax.devices()[0]),
        "seeds": args.seeds,
        "epochs": args.epochs,
        "trajectories": args.trajectories,
        "length": args.length,
        "iters": args.iters,
        "sequential_compile_s": round(seq_c, 2),
        "sequential_run_s": round(seq_r, 2),
        "batched_compile_s": round(bat_c, 2),
        "batched_run_s": round(bat_r, 2),
        "speedup": round(seq_r / bat_r, 2),
        "max_param_diff": _max_diff(seq, bat),
        "load_avg_1min": [round(load0[0], 2), round(load1[0], 2)],
    }
    u = args.seeds * args.epochs
    print(
        f"{args.seeds} seeds x {args.epochs} epochs ({args.trajectories} x {args.length}-job "
        f"sequences, {args.iters} pi/v iters) on {res['device']}\n"
        f"  sequential: compile {seq_c:6.1f} s, run {seq_r:7.2f} s ({seq_r / u:.3f} s/update)\n"
        f"  batched:    compile {bat_c:6.1f} s, run {bat_r:7.2f} s ({bat_r / u:.3f} s/update)\n"
        f"  speed-up (run): {seq_r / bat_r:.2f}x; largest policy-parameter difference "
        f"{res['max_param_diff']:.2g}; load average {load0[0]:.1f} -> {load1[0]:.1f}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
