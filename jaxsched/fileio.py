"""Every file jaxsched writes appears whole or not at all.

:func:`atomic_write` writes the bytes under a fresh, unpredictable temporary name in the
destination's own folder (created with ``O_EXCL``, so a planted file or symbolic link there is
never followed or overwritten), flushes and fsyncs it, then renames it over the final name
(``os.replace``, atomic on POSIX) and fsyncs the folder.  A crash or a kill at any point leaves
either the old file (or none) or the complete new one under the final name, never a part.

The destination's folder must exist: a missing folder is a one-line
:class:`jaxsched.errors.ConfigError`, not a silently created tree.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import secrets
from pathlib import Path

from jaxsched.errors import ConfigError

__all__ = ["atomic_write", "atomic_writer", "append_line", "check_folder"]


def _check_folder(path: Path) -> Path:
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ConfigError(f"{path}: the folder {folder} {what}")
    return folder


def check_folder(path) -> None:
    """The one-line :class:`~jaxsched.errors.ConfigError` :func:`atomic_write` would give for
    ``path``'s folder, now: a command checks its output's folder before the work, not after."""
    _check_folder(Path(os.fspath(path)))


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some file systems cannot open a folder; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_writer(path, *, gzip_by_suffix: bool = False):
    """A binary file object whose content replaces ``path`` atomically when the ``with`` block
    ends without an exception; on an exception the temporary file is removed and ``path`` is
    left as it was.  With ``gzip_by_suffix`` a ``path`` ending in ``.gz`` is gzip-compressed
    (deterministically: no time stamp)."""
    final = Path(os.fspath(path))
    folder = _check_folder(final)
    tmp = folder / f".{final.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as raw:
            if gzip_by_suffix and final.name.endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
                    yield gz
            else:
                yield raw
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)


def atomic_write(path, data: bytes | str, *, gzip_by_suffix: bool = False) -> Path:
    """Write ``data`` (``str`` is encoded as UTF-8) to ``path`` atomically; returns the path.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write(d / "a.txt", "hello\\n").read_text()
    'hello\\n'
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    with atomic_writer(path, gzip_by_suffix=gzip_by_suffix) as fh:
        fh.write(data)
    return Path(os.fspath(path))


def append_line(path, line: str) -> None:
    """Append one complete line (``line`` plus a newline) to a log file and fsync it.

    A log whose last line was cut by a kill (no final newline) is first truncated back to its
    last complete line, so a new row is never glued onto a partial one."""
    p = Path(os.fspath(path))
    if "\n" in line:
        raise ValueError("append_line: the line must not contain a newline")
    with open(p, "ab+") as fh:
        size = fh.seek(0, io.SEEK_END)
        if size:
            fh.seek(max(0, size - 1))
            if fh.read(1) != b"\n":
                fh.seek(0)
                text = fh.read()
                fh.truncate(text.rfind(b"\n") + 1)
        fh.seek(0, io.SEEK_END)
        fh.write(line.encode("utf-8") + b"\n")
        fh.flush()
        os.fsync(fh.fileno())
