"""Tune a priority function on a trace's training jobs (issue 47 §2) and write it as a tiny
model that ``jaxsched evaluate --policy tuned:DIR`` runs.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/tune_priority.py TRACE --out DIR
        [--train-range A,B] [--backfill easy] [--compat] [--metric bsld] [--jobs 1024]
        [--sequences 32] [--rounds 6] [--population 12] [--seed 0] [--val-range A,B]

The score is :mod:`jaxsched.policies.tuned`'s ``w_q log10 q + w_n log10 n + w_s s/3600`` (a
direction in three dimensions). The search is a (1, lambda) random search on the unit sphere
with common random numbers: every candidate is scored by the mean ``--metric`` over the SAME
``--sequences`` sequences of ``--jobs`` jobs, which start uniformly (``default_rng(seed)``)
inside the training job range ``[A, B)`` (default: the first 50 % of the trace's jobs), so no
sequence reaches past ``B``. Round 0 scores FCFS (0, 0, 1), SJF (1, 0, 0), smallest-first
(0, 1, 0) and random directions; every later round perturbs the best direction so far
(Gaussian, scale halving every round) and keeps the best. One batched
:func:`jaxsched.sim.evaluate.evaluate` call per round. Only the training sequences choose;
``--val-range`` prints (never uses) the result on validation sequences beside FCFS, SJF, F1.
The model file records the weights, the training range, the scores and the command.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

from jaxsched.policies.tuned import TunedPriority, save  # noqa: E402
from jaxsched.sim.evaluate import evaluate, use_all_cpu_cores  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402

HIGHER_IS_BETTER = ("util", "util_ref", "util_busy")
START_POINTS = [(0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]


def job_range(text: str | None, n: int, default: tuple) -> tuple:
    """``"A,B"`` (job indices, B exclusive) or the default fractions of ``n`` jobs."""
    if text is None:
        return int(default[0] * n), int(default[1] * n)
    a, b = (int(x) for x in text.split(","))
    return a, b


def draw_starts(rng, lo: int, hi: int, length: int, k: int) -> np.ndarray:
    """``k`` sequence starts uniformly in ``[lo, hi - length]`` (sorted)."""
    if hi - length < lo:
        raise SystemExit(f"job range [{lo}, {hi}) is shorter than one {length}-job sequence")
    return np.sort(rng.integers(lo, hi - length + 1, size=k))


def score(jobs, starts, length, cands, args) -> np.ndarray:
    """Mean metric of every candidate (list of weight vectors) on the sequences ``starts``,
    signed so that smaller is better."""
    pols = [TunedPriority(tuple(w), name=f"c{i}") for i, w in enumerate(cands)]
    res = evaluate(jobs, starts, length, pols, [args.backfill], compat=args.compat,
                   metrics=[args.metric])  # fmt: skip
    tab = res.table(args.metric)
    sign = -1.0 if args.metric in HIGHER_IS_BETTER else 1.0
    return np.asarray([sign * tab[(p.name, res.backfills[0])] for p in pols])


def unit(v) -> np.ndarray:
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--out", required=True)
    ap.add_argument("--train-range", default=None, metavar="A,B")
    ap.add_argument("--val-range", default=None, metavar="A,B")
    ap.add_argument("--backfill", default="easy")
    ap.add_argument("--compat", action="store_true", help="the reference semantics")
    ap.add_argument("--metric", default="bsld")
    ap.add_argument("--jobs", type=int, default=1024)
    ap.add_argument("--sequences", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--population", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rules", default="rlscheduler")
    args = ap.parse_args(argv)
    use_all_cpu_cores()
    jobs = read_swf(args.trace).jobs(args.rules)
    lo, hi = job_range(args.train_range, jobs.n_jobs, (0.0, 0.5))
    rng = np.random.default_rng(args.seed)
    starts = draw_starts(rng, lo, hi, args.jobs, args.sequences)
    t0 = time.perf_counter()
    cands = [unit(w) for w in START_POINTS]
    cands += [unit(rng.normal(size=3)) for _ in range(args.population - len(cands))]
    best_w, best, history = None, np.inf, []
    for r in range(args.rounds):
        if r > 0:
            sigma = 0.5 / 2 ** (r - 1)
            cands = [unit(best_w + sigma * rng.normal(size=3)) for _ in range(args.population)]
        sc = score(jobs, starts, args.jobs, cands, args)
        i = int(np.argmin(sc))
        if sc[i] < best:
            best, best_w = float(sc[i]), cands[i]
        history.append({"round": r, "best": best, "weights": best_w.tolist()})
        print(f"round {r}: best {args.metric} {abs(best):.4f} at {np.round(best_w, 4).tolist()} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    heur = evaluate(jobs, starts, args.jobs, ["fcfs", "sjf", "f1"], [args.backfill],
                    compat=args.compat, metrics=[args.metric]).table(args.metric)  # fmt: skip
    train_heur = {p: v for (p, _b), v in heur.items()}
    cmd = ["benchmarks/paper/tune_priority.py", Path(args.trace).name, "--out", Path(args.out).name]
    for k in ("train_range", "backfill", "metric", "jobs", "sequences", "rounds",
              "population", "seed"):  # fmt: skip
        v = getattr(args, k)
        if v is not None:
            cmd += [f"--{k.replace('_', '-')}", str(v)]
    cmd += ["--compat"] if args.compat else []
    meta = dict(
        trace=Path(args.trace).name, rules=args.rules, train_range=[lo, hi],
        train_starts=starts.tolist(), backfill=args.backfill, compat=args.compat,
        metric=args.metric, jobs=args.jobs, train_score=abs(best), train_heuristics=train_heur,
        search=history, seconds=round(time.perf_counter() - t0, 1), command=" ".join(cmd),
    )  # fmt: skip
    path = save(args.out, best_w, **meta)
    print(f"wrote {path}; training {args.metric}: tuned {abs(best):.4f}, "
          + ", ".join(f"{p} {v:.4f}" for p, v in train_heur.items()))  # fmt: skip
    if args.val_range:
        vlo, vhi = job_range(args.val_range, jobs.n_jobs, (0.5, 0.6))
        vst = draw_starts(np.random.default_rng(args.seed + 1), vlo, vhi, args.jobs,
                          args.sequences)  # fmt: skip
        pols = ["fcfs", "sjf", "f1", TunedPriority(tuple(best_w), name="tuned")]
        res = evaluate(jobs, vst, args.jobs, pols, [args.backfill], compat=args.compat,
                       metrics=[args.metric])  # fmt: skip
        print("validation (not used): " + json.dumps(
            {p: round(v, 4) for (p, _b), v in res.table(args.metric).items()}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
