"""drand48, the C library's 48-bit linear congruential generator, bit for bit (the Lublin
generator's random stream): ``Drand48(seed)`` as ``srand48(seed)``, uniforms one at a time or
vectorised with jump tables, and sums of their logarithms as the C code computes them."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Drand48", "safe_log"]

_LCG_A = 0x5DEECE66D
_LCG_C = 0xB
_LCG_MASK = (1 << 48) - 1
_TWO_M48 = 2.0**-48  # exact power of two: x * 2**-48 == x / 2**48 exactly

# Below this many uniforms a plain Python loop is faster than the numpy jump-table path.
_VECTOR_MIN = 24

_jump_a = np.zeros(0, dtype=np.uint64)  # _jump_a[k-1] = A**k mod 2**48
_jump_c = np.zeros(0, dtype=np.uint64)  # _jump_c[k-1] = C*(A**(k-1)+...+A+1) mod 2**48


def _jump_tables(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients to jump the LCG ahead 1..k steps at once (grown on demand)."""
    global _jump_a, _jump_c
    if len(_jump_a) < k:
        n = max(k, 2 * len(_jump_a), 1024)
        a_list = [0] * n
        c_list = [0] * n
        a, c = 1, 0
        for i in range(n):
            a = (a * _LCG_A) & _LCG_MASK
            c = (c * _LCG_A + _LCG_C) & _LCG_MASK
            a_list[i] = a
            c_list[i] = c
        _jump_a = np.array(a_list, dtype=np.uint64)
        _jump_c = np.array(c_list, dtype=np.uint64)
    return _jump_a, _jump_c


_np_log_ok: bool | None = None


def _numpy_log_matches_libm() -> bool:
    """Whether ``np.log`` gives the same bits as ``math.log`` (the C library's log).

    numpy may use its own SIMD logarithm on some CPUs; a last-bit difference would break
    bit-exact reproduction, so the fast path is only used when the two agree on a large
    sample of drand48 values.  Otherwise the slower ``math.log`` path is used.
    """
    global _np_log_ok
    if _np_log_ok is None:
        x = 0x1234ABCD330E
        vals = []
        for _ in range(20000):
            x = (x * _LCG_A + _LCG_C) & _LCG_MASK
            vals.append(x * _TWO_M48)
        vals += [2.0**-48, 0.5, 0.999999, 1.0 - 2.0**-48, 0.1, 0.3, 0.7]
        ref = np.array([math.log(v) for v in vals])
        _np_log_ok = bool(np.array_equal(np.log(np.array(vals)), ref))
    return _np_log_ok


def safe_log(u: float) -> float:
    # C's log(0) is -inf; Python's math.log(0) raises.  drand48 returns 0 with probability
    # 2**-48, after which the gamma draw is infinite and is rejected by the caller.
    return math.log(u) if u > 0.0 else -math.inf


class Drand48:
    """POSIX ``drand48`` / ``srand48`` compatible generator.

    ``X <- (0x5DEECE66D * X + 0xB) mod 2**48``; each draw returns ``X / 2**48`` in [0, 1).
    ``srand48(s)`` sets ``X = ((s mod 2**32) << 16) | 0x330E``.
    """

    __slots__ = ("_x",)

    def __init__(self, seed: int = 0):
        self.seed(seed)

    def seed(self, seed: int) -> None:
        """Equivalent of ``srand48(seed)``: only the low 32 bits of ``seed`` are used."""
        self._x = ((int(seed) & 0xFFFFFFFF) << 16) | 0x330E

    @property
    def state(self) -> int:
        """The 48-bit internal state X."""
        return self._x

    @state.setter
    def state(self, value: int) -> None:
        self._x = int(value) & _LCG_MASK

    def random(self) -> float:
        """Next uniform on [0, 1) (``drand48()``)."""
        x = (self._x * _LCG_A + _LCG_C) & _LCG_MASK
        self._x = x
        return x * _TWO_M48

    def uniforms(self, k: int) -> np.ndarray:
        """The next ``k`` uniforms as a float64 array (same values as ``k`` calls of random)."""
        if k <= 0:
            return np.zeros(0, dtype=np.float64)
        ja, jc = _jump_tables(k)
        xs = (ja[:k] * np.uint64(self._x) + jc[:k]) & np.uint64(_LCG_MASK)
        self._x = int(xs[-1])
        return xs.astype(np.float64) * _TWO_M48

    def sum_log(self, k: int) -> float:
        """``log(U1) + log(U2) + ... + log(Uk)`` summed left to right, as a C loop does.

        Bit-identical to a sequential loop over ``k`` draws; large ``k`` use the vectorised
        jump-ahead LCG and a sequential cumulative sum (not numpy's pairwise ``sum``).
        """
        if k < _VECTOR_MIN:
            x = self._x
            s = 0.0
            log = math.log
            for _ in range(k):
                x = (x * _LCG_A + _LCG_C) & _LCG_MASK
                if x:
                    s += log(x * _TWO_M48)
                else:
                    s = -math.inf
            self._x = x
            return s
        u = self.uniforms(k)
        if _numpy_log_matches_libm():
            with np.errstate(divide="ignore"):
                return float(np.cumsum(np.log(u))[-1])
        s = 0.0
        for v in map(safe_log, u.tolist()):
            s += v
        return s
