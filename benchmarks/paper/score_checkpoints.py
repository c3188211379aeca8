"""Score every kept checkpoint of one or more training runs on validation sequences.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/score_checkpoints.py RUN_DIR [RUN_DIR ...]
        [--val-seed 2] [--val-sequences 10] [--jobs 1024] [--epochs A-B] [--minutes M]
        [--top K] [--test] [--json FILE]

For model selection after training (``jaxsched train --keep-checkpoints 0`` keeps every
epoch's checkpoint): each ``checkpoint_*.ckpt`` of each run directory is run greedily on the
same ``--val-sequences`` sequences of ``--jobs`` jobs, drawn as the reference draws its test
sequences but with ``--val-seed`` (default 2, so the paper's test sequences, seed 1, stay out
of the choice), in the run's own simulator settings (compat, backfilling, metric). The
sequences of a smaller ``--val-sequences`` are the first ones of a larger one, so
``--val-sequences 10`` repeats the validation of ``jaxsched train --validate``.

Prints one line per checkpoint and, per run and over all runs, the checkpoint with the best
validation value; ``--test`` also scores that chosen checkpoint (only it) on the paper's test
sequences (seed 1, 10 x 1024 jobs) so the test sequences never influence the choice.
``--epochs A-B`` limits the choice to epochs A..B of every run; ``--minutes M`` to the epochs
each run had finished within M minutes of training (the cumulative per-epoch ``seconds`` of
its log, compilation included, validation not), so that "the best a run gives in M minutes"
is chosen the same way for every run. ``--top K`` scores only each run's K best epochs on its
own training validation (the ``val_*`` values of its ``log.jsonl``, ``jaxsched train
--validate``): a first cut on fewer validation sequences, before the longer validation here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.common import REPO  # noqa: E402
from jaxsched.errors import JaxschedError  # noqa: E402
from jaxsched.sim.metrics import HIGHER_IS_BETTER  # noqa: E402
from jaxsched.systems.rlscheduler.config import make_env  # noqa: E402
from jaxsched.systems.rlscheduler.evaluate import (  # noqa: E402
    episodes_fn,
    load_policy,
    policy_metric,
)
from jaxsched.train.checkpoint import list_checkpoints  # noqa: E402
from jaxsched.train.loop import epoch_rows, training_seconds  # noqa: E402
from jaxsched.workload import read_swf, reference_starts  # noqa: E402

#: the paper's test sequences (RLScheduler Tables V/VI): seed 1, 10 x 1024 jobs, U = 10,000
TEST_SEED, TEST_SEQUENCES, TEST_JOBS, TEST_SLICE = 1, 10, 1024, 10000


def _epoch_range(text: str):
    try:
        a, b = (int(x) for x in text.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--epochs: expected A-B (e.g. 1-40), got {text!r}"
        ) from None
    if a > b:
        raise argparse.ArgumentTypeError(f"--epochs: {a} > {b}")
    return a, b


def _trace_path(run) -> Path:
    p = Path(run.trace)
    return p if p.is_absolute() else REPO / p


def top_validated(run_dir, k: int, metric: str) -> set:
    """The epochs (ints) of the ``k`` best training validations logged in ``run_dir``'s
    ``log.jsonl`` (``val_<metric>``; lower is better unless the metric is higher-is-better; an
    epoch logged more than once counts once, its last line)."""
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    key = f"val_{metric}"
    vals = sorted((sign * r[key], int(r["epoch"])) for r in epoch_rows(run_dir) if key in r)
    return {e for _, e in vals[:k]}


def score_run(
    run_dir, val_seed: int, n_val: int, jobs_per_seq: int, epochs=None, minutes=None, top=None
) -> dict:
    """Greedy validation value of every checkpoint of ``run_dir`` (only epochs in the range
    ``epochs``, with ``minutes`` finished within that much training time, with ``top`` among
    the run's ``top`` best training validations: :func:`top_validated`).

    Returns ``{"run", "metric", "backfill", "starts", "rows": [{"epoch", "value", "path",
    "train_s"}]}`` (``train_s``: cumulative training seconds at the end of the epoch).
    """
    run_dir = Path(run_dir)
    ckpts = list_checkpoints(run_dir)
    if not ckpts:
        raise JaxschedError(f"{run_dir}: no checkpoint_*.ckpt files")
    first = load_policy(ckpts[0])
    rc = first.run
    jobs = read_swf(_trace_path(rc)).jobs(rc.rules)
    starts = reference_starts(val_seed, n_val, jobs_per_seq, jobs.n_jobs, rc.job_slice)
    env = make_env(jobs, rc, jobs_per_seq)
    fn = episodes_fn(env, first.net, False)
    keys = jax.random.split(jax.random.PRNGKey(0), n_val)
    s = jnp.asarray(starts, jnp.int32)
    secs = training_seconds(run_dir)
    keep = None if top is None else top_validated(run_dir, top, rc.metric)
    rows = []
    for c in ckpts:
        pol = load_policy(c)
        if epochs is not None and not epochs[0] <= pol.epoch <= epochs[1]:
            continue
        if keep is not None and int(pol.epoch) not in keep:
            continue
        t = secs.get(int(pol.epoch))
        if minutes is not None and (t is None or t > 60.0 * minutes):
            continue
        vals, _ = fn(pol.params, s, keys)
        rows.append(
            {
                "epoch": int(pol.epoch),
                "value": float(np.mean(np.asarray(vals))),
                "path": str(c),
                "train_s": t,
            }
        )
    return {
        "run": str(run_dir),
        "metric": rc.metric,
        "backfill": rc.backfill,
        "starts": [int(x) for x in starts],
        "rows": rows,
    }


def best_row(rows, metric: str):
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    return min(rows, key=lambda r: sign * r["value"]) if rows else None


def test_value(path: str) -> float:
    pol = load_policy(path)
    jobs = read_swf(_trace_path(pol.run)).jobs(pol.run.rules)
    starts = reference_starts(TEST_SEED, TEST_SEQUENCES, TEST_JOBS, jobs.n_jobs, TEST_SLICE)
    vals, _ = policy_metric(pol, jobs, starts, TEST_JOBS)
    return float(vals.mean())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--val-seed", type=int, default=2)
    p.add_argument("--val-sequences", type=int, default=10)
    p.add_argument("--jobs", type=int, default=1024, help="jobs per validation sequence")
    p.add_argument(
        "--epochs",
        type=_epoch_range,
        default=None,
        help="only epochs A..B of every run (e.g. 1-40)",
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="only the epochs a run had finished within M minutes of training",
    )
    p.add_argument(
        "--top",
        type=int,
        default=None,
        metavar="K",
        help="only each run's K best epochs on its own training validation (log.jsonl)",
    )
    p.add_argument(
        "--test",
        action="store_true",
        help="also score each chosen checkpoint on the paper's test sequences",
    )
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    try:
        results = [
            score_run(d, a.val_seed, a.val_sequences, a.jobs, a.epochs, a.minutes, a.top)
            for d in a.runs
        ]
    except JaxschedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    metric = results[0]["metric"]
    print(
        f"greedy {metric} on {a.val_sequences} validation sequences x {a.jobs} jobs "
        f"(seed {a.val_seed})"
    )
    chosen = []
    for r in results:
        print(f"{r['run']} (backfill {r['backfill']}):")
        for row in r["rows"]:
            t = "" if row["train_s"] is None else f"  ({row['train_s'] / 60:.1f} min)"
            print(f"  epoch {row['epoch']:4d}  {row['value']:10.2f}{t}")
        b = best_row(r["rows"], r["metric"])
        if b is not None:
            r["best"] = dict(b)
            chosen.append(r["best"])
    overall = best_row(chosen, metric)
    targets = chosen if a.test else []
    for b in targets:
        b["test"] = test_value(b["path"])
    print("best by validation:")
    for r in results:
        if "best" in r:
            b = r["best"]
            t = f"  test {b['test']:.2f}" if "test" in b else ""
            m = "" if b["train_s"] is None else f" after {b['train_s'] / 60:.1f} min"
            print(f"  {r['run']}: epoch {b['epoch']}{m}  validation {b['value']:.2f}{t}")
    if overall is not None:
        t = f", test {overall['test']:.2f}" if "test" in overall else ""
        print(f"over all runs: {overall['path']} (validation {overall['value']:.2f}{t})")
    else:
        print("no checkpoint in the epoch range: nothing chosen")
    if a.json:
        a.json.write_text(
            json.dumps(
                {
                    "val_seed": a.val_seed,
                    "val_sequences": a.val_sequences,
                    "jobs": a.jobs,
                    "runs": results,
                    "best": overall,
                },
                indent=1,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
