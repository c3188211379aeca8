"""Training of learned schedulers: a compiled PPO trainer, trajectory filtering, checkpoints.

* :mod:`jaxsched.train.ppo` — :class:`PPOConfig` (RLScheduler's hyper-parameters),
  :func:`make_train` (``init`` / ``update`` as pure jit-compiled functions, vmappable over seeds),
  :func:`gae_advantages`, the host loop :func:`fit`.
* :mod:`jaxsched.train.filtering` — the trajectory filter of spec §7 (paper and reference rules,
  two phases).
* :mod:`jaxsched.train.checkpoint` — atomic, verified checkpoints (msgpack + JSON header).
"""

from jaxsched.train.checkpoint import (  # noqa: F401
    Checkpoint,
    checkpoint_path,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from jaxsched.train.filtering import (  # noqa: F401
    REFERENCE_BOUNDS,
    TrajectoryFilter,
    in_range,
    make_filter,
    paper_bounds,
    sample_accepted_starts,
    sjf_by_start,
    start_acceptance,
)
from jaxsched.train.ppo import (  # noqa: F401
    MASKED_LOGIT,
    NetInput,
    PPOConfig,
    PPOTrainer,
    TrainState,
    Transition,
    default_done_fn,
    default_obs_fn,
    episode_summaries,
    fit,
    gae_advantages,
    kl_early_stop_loop,
    make_train,
    masked_mean,
    valid_step_mask,
)

__all__ = [
    "Checkpoint",
    "checkpoint_path",
    "latest_checkpoint",
    "list_checkpoints",
    "load_checkpoint",
    "save_checkpoint",
    "REFERENCE_BOUNDS",
    "TrajectoryFilter",
    "in_range",
    "paper_bounds",
    "sample_accepted_starts",
    "start_acceptance",
    "MASKED_LOGIT",
    "NetInput",
    "PPOConfig",
    "PPOTrainer",
    "TrainState",
    "Transition",
    "default_done_fn",
    "default_obs_fn",
    "episode_summaries",
    "fit",
    "gae_advantages",
    "kl_early_stop_loop",
    "make_train",
    "masked_mean",
    "valid_step_mask",
]
