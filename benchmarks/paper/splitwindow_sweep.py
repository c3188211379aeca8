"""The window sweep of the split-window paper (Figs. 5 and 6) from trained runs.

Every run directory given (one ``jaxsched train splitwindow`` run per window ``M_h-M_t``) is
scored with its validation-chosen ``best.ckpt`` (its newest checkpoint without one), greedy, on
the same ``--episodes`` fresh episodes (starts ``RandomState(--seed)``, as
``benchmarks/speed/splitwindow_env.py``). Printed and written to ``--json``: per configuration the
mean ± standard error of average wait, average queue length, utilisation, invisible jobs per
decision and the partially observed fraction; per window size M, every tail's paired
difference to the same M's unsplit window (M_t = 0) on the same episodes. ``--png`` draws
Fig. 5 (wait and queue length against M_t, one line per M) and Fig. 6 (invisible jobs and
partially observed fraction). Configurations already in ``--json`` with the same checkpoint are
not evaluated again, so the script can follow a sweep while it trains.

    PYTHONPATH=. .venv/bin/python benchmarks/paper/splitwindow_sweep.py runs/fig5/h*t* \
        --episodes 100 --seed 3 --json runs/fig5/eval.json --png fig5.png
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.speed.splitwindow_env import SIZE_CLASSES, _shared, mean_se, size_class_waits
from jaxsched.errors import CheckpointError

#: the metrics of Figs. 5 and 6 (keys of ``greedy_metrics``)
SWEEP_METRICS = ("avg_wait", "avg_queue_len", "util", "mean_invisible", "partial_fraction")


def chosen_checkpoint(run: Path) -> Path:
    """``best.ckpt`` of a run validated during training, else the run directory (its newest)."""
    return run / "best.ckpt" if (run / "best.ckpt").is_file() else run


def score_run(jobs, run: Path, starts, types: bool = False) -> dict:
    """Per-episode metrics of the run's chosen checkpoint on ``starts`` (lists of floats); with
    ``types`` also each episode's per-job-type wait (s, rounded) and placements ``[B][T]``."""
    from jaxsched.nets.splitwindow import SWActor
    from jaxsched.systems.splitwindow.run import check_obs_dim, greedy_metrics, load_model, make_env

    model = load_model(chosen_checkpoint(run))
    env = make_env(jobs, model.run)
    check_obs_dim(model, env)
    actor = SWActor(env.num_actions, tuple(model.run.hidden), model.run.activation)
    m = greedy_metrics(env, actor, model.params, starts)
    row = {
        "head": model.run.head, "tail": model.run.tail, "mask": model.run.mask,
        "epoch": model.epoch, "checkpoint": str(model.path),
        "per_episode": {k: [float(x) for x in np.asarray(m[k])] for k in SWEEP_METRICS},
    }  # fmt: skip
    if types:
        row["type_wait"] = np.rint(np.asarray(m["type_wait"])).astype(int).tolist()
        row["type_count"] = np.asarray(m["type_count"]).astype(int).tolist()
    return row


def config_name(head: int, tail: int, mask: bool) -> str:
    """``"M_h-M_t"``, with `` no-mask`` for an agent trained without the action mask."""
    return f"{head}-{tail}" + ("" if mask else " no-mask")


def unsplit_name(r: dict) -> str:
    """The name of the unsplit window (M_t = 0) of the same M and mask as row ``r``."""
    return config_name(r["head"] + r["tail"], 0, r["mask"])


def versus_unsplit(rows: dict) -> dict:
    """Per configuration ``M_h-M_t`` with M_t > 0: the paired difference of each metric to the
    unsplit ``M-0`` of the same M (mean ± s.e.; relative as a fraction of the unsplit mean),
    where that configuration was scored."""
    out = {}
    for name, r in rows.items():
        base = rows.get(unsplit_name(r))
        if r["tail"] == 0 or base is None:
            continue
        d = {}
        for k in SWEEP_METRICS:
            a, b = np.asarray(r["per_episode"][k]), np.asarray(base["per_episode"][k])
            d[k] = mean_se(a - b) + [float((a - b).mean() / b.mean()) if b.mean() else 0.0]
        out[name] = d
    return out


def type_summary(row: dict) -> dict:
    """Fig. 7 of one configuration: per job type the placement-weighted average wait (s; 0
    where never placed) and the placements per episode, lists ``[T]``."""
    w, c = np.asarray(row["type_wait"], np.float64), np.asarray(row["type_count"], np.float64)
    total = c.sum(0)
    wait = np.divide((w * c).sum(0), total, out=np.zeros_like(total), where=total > 0)
    return {"wait": wait.tolist(), "placements": (total / len(c)).tolist()}


def size_classes(rows: dict) -> dict:
    """Per configuration scored with types and per job-size class of ``SIZE_CLASSES``: its
    placements per episode and the wait of its placed jobs (over the episodes that placed
    one), ``[mean, s.e.]``, and the placements' paired difference to the unsplit window."""
    per = {}
    for name, r in rows.items():
        if "type_wait" in r:
            per[name] = size_class_waits(r)
    out = {}
    for name, w in per.items():
        r = rows[name]
        base = per.get(unsplit_name(r))
        row = {}
        for cls in SIZE_CLASSES:
            placed = w["placed_" + cls.removeprefix("wait_")]
            waits = w[cls][placed > 0]  # none placed in any episode: no wait (None)
            row[cls] = {
                "placements": mean_se(placed),
                "wait": mean_se(waits) if waits.size else None,
            }
            if base is not None and r["tail"] > 0:
                d = placed - base["placed_" + cls.removeprefix("wait_")]
                row[cls]["placements_versus_unsplit"] = mean_se(d)
        out[name] = row
    return out


def types_versus_unsplit(rows: dict) -> dict:
    """Per configuration with a tail and its unsplit window scored with types: per job type the
    paired difference of its average wait to the unsplit window's over the episodes where both
    placed that type (``[mean, s.e., episodes]``), and how many types wait less (mean below 0)
    and significantly less or more (mean beyond 2 s.e.)."""
    out = {}
    for name, r in rows.items():
        base = rows.get(unsplit_name(r))
        if r["tail"] == 0 or base is None or "type_wait" not in r or "type_wait" not in base:
            continue
        wa, ca = np.asarray(r["type_wait"], float), np.asarray(r["type_count"])
        wb, cb = np.asarray(base["type_wait"], float), np.asarray(base["type_count"])
        per = []
        for t in range(wa.shape[1]):
            both = (ca[:, t] > 0) & (cb[:, t] > 0)
            d = wa[both, t] - wb[both, t]
            per.append(mean_se(d) + [int(both.sum())] if both.any() else None)
        seen = [p for p in per if p is not None and p[2] > 1]
        out[name] = {
            "per_type": per,
            "types": len(seen),
            "lower": sum(p[0] < 0 for p in seen),
            "lower_2se": sum(p[0] + 2 * p[1] < 0 for p in seen),
            "higher_2se": sum(p[0] - 2 * p[1] > 0 for p in seen),
        }
    return out


def plot_types(rows: dict, path) -> Path:
    """Fig. 7: per job type (core bin x run-time bin) average wait and placements per episode,
    one line per configuration scored with types."""
    from jaxsched.plots import pyplot, save_png
    from jaxsched.sim.cores import CORE_EDGES, N_TYPES, RUN_EDGES

    plt = pyplot()
    fig, ax = plt.subplots(2, 1, figsize=(14, 8), sharex=True)
    for name, r in sorted(rows.items(), key=lambda kv: (kv[1]["head"] + kv[1]["tail"], kv[0])):
        if "type_wait" in r:
            t = type_summary(r)
            wait = np.where(np.asarray(t["placements"]) > 0, t["wait"], np.nan)  # gaps: unplaced
            ax[0].plot(range(N_TYPES), wait, "o-", ms=3, label=name)
            ax[1].plot(range(N_TYPES), t["placements"], "o-", ms=3, label=name)
    cores = [f"<={c}" for c in CORE_EDGES] + [f">{CORE_EDGES[-1]}"]
    runs = [f"<{r}s" for r in RUN_EDGES] + [f">={RUN_EDGES[-1]}s"]
    labels = [f"{c}c {r}" for c in cores for r in runs]
    ax[1].set_xticks(range(N_TYPES), labels, rotation=90, fontsize=7)
    ax[0].set(ylabel="average wait (s)", yscale="symlog")
    ax[1].set(ylabel="placements per episode", yscale="symlog", xlabel="job type (cores, run time)")
    ax[0].set_ylim(bottom=0)
    ax[1].set_ylim(bottom=0)
    ax[0].legend()
    fig.tight_layout()
    return save_png(fig, Path(path))


def plot(rows: dict, path) -> Path:
    """Fig. 5 (top: wait, queue) and Fig. 6 (bottom: invisible, partial fraction) against M_t."""
    from jaxsched.plots import pyplot, save_png

    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    panels = [("avg_wait", "average wait (s)"), ("avg_queue_len", "average queue length"),
              ("mean_invisible", "invisible jobs per decision"),
              ("partial_fraction", "partially observed fraction")]  # fmt: skip
    by_m = {}
    for r in rows.values():
        by_m.setdefault((r["head"] + r["tail"], r["mask"]), []).append(r)
    for ax, (k, label) in zip(axes.ravel(), panels, strict=True):
        for m, mask in sorted(by_m):
            rs = sorted(by_m[m, mask], key=lambda r: r["tail"])
            ms = [mean_se(r["per_episode"][k]) for r in rs]
            ax.errorbar([r["tail"] for r in rs], [v[0] for v in ms], yerr=[v[1] for v in ms],
                        marker="o", capsize=2, label=f"M = {m}{'' if mask else ' no mask'}")  # fmt: skip
        tails = sorted({r["tail"] for r in rows.values()})
        ax.set(xlabel="tail slots M_t", ylabel=label, xscale="symlog", xticks=tails)
        if k in ("avg_wait", "avg_queue_len"):  # from a few to a hundred times the best
            ax.set_yscale("log")
        ax.set_xticklabels([str(t) for t in tails])
    axes[0, 0].legend()
    return save_png(fig, Path(path))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="splitwindow run directories")
    ap.add_argument("--trace", default="lublin_256.swf.gz")
    ap.add_argument("--shared", default=None)
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--json", default=None, help="results (read first: scored runs are kept)")
    ap.add_argument("--png", default=None)
    ap.add_argument("--types", default=None, metavar="PNG",
                    help="also per-job-type waits and placements (Fig. 7), plotted to PNG")  # fmt: skip
    a = ap.parse_args(argv)
    from jaxsched.envs.splitwindow import SplitWindowEnv
    from jaxsched.workload import read_swf

    jobs = read_swf(_shared(a.shared) / "traces" / a.trace).jobs("rlscheduler")
    env = SplitWindowEnv(jobs, 1, 0)
    starts = np.random.RandomState(a.seed).randint(0, env.cfg.sample_high + 1, a.episodes)
    old = json.loads(Path(a.json).read_text()) if a.json and Path(a.json).is_file() else {}
    same = old.get("episodes") == a.episodes and old.get("seed") == a.seed
    rows = dict(old.get("configurations", {})) if same else {}
    for run in map(Path, a.runs):
        if not (run / "run.json").is_file():
            continue
        known = [n for n, r in rows.items() if r.get("run") == str(run)]
        ck = chosen_checkpoint(run)
        stamp = ck.stat().st_mtime if ck.is_file() else None
        typed = not a.types or (known and "type_wait" in rows[known[0]])
        if known and rows[known[0]].get("mtime") == stamp and typed:
            continue
        t0 = time.perf_counter()
        try:
            r = {**score_run(jobs, run, starts, bool(a.types)), "run": str(run), "mtime": stamp}
        except CheckpointError as e:  # a run that has not written a checkpoint yet
            print(f"skipped {run}: {e}")
            continue
        name = config_name(r["head"], r["tail"], r["mask"])
        rows[name] = r
        w, q = mean_se(r["per_episode"]["avg_wait"]), mean_se(r["per_episode"]["avg_queue_len"])
        print(f"{name:14s} epoch {r['epoch']:3d}  wait {w[0]:8.0f} ± {w[1]:5.0f}  "
              f"queue {q[0]:6.1f} ± {q[1]:4.1f}  ({time.perf_counter() - t0:.0f} s)")  # fmt: skip
    res = {"trace": a.trace, "episodes": a.episodes, "seed": a.seed, "configurations": rows}
    res["summary"] = {n: {k: mean_se(r["per_episode"][k]) for k in SWEEP_METRICS}
                      for n, r in rows.items()}  # fmt: skip
    res["versus_unsplit"] = versus_unsplit(rows)
    for name, d in res["versus_unsplit"].items():
        print(f"{name:14s} - unsplit: wait {d['avg_wait'][0]:+8.0f} ± {d['avg_wait'][1]:5.0f} "
              f"({100 * d['avg_wait'][2]:+.0f} %)  queue {d['avg_queue_len'][0]:+6.1f} ± "
              f"{d['avg_queue_len'][1]:4.1f} ({100 * d['avg_queue_len'][2]:+.0f} %)")  # fmt: skip
    if a.types:
        res["types"] = {n: type_summary(r) for n, r in rows.items() if "type_wait" in r}
        res["types_versus_unsplit"] = tv = types_versus_unsplit(rows)
        for name, d in tv.items():
            print(f"{name:14s} - unsplit, per job type: {d['lower']} of {d['types']} types wait "
                  f"less, {d['lower_2se']} by 2 s.e., {d['higher_2se']} more by 2 s.e.")  # fmt: skip
        res["size_classes"] = sc = size_classes(rows)
        for name, d in sc.items():
            w = d["wait_129plus"]
            vs = w.get("placements_versus_unsplit")
            print(f"{name:14s} 129+ cores: {w['placements'][0]:.2f} ± {w['placements'][1]:.2f} "
                  f"placed per episode" + (f" ({vs[0]:+.2f} ± {vs[1]:.2f} against unsplit)"
                  if vs else "") + (f", their wait {w['wait'][0]:.0f} ± {w['wait'][1]:.0f} s"
                  if w["wait"] else ""))  # fmt: skip
        print(plot_types(rows, a.types))
    if a.json:
        Path(a.json).write_text(json.dumps(res) + "\n")
    if a.png and rows:
        print(plot(rows, a.png))
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
