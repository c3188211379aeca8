"""Split-window DBF actor and critic (spec ``split_window.md`` §6): separate MLPs, hidden
layers [1024, 512, 256] by default. The paper does not name the activation; ReLU is the
default here, ``activation="tanh"`` the alternative.

* :class:`SWActor`: ``apply(params, obs [D], mask [A]) -> logits float32 [A]`` (raw logits; the
  trainer applies the mask, which is all True unless the environment was built with a mask);
* :class:`SWCritic`: ``apply(params, obs [D]) -> float32 scalar``.

Both accept extra leading batch axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax.numpy as jnp

__all__ = ["ACTIVATIONS", "SWActor", "SWCritic", "DEFAULT_HIDDEN"]

DEFAULT_HIDDEN = (1024, 512, 256)
ACTIVATIONS = {"relu": nn.relu, "tanh": nn.tanh}


class _MLP(nn.Module):
    hidden: Sequence[int]
    activation: str
    out: int

    @nn.compact
    def __call__(self, x):
        x = jnp.asarray(x, jnp.float32)
        for h in self.hidden:
            x = ACTIVATIONS[self.activation](nn.Dense(h)(x))
        return nn.Dense(self.out)(x)


class SWActor(nn.Module):
    """Logits over the M + 1 actions (window slots, then Fwd)."""

    num_actions: int
    hidden: Sequence[int] = DEFAULT_HIDDEN
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs, mask=None):
        return _MLP(tuple(self.hidden), self.activation, self.num_actions)(obs)


class SWCritic(nn.Module):
    """State value from the same observation vector."""

    hidden: Sequence[int] = DEFAULT_HIDDEN
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs):
        return _MLP(tuple(self.hidden), self.activation, 1)(obs)[..., 0]
