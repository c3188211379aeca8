"""The generic A2C trainer on RLScheduler's environment: one short run (issue 18 §3).

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/a2c_rlscheduler.py [--trace traces/lublin-1.swf]
        [--backfill none] [--updates 400] [--envs 32] [--n-steps 32] [--lr 1e-3]
        [--optimizer adam] [--gamma 1] [--entropy 0.0] [--validate-every 100]
        [--val-sequences 10] [--seed 0] [--json FILE]

:func:`jaxsched.train.a2c.make_a2c` was written for A2cScheduler's data-centre cluster; nothing
in it knows an environment. Here it trains RLScheduler's kernel policy and value networks
(:func:`jaxsched.nets.make_policy` / ``make_value``, 961 + 11,570 parameters) on
:class:`~jaxsched.envs.RLSchedulerEnv` (reference semantics, 256-job sequences sampled as the
reference samples them, auto-reset), with n-step TD targets instead of PPO's Monte-Carlo
returns: ``--envs`` environments step ``--n-steps`` decisions per update; the reward is the
episode's −bsld at its last decision, so ``--gamma 1`` (the reference's PPO discount) and
per-update standardised advantages are the defaults here. The updates run ``--validate-every``
at a time in one compiled ``lax.scan``; after each such chunk the greedy policy runs on
``--val-sequences`` validation sequences of 1024 jobs (drawn the reference's way with seed 2,
as ``jaxsched train rlscheduler --validate``), printed beside SJF and F1 on the same
sequences. A demonstration that the trainer is generic, not a tuned result:
PPO (``jaxsched train rlscheduler``) is the paper's algorithm.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.common import REPO  # noqa: E402
from jaxsched import nets  # noqa: E402
from jaxsched.envs import AutoResetWrapper  # noqa: E402
from jaxsched.sim.evaluate import evaluate  # noqa: E402
from jaxsched.systems.rlscheduler.config import RunConfig, make_env  # noqa: E402
from jaxsched.systems.rlscheduler.evaluate import episodes_fn  # noqa: E402
from jaxsched.train.a2c import A2CConfig, make_a2c  # noqa: E402
from jaxsched.workload import read_swf, reference_starts  # noqa: E402


def build(jobs, rc: RunConfig, cfg: A2CConfig):
    """``(init, update, policy, value)``: the A2C trainer on RLScheduler's environment with the
    kernel networks (``params = {"actor": policy variables, "critic": value variables}``)."""
    env = make_env(jobs, rc, rc.length)
    policy, value = nets.make_policy("kernel"), nets.make_value("kernel")

    def actor(p, x, mask):
        return policy.apply(p, x, mask)

    def critic(p, x):
        return value.apply(p, x)

    init, update = make_a2c(AutoResetWrapper(env), actor, critic, cfg, lambda o: (o.obs, o.mask))
    return init, jax.jit(update), policy, value


def updates_fn(update, n: int):
    """``state -> (state, metrics)``: ``n`` A2C updates in one compiled ``lax.scan`` (no host
    sync between them); metrics: the episodes ended and the sum of their metric, and the last
    update's policy entropy."""

    def run(state):
        state, m = jax.lax.scan(lambda s, _: update(s), state, None, length=n)
        return state, {"episodes": jnp.sum(m["episodes"]), "ep_metric": jnp.sum(m["ep_metric"]),
                       "entropy": m["entropy"][-1]}  # fmt: skip

    return jax.jit(run)


def validator(jobs, rc: RunConfig, policy, starts):
    """``actor params -> greedy mean metric`` on the 1024-job sequences ``starts``, compiled
    once (:func:`jaxsched.systems.rlscheduler.evaluate.episodes_fn`)."""
    fn = episodes_fn(make_env(jobs, rc, 1024), policy, False)
    s = jnp.asarray(starts, jnp.int32)
    keys = jax.random.split(jax.random.PRNGKey(0), len(starts))
    return lambda params: float(np.mean(np.asarray(fn(params, s, keys)[0])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=REPO / "traces" / "lublin-1.swf")
    ap.add_argument("--backfill", default="none", choices=("none", "rlscheduler"))
    ap.add_argument("--updates", type=int, default=400)
    ap.add_argument("--envs", type=int, default=32)
    ap.add_argument("--n-steps", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--optimizer", default="adam", choices=("adam", "rmsprop"))
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--entropy", type=float, default=0.0)
    ap.add_argument("--validate-every", type=int, default=100)
    ap.add_argument("--val-sequences", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    jobs = read_swf(args.trace).jobs("rlscheduler")
    rc = RunConfig(trace=str(args.trace), backfill=args.backfill)
    cfg = A2CConfig(
        num_envs=args.envs, n_steps=args.n_steps, gamma=args.gamma, lr=args.lr,
        optimizer=args.optimizer, entropy_coef=args.entropy, normalize_advantages=True,
    )  # fmt: skip
    init, update, policy, value = build(jobs, rc, cfg)
    k_a, k_c, k_env = jax.random.split(jax.random.PRNGKey(args.seed), 3)
    params = {"actor": nets.init_params(policy, k_a), "critic": nets.init_params(value, k_c)}
    state = init(k_env, params)

    starts = reference_starts(2, args.val_sequences, 1024, min(jobs.n_jobs, 10000))
    heur = evaluate(jobs, starts, 1024, ["sjf", "f1"], [args.backfill], compat=True)
    heur = {p: heur.table("bsld")[(p, args.backfill)] for p in ("sjf", "f1")}
    print(
        f"{args.trace.name}, backfill {args.backfill}: A2C, {args.envs} envs x {args.n_steps} "
        f"steps per update, {args.optimizer} lr {args.lr}, gamma {args.gamma}; validation "
        f"{args.val_sequences} x 1024 jobs (seed 2): SJF {heur['sjf']:.2f}, F1 {heur['f1']:.2f}"
    )
    validate = validator(jobs, rc, policy, starts)
    rows, t_train, done = [], 0.0, 0
    val0 = validate(state.params["actor"])
    rows.append({"update": 0, "seconds": 0.0, "val_bsld": val0})
    print(f"update     0: greedy validation bsld {val0:10.2f}")
    chunks = {}
    while done < args.updates:
        n = min(args.validate_every, args.updates - done)
        chunk = chunks.setdefault(n, updates_fn(update, n))
        t0 = time.perf_counter()
        state, m = jax.device_get(chunk(state))
        t_train += time.perf_counter() - t0
        done += n
        val = validate(state.params["actor"])
        episodes = float(m["episodes"])
        train = float(m["ep_metric"]) / episodes if episodes else float("nan")
        rows.append({"update": done, "seconds": t_train, "val_bsld": val, "train_bsld": train,
                     "episodes": episodes, "entropy": float(m["entropy"])})  # fmt: skip
        print(
            f"update {done:5d}: greedy validation bsld {val:10.2f}   training episodes "
            f"{int(episodes):5d} (mean bsld {train:9.2f})   entropy {float(m['entropy']):.3f}"
            f"   {t_train:7.1f} s of updates (the first chunk compiles)"
        )
    if args.json:
        args.json.write_text(json.dumps({"heuristics": heur, "rows": rows, "args": vars(args)},
                                        default=str))  # fmt: skip
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    sys.exit(main())
