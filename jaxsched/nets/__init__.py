"""Neural networks of the learned schedulers (Flax linen, float32).

* :mod:`jaxsched.nets.categorical` — the masked categorical distribution over queue slots (the
  masked-logit constant, masking, log-probabilities, entropy, the Gumbel-max sampler, greedy
  picks), shared by the networks and the trainers.
* :mod:`jaxsched.nets.rlscheduler` — RLScheduler's kernel policy and value networks, the
  Table IV comparison policies and a name registry (:func:`make_policy`, :func:`make_value`).
* :mod:`jaxsched.nets.dras` — DRAS's PG and DQL networks (1 x 2 shared convolution, bias-free
  FC layers) and its masking by truncation (imported on demand, not re-exported here).
"""

from jaxsched.nets.categorical import *  # noqa: F403  (the whole distribution API)
from jaxsched.nets.categorical import __all__ as _categorical_names
from jaxsched.nets.rlscheduler import (  # noqa: F401
    MAX_QUEUE_SIZE,
    POLICY_NAMES,
    VALUE_NAMES,
    Conv1x1,
    KernelPolicy,
    KernelValue,
    LeNetPolicy,
    MLPPolicy,
    MLPValue,
    ResidualKernelPolicy,
    init_params,
    lenet_grid,
    make_policy,
    make_value,
    max_pool_2x2,
    param_count,
)
from jaxsched.nets.rlscheduler import __all__ as _rlscheduler_names

__all__ = [*_categorical_names, *_rlscheduler_names]


def __getattr__(name: str):
    # JOB_FEATURES is the observation's (jaxsched.envs.rlscheduler), looked up on first use:
    # importing the environment turns on JAX's 64-bit mode
    if name == "JOB_FEATURES":
        from jaxsched.envs.rlscheduler_features import JOB_FEATURES

        return JOB_FEATURES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
