"""A2cScheduler (Liang et al., PAKDD 2020): a CNN actor and critic trained with n-step A2C on
the DeepRM-style data-centre cluster (:class:`jaxsched.envs.DataCenterEnv`).

* ``config.py`` — :class:`RunConfig` (``run.json``), the environment and networks of a run;
* ``run.py`` — the training driver on the generic host loop, :func:`load_model`;
* ``evaluate.py`` — the learned policy next to the baselines on fixed jobsets;
* ``cli.py`` — the ``jaxsched train a2c`` flags (``--evaluate-only`` for a trained run);
* ``plot.py`` — the training curve (``jaxsched plot DIR``).

``jaxsched evaluate TRACE --model DIR`` (the ``report`` hook) tests the model on the test
slices of an SWF trace with memory (:func:`~jaxsched.systems.a2cscheduler.evaluate.trace_report`)
next to the baselines. It does not schedule SWF sequences of the heuristics table, so
``model_rows`` (``--json``, ``--table``) says so in one line.
"""

from __future__ import annotations

from jaxsched.errors import ConfigError
from jaxsched.systems import System
from jaxsched.systems.a2cscheduler import cli as _cli
from jaxsched.systems.a2cscheduler.config import SYSTEM_NAME


def _load_model(path):
    from jaxsched.systems.a2cscheduler.run import load_model

    return load_model(path)


def _model_rows(model, *args, **kwargs):
    raise ConfigError(
        f"{model.path}: an A2cScheduler data-centre model has no rows of the heuristics table "
        f"(--json, --table); without them, jaxsched evaluate TRACE --model DIR tests it on the "
        f"trace's slices, jaxsched train a2c --out DIR --evaluate-only on generated jobsets"
    )


def _plot(out, path=None):
    from jaxsched.systems.a2cscheduler.plot import plot

    return plot(out, path)


def _report(model, trace, *, sample=False, **kw):
    from jaxsched.systems.a2cscheduler.evaluate import trace_report

    return trace_report(model, trace, sample=sample)


def _selection_rule(run_dir, options):
    from jaxsched.systems.a2cscheduler.evaluate import selection_rule

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
    plot=_plot,
    selection_rule=_selection_rule,
)
