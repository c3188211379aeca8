"""A tiny environment of the contract (:mod:`jaxsched.envs.core`), for tests of code that runs
any environment (the PPO trainer, the auto-reset wrapper, the contract checks).

``PickSmallestEnv``: ``N = 6`` slots of 8 features; the first ``m`` slots (``m`` uniform in
2..6) hold jobs, feature 0 is a uniform number, feature 1 the fraction of the episode left,
padding slots are the reference's padding vector. Each step the agent picks a slot and gets
reward 1 if it picked the valid slot with the smallest feature 0, else 0. Episodes last
``min_len .. max_len`` (1..5) steps, uniform, so a random policy earns E[1/m] = 0.29 per step.
Its randomness comes from an integer hash of (seed, counter) (threefry on small 2-D shapes
compiles slowly on XLA:CPU): ``reset(key)`` draws the seed, every step draws the next slots,
and an episode that ends continues with the draw of the same counter (``next_episode``), so
under :class:`~jaxsched.envs.AutoResetWrapper` it plays exactly as the toy environment of
``tests/train/test_ppo.py`` with its built-in auto-reset. ``timestep.extras["length"]``
(float32) is the length of the episode the timestep's observation belongs to (the next one on
a LAST step), used as the "SJF value" of trajectory-filter tests.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from flax import struct

from jaxsched.envs.core import Environment, Observation

__all__ = ["PickSmallestEnv", "ToyObservation", "ToyState", "RANDOM_REWARD_PER_STEP"]

#: E[1/m], m uniform in 2..6: the reward per step of a uniformly random policy
RANDOM_REWARD_PER_STEP = sum(1.0 / m for m in range(2, 7)) / 5


@struct.dataclass
class ToyObservation(Observation):
    """``mask`` bool ``[N]``; ``obs`` float32 ``[N, 8]``; ``critic_obs`` float32 ``[2]``
    (fraction of the episode left, fraction of valid slots; unused by the default obs_fn)."""

    obs: jax.Array
    critic_obs: jax.Array


@struct.dataclass
class ToyState:
    """``seed``, ``counter``: uint32 hash inputs of the current slots; ``feats`` float32
    ``[N]``; ``mask`` bool ``[N]``; ``t``: int32 steps taken in the episode; ``length``:
    int32 steps the episode lasts."""

    seed: jax.Array
    counter: jax.Array
    feats: jax.Array
    mask: jax.Array
    t: jax.Array
    length: jax.Array


def _hash_uniform(seed, counter, n):
    """``n`` uniforms in [0, 1) from a murmur3-style mix of (seed, counter, i)."""
    x = (
        seed * jnp.uint32(0x9E3779B9)
        + counter * jnp.uint32(0x85EBCA6B)
        + jnp.arange(n, dtype=jnp.uint32) * jnp.uint32(0xC2B2AE35)
    )
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    x = x ^ (x >> 16)
    return (x >> 8).astype(jnp.float32) * jnp.float32(2.0**-24)


@dataclasses.dataclass(frozen=True)
class PickSmallestEnv(Environment):
    """See the module docstring."""

    n_slots: int = 6
    min_len: int = 1
    max_len: int = 5

    @property
    def num_actions(self) -> int:
        return self.n_slots

    def _draw(self, seed, counter):
        n = self.n_slots
        u = _hash_uniform(seed, counter, n + 2)
        m = 2 + jnp.floor(u[n] * (n - 1)).astype(jnp.int32)
        length = self.min_len + jnp.floor(u[n + 1] * (self.max_len - self.min_len + 1)).astype(
            jnp.int32
        )
        return u[:n], jnp.arange(n) < m, length

    def _first(self, seed) -> ToyState:
        counter = jnp.zeros((), jnp.uint32)
        feats, mask, length = self._draw(seed, counter)
        return ToyState(seed, counter, feats, mask, jnp.zeros((), jnp.int32), length)

    # -- contract hooks ------------------------------------------------------------------------
    def init_state(self, key) -> ToyState:
        return self._first(jax.random.bits(key, (), jnp.uint32))

    def init_state_at(self, start, key=None) -> ToyState:
        """The episode of seed ``start``."""
        return self._first(jnp.asarray(start).astype(jnp.uint32))

    def transition(self, s: ToyState, action):
        best = jnp.argmin(jnp.where(s.mask, s.feats, jnp.inf))
        reward = ((action == best) & s.mask[action]).astype(jnp.float32)
        t = s.t + 1
        done = t >= s.length
        counter = s.counter + jnp.uint32(1)
        feats, mask, length = self._draw(s.seed, counter)
        new = ToyState(s.seed, counter, feats, mask, t.astype(jnp.int32), s.length)
        extras = {"length": jnp.where(done, length, s.length).astype(jnp.float32)}
        return new, reward, done, jnp.zeros((), bool), extras

    def next_episode(self, s: ToyState) -> ToyState:
        """The episode continues the hash stream: the slots already drawn, the length drawn
        with them, step 0."""
        return s.replace(t=jnp.zeros((), jnp.int32), length=self._draw(s.seed, s.counter)[2])

    def observe(self, s: ToyState) -> ToyObservation:
        n = self.n_slots
        remaining = (s.length - s.t).astype(jnp.float32) / self.max_len
        row = jnp.stack(
            [s.feats, jnp.broadcast_to(remaining, (n,))]
            + [jnp.full((n,), 0.5, jnp.float32)] * 5
            + [jnp.ones((n,), jnp.float32)],
            axis=-1,
        )
        pad = jnp.array([0, 1, 1, 1, 1, 1, 1, 0], jnp.float32)
        obs = jnp.where(s.mask[:, None], row, pad).astype(jnp.float32)
        frac = jnp.mean(s.mask.astype(jnp.float32))
        return ToyObservation(mask=s.mask, obs=obs, critic_obs=jnp.stack([remaining, frac]))

    def reset_extras(self, s: ToyState) -> dict:
        return {"length": s.length.astype(jnp.float32)}
