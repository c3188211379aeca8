"""``jaxsched train <system>`` and ``jaxsched plot DIR``, dispatched on the systems registry."""

from __future__ import annotations

from jaxsched.cli.args import (
    command,
)


def _cmd_train(args) -> int:
    import jaxsched.sim  # noqa: F401  (enables x64)

    return args.system.train(args)


@command("train")
def _add_train(sub) -> None:
    from jaxsched import systems

    p = sub.add_parser(
        "train",
        help="train a learned scheduler",
        description="Train a learned scheduler on an SWF trace.",
    )
    names = systems.names()
    algs = p.add_subparsers(dest="algorithm", metavar="{" + ",".join(names) + "}", required=True)
    for name in names:
        system = systems.get(name)
        r = algs.add_parser(name, help=system.help, description=system.description)
        system.add_train_arguments(r)
        r.set_defaults(handler=_cmd_train, system=system)


def _cmd_plot(args) -> int:
    from jaxsched import systems

    print(systems.system_of_run(args.dir).plot(args.dir, args.out))
    return 0


@command("plot")
def _add_plot(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="plot a training run's learning curve (PNG)",
        description="Training curve of a `jaxsched train` directory: the metric "
        "per epoch with SJF and F1 on the same sequences.",
    )
    p.add_argument("dir", metavar="DIR")
    p.add_argument(
        "--out", default=None, metavar="FILE", help="PNG path (default DIR/training_curve.png)"
    )
    p.set_defaults(handler=_cmd_plot)
