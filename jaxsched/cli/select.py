"""``jaxsched select RUN [RUN ...]``: choose a model from training runs' own validation logs,
by each system's rule (:mod:`jaxsched.train.select`, ``System.selection_rule``)."""

from __future__ import annotations

import json

from jaxsched.cli.args import command
from jaxsched.errors import ConfigError

DESCRIPTION = (
    "Choose a model from one or more training runs of one system by their own validation logs "
    "(train with --validate): per run the best validated epoch, the best within the system's "
    "bound, and the checkpoint of that epoch; then the choice over the runs. RLScheduler: "
    "val_<metric>; SchedInspector: the inspected value within --max-util-loss points of the "
    "base's utilisation; split window: the average wait within --max-util-loss points of FCFS "
    "+ EASY's utilisation; DRAS: the validation month's average wait with its maximum wait "
    "within --bound x FCFS + EASY's; A2cScheduler: the validation slowdown. Reads logs only: "
    "the test jobs never enter the choice."
)


def _handler(args) -> int:
    from jaxsched import systems
    from jaxsched.train.select import format_selection, select_runs

    found = {systems.system_of_run(r).name for r in args.runs}
    if len(found) > 1:
        raise ConfigError(
            f"select: the runs belong to several systems ({', '.join(sorted(found))})"
        )
    system = systems.get(found.pop())
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


@command("select")
def _add_select(sub) -> None:
    p = sub.add_parser("select", help="choose a model from runs' validation logs",
                       description=DESCRIPTION)  # fmt: skip
    p.add_argument("runs", nargs="+", metavar="RUN", help="training run directories")
    p.add_argument("--max-util-loss", type=float, default=1.0, metavar="P",
                   help="SchedInspector, split window: utilisation points an epoch may lose "
                   "(default 1)")  # fmt: skip
    p.add_argument("--bound", type=float, default=1.5, metavar="K",
                   help="DRAS: maximum wait within K x FCFS + EASY's on the validation month "
                   "(default 1.5)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(handler=_handler)


__all__ = ["DESCRIPTION"]
