"""``jaxsched tune TRACE --out DIR``: tune the log-linear priority function on a trace's
training jobs and write it as a tiny model (:mod:`jaxsched.policies.tune`)."""

from __future__ import annotations

from jaxsched.cli.args import command, positive_int

DESCRIPTION = (
    "Tune a priority function w_q log10(requested time) + w_n log10(processors) + w_s "
    "submit/3600 (smaller first; FCFS, SJF and smallest-first are special cases) on a trace's "
    "training jobs and write it as a model file DIR/model.json, which `jaxsched evaluate "
    "--policy tuned:DIR` runs. A random search on the unit sphere, every candidate scored by "
    "the mean --metric on the same --sequences sequences of --jobs jobs drawn (--seed) inside "
    "the training range; round 0 scores FCFS, SJF, smallest-first and random directions, each "
    "later round perturbs the best so far. Only the training sequences choose; --val-range "
    "prints the result on other sequences beside FCFS, SJF and F1. The model file records the "
    "weights, the training range, the scores and this command."
)


def _handler(args) -> int:
    from jaxsched.policies.tune import tune
    from jaxsched.sim.evaluate import use_all_cpu_cores

    use_all_cpu_cores()
    tune(args.trace, args.out, train_range=args.train_range, val_range=args.val_range,
         backfill=args.backfill, compat=args.compat, metric=args.metric, jobs=args.jobs,
         sequences=args.sequences, rounds=args.rounds, population=args.population,
         seed=args.seed, rules=args.rules)  # fmt: skip
    return 0


@command("tune")
def _add_tune(sub) -> None:
    p = sub.add_parser("tune", help="tune a priority function on a trace's training jobs",
                       description=DESCRIPTION)  # fmt: skip
    p.add_argument("trace", metavar="TRACE", help="SWF file (.swf or .swf.gz)")
    p.add_argument("--out", required=True, metavar="DIR", help="write DIR/model.json")
    p.add_argument("--train-range", default=None, metavar="A,B",
                   help="training jobs A..B-1 (0-based indices into the loaded jobs; default "
                   "the first 50%%)")  # fmt: skip
    p.add_argument("--val-range", default=None, metavar="A,B",
                   help="also print the result on sequences from jobs A..B-1 (never used to "
                   "choose)")  # fmt: skip
    p.add_argument(
        "--backfill",
        default="easy",
        metavar="B",
        help="backfilling while tuning (as evaluate's --backfill; default easy)",
    )
    p.add_argument("--compat", action="store_true",
                   help="the RLScheduler reference simulator's semantics")  # fmt: skip
    p.add_argument(
        "--metric",
        default="bsld",
        metavar="M",
        help="the metric minimised (maximised for a utilisation; default bsld)",
    )
    p.add_argument("--jobs", type=positive_int, default=1024, metavar="L",
                   help="jobs per sequence (default 1024)")  # fmt: skip
    p.add_argument("--sequences", type=positive_int, default=32, metavar="K",
                   help="training sequences (default 32)")  # fmt: skip
    p.add_argument("--rounds", type=positive_int, default=6, metavar="R",
                   help="search rounds (default 6)")  # fmt: skip
    p.add_argument("--population", type=positive_int, default=12, metavar="P",
                   help="candidates per round (default 12)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="seed of the sequences and of the search (default 0)")  # fmt: skip
    p.add_argument("--rules", choices=("rlscheduler", "default"), default="rlscheduler",
                   help="trace cleaning rules (default rlscheduler)")  # fmt: skip
    p.set_defaults(handler=_handler)


__all__ = ["DESCRIPTION"]
