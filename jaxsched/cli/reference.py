"""docs/cli.md, written from the argument parser itself so that it cannot go stale.

    python -m jaxsched.cli.reference > docs/cli.md      # regenerate after changing a flag

One section per command (``jaxsched train rlscheduler`` is its own section), each a table of
its arguments: the option strings, the value it takes (metavar or choices), the default and the
help text. The text is built from argparse's actions, not from ``format_help``, so it does not
depend on the terminal's width or on the Python version's help layout.
``tests/cli/test_cli_reference.py`` fails when docs/cli.md differs from :func:`render`.
"""

from __future__ import annotations

import argparse

__all__ = ["render", "command_parsers"]

HEADER = """# Command-line reference

Generated from the argument parser (`python -m jaxsched.cli.reference > docs/cli.md`); a test
fails when this page and the parser disagree. Every command prints the same text with `--help`.
Malformed input is reported as one line, `file:line: field: what is wrong`, with exit status 2.
"""


def command_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (command path, parser) pair below ``parser``, depth first, in registration order.

    The root itself is left out; ``("train", "rlscheduler")`` is one path."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((path + (name,), sub))
                found.extend(command_parsers(sub, path + (name,)))
    return found


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    if action.metavar is not None:
        return str(action.metavar)
    return action.dest.upper() if action.option_strings else action.dest


def _default(action: argparse.Action) -> str:
    d = action.default
    if d is None or d is argparse.SUPPRESS or action.nargs == 0:
        return ""
    return f"`{d}`" if not isinstance(d, (list, tuple)) else f"`{','.join(map(str, d))}`"


def _rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if a.help is argparse.SUPPRESS:
            continue
        name = ", ".join(f"`{o}`" for o in a.option_strings) or f"`{a.dest}`"
        value = _value(a)
        help_text = (a.help or "") % {"default": a.default} if a.help else ""
        rows.append(
            f"| {name} | {_cell(f'`{value}`' if value else '')} | {_cell(_default(a))} "
            f"| {_cell(help_text)} |"
        )
    return rows


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The markdown page for ``parser`` (default: the full ``jaxsched`` parser)."""
    if parser is None:
        from jaxsched.cli import build_parser

        parser = build_parser()
    out = [HEADER]
    for path, sub in command_parsers(parser):
        out.append(f"## `jaxsched {' '.join(path)}`\n")
        if sub.description:
            out.append(sub.description.strip() + "\n")
        rows = _rows(sub)
        if rows:
            out.append("| argument | value | default | meaning |\n|---|---|---|---|")
            out.extend(rows)
            out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
