"""``jaxsched simulate``: one schedule of a trace (or of a window of it) written to a file."""

from __future__ import annotations

from pathlib import Path

from jaxsched.cli.args import command, nonneg_int, positive_int

FORMATS = ("swf", "csv")


def _format_of(args) -> str:
    """``--format``, else from the output file's extension (``.csv`` → csv, else swf)."""
    if args.format:
        return args.format
    name = Path(args.out).name.lower().removesuffix(".gz")
    return "csv" if name.endswith(".csv") else "swf"


def _cmd_simulate(args) -> int:
    import time

    import jaxsched.sim  # noqa: F401  (the engine; the command runs in 64-bit scope)
    from jaxsched.errors import ConfigError
    from jaxsched.workload import read_swf
    from jaxsched.workload.validate import validate_schedule

    if args.compat == "cqsim":  # the CQSim engine mode (sim/cqsim)
        return _simulate_cqsim(args)
    trace = read_swf(args.trace, on_error="skip" if args.skip_bad_lines else "raise")
    jobs = trace.jobs(args.rules)
    compat = args.compat == "rlscheduler"
    if args.backfill == "easy" and compat:
        raise ConfigError("--backfill easy has no reference counterpart; drop --compat")
    if args.start >= jobs.n_jobs:
        raise ConfigError(f"--start {args.start}: the trace has {jobs.n_jobs} jobs")
    length = min(args.jobs or jobs.n_jobs, jobs.n_jobs - args.start)
    engine = _engine(args, compat)
    t0 = time.perf_counter()
    if args.model:
        starts, who = _model_starts(args, jobs, length, compat)
    elif _is_planner(args):
        starts, who = _planner_starts(args, jobs, length, compat), args.policy
    else:
        starts, who = _heuristic_starts(args, jobs, length, compat), args.policy
    seconds = time.perf_counter() - t0
    compiled = ", compile included" if engine == "jax" else ""
    window = jobs.window(args.start, length)
    validate_schedule(window, starts)  # a schedule the machine cannot run is never written
    m = _metrics(window, starts, jobs, compat)
    fmt = _write(args, window, starts, who)
    print(
        f"{args.trace}: jobs {args.start}..{args.start + length - 1} ({length:,}) scheduled by "
        f"{who} + {args.backfill} backfilling ({'reference' if compat else 'correct'} "
        f"mode, engine: {engine}) in {seconds:.1f} s{compiled}; mean wait {m['wait']:,.1f} s, "
        f"bsld {m['bsld']:,.2f}; {fmt} schedule -> {args.out}"
    )
    return 0


def _engine(args, compat) -> str:
    """The engine that schedules, ``host`` or ``jax``: ``--engine``'s choice for a heuristic
    (:func:`jaxsched.sim.single.choose_engine`, its names checked as ``evaluate`` checks them;
    ``auto``: the host), jax for a learned model."""
    from jaxsched.errors import ConfigError
    from jaxsched.sim import single

    if args.model:
        if args.engine == "host":
            raise ConfigError("--engine host: a learned model schedules on the jax engine")
        return "jax"
    if _is_planner(args):
        if args.engine == "jax":
            raise ConfigError(f"--engine jax: the planner {args.policy} runs on the host")
        _planner_checked(args, compat)
        return "host"
    names = single.check_names(args.policy, args.backfill, compat)
    return single.choose_engine(args.engine, names, compat)


def _is_planner(args) -> bool:
    from jaxsched.planning.policy import is_planner

    return not args.model and is_planner(args.policy)


def _planner_checked(args, compat) -> str:
    """The canonical ``--backfill`` after checking that the planner runs with it
    (:func:`jaxsched.planning.policy.planner_for`; one-line ConfigErrors)."""
    from jaxsched.planning.policy import planner_for
    from jaxsched.sim import single

    backfill = single.check_names("fcfs", args.backfill, compat).backfill
    planner_for(args.policy, backfill, compat)
    return backfill


def _planner_starts(args, jobs, length, compat):
    """A planner's schedule (:mod:`jaxsched.planning`: the exact oracle run, on the host)."""
    from jaxsched.planning.policy import planner_starts

    backfill = _planner_checked(args, compat)
    starts, _ = planner_starts(args.policy, jobs.window(args.start, length), backfill, compat)
    return starts


def _heuristic_starts(args, jobs, length, compat):
    """The heuristic's schedule on the engine :func:`_engine` names, with a progress bar on
    stderr unless ``--no-progress`` (the jax engine then runs as one compiled loop, else in
    chunks: :mod:`jaxsched.sim.chunked`)."""
    from jaxsched.sim import single

    names = single.check_names(args.policy, args.backfill, compat)
    run = single.host_starts if _engine(args, compat) == "host" else single.jax_starts
    if not args.progress:
        return run(jobs, args.start, length, names, compat)
    from tqdm import tqdm

    with tqdm(total=length, unit="job", desc="scheduled", dynamic_ncols=True) as bar:

        def progress(started, total):
            bar.update(started - bar.n)

        return run(jobs, args.start, length, names, compat, progress=progress)


def _model_starts(args, jobs, length, compat):
    """Start times from a learned model (``--model``) and the name it is reported under."""
    from jaxsched import systems
    from jaxsched.errors import ConfigError

    system, model = systems.load_model(args.model)
    if system.schedule is None:
        raise ConfigError(f"{args.model}: {system.name} models cannot simulate a trace yet")
    starts = system.schedule(
        model, jobs, args.start, length, args.backfill, compat, sample=args.sample
    )
    return starts, f"{system.name} model {model.path}"


def _write(args, window, starts, who) -> str:
    import shlex
    import sys

    from jaxsched.workload.swf_write import write_schedule_csv, write_schedule_swf

    fmt = _format_of(args)
    if fmt == "csv":
        write_schedule_csv(window, starts, args.out)
    else:
        cmd = "jaxsched " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        header = [f"Note: policy {who}, backfill {args.backfill}", f"Note: {cmd}"]
        write_schedule_swf(window, starts, args.out, header=header)
    return fmt


def _metrics(window, starts, jobs, compat) -> dict:
    from jaxsched.sim import oracle

    m = oracle.metrics(
        window.submit,
        window.run,
        window.procs,
        starts,
        num_procs=float(jobs.num_procs),
        compat=compat,
    )
    return {"bsld": float(m["bsld"]), "wait": float((starts - window.submit).mean())}


def _simulate_cqsim(args) -> int:
    """``--compat cqsim``: CQSim's loading rules and FCFS with EASY or no backfilling."""
    import time

    from jaxsched.errors import ConfigError
    from jaxsched.sim.cqsim.run import simulate_cqsim
    from jaxsched.workload.cqsim import cqsim_slice, load_cqsim
    from jaxsched.workload.swf_write import write_schedule_csv, write_schedule_swf
    from jaxsched.workload.validate import validate_schedule

    if args.policy != "fcfs" or args.backfill not in ("easy", "none"):
        raise ConfigError("--compat cqsim runs --policy fcfs with --backfill easy or none")
    if args.engine == "host":
        raise ConfigError("--engine host: --compat cqsim runs on its own (jax) engine")
    tr = load_cqsim(args.trace)
    if args.start >= tr.loaded_jobs:
        raise ConfigError(f"--start {args.start}: CQSim loads {tr.loaded_jobs} jobs")
    sl = cqsim_slice(tr, args.start, min(args.jobs or tr.loaded_jobs, tr.loaded_jobs - args.start))
    t0 = time.perf_counter()
    (run,) = simulate_cqsim(sl, [args.backfill])
    jobs = sl.as_jobs(args.trace)
    fmt = _format_of(args)
    write = write_schedule_csv if fmt == "csv" else write_schedule_swf
    validate_schedule(jobs, run.start)
    write(jobs, run.start, args.out)
    print(
        f"{args.trace}: jobs {args.start}..{args.start + sl.n_jobs - 1} ({sl.n_jobs:,}) scheduled "
        f"by fcfs + {args.backfill} backfilling (CQSim mode) in {time.perf_counter() - t0:.1f} s, "
        f"compile included; mean wait {run.metrics['avg_wait']:,.1f} s, bsld "
        f"{run.metrics['avg_bsld']:,.2f}; {fmt} schedule -> {args.out}"
    )
    return 0


@command("simulate")
def _add_simulate(sub) -> None:
    from jaxsched.policies.heuristics import POLICIES
    from jaxsched.sim.single import BACKFILL_CHOICES, ENGINES

    p = sub.add_parser(
        "simulate",
        help="simulate a trace with one policy and write the schedule (SWF or Batsim CSV)",
        description="Schedule a whole SWF trace (or --jobs N of it from --start I) with one "
        "heuristic (or a learned model) and write every job's start: SWF with the wait-time field filled, or the "
        "Batsim/evalys jobs CSV (by the extension of --out, or --format).",
    )
    p.add_argument("trace", metavar="TRACE", help="SWF file (.swf or .swf.gz)")
    p.add_argument(
        "--policy",
        default="fcfs",
        metavar="P",
        help=f"heuristic ({', '.join(POLICIES)}), tuned:NAME (a `jaxsched tune` model file "
        "or a shipped tuned model), or a look-ahead planner on the host: rollout[:BASE,k=K,"
        "h=H,bf=B,q=Q] (bare: rollout:f3,k=8,h=64) or window[:n=N,w=SECONDS,h=H,q=Q,cells=P+../B+..] "
        "(bare: window:n=32); a planner sees no future job and no actual run time of a job "
        "not yet finished (docs/baselines.md); default fcfs",
    )
    p.add_argument(
        "--backfill",
        default="easy",
        choices=BACKFILL_CHOICES,
        help="none, rlscheduler, easy, their shortest-job-first variants rlscheduler-sjbf and "
        "easy-sjbf, or easy++ (run time predictions from user history; traces with user ids); "
        "default easy. A rollout planner forecasts and runs with it (its bf= must equal it); "
        "a window planner chooses among its family (rlscheduler: rlscheduler and "
        "rlscheduler-sjbf; easy: easy and easy-sjbf; none: none)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="host: the exact plain-Python event loop (the oracle's); jax: the compiled engine "
        "(the same schedule); auto (default): host, which schedules one sequence faster than "
        "the compiled engine compiles",
    )
    p.add_argument(
        "--compat",
        choices=("rlscheduler", "cqsim"),
        default=None,
        help="the RLScheduler reference simulator's semantics, or CQSim's (its loading rules, "
        "fcfs with easy or none); default: the correct mode",
    )
    p.add_argument("--start", type=nonneg_int, default=0, metavar="I", help="first job (0)")
    p.add_argument(
        "--jobs", type=positive_int, default=None, metavar="N", help="jobs (default: to the end)"
    )
    p.add_argument("--rules", choices=("rlscheduler", "default"), default="rlscheduler")
    p.add_argument("--skip-bad-lines", action="store_true")
    p.add_argument("--out", required=True, metavar="FILE", help="schedule file (.swf/.csv[.gz])")
    p.add_argument("--format", choices=FORMATS, default=None, help="swf or csv (default: by FILE)")
    p.add_argument(
        "--model",
        default=None,
        metavar="DIR|NAME",
        help="schedule with a learned model (a run directory, checkpoint or shipped model name, "
        "e.g. lublin1-bf-fast) instead of --policy",
    )
    p.add_argument("--sample", action="store_true", help="--model: sample its picks")
    p.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar (the jax engine then runs as one compiled loop, up to 2x faster)",
    )
    p.set_defaults(handler=_cmd_simulate)
