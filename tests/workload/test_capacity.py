"""The running-list capacity of an environment's sequences (jaxsched.workload.capacity):
hand cases and a brute force over every subset of every window. That the engine never
overflows it, and schedules as the oracle does with it, is checked by the environments'
oracle tests (tests/envs/test_rlscheduler.py, whose 64-job Lublin-1 sequences get 58 running
slots instead of 64)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxsched.workload.capacity import running_capacity


def brute_force(nodes, num_nodes: int, length: int) -> int:
    """The largest subset of any window whose demands fit the machine, by enumeration."""
    best = 0
    for lo in range(len(nodes) - length + 1):
        w = nodes[lo : lo + length]
        for r in range(length, 0, -1):
            if any(sum(c) <= num_nodes for c in itertools.combinations(w, r)):
                best = max(best, r)
                break
    return max(best, 1)


def test_hand_cases():
    # windows [1,1,1] (all three fit 3 nodes), [1,1,5], [1,5,2]
    assert running_capacity([1, 1, 1, 5, 2], 3, 3) == 3
    # windows [3,1,2] -> 1+2, [1,2,5] -> 1+2, [2,5,1] -> 1+2: two at once at most
    assert running_capacity([3, 1, 2, 5, 1], 4, 3) == 2
    # a job wider than the machine never runs; one that fits alone still gives one slot
    assert running_capacity([4, 4], 4, 1) == 1
    # a job of no node: any number could run at once
    assert running_capacity([2, 0, 2], 2, 2) == 2
    # the machine's node count bounds it when every job needs a node
    assert running_capacity([1] * 10, 4, 8) == 4
    with pytest.raises(ValueError, match="windows"):
        running_capacity([1, 2], 4, 3)


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(st.integers(1, 9), min_size=1, max_size=9),
    num_nodes=st.integers(1, 12),
    data=st.data(),
)
def test_equals_brute_force(nodes, num_nodes, data):
    length = data.draw(st.integers(1, min(len(nodes), 6)))
    assert running_capacity(nodes, num_nodes, length) == brute_force(nodes, num_nodes, length)


def test_chunks_agree_with_one_pass(monkeypatch):
    rng = np.random.default_rng(0)
    nodes = rng.integers(1, 40, 3000)
    whole = running_capacity(nodes, 128, 64)
    import jaxsched.workload.capacity as C

    monkeypatch.setattr(C, "_CHUNK", 7)
    assert running_capacity(nodes, 128, 64) == whole


def test_whole_trace_bound_beyond_the_budget(monkeypatch):
    import jaxsched.workload.capacity as C

    nodes = [1, 1, 1, 5, 2, 2]
    assert running_capacity(nodes, 4, 3) == 3  # window [1, 1, 1]
    monkeypatch.setattr(C, "_BUDGET", 5)  # 4 windows x 3 > 5: the whole trace's count
    assert running_capacity(nodes, 4, 3) == 3  # 1 + 1 + 1 <= 4, capped at the length
    assert running_capacity(nodes, 6, 3) == 3
    assert running_capacity([2, 9, 9, 2, 9, 9], 4, 3) == 2  # windows give 1; the trace 2
