"""Several DRAS models and the §8 baselines in one §10 table over a trace's test period (issue 17 §4).

    PYTHONPATH=. .venv/bin/python benchmarks/paper/dras_test_period.py --model NAME=DIR[:online] ...
        [--trace FILE] [--jobs K] [--period test|val] [--json FILE] [--plots DIR]

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
"""

from __future__ import annotations

import argparse
import json

from jaxsched import models as shipped
from jaxsched.systems.dras.evaluate import load_dras, test_schedules
from jaxsched.systems.dras.report import format_table, method_table


def parse_model(spec: str) -> tuple[str, str, bool | None]:
    """``NAME=DIR[:on|:off]`` → (name, path, online)."""
    name, _, rest = spec.partition("=")
    if not rest:
        raise SystemExit(f"--model {spec!r}: expected NAME=DIR[:on|:off]")
    path, _, flag = rest.rpartition(":") if rest.endswith((":on", ":off")) else (rest, "", "")
    online = {"on": True, "off": False, "": None}[flag]
    return name, path, online


def checks(table: dict, names) -> dict:
    """Per model: ``below`` (avg wait < FCFS + EASY's), ``max_ratio``, ``largest_area``."""
    f = table["fcfs"]
    top = max(t["kiviat_area"] for t in table.values())
    return {
        n: {
            "below": table[n]["avg_wait"] < f["avg_wait"],
            "max_ratio": table[n]["max_wait"] / f["max_wait"],
            "largest_area": table[n]["kiviat_area"] >= top,
        }
        for n in names
    }


def main(argv=None, out=print) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", required=True, help="NAME=DIR[:on|:off]")
    ap.add_argument("--trace", default=None)
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--period", choices=("test", "val"), default="test")
    ap.add_argument("--json", default=None)
    ap.add_argument("--plots", default=None, help="write Fig. 6/7/9 PNGs into this folder")
    a = ap.parse_args(argv)
    schedules, head, cj = {}, [], None
    for i, spec in enumerate(a.model):
        name, path, online = parse_model(spec)
        model = load_dras(shipped.resolve(path))
        base = ("fcfs", "binpacking", "random", "optimization") if i == 0 else ()
        sch, cj, info = test_schedules(model, a.trace, jobs=a.jobs or None, baselines=base,
                                       online=online, period=a.period)  # fmt: skip
        schedules[name] = sch.pop(f"dras-{model.run.variant}")
        schedules.update(sch)
        learn = "fixed" if info["updates"] is None else f"online, {info['updates']} updates"
        head.append(f"{name}: {model.path} (DRAS-{model.run.variant.upper()}, epoch {model.epoch}, "
                    f"{learn}; {info['seconds']:.1f} s)")  # fmt: skip
    order = [n for n in schedules if n not in ("fcfs", "binpacking", "random", "optimization")]
    order += ["fcfs", "binpacking", "random", "optimization"]
    table = method_table({n: schedules[n] for n in order}, N=cj.num_nodes)
    out(
        f"{'test period' if a.period == 'test' else 'validation month'}: {len(cj.submit)} jobs, "
        f"N = {cj.num_nodes}"
    )
    for h in head:
        out("  " + h)
    out(format_table(table))
    f = table["fcfs"]
    for n, t in table.items():
        out(f"{n:<22} avg wait {t['avg_wait']:10.1f} s ({t['avg_wait'] / f['avg_wait']:.3f}x)  "
            f"max wait {t['max_wait']:10.0f} s ({t['max_wait'] / f['max_wait']:.2f}x)  "
            f"area {t['kiviat_area']:.3f}")  # fmt: skip
    c = checks(table, order[: len(a.model)])
    for n, v in c.items():
        out(f"{n}: average wait below FCFS + EASY's: {'yes' if v['below'] else 'no'}; maximum "
            f"wait {v['max_ratio']:.2f}x FCFS + EASY's (target <= 1.5): "
            f"{'yes' if v['max_ratio'] <= 1.5 else 'no'}; largest Kiviat area: "
            f"{'yes' if v['largest_area'] else 'no'}")  # fmt: skip
    if a.plots:
        from pathlib import Path

        from jaxsched.systems.dras import plot

        d = Path(a.plots)
        d.mkdir(parents=True, exist_ok=True)
        sch = {n: schedules[n] for n in order}
        for f in (plot.plot_kiviat(table, d / "kiviat.png"),
                  plot.plot_wait_vs_size(sch, d / "wait_vs_size.png"),
                  plot.plot_weekly(sch, d / "weekly.png")):  # fmt: skip
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


if __name__ == "__main__":
    main()
