"""The run configuration's computation-only options."""

from __future__ import annotations

from jaxsched.systems.rlscheduler.config import (
    SLOT_BUCKETS,
    RunConfig,
    prefix_options,
    reachable_buckets,
)


def test_reachable_buckets_by_hand():
    # a queue holds at most `length` jobs: the buckets past the first that holds them are dead
    assert reachable_buckets((8, 16, 32, 64), 16) == (8, 16)
    assert reachable_buckets((8, 16, 32, 64), 24) == (8, 16, 32)
    assert reachable_buckets((64, 8, 32, 16), 256) == (8, 16, 32, 64)
    assert reachable_buckets((8, 16, 32, 64), 4) == (8,)
    assert reachable_buckets((8, 16, 32, 64), 64) == (8, 16, 32, 64)


def test_prefix_options_keep_every_bucket_at_the_papers_length():
    assert prefix_options(RunConfig(trace="t.swf", length=256))["slot_buckets"] == SLOT_BUCKETS
    assert prefix_options(RunConfig(trace="t.swf", length=16))["slot_buckets"] == (8, 16)
