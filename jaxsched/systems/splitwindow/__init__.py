"""Split-window deep back-filling (Wang, Harwood, Rodriguez, HPCC 2022): an MLP actor-critic
trained with minibatched PPO on :class:`jaxsched.envs.splitwindow.SplitWindowEnv`.

* ``run.py`` — run configuration, training driver, greedy evaluation, model loading;
* ``cli.py`` — the ``jaxsched train splitwindow`` flags.

The heuristic baselines are :mod:`jaxsched.envs.splitwindow_baselines`. ``jaxsched evaluate
--model`` (RLScheduler's sequence protocol) does not apply to this system: its models are
evaluated on split-window episodes with :func:`jaxsched.systems.splitwindow.run.greedy_metrics`.
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
        "splitwindow models run on split-window episodes, not on RLScheduler's job sequences; "
        "use jaxsched.systems.splitwindow.run.greedy_metrics"
    )


def _plot(out, path=None):
    from jaxsched.systems.splitwindow.plot import plot

    return plot(out, path)


SYSTEM = System(
    name="splitwindow",
    help=_cli.HELP,
    description=_cli.DESCRIPTION,
    add_train_arguments=_cli.add_train_arguments,
    train=_cli.train_from_args,
    load_model=_load_model,
    model_rows=_model_rows,
    plot=_plot,
)
