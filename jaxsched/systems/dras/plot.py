"""DRAS's evaluation figures (spec ``dras.md`` §10): the Kiviat chart (Fig. 6), wait against
job size per class (Fig. 7) and weekly core-hours / average wait (Fig. 9), as PNG files.
matplotlib is optional (``pip install 'jaxsched[plot]'``); without it a ConfigError says so.

Inputs: the ``{method: metrics}`` table of :func:`jaxsched.systems.dras.report.method_table`
(Kiviat) or ``{method: schedule}`` mappings (see :mod:`jaxsched.sim.dras_metrics`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from jaxsched.plots import pyplot, save_png
from jaxsched.sim.dras_metrics import CLASSES, KIVIAT_AXES, weekly

__all__ = ["plot_kiviat", "plot_wait_vs_size", "plot_weekly", "plot_training"]

_AXIS_LABELS = ("1/avg wait", "1/max wait", "1/avg slowdown", "1/avg response", "utilisation")


def _save(fig, plt, path) -> Path:
    return save_png(fig, path, dpi=110)


def plot_kiviat(table: dict, path) -> Path:
    """One polygon per method from ``table[method]["kiviat"]`` (axes of
    :data:`~jaxsched.sim.dras_metrics.KIVIAT_AXES`), its area in the legend."""
    plt = pyplot()
    k = len(KIVIAT_AXES)
    ang = [2 * math.pi * i / k for i in range(k)] + [0.0]
    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(projection="polar")
    for name, row in table.items():
        r = list(row["kiviat"]) + [row["kiviat"][0]]
        ax.plot(ang, r, label=f"{name} ({row['kiviat_area']:.2f})")
        ax.fill(ang, r, alpha=0.1)
    ax.set_xticks(ang[:-1], _AXIS_LABELS)
    ax.set_ylim(0, 1)
    ax.set_rlabel_position(180 / k)  # radial ticks between the first two axes
    ax.legend(loc="lower left", bbox_to_anchor=(-0.15, -0.15), fontsize=8)
    return _save(fig, plt, path)


def plot_wait_vs_size(schedules: dict, path) -> Path:
    """Fig. 7: per method a panel of wait (h) against job size (nodes), one colour per class."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(schedules), figsize=(4 * len(schedules), 3.5), squeeze=False)
    for ax, (name, sch) in zip(axes[0], schedules.items()):
        wait = (np.asarray(sch["start"]) - np.asarray(sch["submit"])) / 3600.0
        n, cls = np.asarray(sch["nodes"]), np.asarray(sch["cls"])
        for code, cname in CLASSES.items():
            m = cls == code
            if m.any():
                ax.scatter(n[m], wait[m], s=4, label=cname)
        ax.set(title=name, xlabel="job size (nodes)", ylabel="wait (h)")
        ax.legend(fontsize=7)
    return _save(fig, plt, path)


def plot_weekly(schedules: dict, path, t0: int | None = None) -> Path:
    """Fig. 9: weekly core-hours (top) and weekly average wait (bottom), one line per method."""
    plt = pyplot()
    fig, (top, bot) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for name, sch in schedules.items():
        w = weekly(sch["submit"], sch["run"], sch["nodes"], sch["start"], t0=t0)
        x = np.arange(len(w["core_hours"]))
        top.plot(x, w["core_hours"], label=name)
        bot.plot(x, w["avg_wait"] / 3600.0, label=name)
    top.set(ylabel="core-hours")
    bot.set(xlabel="week", ylabel="average wait (h)")
    top.legend(fontsize=8)
    return _save(fig, plt, path)


def plot_training(out, path=None) -> Path:
    """A DRAS run's training curve (``jaxsched plot DIR``): the mean wait of the training
    jobsets and of the validation month per epoch, and the epoch's reward; a PNG (default
    ``DIR/training.png``)."""
    from jaxsched.train.loop import read_log

    rows = read_log(out, nonempty=True)
    plt = pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    epochs = [r["epoch"] for r in rows]
    ax[0].plot(epochs, [r["avg_wait"] / 3600 for r in rows], label="training jobsets")
    val = [r for r in rows if "val_wait" in r]
    ax[0].plot([r["epoch"] for r in val], [r["val_wait"] / 3600 for r in val], "o-",
               label="validation month")  # fmt: skip
    ax[0].set(xlabel="epoch", ylabel="average wait (h)")
    ax[0].legend()
    ax[1].plot(epochs, [r["reward"] for r in rows])
    ax[1].set(xlabel="epoch", ylabel="reward per epoch")
    return save_png(fig, path or Path(out) / "training.png")
