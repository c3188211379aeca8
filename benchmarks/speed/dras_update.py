"""Per-update cost of DRAS-PG and DRAS-DQL (spec ``dras.md`` §11: the paper reports < 1 s (PG)
and < 2 s (DQL) per parameter update on a quad-core 2.6 GHz PC).

    PYTHONPATH=. .venv/bin/python benchmarks/speed/dras_update.py [--sizes sdsc,theta]
        [--decisions 100] [--repeat 3] [--variants pg,dql]

One update = one batch of ``--decisions`` decisions (the paper's batch: the decisions of 10
scheduling instances), code mode: PG one Adam step on the summed loss (lr 0.01), DQL one Adam
step per decision with the decision-time gradients (lr 0.001).  Sizes: ``sdsc`` (N = 128, the
shipped 4000/1000 hidden sizes: 4,962,053 / 4,521,003 parameters) and ``theta`` (N = 4,360:
21,890,053 / 21,449,003 parameters).  Inputs are random (the cost does not depend on them).
Compile time is printed separately; the update time is the best of ``--repeat`` calls after it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxsched.nets.dras import make_dras_net, param_count_of  # noqa: E402
from jaxsched.systems.dras.dql import DQLBatch, make_dql  # noqa: E402
from jaxsched.systems.dras.pg import PGBatch, make_pg  # noqa: E402

SIZES = {"sdsc": 128, "theta": 4360}
PAPER_S = {"pg": 1.0, "dql": 2.0}


def _params(net, rows, seed=0):
    shapes = jax.eval_shape(net.init, jax.random.PRNGKey(0), jnp.zeros((rows, 2)))
    rng = np.random.default_rng(seed)
    return jax.tree_util.tree_map(
        lambda s: jnp.asarray(rng.uniform(-0.01, 0.01, s.shape), jnp.float32), shapes
    )


def _batch(variant, rows, c, seed=1):
    rng = np.random.default_rng(seed)
    obs = jnp.asarray(rng.uniform(0, 1, (c, rows, 2)), jnp.float32)
    reward = jnp.asarray(rng.uniform(0, 1, c), jnp.float32)
    valid = jnp.ones(c, bool)
    if variant == "pg":
        act = jnp.asarray(rng.integers(0, 50, c), jnp.int32)
        return PGBatch(obs, act, jnp.full(c, 50, jnp.int32), reward, valid)
    return DQLBatch(obs, reward, valid)


def time_update(variant: str, n_nodes: int, decisions: int, repeat: int) -> dict:
    """Compile and run one update; returns parameters, compile and best update seconds."""
    net, rows = make_dras_net(variant, n_nodes)
    params = _params(net, rows)
    if variant == "pg":
        init, update, _ = make_pg(net.apply, capacity=decisions)
    else:
        init, update = make_dql(net.apply)
    state = jax.jit(init)(params)
    batch = _batch(variant, rows, decisions)
    upd = jax.jit(update, donate_argnums=0)
    t0 = time.perf_counter()
    compiled = upd.lower(state, batch).compile()
    compile_s = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        state, m = compiled(state, batch)
        jax.block_until_ready((state, m))
        best = min(best, time.perf_counter() - t0)
    return {
        "variant": variant,
        "n_nodes": n_nodes,
        "params": param_count_of(net, rows),
        "compile_s": compile_s,
        "update_s": best,
    }


def main(argv=None, out=print) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="sdsc,theta")
    ap.add_argument("--variants", default="pg,dql")
    ap.add_argument("--decisions", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    out(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}); "
        f"{a.decisions} decisions per update")  # fmt: skip
    out(f"{'net':>6} {'var':>4} {'params':>12} {'compile s':>10} {'update s':>9} {'paper':>7}")
    rows = []
    for size in a.sizes.split(","):
        for variant in a.variants.split(","):
            r = time_update(variant, SIZES[size], a.decisions, a.repeat)
            rows.append(r)
            out(f"{size:>6} {variant:>4} {r['params']:>12,} {r['compile_s']:>10.2f} "
                f"{r['update_s']:>9.3f} {'< ' + str(PAPER_S[variant]) + ' s':>7}")  # fmt: skip
    return rows


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    main()
