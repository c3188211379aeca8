"""Held-out study of RLScheduler training runs (issue 49): each run's model chosen on its own
validation log, then tested on sequences of the trace's test split against the heuristics.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/generalise.py TRACE RUN [RUN ...]
        [--sequences 200] [--jobs 1024] [--seed 0] [--policy fcfs,wfp3,unicep,sjf,f1]
        [--choose select|best|newest] [--split-fractions 0.5,0.1,0.4] [--allow-seen]
        [--paper [--paper-sequences 10] [--paper-slice 10000]] [--versus f1,...] [--json FILE]

RUN: a ``jaxsched train rlscheduler`` directory, or a sweep directory (``--seeds``) whose
``seed-*`` folders are each a run. Per run the model is chosen on validation only:
``--choose select`` (default) takes the checkpoint of the best ``val_<metric>`` epoch of the
run's own log (``jaxsched select``'s rule; the epoch's checkpoint must have been kept), falling
back to ``best.ckpt``; ``best`` takes ``best.ckpt``; ``newest`` the newest checkpoint (no
choice at all). Over all runs, the one with the best validation value is named "chosen" (runs
validated on different sequences are not comparable: the script says so when their
validation settings differ).

The test: ``--sequences`` starts drawn uniformly (``numpy default_rng(--seed)``, as
``jaxsched evaluate --split test``) among the sequences of ``--jobs`` jobs lying wholly in the
trace's test split; every heuristic of ``--policy`` and every model on the same sequences, in
each run's own simulator settings (compat, backfilling, metric). A model whose ``jobs_seen``
overlaps the test jobs is refused unless ``--allow-seen`` (then labelled in-sample). Printed
per run: mean ± standard error of the heuristics and the model, and the model's paired
difference (mean ± s.e.) to the best heuristic *of that table* (the lowest mean on these test
sequences: the conservative bar, not a choice made for the model), with the margin in % of
that heuristic's mean. ``--paper`` adds the same model on the paper's protocol (the
reference's draw, seed 1, from the first ``--paper-slice`` jobs), labelled in-sample where the
run saw those jobs. ``--versus`` adds each model's paired difference to these policies of
``--policy`` too (e.g. F1 when the best heuristic is another one).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import numpy as np  # noqa: E402

from jaxsched.errors import ConfigError  # noqa: E402
from jaxsched.sim.evaluate import evaluate, standard_error  # noqa: E402
from jaxsched.sim.metrics import HIGHER_IS_BETTER  # noqa: E402
from jaxsched.systems.rlscheduler.evaluate import load_policy, policy_metric  # noqa: E402
from jaxsched.train.checkpoint import list_checkpoints  # noqa: E402
from jaxsched.train.loop import epoch_rows  # noqa: E402
from jaxsched.workload import read_swf, reference_starts  # noqa: E402
from jaxsched.workload.splits import (  # noqa: E402
    DEFAULT_FRACTIONS,
    check_unseen,
    chronological_split,
    parse_fractions,
    starts_in_range,
)

POLICIES = ("fcfs", "wfp3", "unicep", "sjf", "f1")


def expand_runs(paths) -> list:
    """Run directories: each path itself when it holds a run.json, else its ``seed-*``
    folders (a ``--seeds`` sweep), in seed order."""
    out = []
    for p in map(Path, paths):
        if (p / "run.json").exists():
            out.append(p)
            continue
        seeds = sorted(p.glob("seed-*"), key=lambda d: int(d.name.split("-")[1]))
        seeds = [d for d in seeds if (d / "run.json").exists()]
        if not seeds:
            raise ConfigError(f"{p}: neither a run (run.json) nor a sweep (seed-*/run.json)")
        out += seeds
    return out


def _epoch_of(ckpt: Path) -> int:
    return int(Path(ckpt).stem.split("_")[-1])


def choose_checkpoint(run: Path, how: str, metric: str):
    """``(checkpoint path, epoch or None, validation value or None)`` of ``run`` by ``how``
    (see the module docstring). Reads the run's log only: no test sequence is involved."""
    ckpts = {_epoch_of(c): Path(c) for c in list_checkpoints(run)}
    if how == "select":
        key, sign = f"val_{metric}", (-1.0 if metric in HIGHER_IS_BETTER else 1.0)
        vals = {}
        for r in epoch_rows(run):
            if key in r and r[key] is not None and math.isfinite(float(r[key])):
                vals[int(r["epoch"])] = float(r[key])
        kept = [(sign * v, e) for e, v in vals.items() if e in ckpts]
        if kept:
            _, e = min(kept)
            return ckpts[e], e, vals[e]
        how = "best"  # no kept checkpoint of a validated epoch: best.ckpt
    if how == "best" and (run / "best.ckpt").exists():
        pol = load_policy(run / "best.ckpt")
        vals = {int(r["epoch"]): r.get(f"val_{metric}") for r in epoch_rows(run)}
        return run / "best.ckpt", int(pol.epoch), vals.get(int(pol.epoch))
    if not ckpts:
        raise ConfigError(f"{run}: no checkpoint")
    e = max(ckpts)
    return ckpts[e], e, None


def _validation_settings(run: Path) -> tuple:
    flags = run / "flags.json"
    if not flags.exists():  # a sweep's seed: the sweep's flags
        flags = run.parent / "flags.json"
    f = json.loads(flags.read_text()) if flags.exists() else {}
    return tuple(f.get(k) for k in ("val_sequences", "val_jobs", "val_seed"))


def _mean_sem(v) -> tuple:
    v = np.asarray(v, np.float64)
    return float(v.mean()), standard_error(v)


def table(jobs, starts, length, policies, run: dict, model_vals: dict) -> dict:
    """Heuristics on ``starts`` in ``run``'s settings plus the given models' values:
    ``{"heuristics": {name: [S]}, "models": {name: [S]}}`` (lists of floats)."""
    bf, compat, metric = run["backfill"], bool(run.get("compat", False)), run["metric"]
    res = evaluate(jobs, starts, length, list(policies), [bf], compat=compat, metrics=[metric])
    per = {p: {} for p in res.policies}
    for r in res.rows:
        per[r["policy"]][int(r["start"])] = r["value"]
    heur = {p: [per[p][int(s)] for s in res.starts] for p in res.policies}
    return {"starts": [int(s) for s in res.starts], "heuristics": heur, "models": model_vals}


def _paired(v, ref, ref_mean: float) -> dict:
    d = np.asarray(v, np.float64) - np.asarray(ref, np.float64)
    dm, ds = _mean_sem(d)
    return {"diff": dm, "diff_sem": ds, "margin_pct": 100.0 * dm / ref_mean,
            "z": dm / ds if ds > 0 else math.nan}  # fmt: skip


def summarise(tab: dict, metric: str, versus=()) -> dict:
    """Means, standard errors, the best heuristic and every model's paired difference to it
    (and, under ``"versus"``, to each policy of ``versus`` present in the table)."""
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    heur = {p: _mean_sem(v) for p, v in tab["heuristics"].items()}
    best = min(heur, key=lambda p: sign * heur[p][0])
    ref = np.asarray(tab["heuristics"][best], np.float64)
    models = {}
    for name, v in tab["models"].items():
        m, s = _mean_sem(v)
        models[name] = {"mean": m, "sem": s, **_paired(v, ref, heur[best][0])}
        vs = {p: _paired(v, tab["heuristics"][p], heur[p][0]) for p in versus if p in heur}
        if vs:
            models[name]["versus"] = vs
    return {"heuristics": heur, "best": best, "models": models}


def format_summary(title: str, summ: dict, n: int) -> str:
    lines = [title, f"  {n} sequences; best heuristic {summ['best']}"]
    for p, (m, s) in summ["heuristics"].items():
        lines.append(f"  {p:<28} {m:12,.2f} ± {s:9,.2f}")
    for name, r in summ["models"].items():
        lines.append(
            f"  {name:<28} {r['mean']:12,.2f} ± {r['sem']:9,.2f}   − {summ['best']}: "
            f"{r['diff']:+,.2f} ± {r['diff_sem']:,.2f} ({r['margin_pct']:+.1f} %, "
            f"{r['z']:+.1f} s.e.)"
        )
        for p, d in r.get("versus", {}).items():
            lines.append(
                f"  {'':<28} {'':>12}   {'':>9}   − {p}: {d['diff']:+,.2f} ± "
                f"{d['diff_sem']:,.2f} ({d['margin_pct']:+.1f} %, {d['z']:+.1f} s.e.)"
            )
    return "\n".join(lines)


def study(trace, runs, *, sequences=200, length=1024, seed=0, policies=POLICIES,
          choose="select", fractions=DEFAULT_FRACTIONS, allow_seen=False, paper=False,
          paper_sequences=10, paper_slice=10000, rules="rlscheduler", versus=(),
          out=print) -> dict:  # fmt: skip
    """Choose, test and print every run (module docstring); returns a JSON-able dict."""
    jobs = read_swf(trace).jobs(rules)
    split = chronological_split(jobs.n_jobs, fractions)
    test = split.range("test")
    starts = starts_in_range(test, length, sequences, seed)
    runs = expand_runs(runs)
    chosen, groups = [], {}
    for run in runs:
        rj = json.loads((run / "run.json").read_text())
        ck, epoch, val = choose_checkpoint(run, choose, rj.get("metric", "bsld"))
        seen = check_unseen(rj, str(run), trace, test, allow_seen)
        name = f"{run.name}@{epoch}" + (" (in-sample)" if seen else "")
        chosen.append({"run": str(run), "checkpoint": str(ck), "epoch": epoch,
                       "validation": val, "name": name, "in_sample": seen,
                       "jobs_seen": rj.get("jobs_seen"), "split": (rj.get("split") or {}).get("name"),
                       "val_settings": _validation_settings(run)})  # fmt: skip
        key = (rj["backfill"], bool(rj.get("compat", False)), rj.get("metric", "bsld"))
        groups.setdefault(key, []).append((chosen[-1], rj))
    result = {"trace": str(trace), "n_jobs": jobs.n_jobs, "test_range": list(test),
              "sequences": sequences, "jobs": length, "seed": seed, "runs": chosen,
              "tables": []}  # fmt: skip
    for (bf, compat, metric), members in groups.items():
        vals = {}
        for c, _ in members:
            pol = load_policy(c["checkpoint"])
            v, _ = policy_metric(pol, jobs, starts, length)
            vals[c["name"]] = [float(x) for x in v]
        tab = table(jobs, starts, length, policies, members[0][1], vals)
        summ = summarise(tab, metric, versus)
        mode = f"{'compat' if compat else 'correct'}, backfill {bf}, {metric}"
        out(format_summary(f"{Path(trace).name}: test split jobs [{test[0]}, {test[1]}), "
                           f"seed {seed}, {length} jobs; {mode}", summ, len(starts)))  # fmt: skip
        entry = {"backfill": bf, "compat": compat, "metric": metric, "test": summ}
        if paper:
            pstarts = reference_starts(1, paper_sequences, length, jobs.n_jobs,
                                       batch_job_slice=paper_slice)  # fmt: skip
            pvals = {}
            for c, rj in members:
                seen = check_unseen(rj, c["run"], trace, (0, paper_slice), True)
                pname = c["name"].replace(" (in-sample)", "") + (" (in-sample)" if seen else "")
                v, _ = policy_metric(load_policy(c["checkpoint"]), jobs, pstarts, length)
                pvals[pname] = [float(x) for x in v]
            psumm = summarise(table(jobs, pstarts, length, policies, rj, pvals), metric, versus)
            out(format_summary(f"  paper's protocol (seed 1, first {paper_slice:,} jobs)",
                               psumm, len(pstarts)))  # fmt: skip
            entry["paper"] = psumm
        result["tables"].append(entry)
    validated = [c for c in chosen if c["validation"] is not None]
    if validated:
        if len({c["val_settings"] for c in validated}) > 1:
            out("note: the runs validated on different settings; their values are not comparable")
        first = json.loads((Path(validated[0]["run"]) / "run.json").read_text())
        sign = -1.0 if first.get("metric", "bsld") in HIGHER_IS_BETTER else 1.0
        top = min(validated, key=lambda c: sign * float(c["validation"]))
        result["chosen"] = top["name"]
        out(f"chosen on validation over all runs: {top['name']} (val {top['validation']:,.2f})")
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("runs", nargs="+", metavar="RUN")
    ap.add_argument("--sequences", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0, help="seed of the test starts (default 0)")
    ap.add_argument("--policy", default=",".join(POLICIES))
    ap.add_argument("--choose", choices=("select", "best", "newest"), default="select")
    ap.add_argument("--split-fractions", type=parse_fractions, default=DEFAULT_FRACTIONS)
    ap.add_argument("--allow-seen", action="store_true")
    ap.add_argument("--paper", action="store_true")
    ap.add_argument("--paper-sequences", type=int, default=10)
    ap.add_argument("--paper-slice", type=int, default=10000)
    ap.add_argument("--versus", default="", help="also pair each model with these policies")
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args(argv)
    try:
        res = study(a.trace, a.runs, sequences=a.sequences, length=a.jobs, seed=a.seed,
                    policies=a.policy.split(","), choose=a.choose,
                    fractions=a.split_fractions, allow_seen=a.allow_seen, paper=a.paper,
                    paper_sequences=a.paper_sequences, paper_slice=a.paper_slice,
                    versus=[p for p in a.versus.split(",") if p])  # fmt: skip
    except ConfigError as e:
        print(f"generalise.py: {e}", file=sys.stderr)
        return 2
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
