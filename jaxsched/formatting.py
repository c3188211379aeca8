"""Numbers as the command line prints them (one place for every table and progress line)."""

from __future__ import annotations

import math

__all__ = ["number", "std_error", "count", "scientific"]


def number(v: float, signed: bool = False) -> str:
    """4 decimals below 10 in magnitude, else 2 with thousands separators; ``nan`` for
    non-finite values; a leading sign when ``signed``."""
    v = float(v)
    if not math.isfinite(v):
        return "nan"
    sign = "+" if signed else ""
    return f"{v:{sign}.4f}" if abs(v) < 10 else f"{v:{sign},.2f}"


def std_error(e: float) -> str:
    """A standard error: 2 decimals from 0.1 up, else 3 significant digits."""
    e = float(e)
    if not math.isfinite(e):
        return "nan"
    return f"{e:,.2f}" if abs(e) >= 0.1 else f"{e:.3g}"


def count(v, digits: int = 1) -> str:
    """Whole numbers with thousands separators, other values with ``digits`` decimals;
    ``-`` for None."""
    if v is None:
        return "-"
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,.{digits}f}"


def scientific(x: float) -> str:
    """A small error figure: ``0``, else two significant digits in scientific notation."""
    return "0" if x == 0 else f"{x:.1e}"
