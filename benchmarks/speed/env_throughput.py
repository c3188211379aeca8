"""Vectorised stepping speed of the RLScheduler environment on the local JAX device.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/env_throughput.py [--batch 1,16,64,256]
        [--steps 256] [--backfill none,rlscheduler] [--env closed,arg,async] [--length 256]
        [--repeats 2] [--trace PATH] [--seed 0] [--devices 1,2] [--json FILE]

Workload: ``RLSchedulerEnv(read_swf(trace).jobs("rlscheduler"), length=256, backfill=B,
compat=True)`` (Lublin-1 by default) inside :class:`AutoResetWrapper`, so finished episodes are
replaced by freshly sampled sequences and the rollout never stops. For every batch size B the
script compiles ONE function: ``jax.jit`` of a ``lax.scan`` of S steps whose body draws a
uniformly random *valid* action for each of the B environments (uniform over the slots the
mask allows) and applies ``vmap(env.step)``. The compile time (tracing + XLA compilation,
ahead of time) is reported on its own; the compiled scan then runs once from the reset states
(warm-up, not timed) and ``--repeats`` more times, each from where the previous run stopped
(so the timed runs see steady-state queues, not only fresh episodes); throughput = B × S /
(best run time), in environment steps (= agent decisions) per second. Only the per-step
rewards and the number of finished episodes leave the scan, so the figure is the
environment's own cost (plus the random action draw).

By default the jitted function closes over the env (``--env closed``), as a training loop
does: the env's trace data are compile-time constants and ``step`` compiles only its backfill
mode's path. ``--env arg`` passes the env as an argument instead (as ``jit_step`` does: one
executable for every env of the same shapes, both paths compiled behind a ``lax.cond``).

``--devices 1,2`` runs every row again with the batch split over two devices (``shard_map``:
each device steps its half of the environments on its own thread). On a CPU the script first
splits the host into that many devices (``XLA_FLAGS=--xla_force_host_platform_device_count``,
before JAX starts), so the two rows compare one core's worth of XLA:CPU threading against
one program per core, side by side in one process.

Reference figure: the original RLScheduler simulator (SchedGym's ``HPCEnv``, observation
building included) makes about 2,200 environment steps per second on the 2-core development
machine; the ratio to it is printed for every row. ``--reference DIR`` (a clone of
DIR-LAB/deep-batch-scheduler) steps that environment in this process instead (random valid
actions, resets with their SJF and F1 runs included; ``--reference-steps`` per backfilling
mode) and the ratios are to the figure measured here, on this machine.
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
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from benchmarks.common import REPO, machine_info, use  # noqa: E402
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv  # noqa: E402
from jaxsched.train.parallel import expose_host_devices  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402

DEFAULT_TRACE = REPO / "traces" / "lublin-1.swf"
#: environment steps per second of the reference simulator on this 2-core machine
REFERENCE_STEPS_PER_S = 2200.0


def random_valid_actions(key, mask):
    """One action per row of ``mask`` (bool ``[B, A]``), uniform over the True slots (slot 0
    where a row has none): one uniform number per row, scaled to the number of True slots.
    The env fills the observation slots from the front, so the True slots are a prefix and the
    k-th of them is slot k; the second output counts rows where that does not hold (checked,
    it must stay 0)."""
    B, A = mask.shape
    n = jnp.sum(mask, axis=1, dtype=jnp.int32)
    k = jnp.floor(jax.random.uniform(key, (B,)) * n).astype(jnp.int32)
    k = jnp.clip(k, 0, jnp.maximum(n - 1, 0))
    prefix = jnp.arange(A, dtype=jnp.int32)[None, :] < n[:, None]
    return k, jnp.sum(jnp.any(prefix != mask, axis=1))


def rollout(env, steps: int, state, ts, key):
    """``steps`` vmapped auto-reset steps of ``env`` with random valid actions from
    ``(state, ts)`` (a batch): ``(state, ts, key, reward_sum, episodes, bad_masks)``."""
    step = jax.vmap(env.step)

    def body(carry, _):
        st, ts, key = carry
        key, sub = jax.random.split(key)
        a, bad = random_valid_actions(sub, ts.observation.mask)
        st, ts = step(st, a)
        return (st, ts, key), (jnp.sum(ts.reward), jnp.sum(ts.last()), bad)

    (state, ts, key), (rew, ends, bad) = jax.lax.scan(body, (state, ts, key), None, length=steps)
    return state, ts, key, jnp.sum(rew), jnp.sum(ends), jnp.sum(bad)


def make_rollout(env, steps: int, env_as_argument: bool = False):
    """``(rollout, prefix)``: ``rollout(*prefix, state, ts, key) -> (state, ts, key,
    reward_sum, episodes, bad_masks)`` runs ``steps`` vmapped auto-reset steps with random
    valid actions (jitted; compiled once per batch size).

    By default the jitted function closes over ``env`` (as a training loop does): its trace
    data are compile-time constants and ``step`` compiles only the path of its backfill mode.
    With ``env_as_argument`` the env is passed as an argument (as ``jit_step`` does): one
    compiled function serves every env of the same shapes, and both the closed-form and the
    engine path are compiled behind a ``lax.cond``."""
    if env_as_argument:
        return jax.jit(lambda env, *a: rollout(env, steps, *a)), (env,)
    return jax.jit(lambda *a: rollout(env, steps, *a)), ()


def make_async_rollout(env, steps: int, chunk: int = 0):
    """:func:`make_rollout` on the asynchronous-rows loop (issue 48; ``env.run_async`` of the
    auto-reset wrapper, :mod:`jaxsched.envs.async_rows`): every row takes ``steps`` decisions,
    one micro-step per row per loop iteration, random valid actions drawn per row and decision
    (``chunk``: rows that may decide per iteration, 0 = ``max(8, B // 4)``). ``ts`` carries no
    observation (pass ``ts.replace(observation=None)``); the sixth output is the number of
    loop iterations (no mask check: the k-th valid slot is drawn from the mask itself)."""

    def run(state, ts, key):
        key, sub = jax.random.split(key)
        B = ts.reward.shape[0]

        def decide_fn(rows, t, tk):
            ks = jax.vmap(lambda r, d: jax.random.fold_in(jax.random.fold_in(sub, r), d))(rows, t)
            u = jax.vmap(jax.random.uniform)(ks)
            mask = tk.observation.mask
            n = jnp.sum(mask, axis=1, dtype=jnp.int32)
            a = jnp.clip(jnp.floor(u * n).astype(jnp.int32), 0, jnp.maximum(n - 1, 0))
            return a, {}

        K = chunk or max(8, B // 4)
        state, ts, out = env.run_async(decide_fn, state, ts, steps, K)
        return state, ts, key, jnp.sum(out["reward"]), jnp.sum(out["done"]), out["iterations"]

    return jax.jit(run), ()


def make_sharded_rollout(env, steps: int, devices: int, env_as_argument: bool = False):
    """:func:`make_rollout` with the batch split over the first ``devices`` devices
    (``shard_map``; each device rolls out its block of rows on its own, with its own key:
    ``key`` is ``[devices, 2]``). The sums come back per device (``[devices]``)."""
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:devices]), ("rows",))
    rows = P("rows")

    def local(env, state, ts, keys):
        state, ts, key, rew, ends, bad = rollout(env, steps, state, ts, keys[0])
        return state, ts, key[None], rew[None], ends[None], bad[None]

    spec_in = (P(), rows, rows, rows)
    # closed over, not an operand of shard_map: the env's data stay compile-time constants
    # and step compiles only its backfill mode's path (as make_rollout's closed mode)
    if env_as_argument:
        f = jax.shard_map(
            local, mesh=mesh, in_specs=spec_in, out_specs=(rows,) * 6, check_vma=False
        )
        return jax.jit(f), (env,)
    f = jax.shard_map(
        lambda state, ts, keys: local(env, state, ts, keys),
        mesh=mesh,
        in_specs=spec_in[1:],
        out_specs=(rows,) * 6,
        check_vma=False,
    )
    return jax.jit(f), ()


def _peak_bytes():
    """The device's peak bytes in use so far in this process (None where JAX does not say:
    the CPU)."""
    stats = jax.devices()[0].memory_stats() or {}
    return stats.get("peak_bytes_in_use")


def bench_one(
    env,
    batch: int,
    steps: int,
    repeats: int,
    seed: int,
    env_as_argument: bool = False,
    reference_steps_per_s: float = REFERENCE_STEPS_PER_S,
    devices: int = 1,
    mode: str = "closed",
) -> dict:
    """One row: ``batch`` environments (split over ``devices`` devices, ``batch`` divisible
    by it), ``steps`` per compiled scan; the best of ``repeats`` timed runs."""
    if batch % devices or devices > jax.device_count():
        raise ValueError(f"batch {batch} over {devices} of {jax.device_count()} device(s)")
    wrapped = AutoResetWrapper(env)
    keys = jax.random.split(jax.random.PRNGKey(seed), batch + 1)
    state, ts = jax.jit(jax.vmap(wrapped.reset))(keys[1:])
    jax.block_until_ready((state, ts))
    if mode == "async":
        if devices != 1:
            raise ValueError("the async rows run on one device")
        fn, prefix = make_async_rollout(wrapped, steps)
        ts, key = ts.replace(observation=None), keys[0]
    elif devices == 1:
        fn, prefix = make_rollout(wrapped, steps, env_as_argument)
        key = keys[0]
    else:
        fn, prefix = make_sharded_rollout(wrapped, steps, devices, env_as_argument)
        key = jax.random.split(keys[0], devices)
    t0 = time.perf_counter()
    compiled = fn.lower(*prefix, state, ts, key).compile()  # trace + XLA compile
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = compiled(*prefix, state, ts, key)  # warm-up run
    jax.block_until_ready(out)
    warmup_s = time.perf_counter() - t0
    state, ts, key = out[:3]
    iters = int(out[5]) if mode == "async" else None
    times, episodes, reward, bad = [], 0, 0.0, 0 if iters else int(np.sum(out[5]))
    for _ in range(max(repeats, 1)):
        t0 = time.perf_counter()
        out = compiled(*prefix, state, ts, key)
        jax.block_until_ready(out)
        times.append(time.perf_counter() - t0)
        state, ts, key = out[:3]
        episodes += int(np.sum(out[4]))
        reward += float(np.sum(out[3]))
        bad += 0 if iters else int(np.sum(out[5]))
    if bad:
        raise RuntimeError(f"{bad} observation masks were not a prefix of the slots")
    best = min(times)
    sps = batch * steps / best
    return {
        "batch": batch,
        "devices": devices,
        "steps": steps,
        "compile_s": compile_s,
        "warmup_s": warmup_s,
        "run_s": times,
        "best_run_s": best,
        "steps_per_s": sps,
        "ratio_to_reference": sps / reference_steps_per_s,
        "episodes_finished": episodes,
        "async_iterations_per_decision": iters / steps if iters else None,
        "peak_bytes_per_row": _peak_bytes() / batch if _peak_bytes() else None,
        "mean_terminal_reward": reward / episodes if episodes else None,
    }


def benchmark(
    trace=DEFAULT_TRACE,
    batches=(1, 16, 64, 256),
    steps=256,
    backfills=("none", "rlscheduler"),
    length=256,
    repeats=2,
    seed=0,
    env_modes=("closed",),
    out=print,
    reference=None,
    reference_steps=2000,
    devices=(1,),
) -> dict:
    """Every (backfill, env mode, batch, device count) row, printed as it is measured; the
    rows of one batch (every env mode, every device count) run one after another, and ``x 1st`` is
    each one's ratio to the first row (side by side in one process)."""
    info = machine_info()
    out(
        f"device: jax.devices() = {info['jax_devices']} (jax {info['jax_version']}); CPUs: "
        f"os.cpu_count() = {info['cpu_count']}, usable {info['cpus_usable']}; load average "
        f"{' '.join(f'{x:.2f}' for x in info['loadavg_start'])}"
    )
    jobs = read_swf(trace).jobs("rlscheduler")
    out(
        f"workload: {Path(trace).name} ({jobs.n_jobs} jobs, {jobs.num_nodes} nodes), "
        f"sequences of {length} jobs, compat=True, AutoResetWrapper, uniformly random valid "
        f"actions; {steps} steps per compiled scan, best of {repeats} runs"
    )
    ref_sps = {bf: REFERENCE_STEPS_PER_S for bf in backfills}
    if reference is None:
        out(
            f"reference simulator: ~{REFERENCE_STEPS_PER_S:,.0f} env steps/s on the 2-core "
            "development machine (not measured here; --reference DIR measures it)"
        )
    else:
        use("reference")
        from reference_sim import reference_env_steps_per_s

        for bf in backfills:
            r = reference_env_steps_per_s(reference, trace, reference_steps, bf, seed)
            ref_sps[bf] = r["steps_per_s"]
            out(
                f"reference simulator (HPCEnv of {Path(reference).name}), backfill {bf}: "
                f"{r['steps_per_s']:,.0f} env steps/s on this machine, in this process "
                f"({r['steps']} steps, {r['episodes']} episodes, {r['seconds']:.1f} s)"
            )
    out(
        "env: 'closed' = the jitted rollout closes over the env (static backfill mode, as in "
        "training); 'arg' = the env is an argument (both paths compiled, as in jit_step); "
        "'async' = rows that step asynchronously (env.run_async, backfilling only); "
        "x 1st: ratio to the batch's first row (same process)"
    )
    if max(devices) > 1:
        out(
            f"devices: the batch split over D of the {jax.device_count()} devices (shard_map), "
            "each device rolling out its rows on its own thread"
        )
    out("")
    out(
        f"{'backfill':<12} {'env':<6} {'B':>5} {'D':>2} {'steps/s':>11} {'x ref':>8} "
        f"{'x 1st':>8} {'compile s':>10} {'run s':>8} {'episodes':>9}"
    )  # run s: best timed run of B x steps env steps
    rows = []
    for bf in backfills:
        env = RLSchedulerEnv(jobs, length=length, backfill=bf, compat=True)
        for b in batches:
            first = None
            for mode in env_modes:
                for d in devices:
                    if mode == "async" and (bf == "none" or d > 1):
                        continue  # micro-stepped transitions only, one device
                    r = bench_one(env, b, steps, repeats, seed, mode == "arg", ref_sps[bf], d, mode)
                    first = first or r["steps_per_s"]
                    r["backfill"], r["env"] = bf, mode
                    r["ratio_to_first_devices"] = r["steps_per_s"] / first
                    rows.append(r)
                    out(
                        f"{bf:<12} {mode:<6} {b:>5} {d:>2} {r['steps_per_s']:>11,.0f} "
                        f"{r['ratio_to_reference']:>8.1f} {r['ratio_to_first_devices']:>8.2f} "
                        f"{r['compile_s']:>10.1f} {r['best_run_s']:>8.3f} "
                        f"{r['episodes_finished']:>9}"
                        + (
                            f"  peak {r['peak_bytes_per_row'] / 1024:,.0f} KiB/row"
                            if r["peak_bytes_per_row"]
                            else ""
                        )
                    )
    info["loadavg_end"] = list(os.getloadavg())
    out(f"\nload average at end {' '.join(f'{x:.2f}' for x in info['loadavg_end'])}")
    return {
        "machine": info,
        "trace": str(trace),
        "length": length,
        "reference_steps_per_s": ref_sps,
        "reference_measured_here": reference is not None,
        "rows": rows,
    }


def _ints(s: str):
    return tuple(int(x) for x in s.split(",") if x)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    p.add_argument(
        "--batch",
        type=_ints,
        default=(1, 16, 64, 256),
        help="comma-separated batch sizes (default 1,16,64,256)",
    )
    p.add_argument("--steps", type=int, default=256, help="steps per compiled scan (256)")
    p.add_argument(
        "--backfill",
        default="none,rlscheduler",
        help="comma-separated: none, rlscheduler (default both)",
    )
    p.add_argument("--length", type=int, default=256, help="jobs per sequence (256)")
    p.add_argument("--repeats", type=int, default=2, help="timed runs per row, best kept (2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--env",
        default="closed",
        help="comma-separated: closed (the rollout closes over the env, default), "
        "arg (the env is an argument of the jitted rollout), async (rows that step "
        "asynchronously, issue 48: backfilling only)",
    )
    p.add_argument("--json", type=Path, default=None, help="write the results as JSON here")
    p.add_argument(
        "--reference",
        type=Path,
        default=None,
        help="a clone of DIR-LAB/deep-batch-scheduler: time its environment here, side by side",
    )
    p.add_argument("--reference-steps", type=int, default=2000)
    p.add_argument(
        "--devices",
        type=_ints,
        default=(1,),
        help="comma-separated device counts to split each batch over (default 1); on a CPU "
        "the script splits the host into the largest count before JAX starts, one device per "
        "core (e.g. 1,2 on two cores: both rows side by side)",
    )
    a = p.parse_args(argv)
    if min(a.devices, default=0) < 1 or any(b % d for b in a.batch for d in a.devices):
        p.error("--devices takes counts >= 1 that divide every --batch")
    expose_host_devices(max(a.devices))  # JAX has not used a device yet
    if max(a.devices) > jax.device_count():
        p.error(f"--devices {max(a.devices)}: {jax.device_count()} device(s) visible")
    modes = tuple(x for x in a.env.split(",") if x)
    if not modes or any(m not in ("closed", "arg", "async") for m in modes):
        p.error("--env takes closed, arg and/or async")
    res = benchmark(
        a.trace,
        a.batch,
        a.steps,
        tuple(x for x in a.backfill.split(",") if x),
        a.length,
        a.repeats,
        a.seed,
        modes,
        reference=a.reference,
        reference_steps=a.reference_steps,
        devices=a.devices,
    )
    if a.json:
        a.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
