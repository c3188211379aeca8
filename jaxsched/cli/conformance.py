"""``jaxsched conformance``: the command of :mod:`jaxsched.conformance`."""

from __future__ import annotations

from jaxsched.cli.args import (
    command,
)


@command("conformance")
def _add_conformance(sub) -> None:
    from jaxsched.conformance import cli as conformance

    p = conformance.add_arguments(sub.add_parser("conformance", help=conformance.HELP))
    p.set_defaults(handler=conformance.run)
