"""``jaxsched train <system>`` and ``jaxsched plot DIR``, dispatched on the systems registry."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxsched.cli.args import command, positive_int
from jaxsched.errors import ConfigError


def _cmd_train(args) -> int:
    import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)

    if getattr(args, "resume", False):  # a system may have no --resume
        check_resume_flags(args)
    return args.system.train(args)


def _lookup(d, key: str):
    for part in key.split("."):
        if not isinstance(d, dict) or part not in d:
            return _MISSING
        d = d[part]
    return d


_MISSING = object()


def _norm(v):
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    return v


def _given(args, dest: str, flag: str) -> bool:
    """Whether the command line gave ``flag``: named in it, or a value other than the
    parser's default (an abbreviated flag)."""
    argv = getattr(args, "argv_", None) or ()
    if any(t == flag or t.startswith(flag + "=") for t in argv):
        return True
    parser = getattr(args, "train_parser_", None)
    default = parser.get_default(dest) if parser is not None else None
    return getattr(args, dest, None) is not None and getattr(args, dest) != default


def check_resume_flags(args) -> None:
    """``train --resume``: one-line ConfigError when TRACE is not the run's trace (by content,
    :func:`jaxsched.train.loop.check_resume_trace`) or a flag of the system's
    ``resume_settings`` is given with another value than the run's ``run.json`` holds (naming
    the flag, its stored and its given value). Every run directory of a sweep is checked."""
    from jaxsched.train.loop import RUN_FILE, check_resume_trace, read_run_json

    out = Path(args.out)
    files = (
        [out / RUN_FILE] if (out / RUN_FILE).is_file() else sorted(out.glob("seed-*/" + RUN_FILE))
    )
    for f in files:
        saved = read_run_json(f)
        check_resume_trace(f, saved, getattr(args, "trace", None))
        for dest, flag, key in args.system.resume_settings:
            if not hasattr(args, dest) or not _given(args, dest, flag):
                continue
            if dest == "seed" and getattr(args, "seeds", None) is not None:
                continue  # a sweep: each directory holds its own seed
            stored, given = _lookup(saved, key), getattr(args, dest)
            if stored is _MISSING or _norm(stored) == _norm(given):
                continue
            raise ConfigError(
                f"{f}: {flag} {given} differs from the run's {key} (stored: {stored}, "
                f"given: {given}); drop {flag} to resume the run as it was trained"
            )


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
        r.set_defaults(handler=_cmd_train, system=system, train_parser_=r)


def _cmd_plot(args) -> int:
    if args.dir in ("schedule", "compare") and args.files:
        return _cmd_plot_schedules(args)
    if args.files:
        raise ConfigError(f"plot {args.dir}: unexpected {args.files[0]!r} (plot DIR takes one run)")
    from jaxsched import systems

    system = systems.system_of_run(args.dir)
    if system.plot is None:
        raise ConfigError(
            f"{args.dir}: no training-curve plot for {system.name} runs yet (see its log.jsonl)"
        )
    print(system.plot(args.dir, args.out))
    return 0


def _cmd_plot_schedules(args) -> int:
    from jaxsched.plots.schedule import plot_compare, plot_schedule
    from jaxsched.workload.schedule import read_schedule

    schedules = [read_schedule(f, num_procs=args.procs) for f in args.files]
    if args.dir == "schedule":
        if len(schedules) != 1:
            raise ConfigError("plot schedule takes one FILE (plot compare takes several)")
        out = args.out or str(Path(args.files[0]).with_suffix("")) + ".png"
        s = schedules[0]
        png = plot_schedule(s, out, t_from=args.t_from, t_to=args.t_to)
        print(f"{s.path}: {s.n_jobs:,} jobs ({s.skipped} never started) -> {png}")
        return 0
    labels = args.labels.split(",") if args.labels else [Path(f).name for f in args.files]
    if len(labels) != len(schedules):
        raise ConfigError(f"--labels has {len(labels)} names for {len(schedules)} schedules")
    png = plot_compare(schedules, labels, args.out or "compare.png")
    print(f"{len(schedules)} schedules -> {png}")
    return 0


@command("plot")
def _add_plot(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="plot a training run's learning curve, a schedule, or several schedules (PNG)",
        usage="jaxsched plot DIR | plot schedule FILE [--from T --to T] | "
        "plot compare FILE FILE... [--labels A,B,...]  [--out PNG]",
        description="`plot DIR`: the training curve of a `jaxsched train` directory (the "
        "metric per epoch with SJF and F1 on the same sequences). `plot schedule FILE`: a "
        "schedule (SWF with wait times, as `jaxsched simulate` writes or a PWA log records, or "
        "Batsim's jobs CSV) as a Gantt chart of processors over time (first-fit placement by "
        "processor index) above its utilisation and waiting jobs. `plot compare FILE...`: "
        "several schedules of the same jobs: mean wait by job size and by user, and the "
        "distribution of waits.",
    )
    p.add_argument("dir", metavar="DIR|schedule|compare")
    p.add_argument("files", nargs="*", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, metavar="PNG", help="picture path")
    p.add_argument("--from", dest="t_from", type=int, default=None, metavar="T",
                   help="schedule: first second shown (the file's clock)")  # fmt: skip
    p.add_argument("--to", dest="t_to", type=int, default=None, metavar="T",
                   help="schedule: last second shown")  # fmt: skip
    p.add_argument("--labels", default=None, metavar="A,B,...", help="compare: names")
    p.add_argument("--procs", type=positive_int, default=None, metavar="P",
                   help="machine size (default: the file's MaxProcs)")  # fmt: skip
    p.set_defaults(handler=_cmd_plot)
