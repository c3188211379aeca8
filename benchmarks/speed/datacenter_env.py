"""Data-centre environment throughput: jaxsched's DataCenterEnv (vmapped, auto-reset, image
observation every step) against the reference DeepRM environment stepped in Python.

Both run DeepRM's ``parameters.py`` configuration (5 slots, horizon 20, 10 slots per resource,
jobsets of 10 entries, ``all_done``, rate 0.7) with uniformly random actions over the N + 1
actions (implicit voids included) and reset themselves when an episode ends. Ours runs in the
``deeprm`` compatibility mode (the reference's semantics) with a 200-step cap; compilation is
timed apart from the steady state.

The reference is read from a local checkout of hongzimao/deeprm given with ``--deeprm DIR``
(never part of this repository; the row is skipped without it). Its modules are Python 2: they
are loaded in memory with the few changes Python 3 needs (``xrange``, print statements, integer
``/``), with stand-ins for ``theano`` and ``matplotlib`` (only their names are used when stepping).

    python benchmarks/speed/datacenter_env.py [--deeprm DIR] [--batch 1,256,4096] [--steps 200]

``--a2c-envs 16,64`` also times one A2C update (``jaxsched train a2c``'s defaults: conv16,
5 steps per environment, masked actions, Adam) at each number of environments, with the
networks' im2col convolution (:class:`jaxsched.nets.a2cscheduler.Conv3x3`) and with Flax's
``nn.Conv`` in its place, side by side in one run.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import types
from pathlib import Path

import numpy as np


def _py3(src: str) -> str:
    src = re.sub(r"\bxrange\b", "range", src)
    src = re.sub(r'^(\s*)print (".*")\s*$', r"\1print(\2)", src, flags=re.M)
    src = src.replace("curr_size / backlog_width", "curr_size // backlog_width")
    return re.sub(r"(job_len|max_nw_size) (\* 2 )?/ (\d)", r"\1 \2// \3", src)


def load_reference(root: Path):
    """The reference's ``parameters`` and ``environment`` modules, loaded in memory
    (``sys.modules`` is left as it was)."""
    theano = types.ModuleType("theano")
    theano.config = types.SimpleNamespace(floatX="float32")
    plt = types.ModuleType("matplotlib.pyplot")
    mpl = types.ModuleType("matplotlib")
    mpl.pyplot = plt
    names = ("theano", "matplotlib", "matplotlib.pyplot", "job_distribution", "parameters")
    names += ("environment",)
    saved = {n: sys.modules[n] for n in names if n in sys.modules}
    sys.modules.update({"theano": theano, "matplotlib": mpl, "matplotlib.pyplot": plt})
    mods = {}
    try:
        for name in ("job_distribution", "parameters", "environment"):
            mod = types.ModuleType(name)
            sys.modules[name] = mod
            path = root / f"{name}.py"
            exec(compile(_py3(path.read_text()), str(path), "exec"), mod.__dict__)
            mods[name] = mod
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)
    return mods["parameters"], mods["environment"]


def reference_steps_per_s(root: Path, rate: float, steps: int, seed: int = 0, modules=None):
    """Steps per second of one reference environment under uniformly random actions
    (``modules``: :func:`load_reference`'s, else loaded from ``root``)."""
    params_mod, env_mod = modules or load_reference(root)
    pa = params_mod.Parameters()
    pa.new_job_rate = rate
    env = env_mod.Env(pa, seed=42, render=False, repre="image", end="all_done")
    rng = np.random.RandomState(seed)
    acts = rng.randint(0, pa.num_nw + 1, size=steps)
    t0 = time.perf_counter()
    for a in acts:
        env.step(int(a))
    return steps / (time.perf_counter() - t0)


def jax_steps_per_s(batch: int, steps: int, rate: float, repeats: int = 3):
    """``(steps/s, compile seconds)`` of ``batch`` environments × ``steps`` steps."""
    import jax
    import jax.numpy as jnp

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    from jaxsched.envs import AutoResetWrapper, DataCenterEnv
    from jaxsched.sim.datacenter import deeprm_params

    env = AutoResetWrapper(DataCenterEnv(params=deeprm_params(step_cap=200), rate=rate))

    @jax.jit
    def run(key, acts):
        state, _ = jax.vmap(env.reset)(jax.random.split(key, batch))

        def body(s, a):
            s, ts = jax.vmap(env.step)(s, a)
            return s, jnp.sum(ts.reward) + jnp.sum(ts.observation.image[:, 0, 0])

        return jax.lax.scan(body, state, acts)[1]

    acts = jax.random.randint(jax.random.PRNGKey(1), (steps, batch), 0, 6, jnp.int32)
    t0 = time.perf_counter()
    run(jax.random.PRNGKey(0), acts).block_until_ready()
    first = time.perf_counter() - t0
    best = float("inf")
    for r in range(repeats):
        t0 = time.perf_counter()
        run(jax.random.PRNGKey(r + 2), acts).block_until_ready()
        best = min(best, time.perf_counter() - t0)
    return batch * steps / best, max(first - best, 0.0)


def a2c_update_seconds(num_envs: int, conv: str, updates: int = 5) -> tuple[float, float]:
    """``(seconds per A2C update, compile seconds)`` at ``num_envs`` environments; ``conv``
    "im2col" (ours) or "flax" (``nn.Conv``, same parameters)."""
    import flax.linen as nn
    import jax

    import jaxsched.nets.a2cscheduler as nets
    from jaxsched.systems.a2cscheduler.config import RunConfig
    from jaxsched.systems.a2cscheduler.run import Trainer

    class FlaxConv(nn.Module):
        features: int

        @nn.compact
        def __call__(self, x):
            return nn.Conv(self.features, (3, 3), padding="SAME")(x)

    ours = nets.Conv3x3
    nets.Conv3x3 = FlaxConv if conv == "flax" else ours
    try:
        rc = RunConfig(num_envs=num_envs, mask=True, optimizer="adam", lr=1e-4,
                       updates_per_epoch=updates)  # fmt: skip
        trainer = Trainer(rc)
        state = trainer.init_state()
        t0 = time.perf_counter()
        state, m = trainer.update(state)
        jax.block_until_ready(m)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        jax.block_until_ready(trainer.update(state))
        steady = time.perf_counter() - t0
    finally:
        nets.Conv3x3 = ours
    return steady / updates, max(first - steady, 0.0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deeprm", type=Path, default=None, help="checkout of hongzimao/deeprm")
    ap.add_argument("--batch", default="1,256,4096", help="comma-separated batch sizes")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--ref-steps", type=int, default=3000)
    ap.add_argument("--rate", type=float, default=0.7)
    ap.add_argument("--a2c-envs", default="", help="comma-separated numbers of environments")
    args = ap.parse_args(argv)
    ref = None
    if args.deeprm is not None and (args.deeprm / "environment.py").is_file():
        ref = reference_steps_per_s(args.deeprm, args.rate, args.ref_steps)
        print(f"reference DeepRM env (Python, one env): {ref:,.0f} steps/s")
    else:
        print("reference DeepRM env: skipped (no --deeprm checkout)")
    print(f"{'batch':>7} {'jax steps/s':>14} {'compile s':>10} {'x reference':>12}")
    for b in (int(x) for x in args.batch.split(",")):
        sps, comp = jax_steps_per_s(b, args.steps, args.rate)
        ratio = f"{sps / ref:,.0f}" if ref else "-"
        print(f"{b:>7} {sps:>14,.0f} {comp:>10.1f} {ratio:>12}")
    if args.a2c_envs:
        print(
            f"\n{'A2C envs':>8} {'conv':>7} {'ms/update':>10} {'env steps/s':>12} {'compile s':>10}"
        )
        for e in (int(x) for x in args.a2c_envs.split(",")):
            times = {c: a2c_update_seconds(e, c) for c in ("flax", "im2col")}
            for c, (sec, comp) in times.items():
                print(f"{e:>8} {c:>7} {sec * 1e3:>10.1f} {e * 5 / sec:>12,.0f} {comp:>10.1f}")
            print(f"{e:>8} {'ratio':>7} {times['flax'][0] / times['im2col'][0]:>10.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
