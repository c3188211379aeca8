"""Several DRAS models and the §8 baselines in one §10 table over a trace's test period (issue 17 §4).

    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras_test_period.py --model NAME=DIR[:on|:off] ...
        [--trace FILE] [--jobs K] [--period test|val] [--json FILE] [--plots DIR]

The table is :func:`jaxsched.systems.dras.evaluate.test_period_table`, which the installed
``jaxsched evaluate TRACE --model NAME=DIR[:on|:off] --model ... [--jobs K]`` prints too; this
script adds the trace's default (the model's own), ``--period val``, ``--json``, ``--plots``
and ``--held-out``.

Each ``--model`` is a run directory or checkpoint (a shipped name such as ``dras-sdsc-pg``
works), labelled NAME; ``:on`` / ``:off`` sets PG's online adaptation during the test (default:
the run's setting, on in code mode as in the reference).  The models and FCFS + EASY,
BinPacking, Random and Optimization schedule the same test period (spec ``dras.md`` §9: the
months after the validation month, one continuous simulation; ``--jobs K`` its first K jobs)
and share one table, so the Kiviat radii are normalised over all of them (§10).  Printed: the
report of :mod:`jaxsched.systems.dras.report`, then each method's average and maximum wait in
seconds and as a ratio to FCFS + EASY's, and the issue's three checks per model (average wait
below FCFS + EASY's, maximum wait within 1.5 times, the largest Kiviat area of the table).
The trace defaults to the model's own.  ``--period val`` scores the validation month instead
(§9: the month after the training months), the only period a model choice may look at.  ``--plots DIR`` also draws Fig. 6 (Kiviat), Fig. 7
(wait against job size per class) and Fig. 9 (weekly core-hours and wait) of this table.

``--held-out`` (issue 47 §3; no ``--model``)::

    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras_test_period.py --held-out [--trace FILE]
        [--pool RUN_DIR ...] [--also NAME=DIR[:on|:off] ...] [--cache DIR] [--json FILE]

1. **Validation month by load.** Each month's FCFS + EASY utilisation (CQSim oracle, the month
   alone from an empty machine) is compared with that of all later months as one simulation
   (the test period it would leave).  The validation month is the first month after the two
   training months whose utilisation is within ``--tolerance`` (10 %) of the later months';
   the held-out test period is every month after it.  (On SDSC-SP2 §9's month 2 is 13 % lighter
   than the rest, so month 3 validates and months 4– test; on LANL-CM5 month 2 qualifies.)
2. **Choice on it.** The candidates are the trace's shipped DRAS models (PG with and without
   online adaptation) and every kept checkpoint of each ``--pool`` run; per variant (PG, DQL)
   the lowest average wait among those whose maximum wait is within ``--bound`` (1.5) × FCFS +
   EASY's on the validation month (issue 17's rule, ``--best-by bounded-wait``).
3. **Test tables**, §9's test period (months 3–, as before) and, when the validation month moved,
   the held-out one: the chosen models, Decima-PG, the ``--also`` models, the §8 baselines and
   FCFS + EASY with shortest-job-first backfilling (``easy-sjbf``) in CQSim's code-mode
   semantics (waiting jobs' actual run times in the profile), and issue 47 §2's baselines in
   jaxsched's own simulator (standard EASY on requested times: FCFS/SJF/F1 × EASY-SJBF and
   EASY++, the latter only with user ids): one §10 table, Kiviat over all methods, the best
   baseline by average wait named, each method's paired difference to it (the months' average
   waits, mean ± standard error over the months) and issue 17's three checks.
``--cache DIR`` keeps every schedule (a rerun computes only what is new).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxsched import models as shipped
from jaxsched.systems import parse_model_spec
from jaxsched.systems.dras.config import env_jobs
from jaxsched.systems.dras.evaluate import (
    baseline_schedules,
    checks,
    format_test_period,
    load_dras,
    test_period_table,
)
from jaxsched.systems.dras.report import method_table


def parse_model(spec: str) -> tuple[str, str, bool | None]:
    """``NAME=DIR[:on|:off]`` → (name, path, online) (:func:`jaxsched.systems.parse_model_spec`,
    the name required)."""
    name, path, online = parse_model_spec(spec)
    if name is None:
        raise SystemExit(f"--model {spec!r}: expected NAME=DIR[:on|:off]")
    return name, path, online


def main(argv=None, out=print) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", default=[], help="NAME=DIR[:on|:off]")
    ap.add_argument("--trace", default=None)
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--period", choices=("test", "val"), default="test")
    ap.add_argument("--json", default=None)
    ap.add_argument("--plots", default=None, help="write Fig. 6/7/9 PNGs into this folder")
    ap.add_argument(
        "--held-out",
        action="store_true",
        help="issue 47 §3: validation month by load, choice on it, test tables",
    )
    ap.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="RUN_DIR",
        help="--held-out: every kept checkpoint of this run is a candidate too",
    )
    ap.add_argument("--cache", default=None, metavar="DIR", help="--held-out: reuse schedules")
    ap.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="NAME=DIR[:on|:off]",
        help="--held-out: a model shown in the test tables beside the chosen ones",
    )
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--bound", type=float, default=1.5)
    ap.add_argument(
        "--months", type=int, default=0, help="--held-out: only months before this one (tests)"
    )
    a = ap.parse_args(argv)
    if a.held_out:
        return held_out(a, out)
    if not a.model:
        ap.error("--model is required (or --held-out)")
    models = []
    for spec in a.model:
        name, path, online = parse_model(spec)
        models.append((name, load_dras(shipped.resolve(path)), online))
    res = test_period_table(models, a.trace, jobs=a.jobs or None, period=a.period)
    table, c, cj, schedules = res["table"], res["checks"], res["cj"], res["schedules"]
    for line in format_test_period(res).splitlines():
        out(line)
    if a.plots:
        from pathlib import Path

        from jaxsched.systems.dras import plot

        d = Path(a.plots)
        d.mkdir(parents=True, exist_ok=True)
        for f in (plot.plot_kiviat(table, d / "kiviat.png"),
                  plot.plot_wait_vs_size(schedules, d / "wait_vs_size.png"),
                  plot.plot_weekly(schedules, d / "weekly.png")):  # fmt: skip
            out(f"wrote {f}")
    if a.json:
        rows = {
            n: {k: v for k, v in t.items() if not isinstance(v, list)} for n, t in table.items()
        }
        with open(a.json, "w") as fh:
            json.dump(
                {"period": a.period, "jobs": len(cj.submit), "table": rows, "checks": c},
                fh,
                indent=1,
            )
    return {"table": table, "checks": c}


# -- issue 47 §3: the held-out protocol ------------------------------------------------------------
#: months of the §9 split the shipped models trained on (spec ``dras.md`` §9)
TRAIN_MONTHS = 2
#: baselines of the held-out table in CQSim's code-mode semantics (the CQSim oracle): §8's four
#: and issue 47 §2's EASY with shortest-job-first backfilling
CQSIM_BASELINES = ("fcfs", "easy-sjbf", "binpacking", "random", "optimization")
#: issue 47 §2's baselines in jaxsched's own simulator (standard EASY on the requested times):
#: (name, main order, backfilling)
SIM_BASELINES = (
    ("sim fcfs+easy", "fcfs", "easy"),
    ("sim fcfs+sjbf", "fcfs", "easy-sjbf"),
    ("sim sjf+sjbf", "sjf", "easy-sjbf"),
    ("sim f1+sjbf", "f1", "easy-sjbf"),
    ("sim fcfs+easy++", "fcfs", "easy++"),
    ("sim sjf+easy++", "sjf", "easy++"),
    ("sim f1+easy++", "f1", "easy++"),
)


def month_of(submit) -> np.ndarray:
    """int ``[n]``: each job's 30-day month from the first submit (the §9 months)."""
    from jaxsched.workload.dras import MONTH

    s = np.asarray(submit, np.int64)
    return (s - s[0]) // MONTH


def fcfs_util(cj) -> float:
    """FCFS + EASY's utilisation (CQSim oracle, one simulation from an empty machine) of the
    job list ``cj``: Σ n·run / (N · (last end − first submit))."""
    from jaxsched.sim.dras_metrics import schedule_metrics

    st = baseline_schedules(cj, ["fcfs"])["fcfs"]["start"]
    return schedule_metrics(cj.submit, cj.run, cj.nodes, st, N=cj.num_nodes)["util"]


def choose_validation_month(utils: dict, tol: float = 0.10):
    """The validation month of the held-out protocol: the first month ``m`` after the training
    months whose FCFS + EASY utilisation ``utils[m] = (month's, the rest's)`` (the rest: every
    later month as one simulation, the test period it would leave) is within ``tol`` of the
    rest's, ``|u_m / u_rest − 1| <= tol``; None if none is."""
    for m in sorted(utils):
        u, rest = utils[m]
        if m >= TRAIN_MONTHS and abs(u / rest - 1.0) <= tol:
            return m
    return None


def bounded_choice(scores: dict, limit: float):
    """The name with the lowest ``avg_wait`` among ``scores`` (``{name: {"avg_wait",
    "max_wait"}}``) whose ``max_wait <= limit`` (issue 17's rule, ``--best-by bounded-wait``);
    None if none is within it."""
    ok = [n for n, r in scores.items() if r["max_wait"] <= limit]
    return min(ok, key=lambda n: (scores[n]["avg_wait"], n)) if ok else None


def paired_by_month(month, wait_a, wait_b) -> tuple[float, float, int]:
    """Mean ± standard error over the months of (month's average wait of a − of b), and the
    number of months: the paired difference of two schedules of the same jobs."""
    from jaxsched.sim.evaluate import standard_error

    d = []
    for m in np.unique(month):
        k = month == m
        d.append(float(np.mean(wait_a[k]) - np.mean(wait_b[k])))
    d = np.asarray(d)
    return float(d.mean()), standard_error(d), len(d)


def shipped_candidates(trace: str) -> dict:
    """``{"pg": [(label, path, online)], "dql": [...], "decima": [...]}``: the shipped DRAS models
    trained on ``trace`` (same file name); PG candidates with and without online adaptation."""
    out = {"pg": [], "dql": [], "decima": []}
    base = Path(trace).name.removesuffix(".gz")
    for name in shipped.names():
        run = json.loads((shipped.path(name) / "run.json").read_text())
        if run.get("system") != "dras" or Path(run["trace"]).name.removesuffix(".gz") != base:
            continue
        if run.get("loop") == "immediate":
            out["decima"].append((name, name, None))
        elif run["variant"] == "pg":
            out["pg"] += [(f"{name}:on", name, True), (f"{name}:off", name, False)]
        else:
            out["dql"].append((name, name, None))
    return out


def pool_candidates(run_dir) -> list:
    """Every kept epoch checkpoint of a training run as candidates ``(label, path, online)``
    (PG: with and without online adaptation)."""
    from jaxsched.train.checkpoint import list_checkpoints

    run = json.loads((Path(run_dir) / "run.json").read_text())
    out = []
    for ck in list_checkpoints(run_dir):
        lab = f"{Path(run_dir).name}/{Path(ck).stem.split('_')[-1].lstrip('0')}"
        if run["variant"] == "pg":
            out += [(f"{lab}:on", str(ck), True), (f"{lab}:off", str(ck), False)]
        else:
            out.append((lab, str(ck), None))
    return out


class _Cache:
    """Schedules and scores on disk (``DIR/KEY.npz``): a rerun skips what is done."""

    def __init__(self, root):
        self.root = None if root is None else Path(root)
        if self.root is not None:
            self.root.mkdir(parents=True, exist_ok=True)

    def get(self, key: str, make):
        f = None if self.root is None else self.root / (key.replace("/", "_") + ".npz")
        if f is not None and f.exists():
            return dict(np.load(f))
        v = make()
        if f is not None:
            np.savez(f, **v)
        return v


def _model_schedule(path, online, cj, jobs_desc: str, cache: _Cache) -> dict:
    """``{"start", "cls", "seconds"}`` of a model (checkpoint ``path``) over ``cj``."""
    from jaxsched.systems.dras.evaluate import run_model

    key = f"model-{Path(str(path)).resolve().as_posix().replace('/', '_')}-{online}-{jobs_desc}"

    def make():
        m = load_dras(shipped.resolve(path))
        r = run_model(m.run, m.params, env_jobs_for(m, cj), online=online)
        return {"start": r["start"], "cls": r["cls"], "seconds": np.float64(r["seconds"])}

    return cache.get(key, make)


def env_jobs_for(model, cj):
    """``cj`` with the model's priority flag (DRAS's capability sites, ``--priority``)."""
    import dataclasses as dc

    N = cj.num_nodes
    p = model.run.priority
    prio = np.zeros(len(cj.nodes), np.int32) if p is None else (cj.nodes > p * N).astype(np.int32)
    return dc.replace(cj, priority=prio)


def _sim_schedules(cj, users, cache: _Cache, desc: str) -> dict:
    """Issue 47 §2's baselines in jaxsched's simulator (correct mode, :data:`SIM_BASELINES`)."""
    from jaxsched.sim import oracle
    from jaxsched.sim.oracle_easypp import simulate_easypp

    out = {}
    for name, pol, bf in SIM_BASELINES:
        if bf == "easy++" and users is None:
            continue

        def make(pol=pol, bf=bf):
            a = (cj.submit, cj.run, cj.req_time, cj.nodes)
            kw = dict(num_nodes=cj.num_nodes, procs_per_node=1.0, policy=pol)
            if bf == "easy++":
                st = simulate_easypp(*a, users, **kw).starts
            else:
                st = oracle.simulate(*a, backfill=bf, compat=False, **kw)
            return {"start": np.asarray(st, np.int64)}

        out[name] = cache.get(f"sim-{pol}-{bf}-{desc}", make)
    return out


def trace_users(trace: str, job_id) -> np.ndarray | None:
    """SWF user ids (field 12) of the jobs ``job_id``, or None when the trace has none."""
    from jaxsched.workload import read_swf

    sw = read_swf(trace).jobs("rlscheduler")
    if (np.asarray(sw.user) < 0).all():
        return None
    umap = dict(zip(np.asarray(sw.job_id).tolist(), np.asarray(sw.user).tolist(), strict=True))
    return np.asarray([umap[int(j)] for j in job_id], np.int64)


def _cq(jobs):
    return env_jobs(jobs, None)


def held_out(a, out=print) -> dict:
    """``--held-out``: loads, the validation month, the choice on it, the test tables."""
    from jaxsched.workload.cqsim import cqsim_slice, load_cqsim

    trace = a.trace or "../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"
    cache = _Cache(a.cache)
    tr = load_cqsim(trace)
    sl = cqsim_slice(tr)
    jobs = sl.as_jobs(tr.path).select(~(sl.nodes > tr.num_nodes))
    month = month_of(jobs.submit)
    n_months = int(month.max()) + 1
    lim = a.months or n_months
    out(f"{trace}: {jobs.n_jobs} jobs, N = {tr.num_nodes}, {n_months} months of 30 days; "
        f"training months 0-{TRAIN_MONTHS - 1} (the shipped models')")  # fmt: skip
    # 1. loads: each month's FCFS + EASY utilisation and the rest's (the test it would leave)
    utils, rows = {}, []
    for m in range(n_months - 1):
        part, rest = jobs.select(month == m), jobs.select((month > m) & (month < lim))
        u = fcfs_util(_cq(part))
        ur = fcfs_util(_cq(rest)) if m >= TRAIN_MONTHS - 1 else float("nan")
        utils[m] = (u, ur)
        rows.append(f"  month {m:>2}: {part.n_jobs:>6} jobs  FCFS + EASY util {u:.3f}  "
                    f"months {m + 1}- as one simulation {ur:.3f}  ratio {u / ur:.3f}")  # fmt: skip
        if m >= TRAIN_MONTHS and choose_validation_month({m: utils[m]}, a.tolerance) is not None:
            break
    out(f"loads (rule: the first month after the training months whose FCFS + EASY "
        f"utilisation is within {a.tolerance:.0%} of the following months'):")  # fmt: skip
    for r in rows:
        out(r)
    vm = choose_validation_month(utils, a.tolerance)
    if vm is None:
        raise SystemExit("no month qualifies as the validation month")
    out(f"validation month: {vm} (§9's validation month is {TRAIN_MONTHS}); held-out test "
        f"period: months {vm + 1}-{lim - 1}")  # fmt: skip
    val_cj = _cq(jobs.select(month == vm))
    # 2. the choice on the validation month
    cands = shipped_candidates(trace)
    for d in a.pool or ():
        v = json.loads((Path(d) / "run.json").read_text())["variant"]
        cands[v] += pool_candidates(d)
    vdesc = f"{Path(trace).name}-m{vm}"
    fval = baseline_schedules(val_cj, ["fcfs"])["fcfs"]["start"]
    fmax = float(np.max(fval - val_cj.submit))
    fval_w = float(np.mean(fval - val_cj.submit))
    limit = a.bound * fmax
    chosen = {}
    out(f"validation month {vm}: {len(val_cj.submit)} jobs; FCFS + EASY {fval_w:,.1f} s average, "
        f"{fmax / 3600:.2f} h maximum wait; rule: the lowest average wait among the candidates "
        f"whose maximum wait is within {a.bound:g} x FCFS + EASY's ({limit / 3600:.2f} h)")  # fmt: skip
    for v in ("pg", "dql"):
        scores = {}
        for lab, path, online in cands[v]:
            s = _model_schedule(path, online, val_cj, vdesc, cache)
            w = s["start"] - val_cj.submit
            scores[lab] = {"avg_wait": float(w.mean()), "max_wait": float(w.max()),
                           "path": str(path), "online": online}  # fmt: skip
        c = bounded_choice(scores, limit)
        for lab, r in sorted(scores.items(), key=lambda kv: kv[1]["avg_wait"]):
            mark = " <- chosen" if lab == c else ("" if r["max_wait"] <= limit else " (over)")
            out(f"  DRAS-{v.upper():<4} {lab:<34} {r['avg_wait']:10,.1f} s "
                f"({r['avg_wait'] / fval_w:.3f}x)  max {r['max_wait'] / 3600:7.2f} h{mark}")  # fmt: skip
        if c is not None:
            chosen[v] = (c, scores[c])
        else:
            out(f"  DRAS-{v.upper()}: no candidate within the bound; none chosen")
    # 3. the test periods: §9's (as before) and, when the validation month moved, the held-out one
    results = {}
    periods = [(f"§9's test period (months {TRAIN_MONTHS + 1}-{lim - 1})", TRAIN_MONTHS)]
    if vm != TRAIN_MONTHS:
        periods.append((f"held-out test period (months {vm + 1}-{lim - 1})", vm))
    for title, after in periods:
        sel = (month > after) & (month < lim)
        idx = np.flatnonzero(sel)[: a.jobs or None]
        cj = _cq(jobs.select(idx))
        users = trace_users(trace, jobs.job_id[idx])
        desc = f"{Path(trace).name}-after{after}-{lim}-{a.jobs or 'all'}"
        extra = [parse_model(x) for x in a.also]
        results[title] = test_table(title, cj, users, chosen, cands["decima"] + extra, cache,
                                    desc, out)  # fmt: skip
    res = {"validation_month": vm, "utils": {str(k): v for k, v in utils.items()},
           "chosen": {k: v[0] for k, v in chosen.items()}, "periods": results}  # fmt: skip
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return res


def test_table(title, cj, users, chosen, others, cache, desc, out) -> dict:
    """One test period's table: the chosen models, Decima-PG and ``others``
    (``(label, path, online)``), the CQSim baselines and issue
    47 §2's baselines, one §10 table (Kiviat over all of them), paired differences to the
    best baseline per month, and issue 17's checks."""
    schedules = {}
    base = dict(submit=cj.submit, run=cj.run, nodes=cj.nodes)
    for v, (lab, r) in chosen.items():
        s = _model_schedule(r["path"], r["online"], cj, desc, cache)
        schedules[f"DRAS-{v.upper()} ({lab})"] = dict(base, start=s["start"], cls=s["cls"])
    for lab, path, online in others:  # Decima-PG, and --also models (not chosen here)
        s = _model_schedule(path, online, cj, desc, cache)
        name = f"Decima-PG ({lab})" if "decima" in str(path) else f"DRAS, not chosen ({lab})"
        schedules[name] = dict(base, start=s["start"], cls=s["cls"])
    for name in CQSIM_BASELINES:
        s = cache.get(f"cqsim-{name}-{desc}", lambda name=name: {
            k: np.asarray(v) for k, v in baseline_schedules(cj, [name])[name].items()})  # fmt: skip
        schedules[name] = dict(base, **s)
    for name, s in _sim_schedules(cj, users, cache, desc).items():
        schedules[name] = dict(base, start=s["start"])
    table = method_table(schedules, N=cj.num_nodes)
    learned = [n for n in schedules if n.startswith(("DRAS", "Decima"))]
    best = min((n for n in schedules if n not in learned), key=lambda n: table[n]["avg_wait"])
    f = table["fcfs"]
    tm = month_of(cj.submit)
    out(f"\n{title}: {len(cj.submit)} jobs; FCFS + EASY util {f['util']:.3f}; best baseline by "
        f"average wait: {best}" + ("" if users is not None else "; no user ids, so no EASY++"))  # fmt: skip
    out("| method | avg wait (s) | x FCFS + EASY | max wait (h) | x | avg slowdown | util | "
        "Kiviat area | − best baseline, per month (s) |")  # fmt: skip
    out("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    wb = schedules[best]["start"] - cj.submit
    rows = {}
    for n, t in sorted(table.items(), key=lambda kv: -kv[1]["kiviat_area"]):
        w = schedules[n]["start"] - cj.submit
        d, se, k = paired_by_month(tm, w, wb)
        rows[n] = {**{x: t[x] for x in ("avg_wait", "max_wait", "avg_slowdown", "util",
                                        "kiviat_area")}, "diff": d, "se": se, "months": k}  # fmt: skip
        out(f"| {n} | {t['avg_wait']:,.1f} | {t['avg_wait'] / f['avg_wait']:.3f} | "
            f"{t['max_wait'] / 3600:,.2f} | {t['max_wait'] / f['max_wait']:.2f} | "
            f"{t['avg_slowdown']:.2f} | {t['util']:.3f} | {t['kiviat_area']:.3f} | "
            + ("(best)" if n == best else f"{d:+,.0f} ± {se:,.0f}") + " |")  # fmt: skip
    c = checks(table, [n for n in learned if n.startswith("DRAS")])  # chosen and --also
    for n, v in c.items():
        below_best = table[n]["avg_wait"] < table[best]["avg_wait"]
        out(f"{n}: average wait below FCFS + EASY's: {'yes' if v['below'] else 'no'}; below "
            f"the best baseline's ({best}): {'yes' if below_best else 'no'}; maximum wait "
            f"{v['max_ratio']:.2f}x FCFS + EASY's (<= 1.5): "
            f"{'yes' if v['max_ratio'] <= 1.5 else 'no'}; largest Kiviat area of all "
            f"{len(table)} methods: {'yes' if v['largest_area'] else 'no'}")  # fmt: skip
    return {"jobs": len(cj.submit), "best_baseline": best, "table": rows, "checks": c}


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    main()
