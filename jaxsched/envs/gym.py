"""A Gymnasium-compatible single-environment wrapper of :class:`RLSchedulerEnv`.

Gymnasium is an optional dependency (``pip install gymnasium``); importing this module without
it raises an ``ImportError`` that says so. Nothing else in jaxsched imports this module.

::

    from jaxsched.envs.gym import RLSchedulerGymEnv
    env = RLSchedulerGymEnv(jobs, length=256, backfill="rlscheduler")
    obs, info = env.reset(seed=0)              # the reference's sequence for seed 0
    obs, reward, terminated, truncated, info = env.step(int(obs["mask"].argmax()))

Observations are ``{"obs": float32 [max_queue, 8], "mask": int8 [max_queue]}`` (9 features
with ``user_feature=True``); the mask is also in ``info["action_mask"]``. The action is an
observation slot (``Discrete(max_queue)``).
``terminated`` is True at the end of the sequence (reward = −metric, or +utilisation), never
``truncated``. ``info`` has ``metric`` (the sequence's value once terminated), ``start`` and
``decisions``.

Sequence starts: ``reset(options={"start": i})`` plays jobs ``i .. i+length-1``. Otherwise the
start is drawn exactly as the reference's ``HPCEnv.reset`` does (spec §2.2): from a
``RandomState`` seeded the way legacy gym's ``seeding.np_random(seed)`` does
(:func:`jaxsched.workload.gym_np_random`), ``start = R.randint(length, U - length - 1)``; the
generator is re-seeded when ``reset`` gets a ``seed`` and otherwise continues, so
``reset(seed=s)`` followed by plain ``reset()`` calls replays the reference's sequence stream for
``env.seed(s)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "jaxsched.envs.gym needs the optional dependency gymnasium (pip install gymnasium)"
    ) from exc

from jaxsched.envs.rlscheduler import RLSchedulerEnv, jit_reset_at, jit_step
from jaxsched.workload.sampling import gym_np_random

__all__ = ["RLSchedulerGymEnv"]


class RLSchedulerGymEnv(gymnasium.Env):
    """Gymnasium view of one :class:`RLSchedulerEnv` (host loop, compiled steps).

    Args:
      jobs: a :class:`jaxsched.workload.swf.Jobs`, or an existing :class:`RLSchedulerEnv`
        (then ``kwargs`` must be empty).
      kwargs: :class:`RLSchedulerEnv` arguments (``length``, ``backfill``, ``compat``,
        ``metric``, ``max_queue``, ``cutoff``, ``job_slice``).
    """

    metadata = {"render_modes": []}

    def __init__(self, jobs, **kwargs):
        if isinstance(jobs, RLSchedulerEnv):
            if kwargs:
                raise TypeError("pass either an RLSchedulerEnv or Jobs with keyword arguments")
            self.env = jobs
        else:
            self.env = RLSchedulerEnv(jobs, **kwargs)
        mq = self.env.max_queue
        self.observation_space = spaces.Dict(
            {
                "obs": spaces.Box(low=-1.0, high=1.0, shape=self.env.obs_shape, dtype=np.float32),
                "mask": spaces.MultiBinary(mq),
            }
        )
        self.action_space = spaces.Discrete(mq)
        self._state = None
        self._rng: np.random.RandomState | None = None
        self._done = True
        self._mask: np.ndarray | None = None

    # ------------------------------------------------------------------------------------------
    def _convert(self, ts):
        obs = {
            "obs": np.asarray(ts.observation.obs),
            "mask": np.asarray(ts.observation.mask).astype(np.int8),
        }
        self._mask = np.asarray(ts.observation.mask)
        info = {
            "action_mask": self._mask,
            "metric": float(ts.extras["metric"]),
            "start": int(ts.extras["start"]),
            "decisions": int(ts.extras["decisions"]),
        }
        return obs, info

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = options or {}
        if "start" in options:
            start = int(options["start"])
        else:
            if seed is not None or self._rng is None:
                if seed is None:
                    seed = int(np.random.SeedSequence().entropy % (2**32))
                self._rng = gym_np_random(seed)
            low, high = self.env.start_range
            if high <= low:
                raise ValueError(
                    f"cannot sample sequences of {self.env.length} jobs from this "
                    f"trace; pass options={{'start': i}}"
                )
            start = int(self._rng.randint(low, high))
        self._state, ts = jit_reset_at(self.env, start)
        self._done = False
        return self._convert(ts)

    def step(self, action: Any):
        if self._state is None or self._done:
            raise RuntimeError("call reset() before step() (the episode is over)")
        self._state, ts = jit_step(self.env, self._state, int(action))
        obs, info = self._convert(ts)
        terminated, truncated = bool(ts.terminated), bool(ts.truncated)
        self._done = terminated or truncated
        return obs, float(ts.reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The current action mask (the name sb3-contrib's MaskablePPO looks for)."""
        if self._mask is None:
            raise RuntimeError("call reset() first")
        return self._mask
