"""RLScheduler's trajectory-filter rules (jaxsched/systems/rlscheduler/filtering.py) on
hand-made numbers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.errors import ConfigError
from jaxsched.systems.rlscheduler.filtering import (
    REFERENCE_BOUNDS,
    TrajectoryFilter,
    in_range,
    paper_bounds,
    sample_accepted_starts,
    start_acceptance,
)


def test_paper_bounds_hand_made():
    # the paper's PIK-IPLEX example: median 1, mean 730 -> R = (1, 1460)
    vals = [1.0, 1.0, 1.0, 1000.0, 2647.0]
    assert paper_bounds(vals) == (1.0, 1460.0)
    assert paper_bounds([3.0, np.nan, 1.0, 2.0]) == (2.0, 4.0)  # NaN ignored
    with pytest.raises(ConfigError):
        paper_bounds([np.nan])
    f = TrajectoryFilter.paper(vals)
    assert (f.lower, f.upper, f.mode, f.reference_offset) == (1.0, 1460.0, "paper", False)
    # open interval: the median itself (the "easy" sequences with bsld 1) is rejected
    np.testing.assert_array_equal(
        f.accept(jnp.array([1.0, 1.0001, 1459.9, 1460.0, 5000.0])),
        [False, True, True, False, False],
    )


def test_reference_rule_and_off_by_one():
    assert REFERENCE_BOUNDS == (10.0, 150.0)
    np.testing.assert_array_equal(
        in_range(jnp.array([10.0, 10.5, 149.0, 150.0]), 10, 150), [False, True, True, False]
    )
    sjf = jnp.array([5.0, 20.0, 200.0, 100.0, jnp.nan, 50.0])
    np.testing.assert_array_equal(start_acceptance(sjf, 10, 150), [0, 1, 0, 1, 0, 1])
    # reference: start s is judged by the value of start s + 1
    np.testing.assert_array_equal(
        start_acceptance(sjf, 10, 150, reference_offset=True), [1, 0, 1, 0, 1, 0]
    )
    f = TrajectoryFilter.reference(phase1_updates=3)
    assert (f.lower, f.upper, f.reference_offset, f.mode) == (10.0, 150.0, True, "reference")
    np.testing.assert_array_equal(f.start_table(sjf, update=0), [1, 0, 1, 0, 1, 0])
    np.testing.assert_array_equal(f.start_table(sjf, update=3), [1] * 6)  # phase 2


def test_filter_phases():
    f = TrajectoryFilter(10.0, 150.0, phase1_updates=2)
    v = jnp.array([5.0, 50.0, 500.0])
    np.testing.assert_array_equal(f.accept(v, 0), [False, True, False])
    np.testing.assert_array_equal(f.accept(v, 1), [False, True, False])
    np.testing.assert_array_equal(f.accept(v, 2), [True, True, True])
    np.testing.assert_array_equal(f.active(jnp.array([0, 1, 2, 9])), [1, 1, 0, 0])
    forever = TrajectoryFilter(10.0, 150.0)
    np.testing.assert_array_equal(forever.accept(v, 10**6), [False, True, False])
    # jit / vmap friendly
    np.testing.assert_array_equal(jax.jit(f.accept)(v, jnp.int32(5)), [True] * 3)
    with pytest.raises(ConfigError):
        TrajectoryFilter(5.0, 5.0)
    with pytest.raises(ConfigError):
        TrajectoryFilter(0.0, 5.0, phase1_updates=-1)


def test_sample_accepted_starts():
    accepted = jnp.zeros(50, bool).at[jnp.array([3, 17, 41])].set(True)
    starts = np.asarray(sample_accepted_starts(jax.random.PRNGKey(0), accepted, (3000,)))
    assert set(np.unique(starts)) == {3, 17, 41}
    counts = np.bincount(starts, minlength=50)[[3, 17, 41]]
    assert counts.min() > 850  # ≈ uniform (1000 each)


def test_the_environment_and_the_filter_share_one_sampler():
    from jaxsched.envs import starts

    assert starts.sample_accepted_starts is sample_accepted_starts
