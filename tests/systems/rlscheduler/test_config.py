"""The run configuration's computation-only options."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxsched.systems.rlscheduler.config import SLOT_BUCKETS, RunConfig, prefix_options
from jaxsched.train.prefix import bucket_widths, sorted_chunks
from jaxsched.train.rollout import NetInput


def test_bucket_widths_by_hand():
    # the full width is a bucket; with a bound on the valid slots (a queue holds at most
    # `length` jobs) the buckets past the first that holds the bound are dead
    assert bucket_widths((8, 16, 32, 64), 128) == (8, 16, 32, 64, 128)
    assert bucket_widths((8, 16, 32, 64), 128, 16) == (8, 16)
    assert bucket_widths((8, 16, 32, 64), 128, 24) == (8, 16, 32)
    assert bucket_widths((8, 16, 32, 64), 128, 36) == (8, 16, 32, 64)
    assert bucket_widths((64, 8, 32, 16), 128, 256) == (8, 16, 32, 64, 128)
    assert bucket_widths((8, 16, 32, 64), 128, 128) == (8, 16, 32, 64, 128)
    assert bucket_widths((8, 16, 32, 64), 128, 100) == (8, 16, 32, 64, 128)
    assert bucket_widths((8, 16, 32, 64), 128, 4) == (8,)
    assert bucket_widths((8, 200), 128, 150) == (8, 128)  # capped at the full width


def test_prefix_options_keep_every_bucket_at_the_papers_length():
    for length, widths in ((256, (8, 16, 32, 64, 128)), (128, (8, 16, 32, 64, 128)), (16, (8, 16))):
        p = prefix_options(RunConfig(trace="t.swf", length=length))["slot_prefix"]
        assert p.buckets == SLOT_BUCKETS and p.max_valid == length
        assert bucket_widths(p.buckets, 128, p.max_valid) == widths


def test_a_sample_past_the_bound_poisons_the_weight_instead_of_a_narrower_prefix():
    mask = np.zeros((6, 12), bool)
    for i, n in enumerate((1, 3, 4, 2, 4, 4)):
        mask[i, :n] = True
    x = NetInput(obs=jnp.zeros((6, 12, 2)), mask=jnp.asarray(mask))
    w = jnp.ones(6, bool)
    bucket, _, total, widths = sorted_chunks(x, (), w, (2, 4), 3, max_valid=4)
    assert widths == (2, 4) and float(total) == 6.0 and bucket.tolist() == [1, 1]
    mask[5, :5] = True  # 5 valid slots: past the promised 4
    x = x._replace(mask=jnp.asarray(mask))
    _, _, total, _ = sorted_chunks(x, (), w, (2, 4), 3, max_valid=4)
    assert np.isnan(float(total))
    _, _, total, widths = sorted_chunks(x, (), w, (2, 4), 3)  # no bound: the full width
    assert widths == (2, 4, 12) and float(total) == 6.0
