"""A2cScheduler's actor and critic (spec §6; Flax linen, float32).

Input: the state image, float ``[..., H, W]`` (one channel; any float dtype, cast to float32).
Both networks share the *design* of their trunk but have their own parameters:

* ``conv16`` (the paper's choice): one 3 × 3 convolution with 16 filters (stride 1, "same"
  padding, ReLU), flatten;
* Table 3's variants: ``conv32`` (32 filters), ``conv16_pool`` / ``conv32_pool`` (2 × 2 max
  pooling after the convolution), ``fc`` (flatten, then a dense ReLU layer of 20 units: the
  "FC layer" that did not converge in the paper).

The actor ends in a dense layer of ``num_actions`` logits (masked with
:func:`jaxsched.nets.categorical.apply_mask` when a mask is given; softmax is the categorical
distribution's), the critic in a dense layer of 1 unit: ``V(s)`` float32 ``[...]``.
Kernels are Glorot-uniform (:func:`glorot_uniform_flat`), biases zero.
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxsched.errors import ConfigError
from jaxsched.nets.categorical import apply_mask

__all__ = ["ARCHS", "Conv3x3", "Trunk", "Actor", "Critic", "max_pool_2x2"]

#: architecture name -> (filters, pooling); "fc" has no convolution
ARCHS = {
    "conv16": (16, False),
    "conv32": (32, False),
    "conv16_pool": (16, True),
    "conv32_pool": (32, True),
    "fc": (0, False),
}


def glorot_uniform_flat(key, shape, dtype=jnp.float32):
    """Glorot-uniform kernels (fan-in: all axes but the last; fan-out: the last times the
    receptive field), drawn as one flat vector and reshaped: XLA:CPU compiles threefry on
    shapes with a short last axis many times slower."""
    receptive = math.prod(shape[:-2]) if len(shape) > 2 else 1
    fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    flat = jax.random.uniform(key, (math.prod(shape),), dtype, -limit, limit)
    return flat.reshape(shape)


_INIT = dict(kernel_init=glorot_uniform_flat, bias_init=nn.initializers.zeros)


class Conv3x3(nn.Module):
    """``nn.Conv(features, (3, 3), padding="SAME")`` on a one-channel image, computed as one
    matrix product of the nine shifted copies of the image (im2col): ``[B, H, W, 1]`` float32
    -> ``[B, H, W, features]``. Same parameters (``kernel`` ``[3, 3, 1, F]``, ``bias``
    ``[F]``) and the same values up to float rounding; XLA:CPU's convolution with one input
    channel made A2C's update 2.8x slower at 16 environments and 8.2x at 64
    (``benchmarks/speed/datacenter_env.py --a2c-envs 16,64``)."""

    features: int

    @nn.compact
    def __call__(self, x):
        f32 = jnp.float32
        kernel = self.param("kernel", glorot_uniform_flat, (3, 3, 1, self.features), f32)
        bias = self.param("bias", nn.initializers.zeros, (self.features,), f32)
        h, w = x.shape[1], x.shape[2]
        padded = jnp.pad(x[..., 0], ((0, 0), (1, 1), (1, 1)))
        shifted = [padded[:, i : i + h, j : j + w] for i in range(3) for j in range(3)]
        return jnp.stack(shifted, -1) @ kernel.reshape(9, self.features) + bias


def max_pool_2x2(x):
    """``nn.max_pool(x, (2, 2), strides=(2, 2))`` (VALID: an odd last row or column is dropped)
    as a reshape and a max, ``[B, H, W, F]`` -> ``[B, H // 2, W // 2, F]``: the same values;
    XLA:CPU's ``reduce_window`` gradient needed 8 GB for a Conv3-16 update of 64 environments
    × 50 steps and was killed for want of memory at Conv3-32 (16 GB)."""
    b, h, w, f = x.shape
    x = x[:, : h // 2 * 2, : w // 2 * 2]
    return jnp.max(x.reshape(b, h // 2, 2, w // 2, 2, f), axis=(2, 4))


class Trunk(nn.Module):
    """``[..., H, W]`` image -> float32 features ``[..., F]`` (see the module docstring)."""

    arch: str = "conv16"

    @nn.compact
    def __call__(self, image):
        if self.arch not in ARCHS:
            raise ConfigError(f"unknown architecture {self.arch!r} (known: {', '.join(ARCHS)})")
        x = jnp.asarray(image, jnp.float32)
        lead = x.shape[:-2]
        x = x.reshape((-1,) + x.shape[-2:] + (1,))  # [B, H, W, 1]
        filters, pool = ARCHS[self.arch]
        if filters:
            x = nn.relu(Conv3x3(filters, name="Conv_0")(x))
            if pool:
                x = max_pool_2x2(x)
            x = x.reshape(x.shape[0], -1)
        else:
            x = nn.relu(nn.Dense(20, **_INIT)(x.reshape(x.shape[0], -1)))
        return x.reshape(lead + x.shape[-1:])


class Actor(nn.Module):
    """Logits float32 ``[..., num_actions]`` (masked where ``mask`` bool ``[..., A]`` is
    False)."""

    num_actions: int
    arch: str = "conv16"

    @nn.compact
    def __call__(self, image, mask=None):
        logits = nn.Dense(self.num_actions, **_INIT)(Trunk(self.arch)(image))
        return logits if mask is None else apply_mask(logits, jnp.asarray(mask, bool))


class Critic(nn.Module):
    """``V(s)`` float32 ``[...]``."""

    arch: str = "conv16"

    @nn.compact
    def __call__(self, image):
        return nn.Dense(1, **_INIT)(Trunk(self.arch)(image))[..., 0]
