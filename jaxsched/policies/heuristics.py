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
turned into per-sequence integer ranks once per episode (:func:`static_rank`); WFP3/UNICEP in
the default mode depend on the clock and are evaluated at every decision
(:func:`dynamic_key`).
"""
from __future__ import annotations

from jaxsched.errors import ConfigError

import jax
import jax.numpy as jnp

#: Policy names in code order. ``random`` draws one uniform key per job per episode.
POLICIES: tuple[str, ...] = (
    "fcfs", "sjf", "wfp3", "unicep", "f1", "f2", "f3", "f4",
    "smallest", "saf", "srf", "ljf", "lcfs", "random",
)
#: The five heuristics of the RLScheduler paper's tables, in the paper's column order.
PAPER_POLICIES: tuple[str, ...] = ("fcfs", "wfp3", "unicep", "sjf", "f1")
#: The nine policies of the reference numbers in ``shared/reference``.
REFERENCE_POLICIES: tuple[str, ...] = ("fcfs", "sjf", "wfp3", "unicep", "f1", "f2", "f3", "f4", "smallest")

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
    keys = jnp.stack([
        s,                                                        # fcfs
        q,                                                        # sjf (q, s)
        -jnp.power(w_bug / q, 3.0) * n,                           # wfp3 (reference quirk)
        -(w_bug + 1e-15) / (jnp.log2(n + 1e-15) * q),             # unicep (reference quirk)
        jnp.log10(_pos(q)) * n + 870.0 * jnp.log10(_pos(s)),      # f1
        jnp.sqrt(q) * n + 25600.0 * jnp.log10(s),                 # f2
        q * n + 6860000.0 * jnp.log10(s),                         # f3
        q * jnp.sqrt(n) + 530000.0 * jnp.log10(s),                # f4
        n,                                                        # smallest (n, s)
        q * n,                                                    # saf: smallest area
        q / n,                                                    # srf: smallest ratio
        -q,                                                       # ljf: longest requested first
        -s,                                                       # lcfs
        rand_u,                                                   # random
    ])
    return keys[code]


def is_dynamic(code, compat):
    """True where the key depends on the clock: WFP3/UNICEP in the correct (non-compat) mode."""
    return jnp.logical_and(jnp.logical_not(compat), (code == WFP3) | (code == UNICEP))


def dynamic_key(code, t, s, q, n):
    """WFP3 / UNICEP with the real waiting time ``w = t - s`` (paper definitions, float64).

    WFP3 = -(w/q)^3 * n and UNICEP = -(w + 1e-15) / (log2(n + 1e-15) * q); any other code
    returns WFP3 (callers select with :func:`is_dynamic`).
    """
    w = (t - s).astype(jnp.float64)
    qf = q.astype(jnp.float64)
    nf = n.astype(jnp.float64)
    x = w / qf
    wfp3 = -(x * x * x) * nf
    unicep = -(w + 1e-15) / (jnp.log2(nf + 1e-15) * qf)
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
