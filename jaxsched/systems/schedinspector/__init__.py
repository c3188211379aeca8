"""SchedInspector (Zhang, Dai, Xie, HPDC'22): an RL inspector that accepts or rejects a base
scheduler's proposed job, trained with PPO.

* ``config.py`` — :class:`RunConfig` (``run.json``), environments, PPO settings.
* ``run.py`` — the training driver on the generic host loop.
* ``evaluate.py`` — loading a model; base alone vs base + inspector, paired difference ±
  s.e., rejection ratio; rows for ``jaxsched evaluate --model``.
* ``plot.py`` — the training curve (``jaxsched plot DIR``).
* ``cli.py`` — ``jaxsched train schedinspector`` flags; ``python -m
  jaxsched.systems.schedinspector TRACE --model DIR`` (the comparison table).
"""

from __future__ import annotations

from jaxsched.systems import System
from jaxsched.systems.schedinspector import cli as _cli
from jaxsched.systems.schedinspector.config import SYSTEM_NAME


def _load_model(path):
    from jaxsched.systems.schedinspector.evaluate import load_inspector

    return load_inspector(path)


def _model_rows(
    model, jobs, starts, length, backfills, metrics, compat, *, sample=False, name="inspector", **kw
):
    """The inspected values (rows of :class:`jaxsched.sim.evaluate.EvalResult`) of the model on
    ``starts`` (indices of SchedInspector's own job list of ``jobs.path``, which keeps every
    job), one run per backfill mode; metrics outside bsld/wait/util/mbsld are skipped."""
    import dataclasses

    from jaxsched.envs.schedinspector import BACKFILLS
    from jaxsched.systems.schedinspector.evaluate import compare

    rows = []
    for bf in backfills:
        if bf not in BACKFILLS:
            continue
        m = dataclasses.replace(model, run=dataclasses.replace(model.run, backfill=bf))
        res = compare(m, starts, length, trace=jobs.path or model.run.trace, sample=sample)
        for k, s in enumerate(res["starts"]):
            for metric in metrics:
                if metric in res["inspected"]:
                    v = float(res["inspected"][metric][k])
                    rows.append(
                        {
                            "start": s,
                            "jobs": length,
                            "policy": name,
                            "backfill": bf,
                            "metric": metric,
                            "value": v,
                        }
                    )
    return rows


def _plot(out, path=None):
    from jaxsched.systems.schedinspector.plot import plot

    return plot(out, path)


def _compare(model, trace, **kw):
    from jaxsched.systems.schedinspector.evaluate import evaluate_model

    return evaluate_model(model, trace, **kw)


def _selection_rule(run_dir, options):
    from jaxsched.systems.schedinspector.evaluate import selection_rule

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
    compare=_compare,
    plot=_plot,
    selection_rule=_selection_rule,
)
