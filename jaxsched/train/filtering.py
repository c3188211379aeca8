"""Compatibility alias: RLScheduler's trajectory filter moved to
:mod:`jaxsched.systems.rlscheduler.filtering`.  Kept only because
:meth:`jaxsched.envs.RLSchedulerEnv.sample_start` still imports ``sample_accepted_starts``
from here; delete it once that function lives in :mod:`jaxsched.envs`.

The names are resolved on first use (PEP 562), so importing :mod:`jaxsched.train` never pulls
in :mod:`jaxsched.systems`.
"""

import importlib


def __getattr__(name: str):
    module = importlib.import_module("jaxsched.systems.rlscheduler.filtering")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
