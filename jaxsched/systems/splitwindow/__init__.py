"""Split-window deep back-filling (Wang, Harwood, Rodriguez, HPCC 2022): an MLP actor-critic
trained with minibatched PPO on :class:`jaxsched.envs.splitwindow.SplitWindowEnv`.

* ``config.py`` — the run configuration (``run.json``), the environment, PPO settings;
* ``run.py`` — the training driver, model loading and export;
* ``evaluate.py`` — greedy evaluation on fixed episodes and the model beside the heuristics;
* ``cli.py`` — the ``jaxsched train splitwindow`` flags;
* ``plot.py`` — the training curve.

The heuristic baselines are :mod:`jaxsched.envs.splitwindow_baselines`. ``jaxsched evaluate
TRACE --model NAME`` prints the model beside FCFS and SJF with EASY back-filling on episodes of
TRACE (:func:`jaxsched.systems.splitwindow.evaluate.report`); RLScheduler's sequence rows
(``--json``, ``--table``) do not apply to this system.
"""

from __future__ import annotations

from jaxsched.errors import ConfigError
from jaxsched.systems import System
from jaxsched.systems.splitwindow import cli as _cli


def _load_model(path):
    from jaxsched.systems.splitwindow.run import load_model

    return load_model(path)


def _model_rows(*args, **kwargs):
    raise ConfigError(
        "splitwindow models run on split-window episodes, not on RLScheduler's job sequences "
        "(--json, --table); without them, jaxsched evaluate TRACE --model NAME prints the model "
        "beside the back-filling heuristics on episodes of TRACE"
    )


def _report(model, trace, *, sample=False, sequences=None, seeds=None, **kw):
    """``jaxsched evaluate TRACE --model NAME [--sequences K] [--seed S,...]``: K episodes
    (default 20) drawn with each seed S (default 1)."""
    from jaxsched.systems.splitwindow.evaluate import report

    kw = {} if sequences is None else {"episodes": sequences}
    return "\n".join(
        report(model, trace, sample=sample, seed=seed, **kw) for seed in (seeds or [1])
    )


def _plot(out, path=None):
    from jaxsched.systems.splitwindow.plot import plot

    return plot(out, path)


def _selection_rule(run_dir, options):
    from jaxsched.systems.splitwindow.evaluate import selection_rule

    return selection_rule(run_dir, options)


SYSTEM = System(
    name="splitwindow",
    help=_cli.HELP,
    description=_cli.DESCRIPTION,
    add_train_arguments=_cli.add_train_arguments,
    train=_cli.train_from_args,
    resume_settings=_cli.RESUME_SETTINGS,
    load_model=_load_model,
    model_rows=_model_rows,
    plot=_plot,
    report=_report,
    selection_rule=_selection_rule,
)
