"""docs/cli.md is the argument parser's own reference (jaxsched.cli.reference)."""

import argparse

from shared_data import REPO

from jaxsched.cli.reference import command_parsers, render


def test_docs_cli_md_is_current():
    page = (REPO / "docs" / "cli.md").read_text()
    assert page == render(), "docs/cli.md is stale: python -m jaxsched.cli.reference > docs/cli.md"


def test_every_train_system_has_a_section():
    from jaxsched import systems

    page = render()
    for name in systems.names():
        assert f"## `jaxsched train {name}`" in page


def test_render_of_a_tiny_parser():
    p = argparse.ArgumentParser(prog="x")
    sub = p.add_subparsers(dest="cmd")
    run = sub.add_parser("run", description="Run it.")
    run.add_argument("trace", metavar="TRACE", help="a trace")
    run.add_argument("--mode", choices=["a", "b"], default="a", help="the mode | pipe")
    run.add_argument("--fast", action="store_true", help="go fast")
    assert [path for path, _ in command_parsers(p)] == [("run",)]
    page = render(p)
    assert "## `jaxsched run`\n\nRun it.\n" in page
    assert "| `trace` | `TRACE` |  | a trace |" in page
    assert "| `--mode` | `{a,b}` | `a` | the mode \\| pipe |" in page
    assert "| `--fast` |  |  | go fast |" in page
