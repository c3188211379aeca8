"""A2cScheduler's im2col convolution against Flax's convolution with the same parameters."""

import flax.linen as nn
import jax
import numpy as np

from jaxsched.nets.a2cscheduler import Conv3x3, Trunk


def test_conv3x3_equals_flax_conv_same_padding():
    x = jax.random.uniform(jax.random.PRNGKey(0), (4, 5, 7, 1))
    ours = Conv3x3(3)
    params = ours.init(jax.random.PRNGKey(1), x)
    params = jax.tree_util.tree_map(lambda p: p + 0.1, params)  # a nonzero bias as well
    want = nn.Conv(3, (3, 3), padding="SAME").apply(params, x)
    np.testing.assert_allclose(ours.apply(params, x), want, rtol=1e-5, atol=1e-6)


def test_conv3x3_hand_computed_corner():
    """A kernel that picks the upper-left neighbour: the output is the image shifted down and
    right by one, with zeros where the padding was read."""
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4, 1)
    kernel = np.zeros((3, 3, 1, 1), np.float32)
    kernel[0, 0, 0, 0] = 1.0
    params = {"params": {"kernel": kernel, "bias": np.zeros(1, np.float32)}}
    out = np.asarray(Conv3x3(1).apply(params, x))[0, :, :, 0]
    want = np.zeros((3, 4), np.float32)
    want[1:, 1:] = x[0, :-1, :-1, 0]
    np.testing.assert_array_equal(out, want)


def test_trunk_keeps_the_conv_parameter_names():
    p = Trunk("conv32_pool").init(jax.random.PRNGKey(0), np.zeros((20, 8), np.float32))
    assert p["params"]["Conv_0"]["kernel"].shape == (3, 3, 1, 32)
    assert p["params"]["Conv_0"]["bias"].shape == (32,)
