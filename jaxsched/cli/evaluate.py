"""``jaxsched evaluate``: heuristics and learned models on the same sequences."""

from __future__ import annotations

import json

from jaxsched.cli.args import (
    add_split_arguments,
    command,
    csv_ints,
    csv_list,
    int_arg,
    positive_int,
)


def _traces(args) -> list:
    """The TRACE arguments and ``--traces`` (at least one; ConfigError otherwise)."""
    from jaxsched.errors import ConfigError

    traces = list(args.trace or []) + list(args.traces or [])
    if not traces:
        raise ConfigError("evaluate: no trace given (TRACE [TRACE ...] or --traces A,B)")
    return traces


#: the RLScheduler paper's test protocol (``--protocol paper``): starts drawn as its reference
#: test script draws them, from the first 10,000 jobs (spec rlscheduler.md §8.2)
PAPER_SLICE = 10_000


def _check_split_flags(args) -> None:
    """One-line ConfigErrors for flags that do not go with ``--split`` / ``--protocol``."""
    from jaxsched.errors import ConfigError

    if args.split is None:
        if args.allow_seen or args.split_fractions is not None:
            flag = "--allow-seen" if args.allow_seen else "--split-fractions"
            raise ConfigError(f"{flag} needs --split")
        return
    for flag, given in (
        ("--starts", args.starts is not None),
        ("--slice", bool(args.slice)),
        ("--protocol paper", args.protocol == "paper"),
    ):
        if given:
            raise ConfigError(f"--split {args.split} and {flag} do not go together")


def _split_range(args, jobs):
    """The job index range ``(first, last)`` of ``--split`` in ``jobs`` (None without it)."""
    if args.split is None:
        return None
    from jaxsched.workload.splits import DEFAULT_FRACTIONS, chronological_split

    sp = chronological_split(jobs.n_jobs, args.split_fractions or DEFAULT_FRACTIONS)
    return sp.range(args.split)


def _run_json_of(model_arg) -> dict:
    """The ``run.json`` of a ``--model`` argument (a run directory, a checkpoint in one or a
    shipped model's name); ``{}`` where there is none."""
    from jaxsched.models import resolve
    from jaxsched.systems import RUN_FILE

    p = resolve(model_arg)
    f = (p if p.is_dir() else p.parent) / RUN_FILE
    from jaxsched.train.loop import read_run_json

    return read_run_json(f) if f.is_file() else {}


def _seen_names(args, path, job_range, names) -> list:
    """The row names of the models on the jobs ``job_range`` of the trace ``path``: a model
    whose ``jobs_seen`` overlaps them is refused (one-line ConfigError), or with
    ``--allow-seen`` named ``<name> (in-sample)`` (:func:`jaxsched.workload.splits.check_unseen`)."""
    if job_range is None:
        return names
    from jaxsched.workload.splits import check_unseen

    out = []
    for arg, name in zip(getattr(args, "model_args", []), names):
        seen = check_unseen(_run_json_of(arg), str(arg), path, job_range, args.allow_seen)
        out.append(f"{name} (in-sample)" if seen else name)
    return out


def _evaluate_cell(args, path, jobs, seed, pols, names, job_range=None):
    """Heuristics and models on the sequences of one trace and one seed: an EvalResult.
    ``job_range``: ``--split``'s ``(first, last)``, the sequences lie wholly inside it."""
    from jaxsched.planning.policy import is_planner, planner_rows
    from jaxsched.sim.evaluate import evaluate
    from jaxsched.workload import reference_starts

    compat = args.compat == "rlscheduler"
    backfills = args.backfill or (["none", "rlscheduler"] if compat else ["none", "easy"])
    if args.starts is not None:
        starts = args.starts
    elif job_range is not None:
        from jaxsched.workload.splits import starts_in_range

        starts = starts_in_range(job_range, args.jobs, args.sequences, seed)
    else:
        slice_ = args.slice or (PAPER_SLICE if args.protocol == "paper" else 0)
        starts = reference_starts(
            seed, args.sequences, args.jobs, jobs.n_jobs, batch_job_slice=slice_
        )
    heuristics = [p for p in args.policy if not is_planner(p)]
    res = evaluate(jobs, starts, args.jobs, heuristics, backfills, compat=compat,
                   metrics=args.metric)  # fmt: skip
    planner_s = 0.0
    for name in args.policy:  # on the host, over the same sequences (jaxsched.planning)
        if is_planner(name):
            rows, secs = planner_rows(name, jobs, res.starts, args.jobs, res.backfills,
                                      res.metrics, compat)  # fmt: skip
            res.rows += rows
            planner_s += secs
    if planner_s:
        res.timing["planner_s"] = planner_s
    order = {p: i for i, p in enumerate(args.policy)}  # the rows in --policy's order
    res.policies += [p for p in args.policy if is_planner(p)]
    res.policies.sort(key=lambda p: order.get(p, len(order)))
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
    return res


def _print_cell(args, path, res, job_range=None) -> None:
    from jaxsched.sim.evaluate import format_table

    mode = "reference SchedGym (compat)" if args.compat == "rlscheduler" else "correct mode"
    if job_range is not None:
        mode += f"; {args.split} split, jobs [{job_range[0]}, {job_range[1]})"
    elif args.protocol == "paper":
        mode += f"; paper protocol, starts from the first {args.slice or PAPER_SLICE} jobs"
    print(
        f"{path}: {len(res.starts)} sequences x {args.jobs} jobs, {mode}; "
        f"starts {', '.join(map(str, res.starts[:10]))}{' ...' if len(res.starts) > 10 else ''}"
    )
    print(format_table(res, sem=args.sem))
    if args.versus:
        versus = args.versus
        if versus not in res.policies and f"{versus} (in-sample)" in res.policies:
            versus = f"{versus} (in-sample)"  # --allow-seen renamed the model's rows
        print(
            f"\npaired difference to {versus} on the same sequences (mean ± standard "
            f"error over the {len(res.starts)} sequences):\n"
        )
        print(format_table(res, versus=versus))
    t = res.timing
    print(
        f"\n{t['decisions']} decisions in {t['run_s']:.2f} s "
        f"({t['decisions'] / max(t['run_s'], 1e-9):,.0f}/s); compile {t['compile_s']:.1f} s"
        + (f"; planners {t['planner_s']:.1f} s on the host" if "planner_s" in t else "")
    )


#: sequences drawn and the seed they are drawn with, where ``--sequences`` / ``--seed`` are not given
DEFAULT_SEQUENCES, DEFAULT_SEED = 10, 1


def _cmd_evaluate(args) -> int:
    import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
    from jaxsched.sim.evaluate import check_versus
    from jaxsched.workload import read_swf

    given = {"sequences": args.sequences, "seeds": args.seed, "jobs": args.jobs}  # None: not given
    if args.sequences is None:
        args.sequences = DEFAULT_SEQUENCES
    if args.seed is None:
        args.seed = [DEFAULT_SEED]
    args.given = given
    traces = _traces(args)
    _check_split_flags(args)
    _check_planners(args)
    if args.table:
        table_format(args.table)
    seeds = [None] if args.starts is not None else list(args.seed)
    pols, names, own = [], [], []
    if args.model:
        from jaxsched import systems

        specs = [systems.parse_model_spec(d) for d in args.model]  # (label, path, online)
        loaded = [systems.load_model(path) for _, path, _ in specs]  # (system, model) pairs
        _check_model_specs(args, specs, loaded)
        own = [sm for sm in loaded if sm[0].compare is not None]  # compared with own baseline
        rest = [
            (sm, d, sp) for d, sp, sm in zip(args.model, specs, loaded) if sm[0].compare is None
        ]
        if args.split is not None:
            _check_split_models(args, loaded)
        if not (args.json or args.table):  # systems with their own report print it instead
            rest = _print_reports(args, traces, rest)
            if not rest and not own:  # only reporting models: their reports are the answer
                return 0
        pols = [sm for sm, _, _ in rest]
        args.model_args = [path for _, _, (_, path, _) in rest]
        names = _model_names([m for _, m in pols])
    if args.versus is not None:
        check_versus(args.versus, list(args.policy) + names)
    own_jobs, args.jobs = args.jobs, args.jobs or 1024
    cells, texts, ranges = [], {}, {}
    for path in traces:
        if pols or not own:
            trace = read_swf(path, on_error="skip" if args.skip_bad_lines else "raise")
            jobs = trace.jobs(args.rules)
            job_range = _split_range(args, jobs)
            ranges[path] = job_range
            cell_names = _seen_names(args, path, job_range, names)
            for seed in seeds:
                res = _evaluate_cell(args, path, jobs, seed, pols, cell_names, job_range)
                cells.append((path, seed, res))
        for seed in seeds:
            for (system, model), name in zip(own, _own_names(own)):
                res, text = system.compare(
                    model,
                    path,
                    starts=args.starts,
                    sequences=args.sequences,
                    length=own_jobs,
                    seed=1 if seed is None else seed,
                    backfills=args.backfill,
                    sample=args.sample,
                    name=name,
                )
                cells.append((path, seed, res))
                texts[id(res)] = f"model {model.path} (epoch {model.epoch})\n{text}"
    if args.table:
        n = write_table(args.table, _tidy_rows(cells))
        if not args.json:
            print(f"{n} rows ({len(traces)} trace(s) x {len(seeds)} seed(s)) -> {args.table}")
    if args.json:
        if len(cells) == 1:
            print(json.dumps(cells[0][2].to_json()))
        else:
            timing = [{"trace": p, "seed": s, **r.timing} for p, s, r in cells]
            print(json.dumps({"results": _tidy_rows(cells), "timing": timing}))
    elif not args.table or len(cells) == 1:
        for i, (path, seed, res) in enumerate(cells):
            print("\n" if i else "", end="")
            if id(res) in texts:
                _print_own(path, seed, res, texts[id(res)])
            else:
                _print_cell(args, path, res, ranges.get(path))
    return 0


def _check_planners(args) -> None:
    """``--policy``'s planners (:mod:`jaxsched.planning.policy`) with their options joined
    back, each checked with every ``--backfill`` mode before any run (one-line ConfigErrors)."""
    from jaxsched.planning.policy import is_planner, planner_for, split_policies
    from jaxsched.sim import single

    args.policy = split_policies(args.policy)
    compat = args.compat == "rlscheduler"
    for name in args.policy:
        if is_planner(name):
            for b in args.backfill or (["none", "rlscheduler"] if compat else ["none", "easy"]):
                planner_for(name, single.check_names("fcfs", b, compat).backfill, compat)


def _check_split_models(args, loaded) -> None:
    """``--split`` with models that draw their own sequences or report on their own test
    period (SchedInspector, DRAS): a one-line ConfigError, not a silent in-sample table."""
    from jaxsched.errors import ConfigError

    for arg, (system, _) in zip(args.model, loaded):
        if system.compare is not None or system.report is not None:
            raise ConfigError(
                f"--split {args.split} with --model {arg}: a {system.name} model draws its own "
                "test sequences (or reports its own test period); not supported yet"
            )


def _print_own(path, seed, res, text) -> None:
    """A model compared with its own baseline (``System.compare``, e.g. SchedInspector)."""
    how = "given starts" if seed is None else f"seed {seed}, drawn as the system's test script"
    print(
        f"{path}: {len(res.starts)} sequences x {res.rows[0]['jobs']} jobs ({how}); "
        f"starts {', '.join(map(str, res.starts[:10]))}{' ...' if len(res.starts) > 10 else ''}"
    )
    print(text)


def _own_names(own) -> list:
    """Row names of models with their own baseline: ``inspector`` for one, else
    ``inspector:<run directory>`` (``#<n>`` where that repeats)."""
    if len(own) == 1:
        return ["inspector"]
    names = [f"inspector:{m.path.parent.name}" for _, m in own]
    return [f"{n}#{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _check_model_specs(args, specs, loaded) -> None:
    """``--model LABEL=NAME`` and ``NAME:on|:off`` (:func:`jaxsched.systems.parse_model_spec`)
    go only with models of a system that puts several in one report (DRAS's test-period
    table), in text mode: a one-line ConfigError otherwise."""
    from jaxsched.errors import ConfigError

    for arg, (label, _, online), (system, _) in zip(args.model, specs, loaded):
        if label is None and online is None:
            continue
        if system.report_many is None:
            raise ConfigError(
                f"--model {arg}: LABEL= and :on/:off are for DRAS models; a {system.name} "
                "model is given as NAME or DIR"
            )
        if args.json or args.table:
            raise ConfigError(
                f"--model {arg}: LABEL= and :on/:off name rows of DRAS's test-period table, "
                "which --json and --table do not print"
            )


def _print_reports(args, traces, items) -> list:
    """Print the report of every model whose system has one (:attr:`System.report`, e.g.
    DRAS's §10 table beside its baselines) on each trace: several models of a system with
    :attr:`System.report_many`, or one with a ``LABEL=``, in one report (rows named by their
    labels, else by their ``--model`` arguments).  ``items``: ``((system, model), argument,
    (label, path, online))``; returns those of the systems without a report."""
    rest, groups = [], {}
    for item in items:
        system = item[0][0]
        if system.report is None:
            rest.append(item)
        else:
            groups.setdefault(system.name, []).append(item)
    for group in groups.values():
        system = group[0][0][0]
        together = system.report_many is not None and (len(group) > 1 or group[0][2][0])
        for path in traces:
            if together:
                models = [(label or arg, model, online)
                          for (_, model), arg, (label, _, online) in group]  # fmt: skip
                print(system.report_many(models, path, sample=args.sample, jobs=args.jobs))
                continue
            for (_, model), _, (_, _, online) in group:
                # --sequences, --seed and --jobs where given; else the report's defaults
                kw = {} if online is None else {"online": online}
                print(system.report(model, path, sample=args.sample, **args.given, **kw))
    return rest


#: columns of ``evaluate --table`` (one row per trace, seed, sequence, policy, backfill, metric)
TABLE_COLUMNS = ("trace", "seed", "start", "jobs", "policy", "backfill", "metric", "value")


def _tidy_rows(cells) -> list:
    """The rows of every (trace, seed, result) cell with ``trace`` and ``seed`` (None with
    ``--starts``) in front, in :data:`TABLE_COLUMNS` order."""
    return [
        {"trace": str(path), "seed": seed, **{k: r[k] for k in TABLE_COLUMNS[2:]}}
        for path, seed, res in cells
        for r in res.rows
    ]


def table_format(path) -> str:
    """``.csv`` or ``.json``: the format of a ``--table`` file (ConfigError otherwise, and when
    its folder does not exist: no folder is created)."""
    from pathlib import Path

    from jaxsched.errors import ConfigError
    from jaxsched.fileio import check_folder

    ext = Path(path).suffix.lower()
    if ext not in (".csv", ".json"):
        raise ConfigError(f"--table {path}: the file name must end in .csv or .json")
    check_folder(path)
    return ext


def write_table(path, rows: list) -> int:
    """Write tidy rows as CSV (header :data:`TABLE_COLUMNS`; an empty seed is blank) or JSON (a
    list of objects), by the extension of ``path`` (``.csv`` / ``.json``); returns the number
    of rows. ConfigError for another extension."""
    import csv
    import io

    from jaxsched.fileio import atomic_write

    ext = table_format(path)
    if ext == ".json":
        atomic_write(path, "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")
        return len(rows)
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=TABLE_COLUMNS)
    w.writeheader()
    for r in rows:
        w.writerow({**r, "seed": "" if r["seed"] is None else r["seed"], "value": repr(r["value"])})
    atomic_write(path, text.getvalue())
    return len(rows)


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
    p.add_argument(
        "trace",
        metavar="TRACE",
        nargs="*",
        help="SWF file(s) (.swf or .swf.gz); several give a grid (see --table)",
    )
    p.add_argument(
        "--traces",
        type=csv_list,
        default=None,
        metavar="A,B,...",
        help="more traces, comma-separated (added to the TRACE arguments)",
    )
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
        help=f"heuristics ({', '.join(POLICIES)}) and look-ahead planners, run on the host "
        "over the same sequences: rollout[:BASE,k=K,h=H,bf=B,q=Q] (bare: rollout:f3,k=8,h=64), "
        "window[:n=N,w=SECONDS,h=H,q=Q,cells=P+../B+..] (bare: window:n=32); a planner's options "
        "keep their commas (fcfs,rollout:f3,k=8,window); each --backfill column runs it with "
        "that mode (see simulate --backfill; docs/baselines.md); default: "
        f"{','.join(PAPER_POLICIES)}",
    )
    p.add_argument(
        "--backfill",
        type=csv_list,
        default=None,
        metavar="B[,B...]",
        help="none, rlscheduler, easy, and the shortest-job-first backfilling variants "
        "rlscheduler-sjbf, easy-sjbf; easy++ (EASY++, run time predictions from user history; "
        "traces with user ids) (default: none,rlscheduler with --compat, else none,easy)",
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
        default=None,
        metavar="N",
        help="jobs per sequence (default 1024; a SchedInspector model: its run's eval_length, "
        "256; a DRAS model: the first N jobs of the test period, default all)",
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
        default=None,  # DEFAULT_SEQUENCES; a system's own report keeps its own default
        metavar="K",
        help="number of sequences to draw (default 10; a split-window model: episodes, default 20)",
    )
    g.add_argument(
        "--seed",
        type=csv_ints,
        default=None,  # [DEFAULT_SEED]
        metavar="S[,S...]",
        help="draw starts as the reference does (default 1: the paper's Table V sequences); "
        "several seeds: one set of sequences each (a grid, see --table)",
    )
    p.add_argument(
        "--slice",
        type=int_arg,
        default=0,
        metavar="U",
        help="draw starts from the first U jobs only (the reference's "
        "batch_job_slice; the paper used 10000 for SDSC-SP2 and HPC2N)",
    )
    add_split_arguments(
        p,
        ("train", "validation", "test"),
        "draw the sequences only from this part of the trace's chronological split (test: "
        "the last 40%% of the jobs; docs/splits.md); a --model whose run.json jobs_seen "
        "overlaps it is refused",
    )
    p.add_argument(
        "--allow-seen",
        action="store_true",
        help="with --split: report a model that saw those jobs anyway, its rows named "
        "'<name> (in-sample)'",
    )
    p.add_argument(
        "--protocol",
        choices=("paper",),
        default=None,
        help="paper: the RLScheduler paper's test sequences, drawn as its reference does from "
        "the first 10,000 jobs (the jobs its models trained on; --slice overrides the 10,000); "
        "default: as paper, but from the whole trace (or --slice)",
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
        help="also evaluate the learned policy of a `jaxsched train` directory (repeatable); "
        "a system with its own report (DRAS: the test period beside its baselines, spec "
        "section 10) prints that instead, unless --json or --table; several DRAS models share "
        "one such table (one Kiviat normalisation over all rows), each given as "
        "[LABEL=]NAME_OR_DIR[:on|:off]: LABEL names its row (default the argument), :on/:off "
        "sets a PG model's online adaptation during the test (default the run's); a "
        "SchedInspector model is "
        "compared with its own base scheduler (base alone vs base + inspector on the same "
        "sequences, drawn as its reference test script does, paired difference ± standard "
        "error, rejection ratio; the heuristics table is shown only with other models)",
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
    p.add_argument(
        "--table",
        default=None,
        metavar="FILE.csv|FILE.json",
        help="write every result as one tidy table: a row per trace, seed, sequence start, "
        "policy, backfill and metric (columns trace, seed, start, jobs, policy, backfill, "
        "metric, value; CSV or a JSON list of objects, by extension)",
    )
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
