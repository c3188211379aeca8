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


def save_png(fig, path) -> Path:
    """Lay out ``fig``, write it to ``path`` (PNG, 100 dpi), close it; returns the path."""
    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)
    return path
