"""Model choice from training runs' own validation logs (``jaxsched select RUN …``).

Every system's trainer logs its validation in ``log.jsonl`` (``--validate K``); choosing a model
is then a rule over those rows: the epoch whose validation value is best, optionally only among
the epochs that meet a bound (SchedInspector and the split window: utilisation lost; DRAS: the
maximum wait). A :class:`Rule` says which value and which bound; each system builds its own
rule (``System.selection_rule``), this module applies it to runs and reports. Nothing here
knows an environment; it reads logs only, so the choice never sees the test jobs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from jaxsched.errors import ConfigError
from jaxsched.train.checkpoint import checkpoint_path, list_checkpoints
from jaxsched.train.loop import LOG_FILE, epoch_rows

__all__ = ["Rule", "RunChoice", "choose", "select_runs", "format_selection"]


@dataclasses.dataclass(frozen=True)
class Rule:
    """How one system chooses an epoch from its validation rows.

    Attributes:
        key: the validation value in each log row (e.g. ``"val_bsld"``); rows without it were
            not validated and are skipped.
        higher_is_better: whether larger values of ``key`` are better.
        bound: ``row -> bool``, whether a validated row meets the system's bound (None: no
            bound; every validated row qualifies).
        bound_text: the bound in words, for the report (e.g. "within 1 point of the base's
            utilisation").
        describe: ``row -> str``, one row's validation in words.
        comparable: ``row -> float``, a value that must be equal across runs for the runs to be
            ranked against each other (the baseline on the same validation jobs); None: always.
    """

    key: str
    higher_is_better: bool = False
    bound: Callable[[dict], bool] | None = None
    bound_text: str = ""
    describe: Callable[[dict], str] | None = None
    comparable: Callable[[dict], float] | None = None

    def score(self, row: dict) -> float:
        """Lower is better."""
        v = float(row[self.key])
        return -v if self.higher_is_better else v

    def text(self, row: dict) -> str:
        if self.describe is not None:
            return self.describe(row)
        return f"epoch {row['epoch']}: {self.key} {row[self.key]:,.4g}"


@dataclasses.dataclass(frozen=True)
class RunChoice:
    """One run's choice: its validated rows, the best one, the best within the bound (None if
    no row meets it; the best itself when the rule has no bound), and the checkpoint file of
    that epoch if it was kept."""

    run: Path
    rows: list
    best: dict
    chosen: dict | None
    checkpoint: Path | None


def choose(rows: list, rule: Rule) -> tuple[dict, dict | None]:
    """``(best validated row, best validated row within the bound or None)``. ConfigError if no
    row was validated."""
    val = [r for r in rows if rule.key in r]
    if not val:
        raise ConfigError(f"no validated epoch (no {rule.key!r} in the log; train with --validate)")
    best = min(val, key=rule.score)
    ok = val if rule.bound is None else [r for r in val if rule.bound(r)]
    return best, (min(ok, key=rule.score) if ok else None)


def _checkpoint_of(run: Path, epoch: int) -> Path | None:
    """The kept checkpoint of ``epoch`` in ``run`` (None if it was not kept)."""
    path = checkpoint_path(run, epoch)
    return path if path in list_checkpoints(run) else None


def select_runs(runs, rule_of: Callable[[Path], Rule]) -> tuple[list[RunChoice], RunChoice | None]:
    """Each run's :class:`RunChoice` under its rule (``rule_of(run_dir)``), and the choice over
    all runs (the best chosen row; None when no run has one, or when the runs' validations are
    not comparable)."""
    choices, rules = [], {}
    for run in map(Path, runs):
        if not (run / LOG_FILE).is_file():
            raise ConfigError(f"{run}: no {LOG_FILE} (not a training run directory)")
        rule = rules[run] = rule_of(run)
        rows = epoch_rows(run)
        try:
            best, chosen = choose(rows, rule)
        except ConfigError as e:
            raise ConfigError(f"{run / LOG_FILE}: {e}") from None
        ck = _checkpoint_of(run, chosen["epoch"]) if chosen is not None else None
        choices.append(RunChoice(run, [r for r in rows if rule.key in r], best, chosen, ck))
    ok = [c for c in choices if c.chosen is not None]
    rule = rules[choices[0].run]
    if not ok or (
        rule.comparable is not None and len({round(rule.comparable(c.chosen), 9) for c in ok}) > 1
    ):
        return choices, None
    return choices, min(ok, key=lambda c: rule.score(c.chosen))


def format_selection(choices: list[RunChoice], top: RunChoice | None, rule: Rule) -> str:
    """The report of :func:`select_runs`: per run its best epoch, its choice within the bound
    and the checkpoint of that epoch; then the choice over the runs."""
    lines = []
    for c in choices:
        lines.append(f"{c.run}: {len(c.rows)} validated epoch(s)")
        lines.append(f"  best       {rule.text(c.best)}")
        if rule.bound is not None:
            lines.append(f"  {rule.bound_text}: " + (rule.text(c.chosen) if c.chosen else "none"))
        kept = c.checkpoint if c.checkpoint is not None else "not kept (--keep-checkpoints 0)"
        if c.chosen is not None:
            lines.append(f"  checkpoint {kept}")
    if len(choices) > 1 or top is None:
        if top is not None:
            lines.append(f"choice over {len(choices)} runs: {top.run} {rule.text(top.chosen)}")
        elif any(c.chosen for c in choices):
            lines.append("not ranked over runs: their validations differ (other baseline values)")
        else:
            lines.append(f"no validated epoch of any run {rule.bound_text or 'qualifies'}")
    return "\n".join(lines)
