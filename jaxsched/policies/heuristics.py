"""Heuristic priority functions as vectorised, vmappable values.

A heuristic is an ``int32`` code (see :data:`POLICIES`), so a batch of simulations can run
different policies side by side under ``vmap``. Every heuristic is a *priority key*: the waiting
job with the smallest ``(key, trace index)`` is scheduled first (RLScheduler's convention,
spec §4 and §2.8.1).

Keys are computed in float64 from

* ``s`` absolute submit time (int64), ``q`` requested time (int64), ``n`` requested processors
  (int64), and for the waiting-time based keys of the correct mode, ``w = t - s`` at the
  decision time.

Static keys (all keys in ``compat=True`` mode, and all but WFP3/UNICEP in the default mode) are
turned into per-sequence integer ranks once per episode; WFP3/UNICEP in the default mode depend
on the clock and are evaluated at every decision (:func:`dynamic_key`).

Exactness: the reference's keys use libm's ``log10``/``log2``/``pow``; XLA's own versions can
differ by one ulp, which reorders mathematically equal keys (F1's ``log10(3)*9`` and
``log10(27)*3`` are bit-identical in libm and tie, broken by the index). So the exact ranks are
computed on the host (:func:`host_keys`, :func:`host_rank`, libm through :mod:`math` on the
distinct values only), and the clock-dependent UNICEP key gets its ``log2(n + 1e-15)`` from the
host too (:func:`host_log2n`). :func:`static_rank` (device, inside ``jit``) is kept for callers
that only need an order up to such ties.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError

#: Policy names in code order. ``random`` draws one uniform key per job per episode.
POLICIES: tuple[str, ...] = tuple(
    "fcfs sjf wfp3 unicep f1 f2 f3 f4 smallest saf srf ljf lcfs random".split()
)
#: The five heuristics of the RLScheduler paper's tables, in the paper's column order.
PAPER_POLICIES: tuple[str, ...] = ("fcfs", "wfp3", "unicep", "sjf", "f1")
#: The nine policies of the reference numbers in ``shared/reference``.
REFERENCE_POLICIES: tuple[str, ...] = POLICIES[: POLICIES.index("smallest") + 1]

POLICY_CODE = {name: i for i, name in enumerate(POLICIES)}
ALIASES = {"sqf": "smallest"}
WFP3, UNICEP, RANDOM = POLICY_CODE["wfp3"], POLICY_CODE["unicep"], POLICY_CODE["random"]


def policy_code(name: str) -> int:
    """Return the int code of a heuristic name (case-insensitive); ``ValueError`` if unknown."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in POLICY_CODE:
        raise ConfigError(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}")
    return POLICY_CODE[key]


def _pos(x):
    """The reference's guard for logarithms: values ≤ 0 become 0.1."""
    return jnp.where(x > 0, x, 0.1)


def static_key(code, s, q, n, rand_u):
    """Primary static key of every policy (float64, ascending = scheduled first).

    Args:
      code: int32 scalar policy code.
      s, q, n: int64 ``[L]`` submit time, requested time, requested processors.
      rand_u: float64 ``[L]`` uniforms for the ``random`` policy.
    Returns:
      float64 ``[L]``; ties are broken by trace index, which equals submit order (SJF's
      ``(q, s)`` and SQF's ``(n, s)`` are therefore exact). For WFP3/UNICEP this is the reference's static (bugged) key with w = -1 - s (spec §4).
    """
    s = s.astype(jnp.float64)
    q = q.astype(jnp.float64)
    n = n.astype(jnp.float64)
    w_bug = -1.0 - s
    keys = jnp.stack(
        [
            s,  # fcfs
            q,  # sjf (q, s)
            -jnp.power(w_bug / q, 3.0) * n,  # wfp3 (reference quirk)
            -(w_bug + 1e-15) / (jnp.log2(n + 1e-15) * q),  # unicep (reference quirk)
            jnp.log10(_pos(q)) * n + 870.0 * jnp.log10(_pos(s)),  # f1
            jnp.sqrt(q) * n + 25600.0 * jnp.log10(s),  # f2
            q * n + 6860000.0 * jnp.log10(s),  # f3
            q * jnp.sqrt(n) + 530000.0 * jnp.log10(s),  # f4
            n,  # smallest (n, s)
            q * n,  # saf: smallest area
            q / n,  # srf: smallest ratio
            -q,  # ljf: longest requested first
            -s,  # lcfs
            rand_u,  # random
        ]
    )
    return keys[code]


def is_dynamic(code, compat):
    """True where the key depends on the clock: WFP3/UNICEP in the correct (non-compat) mode."""
    return jnp.logical_and(jnp.logical_not(compat), (code == WFP3) | (code == UNICEP))


def dynamic_key(code, t, s, q, n, log2n=None):
    """WFP3 / UNICEP with the real waiting time ``w = t - s`` (paper definitions, float64).

    WFP3 = -(x*x*x) * n with x = w/q (two roundings, the same in the oracle) and
    UNICEP = -(w + 1e-15) / (log2(n + 1e-15) * q); any other code returns WFP3 (callers select
    with :func:`is_dynamic`). ``log2n``: float64 ``[...]`` ``log2(n + 1e-15)`` from the host
    (:func:`host_log2n`, libm-exact); computed on the device if None.
    """
    w = (t - s).astype(jnp.float64)
    qf = q.astype(jnp.float64)
    nf = n.astype(jnp.float64)
    x = w / qf
    wfp3 = -(x * x * x) * nf
    if log2n is None:
        log2n = jnp.log2(nf + 1e-15)
    unicep = -(w + 1e-15) / (log2n * qf)
    return jnp.where(code == UNICEP, unicep, wfp3)


def static_rank(code, s, q, n, rand_u, valid):
    """Rank of each job in ascending ``(key, index)`` order within one sequence.

    Args:
      code: int32 policy code; s, q, n: int64 ``[L]``; rand_u: float64 ``[L]``;
      valid: bool ``[L]`` (padding jobs rank last).
    Returns:
      int32 ``[L]``: 0 for the job scheduled first among all, etc.
    """
    key = static_key(code, s, q, n, rand_u)
    key = jnp.where(valid, key, jnp.inf)
    idx = jnp.arange(s.shape[0])
    order = jnp.lexsort((idx, key))
    return jnp.zeros(s.shape[0], jnp.int32).at[order].set(jnp.arange(s.shape[0], dtype=jnp.int32))


def random_uniforms(key, length):
    """float64 ``[length]`` uniforms for the ``random`` policy."""
    return jax.random.uniform(key, (length,), dtype=jnp.float64)


# ----------------------------------------------------------------------------------------------
# Host-side exact keys (libm, like the reference)
# ----------------------------------------------------------------------------------------------
def _unique_map(fn, x: np.ndarray) -> np.ndarray:
    """Apply the scalar libm function ``fn`` to a float64 array through its distinct values."""
    u, inv = np.unique(x, return_inverse=True)
    return np.asarray([fn(float(v)) for v in u], np.float64)[inv].reshape(x.shape)


def _libm_log10(x: float) -> float:
    if x > 0:
        return math.log10(x)
    return -math.inf if x == 0 else math.nan


def _libm_log2(x: float) -> float:
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def _libm_sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else math.nan


def _libm_cube(x: float) -> float:
    try:
        return math.pow(x, 3)
    except OverflowError:
        return math.copysign(math.inf, x)


def host_keys(code, s, q, n, rand_u=None) -> tuple:
    """Exact priority keys (numpy, float64) as the reference computes them.

    Args:
      code: policy code or name; s, q, n: int ``[...]`` submit time, requested time, processors;
      rand_u: float64 ``[...]`` uniforms for ``random`` (zeros if None).
    Returns:
      a tuple of float64 arrays, most significant first (SJF and SQF have the submit time as a
      second key); ties after them go to the lower trace index. WFP3/UNICEP are the reference's
      static keys (waiting time ``-1 - s``, spec §10.2).
    """
    code = policy_code(code) if isinstance(code, str) else int(code)
    name = POLICIES[code]
    sf = np.asarray(s, np.float64)
    qf = np.asarray(q, np.float64)
    nf = np.asarray(n, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if name == "fcfs":
            return (sf,)
        if name == "sjf":
            return (qf, sf)
        if name == "smallest":
            return (nf, sf)
        if name == "f1":
            return (
                _unique_map(_libm_log10, np.where(qf > 0, qf, 0.1)) * nf
                + 870.0 * _unique_map(_libm_log10, np.where(sf > 0, sf, 0.1)),
            )
        if name == "f2":
            return (_unique_map(_libm_sqrt, qf) * nf + 25600.0 * _unique_map(_libm_log10, sf),)
        if name == "f3":
            return (qf * nf + 6860000.0 * _unique_map(_libm_log10, sf),)
        if name == "f4":
            return (qf * _unique_map(_libm_sqrt, nf) + 530000.0 * _unique_map(_libm_log10, sf),)
        if name == "wfp3":
            return (-_unique_map(_libm_cube, (-1.0 - sf) / qf) * nf,)
        if name == "unicep":
            return (-((-1.0 - sf) + 1e-15) / (_unique_map(_libm_log2, nf + 1e-15) * qf),)
        if name == "saf":
            return (qf * nf,)
        if name == "srf":
            return (np.where(nf > 0, qf / nf, np.inf),)
        if name == "ljf":
            return (-qf,)
        if name == "lcfs":
            return (-sf,)
        if name == "random":
            return (np.zeros_like(sf) if rand_u is None else np.asarray(rand_u, np.float64),)
    raise ConfigError(f"unknown policy code {code}")


def host_rank(code, s, q, n, rand_u=None) -> np.ndarray:
    """Rank of every job in ascending ``(keys…, index)`` order along the last axis.

    Args: as :func:`host_keys`, arrays ``[..., L]`` (one sequence per row).
    Returns: int32 ``[..., L]``, 0 = scheduled first. NaN keys rank last.
    """
    return rank_by(host_keys(code, s, q, n, rand_u))


def rank_by(keys) -> np.ndarray:
    """int32 rank of every entry along the last axis in the lexicographic order of ``keys``
    (a tuple of arrays ``[..., L]``, most significant first), ties to the lower index, NaN
    after every number."""
    keys = tuple(np.asarray(k) for k in keys)
    shape = keys[0].shape
    L = shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    row = np.repeat(np.arange(rows), L)
    idx = np.tile(np.arange(L), rows)
    order = np.lexsort((idx,) + tuple(k.reshape(-1) for k in reversed(keys)) + (row,))
    rank = np.empty(rows * L, np.int32)
    rank[order] = np.tile(np.arange(L, dtype=np.int32), rows)
    return rank.reshape(shape)


def host_log2n(n) -> np.ndarray:
    """float64 ``log2(n + 1e-15)`` with libm (the UNICEP denominator's transcendental part)."""
    return _unique_map(_libm_log2, np.asarray(n, np.float64) + 1e-15)
