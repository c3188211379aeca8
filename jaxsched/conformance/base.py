"""What every conformance schema shares: the report, the comparison rule, trace lookup, field
checks and the errors (see :mod:`jaxsched.conformance` for the registry).

Nothing here imports JAX: a malformed file is rejected before the simulator is loaded.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable
from pathlib import Path

from jaxsched.errors import ConfigError, JaxschedError

__all__ = [
    "DEFAULT_TOLERANCE",
    "FieldError",
    "Mismatch",
    "Report",
    "SchemaNotSupported",
    "TraceCache",
    "default_traces_dir",
    "find_trace",
    "value_error",
    "require",
]

#: Default tolerance of :func:`value_error` (the reference README's 1e-9, float64).
DEFAULT_TOLERANCE = 1e-9


class FieldError(ConfigError):
    """A reference file that cannot be checked: a missing or ill-typed field, a trace that is not
    found, a name the simulator does not know.  ``str(err)`` is ``"field: what"`` (the caller
    prefixes the file); exit status 2."""

    def __init__(self, field: str | None, message: str):
        self.field, self.message = field, message
        super().__init__(f"{field}: {message}" if field else message)


class SchemaNotSupported(JaxschedError):
    """A reference file of a known schema that this version cannot replay yet (exit status 2)."""


@dataclasses.dataclass
class Mismatch:
    """One value the implementation does not reproduce.

    Attributes:
      where: the value's place in the file, e.g. ``"results[17]"`` or ``"loaded_jobs"``.
      key: what identifies the value, in the file's own terms (``{"start": 1259, "jobs": 1024,
        "policy": "fcfs", "backfill": "none", "metric": "bsld"}``).
      expected: the file's value; got: ours (None if it could not be computed).
      error: :func:`value_error` of the two (``inf`` when ``got`` is None).
    """

    where: str
    key: dict
    expected: object
    got: object
    error: float

    def describe(self) -> str:
        """One line: ``results[17] start=1259 ... metric=bsld: expected 3240.12 got 3240.5 ...``."""
        key = " ".join(f"{k}={v}" for k, v in self.key.items())
        return (
            f"{self.where} {key}: expected {self.expected!r} got {self.got!r} "
            f"|err| {_fmt_err(self.error)}"
        ).replace("  ", " ")

    def to_json(self) -> dict:
        return {
            "where": self.where,
            **self.key,
            "expected": self.expected,
            "got": self.got,
            "error": _json_float(self.error),
        }


@dataclasses.dataclass
class Report:
    """The outcome of checking one file.

    Attributes:
      file: the file as named by the user; schema: the schema's ``NAME``; trace: the trace file
        used (as found in the traces folder), or None.
      total: number of values compared; matched: how many were within the tolerance.
      worst_error: the largest :func:`value_error` over the compared values (0.0 if none).
      mismatches: every value off (file-level checks such as ``loaded_jobs`` included; they are
        not counted in ``total``).
      seconds: wall time of the check; evaluations: number of simulator calls.
    """

    file: str
    schema: str
    trace: str | None = None
    total: int = 0
    matched: int = 0
    worst_error: float = 0.0
    mismatches: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    evaluations: int = 0

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.matched == self.total

    def add(self, where: str, key: dict, expected, got, tolerance: float) -> None:
        """Compare one value and record it (a mismatch if its error exceeds ``tolerance``)."""
        err = value_error(expected, got)
        self.total += 1
        if err <= tolerance:
            self.matched += 1
        else:
            self.mismatches.append(Mismatch(where, key, expected, got, err))
        if not err <= self.worst_error:  # nan-safe max
            self.worst_error = err

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "schema": self.schema,
            "trace": self.trace,
            "total": self.total,
            "matched": self.matched,
            "worst_error": _json_float(self.worst_error),
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "evaluations": self.evaluations,
            "mismatches": [m.to_json() for m in self.mismatches],
        }


def value_error(expected, got) -> float:
    """``|got − expected| / max(1, |expected|)``: relative error for values of magnitude ≥ 1,
    absolute error below (so a tolerance ``t`` is "relative and absolute ``t``").  Equal values
    (two infinities of the same sign, two NaNs) give 0; ``got`` None or a non-number gives inf."""
    if got is None or isinstance(got, bool) or not isinstance(got, (int, float)):
        return math.inf
    e, g = float(expected), float(got)
    if e == g or (math.isnan(e) and math.isnan(g)):
        return 0.0
    d = abs(g - e)
    if math.isnan(d) or math.isinf(d):
        return math.inf
    return d / max(1.0, abs(e))


def _fmt_err(x: float) -> str:
    return "0" if x == 0 else f"{x:.1e}"


def _json_float(x: float):
    return x if math.isfinite(x) else str(x)


def require(doc: dict, key: str, kind, where: str | None = None, *, minimum=None):
    """``doc[key]`` checked to be of ``kind`` (``int`` excludes bool; ``float`` accepts ints;
    ``str`` must be non-empty); raises :class:`FieldError` naming ``where`` (default ``key``)."""
    where = where or key
    if key not in doc:
        raise FieldError(where, "missing field")
    v = doc[key]
    if kind is int:
        ok = isinstance(v, int) and not isinstance(v, bool)
        what = "an integer"
    elif kind is float:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        what = "a number"
    elif kind is str:
        ok = isinstance(v, str) and v.strip() != ""
        what = "a non-empty string"
    elif kind is list:
        ok = isinstance(v, list)
        what = "a list"
    else:  # pragma: no cover - programming error
        raise TypeError(kind)
    if not ok:
        raise FieldError(where, f"must be {what}, got {v!r}"[:200])
    if minimum is not None and v < minimum:
        raise FieldError(where, f"must be >= {minimum}, got {v!r}")
    return v


# ----------------------------------------------------------------------------------------------
# Traces
# ----------------------------------------------------------------------------------------------
def default_traces_dir() -> Path:
    """``$JAXSCHED_SHARED/traces`` if that variable is set, else ``../shared/traces`` relative
    to the current directory (the layout of a checkout beside the shared data)."""
    shared = os.environ.get("JAXSCHED_SHARED")
    if shared:
        return Path(shared) / "traces"
    return Path("..") / "shared" / "traces"


def find_trace(name: str, traces_dir, field: str = "trace") -> Path:
    """The trace a reference file names, looked up by its base name in ``traces_dir``: the name
    itself, else with ``.gz`` added, else without its ``.gz``.  :class:`FieldError` naming
    ``field`` if none exists."""
    base = Path(str(name)).name
    cands = [base]
    if base.endswith(".gz"):
        cands.append(base[: -len(".gz")])
    else:
        cands.append(base + ".gz")
    tdir = Path(traces_dir)
    for c in cands:
        if (tdir / c).is_file():
            return tdir / c
    if not tdir.is_dir():
        raise FieldError(
            field,
            f"{name!r}: the traces folder {tdir} does not exist "
            "(use --traces DIR or set JAXSCHED_SHARED)",
        )
    raise FieldError(field, f"{name!r} not found in {tdir} (looked for {', '.join(cands)})")


class TraceCache:
    """Loads each trace once per command (several reference files may share one).

    ``cache(path, rules)`` → ``read_swf(path).jobs(rules)``."""

    def __init__(self, loader: Callable | None = None):
        self._loader = loader
        self._jobs: dict = {}

    def __call__(self, path, rules: str = "rlscheduler"):
        key = (str(Path(path).resolve()), rules)
        if key not in self._jobs:
            if self._loader is not None:
                self._jobs[key] = self._loader(path, rules)
            else:
                from jaxsched.workload import read_swf

                self._jobs[key] = read_swf(path).jobs(rules)
        return self._jobs[key]
