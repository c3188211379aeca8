"""SchedInspector: spec §8.4 oracle values and environment throughput.

1. ``--oracle``: the base schedulers alone on the reference evaluation sequences of spec §8.2
   (Lublin ``lublin_256.swf``, 50 × 256 jobs, starts ``R.randint(0, M − 256)`` with the gym
   seeding of seed 1 / 2) against the reference environment's values of spec §8.4.
2. ``--throughput``: vectorised inspector-environment steps per second under random
   accept/reject actions (auto-reset), compile time reported apart.
3. ``--reference DIR`` (with ``--throughput``): the reference environment, ``HPCEnvSkip`` of a
   local checkout of DIR-LAB/SchedInspector (never committed here), stepped the same way in the
   same process — random accept/reject with the same probability, a new 128-job training
   sequence (SJF base, first 10,000 jobs) at every episode end, whose ``reset`` runs the base
   scheduler once as ours does — and the ratio of the two.

Usage::

    python benchmarks/speed/schedinspector_env.py --traces ../shared/traces --oracle --throughput \
        [--reference ~/src/SchedInspector] [--devices 1,2] [--env sync,async] [--json F]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from jaxsched.envs import AutoResetWrapper
from jaxsched.envs.schedinspector import SchedInspectorEnv
from jaxsched.train.parallel import expose_host_devices
from jaxsched.workload import read_swf
from jaxsched.workload.sampling import gym_np_random
from jaxsched.workload.schedinspector import inspector_jobs

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import use  # noqa: E402

use("reference")
import reference_sim  # noqa: E402  (the reference loader: stubs for gym/scipy/tensorflow)

REJECT_P = 0.3

#: spec §8.4: (seed, metric, backfill, base) -> reference value
ORACLE = {
    (1, "bsld", "none", "fcfs"): 2165.887,
    (1, "bsld", "none", "lcfs"): 2281.645,
    (1, "bsld", "none", "sqf"): 344.793,
    (1, "bsld", "none", "sjf"): 333.196,
    (1, "bsld", "none", "saf"): 336.901,
    (1, "bsld", "none", "srf"): 406.471,
    (1, "bsld", "none", "f1"): 290.775,
    (1, "bsld", "rlscheduler", "sjf"): 59.048,
    (1, "bsld", "rlscheduler", "f1"): 51.253,
    (2, "util", "none", "sjf"): 0.6149,
    (2, "util", "none", "f1"): 0.6737,
    (2, "util", "rlscheduler", "sjf"): 0.6399,
    (2, "util", "rlscheduler", "f1"): 0.6906,
}


def eval_starts(seed: int, n: int, length: int, m: int) -> list[int]:
    """Spec §8.2: ``R.randint(0, M − L)`` per iteration, R the gym-seeded RandomState."""
    r = gym_np_random(seed)
    return [int(r.randint(0, m - length)) for _ in range(n)]


@jax.jit
def _base_values(env, starts):
    return jax.vmap(lambda s: env.base_values(env.init_state_at(s)))(starts)


def oracle(trace: Path) -> bool:
    jobs, wait = inspector_jobs(read_swf(trace))
    ok = True
    for (seed, metric, bf, base), want in ORACLE.items():
        env = SchedInspectorEnv(jobs, base=base, length=256, backfill=bf, job_slice=0,
                                swf_wait=wait)  # fmt: skip
        starts = jnp.asarray(eval_starts(seed, 50, 256, jobs.n_jobs), jnp.int32)
        got = float(np.mean(np.asarray(_base_values(env, starts)[metric])))
        digits = 3 if metric == "bsld" else 4
        hit = round(got, digits) == want
        ok &= hit
        print(f"seed {seed} {metric:4s} {bf:11s} {base:5s} reference {want:<9} "
              f"ours {got:.6f} {'ok' if hit else 'MISMATCH'}", flush=True)  # fmt: skip
    return ok


def _peak_bytes():
    """The device's peak bytes in use so far in this process (None on the CPU)."""
    stats = jax.devices()[0].memory_stats() or {}
    return stats.get("peak_bytes_in_use")


def _async_run(env, rows: int, steps: int):
    """``run(key) -> (episodes ended, loop iterations)``: ``rows`` environments on the
    asynchronous rows (issue 48, ``env.run_async``), ``steps`` decisions each, a random
    accept/reject per row and decision (reject with ``REJECT_P`` where allowed)."""

    def run(key):
        keys = jax.random.split(key, rows + 1)
        st, ts = jax.vmap(env.reset)(keys[1:])

        def decide_fn(r, d, tk):
            ks = jax.vmap(lambda a, b: jax.random.fold_in(jax.random.fold_in(keys[0], a), b))(r, d)
            a = jax.vmap(lambda k: jax.random.bernoulli(k, REJECT_P))(ks).astype(jnp.int32)
            return jnp.where(tk.observation.mask[:, 1], a, 0), {}

        out = env.run_async(decide_fn, st, ts.replace(observation=None), steps, max(8, rows // 4))
        return out[2]["done"].sum(), out[2]["iterations"]

    return run


def throughput(
    trace: Path, batch: int, steps: int, backfill: str, devices: int = 1, mode: str = "sync"
) -> dict:
    """Ours: ``batch`` environments × ``steps`` random accept/reject steps. With ``devices`` >
    1 the environments are split over that many devices (``shard_map``: each device steps
    ``batch / devices`` of them with its own key, on its own thread). ``mode``: ``sync`` (one
    batch step per decision) or ``async`` (the asynchronous rows, one device, backfilling
    only). Returns a dict: steps_per_s, compile_s, run_s, episodes, peak_bytes_per_row
    (None on the CPU), async_iterations_per_decision (async only)."""
    jobs, wait = inspector_jobs(read_swf(trace))
    env = AutoResetWrapper(SchedInspectorEnv(jobs, length=128, backfill=backfill, swf_wait=wait))
    rows = batch // devices

    def run(key):
        keys = jax.random.split(key, rows)
        st, ts = jax.vmap(env.reset)(keys)

        def body(c, k):
            st, ts = c
            a = jax.random.bernoulli(k, REJECT_P, (rows,)).astype(jnp.int32)
            a = jnp.where(ts.observation.mask[:, 1], a, 0)
            st, ts = jax.vmap(env.step)(st, a)
            return (st, ts), ts.last().sum()

        ended = jax.lax.scan(body, (st, ts), jax.random.split(key, steps))[1].sum()
        return ended, jnp.zeros((), jnp.int32)

    if mode == "async":
        if devices != 1 or backfill == "none":
            raise ValueError("the async rows run on one device, with backfilling")
        f, key_of = jax.jit(_async_run(env, rows, steps)), lambda k: k
    elif devices == 1:
        f, key_of = jax.jit(run), lambda k: k
    else:
        mesh = jax.sharding.Mesh(np.array(jax.devices()[:devices]), ("rows",))
        one_each = lambda keys: jax.tree_util.tree_map(lambda x: x[None], run(keys[0]))  # noqa: E731
        f = jax.jit(jax.shard_map(one_each, mesh=mesh, in_specs=P("rows"), out_specs=P("rows"),
                                  check_vma=False))  # fmt: skip
        key_of = lambda k: jax.random.split(k, devices)  # noqa: E731
    t0 = time.perf_counter()
    c = f.lower(key_of(jax.random.PRNGKey(0))).compile()
    t1 = time.perf_counter()
    jax.block_until_ready(c(key_of(jax.random.PRNGKey(1))))
    t2 = time.perf_counter()
    ended, iters = c(key_of(jax.random.PRNGKey(2)))
    episodes = int(np.sum(ended))
    t3 = time.perf_counter()
    sps = batch * steps / (t3 - t2)
    peak = _peak_bytes()
    print(f"backfill {backfill} {mode}: {batch} envs on {devices} device(s) x {steps} steps: "
          f"compile {t1 - t0:.1f} s, {sps:,.0f} steps/s (run {t3 - t2:.2f} s, first run "
          f"{t2 - t1:.2f} s, {episodes} episodes ended"
          + (f", {int(np.sum(iters)) / steps:.2f} loop iterations per decision" if mode == "async" else "")
          + (f", peak {peak / batch / 1024:,.0f} KiB per row" if peak else "") + ")",
          flush=True)  # fmt: skip
    return {
        "backfill": backfill, "mode": mode, "batch": batch, "devices": devices, "steps": steps,
        "steps_per_s": sps, "compile_s": t1 - t0, "run_s": t3 - t2, "episodes": episodes,
        "peak_bytes_per_row": peak / batch if peak else None,
        "async_iterations_per_decision": int(np.sum(iters)) / steps if mode == "async" else None,
    }  # fmt: skip


def reference_throughput(ref_dir, trace: Path, steps: int, backfill: str) -> float:
    """The reference environment (``HPCSimSkip.HPCEnvSkip`` of the checkout ``ref_dir``, SJF
    base, training sequences of 128 jobs from the first 10,000): ``steps`` random accept /
    reject steps, ``reset`` at every episode end (included in the time); steps/s."""
    mod = reference_sim.load_reference(
        ref_dir, module="HPCSimSkip", cls="HPCEnvSkip", repo="DIR-LAB/SchedInspector"
    )
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = reference_sim._plain_swf(Path(trace), Path(tmp))
        with contextlib.redirect_stdout(io.StringIO()):
            env = mod.HPCEnvSkip(backfil=backfill == "rlscheduler", batch_job_slice=10000,
                                 sched_algo=4)  # fmt: skip
            env.seed(0)
            env.my_init(workload_file=os.fspath(path))
        episodes, t0 = 0, time.perf_counter()
        env.reset()
        for _ in range(steps):
            if env.step(int(rng.random() < REJECT_P))[2]:
                episodes += 1
                env.reset()
        dt = time.perf_counter() - t0
    print(f"backfill {backfill}: reference HPCEnvSkip, 1 env x {steps} steps: "
          f"{steps / dt:,.0f} steps/s (run {dt:.2f} s, {episodes} episodes ended)",
          flush=True)  # fmt: skip
    return steps / dt


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--traces", default="../shared/traces")
    p.add_argument("--oracle", action="store_true")
    p.add_argument("--throughput", action="store_true")
    p.add_argument("--batch", default="100", help="environments; a comma list times each (100)")
    p.add_argument("--steps", type=int, default=512)
    p.add_argument("--backfills", default="none,rlscheduler", help="modes to time (both)")
    p.add_argument("--reference", default=None, help="a checkout of DIR-LAB/SchedInspector")
    p.add_argument("--reference-steps", type=int, default=20000)
    p.add_argument(
        "--devices",
        default="1",
        help="comma-separated device counts to split the environments over, each printed "
        "(default 1; on a CPU the script splits the host into the largest count first)",
    )
    p.add_argument(
        "--env",
        default="sync",
        help="sync (one batch step per decision) and/or async (the asynchronous rows, issue 48: "
        "backfilling only, one device), comma-separated",
    )
    p.add_argument("--json", default=None, help="write the throughput rows here")
    a = p.parse_args()
    if any(m not in ("sync", "async") for m in a.env.split(",") if m):
        p.error("--env takes sync and/or async")
    try:
        counts = [int(x) for x in a.devices.split(",") if x]
    except ValueError:
        counts = []
    try:
        batches = [int(x) for x in a.batch.split(",") if x]
    except ValueError:
        batches = []
    if not batches or min(batches) < 1:
        p.error("--batch takes counts >= 1")
    if not counts or min(counts) < 1 or any(b % d for b in batches for d in counts):
        p.error("--devices takes counts >= 1 that divide --batch")
    expose_host_devices(max(counts))  # JAX has not used a device yet
    if max(counts) > jax.device_count():
        p.error(f"--devices {max(counts)}: {jax.device_count()} device(s) visible")
    tdir = Path(a.traces)
    if a.oracle:
        print("all oracle values reproduced" if oracle(tdir / "lublin_256.swf.gz") else "MISMATCH")
    if a.throughput:
        rows = []
        modes = [m for m in a.env.split(",") if m]
        for bf in [b for b in a.backfills.split(",") if b]:
            ours = {}
            for b in batches:
                for m in modes:
                    for d in counts if m == "sync" else ([1] if bf != "none" else []):
                        r = throughput(tdir / "lublin_256.swf.gz", b, a.steps, bf, d, m)
                        rows.append(r)
                        ours[(m, b, d)] = r["steps_per_s"]
            if a.reference:
                ref = reference_throughput(
                    a.reference, tdir / "lublin_256.swf.gz", a.reference_steps, bf
                )
                for (m, b, d), sps in ours.items():
                    print(f"backfill {bf}: ours ({m}, B = {b}) on {d} device(s) / reference = "
                          f"{sps / ref:,.1f}x", flush=True)  # fmt: skip
        if a.json:
            info = {"load": os.getloadavg(), "devices": [str(d) for d in jax.devices()]}
            Path(a.json).write_text(json.dumps({"machine": info, "rows": rows}, indent=1))


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    main()
