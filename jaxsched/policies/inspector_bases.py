"""SchedInspector's 16 base schedulers (spec ``schedinspector.md`` §4), and three more, as
priority keys.

A base scheduler proposes the waiting job with the smallest ``(key…, trace index)``. The keys
are static (they do not depend on the clock; WFP3/UNICEP/SEXP read the reference's
``w = −1 − s`` quirk), so a whole trace is ranked once on the host (:func:`trace_rank`, exact
libm transcendental functions through :func:`jaxsched.policies.heuristics.host_keys`), and the
order inside any window of consecutive jobs is the order of those global ranks (ties go to the
lower index in both). :func:`device_keys` is the vectorised device twin (float64, XLA's own
``log10``/``log2``, so equal keys may be broken differently; tests and the environment use the
host ranks).

The codes are the reference's ``sched_algo`` indices; names shared with RLScheduler's heuristics
(:data:`jaxsched.policies.heuristics.POLICIES`) reuse their keys, except SJF, whose ties go to
fewer processors here ((q, n) instead of (q, s)).

Codes 16-18 are not the reference's: RLScheduler's F2, F3 and F4 (Carastan-Santos and de Camargo's
learned priority functions, the same keys as :func:`jaxsched.policies.heuristics.host_keys`), an
extension for issue 49, where F3 or F4 is the strongest heuristic of SDSC-SP2 held out, so that an
inspector can act on top of the best base there. The reference's 16 codes are unchanged.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H

__all__ = [
    "BASES",
    "REFERENCE_BASES",
    "base_code",
    "host_base_keys",
    "trace_rank",
    "device_keys",
    "window_rank",
]

#: Base names in ``sched_algo`` order (spec §4).
BASES: tuple[str, ...] = tuple(
    "fcfs lcfs sqf lqf sjf ljf saf laf sexp lexp srf lrf multifactor f1 wfp3 unicep".split()
) + ("f2", "f3", "f4")  # 16-18: an extension (module docstring)
#: the number of the reference's own bases (``sched_algo`` 0-15)
REFERENCE_BASES = 16
_ALIASES = {"smallest": "sqf", "largest": "lqf", "lpf": "ljf", "slurm": "multifactor"}
#: bases whose key is RLScheduler's heuristic of the same (or aliased) name
_SHARED = {
    "fcfs": "fcfs",
    "lcfs": "lcfs",
    "sqf": "smallest",
    "ljf": "ljf",
    "saf": "saf",
    "srf": "srf",
    "f1": "f1",
    "f2": "f2",
    "f3": "f3",
    "f4": "f4",
    "wfp3": "wfp3",
    "unicep": "unicep",
}
#: normaliser of the multifactor age factor (12 h, as the reference)
AGE_NORM = 43200.0


def base_code(name) -> int:
    """The ``sched_algo`` index of a base name (or an index given as int / digit string)."""
    if isinstance(name, (int, np.integer)) or (isinstance(name, str) and name.isdigit()):
        code = int(name)
        if not 0 <= code < len(BASES):
            raise ConfigError(f"base index {code} is outside 0..{len(BASES) - 1}")
        return code
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in BASES:
        raise ConfigError(f"unknown base scheduler {name!r}; choose from {', '.join(BASES)}")
    return BASES.index(key)


def host_base_keys(code, s, q, n, wait=None, num_procs=None) -> tuple:
    """Exact keys (numpy float64, most significant first) of base ``code`` (name or index).

    Args:
      s, q, n: int ``[...]`` submit time, requested time, processors; wait: int ``[...]`` the
      SWF wait field (multifactor only); num_procs: P (multifactor only).
    Returns:
      a tuple of float64 arrays; remaining ties go to the lower trace index.
    """
    name = BASES[base_code(code)]
    if name in _SHARED:
        return H.host_keys(_SHARED[name], s, q, n)
    sf = np.asarray(s, np.float64)
    qf = np.asarray(q, np.float64)
    nf = np.asarray(n, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if name == "lqf":
            return (-nf,)
        if name == "sjf":
            return (qf, nf)
        if name == "laf":
            return (-(qf * nf),)
        if name in ("sexp", "lexp"):
            sexp = ((-1.0 - sf) + qf) / nf
            return (sexp if name == "sexp" else -sexp,)
        if name == "lrf":
            return (-np.where(nf > 0, qf / nf, np.inf),)
        # multifactor
        if wait is None or num_procs is None:
            raise ConfigError("the multifactor base needs the SWF wait field and MaxProcs")
        wf = np.asarray(wait, np.float64)
        return (-(1000.0 * wf / AGE_NORM + 1000.0 * (1.0 - nf / float(num_procs))),)


def trace_rank(code, s, q, n, wait=None, num_procs=None) -> np.ndarray:
    """int32 ``[M]`` rank of every job of a whole trace in ascending (keys…, index) order;
    inside any window the smallest rank is the base's choice (NaN keys rank last)."""
    return H.rank_by(host_base_keys(code, s, q, n, wait, num_procs))


def window_rank(global_rank) -> jnp.ndarray:
    """Device: the rank (int32 ``[L]``, a permutation of ``0..L−1``) of each job of a window
    from the global ranks of its jobs (int ``[L]``, distinct)."""
    order = jnp.argsort(global_rank)
    L = global_rank.shape[0]
    return jnp.zeros(L, jnp.int32).at[order].set(jnp.arange(L, dtype=jnp.int32))


def device_keys(code, s, q, n, wait, num_procs):
    """Device twin of :func:`host_base_keys`: ``(primary, secondary)`` float64 ``[L]`` keys of
    base ``code`` (int32 scalar, traced allowed; secondary is 0 except for SJF's processors).
    ``wait``: int64 ``[L]`` SWF wait field; ``num_procs``: P."""
    sf = s.astype(jnp.float64)
    qf = q.astype(jnp.float64)
    nf = n.astype(jnp.float64)
    pos = lambda x: jnp.where(x > 0, x, 0.1)  # noqa: E731
    w_bug = -1.0 - sf
    sexp = (w_bug + qf) / nf
    keys = jnp.stack(
        [
            sf,
            -sf,
            nf,
            -nf,
            qf,
            -qf,
            qf * nf,
            -(qf * nf),
            sexp,
            -sexp,
            qf / nf,
            -(qf / nf),
            -(1000.0 * wait.astype(jnp.float64) / AGE_NORM + 1000.0 * (1.0 - nf / num_procs)),
            jnp.log10(pos(qf)) * nf + 870.0 * jnp.log10(pos(sf)),
            -jnp.power(w_bug / qf, 3.0) * nf,
            -(w_bug + 1e-15) / (jnp.log2(nf + 1e-15) * qf),
            # 16-18: RLScheduler's F2-F4, its own device keys
            *(
                H.static_key(H.POLICY_CODE[p], s, q, n, jnp.zeros_like(sf))
                for p in ("f2", "f3", "f4")
            ),
        ]
    )
    second = jnp.where(code == 4, nf, jnp.where(code == 2, sf, 0.0))
    return keys[code], second
