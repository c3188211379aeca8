"""The SWF text parser behind :func:`jaxsched.workload.swf.parse_swf`: header labels,
18 fields per line, per-line validation with ``file:line: field: message`` errors, and a fast
numpy path for clean files."""

from __future__ import annotations

import io
import math
import re
import warnings

import numpy as np

from jaxsched.errors import SWFError, SWFWarning
from jaxsched.workload.swf import _COL, _NF, FIELDS, FLOAT_FIELDS, Trace

__all__ = ["Parser"]

_FLOAT_SET = frozenset(_COL[n] for n in FLOAT_FIELDS)
_PARTITION = _COL["partition"]
_MAX_EXACT = 2**53  # integers beyond this cannot be represented exactly by the parser
#: the largest processor count (fields 5 and 8, MaxNodes, MaxProcs): the engine counts in int32
MAX_PROCS = 2**31 - 1
_PROC_SET = frozenset((_COL["alloc_procs"], _COL["req_procs"]))
_BOM = b"\xef\xbb\xbf"
# A field is a plain decimal number: an optional "-", digits with an optional fraction, an
# optional exponent ("1e2", "3.0", ".5"); no "+" sign, no "_" (Python's float() takes both).
# nan/inf pass here so that the value checks report them as not finite.
_TOKEN_RE = re.compile(
    rb"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE
)
_NUMBER_BYTES = b"0123456789.eE+- \t\r\n"  # all a block of plain numbers is made of
_LONE_PLUS_RE = re.compile(rb"(?<![eE])\+")  # a "+" that is not an exponent's sign

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


class Parser:
    """One parse; keeps the bookkeeping out of the public functions."""

    def __init__(self, data: bytes, path: str | None, skip: bool, max_procs: int | None):
        if data.startswith(_BOM):  # a UTF-8 byte order mark (some editors write one)
            data = data[len(_BOM) :]
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
                if _plain_numbers(raw):
                    try:
                        rows.append([float(t) for t in toks])
                        keep.append(ln)
                        continue
                    except ValueError:
                        pass
                vals, e = [], None
                for k, t in enumerate(toks):
                    v = float(t) if _TOKEN_RE.fullmatch(t) else None
                    if v is not None:
                        vals.append(v)
                    elif k == _PARTITION:
                        vals.append(0.0)
                        self.notes.append(
                            f"{_where(self.path, ln)}: {_label(k)}: "
                            f"{_text(t)!r} is not an integer, read as 0"
                        )
                    else:
                        e = (ln, _label(k), _not_a_number(t))
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

        def report(mask, k, what):
            for r in np.flatnonzero(mask & ~bad):
                errs.append((int(lines[r]), _label(k), what(r)))
                bad[r] = True

        # Value checks per column, in field order, so a row reports its first bad field. Both
        # dtypes go through the same checks: the int64 columns of the fast path hold integers,
        # which may still be out of range; float columns may hold anything.
        for k, c in enumerate(cols):
            if k in _FLOAT_SET:
                report(~np.isfinite(c), k, lambda r, c=c: f"not a number: {float(c[r])!r}")
                continue
            high = MAX_PROCS if k in _PROC_SET else _MAX_EXACT
            with np.errstate(invalid="ignore"):
                out = (c > high) | (c < -_MAX_EXACT)
            if c.dtype.kind == "f":
                finite = np.isfinite(c)
                with np.errstate(invalid="ignore"):
                    frac = finite & (c != np.floor(c))
            else:
                finite, frac = np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
            if k == _PARTITION:
                patch = (frac | out) & finite
                for r in np.flatnonzero(patch & ~bad):
                    what = "out of range" if out[r] else "not an integer"
                    self.notes.append(
                        f"{_where(self.path, int(lines[r]))}: {_label(k)}: "
                        f"{_fmt_value(c[r])} is {what}, read as 0"
                    )
                c[patch] = 0
                frac = out = np.zeros(n, dtype=bool)
            report(~finite, k, lambda r, c=c: f"not a number: {float(c[r])!r}")
            report(frac, k, lambda r, c=c: f"not an integer: {_fmt_value(c[r])}")
            if k in _PROC_SET:
                what = lambda r, c=c: (  # noqa: E731
                    f"processor count out of range: {_fmt_value(c[r])} (at most 2^31 - 1)"
                )
            else:
                what = lambda r, c=c: f"integer out of range: {_fmt_value(c[r])} (at most 2^53)"  # noqa: E731
            report(out, k, what)
        # a job's times must add up within the range too (the engine adds them)
        ok = ~bad
        sub, wait, run, req = (
            np.where(ok, cols[_COL[f]], 0).astype(np.int64)
            for f in ("submit", "wait", "run", "req_time")
        )
        end = sub + np.maximum(wait, 0) + np.maximum(np.maximum(run, req), 0)

        for r in np.flatnonzero(ok & (end > _MAX_EXACT)):
            last = "run" if run[r] >= req[r] else "req_time"
            parts = {"submit": sub[r], "wait": wait[r], last: max(run[r], req[r])}
            k = _COL[max(parts, key=lambda f: parts[f])]  # the largest part is named
            what = "run time" if last == "run" else "requested time"
            errs.append(
                (
                    int(lines[r]),
                    _label(k),
                    f"submit time + wait time + {what} = {int(end[r])} s is beyond 2^53 s "
                    f"({_MAX_EXACT}); a job's times must add up to at most that",
                )
            )
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
        # job numbers are unique (a later line repeating a number is the one at fault)
        ok = np.flatnonzero(~bad)
        ids = cols[_COL["job_id"]][ok]
        order = np.argsort(ids, kind="stable")
        ids_sorted = ids[order]
        same = ids_sorted[1:] == ids_sorted[:-1]
        if same.any():
            pos = np.arange(len(ids_sorted))
            first = np.maximum.accumulate(np.where(np.r_[True, ~same], pos, 0))
            for j in np.flatnonzero(same) + 1:
                r, r0 = ok[order[j]], ok[order[first[j]]]
                errs.append(
                    (
                        int(lines[r]),
                        _label(_COL["job_id"]),
                        f"job number {_fmt_value(ids_sorted[j])} repeats that of line "
                        f"{int(lines[r0])}; SWF job numbers must be unique",
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
        elif key in _HEADER_POSITIVE and int(m.group(1)) > MAX_PROCS:
            problem = f"out of range: {m.group(1)} (at most 2^31 - 1 = {MAX_PROCS})"
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
    return [np.ascontiguousarray(values[:, k]) for k in range(_NF)]


def _fast_columns(buf: bytes, n_lines: int) -> list[np.ndarray] | None:
    """Parse a block of ``n_lines`` job lines with numpy's C reader.

    First try int64 for the integer fields (strict: ``"3.0"``, ``"1e2"`` or an int64
    overflow fail), which is about 4x faster than parsing every field as a float. If that fails,
    parse all fields as float64 and leave the integer checks to :meth:`Parser.check_values`.
    Returns None when the block holds anything but plain numbers (numpy takes ``"+12"``), or
    when neither parse gives ``n_lines`` rows of 18 fields (the caller then goes line by line
    to report or skip the bad lines).
    """
    if not _plain_numbers(buf):  # "+12", "1_000", letters: the line-by-line checks decide
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a lenient/deprecated conversion must not pass
        try:
            rec = np.loadtxt(io.BytesIO(buf), dtype=_STRUCT, comments=None, ndmin=1)
            if rec.shape == (n_lines,):
                return [np.ascontiguousarray(rec[name]) for name in FIELDS]
        except (ValueError, TypeError, OverflowError, Warning):
            pass
        try:
            values = np.loadtxt(io.BytesIO(buf), dtype=np.float64, comments=None, ndmin=2)
            if values.shape == (n_lines, _NF):
                return _columns(values)
        except (ValueError, TypeError, OverflowError, Warning):
            pass
    return None


def _plain_numbers(buf: bytes) -> bool:
    """True when ``buf`` holds nothing but whitespace and plain numbers (digits, ".", "-",
    exponents): no "+" outside an exponent, no "_", no letters but "e"."""
    if buf.translate(None, _NUMBER_BYTES):
        return False
    return b"+" not in buf or _LONE_PLUS_RE.search(buf) is None


def _not_a_number(tok: bytes) -> str:
    try:
        float(tok)
    except ValueError:
        return f"not a number: {_text(tok)!r}"
    return f"not a plain decimal number: {_text(tok)!r} (no '+' sign, no '_')"


def _text(tok: bytes) -> str:
    return tok.decode("utf-8", "replace")


def _where(path, line) -> str:
    return f"{path or '<swf>'}:{line}"
