"""``jaxsched conformance FILE… [--traces DIR] [--tolerance T] [--json] [-v]``.

Replays reference files (or every ``*.json`` of a folder given as FILE) through the JAX
implementation and prints one line per file — schema, trace, matched/total values, worst
error, seconds — and a summary line with the wall time.  Exit status: 0 every value matched,
1 some value is off, 2 a file could not be checked (missing, not JSON, unknown or not yet
supported schema, missing field, trace not found: one line ``jaxsched: error: <file>: <what>``
on stderr; the other files are still checked).

The main ``jaxsched`` command line registers it with :func:`add_arguments` and :func:`run`;
:func:`main` runs it stand-alone (tests, ``python -m jaxsched.conformance.cli``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

from jaxsched import formatting as F
from jaxsched.compile_cache import enable_compile_cache
from jaxsched.conformance import SCHEMAS, check_file, pending
from jaxsched.conformance.base import DEFAULT_TOLERANCE, TraceCache, default_traces_dir
from jaxsched.errors import JaxschedError, SWFWarning

__all__ = ["add_arguments", "run", "main"]

PROG = "jaxsched"
HELP = "replay reference files through the JAX implementation"


def _tolerance(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not v >= 0 or math.isinf(v):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the command's arguments to ``parser`` (its own or the ``jaxsched`` subparser) and
    return it."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "schemas:\n" + "\n".join(
        f"  {s.NAME:24s} {s.DESCRIPTION}"
        + (" (recognised, not supported yet)" if isinstance(s, pending.Pending) else "")
        for s in SCHEMAS
    )
    parser.description = (
        "Replay reference files through the JAX implementation: per file, the values\n"
        "matched and the worst error. The schema is read from each file. Exit status:\n"
        "0 all matched, 1 some value is off, 2 a file cannot be checked."
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="reference JSON files, or folders (their *.json files)",
    )
    parser.add_argument(
        "--traces",
        metavar="DIR",
        default=None,
        help="folder of the traces the files name (default: $JAXSCHED_SHARED/traces if set, "
        "else ../shared/traces)",
    )
    parser.add_argument(
        "--tolerance",
        type=_tolerance,
        default=DEFAULT_TOLERANCE,
        metavar="T",
        help="largest accepted |got - expected| / max(1, |expected|) (default %(default)g)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="list every mismatch (file, key, values)"
    )
    return parser


def _one_line(text) -> str:
    return " ".join(str(text).split())


def _err(text: str) -> None:
    print(f"{PROG}: error: {_one_line(text)}", file=sys.stderr, flush=True)


def _expand(files) -> list[tuple[str, str | None]]:
    """``[(file, error or None)]``: folders become their sorted ``*.json`` files."""
    out = []
    for f in files:
        p = Path(f)
        if p.is_dir():
            found = sorted(q for q in p.glob("*.json") if q.is_file())
            if not found:
                out.append((f, "folder without *.json files"))
            out.extend((str(q), None) for q in found)
        else:
            out.append((f, None))
    return out


def _line(rep) -> str:
    parts = [rep.file, rep.schema] + ([f"trace {rep.trace}"] if rep.trace else [])
    parts += [
        f"{rep.matched}/{rep.total} matched",
        f"worst |err| {F.scientific(rep.worst_error)}",
    ]
    parts += [
        f"{m.where} {m.expected} != {m.got}" for m in rep.mismatches if m.where == "loaded_jobs"
    ]
    parts.append(f"{rep.seconds:.1f} s")
    parts.append("ok" if rep.ok else "MISMATCH")
    return "  ".join(parts)


def run(args: argparse.Namespace) -> int:
    """Run the command for parsed ``args``; returns the exit status (0, 1 or 2)."""
    t0 = time.perf_counter()
    traces_dir = Path(args.traces) if args.traces is not None else default_traces_dir()
    cache = TraceCache()
    reports, errors = [], []
    compiled = False
    for file, problem in _expand(args.files):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SWFWarning)
            try:
                if problem:
                    raise JaxschedError(problem)
                if not compiled:
                    enable_compile_cache()
                    compiled = True
                rep = check_file(file, traces_dir, tolerance=args.tolerance, traces=cache)
            except (JaxschedError, OSError) as e:
                if isinstance(e, OSError):
                    name = getattr(e, "filename", None)
                    what = e.strerror or str(e)
                    msg = f"{name}: {what}" if name and str(name) != file else what
                else:
                    msg = str(e)
                _err(f"{file}: {msg}")
                errors.append({"file": file, "error": _one_line(msg)})
                continue
            finally:
                for w in caught:
                    if issubclass(w.category, SWFWarning):
                        print(f"{PROG}: warning: {_one_line(w.message)}", file=sys.stderr)
        reports.append(rep)
        if not args.json:
            print(_line(rep), flush=True)
            if args.verbose:
                for m in rep.mismatches:
                    print(f"  mismatch: {rep.file} {m.describe()}", flush=True)
    wall = time.perf_counter() - t0
    total = sum(r.total for r in reports)
    matched = sum(r.matched for r in reports)
    worst = max((r.worst_error for r in reports), default=0.0)
    bad = [r for r in reports if not r.ok]
    status = 2 if errors else 1 if bad else 0
    if args.json:
        out = {
            "files": [r.to_json() for r in reports] + errors,
            "summary": {
                "files": len(reports) + len(errors),
                "checked": len(reports),
                "errors": len(errors),
                "mismatched_files": len(bad),
                "total": total,
                "matched": matched,
                "worst_error": worst if math.isfinite(worst) else str(worst),
                "tolerance": args.tolerance,
                "traces": str(traces_dir),
                "wall_s": round(wall, 3),
                "status": status,
            },
        }
        print(json.dumps(out, indent=1))
    else:
        verdict = {0: "all matched", 1: "MISMATCH", 2: "ERRORS"}[status]
        print(
            f"conformance: {len(reports)} file(s) checked, {len(errors)} error(s), "
            f"{matched}/{total} values matched, worst |err| {F.scientific(worst)} "
            f"(tolerance {args.tolerance:g}); wall {wall:.1f} s: {verdict}",
            flush=True,
        )
    return status


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point: parse ``argv`` and :func:`run`; returns the exit status."""
    parser = argparse.ArgumentParser(prog=f"{PROG} conformance")
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, or a usage error (argparse printed it)
        return e.code if isinstance(e.code, int) else 2
    return run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
