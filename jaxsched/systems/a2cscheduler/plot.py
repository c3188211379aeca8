"""A2cScheduler training curve (``jaxsched plot DIR``): the mean slowdown of the epoch's
training episodes and, where the run validated (``--validate-every``), the greedy policy's
slowdown on its validation jobsets; the policy's entropy beside them."""

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
    ax[0].plot([r["epoch"] for r in rows], [r["ep_slowdown"] for r in rows], label="training")
    val = [r for r in rows if "eval_slowdown" in r]
    ax[0].plot(
        [r["epoch"] for r in val], [r["eval_slowdown"] for r in val], "o-", label="validation"
    )
    ax[0].set(xlabel="epoch", ylabel="mean job slowdown")
    ax[0].legend()
    ax[1].plot([r["epoch"] for r in rows], [r["entropy"] for r in rows])
    ax[1].set(xlabel="epoch", ylabel="policy entropy")
    return save_png(fig, path or Path(out) / "training.png")
