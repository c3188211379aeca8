"""Choosing where job sequences start in a trace (host-side numpy).

* :func:`gym_np_random` / :func:`reference_starts`: bit-exact replicas of what the RLScheduler
  reference does (legacy gym seeding + ``RandomState.randint``, spec §2.2 and §8.2), needed to
  evaluate on the paper's sequences;
* :func:`uniform_starts`: the project's own reproducible sampler (numpy ``Generator``);
* :func:`fixed_starts`: validation of user-given start indices.

A sequence of length L starting at ``s`` is the jobs ``s .. s+L-1`` of the loaded job list
(:class:`~jaxsched.workload.swf.Jobs`).
"""

from __future__ import annotations

import hashlib
import struct

import numpy as np

from jaxsched.errors import ConfigError, as_int

__all__ = ["gym_np_random", "gym_seed_key", "reference_starts", "uniform_starts", "fixed_starts"]


def gym_seed_key(seed: int) -> list[int]:
    """The ``init_by_array`` key legacy gym derives from ``seed`` (spec §2.2).

    SHA-512 of the decimal string of ``seed mod 2**64``. The first 8 bytes of the digest are
    read as two little-endian uint32 words [w0, w1]. The key is ``[w0, w1]``, or ``[w0]`` when
    w1 == 0 (gym turns the 64-bit number into a list of 32-bit words, most significant zero
    words dropped, and ``[0]`` for zero).
    """
    seed = as_int(seed, "seed", 0) % 2**64
    w0, w1 = struct.unpack("<II", hashlib.sha512(str(seed).encode("utf8")).digest()[:8])
    return [w0, w1] if w1 else [w0]


def gym_np_random(seed: int) -> np.random.RandomState:
    """A ``numpy.random.RandomState`` in the same state as legacy gym's
    ``seeding.np_random(seed)[0]`` (gym <= 0.21, used by ``env.seed(seed)`` in the reference).

    The key is passed as a Python *list*. A list always takes MT19937's ``init_by_array`` path,
    even with one element. ``RandomState(int)`` and a 1-element numpy array would take the
    ``init_genrand`` path instead and give a different stream.
    """
    rng = np.random.RandomState()
    rng.seed(gym_seed_key(seed))
    return rng


def reference_starts(
    seed: int, n_sequences: int, seq_len: int, n_jobs_available: int, batch_job_slice: int = 0
) -> np.ndarray:
    """Start indices exactly as the RLScheduler evaluation draws them (spec §2.2, §8.2).

    The generator is ``R = gym_np_random(seed)``. Each of the ``n_sequences`` draws is
    ``R.randint(seq_len, U - seq_len - 1)`` (upper bound excluded), in order, where
    U = ``n_jobs_available`` (the jobs loaded), limited to ``batch_job_slice`` when that is
    non-zero: U = min(n_jobs_available, batch_job_slice).

    The paper's tables (Lublin and PWA traces alike) use U = 10,000 and seq_len 1024:
    ``reference_starts(1, 10, 1024, 10000)`` gives 1981, 2756, 4299, ...
    """
    seed = as_int(seed, "seed", 0)
    n = as_int(n_sequences, "n_sequences", 0)
    L = as_int(seq_len, "seq_len", 1)
    avail = as_int(n_jobs_available, "n_jobs_available", 0)
    sl = as_int(batch_job_slice, "batch_job_slice", 0)
    U = min(avail, sl) if sl else avail
    if U - L - 1 <= L:
        raise ConfigError(
            f"cannot draw sequences of {L} jobs from {U} jobs: the reference "
            f"draws starts from [{L}, {U - L - 1}), which is empty "
            f"(need at least {2 * L + 2} jobs)"
        )
    rng = gym_np_random(seed)
    return np.array([rng.randint(L, U - L - 1) for _ in range(n)], dtype=np.int64)


def uniform_starts(
    n_jobs_available: int,
    seq_len: int,
    n_sequences: int,
    seed: int | np.random.SeedSequence | None = 0,
) -> np.ndarray:
    """``n_sequences`` start indices drawn uniformly from every valid start
    ``0 .. n_jobs_available - seq_len`` (so each sequence lies fully inside the trace), with
    ``numpy.random.default_rng(seed)``; the same seed always gives the same starts."""
    avail = as_int(n_jobs_available, "n_jobs_available", 0)
    L = as_int(seq_len, "seq_len", 1)
    n = as_int(n_sequences, "n_sequences", 0)
    if L > avail:
        raise ConfigError(f"sequence length {L} is longer than the trace ({avail} jobs)")
    rng = np.random.default_rng(seed)
    return rng.integers(0, avail - L + 1, size=n, dtype=np.int64)


def fixed_starts(starts, seq_len: int, n_jobs_available: int) -> np.ndarray:
    """Validate user-given start indices and return them as an int64 array.

    Every start must be an integer ``s >= 0`` with ``s + seq_len <= n_jobs_available``; the
    first offending one is named in a :class:`~jaxsched.errors.ConfigError`.
    """
    L = as_int(seq_len, "seq_len", 1)
    avail = as_int(n_jobs_available, "n_jobs_available", 0)
    arr = np.atleast_1d(np.asarray(starts))
    if arr.ndim != 1:
        raise ConfigError(f"starts must be a flat list of indices, got shape {arr.shape}")
    if arr.size == 0:
        raise ConfigError("no start indices given")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr)):
            raise ConfigError(f"start indices must be integers, got {arr.tolist()}")
    elif arr.dtype.kind not in "iu":
        raise ConfigError(f"start indices must be integers, got {arr.tolist()}")
    out = arr.astype(np.int64)
    for i, s in enumerate(out.tolist()):
        if s < 0:
            raise ConfigError(f"start #{i} is {s}: start indices must be >= 0")
        if s + L > avail:
            raise ConfigError(
                f"start #{i} is {s}: the sequence {s}..{s + L - 1} of {L} jobs "
                f"runs past the end of the trace ({avail} jobs; last valid "
                f"start {avail - L})"
            )
    return out
