"""RLScheduler (Zhang et al., SC'20): the kernel policy network trained with PPO on the
pick-a-job environment.

* ``config.py`` — :class:`RunConfig` (``run.json``), the run's environment, slot-prefix options.
* ``run.py`` — the training driver :func:`~jaxsched.systems.rlscheduler.run.train` on the
  generic host loop.
* ``evaluate.py`` — :func:`load_policy`, :func:`policy_metric`, :func:`model_rows`,
  :func:`schedule` (``jaxsched simulate --model``).
* ``filtering.py`` — the trajectory filter of spec §7 (it still holds
  ``sample_accepted_starts``, which the environment uses; it is to move to
  :mod:`jaxsched.envs`).
* ``rescore.py`` — ``jaxsched select --rescore N``: every kept checkpoint scored on
  validation sequences, and the choice.
* ``sweep.py`` — ``--seeds``: a sweep over seeds as one vmapped update, ``DIR/seed-<s>``.
* ``cli.py`` — the ``jaxsched train rlscheduler`` flags.
* ``plot.py`` — the training curve.

``SYSTEM`` is this package's entry in :mod:`jaxsched.systems`; the heavy modules are imported
when a command needs them.
"""

from __future__ import annotations

from jaxsched.systems import System
from jaxsched.systems.rlscheduler import cli as _cli
from jaxsched.systems.rlscheduler.config import SYSTEM_NAME


def _load_model(path):
    from jaxsched.systems.rlscheduler.evaluate import load_policy

    return load_policy(path)


def _model_rows(*args, **kwargs):
    from jaxsched.systems.rlscheduler.evaluate import model_rows

    return model_rows(*args, **kwargs)


def _schedule(*args, **kwargs):
    from jaxsched.systems.rlscheduler.evaluate import schedule

    return schedule(*args, **kwargs)


def _plot(out, path=None):
    from jaxsched.systems.rlscheduler.plot import plot

    return plot(out, path)


def _selection_rule(run_dir, options):
    from jaxsched.systems.rlscheduler.evaluate import selection_rule

    return selection_rule(run_dir, options)


def _rescore(runs, val_sequences, **options):
    from jaxsched.systems.rlscheduler.rescore import format_rescore, rescore

    doc = rescore(runs, val_sequences, **options)
    return doc, format_rescore(doc)


SYSTEM = System(
    name=SYSTEM_NAME,
    help=_cli.HELP,
    description=_cli.DESCRIPTION,
    add_train_arguments=_cli.add_train_arguments,
    train=_cli.train_from_args,
    resume_settings=_cli.RESUME_SETTINGS,
    load_model=_load_model,
    model_rows=_model_rows,
    plot=_plot,
    schedule=_schedule,
    selection_rule=_selection_rule,
    rescore=_rescore,
)
