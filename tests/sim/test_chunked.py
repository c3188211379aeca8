"""A schedule run in compiled chunks (jaxsched.sim.chunked, `jaxsched simulate`'s progress
bar) is the schedule of `evaluate`'s one loop: several chunks, a queue that overflows and
grows, and the progress reports."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from shared_data import SHARED

from jaxsched.sim.chunked import schedule_window
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload import read_swf


@functools.cache
def _jobs():
    return read_swf(SHARED / "traces" / "lublin_256.swf.gz").jobs("rlscheduler")


@pytest.mark.parametrize(
    "policy, backfill, compat",
    [("sjf", "easy", False), ("f1", "rlscheduler", True), ("fcfs", "none", False)],
)
def test_chunks_equal_one_loop(policy, backfill, compat):
    """Without backfilling (a static key) the chunks take the bitmask fast path of
    jaxsched.sim.nobf, whose only capacity is the running list (2 here, so it overflows)."""
    jobs, start, length = _jobs(), 500, 120
    want = evaluate(jobs, [start], length, [policy], [backfill], compat=compat, metrics=["bsld"])
    seen = []
    got = schedule_window(
        jobs, start, length, policy, backfill, compat=compat,
        progress=lambda done, total: seen.append((done, total)),
        first_chunk_steps=40, seconds_per_chunk=1e-9, queue_cap=4,
        run_cap=2 if backfill == "none" else 64,
    )  # fmt: skip
    np.testing.assert_array_equal(got, want.start_times[0, 0, 0])
    done = [d for d, _ in seen]
    assert len(seen) > 3 and all(t == length for _, t in seen) and done[-1] == length
    # a queue of 4 (a running list of 2) overflowed: the run restarted with a larger one (the
    # count fell back)
    assert any(b < a for a, b in zip(done, done[1:]))
