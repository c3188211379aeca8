"""jumanji's ``Environment`` over a jaxsched environment (jumanji is optional:
``pip install "jaxsched[eco]"``).

jaxsched's own contract already is jumanji's (``reset(key) -> (state, TimeStep)``,
``step(state, action) -> (state, TimeStep)``, FIRST/MID/LAST = 0/1/2); this adapter only
changes the types: ``jumanji.types.TimeStep`` (``terminated``/``truncated`` move into
``extras``), ``jumanji.specs`` for ``observation_spec`` (one spec per observation field, the
mask a bool ``BoundedArray``) and ``action_spec`` (``DiscreteArray(num_actions)``)::

    import jaxsched
    from jaxsched.envs.interfaces.jumanji_env import JumanjiEnv

    env = JumanjiEnv(jaxsched.make("rlscheduler/lublin-1"))
    state, timestep = jax.jit(env.reset)(key)
"""

from __future__ import annotations

try:
    from jumanji import specs
    from jumanji.env import Environment as _JumanjiEnvironment
    from jumanji.types import TimeStep as JTimeStep
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "jaxsched.envs.interfaces.jumanji_env needs the optional dependency jumanji "
        '(pip install "jaxsched[eco]")'
    ) from exc

import functools

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["JumanjiEnv"]


def _to_jumanji(ts) -> JTimeStep:
    extras = {**ts.extras, "terminated": ts.terminated, "truncated": ts.truncated}
    return JTimeStep(
        step_type=ts.step_type.astype(jnp.int8),
        reward=ts.reward,
        discount=ts.discount,
        observation=ts.observation,
        extras=extras,
    )


class JumanjiEnv(_JumanjiEnvironment):
    """jumanji view of a jaxsched environment ``env`` (see the module docstring)."""

    def __init__(self, env):
        self.env = env
        super().__init__()

    def __repr__(self) -> str:
        return f"JumanjiEnv({self.env!r})"

    def reset(self, key):
        state, ts = self.env.reset(key)
        return state, _to_jumanji(ts)

    def step(self, state, action):
        state, ts = self.env.step(state, jnp.asarray(action, jnp.int32))
        return state, _to_jumanji(ts)

    @functools.cached_property
    def observation_spec(self) -> specs.Spec:
        obs = jax.eval_shape(lambda k: self.env.reset(k)[1].observation, jax.random.PRNGKey(0))
        fields = {}
        for name, x in vars(obs).items():
            if name == "mask":
                fields[name] = specs.BoundedArray(x.shape, bool, False, True, name)
            else:
                fields[name] = specs.Array(x.shape, np.dtype(x.dtype), name)
        return specs.Spec(type(obs), f"{type(obs).__name__}Spec", **fields)

    @functools.cached_property
    def action_spec(self) -> specs.DiscreteArray:
        return specs.DiscreteArray(int(self.env.num_actions), dtype=jnp.int32, name="action")

    @functools.cached_property
    def reward_spec(self) -> specs.Array:
        return specs.Array((), jnp.float32, "reward")

    @functools.cached_property
    def discount_spec(self) -> specs.BoundedArray:
        return specs.BoundedArray((), jnp.float32, 0.0, 1.0, "discount")
