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

* missing/unreadable file (``"path: no such file"``), a FIFO, device or socket (``"not a
  regular file"``, refused before reading, which could block for ever), corrupt compressed
  data, binary data (``"not an SWF file (binary data)"``), no job line at all (``"empty:
  ..."``). A leading UTF-8 byte order mark is ignored;
* a job line without exactly 18 fields (``"path:7: expected 18 fields, found 17"``);
* a field that is not a plain decimal number (an optional ``-``, digits, a fraction, an
  exponent: ``+12`` and ``1_000`` are refused), not finite, or not an integer where SWF wants
  one (``"path:7: run (field 4): not a number: 'abc'"``). Fields 6 and 7 (average CPU time,
  used memory) may be fractional. As in the reference parser, a non-integer *partition number*
  (field 16) becomes 0 and is recorded in :attr:`Trace.notes`; it is not an error;
* an integer field beyond ±2^53 (``"integer out of range"``), a processor count (fields 5
  and 8) beyond 2^31 - 1, or a job whose submit + wait + max(run, requested) time is beyond
  2^53 s (named by its run or requested time field); the checks are the same whichever
  numpy path read the file;
* a job number that repeats an earlier line's (``job_id (field 1)``);
* a submit time earlier than that of a previous job line (``submit (field 2)``);
* a job that needs more processors than the machine: ``max(field 5, field 8) >`` the machine
  size. The machine size is ``max_procs=`` if given, else the ``MaxProcs`` header, else
  ``MaxNodes``. There is no check when none is known;
* a header value that must be an integer and is not (``"path:12: MaxProcs: not an integer:
  'many'"``); ``MaxNodes``/``MaxProcs`` must be in 1 .. 2^31 - 1.

Malformed lines (field count, non-numeric text) are reported before problems that need the
parsed values, except that a value problem on an *earlier* line wins. So the error raised is
always the first bad line of the file.

With ``on_error="skip"``, bad job lines are dropped. Their messages go to :attr:`Trace.skipped`,
and **one** :class:`~jaxsched.errors.SWFWarning` gives the count. An unusable header value is
ignored (treated as absent) and recorded the same way. The order check then compares a line
with the lines that were kept before it. Skipping never makes a file valid that has no usable
job line: that is still an error. Whole-file problems (binary, corrupt, missing, not a regular
file) always raise.

The job list of every rule set (:func:`prepare_jobs`) is checked again after its drops and
its sort (:func:`~jaxsched.workload.jobs.check_job_list`): submit times must not decrease in
the order it schedules (the ``rlscheduler`` rules sort by job number, so job numbers must
follow submit order), a job it keeps needs a submit time >= 0 (-1 means unknown), the
schedule's reach (the jobs run one after the other, plus the longest run or requested time)
must stay within 2^53 s, and a rule set that drops every job is an error naming the file and
the counts by drop rule. These checks raise in both modes.

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
import lzma
import os
import stat
import zlib
from dataclasses import dataclass, field, replace

import numpy as np

from jaxsched.errors import ConfigError, SWFError

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

_NF = len(FIELDS)
_COL = {name: i for i, name in enumerate(FIELDS)}


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
        # O_NONBLOCK: opening a FIFO must not wait for a writer; anything but a regular file
        # (FIFO, device, socket) is refused before a byte is read (it could block for ever)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SWFError(path, None, None, "no such file") from None
    except IsADirectoryError:
        raise SWFError(path, None, None, "is a directory, not an SWF file") from None
    except PermissionError:
        raise SWFError(path, None, None, "permission denied") from None
    except OSError as e:
        raise SWFError(path, None, None, f"cannot read: {e.strerror or e}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise SWFError(path, None, None, "is a directory, not an SWF file")
        raise SWFError(
            path, None, None, "not a regular file (a FIFO, device or socket); give a file"
        )
    with os.fdopen(fd, "rb") as fh:
        try:
            raw = fh.read()
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
    from jaxsched.workload.swf_parse import Parser

    return Parser(data, path, on_error == "skip", max_procs).run()


# the job list and the writers live in their own modules; their names stay importable here
from jaxsched.workload.jobs import RULES, Jobs, prepare_jobs  # noqa: E402
from jaxsched.workload.swf_write import write_schedule_swf, write_swf  # noqa: E402
