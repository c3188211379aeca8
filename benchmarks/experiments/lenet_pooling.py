"""LeNet's 2x2 max-pooling on the CPU: ``nn.max_pool`` (XLA ``reduce_window``) against
:func:`jaxsched.nets.max_pool_2x2` (a reshape and a max), side by side in one process.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/lenet_pooling.py [--batch 5120] [--rounds 3]

Times one gradient of the LeNet policy (:class:`jaxsched.nets.LeNetPolicy`, 128 slots x 8
features, a log-softmax loss) over ``--batch`` observations with each pooling, compilation
apart, in alternating rounds (best of each), and prints the ratio. The two give the same
values and gradient (``tests/nets/test_rlscheduler_nets.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jaxsched.nets.rlscheduler as R  # noqa: E402

POOLS = {
    "reduce_window": lambda y: nn.max_pool(y, (2, 2), strides=(2, 2), padding="VALID"),
    "reshape": R.max_pool_2x2,
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=5120)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    x = jax.random.normal(jax.random.PRNGKey(1), (args.batch, 128, 8))
    fns = {}
    for name, pool in POOLS.items():
        saved, R.max_pool_2x2 = R.max_pool_2x2, pool
        try:
            net = R.LeNetPolicy()
            p = net.init(jax.random.PRNGKey(2), x[:2])
            f = jax.jit(
                jax.grad(lambda p, x, net=net: jnp.sum(jax.nn.log_softmax(net.apply(p, x))[:, 0]))
            )
            t0 = time.perf_counter()
            c = f.lower(p, x).compile()
            print(f"{name:14s} compile {time.perf_counter() - t0:6.2f} s")
        finally:
            R.max_pool_2x2 = saved
        fns[name] = (c, p)
    best = {k: float("inf") for k in fns}
    for _ in range(args.rounds):
        for name, (c, p) in fns.items():
            jax.block_until_ready(c(p, x))
            t0 = time.perf_counter()
            jax.block_until_ready(c(p, x))
            best[name] = min(best[name], time.perf_counter() - t0)
    for name, t in best.items():
        print(
            f"{name:14s} one gradient over {args.batch} observations: {t:.3f} s (best of {args.rounds})"
        )
    print(f"reduce_window / reshape = {best['reduce_window'] / best['reshape']:.2f}x")
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
