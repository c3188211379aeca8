"""Write the results blocks of README.md, docs/ and the model cards from one file.

Every current figure of the documentation is one record of ``benchmarks/data/results.json``
(system, model, protocol, value ± s.e., baseline, sequences, command, notebook section, commit,
date, machine). This script renders those records as Markdown and replaces, in each page, the
text between a start marker and ``<!-- end generated -->``::

    <!-- generated: results-table rlscheduler -->
    ...
    <!-- end generated -->

so that a figure is written in one place and every page that shows it shows the same value.

    PYTHONPATH=. .venv/bin/python benchmarks/docs/generate_pages.py          # rewrite the pages
    PYTHONPATH=. .venv/bin/python benchmarks/docs/generate_pages.py --check  # exit 1 if stale

``tests/test_docs_generated.py`` runs ``--check``'s comparison. Host-side text only: no JAX.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "benchmarks" / "data" / "results.json"
END = "<!-- end generated -->"
BLOCK = re.compile(r"<!-- generated: ([a-z0-9 _.-]+?) -->\n(.*?)" + re.escape(END), re.S)
MINUS = "\u2212"


def load(path: Path = DATA) -> list[dict]:
    return json.loads(path.read_text())["records"]


# ---------------------------------------------------------------- number formatting


def num(x, dp=None, sign=False) -> str:
    """``x`` with thousands separators, ``dp`` decimals (default: as stored), a real minus
    sign, and ``+`` for positive values when ``sign``."""
    if x is None:
        return "—"
    if dp is None:
        s = repr(float(x)) if not float(x).is_integer() else str(int(x))
        dp = len(s.split(".")[1]) if "." in s else 0
    s = f"{abs(x):,.{dp}f}"
    if x < 0:
        return MINUS + s
    return ("+" + s) if sign and x > 0 else s


def pm(r, dp=None, pct_dp=None) -> str:
    """``diff ± se (pct %)`` of a record."""
    out = f"{num(r['diff'], dp, sign=True)} ± {num(r['se'], dp)}"
    if r.get("pct") is not None:
        out += f" ({num(r['pct'], pct_dp, sign=True)} %)"
    return out


def sec(r) -> str:
    """The notebook section of a record, linked from a page under docs/ (``up`` levels)."""
    return r["section"]


def link(r, up: str) -> str:
    return f"[{r['section']}]({up}notebook/{r['notebook']})"


# ---------------------------------------------------------------- tables


def _by(records, table, protocol=None):
    return [
        r
        for r in records
        if r["table"] == table and (protocol is None or r["protocol"] == protocol)
    ]


def rlscheduler_table(records, up: str) -> str:
    held = {r["model"]: r for r in _by(records, "rlscheduler", "held-out")}
    ins = {r["model"]: r for r in _by(records, "rlscheduler", "in-sample")}
    r0 = next(iter(held.values()))
    i0 = next(iter(ins.values()))
    lines = [
        f"Held out: {r0['sequences']}, against the strongest baseline of the row "
        f"(FCFS, [WFP3, UNICEP, SJF, F1–F4]({up}glossary.md#priority-rules) and the trace's "
        f"tuned priority, with backfilling in both of the reference's orders; {link(r0, up)}). "
        f"Paper's protocol ([in-sample]({up}glossary.md#in-sample-and-held-out)): "
        f"{i0['sequences']}, against {i0['baseline']} ({link(i0, up)}). "
        "Paired difference model − baseline, mean ± standard error; negative = the model is "
        "better.",
        "",
        "| row | model | **held out**: model − strongest baseline | strongest baseline (its mean) "
        "| paper's protocol, in-sample: model − best of five |",
        "|---|---|---:|---|---:|",
    ]
    for m, r in held.items():
        lines.append(
            f"| {r['row']} | `{m}` | **{pm(r, 2, 2)}** | {r['baseline']}: "
            f"{num(r['baseline_value'], 2)} | {pm(ins[m], 2, 1)} |"
        )
    return "\n".join(lines)


def schedinspector_table(records, up: str) -> str:
    held = _by(records, "schedinspector", "held-out")
    ins = {r["model"]: r for r in _by(records, "schedinspector", "in-sample")}
    lines = [
        "The inspector over its base rule against the base rule alone on the same sequences: "
        f"{held[0]['sequences']}, greedy; share of the base's bsld removed and utilisation "
        "change in points. The in-sample column is the paper's protocol "
        f"({ins[held[0]['model']]['sequences']}).",
        "",
        "| inspector | base | test jobs | chosen on | **held out**: inspected − base "
        "| bsld removed, held out | paper's protocol (in-sample) | utilisation change, held out "
        "| notebook |",
        "|---|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in held:
        i = ins[r["model"]]
        lines.append(
            f"| `{r['model']}` | {r['baseline'].split(' alone')[0]} | {r['test_jobs']} "
            f"| {r['chosen_on']} | **{num(r['diff'], 2, True)} ± {num(r['se'], 2)}** "
            f"| {num(-r['pct'], 1)} % | {num(-i['pct'], 1)} % "
            f"| {num(r['util_change'], 2, True)} ± {num(r['util_se'], 2)} points | {link(r, up)} |"
        )
    return "\n".join(lines)


def schedinspector_more_table(records, up: str) -> str:
    rows = _by(records, "schedinspector-more", "held-out")
    lines = [
        f"The other shipped inspectors, held out ({link(rows[0], up)}): inspected − base, paired.",
        "",
        "| inspector | metric | base | test jobs | held out: inspected − base |",
        "|---|---|---|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['model']}` | {r['metric']} | {r['baseline'].split(' alone')[0]} "
            f"| {r['test_jobs']} | {pm(r, 2, 1)} |"
        )
    return "\n".join(lines)


def splitwindow_table(records, up: str) -> str:
    rows = _by(records, "splitwindow")
    lines = [
        "`sw-lublin1-h10t10-mask` (head 10, tail 10, action mask), paired to "
        f"[SJF]({up}glossary.md#sjf) (fewest cores first, the paper's SJF) with EASY "
        "backfilling, the best heuristic on wait:",
        "",
        "| protocol | episodes | wait − SJF's (s) | utilisation − SJF's (points) | notebook |",
        "|---|---|---:|---:|---|",
    ]
    for r in rows:
        name = "**held out**" if r["protocol"] == "held-out" else "in-sample (training trace)"
        d = f"{num(r['diff'], sign=True)} ± {num(r['se'])}"
        if r.get("pct") is not None:
            d += f" ({num(r['pct'], sign=True)} %)"
        se = f" ± {num(r['util_se'])}" if r.get("util_se") is not None else ""
        lines.append(
            f"| {name} | {r['sequences']} | {d} | {num(r['util_change'], sign=True)}{se} "
            f"| {link(r, up)} |"
        )
    return "\n".join(lines)


def a2cscheduler_table(records, up: str) -> str:
    rows = _by(records, "a2cscheduler")
    lines = [
        f"Held out ({link(rows[0], up)}): {rows[0]['sequences']} per rate, the shipped models "
        "as chosen on the validation seed 314159, slowdown paired to the best baseline of the "
        f"rate (SJF, [Tetris]({up}glossary.md#tetris), Random, or a tuned priority: DeepRM's "
        "packer + SJF score with its knob chosen on training jobsets).",
        "",
        "| rate λ | shipped model | **held out**: A2C − best baseline (slowdown) | best baseline |",
        "|---|---|---:|---|",
    ]
    for r in rows:
        v = f"{num(r['diff'], 3, True)} ± {num(r['se'], 3)}"
        if abs(r["diff"]) < 2 * r["se"]:
            v += ", under two s.e."
        lines.append(f"| {r['rate']} | `{r['model']}` | **{v}** | {r['baseline']} |")
    return "\n".join(lines)


def dras_table(records, up: str) -> str:
    rows = _by(records, "dras")
    lines = [
        f"Held out ({link(rows[0], up)}, {link(rows[-1], up)}): the test period after a "
        "validation month with the test period's load, months counted from 0 "
        f"([the month convention]({up}glossary.md#dras-months)); average and maximum wait "
        "over the test period as multiples of FCFS + EASY's; the paired difference to the "
        "best baseline is per month, mean ± s.e.; "
        f"[Kiviat areas]({up}glossary.md#kiviat-area) compare only within one trace's table.",
        "",
        "| trace | test period | model | what | mean wait × | max wait × "
        "| **held out**: − best baseline per month (s) | Kiviat area |",
        "|---|---|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        model = f"`{r['model']}`" if r["model"].startswith("dras-") else r["model"]
        if r["model"] == "easy-sjbf":
            model = "`easy-sjbf`"
        d = (
            "(baseline)"
            if r["diff"] is None
            else f"**{num(r['diff'], 0, True)} ± {num(r['se'], 0)}**"
        )
        if r["diff"] is not None:
            d += f" ({r['baseline']})"
        lines.append(
            f"| {r['trace']} | {r['sequences']} | {model} | {r['what']} "
            f"| {r['wait_ratio']:.3f}× | {r['max_wait_ratio']:.2f}× | {d} | {r['kiviat']:.3f} |"
        )
    return "\n".join(lines)


def speed_table(records, up: str) -> str:
    rows = _by(records, "speed")
    lines = [
        "Machines are named per figure. Every ratio divides by the reference implementation "
        "stepped one environment at a time in the same process on the 2-core AMD EPYC "
        "development CPU, the same morning: the GPU host's own cores ran the references "
        "2.6–3× slower, so a ratio against them would overstate the GPU "
        f"([§17]({up}notebook/17-gpu-h100-h200.md)).",
        "",
        "| what | GPU figure (machine) | GPU × the reference | 2-core CPU figure (machine) "
        "| CPU × the reference | notebook |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = f"{num(r['ratio'])}× ({r['reference']})" if r["ratio"] else r["reference"]
        cpu_ratio = f"{num(r['cpu_ratio'])}×" if r.get("cpu_ratio") else "—"
        gpu = f"{r['gpu']} ({r['gpu_machine']})" if r["gpu"] else "—"
        lines.append(
            f"| {r['what']} | {gpu} | {ratio} | {r['cpu']} ({r['cpu_machine']}) | {cpu_ratio} "
            f"| {link(r, up)} |"
        )
    return "\n".join(lines)


def planners_table(records, up: str) -> str:
    """The look-ahead planners held out: per trace and planner, the paired bsld difference to
    the cell chosen on validation, then the hindsight ceiling (labelled as such, never a
    baseline) and the share of the gap to it closed."""
    rows = _by(records, "planners", "held-out")
    lines = [
        "Look-ahead planners (`jaxsched evaluate --policy rollout,window`; "
        f"[how they work]({up}baselines.md)) on each trace's test split, "
        f"{rows[0]['sequences']}, reference semantics (`--compat rlscheduler`). The baseline is "
        "the heuristic × backfilling cell with the lowest mean on a validation split (26 "
        "cells), where the settings were also chosen. The ceiling is the per-sequence best of "
        "24 cells in hindsight: no scheduler can pick it without seeing the outcome, so it is "
        "an upper bound of what switching among those cells gives, not a baseline. Paired "
        "difference planner − baseline, mean ± standard error; negative = the planner is "
        "better.",
        "",
        "| trace | planner | **held out**: planner − baseline | baseline chosen on validation "
        "(its mean) | planner − the test's own best cell (known only afterwards) | hindsight "
        "ceiling − baseline (a ceiling) | gap closed | simulated decisions per decision "
        "| notebook |",
        "|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        gap = "—" if r["gap_closed"] is None else f"{num(100 * r['gap_closed'], 0)} %"
        lines.append(
            f"| {r['trace']} | `{r['model']}` | **{pm(r, 1, 1)}** | {r['baseline']}: "
            f"{num(r['baseline_value'], 1)} | {num(r['own_diff'], 1, True)} ± "
            f"{num(r['own_se'], 1)} ({num(r['own_pct'], 1, True)} %; {r['own_cell']}) "
            f"| {num(r['ceiling_diff'], 1, True)} ± "
            f"{num(r['ceiling_se'], 1)} ({num(r['ceiling_pct'], 1, True)} %) | {gap} "
            f"| {num(r['sim_per_decision'], 1)} | {link(r, up)} |"
        )
    return "\n".join(lines)


TABLES = {
    "planners": planners_table,
    "rlscheduler": rlscheduler_table,
    "schedinspector": schedinspector_table,
    "schedinspector-more": schedinspector_more_table,
    "splitwindow": splitwindow_table,
    "a2cscheduler": a2cscheduler_table,
    "dras": dras_table,
    "speed": speed_table,
}


# ---------------------------------------------------------------- README summary


def _rec(records, rid):
    return next(r for r in records if r["id"] == rid)


def summary(records, up: str) -> str:
    """README's one table: one cell per system and protocol, each under 300 characters."""
    rl = _by(records, "rlscheduler", "held-out")
    loses = [r for r in rl if r["diff"] > 2 * r["se"]]
    worst = max(rl, key=lambda r: r["pct"])
    rl_in = _by(records, "rlscheduler", "in-sample")
    ahead = [r for r in rl_in if r["diff"] < 0]
    si = _rec(records, "si-heldout-si-sdsc-sjf-split")
    sil = _rec(records, "si-heldout-si-lublin1-sjf")
    sw = _rec(records, "sw-heldout")
    a2c = _by(records, "a2cscheduler")
    d1 = _rec(records, "dras-heldout-dras-sdsc-dql-persistent-SDSC-SP2")
    d2 = _rec(records, "dras-heldout-dras-lanl-dql-paperloop-LANL-CM5")
    cells = [
        (
            "RLScheduler",
            f"no shipped model beats the strongest baseline on {rl[0]['sequences'].split(' of')[0]}: "
            f"{len(loses)} of {len(rl)} lose by more than two s.e. (up to "
            f"{num(worst['pct'], 0, True)} %, `{worst['model']}` against {worst['baseline']}), "
            f"{len(rl) - len(loses)} are within two",
            f"{len(ahead)} of {len(rl_in)} models ahead of the best of the paper's five "
            f"heuristics as point estimates, {sum(abs(r['diff']) < r['se'] for r in rl_in)} of "
            "them within one s.e.",
            "beats the best heuristic in every row of Tables V and VIII",
        ),
        (
            "SchedInspector",
            f"`si-sdsc-sjf-split` (trained and chosen without test jobs) removes "
            f"{num(-si['pct'], 1)} % of SJF's bsld at {num(si['util_change'], 2, True)} points "
            f"of utilisation; `si-lublin1-sjf` {num(-sil['pct'], 1)} % "
            f"({num(sil['util_change'], 2, True)} points)",
            "the paper's SDSC-SP2 and Lublin F1 figures reached; Lublin SJF only by starving "
            "long jobs",
            "13.6 % to 91.6 % of the base rule's bsld removed (Fig. 8)",
        ),
        (
            "Split-window DBF",
            f"waits {num(sw['pct'], 1)} % longer than SJF + EASY "
            f"({num(sw['diff'], sign=True)} ± {num(sw['se'])} s, "
            f"{sw['diff'] / sw['se']:.1f} s.e.: a loss) at "
            f"{num(sw['util_change'], 2, True)} points of utilisation",
            "Figs. 5–7 reproduced",
            "split windows beat the unsplit window for M ≤ 20",
        ),
        (
            "A2cScheduler",
            "beats the best baseline at λ = 0.6–0.8 ("
            + ", ".join(f"{num(r['diff'], 3, True)} ± {num(r['se'], 3)}" for r in a2c[:3])
            + f" slowdown); λ = 0.9 {num(a2c[3]['diff'], 3, True)} ± {num(a2c[3]['se'], 3)}, "
            "under two s.e.",
            "— (the paper tests on fresh jobsets)",
            "beats SJF, Tetris and Random on slowdown",
        ),
        (
            "DRAS",
            f"SDSC-SP2: both chosen models lose to `easy-sjbf` (DQL {num(d1['diff'], 0, True)} "
            f"± {num(d1['se'], 0)} s per month); LANL-CM5: DQL waits {d2['wait_ratio']:.2f}× "
            f"FCFS + EASY, largest Kiviat area, loses to Optimization on mean wait "
            f"({num(d2['diff'], 0, True)} ± {num(d2['se'], 0)} s)",
            "— (the paper's protocol is later months)",
            "the largest Kiviat area of all methods on later months",
        ),
    ]
    lines = [
        "| system | ours, **held out** | ours, paper's protocol (in-sample) | the paper claims |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in cells]
    return "\n".join(lines)


def speed_summary(records, up: str) -> str:
    r = {x["id"]: x for x in _by(records, "speed")}
    one = r["speed-simulate"]
    return (
        f"On the 2-core CPU, `jaxsched simulate` schedules a whole trace on a host engine "
        f"faster than the fastest exact implementation a user could run instead, the project's "
        f"plain-Python oracle, side by side ({link(one, up)}): SDSC-SP2 in "
        f"{one['cpu'].split(' (')[0]}, {one['reference'].split(': ')[1].split(';')[0]}. "
        f"The compiled engine is barely faster than the oracle on the CPU, side by side "
        f"({link(r['speed-evaluate-oracle'], up)}): {r['speed-evaluate-oracle']['summary']}; "
        f"{r['speed-env-oracle']['summary']}. "
        f"On {r['speed-rl-nobf']['gpu_machine'].split(' (')[0]} ({link(r['speed-rl-nobf'], up)}): "
        f"RLScheduler's environment {r['speed-rl-nobf']['gpu'].split(' steps')[0]} steps/s "
        f"without backfilling ({num(r['speed-rl-nobf']['ratio'])}× its reference), "
        f"SchedInspector's {r['speed-si-nobf']['gpu'].split(' steps')[0]} "
        f"({num(r['speed-si-nobf']['ratio'])}×), the data-centre cluster "
        f"{r['speed-dc']['gpu'].split(' steps')[0]} ({num(r['speed-dc']['ratio'])}× DeepRM's), "
        f"each reference timed on the 2-core AMD EPYC development CPU the same morning (the GPU "
        f"host's own cores ran the references 2.6–3× slower); a PPO epoch at RLScheduler's "
        f"paper size in {r['speed-ppo']['gpu'].split(' (')[0]} (the paper: 123 s on 8 cores; "
        f"{r['speed-ppo']['cpu'].split(' (')[0]} on that CPU). With the reference's "
        f"backfilling a synchronous batch step waits for its slowest row; rows that step "
        f"asynchronously ({link(r['speed-rl-async'], up)}) give, on "
        f"{r['speed-rl-async']['gpu_machine']}, {r['speed-rl-async']['gpu'].split(', ')[0]} "
        f"({r['speed-rl-async']['reference'].split(' and ')[0]} the synchronous step on the "
        f"same GPU); on a {r['speed-devices']['cpu_machine']} `--devices 2` runs one device per "
        f"core ({link(r['speed-devices'], up)}: rollouts with backfilling "
        f"{r['speed-devices']['reference'].split(' one device')[0]} one device)."
    )


# ---------------------------------------------------------------- model cards


#: the tuned priority shipped for each trace (a baseline of the held-out tables)
TUNED = {
    "sdsc": "tuned-sdsc-easy",
    "hpc2n": "tuned-hpc2n-easy",
    "lublin-1": "tuned-lublin1-easy",
    "lublin_256.": "tuned-lublin1-easy",
    "lublin-2": "tuned-lublin2-easy",
    "lublin_256_new2": "tuned-lublin2-easy",
}


def _eval_command(model: str, run: dict, held: bool) -> str | None:
    """The ``jaxsched evaluate --model`` command for a model card."""
    system = run.get("system", "rlscheduler")
    trace = run.get("trace", "")
    name = Path(trace).name
    shared = f"../shared/traces/{name.removesuffix('.gz')}.gz" if "shared" in trace else trace
    if system == "rlscheduler":
        bf = run.get("backfill", "none")
        metric = " --metric fairness" if run.get("metric") == "fairness" else ""
        tuned = next(v for k, v in TUNED.items() if k in name.lower())
        both = "rlscheduler,rlscheduler-sjbf" if bf == "rlscheduler" else bf
        common = (
            f"--model {model} --compat rlscheduler --backfill {both}{metric} --jobs 1024 "
            f"--policy fcfs,wfp3,unicep,sjf,f1,f2,f3,f4,tuned:{tuned} --sem --versus f1"
        )
        if not held:
            return (
                f"jaxsched evaluate {shared} --compat rlscheduler --backfill {bf}{metric} "
                f"--seed 3 --sequences 100 --jobs 1024 --slice 10000 "
                f"--policy fcfs,wfp3,unicep,sjf,f1 --sem --versus f1 --model {model}"
            )
        if "lublin" in name:
            preset = "lublin-2" if "lublin-2" in name else "lublin-1"
            return (
                f"jaxsched trace generate lublin --preset {preset} --jobs 100000 --seed 20261128 "
                f"--out {preset}-test.swf\n"
                f"jaxsched evaluate {preset}-test.swf --sequences 200 --seed 47 {common}"
            )
        return f"jaxsched evaluate {shared} --split test --sequences 200 --seed 47 {common}"
    if system == "schedinspector":
        return f"jaxsched evaluate {shared} --model {model} --sequences 200 --seed 47"
    if system == "splitwindow":
        return (
            "jaxsched trace generate lublin --preset lublin-1 --jobs 100000 --seed 20261128 "
            "--out lublin-1-test.swf\n"
            f"jaxsched evaluate lublin-1-test.swf --model {model} --sequences 200 --seed 47"
        )
    if system == "dras":
        return f"jaxsched evaluate {shared} --model {model}"
    if system == "a2c":
        return "jaxsched evaluate ../shared/traces/LANL-CM5-1994-4.1-cln.swf.gz --model " + model
    return None


#: what a card says where no held-out figure exists, or how its evaluation differs
CARD_NOTES = {
    "schedinspector": (
        "`jaxsched evaluate --model` compares the inspector with its base on sequences drawn "
        "as the reference's test script draws them, over the whole trace; it does not restrict "
        "a SchedInspector model to the test split (`--split` is refused for this system). The "
        "held-out figure above was measured on the test split from a source checkout."
    ),
    "a2c": (
        "`jaxsched evaluate --model` tests a data-centre model on the test slices of an SWF "
        "trace with memory, beside SJF, Tetris and Random; it does not draw the generated "
        "jobsets of the held-out figure above, which was measured from a source checkout."
    ),
    "dras": (
        "`jaxsched evaluate --model` prints the model's test-period report beside FCFS + EASY "
        "and the paper's baselines, over the test period recorded with the run."
    ),
}

NO_HELD = {
    "dras-sdsc-dql": "not chosen on the load-matched validation month, so not tested held out",
    "dras-sdsc-pg": "a candidate on the load-matched validation month, not chosen, so not "
    "tested held out",
    "dras-lanl-dql-persistent": "not chosen on the validation month, so not tested held out",
}


def card_block(records, model: str) -> str:
    path = REPO / "jaxsched" / "models" / model
    run = json.loads((path / "run.json").read_text()) if (path / "run.json").exists() else {}
    mine = [r for r in records if r.get("model") == model and r["protocol"] != "speed"]
    held = [r for r in mine if r["protocol"] == "held-out"]
    ins = [r for r in mine if r["protocol"] == "in-sample"]
    lines = ["## Results", ""]
    if model.startswith("tuned-"):
        lines += [
            "A tuned priority is a baseline, not a learned scheduler: it has no held-out "
            "margin of its own. Held out, it is one of the baselines every learned model is "
            "compared with (the strongest one in several rows of RLScheduler's table on the "
            "documentation's Results page).",
        ]
        return "\n".join(lines)
    if held:
        lines += ["| protocol | sequences | figure | baseline |", "|---|---|---:|---|"]
        for r in held + ins:
            name = (
                "**held out**"
                if r["protocol"] == "held-out"
                else "in-sample (the paper's protocol)"
            )
            if r["system"] == "dras":
                fig = f"mean wait {r['wait_ratio']:.3f}×, max wait {r['max_wait_ratio']:.2f}× FCFS + EASY's; "
                fig += f"{num(r['diff'], 0, True)} ± {num(r['se'], 0)} s per month"
            elif r["system"] == "splitwindow":
                fig = f"wait {num(r['diff'], sign=True)} ± {num(r['se'])} s"
                fig += f", utilisation {num(r['util_change'], sign=True)} points"
            elif r["system"] == "schedinspector" and r.get("diff") is None:
                fig = f"{num(-r['pct'], 1)} % of the base's {r['metric']} removed"
            elif r["system"] == "a2cscheduler":
                fig = f"{num(r['diff'], 3, True)} ± {num(r['se'], 3)} slowdown"
            else:
                fig = pm(
                    r, 2, 2 if r["system"] == "rlscheduler" and r["protocol"] == "held-out" else 1
                )
                if r["system"] == "schedinspector" and r.get("util_change") is not None:
                    fig += f", utilisation {num(r['util_change'], 2, True)} points"
            lines.append(f"| {name} | {r['sequences']} | {fig} | {r['baseline']} |")
        lines += [
            "",
            "Paired difference model − baseline over the same sequences, mean ± standard "
            "error; negative = the model is better. Every model's figures: the documentation's "
            "Results page.",
        ]
    else:
        why = NO_HELD.get(model, "no held-out test was run for this model")
        lines += [
            f"No held-out figure: {why}. The figures further down are on the earlier test "
            "period (every month after validation month 2, months counted from 0)."
        ]
    cmd = _eval_command(model, run, held=bool(held))
    if cmd:
        lines += ["", "Evaluate it:", "", *("    " + c for c in cmd.split("\n"))]
        if run.get("system", "rlscheduler") == "rlscheduler" and held:
            lines += [
                "",
                "(held-out jobs; for the in-sample figure: `"
                + _eval_command(model, run, held=False)
                + "`)",
            ]
        note = CARD_NOTES.get(run.get("system", ""))
        if note:
            lines += ["", note]
    return "\n".join(lines)


# ---------------------------------------------------------------- pages


def render(name: str, records, page: Path) -> str:
    up = (
        "../" * (len(page.relative_to(REPO / "docs").parts) - 1)
        if "docs" in page.parts
        else "docs/"
    )
    kind, _, arg = name.partition(" ")
    if kind == "results-table":
        return TABLES[arg](records, up)
    if kind == "summary":
        return summary(records, up)
    if kind == "speed-summary":
        return speed_summary(records, up)
    if kind == "card":
        return card_block(records, arg)
    raise KeyError(f"{page}: unknown generated block {name!r}")


def pages() -> list[Path]:
    out = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    out += sorted((REPO / "docs" / "systems").glob("*.md"))
    out += sorted((REPO / "jaxsched" / "models").glob("*/README.md"))
    return out


def regenerate(text: str, page: Path, records) -> str:
    def sub(m):
        return f"<!-- generated: {m.group(1)} -->\n{render(m.group(1), records, page)}\n{END}"

    return BLOCK.sub(sub, text)


def stale(records=None) -> dict[str, str]:
    """Pages whose generated blocks differ from what this script writes: path -> new text."""
    records = load() if records is None else records
    out = {}
    for page in pages():
        text = page.read_text()
        new = regenerate(text, page, records)
        if new != text:
            out[str(page.relative_to(REPO))] = new
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a page is stale, write nothing")
    args = p.parse_args(argv)
    changed = stale()
    for path, text in changed.items():
        if args.check:
            print(f"stale: {path}")
        else:
            (REPO / path).write_text(text)
            print(f"wrote {path}")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
