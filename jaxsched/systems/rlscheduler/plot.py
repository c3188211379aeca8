"""RLScheduler's training curve (``jaxsched plot DIR``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from jaxsched.plots import pyplot, save_png
from jaxsched.systems.rlscheduler.config import VAL_INFO, RunConfig
from jaxsched.train.loop import RUN_FILE, read_log, read_run_json

__all__ = ["plot"]


def plot(out, path=None) -> Path:
    """Training curve as a PNG: the metric of each epoch's sampled sequences with SJF and F1 on
    the same sequences, and with ``--validate`` the greedy policy's validation scores with SJF
    and F1 on the validation sequences (horizontal lines)."""
    rows = read_log(out, nonempty=True)
    rc = RunConfig.from_dict(read_run_json(Path(out) / RUN_FILE))
    plt = pyplot()
    ep = [r["epoch"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(ep, [r.get(rc.metric, np.nan) for r in rows], label="RL (training sequences)")
    for p in ("sjf", "f1"):
        k = f"{p}_{rc.metric}"
        if any(k in r for r in rows):
            ax.plot(ep, [r.get(k, np.nan) for r in rows], "--", label=p.upper())
    vk = f"val_{rc.metric}"
    val_rows = [r for r in rows if vk in r]
    if val_rows:
        ax.plot(
            [r["epoch"] for r in val_rows],
            [r[vk] for r in val_rows],
            "o-",
            ms=3,
            label="RL greedy (validation sequences)",
        )
        info = Path(out) / VAL_INFO
        heur = json.loads(info.read_text()) if info.is_file() else {}
        for p, style in (("sjf", ":"), ("f1", "-.")):
            if isinstance(heur.get(p), (int, float)):
                ax.axhline(
                    heur[p],
                    linestyle=style,
                    color="gray",
                    linewidth=1,
                    label=f"{p.upper()} (validation sequences)",
                )
    ax.set_xlabel("epoch")
    ax.set_ylabel(rc.metric)
    ax.set_title(f"{Path(rc.trace).name}, backfill {rc.backfill}")
    ax.legend()
    return save_png(fig, path or Path(out) / "training_curve.png")
