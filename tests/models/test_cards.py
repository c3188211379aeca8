"""The shipped models' cards (``jaxsched/models/*/README.md``, installed with the wheel) cite
only installed commands (issue 50): no checkout script, no ``PYTHONPATH=.``, and every
``jaxsched …`` command they give, in a code block or in backticks, is accepted by the
command line's own parser (a renamed or removed flag fails here). No JAX work."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest
from shared_data import REPO

from jaxsched.cli import build_parser
from jaxsched.cli.args import UsageError

CARDS = sorted((REPO / "jaxsched" / "models").glob("*/README.md"))
#: what a card may put before ``jaxsched`` on a command line (how the run was pinned or niced)
PREFIX = re.compile(r"^(?:(?:taskset -c [0-9,]+|nice(?: -n \d+)?|[A-Z_]+=\S+)\s+)*")


def card_commands(text: str) -> tuple[list[str], list[str]]:
    """Every ``jaxsched …`` command of a card: (the indented lines of its code blocks, joined
    over trailing backslashes: whole commands; the backticked spans of its prose: whole
    commands or a command's flags cited alone)."""
    blocks, spans, loop = [], [], {}
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if m := re.match(r"\s+for (\w+) in (\S+)", line):  # a shell loop: its first value
            loop[m.group(1)] = m.group(2)
        if line.startswith("    ") or line.startswith("\t"):
            cmd = line.strip()
            while cmd.endswith("\\") and k + 1 < len(lines):
                k += 1
                cmd = cmd[:-1].rstrip() + " " + lines[k].strip()
            cmd = re.sub(r"\$\{?(\w+)\}?", lambda v: loop.get(v.group(1), "1"), cmd)
            cmd = PREFIX.sub("", re.sub(r"^for \w+ in [^;]+; do ", "", cmd))
            if cmd.startswith("jaxsched "):
                blocks.append(re.sub(r";\s*done\s*$", "", cmd))
        else:
            spans += re.findall(r"`(jaxsched [^`]+)`", line)
        k += 1
    return blocks, spans


def _argv(cmd: str) -> list[str]:
    """The arguments after ``jaxsched``: ``[--opt]`` taken as ``--opt``, a placeholder in
    capitals (``--epochs E``, ``DIR``) as 1."""
    argv = shlex.split(cmd.replace("[", " ").replace("]", " "), comments=True)[1:]
    return ["1" if re.fullmatch(r"[A-Z]+", a) else a for a in argv]


def unknown_flags(cmd: str) -> list[str]:
    """The ``--flags`` of ``cmd`` that its (sub)command does not have."""
    parser, argv = build_parser(), _argv(cmd)
    for tok in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if tok.startswith("-") or not subs or tok not in subs[0].choices:
            break
        parser = subs[0].choices[tok]
    known = parser._option_string_actions
    return [t for t in argv if t.startswith("--") and t.split("=")[0] not in known]


def parses(cmd: str) -> str | None:
    """None if the parser accepts ``cmd``, else its complaint."""
    try:
        build_parser().parse_args(_argv(cmd))
    except SystemExit as stop:
        return f"exit {stop.code}"
    except UsageError as e:
        return str(e)
    return None


def test_the_cards_are_found():
    assert len(CARDS) >= 40
    assert sum(len(card_commands(c.read_text())[0]) for c in CARDS) >= 80


@pytest.mark.parametrize("card", CARDS, ids=lambda p: p.parent.name)
def test_card_cites_only_installed_commands(card, capsys):
    text = card.read_text()
    scripts = re.findall(r"benchmarks/\S+\.(?:py|sh)", text)
    assert not scripts, f"{card.parent.name}: cites checkout scripts {scripts}"
    assert "PYTHONPATH" not in text, f"{card.parent.name}: runs from a checkout"
    blocks, spans = card_commands(text)
    bad = {}
    for cmd in blocks:
        why = parses(cmd)
        if why:
            err = capsys.readouterr().err.strip().splitlines()
            bad[cmd] = f"{why} {err[-1] if err else ''}"
    for cmd in spans:
        if unknown_flags(cmd):
            bad[cmd] = f"unknown flags {unknown_flags(cmd)}"
    assert not bad, bad


def test_a_stale_flag_is_caught():
    assert parses("jaxsched evaluate t.swf --sequences 3") is None
    assert parses("jaxsched evaluate t.swf --no-such-flag 3") is not None
    assert parses("jaxsched train a2c --out o --epochs E --seed 2") is None
    assert unknown_flags("jaxsched train dras --best-by") == []
    assert unknown_flags("jaxsched train dras --best-of") == ["--best-of"]
    text = (
        "x `jaxsched select r --rescore 5` y\n\n    jaxsched train a2c \\\n"
        "        --out o\n    for s in 1 2; do jaxsched train a2c --seed $s; done\n"
    )
    assert card_commands(text) == (
        ["jaxsched train a2c --out o", "jaxsched train a2c --seed 1"],
        ["jaxsched select r --rescore 5"])  # fmt: skip
