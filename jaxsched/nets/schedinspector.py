"""SchedInspector's inspector networks (spec ``schedinspector.md`` §5), Flax linen, float32.

* :class:`InspectorPolicy`: features ``[..., F]`` (F = 7, or 8 in paper mode) → 32 → 16 → 8 →
  2 masked logits (accept, reject); 938 parameters for F = 7.
* :class:`InspectorValue`: the same trunk, separate weights → 1 value; 929 parameters.

Glorot-uniform kernels, zero biases, ReLU hidden layers, linear outputs (TF1 ``tf.layers``).
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxsched.nets.categorical import apply_mask

__all__ = ["HIDDEN", "InspectorPolicy", "InspectorValue", "param_count"]

#: hidden layer widths of both networks
HIDDEN: tuple[int, ...] = (32, 16, 8)


class _Trunk(nn.Module):
    hidden: tuple[int, ...] = HIDDEN

    @nn.compact
    def __call__(self, x):
        for w in self.hidden:
            x = nn.relu(nn.Dense(w, kernel_init=nn.initializers.glorot_uniform())(x))
        return x


class InspectorPolicy(nn.Module):
    """``(obs float [..., F], mask bool [..., 2] or None) -> logits float32 [..., 2]``."""

    hidden: tuple[int, ...] = HIDDEN

    @nn.compact
    def __call__(self, obs, mask=None):
        x = _Trunk(self.hidden)(jnp.asarray(obs, jnp.float32))
        logits = nn.Dense(2, kernel_init=nn.initializers.glorot_uniform())(x)
        return logits if mask is None else apply_mask(logits, mask)


class InspectorValue(nn.Module):
    """``obs float [..., F] -> value float32 [...]``."""

    hidden: tuple[int, ...] = HIDDEN

    @nn.compact
    def __call__(self, obs):
        x = _Trunk(self.hidden)(jnp.asarray(obs, jnp.float32))
        return nn.Dense(1, kernel_init=nn.initializers.glorot_uniform())(x)[..., 0]


def param_count(params) -> int:
    """Number of scalars in a parameter pytree."""
    return int(sum(x.size for x in jax.tree_util.tree_leaves(params)))
