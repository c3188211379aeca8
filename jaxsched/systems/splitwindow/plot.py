"""Split-window training curve (``jaxsched plot DIR``): episode return per epoch and, with
validation, the greedy policy's average wait."""

from __future__ import annotations

from pathlib import Path

from jaxsched.plots import pyplot, save_png
from jaxsched.train.loop import read_log

__all__ = ["plot"]


def plot(out, path=None) -> Path:
    """The curve as a PNG (default ``DIR/training.png``)."""
    rows = read_log(out, nonempty=True)
    plt = pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].plot([r["epoch"] for r in rows], [r["episode_return"] for r in rows])
    ax[0].set(xlabel="epoch", ylabel="episode return")
    val = [r for r in rows if "val_avg_wait" in r]
    ax[1].plot([r["epoch"] for r in val], [r["val_avg_wait"] for r in val], "o-")
    ax[1].set(xlabel="epoch", ylabel="validation average wait (s)")
    return save_png(fig, path or Path(out) / "training.png")
