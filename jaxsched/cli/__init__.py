"""The ``jaxsched`` command line.

    jaxsched trace info|generate ...     SWF statistics and cleaning; the Lublin generator
    jaxsched evaluate TRACE ...           heuristics (and --model: a learned model) on sequences
    jaxsched simulate TRACE ... --out F   one whole schedule written out (SWF or Batsim CSV)
    jaxsched demo ...                     the demo of `make run`
    jaxsched train SYSTEM TRACE ...       one subcommand per registered system (rlscheduler,
                                          splitwindow, a2c, schedinspector, dras)
    jaxsched select RUN [RUN ...]         the model of training runs, by their validation logs
                                          (--rescore N: every kept checkpoint rescored)
    jaxsched tune TRACE --out DIR         a priority function tuned on a trace's training jobs
    jaxsched plot DIR | schedule F | compare F F ...
    jaxsched conformance FILE|DIR ...     reference files replayed through the engine

Every flag: ``docs/cli.md``, written from this parser by :mod:`jaxsched.cli.reference`.

``train``'s subcommands, ``evaluate --model`` and ``plot`` come from the systems registry
(:mod:`jaxsched.systems`): ``train <system>`` has the flags and the driver of that system, and
a run directory is loaded / plotted by the system its ``run.json`` names.

Errors a user can cause (:class:`~jaxsched.errors.JaxschedError`, missing files and other
``OSError``, bad arguments) are printed as one line, ``jaxsched: error: <message>``, on stderr,
and :func:`main` returns 2. Warnings from reading traces (skipped lines) are printed as
``jaxsched: warning: <message>``.

Adding a subcommand: a module ``jaxsched/cli/<name>.py`` with a function that takes the
subparsers object, adds one parser and sets ``handler=`` to a small ``handler(args) -> int``;
register it with ``@command("name")`` (:mod:`jaxsched.cli.args`) and import the module below.
:func:`build_parser` adds the registered commands in registration order.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings

from jaxsched.cli.args import (
    COMMANDS,
    PROG,
    UsageError,
    _ArgumentParser,
    command,
    int_arg,
    nonneg_int,
    positive_int,
)
from jaxsched.compile_cache import enable_compile_cache
from jaxsched.errors import JaxschedError, SWFWarning

#: the subcommand modules; importing one registers its commands, in this order (``--help``)
SUBCOMMAND_MODULES = (
    "trace",
    "evaluate",
    "simulate",
    "demo",
    "train",
    "select",
    "tune",
    "conformance",
)
for _name in SUBCOMMAND_MODULES:
    importlib.import_module(f"jaxsched.cli.{_name}")

__all__ = [
    "main",
    "build_parser",
    "command",
    "COMMANDS",
    "positive_int",
    "nonneg_int",
    "int_arg",
]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (all registered subcommands)."""
    parser = _ArgumentParser(prog=PROG, description="HPC batch-job scheduling research in JAX.")
    from jaxsched import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="{" + ",".join(COMMANDS) + "}", required=True
    )
    for add in COMMANDS.values():
        add(sub)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _error(message: str) -> int:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr)
    return 2


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured in tests)
        pass


def _defer_swf_warnings() -> list:
    """Inside ``warnings.catch_warnings()``: every SWF warning (a problem of the user's file) is
    kept, to be printed as one ``jaxsched: warning:`` line each when the command ends; every
    other warning is shown at once as Python shows it (keeping those too, e.g. thousands of JAX
    compile-cache warnings in a long run, and replaying them at the end held runs for minutes)."""
    caught: list = []
    show = warnings.showwarning

    def keep_swf(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, SWFWarning):
            caught.append(message)
        else:
            show(message, category, filename, lineno, file, line)

    warnings.simplefilter("always", SWFWarning)
    warnings.showwarning = keep_swf
    return caught


def _model_of(args) -> str:
    """``"--model M: "`` for a command with one model argument (else "")."""
    models = getattr(args, "model", None)
    if isinstance(models, (list, tuple)):
        models = models[0] if len(models) == 1 else None
    return f"--model {models}: " if isinstance(models, str) else ""


@contextlib.contextmanager
def _x64_if_jax():
    """JAX's 64-bit mode for the command only (:mod:`jaxsched.precision`), the caller's setting
    restored after. A command that needs JAX imports it after this point; then, with no JAX
    imported yet, JAX_ENABLE_X64 makes the import start in 64-bit mode (and the commands that
    never import JAX, ``jaxsched trace ...``, do not pay for its import here)."""
    if "jax" not in sys.modules:
        saved = os.environ.get("JAX_ENABLE_X64")
        os.environ["JAX_ENABLE_X64"] = "1"
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop("JAX_ENABLE_X64", None)
            else:
                os.environ["JAX_ENABLE_X64"] = saved
        return
    from jaxsched.precision import x64

    with x64():
        yield


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        return _error(f"{e.message} (usage: {e.usage.removeprefix('usage: ')})")
    except SystemExit as e:  # --help / --version
        return e.code if isinstance(e.code, int) else 0
    args.argv_ = list(sys.argv[1:] if argv is None else argv)  # as given (train --resume)
    if args.command in ("evaluate", "demo", "train", "tune", "conformance"):
        enable_compile_cache()
    with warnings.catch_warnings():
        caught = _defer_swf_warnings()
        try:
            with _x64_if_jax():
                rc = args.handler(args)
        except JaxschedError as e:
            rc = _error(str(e))
        except BrokenPipeError:  # e.g. `jaxsched trace info f | head`: stop quietly
            _silence_stdout()
            rc = 1
        except OSError as e:
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            rc = _error(f"{where}{e.strerror or e}")
        except Exception as e:  # after OSError: BrokenPipeError and OSError stay theirs
            if type(e).__name__ != "ScopeParamShapeError":  # flax.errors: params vs network
                raise
            rc = _error(f"{_model_of(args)}the checkpoint's parameters do not fit the network "
                        f"its run.json describes: {str(e).split(' (https')[0]}")  # fmt: skip
        finally:
            for message in caught:
                print(f"{PROG}: warning: {_one_line(message)}", file=sys.stderr)
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
