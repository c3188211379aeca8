"""RLScheduler training speed, side by side with the reference's figures.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/train_speed.py [--trajectories 100]
        [--epochs 2] [--env-batch 256] [--backfill none] [--no-full-width]
        [--pi-iters 80[,20]] [--v-iters 80[,20]] [--rollout auto|sync,async]
        [--run jaxsched/models/lublin1-none] [--fresh K] [--json FILE]

Three parts, measured in one run on the local JAX device:

1. Environment steps/s: ``--env-batch`` vmapped auto-reset Lublin-1 environments (256-job
   sequences, compat mode) stepped with uniformly random valid actions in one compiled scan
   (benchmarks/speed/env_throughput.py's measurement), against the reference simulator's ~2,200
   steps/s on the 2-core development machine.
2. One policy step and one value step (loss and gradient over a whole rollout), then seconds
   per PPO epoch at the paper's settings (``--trajectories`` 256-job sequences, up to
   80 policy steps with the KL stop, 80 value steps, the default hyper-parameters), with the
   update on slot prefixes (the trainer's ``slot_prefix``, what ``jaxsched train`` uses) and,
   unless ``--no-full-width``, on all 128 slots, each after its own compilation (reported
   separately, not in the epoch times). The paper reports 123 s per epoch on an 8-core Xeon.
   Lists of step counts (``--pi-iters 80,20 --v-iters 80,20``) time each setting in turn in
   the same run and print its epoch-time ratio to the first.
3. Time to the paper's result: for each ``--run`` directory (a training run with its
   ``log.jsonl``; or one checkpoint file of such a run), the summed epoch times of its newest
   (or that) checkpoint and that policy's greedy
   average bounded slowdown on the paper's test sequences of the run's trace (seed 1,
   10 x 1024 jobs, the run's backfilling), next to the paper's Table V row (254.67 without
   backfilling, 58.64 with; 1.1 h to converge on Lublin-1 per the paper). With ``--fresh K``
   also on K fresh 1024-job sequences (seed 3, drawn as ``rlscheduler_tables.py`` draws
   them) beside the paper's five heuristics: its mean ± standard error and the paired
   difference to the best heuristic (issue 19's measure of a model's quality).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO, use  # noqa: E402

use("speed")

import jax  # noqa: E402

from jaxsched import nets  # noqa: E402
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv  # noqa: E402
from jaxsched.systems.rlscheduler.config import RunConfig, make_env, prefix_options  # noqa: E402
from jaxsched.systems.rlscheduler.evaluate import load_policy, policy_metric  # noqa: E402
from jaxsched.train import PPOConfig, make_train  # noqa: E402
from jaxsched.train.loop import training_seconds  # noqa: E402
from jaxsched.workload import read_swf, reference_starts  # noqa: E402

DEFAULT_TRACE = REPO / "traces" / "lublin-1.swf"
#: the paper's figures (RLScheduler, Lublin-1): seconds per epoch on an 8-core Xeon, hours to
#: converge, and Table V's RL bounded slowdown without / with backfilling
PAPER_EPOCH_S = 123.0
PAPER_CONVERGE_H = 1.1
PAPER_RL = {"none": 254.67, "rlscheduler": 58.64}


def _env_throughput():
    spec = importlib.util.spec_from_file_location(
        "_env_throughput", REPO / "benchmarks" / "speed" / "env_throughput.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def env_rows(jobs, batch: int, steps: int, backfills, length: int, out) -> list:
    et = _env_throughput()
    rows = []
    for bf in backfills:
        env = RLSchedulerEnv(jobs, length=length, backfill=bf, compat=True)
        r = et.bench_one(env, batch, steps, repeats=2, seed=0)
        r["backfill"] = bf
        rows.append(r)
        out(
            f"  env steps/s   backfill {bf:<12} B={batch:<5} {r['steps_per_s']:>10,.0f}"
            f"   x{r['ratio_to_reference']:.1f} the reference's {et.REFERENCE_STEPS_PER_S:,.0f}"
            f"   (compile {r['compile_s']:.1f} s)"
        )
    return rows


def epoch_rows(
    jobs,
    trace,
    trajectories: int,
    epochs: int,
    backfill: str,
    length: int,
    full_width: bool,
    ppo: dict,
    out,
    rollouts=("auto",),
) -> list:
    rc = RunConfig(
        trace=str(trace),
        backfill=backfill,
        length=length,
        ppo=PPOConfig(num_envs=trajectories, max_episode_steps=length, **ppo).to_dict(),
    )
    env = AutoResetWrapper(make_env(jobs, rc))
    rows = []
    variants = [("slot prefixes", prefix_options(rc))]
    if full_width:
        variants.append(("all slots", {}))
    modes = {"auto": None, "sync": False, "async": True}
    variants = [
        (name if r == "auto" else f"{name}, {r}", {**opts, "async_rows": modes[r]})
        for name, opts in variants
        for r in rollouts
    ]
    for name, opts in variants:
        tr = make_train(
            rc.ppo_config(), env, nets.make_policy(rc.policy), nets.make_value(rc.value), **opts
        )
        state = tr.init(jax.random.PRNGKey(0))
        step_s = _step_times(tr, state)
        out(
            f"  one step      {name:<14} {trajectories} x {length} decisions: policy "
            f"{step_s['policy_step_s']:.3f} s, value {step_s['value_step_s']:.3f} s"
            + (
                " (each call re-sorts the batch; inside an update it is sorted once)"
                if opts
                else ""
            )
        )
        if epochs < 1:
            rows.append({"update": name, **step_s})
            continue
        t0 = time.perf_counter()
        compiled = tr.update.lower(state).compile()
        compile_s = time.perf_counter() - t0
        times, iters = [], []
        for _ in range(epochs):
            t0 = time.perf_counter()
            state, m = compiled(state)
            jax.block_until_ready(m)
            times.append(time.perf_counter() - t0)
            iters.append(int(m["pi_iters"]))
        mean = sum(times) / len(times)
        rows.append(
            {
                "update": name,
                **step_s,
                "compile_s": compile_s,
                "epoch_s": times,
                "mean_epoch_s": mean,
                "pi_iters": iters,
                "trajectories": trajectories,
                "backfill": backfill,
            }
        )
        paper = (
            f"paper {PAPER_EPOCH_S:.0f} s on 8 cores -> x{PAPER_EPOCH_S / mean:.2f}"
            if (trajectories, length) == (100, 256)
            else "(not the paper's size)"
        )
        rows[-1]["ratio_to_paper"] = (
            PAPER_EPOCH_S / mean if (trajectories, length) == (100, 256) else None
        )
        out(
            f"  s per epoch   {name:<14} {trajectories} x {length} jobs, backfill {backfill}: "
            f"{mean:8.1f} s  (policy steps {iters}; compile {compile_s:.1f} s)   {paper}"
        )
        if opts["async_rows"] and len(rows) > 1 and rows[-2]["update"].endswith(", sync"):
            ratio = rows[-2]["mean_epoch_s"] / mean
            rows[-1]["ratio_async_to_sync"] = ratio
            out(f"  async rollout: x{ratio:.2f} the synchronous epoch (same process)")
    return rows


def _iter_settings(pi_text: str, v_text: str) -> list[tuple[int, int]]:
    """``--pi-iters 80,20 --v-iters 80,20`` -> ``[(80, 80), (20, 20)]``."""
    try:
        pi = [int(x) for x in str(pi_text).split(",")]
        v = [int(x) for x in str(v_text).split(",")]
    except ValueError:
        raise SystemExit(
            f"--pi-iters / --v-iters: integers, got {pi_text!r} / {v_text!r}"
        ) from None
    if len(pi) != len(v) or min(pi + v) < 0:
        raise SystemExit("--pi-iters and --v-iters: as many non-negative counts each")
    return list(zip(pi, v))


def _print_iter_ratios(rows: list, out) -> None:
    """Each iteration setting's mean epoch time against the first setting's, per update."""
    timed = [r for r in rows if "mean_epoch_s" in r]
    for name in dict.fromkeys(r["update"] for r in timed):
        sel = [r for r in timed if r["update"] == name]
        for r in sel[1:]:
            out(
                f"  ratio         {name:<14} {r['pi_iters_setting']} + {r['v_iters_setting']} "
                f"against {sel[0]['pi_iters_setting']} + {sel[0]['v_iters_setting']} steps: "
                f"epoch time x{r['mean_epoch_s'] / sel[0]['mean_epoch_s']:.3f}"
            )


def _step_times(tr, state, repeats: int = 3) -> dict:
    """Seconds of one full-batch policy step and one value step (loss and gradient, best of
    ``repeats`` after a warm-up call) on one rollout of the initial policy."""
    batch, _ = tr.collect(state.policy_params, state.value_params, jax.random.PRNGKey(1), 0)
    flat = lambda a: a.reshape((-1,) + a.shape[2:])  # noqa: E731
    x = jax.tree_util.tree_map(flat, batch.x)
    w = flat(batch.valid)
    calls = {
        "policy_step_s": (
            tr.policy_loss_and_grad,
            (state.policy_params, x, flat(batch.action), flat(batch.logp), flat(batch.value), w),
        ),
        "value_step_s": (tr.value_loss_and_grad, (state.value_params, x, flat(batch.value), w)),
    }
    res = {}
    for k, (f, args) in calls.items():
        jax.block_until_ready(f(*args))
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            best = min(best, time.perf_counter() - t0)
        res[k] = best
    return res


def run_rows(runs, out, fresh: int = 0) -> list:
    rows = []
    for d in runs:
        d = Path(d)
        pol = load_policy(d)
        run_dir = d.parent if d.is_file() else d
        secs = max((t for e, t in training_seconds(run_dir).items() if e <= pol.epoch), default=0)
        jobs = read_swf(
            pol.run.trace if Path(pol.run.trace).is_absolute() else REPO / pol.run.trace
        ).jobs(pol.run.rules)
        starts = reference_starts(1, 10, 1024, jobs.n_jobs, 10000)
        vals, _ = policy_metric(pol, jobs, starts, 1024)
        value = float(vals.mean())
        paper = PAPER_RL.get(pol.run.backfill)
        reached = paper is not None and value <= paper
        rows.append(
            {
                "run": str(d),
                "epoch": pol.epoch,
                "train_s": secs,
                "bsld": value,
                "paper": paper,
                "reached": reached,
                "backfill": pol.run.backfill,
            }
        )
        out(
            f"  time to result {d}: epoch {pol.epoch}, {secs / 60:.1f} min of training -> "
            f"greedy bsld {value:.2f} on the paper's test sequences (paper RL {paper}, "
            f"{'reached' if reached else 'not reached'}; paper {PAPER_CONVERGE_H} h to converge)"
        )
        if fresh:
            rows[-1]["fresh"] = fresh_row(d, pol, fresh, out)
    return rows


def fresh_row(d: Path, pol, n_seq: int, out) -> dict:
    """The run's policy on ``n_seq`` fresh 1024-job sequences (seed 3, as
    ``rlscheduler_tables.py`` draws them) beside the paper's five heuristics in the run's
    backfilling: its mean ± s.e. and the paired difference to the best heuristic ± s.e."""
    use("paper")
    import rlscheduler_tables as RT

    from jaxsched.formatting import number, std_error

    trace = pol.run.trace if Path(pol.run.trace).is_absolute() else REPO / pol.run.trace
    bf = pol.run.backfill
    model = RT.Model(d.name, d, RT.paper_trace(trace), "bsld", bf)
    res, _ = RT.evaluate_trace(Path(trace), ["bsld"], [model], n_seq, 1024, 3, backfills=[bf])
    st = RT.row_stats(res, "bsld", bf, RT.PT.POLICIES, d.name)
    best = st["best"]
    out(
        f"    on {n_seq} fresh sequences (seed 3): {number(st['mean'])} ± {std_error(st['se'])}, "
        f"best heuristic {RT.PT.HEADS[best]} {number(st['heuristics'][best][0])} ± "
        f"{std_error(st['heuristics'][best][1])}, paired {number(st['diff'], signed=True)} ± "
        f"{std_error(st['diff_se'])}"
    )
    row = {k: st[k] for k in ("mean", "se", "best", "diff", "diff_se")}
    return row | {"best_mean": st["heuristics"][best][0], "best_se": st["heuristics"][best][1]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    p.add_argument("--length", type=int, default=256, help="jobs per training sequence (256)")
    p.add_argument("--trajectories", type=int, default=100, help="sequences per epoch (100)")
    p.add_argument(
        "--epochs",
        type=int,
        default=2,
        help="timed epochs per variant (2; 0 = only the one-step timings)",
    )
    p.add_argument(
        "--pi-iters",
        default="80",
        help="policy steps per epoch; a comma list (with as many --v-iters) times each "
        "setting side by side and prints the epoch-time ratio to the first (80)",
    )
    p.add_argument("--v-iters", default="80", help="value steps per epoch, as --pi-iters (80)")
    p.add_argument(
        "--backfill",
        default="none",
        choices=("none", "rlscheduler", "easy"),
        help="backfilling of the timed epochs (none)",
    )
    p.add_argument(
        "--rollout",
        default="auto",
        help="comma-separated rollouts of the timed epochs: auto (the trainer's choice: "
        "asynchronous rows with backfilling on an accelerator), sync, async (sync,async: "
        "side by side, issue 48)",
    )
    p.add_argument("--env-batch", type=int, default=256)
    p.add_argument("--env-steps", type=int, default=256)
    p.add_argument("--env-backfill", default="none,rlscheduler")
    p.add_argument("--no-full-width", action="store_true", help="skip the epochs on all 128 slots")
    p.add_argument(
        "--run",
        action="append",
        default=None,
        help="training run directory (its newest checkpoint) or one checkpoint file of a "
        "run for part 3 (repeatable; default the shipped jaxsched/models/lublin1-*; 'none' "
        "skips part 3)",
    )
    p.add_argument(
        "--fresh",
        type=int,
        default=0,
        metavar="K",
        help="also score each --run on K fresh 1024-job sequences (seed 3) with the paired "
        "difference to the best heuristic (0: skip)",
    )
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    out = print
    out(
        f"device: {[str(d) for d in jax.devices()]} (jax {jax.__version__}); CPUs "
        f"{os.cpu_count()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    jobs = read_swf(a.trace).jobs("rlscheduler")
    res = {"device": [str(d) for d in jax.devices()], "cpus": os.cpu_count()}
    out("1. environment")
    res["env"] = env_rows(
        jobs, a.env_batch, a.env_steps, [b for b in a.env_backfill.split(",") if b], a.length, out
    )
    out("2. PPO epochs")
    settings = _iter_settings(a.pi_iters, a.v_iters)
    res["epochs"] = []
    for pi, v in settings:
        if len(settings) > 1:
            out(f"  {pi} policy + {v} value steps per epoch")
        rows = epoch_rows(
            jobs,
            a.trace,
            a.trajectories,
            a.epochs,
            a.backfill,
            a.length,
            not a.no_full_width,
            {"train_pi_iters": pi, "train_v_iters": v},
            out,
            tuple(r for r in a.rollout.split(",") if r),
        )
        res["epochs"] += [{**r, "pi_iters_setting": pi, "v_iters_setting": v} for r in rows]
    _print_iter_ratios(res["epochs"], out)
    runs = a.run
    if runs is None:
        runs = sorted(
            str(d) for d in (REPO / "jaxsched" / "models").glob("lublin1-*") if d.is_dir()
        )
    runs = [r for r in runs if r != "none"]
    if runs:
        out("3. time to the paper's result")
        res["runs"] = run_rows(runs, out, a.fresh)
    out(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.json:
        a.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
