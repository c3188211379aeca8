"""``jaxsched trace info`` and ``jaxsched trace generate lublin``."""

from __future__ import annotations

import json

from jaxsched.cli.args import (
    command,
    int_arg,
    positive_int,
)
from jaxsched.errors import ConfigError, JaxschedError


def trace_report(path, *, first=None, rules="rlscheduler", skip=False, as_json=False) -> str:
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
        trace_report(
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
