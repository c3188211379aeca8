"""Standard Workload Format (SWF) traces: reading, validation, cleaning rules and writing.

Host-side numpy only (no JAX): a trace is parsed once into a columnar :class:`Trace`, then turned
into the simulator's :class:`Jobs` by one of the documented cleaning rules
(:func:`prepare_jobs` / :meth:`Trace.jobs`).

File format
-----------
An SWF file (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html) is text. Lines whose
first non-blank character is ``;`` are comments. Comments of the form ``; Label: value`` are
header entries. Every other non-blank line is one job with 18 whitespace-separated numeric
fields (−1 = unknown). Files may be gzip-, bzip2- or xz-compressed. The compression is detected
from the first bytes, not from the file name.

Reading is fast. The job lines go to numpy's C text reader in one call, with int64 for the
integer fields (a strict integer parse, about 4x faster than parsing floats). If that fails,
for example because of ``3.0`` or ``1e2`` in an integer field, one float64 call follows. A slow
line-by-line pass runs only when both fail, to find the bad lines and report or skip them.
HPC2N (202,871 jobs, 19 MB uncompressed) reads in about 0.3–0.4 s on a 2-core machine,
gunzip included.

Validation (``on_error="raise"``, the default, stops at the first problem found)
--------------------------------------------------------------------------------
Problems are reported as :class:`~jaxsched.errors.SWFError` ``"path:line: field: what"``:

* missing/unreadable file (``"path: no such file"``), corrupt compressed data, binary data
  (``"not an SWF file (binary data)"``), no job line at all (``"empty: ..."``);
* a job line without exactly 18 fields (``"path:7: expected 18 fields, found 17"``);
* a field that is not a number, not finite, or not an integer where SWF wants one
  (``"path:7: run (field 4): not a number: 'abc'"``). Fields 6 and 7 (average CPU time, used
  memory) may be fractional. As in the reference parser, a non-integer *partition number*
  (field 16) becomes 0 and is recorded in :attr:`Trace.notes`; it is not an error;
* a submit time earlier than that of a previous job line (``submit (field 2)``);
* a job that needs more processors than the machine: ``max(field 5, field 8) >`` the machine
  size. The machine size is ``max_procs=`` if given, else the ``MaxProcs`` header, else
  ``MaxNodes``. There is no check when none is known;
* a header value that must be an integer and is not (``"path:12: MaxProcs: not an integer:
  'many'"``); ``MaxNodes``/``MaxProcs`` must be positive.

Malformed lines (field count, non-numeric text) are reported before problems that need the
parsed values, except that a value problem on an *earlier* line wins. So the error raised is
always the first bad line of the file.

With ``on_error="skip"``, bad job lines are dropped. Their messages go to :attr:`Trace.skipped`,
and **one** :class:`~jaxsched.errors.SWFWarning` gives the count. An unusable header value is
ignored (treated as absent) and recorded the same way. The order check then compares a line
with the lines that were kept before it. Skipping never makes a file valid that has no usable
job line: that is still an error. Whole-file problems (binary, corrupt, missing) always raise.

Header representation
---------------------
:attr:`Trace.comments` keeps every comment line verbatim, in file order (without the line
break). :func:`write_swf` writes them back. :attr:`Trace.header` maps each label to its raw
value text (stripped). A repeated label (``Note``, ``Queue``, ``Partition``, ...) has its values
**joined with "\\n"** in file order. A comment line without a label of its own, such as an
indented continuation like ``;              http://...``, is appended with ``"\\n"`` to the value
of the label above it. :meth:`Trace.header_values` splits a joined value back into a list. A
label is a word that starts with an upper-case letter and is followed by ``:``. The typed fields
(:attr:`Trace.max_nodes`, ...) hold the *first* occurrence of their label, parsed as an int (the
leading integer: ``"338 (batch partition; 512 total)"`` gives 338), or None when absent.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import os
import re
import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from jaxsched.errors import ConfigError, SWFError, SWFWarning

__all__ = [
    "FIELDS",
    "FIELD_LABELS",
    "FLOAT_FIELDS",
    "RULES",
    "Trace",
    "Jobs",
    "read_swf",
    "parse_swf",
    "prepare_jobs",
    "write_swf",
    "write_schedule_swf",
]

#: The 18 SWF fields, in file order, as named in :class:`Trace`.
FIELDS: tuple[str, ...] = (
    "job_id",
    "submit",
    "wait",
    "run",
    "alloc_procs",
    "avg_cpu",
    "used_mem",
    "req_procs",
    "req_time",
    "req_mem",
    "status",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "prev_job",
    "think_time",
)
#: Descriptions from the SWF definition (used in error messages and reports).
FIELD_LABELS: dict[str, str] = dict(
    zip(
        FIELDS,
        (
            "job number",
            "submit time",
            "wait time",
            "run time",
            "allocated processors",
            "average CPU time used",
            "used memory",
            "requested processors",
            "requested time",
            "requested memory",
            "status",
            "user ID",
            "group ID",
            "executable number",
            "queue number",
            "partition number",
            "preceding job number",
            "think time from preceding job",
        ),
    )
)
#: Fields stored as float64 (real traces have fractional values there); all others are int64.
FLOAT_FIELDS: tuple[str, ...] = ("avg_cpu", "used_mem")
#: Cleaning rules understood by :func:`prepare_jobs`.
RULES: tuple[str, ...] = ("rlscheduler", "default")

_NF = len(FIELDS)
_COL = {name: i for i, name in enumerate(FIELDS)}
_FLOAT_SET = frozenset(_COL[n] for n in FLOAT_FIELDS)
_PARTITION = _COL["partition"]
_MAX_EXACT = 2.0**53  # integers beyond this cannot be represented exactly by the parser

# Header labels with a typed attribute on Trace: label -> (attribute, kind).
_HEADER_INT = {
    "MaxJobs": "max_jobs",
    "MaxRecords": "max_records",
    "MaxNodes": "max_nodes",
    "MaxProcs": "max_procs",
    "MaxRuntime": "max_runtime",
    "MaxMemory": "max_memory",
    "UnixStartTime": "unix_start_time",
    "TimeZone": "time_zone",
    "MaxQueues": "max_queues",
    "MaxPartitions": "max_partitions",
}
_HEADER_STR = {
    "Version": "version",
    "Computer": "computer",
    "Installation": "installation",
    "TimeZoneString": "time_zone_string",
    "StartTime": "start_time",
    "EndTime": "end_time",
    "Preemption": "preemption",
    "AllowOveruse": "allow_overuse",
}
_HEADER_POSITIVE = ("MaxNodes", "MaxProcs")
_LABEL_RE = re.compile(r"^\s*;\s*([A-Z][A-Za-z0-9_]*)\s*:(.*)$")
_LEADING_INT_RE = re.compile(r"^\s*([+-]?\d+)(?![\d.eE])")


def _label(col: int) -> str:
    return f"{FIELDS[col]} (field {col + 1})"


def _fmt_value(v: float) -> str:
    return str(int(v)) if math.isfinite(v) and v == int(v) else repr(float(v))


# ----------------------------------------------------------------------------------------------
# Trace
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Trace:
    """A parsed SWF file: one numpy array per field, in file order (nothing dropped or fixed).

    Data (length ``n_jobs`` each): the 18 fields of :data:`FIELDS` (int64, except
    ``avg_cpu`` and ``used_mem`` float64) and ``line`` (int64, 1-based source line numbers).

    Header: ``comments`` (verbatim comment lines), ``header`` (label -> raw value, repeats
    joined with ``"\\n"``, see the module docstring) and the typed facts ``version``,
    ``computer``, ``installation``, ``max_jobs``, ``max_records``, ``max_nodes``, ``max_procs``,
    ``max_runtime``, ``max_memory``, ``unix_start_time``, ``time_zone``, ``time_zone_string``,
    ``start_time``, ``end_time``, ``preemption``, ``allow_overuse``, ``max_queues``,
    ``max_partitions`` (None when absent).

    Reading: ``path`` (None for in-memory text), ``skipped`` (one message per line dropped in
    ``on_error="skip"`` mode), ``notes`` (non-fatal value patches, e.g. partition → 0),
    ``num_procs_override`` (the ``max_procs=`` given to :func:`read_swf`).
    """

    job_id: np.ndarray
    submit: np.ndarray
    wait: np.ndarray
    run: np.ndarray
    alloc_procs: np.ndarray
    avg_cpu: np.ndarray
    used_mem: np.ndarray
    req_procs: np.ndarray
    req_time: np.ndarray
    req_mem: np.ndarray
    status: np.ndarray
    user: np.ndarray
    group: np.ndarray
    executable: np.ndarray
    queue: np.ndarray
    partition: np.ndarray
    prev_job: np.ndarray
    think_time: np.ndarray
    line: np.ndarray
    header: dict[str, str] = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)
    path: str | None = None
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    num_procs_override: int | None = None
    version: str | None = None
    computer: str | None = None
    installation: str | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    max_runtime: int | None = None
    max_memory: int | None = None
    unix_start_time: int | None = None
    time_zone: int | None = None
    time_zone_string: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    preemption: str | None = None
    allow_overuse: str | None = None
    max_queues: int | None = None
    max_partitions: int | None = None

    # -- construction helpers ------------------------------------------------------------
    @classmethod
    def from_array(cls, values: np.ndarray, line: np.ndarray | None = None, **kw) -> Trace:
        """Build a trace from an (n, 18) array of field values (file order)."""
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != _NF:
            raise ValueError(f"expected an (n, {_NF}) array, got shape {values.shape}")
        cols = {}
        for i, name in enumerate(FIELDS):
            c = np.ascontiguousarray(values[:, i])
            cols[name] = c if name in FLOAT_FIELDS else c.astype(np.int64)
        if line is None:
            line = np.arange(1, len(values) + 1, dtype=np.int64)
        return cls(**cols, line=np.asarray(line, dtype=np.int64), **kw)

    def to_array(self) -> np.ndarray:
        """The 18 fields as one (n, 18) float64 array (exact: all values are < 2**53)."""
        return np.stack([getattr(self, n).astype(np.float64) for n in FIELDS], axis=1)

    # -- size / derived properties ---------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        """Number of job lines read."""
        return int(self.job_id.shape[0])

    def __len__(self) -> int:
        return self.n_jobs

    @property
    def max_procs_seen(self) -> int:
        """Largest ``max(alloc_procs, req_procs)`` over all jobs (0 if always unknown)."""
        if self.n_jobs == 0:
            return 0
        return max(0, int(np.maximum(self.alloc_procs, self.req_procs).max()))

    @property
    def num_procs(self) -> int:
        """Processors of the machine: ``max_procs=`` override, else MaxProcs, else MaxNodes,
        else the largest job seen."""
        for v in (self.num_procs_override, self.max_procs, self.max_nodes):
            if v is not None:
                return int(v)
        return max(1, self.max_procs_seen)

    @property
    def num_nodes(self) -> int:
        """Nodes of the machine: MaxNodes, else :attr:`num_procs` (one processor per node)."""
        return int(self.max_nodes) if self.max_nodes is not None else self.num_procs

    @property
    def procs_per_node(self) -> float:
        """``num_procs / num_nodes`` as a float (as in the RLScheduler reference)."""
        return self.num_procs / self.num_nodes

    @property
    def max_run_time(self) -> int:
        """Largest run time (field 4) of any job, 0 if always unknown."""
        return max(0, int(self.run.max())) if self.n_jobs else 0

    @property
    def max_req_time(self) -> int:
        """Largest requested time (field 9), 0 if always unknown."""
        return max(0, int(self.req_time.max())) if self.n_jobs else 0

    @property
    def first_submit(self) -> int:
        return int(self.submit[0])

    @property
    def last_submit(self) -> int:
        return int(self.submit[-1])

    @property
    def span(self) -> int:
        """Seconds between the first and the last submission."""
        return self.last_submit - self.first_submit if self.n_jobs else 0

    def header_values(self, label: str) -> list[str]:
        """All values of a header label, in file order (``[]`` when absent)."""
        v = self.header.get(label)
        return [] if v is None else v.split("\n")

    # -- selection -------------------------------------------------------------------------
    def select(self, index) -> Trace:
        """A new trace with the job lines ``index`` (int array, slice or boolean mask); the
        header and the reading metadata are kept."""
        cols = {n: getattr(self, n)[index] for n in FIELDS + ("line",)}
        return replace(self, **cols)

    def head(self, n: int) -> Trace:
        """The first ``n`` job lines (all of them if the trace is shorter)."""
        if int(n) < 0:
            raise ConfigError(f"number of jobs must be >= 0, got {n}")
        return self.select(slice(0, int(n)))

    def records_equal(self, other: Trace) -> bool:
        """True when both traces hold exactly the same 18 field values (header and line
        numbers are not compared)."""
        return self.n_jobs == other.n_jobs and all(
            np.array_equal(getattr(self, n), getattr(other, n)) for n in FIELDS
        )

    def jobs(self, rules: str = "rlscheduler") -> Jobs:
        """The simulator's job list under ``rules``; see :func:`prepare_jobs`."""
        return prepare_jobs(self, rules)

    def __repr__(self) -> str:
        return (
            f"Trace(path={self.path!r}, n_jobs={self.n_jobs}, num_procs={self.num_procs}, "
            f"num_nodes={self.num_nodes}, skipped={len(self.skipped)})"
        )


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------
def read_swf(path, *, on_error: str = "raise", max_procs: int | None = None) -> Trace:
    """Read an SWF file (plain, gzip, bzip2 or xz; detected from the content).

    Args:
        path: file to read.
        on_error: ``"raise"`` (default): raise :class:`~jaxsched.errors.SWFError` at the first
            bad line. ``"skip"``: drop bad job lines, list them in ``Trace.skipped`` and warn
            once (:class:`~jaxsched.errors.SWFWarning`).
        max_procs: machine size in processors. It overrides the header (``MaxProcs``, else
            ``MaxNodes``) for the job-size check and for :attr:`Trace.num_procs`.

    See the module docstring for the checks and messages.
    """
    p = os.fspath(path)
    data = _read_bytes(p)
    return parse_swf(data, path=p, on_error=on_error, max_procs=max_procs)


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        raise SWFError(path, None, None, "no such file") from None
    except IsADirectoryError:
        raise SWFError(path, None, None, "is a directory, not an SWF file") from None
    except PermissionError:
        raise SWFError(path, None, None, "permission denied") from None
    except OSError as e:
        raise SWFError(path, None, None, f"cannot read: {e.strerror or e}") from None
    return _decompress(raw, path)


def _decompress(raw: bytes, path: str | None) -> bytes:
    try:
        if raw[:2] == b"\x1f\x8b":
            return gzip.decompress(raw)
        if raw[:3] == b"BZh" and raw[3:4].isdigit():
            return bz2.decompress(raw)
        if raw[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(raw)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as e:
        raise SWFError(path, None, None, f"corrupt compressed data ({e})") from None
    return raw


def parse_swf(
    data: bytes | str, *, path=None, on_error: str = "raise", max_procs: int | None = None
) -> Trace:
    """Parse SWF text already in memory (``bytes`` may be compressed). ``path`` is used
    only in messages and :attr:`Trace.path`. The other arguments are as in :func:`read_swf`."""
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if max_procs is not None:
        if (
            isinstance(max_procs, bool)
            or not isinstance(max_procs, (int, np.integer))
            or max_procs < 1
        ):
            raise ConfigError(f"max_procs must be a positive integer, got {max_procs!r}")
        max_procs = int(max_procs)
    path = None if path is None else os.fspath(path)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    else:
        data = _decompress(bytes(data), path)
    return _Parser(data, path, on_error == "skip", max_procs).run()


class _Parser:
    """One parse; keeps the bookkeeping out of the public functions."""

    def __init__(self, data: bytes, path: str | None, skip: bool, max_procs: int | None):
        self.data, self.path, self.skip, self.override = data, path, skip, max_procs
        self.skipped: list[tuple[int, str]] = []  # (line, message)
        self.notes: list[str] = []

    def err(self, line, fld, msg) -> SWFError:
        return SWFError(self.path, line, fld, msg)

    # -- step 1: split header/comment lines from job lines ----------------------------------
    def split(self):
        data = self.data
        if b"\x00" in data:
            raise self.err(None, None, "not an SWF file (binary data)")
        comments: list[tuple[int, bytes]] = []
        pos, lineno, n = 0, 0, len(data)
        while pos < n:  # leading comment / blank lines (the usual header block)
            end = data.find(b"\n", pos)
            end = n if end < 0 else end
            raw = data[pos:end]
            s = raw.strip()
            if s and not s.startswith(b";"):
                break
            lineno += 1
            if s:
                comments.append((lineno, raw))
            pos = end + 1
        rest = data[pos:]
        first = lineno + 1  # line number of the first job line
        if rest.strip() and b";" not in rest:
            n_lines = rest.count(b"\n") + (0 if rest.endswith(b"\n") else 1)
            cols = _fast_columns(rest, n_lines)
            if cols is not None:
                lines = np.arange(first, first + n_lines, dtype=np.int64)
                return comments, cols, lines, None
        # General case: comments between job lines, blank lines, or something to report.
        job_lines, job_nos = [], []
        for i, raw in enumerate(rest.split(b"\n")):
            s = raw.strip()
            if not s:
                continue
            if s.startswith(b";"):
                comments.append((first + i, raw))
            else:
                job_lines.append(raw)
                job_nos.append(first + i)
        return comments, None, np.array(job_nos, dtype=np.int64), job_lines

    # -- step 2 (slow path): parse line by line, locating malformed lines -----------------
    def parse_slow(self, job_lines, job_nos):
        rows, keep = [], []
        first_error = None
        for raw, ln in zip(job_lines, job_nos.tolist()):
            toks = raw.split()
            if len(toks) != _NF:
                e = (ln, None, f"expected {_NF} fields, found {len(toks)}")
            else:
                try:
                    rows.append([float(t) for t in toks])
                    keep.append(ln)
                    continue
                except ValueError:
                    pass
                vals, e = [], None
                for k, t in enumerate(toks):
                    try:
                        vals.append(float(t))
                    except ValueError:
                        if k == _PARTITION:
                            vals.append(0.0)
                            self.notes.append(
                                f"{_where(self.path, ln)}: {_label(k)}: "
                                f"{_text(t)!r} is not an integer, read as 0"
                            )
                        else:
                            e = (ln, _label(k), f"not a number: {_text(t)!r}")
                            break
                if e is None:
                    rows.append(vals)
                    keep.append(ln)
                    continue
            if not self.skip:
                first_error = e
                break
            self.skipped.append((e[0], str(self.err(*e))))
        values = np.array(rows, dtype=np.float64).reshape(-1, _NF)
        return _columns(values), np.array(keep, dtype=np.int64), first_error

    # -- step 3: checks on the parsed values (vectorised) ----------------------------------
    def machine_procs(self, hdr_int):
        if self.override is not None:
            return self.override, f"max_procs={self.override}"
        if hdr_int.get("MaxProcs") is not None:
            return hdr_int["MaxProcs"], "MaxProcs"
        if hdr_int.get("MaxNodes") is not None:
            return hdr_int["MaxNodes"], "MaxNodes; no MaxProcs header"
        return None, None

    def check_values(self, cols, lines, machine):
        """Checks the parsed columns (patching partition numbers in place).

        Returns (keep mask, errors sorted by line: list of (line, field, message))."""
        n = len(lines)
        errs: list[tuple[int, str | None, str]] = []
        bad = np.zeros(n, dtype=bool)
        # Value checks per column, in field order, so a row reports its first bad field.
        # int64 columns (the fast path) are exact; float columns may hold anything.
        for k, c in enumerate(cols):
            if c.dtype.kind != "f":
                continue
            finite = np.isfinite(c)
            if k in _FLOAT_SET:
                wrong = ~finite
            else:
                with np.errstate(invalid="ignore"):
                    nonint = finite & ((c != np.floor(c)) | (np.abs(c) > _MAX_EXACT))
                if k == _PARTITION and nonint.any():
                    for r in np.flatnonzero(nonint & ~bad):
                        self.notes.append(
                            f"{_where(self.path, int(lines[r]))}: {_label(k)}: "
                            f"{float(c[r])!r} is not an integer, read as 0"
                        )
                    c[nonint] = 0.0
                    nonint[:] = False
                wrong = ~finite | nonint
            for r in np.flatnonzero(wrong & ~bad):
                v = float(c[r])
                if not math.isfinite(v):
                    what = f"not a number: {v!r}"
                elif abs(v) > _MAX_EXACT:
                    what = f"integer out of range: {_fmt_value(v)}"
                else:
                    what = f"not an integer: {_fmt_value(v)}"
                errs.append((int(lines[r]), _label(k), what))
                bad[r] = True
        # job larger than the machine
        P, source = machine
        if P is not None:
            alloc, req = cols[_COL["alloc_procs"]], cols[_COL["req_procs"]]
            need = np.maximum(alloc, req)
            for r in np.flatnonzero((need > P) & ~bad):
                k = _COL["alloc_procs"] if alloc[r] >= req[r] else _COL["req_procs"]
                errs.append(
                    (
                        int(lines[r]),
                        _label(k),
                        f"job needs {int(need[r])} processors but the machine has {P} ({source})",
                    )
                )
                bad[r] = True
        # submit times must not decrease (compared with the lines kept before)
        ok = np.flatnonzero(~bad)
        if len(ok) > 1:
            sub = cols[_COL["submit"]][ok]
            prev_max = np.maximum.accumulate(sub)[:-1]
            late = np.flatnonzero(sub[1:] < prev_max) + 1
            for j in late:
                r = ok[j]
                errs.append(
                    (
                        int(lines[r]),
                        _label(_COL["submit"]),
                        f"submit time {int(sub[j])} is earlier than that of a previous "
                        f"job ({int(prev_max[j - 1])}); SWF jobs must be in submit order",
                    )
                )
                bad[r] = True
        errs.sort(key=lambda e: e[0])
        return ~bad, errs

    # -- header -----------------------------------------------------------------------------
    def parse_header(self, comments):
        texts, header, typed_int, typed_str = [], {}, {}, {}
        last = None
        for ln, raw in comments:
            text = raw.decode("utf-8", "surrogateescape").rstrip("\r")
            texts.append(text)
            m = _LABEL_RE.match(text)
            if m:
                key, val = m.group(1), m.group(2).strip()
                header[key] = f"{header[key]}\n{val}" if key in header else val
                last = key
                if key in _HEADER_INT and key not in typed_int:
                    typed_int[key] = self.header_int(ln, key, val)
                elif key in _HEADER_STR and key not in typed_str:
                    typed_str[key] = val
            else:
                cont = text.strip().lstrip(";").strip()
                if cont and last is not None:
                    header[last] = f"{header[last]}\n{cont}"
        return texts, header, typed_int, typed_str

    def header_int(self, ln, key, val):
        m = _LEADING_INT_RE.match(val)
        problem = None
        if m is None:
            problem = f"not an integer: {val!r}"
        elif key in _HEADER_POSITIVE and int(m.group(1)) <= 0:
            problem = f"must be a positive integer, got {val!r}"
        if problem is None:
            return int(m.group(1))
        if not self.skip:
            raise self.err(ln, key, problem)
        self.skipped.append((ln, f"{self.err(ln, key, problem)} (header value ignored)"))
        return None

    # -- driver -----------------------------------------------------------------------------
    def run(self) -> Trace:
        comments, cols, lines, job_lines = self.split()
        texts, header, typed_int, typed_str = self.parse_header(comments)
        first_error = None
        if cols is None:
            if not job_lines:
                raise self.err(None, None, "empty: no job lines (is this an SWF file?)")
            cols = _fast_columns(b"\n".join(job_lines), len(job_lines))
            if cols is None:
                cols, lines, first_error = self.parse_slow(job_lines, lines)
        keep, errs = self.check_values(cols, lines, self.machine_procs(typed_int))
        if not self.skip:
            candidates = errs[:1] + ([first_error] if first_error else [])
            if candidates:
                raise self.err(*min(candidates, key=lambda e: e[0]))
        else:
            self.skipped.extend((e[0], str(self.err(*e))) for e in errs)
            if not keep.all():
                cols, lines = [c[keep] for c in cols], lines[keep]
        self.skipped.sort(key=lambda t: t[0])
        skipped = [m for _, m in self.skipped]
        if len(lines) == 0:
            raise self.err(
                None,
                None,
                f"no valid job lines (all {len(skipped)} job lines were "
                f"bad; first: {skipped[0] if skipped else '-'})",
            )
        if skipped:
            warnings.warn(
                f"{self.path or '<swf>'}: skipped {len(skipped)} bad line(s); first: {skipped[0]}",
                SWFWarning,
                stacklevel=4,
            )
        if self.notes:
            warnings.warn(
                f"{self.path or '<swf>'}: patched {len(self.notes)} value(s); "
                f"first: {self.notes[0]}",
                SWFWarning,
                stacklevel=4,
            )
        kw = {attr: typed_int.get(key) for key, attr in _HEADER_INT.items()}
        kw.update({attr: typed_str.get(key) for key, attr in _HEADER_STR.items()})
        data = {}
        for name, c in zip(FIELDS, cols):
            want = np.float64 if name in FLOAT_FIELDS else np.int64
            data[name] = np.ascontiguousarray(c, dtype=want)
        return Trace(
            **data,
            line=lines,
            header=header,
            comments=texts,
            path=self.path,
            skipped=skipped,
            notes=list(self.notes),
            num_procs_override=self.override,
            **kw,
        )


_STRUCT = np.dtype([(name, np.float64 if name in FLOAT_FIELDS else np.int64) for name in FIELDS])


def _columns(values: np.ndarray) -> list[np.ndarray]:
    return [values[:, k] for k in range(_NF)]


def _fast_columns(buf: bytes, n_lines: int) -> list[np.ndarray] | None:
    """Parse a block of ``n_lines`` job lines with numpy's C reader.

    First try int64 for the integer fields (strict: ``"3.0"``, ``"1e2"`` or an int64
    overflow fail), which is about 4x faster than parsing every field as a float. If that fails,
    parse all fields as float64 and leave the integer checks to :meth:`_Parser.check_values`.
    Returns None when neither gives ``n_lines`` rows of 18 fields (the caller then goes line
    by line to report or skip the bad lines).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a lenient/deprecated conversion must not pass
        try:
            rec = np.loadtxt(io.BytesIO(buf), dtype=_STRUCT, comments=None, ndmin=1)
            if rec.shape == (n_lines,):
                return [rec[name] for name in FIELDS]
        except (ValueError, TypeError, OverflowError, Warning):
            pass
        try:
            values = np.loadtxt(io.BytesIO(buf), dtype=np.float64, comments=None, ndmin=2)
            if values.shape == (n_lines, _NF):
                return _columns(values)
        except (ValueError, TypeError, OverflowError, Warning):
            pass
    return None


def _text(tok: bytes) -> str:
    return tok.decode("utf-8", "replace")


def _where(path, line) -> str:
    return f"{path or '<swf>'}:{line}"


# ----------------------------------------------------------------------------------------------
# Cleaning rules -> Jobs
# ----------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Jobs:
    """The job list a simulator consumes (host numpy; move to the device as needed).

    Arrays (int64, length ``n_jobs``, in simulation order): ``submit``, ``run`` (actual run
    time), ``req_time`` (the user's estimate), ``procs`` (processors needed), ``req_mem``,
    ``user``, ``group``, ``executable``, ``job_id`` (SWF job number), ``line`` (source line).

    Machine: ``num_procs`` (P), ``num_nodes`` (N), ``procs_per_node`` (float P / N).

    Normalisers, spec §1.4 (maxima over **all** parsed lines, before any job is dropped or
    fixed, 0 when the field is always −1): ``max_exec_time`` (run time), ``max_req_mem``,
    ``max_user``, ``max_group``, ``max_executable``.

    ``fixes``: how many jobs each rule touched (all keys present, zero or not). ``rules``:
    the rule set's name. ``path``: the source file.
    """

    submit: np.ndarray
    run: np.ndarray
    req_time: np.ndarray
    procs: np.ndarray
    req_mem: np.ndarray
    user: np.ndarray
    group: np.ndarray
    executable: np.ndarray
    job_id: np.ndarray
    line: np.ndarray
    num_procs: int
    num_nodes: int
    procs_per_node: float
    max_exec_time: int
    max_req_mem: int
    max_user: int
    max_group: int
    max_executable: int
    fixes: dict[str, int]
    rules: str
    path: str | None = None

    ARRAYS = (
        "submit",
        "run",
        "req_time",
        "procs",
        "req_mem",
        "user",
        "group",
        "executable",
        "job_id",
        "line",
    )

    @property
    def n_jobs(self) -> int:
        return int(self.submit.shape[0])

    def __len__(self) -> int:
        return self.n_jobs

    @property
    def node_demand(self) -> np.ndarray:
        """Whole nodes each job occupies: ``ceil(procs / procs_per_node)`` (spec §1.5,
        float division as in the reference)."""
        return np.ceil(self.procs / self.procs_per_node).astype(np.int64)

    def select(self, index) -> Jobs:
        """A new Jobs with the entries ``index`` (slice, int array or mask); scalars kept."""
        return replace(self, **{n: getattr(self, n)[index] for n in self.ARRAYS})

    def window(self, start: int, length: int) -> Jobs:
        """Jobs ``start .. start+length-1`` (a simulation sequence); bounds are checked."""
        start, length = int(start), int(length)
        if length < 1 or start < 0 or start + length > self.n_jobs:
            raise ConfigError(
                f"window [{start}, {start + length}) is outside the "
                f"{self.n_jobs} jobs of {self.path or 'the trace'}"
            )
        return self.select(slice(start, start + length))

    def __repr__(self) -> str:
        return (
            f"Jobs(rules={self.rules!r}, n_jobs={self.n_jobs}, num_procs={self.num_procs}, "
            f"num_nodes={self.num_nodes}, fixes={self.fixes})"
        )


def _max0(a: np.ndarray) -> int:
    return max(0, int(a.max())) if a.size else 0


def prepare_jobs(trace: Trace, rules: str = "rlscheduler") -> Jobs:
    """Apply a cleaning rule set to a trace and return the simulator's :class:`Jobs`.

    ``rules="rlscheduler"``: exactly the RLScheduler reference (spec §1.2–1.5):

    1. ``procs = max(alloc_procs, req_procs)`` (−1 if both are −1; such jobs are kept);
    2. ``req_time``: field 9, and if it is −1 the run time *as read* (so −1 stays possible);
       it is not clipped to the run time;
    3. run time < 0 becomes 10; then jobs with run time == 0 are dropped; nothing else is;
    4. the jobs are sorted by job number (stable);
    5. N = ``MaxNodes`` (required: without it the reference divides by zero, here an
       :class:`~jaxsched.errors.SWFError` names the missing label), P = the ``max_procs=``
       override, else ``MaxProcs``, else N.

    ``fixes`` keys: ``procs_from_alloc`` (kept jobs whose allocated count exceeds the requested
    one), ``req_time_from_run`` (kept jobs with field 9 == −1), ``neg_run_to_10``,
    ``dropped_zero_run``, and two warnings the reference does not act on:
    ``kept_nonpositive_procs`` and ``kept_nonpositive_req_time`` (spec §10.3).

    ``rules="default"``: a cleaning for general use:

    1. ``procs = req_procs`` if > 0, else ``alloc_procs``;
    2. ``req_time = req_time`` if > 0, else the run time (under-estimates, i.e. req_time < run,
       are kept: real traces contain them);
    3. jobs with run time <= 0 or procs <= 0 are dropped (counted);
    4. the jobs stay in submit order (the file order, which :func:`read_swf` validated);
    5. P = :attr:`Trace.num_procs` (override, MaxProcs, MaxNodes, largest job), N =
       :attr:`Trace.num_nodes` (MaxNodes, else P).

    ``fixes`` keys: ``procs_from_alloc``, ``req_time_from_run``, ``dropped_nonpositive_run``,
    ``dropped_nonpositive_procs`` (jobs with a positive run time but no processor count).

    In both rule sets the normalisers (``max_exec_time`` ...) are taken over all lines of the
    trace, as in spec §1.4.
    """
    if rules not in RULES:
        raise ConfigError(f"unknown rules {rules!r}; choose one of {', '.join(RULES)}")
    t = trace
    alloc, req, run0, rt = t.alloc_procs, t.req_procs, t.run, t.req_time
    if rules == "rlscheduler":
        if t.max_nodes is None:
            raise SWFError(
                t.path,
                None,
                "MaxNodes",
                "header value missing: the rlscheduler rules take the node count "
                "from '; MaxNodes: <n>' (the reference divides by zero without it); "
                "add the header line or use rules='default'",
            )
        N = int(t.max_nodes)
        P = int(t.num_procs_override or t.max_procs or N)
        procs = np.maximum(alloc, req)
        q = np.where(rt == -1, run0, rt)
        run = np.where(run0 < 0, 10, run0)
        keep = run > 0
        fixes = {
            "procs_from_alloc": int(np.count_nonzero(keep & (alloc > req))),
            "req_time_from_run": int(np.count_nonzero(keep & (rt == -1))),
            "neg_run_to_10": int(np.count_nonzero(run0 < 0)),
            "dropped_zero_run": int(np.count_nonzero(run0 == 0)),
            "kept_nonpositive_procs": int(np.count_nonzero(keep & (procs <= 0))),
            "kept_nonpositive_req_time": int(np.count_nonzero(keep & (q <= 0))),
        }
        idx = np.flatnonzero(keep)
        idx = idx[np.argsort(t.job_id[idx], kind="stable")]
    else:
        P, N = t.num_procs, t.num_nodes
        procs = np.where(req > 0, req, alloc)
        q = np.where(rt > 0, rt, run0)
        run = run0
        keep = (run0 > 0) & (procs > 0)
        fixes = {
            "procs_from_alloc": int(np.count_nonzero(keep & ~(req > 0))),
            "req_time_from_run": int(np.count_nonzero(keep & ~(rt > 0))),
            "dropped_nonpositive_run": int(np.count_nonzero(run0 <= 0)),
            "dropped_nonpositive_procs": int(np.count_nonzero((run0 > 0) & (procs <= 0))),
        }
        idx = np.flatnonzero(keep)  # file order == submit order (validated)
    as64 = lambda a: np.ascontiguousarray(a[idx], dtype=np.int64)  # noqa: E731
    return Jobs(
        submit=as64(t.submit),
        run=as64(run),
        req_time=as64(q),
        procs=as64(procs),
        req_mem=as64(t.req_mem),
        user=as64(t.user),
        group=as64(t.group),
        executable=as64(t.executable),
        job_id=as64(t.job_id),
        line=as64(t.line),
        num_procs=P,
        num_nodes=N,
        procs_per_node=P / N,
        max_exec_time=_max0(run0),
        max_req_mem=_max0(t.req_mem),
        max_user=_max0(t.user),
        max_group=_max0(t.group),
        max_executable=_max0(t.executable),
        fixes=fixes,
        rules=rules,
        path=t.path,
    )


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------
def _header_lines(header) -> list[str]:
    if header is None:
        return []
    if isinstance(header, str):
        header = header.splitlines()
    out = []
    if isinstance(header, Mapping):
        for k, v in header.items():
            vals = v if isinstance(v, (list, tuple)) else str(v).split("\n")
            out.extend(f"; {k}: {x}" for x in vals)
        return out
    if not isinstance(header, Sequence):
        raise TypeError("header must be None, a str, a sequence of str or a mapping")
    for h in header:
        h = str(h)
        out.append(h if h.lstrip().startswith(";") else f"; {h}" if h else ";")
    return out


def _column_strings(a: np.ndarray) -> np.ndarray:
    """Exact text of a column: integers as integers, other floats with repr()."""
    if a.dtype.kind in "iu":
        return a.astype(str)
    integral = np.isfinite(a) & (a == np.floor(a)) & (np.abs(a) < _MAX_EXACT)
    out = np.empty(a.shape, dtype=object)
    out[integral] = a[integral].astype(np.int64).astype(str)
    out[~integral] = [repr(float(x)) for x in a[~integral]]
    return out.astype(str)


def _format_rows(columns: Sequence[np.ndarray]) -> str:
    strs = [_column_strings(np.asarray(c)) for c in columns]
    if len(strs[0]) == 0:
        return ""
    acc = None
    for s in strs:  # right-aligned columns, like the PWA files
        s = np.strings.rjust(s, int(np.strings.str_len(s).max()))
        acc = s if acc is None else np.strings.add(np.strings.add(acc, " "), s)
    return "\n".join(acc.tolist()) + "\n"


def _write_text(path, text: str) -> str:
    p = os.fspath(path)
    data = text.encode("utf-8", "surrogateescape")
    if p.endswith(".gz"):
        with open(p, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
            gz.write(data)
    else:
        with open(p, "wb") as fh:
            fh.write(data)
    return p


def write_swf(trace: Trace, path, *, header=None) -> str:
    """Write ``trace`` as SWF (gzip-compressed when ``path`` ends in ``.gz``); returns the path.

    ``header``: None (default) writes the trace's own comment lines verbatim. Comment lines that
    sat between job lines in the source come first. Otherwise ``header`` is a sequence of lines
    (``"; "`` is added to lines that do not start with ``;``), a single string (split into
    lines), or a mapping label -> value (a list value, or a value containing ``"\\n"``, gives
    one line per item); ``[]`` writes no header. Integer fields and integral floats are written
    as integers, other floats with ``repr``. So :func:`read_swf` gives back exactly the same
    values.
    """
    lines = list(trace.comments) if header is None else _header_lines(header)
    body = _format_rows([getattr(trace, n) for n in FIELDS])
    return _write_text(path, "".join(h + "\n" for h in lines) + body)


def write_schedule_swf(jobs: Jobs, start_times, path, *, header=None, alloc_procs=None) -> str:
    """Write a simulated schedule as SWF, for PWA tools and evalys.

    One line per job of ``jobs``, in its order. Fields: 1 job number, 2 submit time,
    **3 wait time = start − submit**, 4 run time, **5 allocated processors** (``alloc_procs`` if
    given, e.g. whole nodes × procs per node, else the job's ``procs``), 8 requested processors,
    9 requested time, 10 requested memory, 11 status (1 = completed), 12–14 user, group and
    executable. Fields 6, 7 and 15–18 are −1. A job with a negative start time (never started)
    gets wait −1, allocated −1 and status 5 (cancelled). The header says
    what the file is (MaxNodes, MaxProcs, counts); ``header`` adds lines (see :func:`write_swf`).
    """
    start = np.asarray(start_times)
    n = jobs.n_jobs
    if start.shape != (n,):
        raise ConfigError(f"start_times has shape {start.shape}, expected ({n},)")
    if not np.all(np.isfinite(start)) or np.any(start != np.round(start)):
        raise ConfigError("start_times must be integral (whole seconds)")
    start = start.astype(np.int64)
    started = start >= 0
    early = np.flatnonzero(started & (start < jobs.submit))
    if early.size:
        j = int(early[0])
        raise ConfigError(
            f"job {int(jobs.job_id[j])} starts at {int(start[j])}, before its "
            f"submit time {int(jobs.submit[j])} ({early.size} such jobs)"
        )
    alloc = jobs.procs if alloc_procs is None else np.asarray(alloc_procs, dtype=np.int64)
    if alloc.shape != (n,):
        raise ConfigError(f"alloc_procs has shape {alloc.shape}, expected ({n},)")
    minus1 = np.full(n, -1, dtype=np.int64)
    cols = [
        jobs.job_id,
        jobs.submit,
        np.where(started, start - jobs.submit, -1),
        jobs.run,
        np.where(started, alloc, -1),
        minus1,
        minus1,
        jobs.procs,
        jobs.req_time,
        jobs.req_mem,
        np.where(started, 1, 5),
        jobs.user,
        jobs.group,
        jobs.executable,
        minus1,
        minus1,
        minus1,
        minus1,
    ]
    lines = [
        "; Version: 2.2",
        "; Computer: jaxsched simulated schedule",
        f"; Note: jobs from {jobs.path or 'an in-memory trace'} (rules={jobs.rules})",
        "; Note: field 3 = simulated start - submit; field 5 = allocated processors; "
        "field 11 = 1 (ran) or 5 (never started)",
        f"; MaxJobs: {n}",
        f"; MaxRecords: {n}",
        f"; MaxNodes: {jobs.num_nodes}",
        f"; MaxProcs: {jobs.num_procs}",
    ] + _header_lines(header)
    return _write_text(path, "".join(h + "\n" for h in lines) + _format_rows(cols))
