"""DRAS (Fan et al., IPDPS'21; spec ``dras.md``): a two-level policy (start / reserve, then
back-fill) on CQSim semantics, trained with policy gradient (DRAS-PG) or as a value network
with ε-greedy decisions (DRAS-DQL).

* ``config.py`` — :class:`RunConfig` (``run.json``), CQSim loading, the §9 split, the
  curriculum jobsets of an epoch.
* ``trainer.py`` — the compiled epoch: E jobsets vmapped, batches of 10 scheduling instances,
  PG updates (averaged or sequential); the greedy/sampled rollout, with online adaptation.
* ``trainer_dql.py`` — the same for DRAS-DQL (ε-greedy, per-decision value updates).
* ``run.py`` — the training driver on the generic host loop.
* ``evaluate.py`` — loading a model, the test period as one continuous simulation beside the
  §8 baselines, rows for ``jaxsched evaluate --model``.
* ``cli.py`` — ``jaxsched train dras`` flags; ``python -m jaxsched.systems.dras [TRACE]
  --model DIR`` (the §10 report; also ``jaxsched evaluate TRACE --model DIR``, the
  ``report`` hook; several ``--model``: one table of them all, the ``report_many`` hook).
* ``report.py`` — the evaluation table (§10–§11: metrics, Kiviat area, Table IV shares).
* ``plot.py`` — the evaluation figures (Kiviat, wait vs size, weekly) and the training curve
  (``jaxsched plot DIR``).
"""

from __future__ import annotations

from jaxsched.systems import System
from jaxsched.systems.dras import cli as _cli
from jaxsched.systems.dras.config import SYSTEM_NAME


def _load_model(path):
    from jaxsched.systems.dras.evaluate import load_dras

    return load_dras(path)


def _model_rows(model, jobs, starts, length, backfills, metrics, compat, *, sample=False,
                name="dras", **kw):  # fmt: skip
    from jaxsched.systems.dras.evaluate import model_rows

    return model_rows(model, jobs, starts, length, backfills, metrics, compat, sample=sample,
                      name=name)  # fmt: skip


def _plot(out, path=None):
    from jaxsched.systems.dras.plot import plot_training

    return plot_training(out, path)


def _report(model, trace, *, sample=False, jobs=None, online=None, **kw):
    from jaxsched.systems.dras.evaluate import test_report

    return test_report(model, trace, sample=sample, jobs=jobs, online=online)


def _report_many(models, trace, *, sample=False, jobs=None, **kw):
    """``jaxsched evaluate TRACE --model A --model B ...``: one §10 table of all of them."""
    from jaxsched.systems.dras.evaluate import format_test_period, test_period_table

    return format_test_period(test_period_table(models, trace, jobs=jobs, sample=sample))


def _selection_rule(run_dir, options):
    from jaxsched.systems.dras.evaluate import selection_rule

    return selection_rule(run_dir, options)


SYSTEM = System(
    name=SYSTEM_NAME,
    help=_cli.HELP,
    description=_cli.DESCRIPTION,
    add_train_arguments=_cli.add_train_arguments,
    train=_cli.train_from_args,
    resume_settings=_cli.RESUME_SETTINGS,
    load_model=_load_model,
    model_rows=_model_rows,
    report=_report,
    report_many=_report_many,
    plot=_plot,
    selection_rule=_selection_rule,
)
