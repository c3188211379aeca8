"""Named train / validation / test splits, one definition for every system (issue 47).

A learned claim of this project is a held-out claim: the jobs a policy is tested on are jobs
no training or model choice drew from.  This module says which jobs those are.

* **Real traces** (:func:`chronological_split`): the loaded job list (file order = submit
  order) cut into three consecutive index ranges ``[first, last)``: ``train`` = the first 50 %
  of the jobs, ``validation`` = the next 10 %, ``test`` = the last 40 % (fractions
  configurable).  Why these defaults: a chronological cut is how a site uses a scheduler
  (trained on last year's log, run on next month's jobs), so the test jobs come after
  everything trained on and load drifts are part of the test; 40 % of SDSC-SP2 (≈ 29,000 jobs)
  or HPC2N (≈ 81,000) holds hundreds of 1024-job test sequences over many months; 10 % is
  enough for model choice on a handful of sequences and is kept out of the training range so
  that choosing a checkpoint does not reuse training jobs; half of the jobs is still several
  times the 10,000 jobs the RLScheduler paper trained on.  On a 10,000-job Lublin trace the
  validation range is only 1,000 jobs (validation sequences must be shorter).
* **DRAS's months** (:func:`months_split`): the same :class:`Split`, its boundaries the
  first job submitted at or after the end of the training and validation months (spec
  ``dras.md`` §9, as :func:`jaxsched.workload.dras.split_trace` cuts the trace).
* **Generated traces** (:data:`GENERATOR_SPLITS`): fresh jobs by generator seed; each
  generator's training, validation and test seeds are named, disjoint sets of integers.

A run records its split and the job index range it drew from with :func:`run_json_fields`
(``run.json``'s ``split`` and ``jobs_seen: [first, last)``); :func:`jobs_seen_of` reads it back
(inferring it for run directories written before it existed) and :func:`check_unseen` refuses a
model that saw the jobs it is to be tested on.  Host-side numpy only.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from jaxsched.errors import ConfigError, as_int

__all__ = [
    "SPLIT_NAMES",
    "DEFAULT_FRACTIONS",
    "Split",
    "parse_fractions",
    "chronological_split",
    "months_split",
    "starts_in_range",
    "SeedSplit",
    "GENERATOR_SPLITS",
    "seed_split",
    "run_json_fields",
    "training_record",
    "with_training_split",
    "validation_starts",
    "jobs_seen_of",
    "file_sha256",
    "ranges_overlap",
    "check_unseen",
]

#: the parts of a split, in chronological order
SPLIT_NAMES = ("train", "validation", "test")
#: default fractions of the jobs in train, validation and test (see the module docstring)
DEFAULT_FRACTIONS = (0.5, 0.1, 0.4)


@dataclasses.dataclass(frozen=True)
class Split:
    """Three consecutive job index ranges ``[first, last)`` of a loaded job list.

    Attributes:
      n_jobs: jobs in the loaded list; the ranges cover ``[0, n_jobs)`` without overlap.
      train, validation, test: ``(first, last)`` int pairs, ``train[0] == 0``,
        ``train[1] == validation[0]``, ``validation[1] == test[0]``, ``test[1] == n_jobs``.
      basis: how the boundaries were chosen: ``"fractions"`` or ``"months"``.
      fractions: the ``(train, validation, test)`` fractions (floats summing to 1) of a
        ``"fractions"`` split; for ``"months"``, the jobs' actual fractions.
      months: ``(train, validation)`` months of a ``"months"`` split, else None.
    """

    n_jobs: int
    train: tuple[int, int]
    validation: tuple[int, int]
    test: tuple[int, int]
    basis: str = "fractions"
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS
    months: tuple[int, int] | None = None

    def range(self, name: str) -> tuple[int, int]:
        """The ``(first, last)`` job index range of the part ``name`` (one of
        :data:`SPLIT_NAMES`); ConfigError for another name."""
        if name not in SPLIT_NAMES:
            raise ConfigError(f"unknown split {name!r}; choose from {', '.join(SPLIT_NAMES)}")
        return getattr(self, name)

    def to_json(self) -> dict:
        """``{"basis", "fractions", "n_jobs", "train", "validation", "test"[, "months"]}``
        with the ranges as ``[first, last)`` lists (what ``run.json`` records)."""
        d = {
            "basis": self.basis,
            "fractions": [float(f) for f in self.fractions],
            "n_jobs": int(self.n_jobs),
            **{name: [int(x) for x in self.range(name)] for name in SPLIT_NAMES},
        }
        if self.months is not None:
            d["months"] = [int(m) for m in self.months]
        return d


def parse_fractions(text) -> tuple[float, float, float]:
    """``"0.5,0.1,0.4"`` (or a sequence of three numbers) -> the checked ``(train,
    validation, test)`` fractions: finite, train and test > 0, validation >= 0, summing to 1
    (within 1e-6).  ConfigError naming ``--split-fractions`` otherwise."""
    if isinstance(text, str):
        parts = [p.strip() for p in text.split(",")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ConfigError(
                f"--split-fractions: {text!r} is not three numbers TRAIN,VALIDATION,TEST "
                "(e.g. 0.5,0.1,0.4)"
            ) from None
    else:
        values = [float(v) for v in text]
    if len(values) != 3:
        raise ConfigError(
            f"--split-fractions: {len(values)} number(s) given, need three: "
            "TRAIN,VALIDATION,TEST (e.g. 0.5,0.1,0.4)"
        )
    train, val, test = values
    if not all(math.isfinite(v) for v in values) or train <= 0 or test <= 0 or val < 0:
        raise ConfigError(
            f"--split-fractions {train:g},{val:g},{test:g}: train and test must be > 0 and "
            "validation >= 0"
        )
    if abs(train + val + test - 1.0) > 1e-6:
        raise ConfigError(
            f"--split-fractions {train:g},{val:g},{test:g}: the fractions sum to "
            f"{train + val + test:g}, not 1"
        )
    return (train, val, test)


def chronological_split(n_jobs: int, fractions=DEFAULT_FRACTIONS) -> Split:
    """The chronological split of a job list of ``n_jobs`` jobs: boundaries
    ``round(n_jobs * train)`` and ``round(n_jobs * (train + validation))``.  ``fractions``: three
    numbers or ``"A,B,C"`` (:func:`parse_fractions`).  ConfigError when the training or the
    test part would hold no job."""
    n = as_int(n_jobs, "n_jobs", 0)
    fr = parse_fractions(fractions)
    b1 = int(round(n * fr[0]))
    b2 = int(round(n * (fr[0] + fr[1])))
    if b1 < 1 or b2 >= n:
        raise ConfigError(
            f"a trace of {n} jobs is too short for the split {fr[0]:g},{fr[1]:g},{fr[2]:g}: "
            "the training and the test part each need at least one job"
        )
    return Split(n, (0, b1), (b1, b2), (b2, n), "fractions", fr)


def months_split(submit, train_months: int = 2, validation_months: int = 1, month=None) -> Split:
    """DRAS's split (spec ``dras.md`` §9) as a :class:`Split`: the jobs submitted in the first
    ``train_months`` months (30 days, or ``month`` seconds, from the first submit) train, the
    next ``validation_months`` validate, the rest test; the same jobs as
    :func:`jaxsched.workload.dras.split_trace`.  ``submit``: int ``[n_jobs]`` submit times
    in file order (non-decreasing; ConfigError otherwise or when a part is empty)."""
    from jaxsched.workload.dras import MONTH

    t = np.asarray(submit, np.int64)
    if t.ndim != 1 or t.size == 0:
        raise ConfigError("months split: the trace has no jobs")
    if np.any(np.diff(t) < 0):
        raise ConfigError("months split: the submit times are not in order")
    m = MONTH if month is None else as_int(month, "month", 1)
    tm, vm = as_int(train_months, "train months", 1), as_int(validation_months, "months", 0)
    rel = t - t[0]
    b1 = int(np.searchsorted(rel, tm * m, side="left"))
    b2 = int(np.searchsorted(rel, (tm + vm) * m, side="left"))
    n = int(t.size)
    if b2 >= n:
        raise ConfigError(
            f"months split: no job after the first {tm + vm} months of the trace "
            f"({rel[-1] / m:.1f} months long): the test period is empty"
        )
    fr = (b1 / n, (b2 - b1) / n, (n - b2) / n)
    return Split(n, (0, b1), (b1, b2), (b2, n), "months", fr, (tm, vm))


def starts_in_range(job_range, length: int, n_sequences: int, seed: int = 0) -> np.ndarray:
    """``n_sequences`` starts of ``length``-job sequences lying wholly inside ``job_range`` =
    ``(first, last)``: uniform over ``first .. last - length`` with
    :func:`jaxsched.workload.sampling.uniform_starts` (``default_rng(seed)``); int64
    ``[n_sequences]``.  ConfigError when the range is shorter than ``length``."""
    from jaxsched.workload.sampling import uniform_starts

    first, last = (int(x) for x in job_range)
    L = as_int(length, "length", 1)
    if last - first < L:
        raise ConfigError(
            f"jobs [{first}, {last}) hold {last - first} jobs, fewer than the {L} of one "
            "sequence: use shorter sequences or larger split fractions"
        )
    return uniform_starts(last - first, L, n_sequences, seed) + first


def ranges_overlap(a, b) -> bool:
    """True when the half-open ranges ``a = (first, last)`` and ``b`` share an index."""
    return max(int(a[0]), int(b[0])) < min(int(a[1]), int(b[1]))


@dataclasses.dataclass(frozen=True)
class SeedSplit:
    """Disjoint generator-seed sets of a workload generator: jobs generated with a seed of
    ``train`` may be trained on, ``validation`` chooses models, ``test`` reports.  Each set is a
    ``range`` of integer seeds; ``how`` says how the generator uses them."""

    generator: str
    train: range
    validation: range
    test: range
    how: str

    def __post_init__(self):
        parts = [(n, getattr(self, n)) for n in SPLIT_NAMES]
        for i, (a, ra) in enumerate(parts):
            for b, rb in parts[i + 1 :]:
                if ranges_overlap((ra.start, ra.stop), (rb.start, rb.stop)):
                    raise ConfigError(f"{self.generator}: the {a} and {b} seeds overlap")

    def seeds(self, name: str) -> range:
        """The seeds of the part ``name`` (one of :data:`SPLIT_NAMES`)."""
        if name not in SPLIT_NAMES:
            raise ConfigError(f"unknown split {name!r}; choose from {', '.join(SPLIT_NAMES)}")
        return getattr(self, name)


def _one(seed: int) -> range:
    return range(seed, seed + 1)


#: the named seed sets of every workload generator (see docs/splits.md)
GENERATOR_SPLITS = {
    s.generator: s
    for s in (
        SeedSplit(
            "lublin-1",
            _one(1487089399),
            _one(20261129),
            _one(20261128),
            "`jaxsched trace generate lublin --preset lublin-1 --seed S`: the preset's own seed "
            "(the shipped 10,000-job trace) trains; RESULTS §14.14's fresh trace tests",
        ),
        SeedSplit(
            "lublin-2",
            _one(1568124476),
            _one(20261129),
            _one(20261128),
            "`jaxsched trace generate lublin --preset lublin-2 --seed S`, as lublin-1",
        ),
        SeedSplit(
            "deeprm",
            range(0, 10_000),
            _one(314159),
            _one(271828),
            "A2cScheduler / DeepRM jobsets: training jobsets come from the run's --seed, the "
            "fixed evaluation jobsets from --eval-seed (314159 chooses, 271828 tests)",
        ),
        SeedSplit(
            "dras",
            range(0, 1_000_000_000),
            range(2_000_000_000, 2_000_001_000),
            range(3_000_000_000, 3_000_001_000),
            "DRAS's sampled and synthetic jobsets (seed = curriculum seed x 1,000,003 + jobset "
            "index, fitted on the training months); DRAS itself validates and tests on the "
            "real months of months_split",
        ),
    )
}


def seed_split(generator: str) -> SeedSplit:
    """The :class:`SeedSplit` of ``generator`` (a key of :data:`GENERATOR_SPLITS`)."""
    try:
        return GENERATOR_SPLITS[generator]
    except KeyError:
        raise ConfigError(
            f"no seed split for generator {generator!r}; known: {', '.join(GENERATOR_SPLITS)}"
        ) from None


def run_json_fields(split: Split, name: str, jobs_seen) -> dict:
    """The ``run.json`` entries of a run trained on the part ``name`` of ``split``:
    ``{"split": {"name": name, **split.to_json()}, "jobs_seen": [first, last)}``, where
    ``jobs_seen`` is the job index range its training and validation drew from.  Every system
    records its split through this function, so that :func:`jobs_seen_of` reads all alike."""
    split.range(name)  # checks the name
    first, last = (int(x) for x in jobs_seen)
    return {"split": {"name": name, **split.to_json()}, "jobs_seen": [first, last]}


def training_record(n_jobs: int, fractions=DEFAULT_FRACTIONS, validated: bool = True) -> dict:
    """:func:`run_json_fields` of a run that trains on the ``train`` part of the
    :func:`chronological_split` of ``n_jobs`` jobs and, when ``validated``, chooses its model
    on the ``validation`` part: ``jobs_seen`` = ``[0, validation end)``, else ``[0, train
    end)``."""
    sp = chronological_split(n_jobs, fractions)
    return run_json_fields(sp, "train", (0, sp.validation[1] if validated else sp.train[1]))


def with_training_split(rc, count_jobs, split, fractions=None, *, validated: bool):
    """A run configuration ``rc`` (a frozen dataclass with fields ``job_slice``, ``split`` and
    ``jobs_seen``) trained on the ``split`` part (``"train"``; None: ``rc`` itself) of the
    chronological split (``fractions``, default :data:`DEFAULT_FRACTIONS`) of its trace, whose
    job count ``count_jobs()`` gives (called only with a split): ``job_slice`` = the training
    part's end (the trainers draw their sequences from the first ``job_slice`` jobs) and
    :func:`training_record`'s ``split`` and ``jobs_seen``; the trainer must draw its validation
    sequences from ``rc.split["validation"]``.  One-line ConfigErrors for ``fractions``
    without ``split`` and another part than ``train``."""
    if split is None:
        if fractions is not None:
            raise ConfigError("--split-fractions needs --split")
        return rc
    if split != "train":
        raise ConfigError(f"--split {split}: a run trains on the train split only")
    rec = training_record(count_jobs(), fractions or DEFAULT_FRACTIONS, validated=validated)
    return dataclasses.replace(rc, job_slice=rec["split"]["train"][1], **rec)


def validation_starts(split_record: dict, length: int, n: int, seed: int, flag: str):
    """A split run's ``n`` validation starts (int64 ``[n]``): :func:`starts_in_range` over the
    ``validation`` range of its ``split`` record (``run.json``'s ``split``); a too-short range
    is a ConfigError naming the length flag ``flag`` (e.g. ``--val-jobs``)."""
    try:
        return starts_in_range(split_record["validation"], length, n, seed)
    except ConfigError as e:
        raise ConfigError(f"{flag} {length} with --split: {e}") from None


def jobs_seen_of(run: dict):
    """The job index range ``(first, last)`` a run's training and validation drew from, read
    from its ``run.json`` dict (``last`` None: to the end of the trace).  Its ``jobs_seen``;
    for runs written before it existed, inferred conservatively: an RLScheduler run's
    ``job_slice`` N > 0 gives ``(0, N)`` (its trainer drew training and validation sequences
    from the first N jobs); any other run on a trace (``job_slice`` 0, a SchedInspector run,
    whose validation drew from the whole trace, a run without ``job_slice``) gives
    ``(0, None)``; None when the run names no trace either (unknown)."""
    seen = run.get("jobs_seen")
    if seen is not None:
        first, last = seen
        return int(first), None if last is None else int(last)
    job_slice = run.get("job_slice")
    rlscheduler = run.get("system", "rlscheduler") == "rlscheduler"
    if rlscheduler and isinstance(job_slice, int) and not isinstance(job_slice, bool):
        return (0, job_slice if job_slice > 0 else None)
    if run.get("trace") or job_slice is not None:
        return (0, None)
    return None


#: file names of the same jobs under another name: the RLScheduler repository's Lublin traces
#: are this repository's ``traces/lublin-1.swf`` and ``lublin-2.swf`` (same submit, run and size
#: of every job)
TRACE_ALIASES = {"lublin_256.swf": "lublin-1.swf", "lublin_256_new2.swf": "lublin-2.swf"}


def _trace_name(path) -> str:
    """A trace's file name without ``.gz`` (the same trace under another folder matches), its
    :data:`TRACE_ALIASES` name where it has one."""
    name = Path(str(path)).name
    name = name[: -len(".gz")] if name.endswith(".gz") else name
    return TRACE_ALIASES.get(name, name)


def file_sha256(path) -> str:
    """SHA-256 (hex) of a file's bytes (a trace's content hash, ``run.json``'s
    ``trace_sha256``); one-line ConfigError when it cannot be read."""
    import hashlib

    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    return h.hexdigest()


def check_unseen(run: dict, model_name: str, trace, test_range, allow_seen: bool) -> bool:
    """Whether a model may be reported on the jobs ``test_range = (first, last)`` of
    ``trace``: False (not seen) when its run trained on another trace or its ``jobs_seen``
    (:func:`jobs_seen_of`) lies outside the range; otherwise True ("in-sample") with
    ``allow_seen``, else a one-line ConfigError naming the model and the overlap.  The trace
    is the run's own when its content hash equals the run's ``trace_sha256`` (a renamed copy
    is the same jobs) or, as for runs without a stored hash, by file name (``.gz`` and
    :data:`TRACE_ALIASES` aside)."""
    own, own_hash = run.get("trace"), run.get("trace_sha256")
    same_name = bool(own) and _trace_name(own) == _trace_name(trace)
    same_bytes = bool(own_hash) and Path(str(trace)).is_file() and file_sha256(trace) == own_hash
    if own and not (same_name or same_bytes):
        return False
    seen = jobs_seen_of(run)
    first, last = (int(x) for x in test_range)
    if seen is None:
        why = "its run.json records no jobs_seen (it may have trained on any of them)"
    else:
        hi = math.inf if seen[1] is None else seen[1]
        if not max(seen[0], first) < min(hi, last):
            return False
        shown = "end of the trace" if seen[1] is None else str(seen[1])
        why = f"it trained or was chosen on jobs [{seen[0]}, {shown})"
    if allow_seen:
        return True
    raise ConfigError(
        f"--model {model_name}: {why}, which overlap the evaluated jobs [{first}, {last}); "
        "--allow-seen reports it anyway, labelled in-sample"
    )
