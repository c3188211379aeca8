"""A2cScheduler (Liang et al., PAKDD 2020): a CNN actor and critic trained with n-step A2C on
the DeepRM-style data-centre cluster (:class:`jaxsched.envs.DataCenterEnv`).

* ``config.py`` — :class:`RunConfig` (``run.json``), the environment and networks of a run;
* ``run.py`` — the training driver on the generic host loop, :func:`load_model`;
* ``evaluate.py`` — the learned policy next to the baselines on fixed jobsets;
* ``cli.py`` — the ``jaxsched train a2c`` flags (``--evaluate-only`` for a trained run).

``jaxsched evaluate --model DIR`` replays SWF traces, which this system does not schedule: its
``model_rows`` says so in one line and names ``jaxsched train a2c --out DIR --evaluate-only``.
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
        f"{model.path}: an A2cScheduler data-centre model does not schedule SWF traces; "
        f"use: jaxsched train a2c --out DIR --evaluate-only"
    )


SYSTEM = System(
    name=SYSTEM_NAME,
    help=_cli.HELP,
    description=_cli.DESCRIPTION,
    add_train_arguments=_cli.add_train_arguments,
    train=_cli.train_from_args,
    load_model=_load_model,
    model_rows=_model_rows,
)
