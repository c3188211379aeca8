"""RLScheduler training on one device against data-parallel training on ``--devices N``: seconds
per epoch (after compilation) and how far apart the two runs' parameters and metrics end.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/train_devices.py [--devices 2] [--epochs 3]
        [--trajectories 16] [--length 128] [--trace traces/lublin-1.swf] [--json FILE]

Both trainers start from the same initial state and train ``--epochs`` epochs of the same
settings (the kernel networks on slot prefixes, as ``jaxsched train rlscheduler``); the
difference is the split of the trajectories over the devices and the ``psum`` of the batch
sums (:mod:`jaxsched.train.parallel`), so the results agree up to float rounding. On a CPU
without enough devices the script fakes them (``XLA_FLAGS=--xla_force_host_platform_
device_count=N``, set before JAX starts): each host device then runs on a core of its own, so
on a 2-core CPU two devices are also faster (1.2-1.45x per epoch with backfilling, RESULTS.md
§4.4); on a machine with N GPUs the same command measures the real speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO  # noqa: E402


def _fake_cpu_devices(n: int) -> None:
    """Expose ``n`` CPU devices unless XLA_FLAGS already sets a count (before JAX starts)."""
    from jaxsched.train.parallel import expose_host_devices

    expose_host_devices(n)


def _timed_epochs(trainer, state, epochs: int):
    import jax

    t0 = time.perf_counter()
    state, m = trainer.update(state)
    jax.block_until_ready(state)
    first = time.perf_counter() - t0
    metrics, times = [jax.device_get(m)], []
    for _ in range(epochs - 1):
        t0 = time.perf_counter()
        state, m = trainer.update(state)
        jax.block_until_ready(state)
        times.append(time.perf_counter() - t0)
        metrics.append(jax.device_get(m))
    return state, metrics, first, times


def _differences(a_tree, b_tree) -> dict:
    """How far two parameter trees are apart: ``rel_l2`` = ``|a - b| / |a|`` over all float
    leaves together, and the leaf with the largest ``max|a - b| / max|a|`` (its path, that
    ratio and its ``max|a|``; a leaf whose gradient is zero in exact arithmetic, such as the
    output bias of a softmax policy, holds only rounding noise that Adam turns into full
    steps)."""
    import jax
    import numpy as np

    num = den = 0.0
    worst = {"leaf": "", "rel_max": 0.0, "leaf_max_abs": 0.0}
    for path, a in jax.tree_util.tree_leaves_with_path(a_tree):
        b = np.asarray(jax.device_get(_get(b_tree, path)))
        a = np.asarray(jax.device_get(a))
        if a.dtype.kind != "f" or not a.size:
            continue
        num += float(np.sum((a - b).astype(np.float64) ** 2))
        den += float(np.sum(a.astype(np.float64) ** 2))
        scale = max(float(np.max(np.abs(a))), 1e-12)
        r = float(np.max(np.abs(a - b))) / scale
        if r > worst["rel_max"]:
            worst = {"leaf": jax.tree_util.keystr(path), "rel_max": r, "leaf_max_abs": scale}
    return {"rel_l2": (num / max(den, 1e-300)) ** 0.5, **worst}


def _get(tree, path):
    for k in path:
        tree = tree[getattr(k, "key", getattr(k, "idx", None))]
    return tree


def run(args, out=print) -> dict:
    import jax
    import numpy as np

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    from jaxsched import nets
    from jaxsched.envs import AutoResetWrapper
    from jaxsched.systems.rlscheduler.config import RunConfig, make_env, prefix_options
    from jaxsched.train import parallel
    from jaxsched.train.ppo import PPOConfig, make_train
    from jaxsched.workload import read_swf

    jobs = read_swf(args.trace).jobs("rlscheduler")
    ppo = PPOConfig(num_envs=args.trajectories, max_episode_steps=args.length).to_dict()
    rc = RunConfig(trace=str(args.trace), length=args.length, ppo=ppo)
    env = AutoResetWrapper(make_env(jobs, rc))

    def build(dp):
        return make_train(rc.ppo_config(), env, nets.make_policy(rc.policy),
                          nets.make_value(rc.value), data_axis=dp, **prefix_options(rc))  # fmt: skip

    n = parallel.resolve_devices(args.devices)
    one = build(None)
    many = parallel.data_parallel(build(parallel.DATA_AXIS), n)
    s0 = one.init(jax.random.PRNGKey(args.seed))
    res = {"devices": n, "device_kind": jax.devices()[0].device_kind, "epochs": args.epochs,
           "trajectories": args.trajectories, "length": args.length,
           "load_average": os.getloadavg()[0]}  # fmt: skip
    finals = {}
    for name, tr in (("1", one), (str(n), many)):
        s, ms, first, times = _timed_epochs(tr, s0, args.epochs)
        finals[name] = (s, ms)
        res[f"first_epoch_s_{name}"] = round(first, 2)
        res[f"epoch_s_{name}"] = round(float(np.median(times)), 3) if times else None
        out(f"  {name} device(s): first epoch (with compile) {first:.1f} s, then "
            + (f"{np.median(times):.3f} s/epoch (median of {len(times)})" if times else "-"))  # fmt: skip
    (s1, m1), (sn, mn) = finals["1"], finals[str(n)]
    res["policy_diff"] = _differences(s1.policy_params, sn.policy_params)
    res["value_diff"] = _differences(s1.value_params, sn.value_params)
    keys = ("episode_return", "pi_loss", "v_loss", "approx_kl", "pi_iters")
    res["metrics"] = {k: [[float(m[k]) for m in m1], [float(m[k]) for m in mn]] for k in keys}
    pd, vd = res["policy_diff"], res["value_diff"]
    same = res["metrics"]["episode_return"][0] == res["metrics"]["episode_return"][1]
    out(f"  after {args.epochs} epochs: |diff|/|params| policy {pd['rel_l2']:.2e}, value "
        f"{vd['rel_l2']:.2e}; worst leaf {pd['leaf']} {pd['rel_max']:.2e} of its max "
        f"{pd['leaf_max_abs']:.2e}; episode returns {'identical' if same else 'differ'}")  # fmt: skip
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--devices", default="2", help="N or all (default 2)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--trajectories", type=int, default=16)
    p.add_argument("--length", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--trace", default=str(REPO / "traces" / "lublin-1.swf"))
    p.add_argument("--json", default=None, metavar="FILE")
    p.add_argument("--cache", default=None, metavar="DIR", help="JAX compile cache folder")
    args = p.parse_args(argv)
    if args.cache:
        from jaxsched.compile_cache import use_cache_dir

        use_cache_dir(args.cache, 1.0)
    if args.devices != "all":
        _fake_cpu_devices(int(args.devices))  # only takes effect on a CPU-only machine
    res = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
