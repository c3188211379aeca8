"""A gymnax-style view of any jaxsched environment (our own code, gymnax's calling convention).

::

    import jaxsched
    from jaxsched.envs.interfaces.gymnax_env import GymnaxEnv

    env = GymnaxEnv(jaxsched.make("rlscheduler/lublin-1", length=64, max_queue=16))
    params = env.default_params
    obs, state = env.reset(key, params)
    obs, state, reward, done, info = env.step(key, state, action, params)   # auto-resets

* ``obs``: float32 ``[obs_dim]``, every observation field but the mask, flattened and
  concatenated in field order (RLScheduler: the ``[max_queue, 8]`` job rows); the mask is
  ``info["action_mask"]`` (bool ``[num_actions]``; :meth:`GymnaxEnv.action_mask` of a state)
  and, with ``mask_in_obs=True``, also the last ``num_actions`` entries of ``obs`` (0/1).
* ``step`` auto-resets as gymnax does: when the episode ends, the returned ``obs`` and state
  are the next episode's first (the ending step's reward, ``done=True``); ``key`` is unused
  (the environment's state carries its own key for the next episode).
* ``reward`` float32, ``done`` bool; ``info``: ``discount`` (0 on termination),
  ``terminated``, ``truncated``, ``action_mask`` and the environment's ``extras``.
* :class:`EnvParams`: ``start`` (int32; -1, the default, draws the episode from the key;
  ``i >= 0`` plays episode ``i``, for a workload the trace window from job ``i``: the one
  setting that varies at reset, traced, so one compiled program serves every start; the
  episodes after an auto-reset are drawn) and ``max_steps_in_episode`` (gymnax's field, a
  bound for evaluation loops such as rejax's; the environment never truncates by it). Every
  other jaxsched setting is static (it shapes the compiled program; :mod:`jaxsched.registry`):
  pass ``jaxsched.make(..., **overrides)``.

Spaces: gymnax's own ``Discrete``/``Box`` when gymnax is installed (rejax checks the class),
else small classes of our own with the same ``sample(key)``/``contains(x)``, ``n``,
``shape``, ``dtype``, ``low``/``high``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxsched.envs.wrappers import AutoResetWrapper

__all__ = ["GymnaxEnv", "EnvParams", "Discrete", "Box", "flat_obs"]


@struct.dataclass
class EnvParams:
    """``start``: the episode of ``reset`` (-1: drawn from the key); ``max_steps_in_episode``:
    a bound for evaluation loops (the environment's episodes end by themselves). Every other
    setting is static."""

    start: int = -1
    max_steps_in_episode: int = 100_000


def _gymnax_spaces():
    try:
        from gymnax.environments import spaces
    except ImportError:
        return None
    return spaces


class Discrete:
    """``n`` actions ``0 .. n-1`` (int32)."""

    def __init__(self, n: int):
        self.n, self.shape, self.dtype = int(n), (), jnp.int32

    def sample(self, key) -> jax.Array:
        return jax.random.randint(key, (), 0, self.n, dtype=jnp.int32)

    def contains(self, x) -> jax.Array:
        return jnp.logical_and(x >= 0, x < self.n)


class Box:
    """A float32 array of ``shape`` in ``[low, high]``."""

    def __init__(self, low, high, shape: tuple, dtype=jnp.float32):
        self.low, self.high, self.shape, self.dtype = low, high, tuple(shape), dtype

    def sample(self, key) -> jax.Array:
        return jax.random.uniform(key, self.shape, self.dtype, self.low, self.high)

    def contains(self, x) -> jax.Array:
        return jnp.logical_and(jnp.all(x >= self.low), jnp.all(x <= self.high))


def flat_obs(observation, mask_in_obs: bool = False) -> jax.Array:
    """Every field of ``observation`` but ``mask``, float32, flattened and concatenated in
    field order (and the mask as 0/1 at the end with ``mask_in_obs``)."""
    fields = {k: v for k, v in vars(observation).items() if k != "mask"}
    parts = [jnp.ravel(jnp.asarray(v)).astype(jnp.float32) for v in fields.values()]
    if mask_in_obs:
        parts.append(observation.mask.astype(jnp.float32))
    return jnp.concatenate(parts)


class GymnaxEnv:
    """gymnax's interface over a jaxsched environment (see the module docstring)."""

    def __init__(self, env, mask_in_obs: bool = False, max_steps_in_episode: int = 100_000):
        self.env, self.mask_in_obs = env, bool(mask_in_obs)
        self.max_steps_in_episode = int(max_steps_in_episode)
        self._auto = AutoResetWrapper(env)

    @property
    def default_params(self) -> EnvParams:
        return EnvParams(max_steps_in_episode=self.max_steps_in_episode)

    @property
    def name(self) -> str:
        return type(self.env).__name__

    @property
    def num_actions(self) -> int:
        return int(self.env.num_actions)

    def action_space(self, params: EnvParams | None = None):
        spaces = _gymnax_spaces()
        return (spaces.Discrete if spaces else Discrete)(self.num_actions)

    def observation_space(self, params: EnvParams | None = None) -> Box:
        shape = jax.eval_shape(
            lambda k: flat_obs(self.env.reset(k)[1].observation, self.mask_in_obs),
            jax.random.PRNGKey(0),
        ).shape
        spaces = _gymnax_spaces()
        return (spaces.Box if spaces else Box)(-jnp.inf, jnp.inf, shape, jnp.float32)

    def _info(self, ts) -> dict:
        return {
            "discount": ts.discount,
            "terminated": ts.terminated,
            "truncated": ts.truncated,
            "action_mask": ts.observation.mask,
            **ts.extras,
        }

    def reset(self, key, params: EnvParams | None = None):
        """``(obs, state)`` of episode ``params.start``, or of a sampled one (-1, default)."""
        start = -1 if params is None else params.start
        if isinstance(start, int) and start < 0:  # the common case: no second branch to trace
            state, ts = self.env.reset(key)
        else:
            start = jnp.asarray(start, jnp.int32)
            state, ts = jax.lax.cond(
                start >= 0,
                lambda: self.env.reset_at(jnp.maximum(start, 0), key),
                lambda: self.env.reset(key),
            )
        return flat_obs(ts.observation, self.mask_in_obs), state

    def step(self, key, state, action, params: EnvParams | None = None):
        """``(obs, state, reward, done, info)``; a finished episode continues with a new one."""
        state, ts = self._auto.step(state, jnp.asarray(action, jnp.int32))
        obs = flat_obs(ts.observation, self.mask_in_obs)
        return obs, state, ts.reward, ts.last(), self._info(ts)

    def action_mask(self, state) -> jax.Array:
        """bool ``[num_actions]``: the valid actions of ``state``."""
        return self.env.observe(state).mask


jax.tree_util.register_pytree_node(
    GymnaxEnv,
    lambda g: ((g.env,), (g.mask_in_obs, g.max_steps_in_episode)),
    lambda aux, ch: GymnaxEnv(ch[0], *aux),
)
