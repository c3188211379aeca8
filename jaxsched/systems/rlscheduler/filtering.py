"""Trajectory filtering (spec ``rlscheduler.md`` §7): which sampled job sequences are trained on.

The rule looks at one number per sequence — the average metric (e.g. bsld) that SJF achieves on
it — and accepts the sequence when that number lies strictly inside an interval ``(lower,
upper)``:

* paper: ``(median, 2 * mean)`` of the SJF values over the candidate sequences
  (:func:`paper_bounds`; PIK-IPLEX-2009 gives (1, 1460));
* reference code: the fixed interval ``(10, 150)`` (:data:`REFERENCE_BOUNDS`), applied with the
  code's off-by-one — the decision for start index ``s`` uses the SJF value of the sequence
  starting at ``s + 1`` (:func:`start_acceptance` with ``reference_offset=True``);
* off: accept everything (no filter object at all).

Training has two phases: phase 1 trains on accepted sequences only, phase 2 on all sequences,
continuing from the phase-1 model.  :class:`TrajectoryFilter` carries the interval and the
length of phase 1 in updates (``phase1_updates``; None = phase 1 never ends, so a separate run
with the filter off is phase 2, as in the reference).

Two ways to use it, both pure and jit/vmap friendly:

1. Environment side (what the reference does; keeps the batch size fixed): compute the SJF value
   for every start index once (the vectorised simulator makes that cheap), turn it into a
   boolean table with :func:`start_acceptance`, and let the environment's reset draw starts with
   :func:`sample_accepted_starts` (a draw uniform over the accepted starts — what redrawing until
   acceptance converges to; switch tables between phases).
2. Trainer side: give :func:`jaxsched.train.make_train` an
   ``episode_filter=jaxsched.train.EpisodeFilter(rule, value)``, the rule a
   :class:`TrajectoryFilter` and ``value(timestep) -> float`` reading the episode's SJF value
   from the environment's timestep; rejected episodes are collected but carry no weight, so the number
   of episodes per update varies (see the ``episodes`` metric).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxsched.envs.starts import sample_accepted_starts
from jaxsched.errors import ConfigError

__all__ = [
    "REFERENCE_BOUNDS",
    "TrajectoryFilter",
    "paper_bounds",
    "in_range",
    "start_acceptance",
    "sample_accepted_starts",
    "sjf_by_start",
    "FILTERS",
    "make_filter",
]

#: the ``--filter`` choices of ``jaxsched train``
FILTERS = ("off", "paper", "reference")

REFERENCE_BOUNDS: tuple[float, float] = (10.0, 150.0)
"""The reference code's fixed acceptance interval (exclusive at both ends)."""


def paper_bounds(sjf_values) -> tuple[float, float]:
    """The paper's interval ``(median, 2 * mean)`` of the SJF results (host-side, float64).

    Args:
        sjf_values: SJF's sequence metric for each candidate sequence, any shape; NaN entries
            (e.g. start indices without a full sequence) are ignored.
    """
    v = np.asarray(sjf_values, dtype=np.float64).ravel()
    v = v[~np.isnan(v)]
    if v.size == 0:
        raise ConfigError("paper_bounds: no SJF values given")
    return float(np.median(v)), float(2.0 * np.mean(v))


def in_range(values, lower, upper):
    """``lower < values < upper`` element-wise (bool, same shape as ``values``)."""
    values = jnp.asarray(values)
    return (values > lower) & (values < upper)


def start_acceptance(sjf_by_start, lower: float, upper: float, *, reference_offset: bool = False):
    """Boolean acceptance table over start indices.

    Args:
        sjf_by_start: float ``[U]``; entry ``s`` is SJF's metric on the sequence starting at
            start index ``s`` (NaN where there is no full sequence: never accepted).
        lower, upper: the open interval.
        reference_offset: reproduce the reference's off-by-one — start ``s`` is accepted
            according to the value of start ``s + 1`` (the last start is then never accepted).

    Returns:
        bool ``[U]``.
    """
    v = jnp.asarray(sjf_by_start)
    if reference_offset:
        v = jnp.concatenate([v[1:], jnp.full((1,), jnp.nan, v.dtype)])
    return in_range(v, lower, upper)  # NaN compares False


@dataclasses.dataclass(frozen=True)
class TrajectoryFilter:
    """An acceptance interval plus the two-phase schedule.

    Attributes:
        lower, upper: accept a sequence when ``lower < value < upper``.
        phase1_updates: number of updates of phase 1 (filter on); from update index
            ``phase1_updates`` on (0-based, i.e. after that many updates) everything is
            accepted.  None: the filter never switches off.
        mode: ``"paper"``, ``"reference"`` or ``"custom"`` (informational; recorded in
            checkpoints).
        reference_offset: whether environment-side tables should use the reference's
            off-by-one (:meth:`start_table`).
    """

    lower: float
    upper: float
    phase1_updates: int | None = None
    mode: str = "custom"
    reference_offset: bool = False

    def __post_init__(self):
        if not (float(self.lower) < float(self.upper)):
            raise ConfigError(
                f"TrajectoryFilter: need lower < upper, got ({self.lower}, {self.upper})"
            )
        if self.phase1_updates is not None and int(self.phase1_updates) < 0:
            raise ConfigError("TrajectoryFilter: phase1_updates must be None or >= 0")
        if self.mode not in ("paper", "reference", "custom"):
            raise ConfigError(f"TrajectoryFilter: unknown mode {self.mode!r}")

    @classmethod
    def paper(cls, sjf_values, phase1_updates: int | None = None) -> TrajectoryFilter:
        """The paper's rule: ``(median, 2 * mean)`` of ``sjf_values`` (all candidate
        sequences, not a training batch)."""
        lo, hi = paper_bounds(sjf_values)
        if not lo < hi:  # e.g. all values equal to 0: nothing could pass
            raise ConfigError(f"TrajectoryFilter.paper: empty interval ({lo}, {hi})")
        return cls(lo, hi, phase1_updates, "paper", False)

    @classmethod
    def reference(cls, phase1_updates: int | None = None) -> TrajectoryFilter:
        """The reference code's rule: fixed ``(10, 150)`` with the start-index off-by-one."""
        return cls(REFERENCE_BOUNDS[0], REFERENCE_BOUNDS[1], phase1_updates, "reference", True)

    def active(self, update):
        """Whether the filter applies at update index ``update`` (0-based; bool array)."""
        update = jnp.asarray(update)
        if self.phase1_updates is None:
            return jnp.ones(update.shape, bool)
        return update < self.phase1_updates

    def accept(self, values, update=0):
        """Accepted sequences among ``values`` at update index ``update`` (bool, shape of
        ``values``): inside the interval, or anything once phase 1 is over."""
        return in_range(values, self.lower, self.upper) | jnp.logical_not(self.active(update))

    def start_table(self, sjf_by_start, update=0):
        """:func:`start_acceptance` for this filter at update ``update`` (all True in phase 2)."""
        table = start_acceptance(
            sjf_by_start, self.lower, self.upper, reference_offset=self.reference_offset
        )
        return table | jnp.logical_not(self.active(update))


def sjf_by_start(
    jobs,
    length: int,
    low: int,
    high: int,
    *,
    backfill: str = "none",
    compat: bool = True,
    metric: str = "bsld",
) -> np.ndarray:
    """SJF's average ``metric`` on the ``length``-job sequence at every start index in
    ``[low, high)`` (the environment's sampling range), in one batched simulator call.

    Returns float64 ``[jobs.n_jobs]``, NaN outside ``[low, high)``."""
    from jaxsched.sim.evaluate import evaluate

    out = np.full(jobs.n_jobs, np.nan)
    low, high = max(int(low), 0), min(int(high), jobs.n_jobs - int(length) + 1)
    if high <= low:
        return out
    starts = np.arange(low, high)
    res = evaluate(jobs, starts, int(length), ["sjf"], [backfill], compat=compat, metrics=(metric,))
    out[starts] = [r["value"] for r in res.rows]  # one row per start, in start order
    return out


def make_filter(
    mode: str, sjf_values, phase1_updates: int | None = None
) -> TrajectoryFilter | None:
    """The filter of a ``--filter`` choice (:data:`FILTERS`): None for ``off``, else
    :meth:`TrajectoryFilter.paper` (bounds from ``sjf_values``) or
    :meth:`TrajectoryFilter.reference`."""
    if mode == "off":
        return None
    if mode == "paper":
        return TrajectoryFilter.paper(sjf_values, phase1_updates)
    if mode == "reference":
        return TrajectoryFilter.reference(phase1_updates)
    raise ConfigError(f"unknown trajectory filter {mode!r}; choose from {', '.join(FILTERS)}")
