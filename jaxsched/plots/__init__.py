"""Pictures of schedules (host side, matplotlib — the optional ``plot`` extra).

:mod:`jaxsched.plots.schedule`: a schedule's Gantt chart over its utilisation and queue time
series (``jaxsched plot schedule FILE``), and the wait distributions of several schedules of the
same jobs side by side (``jaxsched plot compare FILE FILE …``). Training curves are drawn by
each system (``jaxsched plot DIR``)."""

from pathlib import Path

from jaxsched.errors import ConfigError

__all__ = ["pyplot", "save_png"]


def pyplot():
    """``matplotlib.pyplot`` with the file-only Agg backend (no display needed), or a one-line
    :class:`~jaxsched.errors.ConfigError` naming the ``plot`` extra when matplotlib is missing.
    Every picture of the package gets its pyplot here."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("plotting needs matplotlib: pip install 'jaxsched[plot]'") from None
    return plt


def save_png(fig, path, *, dpi: int = 100) -> Path:
    """Lay out ``fig``, write it to ``path`` (PNG) whole or not at all, close it; returns the
    path.  The picture is drawn into memory first and written by :func:`jaxsched.fileio.
    atomic_write` (a missing folder is a one-line error; none is created)."""
    import io

    from jaxsched.fileio import atomic_write

    path = Path(path)
    try:
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=dpi)
    finally:
        pyplot().close(fig)
    atomic_write(path, png.getvalue())
    return path
