"""A priority function tuned on a trace's training jobs (issue 47 §2): the cheapest "learned"
scheduler, and the bar for the deep ones.

The score is log-linear in the features the heuristics use, smaller first::

    key = w_q * log10(q') + w_n * log10(n') + w_s * s / 3600

with ``q' = max(q, 1)`` the requested time (s), ``n' = max(n, 1)`` the requested processors and
``s`` the submit time (s). The last term is also the waiting-time term: at any decision time
``t``, ``s / 3600 = (t - w) / 3600``, the same for every waiting job up to ``-w / 3600`` (``w``
in hours), so a linear aging term orders jobs exactly like it, and the key stays static (one
exact host rank per sequence, like FCFS, SJF or F1; ties to the lower trace index). Ranks are
unchanged by a positive factor, so only the direction of ``w`` matters (weights are stored with
unit norm). FCFS is ``(0, 0, 1)``, SJF ``(1, 0, 0)``, smallest-first ``(0, 1, 0)``.

A model file is JSON: ``{"kind": "tuned-priority", "features": [...], "weights": [w_q, w_n,
w_s], ...}`` with what it was tuned on (trace, job range, backfilling, metric, the command);
``jaxsched evaluate --policy tuned:PATH`` runs it (``jaxsched tune``,
:mod:`jaxsched.policies.tune`, writes it; ``tuned:tuned-sdsc-easy`` and
``tuned:tuned-lublin1-easy`` are shipped in ``jaxsched/models``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.policies.heuristics import rank_by

__all__ = ["FEATURES", "PREFIX", "TunedPriority", "as_tuned", "load", "save"]

FEATURES = ("log10_req", "log10_procs", "submit_hours")
#: the shipped models' folder (``tuned:NAME`` finds ``SHIPPED / NAME``)
SHIPPED = Path(__file__).resolve().parents[1] / "models"
PREFIX = "tuned:"


@dataclasses.dataclass(frozen=True)
class TunedPriority:
    """A tuned priority: ``weights`` (three floats, :data:`FEATURES` order) and the ``name``
    it is reported under (``tuned:PATH`` when loaded from a file)."""

    weights: tuple
    name: str = "tuned"

    def keys(self, s, q, n) -> np.ndarray:
        """float64 ``[..., L]`` keys of jobs with submit ``s``, request ``q``, processors ``n``
        (int arrays ``[..., L]``)."""
        wq, wn, ws = (float(w) for w in self.weights)
        q = np.maximum(np.asarray(q, np.float64), 1.0)
        n = np.maximum(np.asarray(n, np.float64), 1.0)
        return wq * np.log10(q) + wn * np.log10(n) + ws * (np.asarray(s, np.float64) / 3600.0)

    def rank(self, s, q, n) -> np.ndarray:
        """int32 ``[..., L]`` rank of every job in ascending (key, index) order per row."""
        return rank_by((self.keys(s, q, n),))


def as_tuned(policy) -> TunedPriority | None:
    """The :class:`TunedPriority` of a policy entry (an instance, or ``"tuned:PATH"``), else
    None (a heuristic name)."""
    if isinstance(policy, TunedPriority):
        return policy
    if isinstance(policy, str) and policy.strip().lower().startswith(PREFIX):
        path = policy.strip()[len(PREFIX) :]
        return dataclasses.replace(load(path), name=policy.strip())
    return None


def load(path) -> TunedPriority:
    """Read a model file (``path``, ``path/model.json``, or the name of a shipped model under
    ``jaxsched/models``, e.g. ``tuned-sdsc-easy``); ConfigError if it is not one."""
    p = Path(path)
    if not p.exists() and (SHIPPED / str(path)).is_dir():
        p = SHIPPED / str(path)
    if p.is_dir():
        p = p / "model.json"
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"tuned priority {path}: cannot read it ({e})") from None
    if d.get("kind") != "tuned-priority" or list(d.get("features", [])) != list(FEATURES):
        raise ConfigError(f"tuned priority {path}: not a tuned-priority model of {FEATURES}")
    w = [float(x) for x in d["weights"]]
    if len(w) != len(FEATURES) or not np.all(np.isfinite(w)):
        raise ConfigError(f"tuned priority {path}: weights must be {len(FEATURES)} finite numbers")
    return TunedPriority(tuple(w), name=f"{PREFIX}{path}")


def save(path, weights, **meta) -> Path:
    """Write a model file ``path/model.json`` (unit-norm weights, ``meta`` added) whole or not
    at all; returns it.  The folder ``path`` is made if missing, its parent must exist (a
    one-line ConfigError otherwise)."""
    from jaxsched.fileio import atomic_write, check_folder

    w = np.asarray(weights, np.float64)
    w = w / np.linalg.norm(w)
    out = Path(path)
    check_folder(out)
    out.mkdir(exist_ok=True)
    d = {"kind": "tuned-priority", "features": list(FEATURES), "weights": w.tolist(), **meta}
    atomic_write(out / "model.json", json.dumps(d, indent=1) + "\n")
    return out / "model.json"
