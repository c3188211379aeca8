"""Algorithm-generic training machinery (nothing here imports :mod:`jaxsched.envs`,
:mod:`jaxsched.sim` or :mod:`jaxsched.systems`; the systems compose it).

* :mod:`jaxsched.train.rollout` — rollouts over an auto-resetting env with the valid-step mask,
  :class:`Transition`, episode summaries, the environment interface.
* :mod:`jaxsched.train.returns` — GAE, discounted reward-to-go, n-step TD and Q-learning targets.
* :mod:`jaxsched.train.losses` — PPO clipped loss, value loss, REINFORCE, actor-critic, Q
  regression, masked means.
* :mod:`jaxsched.train.optim` — Adam with an exact linear decay, RMSProp.
* :mod:`jaxsched.train.kl_stop` — the KL early-stopped policy loop.
* :mod:`jaxsched.train.prefix` — slot-prefix bucketing of per-slot networks.
* :mod:`jaxsched.train.ppo` — :class:`PPOConfig`, :func:`make_train` (``init`` / ``update`` as
  pure jit-compiled functions, vmappable over seeds).
* :mod:`jaxsched.train.loop` — the host loop of every system (epochs, ``log.jsonl``,
  validation, best/last checkpoints, resume, progress) and :func:`fit`.
* :mod:`jaxsched.train.checkpoint` — atomic, verified checkpoints (msgpack + JSON header).
* :mod:`jaxsched.train.a2c` — n-step advantage actor-critic; :mod:`jaxsched.train.mc_pg` —
  DeepRM's Monte-Carlo policy gradient with a per-step baseline over trajectories of the same
  episode start (both imported on demand).
* :mod:`jaxsched.train.sweep` — sweeps over seeds: stacked train states, one vmapped update
  per epoch, a run directory per seed (:class:`~jaxsched.train.sweep.SeedSweep`).

The masked categorical distribution the trainers sample from is
:mod:`jaxsched.nets.categorical`.
"""

from jaxsched.nets.categorical import MASKED_LOGIT  # noqa: F401
from jaxsched.train.checkpoint import (  # noqa: F401
    Checkpoint,
    checkpoint_path,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from jaxsched.train.kl_stop import kl_early_stop_loop  # noqa: F401
from jaxsched.train.loop import fit  # noqa: F401
from jaxsched.train.losses import masked_mean  # noqa: F401
from jaxsched.train.ppo import EpisodeFilter, PPOConfig, PPOTrainer, TrainState, make_train  # noqa: F401
from jaxsched.train.prefix import SlotPrefix  # noqa: F401
from jaxsched.train.returns import gae_advantages  # noqa: F401
from jaxsched.train.rollout import (  # noqa: F401
    NetInput,
    Transition,
    default_done_fn,
    default_obs_fn,
    episode_summaries,
    valid_step_mask,
)

__all__ = [
    "Checkpoint",
    "checkpoint_path",
    "latest_checkpoint",
    "list_checkpoints",
    "load_checkpoint",
    "save_checkpoint",
    "MASKED_LOGIT",
    "NetInput",
    "EpisodeFilter",
    "PPOConfig",
    "PPOTrainer",
    "SlotPrefix",
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
