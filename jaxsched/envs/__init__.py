"""Reinforcement-learning environments over the scheduling engine (pure JAX, jit/vmap-able).

Rooms:

* ``core.py``: the environment contract (:class:`Environment` hooks, :class:`TimeStep`,
  :class:`Observation`, FIRST/MID/LAST);
* ``wrappers.py``: :class:`AutoResetWrapper`, for any environment of the contract;
* ``testing.py``: :func:`~jaxsched.envs.testing.check_env_contract`, the checks every
  environment's tests run;
* ``starts.py``: sequence-start sampling (``sample_accepted_starts``, the trajectory filter's
  draw);
* ``rlscheduler.py``: RLScheduler's job-picking SchedGym environment :class:`RLSchedulerEnv`
  (decision protocol, reward); ``rlscheduler_features.py``: its observation rows, queue orders
  and visible-job cut-off;
* ``datacenter.py``: A2cScheduler's data-centre environment :class:`DataCenterEnv` (image
  state, N + 1 actions with the implicit void) over :mod:`jaxsched.sim.datacenter`;
* ``gym.py``: a Gymnasium adapter of :class:`RLSchedulerEnv` (optional dependency);
* ``specs.py``: the observation/action specs (``env.observation_spec()``, ``env.action_spec()``);
* ``interfaces/``: the gymnax-style, jumanji, Gymnasium and planner views of any environment.

The six environments: :class:`RLSchedulerEnv`, :class:`DataCenterEnv` (imported here) and
``SchedInspectorEnv``, ``DRASEnv``, ``DRASDQLEnv``, ``SplitWindowEnv`` (loaded on first use:
``from jaxsched.envs import SplitWindowEnv``). By name: :func:`jaxsched.make`.
"""

from jaxsched.envs.core import FIRST, LAST, MID, Environment, TimeStep
from jaxsched.envs.datacenter import DataCenterEnv
from jaxsched.envs.rlscheduler import EnvState, Observation, RLSchedulerEnv
from jaxsched.envs.rlscheduler_features import JOB_FEATURES, PAD_ROW
from jaxsched.envs.wrappers import AutoResetWrapper

__all__ = [
    "Environment",
    "RLSchedulerEnv",
    "DataCenterEnv",
    "AutoResetWrapper",
    "EnvState",
    "Observation",
    "TimeStep",
    "FIRST",
    "MID",
    "LAST",
    "JOB_FEATURES",
    "PAD_ROW",
    "SchedInspectorEnv",
    "DRASEnv",
    "DRASDQLEnv",
    "SplitWindowEnv",
]

_LAZY = {
    "SchedInspectorEnv": "jaxsched.envs.schedinspector",
    "DRASEnv": "jaxsched.envs.dras",
    "DRASDQLEnv": "jaxsched.envs.dras_dql",
    "SplitWindowEnv": "jaxsched.envs.splitwindow",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'jaxsched.envs' has no attribute {name!r}")
