"""The DRAS evaluation table (spec ``dras.md`` §10–§11): one row per method with the §10
metrics, the Kiviat area (Fig. 6) and the job-class shares (Table IV), the paper's Table IV
beside it.

Entry points for the lead / ``jaxsched evaluate``: :func:`method_table` (schedules -> metrics),
:func:`format_table` (metrics -> text) and :func:`report` (both).  A *schedule* is a mapping
with int sequences ``submit``, ``run``, ``nodes``, ``start`` and ``cls`` (the CQSim oracle's
classes; see :mod:`jaxsched.sim.dras_metrics`).
"""

from __future__ import annotations

from jaxsched.errors import ConfigError
from jaxsched.sim.dras_metrics import evaluate_schedule, kiviat, kiviat_area

__all__ = ["PAPER_TABLE_IV", "paper_row", "method_table", "format_table", "report"]

#: Table IV of the paper (Theta): % of jobs / % of core-hours for backfilled, ready, reserved.
#: DRAS-DQL's job shares sum to 106.84 % in the paper (a misprint, spec §11).
PAPER_TABLE_IV = {
    "optimization": (0.0, 0.0, 100.0, 100.0, 0.0, 0.0),
    "decima-pg": (0.0, 0.0, 100.0, 100.0, 0.0, 0.0),
    "binpacking": (0.0, 0.0, 100.0, 100.0, 0.0, 0.0),
    "random": (0.0, 0.0, 100.0, 100.0, 0.0, 0.0),
    "fcfs": (79.25, 30.45, 9.88, 16.99, 10.87, 52.56),
    "dras-pg": (83.76, 33.67, 8.63, 11.29, 7.61, 55.04),
    "dras-dql": (84.83, 34.17, 6.84, 10.91, 15.17, 54.92),
}
_ALIASES = {"fcfs+easy": "fcfs", "fcfs-easy": "fcfs", "decima": "decima-pg"}


def paper_row(method: str):
    """The paper's Table IV row of ``method`` (case-insensitive, a few aliases) or None."""
    key = method.lower()
    return PAPER_TABLE_IV.get(_ALIASES.get(key, key))


def method_table(schedules: dict, *, N: int) -> dict:
    """``{method: metrics}``: :func:`~jaxsched.sim.dras_metrics.evaluate_schedule` of each
    schedule plus ``kiviat`` (its normalised radii across these methods) and ``kiviat_area``."""
    if not schedules:
        raise ConfigError("no schedules to report")
    table = {}
    for name, sch in schedules.items():
        table[name] = evaluate_schedule(sch["submit"], sch["run"], sch["nodes"], sch["start"],
                                        sch.get("cls"), N=N)  # fmt: skip
    radii = kiviat(table)
    for name in table:
        table[name]["kiviat"] = radii[name]
        table[name]["kiviat_area"] = kiviat_area(radii[name])
    return table


def _pct(row: dict, key: str) -> str:
    return f"{100 * row[key]:6.2f}" if key in row else "     -"


def format_table(table: dict) -> str:
    """The table as text: times in hours, shares in %, the paper's Table IV on the right."""
    head = (f"{'method':<14}{'avg wait h':>11}{'max wait h':>11}{'avg resp h':>11}"
            f"{'avg sld':>9}{'util':>7}{'area':>7} | {'jobs% bf/ready/res':>21}"
            f" | {'core-h% bf/ready/res':>21} || paper jobs% / core-h%")  # fmt: skip
    lines = [head, "-" * len(head)]
    for name, r in table.items():
        jobs = " ".join(_pct(r, f"{c}_jobs") for c in ("backfilled", "ready", "reserved"))
        core = " ".join(_pct(r, f"{c}_core_hours") for c in ("backfilled", "ready", "reserved"))
        p = paper_row(name)
        paper = "-" if p is None else f"{p[0]:.2f}/{p[2]:.2f}/{p[4]:.2f} / {p[1]:.2f}/{p[3]:.2f}/{p[5]:.2f}"  # fmt: skip
        lines.append(
            f"{name:<14}{r['avg_wait'] / 3600:>11.2f}{r['max_wait'] / 3600:>11.2f}"
            f"{r['avg_response'] / 3600:>11.2f}{r['avg_slowdown']:>9.2f}{r['util']:>7.3f}"
            f"{r.get('kiviat_area', float('nan')):>7.3f} | {jobs} | {core} || {paper}"
        )
    lines.append("Kiviat axes (1 = best): 1/avg wait, 1/max wait, 1/avg slowdown, 1/avg response, "
                 "utilisation; area max 2.378")  # fmt: skip
    return "\n".join(lines)


def report(schedules: dict, *, N: int) -> str:
    """:func:`format_table` of :func:`method_table`."""
    return format_table(method_table(schedules, N=N))
