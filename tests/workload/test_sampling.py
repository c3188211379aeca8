"""Sequence start sampling: the gym-compatible reference draws and our own samplers."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest

from jaxsched.errors import ConfigError, JaxschedError
from jaxsched.workload import sampling
from jaxsched.workload.sampling import (
    fixed_starts,
    gym_np_random,
    gym_seed_key,
    reference_starts,
    uniform_starts,
)

# spec §8.2: the starts of the paper's tables (10 sequences of 1024 jobs, U = 10,000)
PAPER_STARTS = {
    1: [1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085],
    2: [5316, 6704, 7470, 7238, 7216, 1167, 8814, 2516, 6433, 7528],
    20: [1131, 5655, 1684, 6977, 1245, 5498, 6628, 5299, 7328, 8682],
}


@pytest.mark.parametrize("seed", sorted(PAPER_STARTS))
def test_paper_start_indices(seed):
    starts = reference_starts(seed, 10, 1024, 10000)
    assert starts.dtype == np.int64
    assert starts.tolist() == PAPER_STARTS[seed]


def test_batch_job_slice_limits_the_range():
    # SDSC-SP2 / HPC2N in the paper: many more jobs, batch_job_slice = 10000 -> same starts
    assert reference_starts(1, 10, 1024, 202871, batch_job_slice=10000).tolist() == PAPER_STARTS[1]
    assert reference_starts(1, 10, 1024, 10000, batch_job_slice=50000).tolist() == PAPER_STARTS[1]
    whole = reference_starts(1, 10, 1024, 202871)
    assert whole.tolist() != PAPER_STARTS[1]
    assert whole.min() >= 1024 and whole.max() < 202871 - 1024 - 1


def test_gym_seed_key_recipe():
    digest = hashlib.sha512(b"1").digest()
    w0, w1 = struct.unpack("<II", digest[:8])
    assert gym_seed_key(1) == [w0, w1]
    # the seed is taken modulo 2**64 before hashing, as gym's create_seed does
    assert gym_seed_key(2**64 + 1) == gym_seed_key(1)
    # the generator is seeded by init_by_array with the key given as a list
    rng = gym_np_random(1)
    ref = np.random.RandomState()
    ref.seed([w0, w1])
    assert rng.randint(0, 2**31, size=5).tolist() == ref.randint(0, 2**31, size=5).tolist()
    # ... which differs from seeding with a plain integer
    assert gym_np_random(1).randint(0, 2**31) != np.random.RandomState(w0).randint(0, 2**31)
    with pytest.raises(ConfigError):
        gym_seed_key(-1)
    with pytest.raises(ConfigError):
        gym_seed_key(1.5)


def test_gym_seed_key_drops_zero_high_word(monkeypatch):
    class FakeSha:
        def __init__(self, data):
            pass

        def digest(self):
            return struct.pack("<II", 12345, 0) + bytes(56)

    monkeypatch.setattr(sampling.hashlib, "sha512", FakeSha)
    assert gym_seed_key(7) == [12345]
    rng = gym_np_random(7)
    ref = np.random.RandomState()
    ref.seed([12345])  # init_by_array with one word, not init_genrand(12345)
    assert rng.randint(0, 1000, size=8).tolist() == ref.randint(0, 1000, size=8).tolist()


def test_reference_starts_errors():
    with pytest.raises(ConfigError, match="need at least 2050 jobs"):
        reference_starts(1, 10, 1024, 2049)
    assert len(reference_starts(1, 3, 1024, 2050)) == 3
    with pytest.raises(ConfigError):
        reference_starts(1, 10, 0, 10000)
    assert isinstance(ConfigError("x"), JaxschedError)


def test_uniform_starts_reproducible_and_in_range():
    a = uniform_starts(10000, 1024, 50, seed=3)
    b = uniform_starts(10000, 1024, 50, seed=3)
    c = uniform_starts(10000, 1024, 50, seed=4)
    assert a.dtype == np.int64 and a.shape == (50,)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.min() >= 0 and a.max() <= 10000 - 1024
    # every valid start, including the very last one, can be drawn
    assert set(uniform_starts(5, 3, 200, seed=0).tolist()) == {0, 1, 2}
    assert uniform_starts(1024, 1024, 4, seed=0).tolist() == [0, 0, 0, 0]
    with pytest.raises(ConfigError, match="longer than the trace"):
        uniform_starts(100, 101, 1)


def test_fixed_starts_validation():
    out = fixed_starts([0, 5, 8976], 1024, 10000)
    assert out.dtype == np.int64 and out.tolist() == [0, 5, 8976]
    assert fixed_starts(np.array([3.0]), 10, 20).tolist() == [3]
    assert fixed_starts(7, 10, 20).tolist() == [7]
    with pytest.raises(
        ConfigError,
        match=r"start #1 is 8977: .* runs past the end of the "
        r"trace \(10000 jobs; last valid start 8976\)",
    ):
        fixed_starts([0, 8977], 1024, 10000)
    with pytest.raises(ConfigError, match="must be >= 0"):
        fixed_starts([-1], 10, 100)
    with pytest.raises(ConfigError, match="integers"):
        fixed_starts([1.5], 10, 100)
    with pytest.raises(ConfigError, match="integers"):
        fixed_starts(["a"], 10, 100)
    with pytest.raises(ConfigError, match="no start"):
        fixed_starts([], 10, 100)
