"""SchedInspector training curve (``jaxsched plot DIR``), the paper's Fig. 4 view: the
training reward per epoch and, with validation, the base scheduler alone against base +
inspector (greedy) on the held-out sequences, and there the inspector's rejection ratio and
the utilisation with and without it."""

from __future__ import annotations

from pathlib import Path

from jaxsched.plots import pyplot, save_png
from jaxsched.train.loop import read_log

__all__ = ["plot"]


def plot(out, path=None) -> Path:
    """The curve as a PNG (default ``DIR/training.png``); returns its path."""
    rows = read_log(out, nonempty=True)
    plt = pyplot()
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    ax[0].plot([r["epoch"] for r in rows], [r["reward"] for r in rows])
    ax[0].axhline(0.0, color="grey", lw=0.5)
    ax[0].set(xlabel="epoch", ylabel="training reward per trajectory")
    val = [r for r in rows if "val_inspected" in r]
    epochs = [r["epoch"] for r in val]
    ax[1].plot(epochs, [r["val_base"] for r in val], "s--", label="base alone")
    ax[1].plot(epochs, [r["val_inspected"] for r in val], "o-", label="base + inspector")
    ax[1].set(xlabel="epoch", ylabel="validation metric (greedy)")
    if val:
        ax[1].legend()
    ax[2].plot(epochs, [r["val_rejection"] for r in val], "o-", label="rejection ratio")
    if any("val_util" in r for r in val):  # logged since the utilisation was validated too
        nan = float("nan")
        ax[2].plot(epochs, [r.get("val_util_base", nan) for r in val], "s--", label="util, base")
        ax[2].plot(epochs, [r.get("val_util", nan) for r in val], "o-", label="util, inspected")
        ax[2].legend()
    ax[2].set(xlabel="epoch", ylabel="validation fraction", ylim=(0, 1))
    return save_png(fig, path or Path(out) / "training.png")
