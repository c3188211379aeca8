"""``jaxsched select RUN [RUN ...] --rescore N``: RLScheduler model choice by scoring every kept
checkpoint greedily on the same ``N`` validation sequences.

For model selection after training (``jaxsched train rlscheduler --keep-checkpoints 0`` keeps
every epoch's checkpoint): each ``checkpoint_*.ckpt`` of each run directory is run greedily on
the same ``N`` sequences of ``jobs`` jobs, drawn as the reference draws its test sequences but
with ``val_seed`` (default 2, so the paper's test sequences, seed 1, stay out of the choice), in
the run's own simulator settings (compat, backfilling, metric). The sequences of a smaller
``N`` are the first ones of a larger one, so ``--rescore 10`` repeats the validation of
``jaxsched train --validate``.

Reports one line per checkpoint and, per run and over all runs, the checkpoint with the best
validation value; ``test`` also scores each chosen checkpoint (only those) on the paper's test
sequences (seed 1, 10 x 1024 jobs from the first 10,000) so the test sequences never influence
the choice. ``epochs=(A, B)`` limits the choice to epochs A..B of every run; ``minutes=M`` to
the epochs each run had finished within M minutes of training (the cumulative per-epoch
``seconds`` of its log, compilation included, validation not), so that "the best a run gives
in M minutes" is chosen the same way for every run. ``top=K`` scores only each run's K best
epochs on its own training validation (the ``val_*`` values of its ``log.jsonl``, ``jaxsched
train --validate``): a first cut on fewer validation sequences, before the longer validation
here.

``benchmarks/paper/score_checkpoints.py`` (the checkout's historical command) is a wrapper of
:func:`rescore` and :func:`format_rescore`.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import JaxschedError
from jaxsched.sim.metrics import HIGHER_IS_BETTER
from jaxsched.systems.rlscheduler.config import make_env
from jaxsched.systems.rlscheduler.evaluate import episodes_fn, load_policy, policy_metric
from jaxsched.train.checkpoint import list_checkpoints
from jaxsched.train.loop import epoch_rows, training_seconds
from jaxsched.workload import read_swf, reference_starts
from jaxsched.workload.paths import run_trace

__all__ = [
    "TEST_SEED",
    "TEST_SEQUENCES",
    "TEST_JOBS",
    "TEST_SLICE",
    "top_validated",
    "score_run",
    "best_row",
    "test_value",
    "rescore",
    "format_rescore",
]

#: the paper's test sequences (RLScheduler Tables V/VI): seed 1, 10 x 1024 jobs, U = 10,000
TEST_SEED, TEST_SEQUENCES, TEST_JOBS, TEST_SLICE = 1, 10, 1024, 10000


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
    jobs = read_swf(run_trace(rc.trace, run_dir)).jobs(rc.rules)
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
    """The row with the best ``value`` (None for no rows)."""
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    return min(rows, key=lambda r: sign * r["value"]) if rows else None


def test_value(path) -> float:
    """The greedy value of the checkpoint ``path`` on the paper's test sequences."""
    pol = load_policy(path)
    jobs = read_swf(run_trace(pol.run.trace, Path(path).parent)).jobs(pol.run.rules)
    starts = reference_starts(TEST_SEED, TEST_SEQUENCES, TEST_JOBS, jobs.n_jobs, TEST_SLICE)
    vals, _ = policy_metric(pol, jobs, starts, TEST_JOBS)
    return float(vals.mean())


def rescore(
    runs,
    val_sequences: int,
    *,
    val_seed: int = 2,
    jobs: int = 1024,
    epochs=None,
    minutes=None,
    top=None,
    test: bool = False,
) -> dict:
    """Score the kept checkpoints of every run (:func:`score_run`) and choose: per run its best
    row (``runs[i]["best"]``, absent when no checkpoint qualifies) and over all runs
    (``"best"``, None when nothing qualifies); with ``test``, each run's choice gets its
    ``"test"`` value (:func:`test_value`).

    Returns ``{"val_seed", "val_sequences", "jobs", "runs", "best"}``."""
    results = [score_run(d, val_seed, val_sequences, jobs, epochs, minutes, top) for d in runs]
    metric = results[0]["metric"]
    chosen = []
    for r in results:
        b = best_row(r["rows"], r["metric"])
        if b is not None:
            r["best"] = dict(b)
            chosen.append(r["best"])
    overall = best_row(chosen, metric)
    for b in chosen if test else []:
        b["test"] = test_value(b["path"])
    return {
        "val_seed": val_seed,
        "val_sequences": val_sequences,
        "jobs": jobs,
        "runs": results,
        "best": overall,
    }


def format_rescore(doc: dict) -> str:
    """The report of :func:`rescore`: every scored checkpoint per run, each run's choice and
    the choice over all runs."""
    metric = doc["runs"][0]["metric"]
    lines = [
        f"greedy {metric} on {doc['val_sequences']} validation sequences x {doc['jobs']} jobs "
        f"(seed {doc['val_seed']})"
    ]
    for r in doc["runs"]:
        lines.append(f"{r['run']} (backfill {r['backfill']}):")
        for row in r["rows"]:
            t = "" if row["train_s"] is None else f"  ({row['train_s'] / 60:.1f} min)"
            lines.append(f"  epoch {row['epoch']:4d}  {row['value']:10.2f}{t}")
    lines.append("best by validation:")
    for r in doc["runs"]:
        if "best" in r:
            b = r["best"]
            t = f"  test {b['test']:.2f}" if "test" in b else ""
            m = "" if b["train_s"] is None else f" after {b['train_s'] / 60:.1f} min"
            lines.append(f"  {r['run']}: epoch {b['epoch']}{m}  validation {b['value']:.2f}{t}")
    overall = doc["best"]
    if overall is not None:
        t = f", test {overall['test']:.2f}" if "test" in overall else ""
        lines.append(f"over all runs: {overall['path']} (validation {overall['value']:.2f}{t})")
    else:
        lines.append("no checkpoint in the epoch range: nothing chosen")
    return "\n".join(lines)
