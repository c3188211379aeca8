"""``jaxsched evaluate``: heuristics and learned models on the same sequences."""

from __future__ import annotations

import json

from jaxsched.cli.args import (
    command,
    csv_ints,
    csv_list,
    int_arg,
    positive_int,
)


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
        type=csv_list,
        default=list(PAPER_POLICIES),
        metavar="P[,P...]",
        help=f"heuristics ({', '.join(POLICIES)}); default: {','.join(PAPER_POLICIES)}",
    )
    p.add_argument(
        "--backfill",
        type=csv_list,
        default=None,
        metavar="B[,B...]",
        help="none, rlscheduler, easy (default: none,rlscheduler with --compat, else none,easy)",
    )
    p.add_argument(
        "--metric",
        type=csv_list,
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
        type=csv_ints,
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
