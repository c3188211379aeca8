"""A schedule's Gantt chart and time series; several schedules' waits compared.

Both functions take :class:`jaxsched.workload.schedule.Schedule` objects (read one with
:func:`jaxsched.workload.schedule.read_schedule`) and write a PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.plots import pyplot, save_png
from jaxsched.workload.schedule import Schedule, place_on_processors, time_series

__all__ = ["plot_schedule", "plot_compare", "size_classes"]

HOUR = 3600.0


def _gantt(ax, s: Schedule, t0: float, colours) -> None:
    from matplotlib.collections import PolyCollection

    rows, first, count = place_on_processors(s)
    x0 = (s.start[rows] - t0) / HOUR
    x1 = (s.end[rows] - t0) / HOUR
    boxes = np.stack(
        [
            np.stack([x0, first], 1),
            np.stack([x1, first], 1),
            np.stack([x1, first + count], 1),
            np.stack([x0, first + count], 1),
        ],
        1,
    )
    face = colours(np.asarray(s.job_id[rows] * 7919 % 20, float) / 20.0)
    edge = "k" if s.n_jobs <= 400 else "none"
    ax.add_collection(PolyCollection(boxes, facecolors=face, edgecolors=edge, linewidths=0.2))
    top = max(int((first + count).max()) if rows.size else 0, s.num_procs)
    ax.axhline(s.num_procs, color="red", linewidth=0.8, linestyle="--")
    ax.set_ylim(0, top)
    ax.set_ylabel("processor")


def plot_schedule(s: Schedule, out, *, t_from=None, t_to=None, title: str | None = None) -> Path:
    """Gantt chart (processors × time, one rectangle per contiguous block of a job, first-fit by
    processor index) above the utilisation and the number of waiting jobs, as a PNG.

    ``t_from``/``t_to`` (seconds, the file's clock) restrict the picture to the jobs running in
    that window; the time axis is in hours from its left edge. Returns the PNG's path."""
    w = s.window(t_from, t_to)
    if w.n_jobs == 0:
        raise ConfigError(
            f"{s.path}: no job runs between {t_from} and {t_to} (its jobs run from "
            f"{int(s.start.min())} to {int(s.end.max())} s)"
        )
    plt = pyplot()
    t0 = float(w.start.min() if t_from is None else t_from)
    t1 = float(w.end.max() if t_to is None else t_to)
    fig, (ax, ay) = plt.subplots(
        2, 1, figsize=(11, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
    )
    _gantt(ax, w, t0, plt.get_cmap("tab20"))
    ts = time_series(s)
    shown = slice(max(int(np.searchsorted(ts.time, t0, side="right")) - 1, 0),
                  int(np.searchsorted(ts.time, t1, side="right")))  # fmt: skip
    x = (np.clip(ts.time[shown], t0, None) - t0) / HOUR
    ay.step(x, 100.0 * ts.busy[shown] / ts.num_procs, where="post", color="C0", linewidth=0.8)
    ay.set_ylabel("utilisation %", color="C0")
    ay.set_ylim(0, 105)
    aq = ay.twinx()
    aq.step(x, ts.waiting[shown], where="post", color="C3", linewidth=0.8)
    aq.set_ylabel("waiting jobs", color="C3")
    ay.set_xlim(0, (t1 - t0) / HOUR)
    ay.set_xlabel(f"hours since t = {int(t0)} s")
    mean_wait = float(w.wait.mean()) / HOUR
    ax.set_title(
        title
        or f"{Path(s.path).name}: {w.n_jobs:,} jobs, {s.num_procs:,} processors, "
        f"mean wait {mean_wait:.2f} h"
    )
    return _save(fig, plt, out)


def _save(fig, plt, out) -> Path:
    return save_png(fig, out, dpi=120)


def _mean_hours(wait: np.ndarray) -> float:
    return float(wait.mean()) / HOUR if wait.size else 0.0


def size_classes(procs: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Jobs grouped by size in powers of two: class ``k`` holds ``2**(k-1) < procs <= 2**k``
    (class 0 = one processor). Returns the int class per job and the labels of classes 0..max."""
    k = np.ceil(np.log2(np.maximum(procs, 1))).astype(np.int64)
    top = int(k.max())
    labels = ["1", "2"] + [f"{2 ** (i - 1) + 1}–{2**i}" for i in range(2, top + 1)]
    return k, labels[: top + 1]


def plot_compare(schedules: list[Schedule], labels: list[str], out, *, top_users: int = 10):
    """Waits of several schedules of the same jobs: mean wait per job-size class (powers of two),
    the distribution of waits (empirical CDF) and the mean wait of the ``top_users`` users with
    the most jobs. Returns the PNG's path."""
    if len(schedules) != len(labels) or not schedules:
        raise ConfigError("plot compare needs one label per schedule")
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    _, names = size_classes(np.concatenate([s.procs for s in schedules]))
    width = 0.8 / len(schedules)
    users, n = np.unique(schedules[0].user, return_counts=True)
    pick = users[np.argsort(-n, kind="stable")[:top_users]]
    for i, (s, lab) in enumerate(zip(schedules, labels)):
        k, _ = size_classes(s.procs)
        means = [_mean_hours(s.wait[k == c]) for c in range(len(names))]
        axes[0].bar(np.arange(len(names)) + i * width, means, width, label=lab)
        w = np.sort(s.wait) / HOUR
        axes[1].step(w, np.arange(1, w.size + 1) / w.size, where="post", label=lab)
        axes[2].bar(
            np.arange(pick.size) + i * width,
            [_mean_hours(s.wait[s.user == u]) for u in pick],
            width,
            label=lab,
        )
    axes[0].set_xticks(np.arange(len(names)) + 0.4 - width / 2, names, rotation=45)
    axes[0].set(xlabel="processors", ylabel="mean wait (h)", title="wait by job size")
    axes[1].set(xlabel="wait (h)", ylabel="fraction of jobs", title="wait distribution")
    axes[1].set_xscale("symlog", linthresh=0.1)
    axes[2].set_xticks(np.arange(pick.size) + 0.4 - width / 2, [str(u) for u in pick], rotation=45)
    axes[2].set(xlabel=f"user (the {pick.size} with most jobs)", ylabel="mean wait (h)")
    axes[2].set_title("wait by user")
    axes[0].legend()
    return _save(fig, plt, out)
