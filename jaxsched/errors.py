"""User-facing error types of jaxsched.

Every error a user can cause with bad input (a malformed trace, an impossible parameter) is a
:class:`JaxschedError`; the command line catches exactly these (plus ``OSError``) and prints them
as one line, ``jaxsched: error: <message>``, with exit status 2.  Programming errors (wrong types
passed to a function) stay ordinary Python exceptions.
"""

from __future__ import annotations

import operator
import os

__all__ = [
    "JaxschedError",
    "SWFError",
    "ScheduleError",
    "SWFWarning",
    "ConfigError",
    "CheckpointError",
    "as_int",
]


class JaxschedError(Exception):
    """Base class of all user-facing jaxsched errors."""


class ConfigError(JaxschedError, ValueError):
    """An invalid user-supplied parameter (sequence length, start index, seed, ...)."""


class CheckpointError(JaxschedError):
    """A checkpoint that cannot be used: missing, corrupt, truncated, or saved for a different
    configuration / parameter shapes.  The message is one line naming the file."""


class SWFError(JaxschedError, ValueError):
    """A problem with a Standard Workload Format file.

    Attributes:
        path: the file (``str``), or None when the text did not come from a file.
        line: 1-based line number in the (decompressed) file, or None when the problem is not
            tied to one line (missing file, empty file, missing header value).
        field: what is wrong on that line: a data field such as ``"run (field 4)"`` or a header
            label such as ``"MaxProcs"``; None when the whole line / file is at fault.
        message: the description of the problem.

    ``str(err)`` is ``"path:line: field: message"``; missing parts are left out together with
    their separator (``"path: message"``, ``"path:12: message"``, ``"field: message"``, ...).
    """

    def __init__(
        self,
        path=None,
        line: int | None = None,
        field: str | None = None,
        message: str = "invalid SWF data",
    ):
        self.path = None if path is None else os.fspath(path)
        self.line = None if line is None else int(line)
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path or ""
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        parts = [p for p in (where, self.field, self.message) if p]
        return ": ".join(parts)

    def __reduce__(self):  # keep pickling (multiprocessing) working with the custom __init__
        return (type(self), (self.path, self.line, self.field, self.message))


class ScheduleError(SWFError):
    """A schedule file (SWF with start times, or Batsim's jobs CSV) that cannot be read, or a
    schedule the machine could not have run (:mod:`jaxsched.workload.validate`); the same
    ``path:line: field: message`` form as :class:`SWFError`."""


class SWFWarning(UserWarning):
    """Issued (once per file) when bad SWF lines were skipped or values were patched."""


def as_int(value, name: str, minimum: int | None = None) -> int:
    """``value`` as a Python int (anything with ``__index__`` but a bool), at least ``minimum``;
    otherwise a :class:`ConfigError` naming ``name``."""
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and v < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {v}")
    return int(v)
