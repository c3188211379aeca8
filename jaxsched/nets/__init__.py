"""Neural networks of the learned schedulers (Flax linen, float32).

:mod:`jaxsched.nets.rlscheduler` holds RLScheduler's kernel policy and value networks, the
Table IV comparison policies, a name registry (:func:`make_policy`, :func:`make_value`) and
NaN-free masked-categorical helpers for PPO.
"""

from jaxsched.nets.rlscheduler import (  # noqa: F401
    JOB_FEATURES,
    LOGIT_BOUND,
    MASKED_LOGIT,
    MAX_QUEUE_SIZE,
    POLICY_NAMES,
    VALUE_NAMES,
    KernelPolicy,
    KernelValue,
    LeNetPolicy,
    MLPPolicy,
    MLPValue,
    __all__,  # noqa: F401
    action_log_prob,
    entropy,
    greedy_action,
    init_params,
    lenet_grid,
    make_policy,
    make_value,
    mask_logits,
    masked_log_probs,
    masked_probs,
    param_count,
    sample_action,
)
