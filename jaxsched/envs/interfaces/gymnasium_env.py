"""Gymnasium views of every jaxsched environment (gymnasium is optional:
``pip install "jaxsched[gym]"``); :func:`jaxsched.registry.register_gymnasium` registers
every named environment with ``gymnasium.register``.

::

    import gymnasium, jaxsched.registry

    jaxsched.registry.register_gymnasium()             # ids "jaxsched/<system>-<setting>-v0"
    env = gymnasium.make("jaxsched/rlscheduler-lublin-1-bf-v0", length=64, max_queue=16)
    env = GymnasiumEnv(jaxsched.make("dras/lublin-1"))  # or any environment
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))

One compiled ``reset``/``step`` per environment configuration, run from the host loop.
Observations are ``{"obs": float32 [obs_dim], "mask": int8 [num_actions]}`` (``obs``: every
observation field but the mask, flattened, :func:`jaxsched.envs.interfaces.gymnax_env.flat_obs`);
the mask is also ``info["action_mask"]`` (bool) and :meth:`GymnasiumEnv.action_masks` (the name
sb3-contrib's MaskablePPO reads). ``reset(seed=s)`` draws the episode from ``PRNGKey(s)``
(the environment's own sampler; a plain ``reset()`` goes on with the next key), and
``options={"start": i}`` plays the episode ``i``. RLScheduler's reference-exact sequence stream
is :class:`jaxsched.envs.gym.RLSchedulerGymEnv`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "jaxsched.envs.interfaces.gymnasium_env needs the optional dependency gymnasium "
        '(pip install "jaxsched[gym]")'
    ) from exc

import jax
import jax.numpy as jnp

from jaxsched.envs.interfaces.gymnax_env import flat_obs

__all__ = ["GymnasiumEnv"]

_FNS: dict = {}


def _fns(env):
    """The compiled (reset, reset_at, step) of ``env``'s configuration (its pytree's treedef)."""
    key = jax.tree_util.tree_structure(env)
    if key not in _FNS:

        def out(ts):
            return flat_obs(ts.observation), ts

        _FNS[key] = (
            jax.jit(lambda e, k: (lambda s, ts: (s, *out(ts)))(*e.reset(k))),
            jax.jit(lambda e, i: (lambda s, ts: (s, *out(ts)))(*e.reset_at(i))),
            jax.jit(lambda e, s, a: (lambda s, ts: (s, *out(ts)))(*e.step(s, a))),
        )
    return _FNS[key]


class GymnasiumEnv(gymnasium.Env):
    """Gymnasium view of a jaxsched environment ``env``."""

    metadata = {"render_modes": []}

    def __init__(self, env):
        self.env = env
        n = int(env.num_actions)
        dim = jax.eval_shape(
            lambda k: flat_obs(env.reset(k)[1].observation), jax.random.PRNGKey(0)
        ).shape
        self.observation_space = spaces.Dict(
            {
                "obs": spaces.Box(-np.inf, np.inf, shape=dim, dtype=np.float32),
                "mask": spaces.MultiBinary(n),
            }
        )
        self.action_space = spaces.Discrete(n)
        self._reset, self._reset_at, self._step = _fns(env)
        self._state, self._mask, self._done, self._key = None, None, True, None

    def _convert(self, obs, ts):
        self._mask = np.asarray(ts.observation.mask)
        info = {"action_mask": self._mask}
        info.update({k: np.asarray(v).item() for k, v in ts.extras.items()})
        return {"obs": np.asarray(obs), "mask": self._mask.astype(np.int8)}, info

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = options or {}
        if "start" in options:
            self._state, obs, ts = self._reset_at(self.env, jnp.int32(int(options["start"])))
        else:
            if seed is not None or self._key is None:
                s = seed if seed is not None else int(self.np_random.integers(2**31))
                self._key = jax.random.PRNGKey(s)
            self._key, k = jax.random.split(self._key)
            self._state, obs, ts = self._reset(self.env, k)
        self._done = False
        return self._convert(obs, ts)

    def step(self, action: Any):
        if self._state is None or self._done:
            raise RuntimeError("call reset() before step() (the episode is over)")
        self._state, obs, ts = self._step(self.env, self._state, jnp.int32(int(action)))
        obs, info = self._convert(obs, ts)
        terminated, truncated = bool(ts.terminated), bool(ts.truncated)
        self._done = terminated or truncated
        return obs, float(ts.reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        if self._mask is None:
            raise RuntimeError("call reset() first")
        return self._mask
