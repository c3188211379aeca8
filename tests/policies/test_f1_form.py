"""F1's exact form, pinned (issue 47 §2; docs/baselines.md).

The reference code (RLScheduler's ``HPCSimPickJobs.f1_score``, the same in SchedInspector's
``HPCSimSkip``) computes ``log10(q') * n + 870 * log10(s')`` with ``q`` the *requested* time,
``n`` the requested processors and ``q' = q if q > 0 else 0.1``, ``s' = s if s > 0 else 0.1``.
A public variant swaps the roles of the time and the size (``log10(n) * q + 870 * log10(s)``);
these tests fail if any of our three implementations (device key, host key, oracle) drifts to it.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

import jaxsched.sim  # noqa: F401  (turns on jax x64)
from jaxsched.policies import heuristics as H
from jaxsched.sim import oracle as O

# (s, q, n) -> the reference's F1 value, worked out by hand
PINNED = [
    ((10_000, 100, 8), 2.0 * 8 + 870.0 * 4.0),  # log10(100) = 2, log10(1e4) = 4
    ((1_000, 1_000, 1), 3.0 * 1 + 870.0 * 3.0),
    ((0, 0, 4), -1.0 * 4 + 870.0 * -1.0),  # both guards: log10(0.1) = -1
]


def _three(s, q, n):
    """F1 of jobs ``(s, q, n)`` by the device key, the host key and the oracle."""
    s, q, n = (np.asarray(v, np.int64) for v in (s, q, n))
    dev = np.asarray(H.static_key(H.policy_code("f1"), jnp.asarray(s), jnp.asarray(q),
                                  jnp.asarray(n), jnp.zeros(len(s))))  # fmt: skip
    host = H.host_keys("f1", s, q, n)[0]
    orc = np.asarray(O.priority_keys("f1", s, q, n), np.float64)
    return dev, host, orc


def test_f1_values_are_the_reference_form():
    jobs, want = zip(*PINNED)
    s, q, n = zip(*jobs)
    for got in _three(s, q, n):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


def test_f1_orders_by_log_request_times_size_not_the_swapped_variant():
    # same submit time; A: 1000 s on 1 processor, B: 10 s on 2 processors.
    # reference: A = log10(1000) * 1 = 3, B = log10(10) * 2 = 2 -> B first.
    # swapped (log10(n) * q): A = 0 * 1000 = 0, B = log10(2) * 10 = 3.01 -> A first.
    s, q, n = [5_000, 5_000], [1_000, 10], [1, 2]
    for got in _three(s, q, n):
        assert got[1] < got[0]
    swapped = [math.log10(nn) * qq + 870 * math.log10(ss) for ss, qq, nn in zip(s, q, n)]
    assert swapped[0] < swapped[1]  # the variant really disagrees on this pair
    assert H.host_rank("f1", np.asarray(s), np.asarray(q), np.asarray(n)).tolist() == [1, 0]
