"""``jaxsched select RUN [RUN ...]``: choose a model from training runs' own validation logs,
by each system's rule (:mod:`jaxsched.train.select`, ``System.selection_rule``); with
``--rescore N``, by scoring every kept checkpoint on N validation sequences instead
(``System.rescore``: RLScheduler, :mod:`jaxsched.systems.rlscheduler.rescore`)."""

from __future__ import annotations

import json

from jaxsched.cli.args import command, epoch_range, positive_int
from jaxsched.errors import ConfigError

DESCRIPTION = (
    "Choose a model from one or more training runs of one system by their own validation logs "
    "(train with --validate): per run the best validated epoch, the best within the system's "
    "bound, and the checkpoint of that epoch; then the choice over the runs. RLScheduler: "
    "val_<metric>; SchedInspector: the inspected value within --max-util-loss points of the "
    "base's utilisation; split window: the average wait within --max-util-loss points of FCFS "
    "+ EASY's utilisation; DRAS: the validation month's average wait with its maximum wait "
    "within --bound x FCFS + EASY's; A2cScheduler: the validation slowdown. Reads logs only: "
    "the test jobs never enter the choice. --rescore N (RLScheduler runs trained with "
    "--keep-checkpoints 0): instead, every kept checkpoint is run greedily on the same N "
    "validation sequences (drawn as the paper's test sequences, with --val-seed) in the run's "
    "own settings; per run and over all runs the best one, and with --test its value on the "
    "paper's test sequences (seed 1, 10 x 1024 jobs), which never enter the choice."
)

#: the flags of --rescore alone: (attribute, flag)
RESCORE_ONLY = (("val_seed", "--val-seed"), ("jobs", "--jobs"), ("epochs", "--epochs"),
                ("minutes", "--minutes"), ("top", "--top"), ("test", "--test"))  # fmt: skip


def _handler(args) -> int:
    from jaxsched import systems
    from jaxsched.train.select import format_selection, select_runs

    found = {systems.system_of_run(r).name for r in args.runs}
    if len(found) > 1:
        raise ConfigError(
            f"select: the runs belong to several systems ({', '.join(sorted(found))})"
        )
    system = systems.get(found.pop())
    if args.rescore is not None:
        return _rescore(system, args)
    given = [flag for attr, flag in RESCORE_ONLY if getattr(args, attr) not in (None, False)]
    if given:
        raise ConfigError(f"select: {', '.join(given)} only with --rescore N")
    options = {"max_util_loss": args.max_util_loss, "bound": args.bound}
    rules = {}

    def rule_of(run):
        if run not in rules:
            rules[run] = system.selection_rule(run, options)
        return rules[run]

    choices, top = select_runs(args.runs, rule_of)
    if args.json:
        rows = [
            {"run": str(c.run), "best": c.best, "chosen": c.chosen,
             "checkpoint": None if c.checkpoint is None else str(c.checkpoint)}
            for c in choices
        ]  # fmt: skip
        print(json.dumps({"system": system.name, "runs": rows,
                          "choice": None if top is None else str(top.run)}))  # fmt: skip
    else:
        print(format_selection(choices, top, rule_of(choices[0].run)))
    return 0


def _rescore(system, args) -> int:
    if system.rescore is None:
        raise ConfigError(
            f"select --rescore: rescoring kept checkpoints is for RLScheduler runs; these are "
            f"{system.name} runs (choose by their validation logs: jaxsched select RUN)"
        )
    from jaxsched.compile_cache import enable_compile_cache

    enable_compile_cache()
    doc, text = system.rescore(
        args.runs, args.rescore, val_seed=2 if args.val_seed is None else args.val_seed,
        jobs=args.jobs or 1024, epochs=args.epochs, minutes=args.minutes, top=args.top,
        test=args.test,
    )  # fmt: skip
    print(json.dumps(doc) if args.json else text)
    return 0


@command("select")
def _add_select(sub) -> None:
    p = sub.add_parser("select", help="choose a model from runs' validation logs (or rescore checkpoints)",
                       description=DESCRIPTION)  # fmt: skip
    p.add_argument("runs", nargs="+", metavar="RUN", help="training run directories")
    p.add_argument("--max-util-loss", type=float, default=1.0, metavar="P",
                   help="SchedInspector, split window: utilisation points an epoch may lose "
                   "(default 1)")  # fmt: skip
    p.add_argument("--bound", type=float, default=1.5, metavar="K",
                   help="DRAS: maximum wait within K x FCFS + EASY's on the validation month "
                   "(default 1.5)")  # fmt: skip
    p.add_argument("--rescore", type=positive_int, default=None, metavar="N",
                   help="RLScheduler: choose by scoring every kept checkpoint greedily on N "
                   "validation sequences instead of the runs' logs")  # fmt: skip
    p.add_argument("--val-seed", type=int, default=None, metavar="S",
                   help="--rescore: draw the validation sequences with seed S (default 2; the "
                   "paper's test sequences are seed 1)")  # fmt: skip
    p.add_argument("--jobs", type=positive_int, default=None, metavar="L",
                   help="--rescore: jobs per validation sequence (default 1024)")  # fmt: skip
    p.add_argument("--epochs", type=epoch_range, default=None, metavar="A-B",
                   help="--rescore: only epochs A..B of every run (e.g. 1-40)")  # fmt: skip
    p.add_argument("--minutes", type=float, default=None, metavar="M",
                   help="--rescore: only the epochs a run had finished within M minutes of "
                   "training (its log's per-epoch seconds)")  # fmt: skip
    p.add_argument("--top", type=positive_int, default=None, metavar="K",
                   help="--rescore: only each run's K best epochs on its own training "
                   "validation (log.jsonl)")  # fmt: skip
    p.add_argument("--test", action="store_true",
                   help="--rescore: also score each run's chosen checkpoint (only it) on the "
                   "paper's test sequences")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="print JSON instead of text (--rescore: every checkpoint's score, each "
                   "run's choice and the choice over the runs)")  # fmt: skip
    p.set_defaults(handler=_handler)


__all__ = ["DESCRIPTION"]
