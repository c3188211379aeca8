"""The ``jaxsched`` command line.

    jaxsched trace info FILE [--first N] [--rules rlscheduler|default] [--skip-bad-lines] [--json]
    jaxsched trace generate lublin (--preset lublin-1|lublin-2 | --nodes P) [--typed|--typeless]
                                   [--jobs N] [--seed S] [--start-hour H] --out FILE
    jaxsched evaluate TRACE [--compat rlscheduler] [--policy P,..] [--backfill B,..]
                      [--metric M,..] [--jobs N] [--starts I,.. | --sequences K --seed S] [--json]
    jaxsched demo [--sequences K] [--train-minutes M]
    jaxsched train SYSTEM TRACE ...        (one subcommand per registered system; today:)
    jaxsched train rlscheduler TRACE --epochs E --out DIR [--metric M] [--backfill B]
                   [--compat rlscheduler] [--seed S] [--resume] [--trajectories N] ...
    jaxsched evaluate ... --model DIR [--sample]
    jaxsched plot DIR [--out FILE]

``train``'s subcommands, ``evaluate --model`` and ``plot`` come from the systems registry
(:mod:`jaxsched.systems`): ``train <system>`` has the flags and the driver of that system, and
a run directory is loaded / plotted by the system its ``run.json`` names.

Errors a user can cause (:class:`~jaxsched.errors.JaxschedError`, missing files and other
``OSError``, bad arguments) are printed as one line, ``jaxsched: error: <message>``, on stderr,
and :func:`main` returns 2. Warnings from reading traces (skipped lines) are printed as
``jaxsched: warning: <message>``.

Adding a subcommand: write a function that takes the subparsers object, adds one parser, and
sets ``handler=`` to a small ``handler(args) -> int`` function. Register it with
``@command("name")``. :func:`build_parser` adds the registered commands in registration order.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from jaxsched.errors import ConfigError, JaxschedError, SWFWarning

__all__ = [
    "main",
    "build_parser",
    "command",
    "COMMANDS",
    "positive_int",
    "nonneg_int",
    "int_arg",
]

PROG = "jaxsched"

#: name -> function(subparsers) that adds the subcommand's parser (see the module docstring).
COMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {}


def command(name: str):
    """Register a top-level subcommand builder under ``name``."""

    def deco(fn):
        COMMANDS[name] = fn
        return fn

    return deco


class UsageError(Exception):
    """An argparse error, turned into a one-line message by :func:`main`."""

    def __init__(self, prog: str, message: str, usage: str):
        super().__init__(message)
        self.prog, self.message, self.usage = prog, message, usage


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # noqa: D401 - argparse API
        raise UsageError(self.prog, message, " ".join(self.format_usage().split()))


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def nonneg_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    v = int_arg(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return v


def int_arg(text: str) -> int:
    """argparse type: an integer (one-line error otherwise)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


# ----------------------------------------------------------------------------------------------
# trace
# ----------------------------------------------------------------------------------------------
def _trace_report(path, *, first=None, rules="rlscheduler", skip=False, as_json=False) -> str:
    from jaxsched.workload.stats import format_jobs_summary, format_stats, jobs_summary, trace_stats
    from jaxsched.workload.swf import read_swf

    trace = read_swf(path, on_error="skip" if skip else "raise")
    if first is not None:
        trace = trace.head(first)
    stats = trace_stats(trace)
    summary = jobs_summary(trace.jobs(rules))
    if as_json:
        return json.dumps(
            {"trace": stats, "jobs": summary, "skipped": trace.skipped, "notes": trace.notes},
            indent=2,
        )
    return format_stats(stats) + "\n\n" + format_jobs_summary(summary)


def _cmd_trace_info(args) -> int:
    print(
        _trace_report(
            args.file,
            first=args.first,
            rules=args.rules,
            skip=args.skip_bad_lines,
            as_json=args.json,
        )
    )
    return 0


def _cmd_trace_generate_lublin(args) -> int:
    try:
        from jaxsched.workload import lublin
    except ImportError as e:
        raise JaxschedError(f"the Lublin generator is not available ({e})") from e
    try:
        out = lublin.generate_cli(
            args.preset, args.nodes, args.typed, args.jobs, args.seed, args.start_hour, args.out
        )
    except ValueError as e:  # generate_cli reports bad input as ValueError
        if isinstance(e, JaxschedError):
            raise
        raise ConfigError(str(e)) from e
    print(f"wrote {out if out is not None else args.out}")
    return 0


@command("trace")
def _add_trace(sub) -> None:
    p = sub.add_parser(
        "trace",
        help="inspect and generate SWF workload traces",
        description="Inspect and generate SWF workload traces.",
    )
    tsub = p.add_subparsers(dest="trace_command", metavar="{info,generate}", required=True)

    info = tsub.add_parser(
        "info",
        help="statistics of a trace and what the cleaning rules do",
        description="Read an SWF trace (plain or compressed), validate it, "
        "and print its statistics and the result of a cleaning "
        "rule set.",
    )
    info.add_argument("file", metavar="FILE", help="SWF file (.swf, .swf.gz, ...)")
    info.add_argument("--first", type=positive_int, metavar="N", help="only the first N job lines")
    info.add_argument(
        "--rules",
        choices=("rlscheduler", "default"),
        default="rlscheduler",
        help="cleaning rules for the job list (default: rlscheduler)",
    )
    info.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip malformed job lines (counted and reported) instead of failing",
    )
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(handler=_cmd_trace_info)

    gen = tsub.add_parser(
        "generate", help="generate a synthetic trace", description="Generate a synthetic SWF trace."
    )
    gsub = gen.add_subparsers(dest="generator", metavar="{lublin}", required=True)
    lub = gsub.add_parser(
        "lublin",
        help="Lublin-Feitelson model",
        description="Generate a workload with the Lublin-Feitelson model, "
        "either a preset of the RLScheduler paper or default "
        "parameters for a machine of P nodes.",
    )
    lub.add_argument(
        "--preset",
        choices=("lublin-1", "lublin-2"),
        help="the exact RLScheduler configuration (mode and seed fixed)",
    )
    lub.add_argument(
        "--nodes", type=positive_int, metavar="P", help="machine size for the default parameters"
    )
    mode = lub.add_mutually_exclusive_group()
    mode.add_argument(
        "--typed",
        dest="typed",
        action="store_true",
        default=True,
        help="batch + interactive job types (default; ignored with --preset)",
    )
    mode.add_argument("--typeless", dest="typed", action="store_false", help="one job type")
    lub.add_argument(
        "--jobs",
        type=positive_int,
        default=10000,
        metavar="N",
        help="number of jobs (default 10000)",
    )
    lub.add_argument(
        "--seed",
        type=int_arg,
        default=None,
        metavar="S",
        help="random seed (default: the preset's, or the current time)",
    )
    lub.add_argument(
        "--start-hour",
        type=int_arg,
        default=0,
        metavar="H",
        help="hour of day of the first arrival, 0-23 (default 0)",
    )
    lub.add_argument("--out", required=True, metavar="FILE", help="output SWF file")
    lub.set_defaults(handler=_cmd_trace_generate_lublin)


# ----------------------------------------------------------------------------------------------
# evaluate
# ----------------------------------------------------------------------------------------------
def _csv(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return items


def _csv_ints(text: str) -> list[int]:
    try:
        return [int(t) for t in _csv(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None


def _cmd_evaluate(args) -> int:
    import jaxsched.sim  # noqa: F401  (enables x64)
    from jaxsched.sim.evaluate import check_versus, evaluate, format_table
    from jaxsched.workload import read_swf, reference_starts

    trace = read_swf(args.trace, on_error="skip" if args.skip_bad_lines else "raise")
    jobs = trace.jobs(args.rules)
    compat = args.compat == "rlscheduler"
    backfills = args.backfill or (["none", "rlscheduler"] if compat else ["none", "easy"])
    if args.starts is not None:
        starts = args.starts
    else:
        starts = reference_starts(
            args.seed, args.sequences, args.jobs, jobs.n_jobs, batch_job_slice=args.slice
        )
    pols, names = [], []
    if args.model:
        from jaxsched import systems

        pols = [systems.load_model(d) for d in args.model]  # (system, model) pairs
        names = _model_names([m for _, m in pols])
    if args.versus is not None:
        check_versus(args.versus, list(args.policy) + names)
    res = evaluate(
        jobs, starts, args.jobs, args.policy, backfills, compat=compat, metrics=args.metric
    )
    if pols:
        for (system, pol), name in zip(pols, names):
            res.rows += system.model_rows(
                pol,
                jobs,
                res.starts,
                args.jobs,
                res.backfills,
                res.metrics,
                compat,
                sample=args.sample,
                name=name,
            )
            res.policies.append(name)
    if args.json:
        print(json.dumps(res.to_json()))
    else:
        mode = "reference SchedGym (compat)" if compat else "correct mode"
        print(
            f"{args.trace}: {len(res.starts)} sequences x {args.jobs} jobs, {mode}; "
            f"starts {', '.join(map(str, res.starts[:10]))}{' ...' if len(res.starts) > 10 else ''}"
        )
        print(format_table(res, sem=args.sem))
        if args.versus:
            print(
                f"\npaired difference to {args.versus} on the same sequences (mean ± standard "
                f"error over the {len(res.starts)} sequences):\n"
            )
            print(format_table(res, versus=args.versus))
        t = res.timing
        print(
            f"\n{t['decisions']} decisions in {t['run_s']:.2f} s "
            f"({t['decisions'] / max(t['run_s'], 1e-9):,.0f}/s); compile {t['compile_s']:.1f} s"
        )
    return 0


@command("evaluate")
def _add_evaluate(sub) -> None:
    # a flat list of add_argument calls, one per flag (over 100 lines; splitting it would
    # only scatter the flags)
    from jaxsched.policies.heuristics import PAPER_POLICIES, POLICIES

    p = sub.add_parser(
        "evaluate",
        help="evaluate schedulers on job sequences of a trace",
        description="Schedule sequences of consecutive jobs of an SWF trace with heuristic "
        "policies, with and without backfilling, and report the metrics (mean over "
        "sequences; --json gives every sequence).",
    )
    p.add_argument("trace", metavar="TRACE", help="SWF file (.swf or .swf.gz)")
    p.add_argument(
        "--compat",
        choices=("rlscheduler",),
        default=None,
        help="reproduce the RLScheduler reference simulator exactly (quirks "
        "included); default: the correct mode",
    )
    p.add_argument(
        "--policy",
        type=_csv,
        default=list(PAPER_POLICIES),
        metavar="P[,P...]",
        help=f"heuristics ({', '.join(POLICIES)}); default: {','.join(PAPER_POLICIES)}",
    )
    p.add_argument(
        "--backfill",
        type=_csv,
        default=None,
        metavar="B[,B...]",
        help="none, rlscheduler, easy (default: none,rlscheduler with --compat, else none,easy)",
    )
    p.add_argument(
        "--metric",
        type=_csv,
        default=["bsld"],
        metavar="M[,M...]",
        help="bsld, sld, wait, turnaround, util, util_ref, util_busy, max_wait, "
        "makespan, fairness (default bsld)",
    )
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=1024,
        metavar="N",
        help="jobs per sequence (default 1024)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--starts",
        type=_csv_ints,
        default=None,
        metavar="I[,I...]",
        help="0-based start indices into the loaded job list",
    )
    p.add_argument(
        "--sequences",
        type=positive_int,
        default=10,
        metavar="K",
        help="number of sequences to draw (default 10)",
    )
    g.add_argument(
        "--seed",
        type=int_arg,
        default=1,
        metavar="S",
        help="draw starts as the reference does (default 1: the paper's Table V sequences)",
    )
    p.add_argument(
        "--slice",
        type=int_arg,
        default=0,
        metavar="U",
        help="draw starts from the first U jobs only (the reference's "
        "batch_job_slice; the paper used 10000 for SDSC-SP2 and HPC2N)",
    )
    p.add_argument(
        "--rules",
        choices=("rlscheduler", "default"),
        default="rlscheduler",
        help="trace cleaning rules (default rlscheduler)",
    )
    p.add_argument(
        "--skip-bad-lines", action="store_true", help="skip malformed job lines instead of failing"
    )
    p.add_argument(
        "--model",
        action="append",
        default=None,
        metavar="DIR",
        help="also evaluate the learned policy of a `jaxsched train` directory (repeatable)",
    )
    p.add_argument(
        "--sample",
        action="store_true",
        help="sample the learned policy's actions (the reference's test script) "
        "instead of taking the most probable job",
    )
    p.add_argument(
        "--sem",
        action="store_true",
        help="show each mean with ± its standard error over the sequences",
    )
    p.add_argument(
        "--versus",
        default=None,
        metavar="P",
        help="also print every policy's paired difference to policy P (e.g. f1, or "
        "rl with one --model) on the same sequences, mean ± standard error",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_evaluate)


# ----------------------------------------------------------------------------------------------
# demo: the README's main job
# ----------------------------------------------------------------------------------------------
def _cmd_demo(args) -> int:
    import tempfile

    from jaxsched.workload import default_trace_path

    path = default_trace_path()
    print(f"jaxsched demo on the bundled default trace {path} (Lublin-1)\n")
    print(_trace_report(path))
    print(
        "\nHeuristic schedulers on the RLScheduler paper's 10 test sequences (seed 1, 1024 jobs),"
    )
    print(
        "reference semantics (--compat rlscheduler): Tables V/VI heuristic columns of the paper.\n"
    )
    rc = main(
        [
            "evaluate",
            str(path),
            "--compat",
            "rlscheduler",
            "--metric",
            "bsld,util",
            "--sequences",
            str(args.sequences),
        ]
    )
    if rc:
        return rc
    print("\nThe same sequences in the correct mode, with true EASY backfilling:\n")
    rc = main(
        [
            "evaluate",
            str(path),
            "--metric",
            "bsld,util",
            "--backfill",
            "none,easy",
            "--sequences",
            str(args.sequences),
        ]
    )
    if rc or args.train_epochs == 0:
        return rc
    out = args.out or tempfile.mkdtemp(prefix="jaxsched-demo-")
    print(
        f"\nTraining an RLScheduler policy (kernel network, PPO) for bounded slowdown without "
        f"backfilling: {args.train_epochs} epochs of {args.trajectories} sampled 256-job "
        f"sequences, {args.iters} policy/value steps each (the paper: 100 sequences, 80 "
        f"steps, ~30 epochs) -> {out}\n"
    )
    argv = [
        "train",
        "rlscheduler",
        str(path),
        "--compat",
        "rlscheduler",
        "--epochs",
        str(args.train_epochs),
        "--out",
        out,
        "--trajectories",
        str(args.trajectories),
        "--pi-iters",
        str(args.iters),
        "--v-iters",
        str(args.iters),
    ]
    if args.out and (Path(out) / "run.json").exists():
        argv.append("--resume")
    rc = main(argv)
    if rc:
        return rc
    print(
        "\nThe learned policy (greedy picks) next to the heuristics on the held-out test "
        "sequences:\n"
    )
    return main(
        [
            "evaluate",
            str(path),
            "--compat",
            "rlscheduler",
            "--metric",
            "bsld",
            "--backfill",
            "none",
            "--sequences",
            str(args.sequences),
            "--model",
            out,
        ]
    )


@command("demo")
def _add_demo(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="a short demonstration on the bundled Lublin-1 trace",
        description="Show what jaxsched does on the bundled default trace.",
    )
    p.add_argument(
        "--sequences",
        type=positive_int,
        default=10,
        metavar="K",
        help="number of test sequences (default 10, the paper's)",
    )
    p.add_argument(
        "--train-epochs",
        type=int_arg,
        default=6,
        metavar="E",
        help="epochs of RLScheduler training (default 6, a few minutes on a "
        "2-core CPU; 0 = skip training)",
    )
    p.add_argument(
        "--trajectories",
        type=positive_int,
        default=20,
        metavar="N",
        help="sampled sequences per epoch (default 20)",
    )
    p.add_argument(
        "--iters",
        type=positive_int,
        default=40,
        metavar="K",
        help="policy and value steps per epoch (default 40)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="training directory (default: a new temporary directory; an existing "
        "run there is resumed)",
    )
    p.set_defaults(handler=_cmd_demo)


# ----------------------------------------------------------------------------------------------
# train / plot
# ----------------------------------------------------------------------------------------------
def _model_names(pols) -> list:
    """Row names of the learned policies in ``evaluate``: ``rl`` for one model, else
    ``rl:<run directory>``, with ``@<epoch>`` where two come from the same directory (e.g. two
    checkpoints of one run) and ``#<n>`` where even that repeats — never one name for two
    models, whose rows would otherwise be averaged together."""
    if len(pols) == 1:
        return ["rl"]
    names = [f"rl:{p.path.parent.name}" for p in pols]
    names = [f"{n}@{p.epoch}" if names.count(n) > 1 else n for n, p in zip(names, pols)]
    return [f"{n}#{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


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


@command("conformance")
def _add_conformance(sub) -> None:
    from jaxsched.conformance import cli as conformance

    p = conformance.add_arguments(sub.add_parser("conformance", help=conformance.HELP))
    p.set_defaults(handler=conformance.run)


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------
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


def _enable_compile_cache() -> None:
    """Keep XLA's compiled programs in ``$JAXSCHED_CACHE`` (default ``~/.cache/jaxsched/xla``) so
    a repeated command skips compilation. ``JAXSCHED_CACHE=off`` disables it."""
    import os

    where = os.environ.get(
        "JAXSCHED_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "jaxsched", "xla")
    )
    if where.lower() in ("off", "0", "none", ""):
        return
    try:
        import jax

        jax.config.update("jax_compilation_cache_dir", where)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    except Exception:  # an old JAX without the option: just compile every time
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        return _error(f"{e.message} (usage: {e.usage.removeprefix('usage: ')})")
    except SystemExit as e:  # --help / --version
        return e.code if isinstance(e.code, int) else 0
    if args.command in ("evaluate", "demo", "train"):
        _enable_compile_cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SWFWarning)
        try:
            rc = args.handler(args)
        except JaxschedError as e:
            rc = _error(str(e))
        except BrokenPipeError:  # e.g. `jaxsched trace info f | head`: stop quietly
            _silence_stdout()
            rc = 1
        except OSError as e:
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            rc = _error(f"{where}{e.strerror or e}")
        finally:
            for w in caught:
                if issubclass(w.category, SWFWarning):
                    print(f"{PROG}: warning: {_one_line(w.message)}", file=sys.stderr)
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
