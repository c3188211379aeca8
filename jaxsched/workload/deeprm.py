"""DeepRM's job-sequence generator (``bi_model_dist``), bit-exact with the reference's numpy
legacy ``RandomState`` stream (host side, numpy only).

The reference seeds numpy's global generator with ``np.random.seed(seed)`` and then, for each
of the ``simu_len`` entries, draws ``rand() < rate``; when a job arrives it draws, in order:
``rand() < 0.8`` (small job), the length (``randint(1, L//5 + 1)`` or
``randint(L*2//3, L + 1)``), the dominant resource ``randint(0, d)`` and each resource's demand
(dominant: ``randint(S//2, S + 1)``, other: ``randint(1, S//5 + 1)``), ``S`` the maximum job
size. Bounds use Python 2 integer division, as the reference runs under Python 2.

An entry with no job has length 0 and zero demands. Entry 0 is generated like the others (the
reference environment never reads it; see :mod:`jaxsched.sim.datacenter`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["DeepRMDist", "deeprm_jobset", "deeprm_jobsets"]


@dataclasses.dataclass(frozen=True)
class DeepRMDist:
    """The bimodal distribution's parameters (DeepRM defaults).

    Attributes:
      num_res: number of resource types ``d``; max_job_size: the largest demand ``S``;
      max_job_len: the largest length ``L``; small_chance: probability of a small job.
    """

    num_res: int = 2
    max_job_size: int = 10
    max_job_len: int = 15
    small_chance: float = 0.8

    @property
    def small_len(self) -> tuple[int, int]:
        """Inclusive bounds of a small job's length: ``[1, L // 5]``."""
        return 1, self.max_job_len // 5

    @property
    def big_len(self) -> tuple[int, int]:
        """Inclusive bounds of a big job's length: ``[L * 2 // 3, L]``."""
        return self.max_job_len * 2 // 3, self.max_job_len

    @property
    def dominant(self) -> tuple[int, int]:
        """Inclusive bounds of the dominant resource's demand: ``[S // 2, S]``."""
        return self.max_job_size // 2, self.max_job_size

    @property
    def other(self) -> tuple[int, int]:
        """Inclusive bounds of the other resources' demand: ``[1, S // 5]``."""
        return 1, self.max_job_size // 5


def _draw_job(rs: np.random.RandomState, dist: DeepRMDist):
    """One job's ``(length, demands [d])`` in the reference's draw order."""
    lo, hi = dist.small_len if rs.rand() < dist.small_chance else dist.big_len
    length = int(rs.randint(lo, hi + 1))
    dom = int(rs.randint(0, dist.num_res))
    dem = np.zeros(dist.num_res, np.int64)
    for i in range(dist.num_res):
        lo, hi = dist.dominant if i == dom else dist.other
        dem[i] = rs.randint(lo, hi + 1)
    return length, dem


def deeprm_jobset(seed: int, rate: float, simu_len: int, dist: DeepRMDist | None = None):
    """One jobset as the reference generates it after ``np.random.seed(seed)``.

    Returns ``(lengths int32 [simu_len], demands int32 [simu_len, d])``; length 0 = no job."""
    return deeprm_jobsets(seed, rate, simu_len, 1, dist)


def deeprm_jobsets(
    seed: int, rate: float, simu_len: int, num_ex: int, dist: DeepRMDist | None = None
):
    """``num_ex`` jobsets drawn as one stream of ``simu_len * num_ex`` entries (the reference's
    ``generate_sequence_work``), reshaped: ``(lengths int32 [num_ex, simu_len], demands int32
    [num_ex, simu_len, d])``; squeezed to one jobset when ``num_ex == 1``."""
    dist = dist or DeepRMDist()
    rs = np.random.RandomState(seed)
    n = simu_len * num_ex
    lens = np.zeros(n, np.int32)
    dems = np.zeros((n, dist.num_res), np.int32)
    for i in range(n):
        if rs.rand() < rate:
            lens[i], dems[i] = _draw_job(rs, dist)
    lens = lens.reshape(num_ex, simu_len)
    dems = dems.reshape(num_ex, simu_len, dist.num_res)
    return (lens[0], dems[0]) if num_ex == 1 else (lens, dems)
