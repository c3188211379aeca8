"""Split-window environment speed and heuristic baselines on Lublin-1.

1. Environment steps/s: ``B`` vmapped episodes of :class:`SplitWindowEnv` played to their end
   (1,000 placements) by a fixed observation policy (P1, or ``--policy random``: uniform over
   the M + 1 actions), compile time reported separately.
2. The heuristics FCFS / SJF (fewest cores) / LCFS / SJF-run x back-filling none / rlscheduler /
   easy on the same ``--episodes`` evaluation episodes (starts ``RandomState(--seed)``, kept in
   the JSON), the §8 metrics as mean ± standard error; ``--baselines-from JSON`` takes them
   from an earlier ``--json`` of the same trace and starts instead (running them takes 301 s at
   100 episodes on the idle 2-core CPU, one compiled call per heuristic: its "baselines: … in
   … s" line; 1,380 s beside two training runs when it was one call for all twelve).
3. With ``--model DIR`` (repeatable): the trained agent of each ``jaxsched train splitwindow``
   run (newest checkpoint, or the checkpoint named; greedy) on the same episodes, each in its
   own window and options (mask, σ, ...) as its run recorded them, with the paired difference
   to every heuristic.
4. With ``--rlscheduler MODEL`` (repeatable): a trained RLScheduler policy as one more
   baseline (:mod:`jaxsched.envs.splitwindow_learned`), its run's back-filling around its
   choice; with ``--inspector MODEL`` (repeatable) a trained SchedInspector inspecting its
   base heuristic online (``--inspector-backfill``). Rows 3 and 4 after the first are paired
   against the first.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/splitwindow_env.py --batch 16 --episodes 20
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs.splitwindow import SplitWindowEnv, obs_policy, run_episodes
from jaxsched.envs.splitwindow_baselines import baseline_names, run_baselines
from jaxsched.nets.splitwindow import SWActor
from jaxsched.workload import read_swf

METRICS = (
    "avg_wait", "util", "util_arrival_span", "avg_queue_len", "avg_bsld", "job_load", "steps",
)  # fmt: skip
#: job-size classes for the starvation question (Fig. 7): (fewest, most) cores, None = no bound
SIZE_CLASSES = {"wait_narrow": (1, 8), "wait_wide": (65, None), "wait_129plus": (129, None)}


def size_class_waits(m) -> dict:
    """Per episode, the placement-weighted mean wait of each class of ``SIZE_CLASSES`` from the
    metrics' per-job-type ``type_wait`` and ``type_count`` ``[B, T]`` (a class takes the types
    whose core bin, :func:`jaxsched.sim.cores.core_bin`, lies within its bounds' bins): float64
    ``[B]`` each (0 with no placement); and each class's placements, ``placed_<class>`` (e.g.
    ``placed_129plus``)."""
    from jaxsched.sim.cores import core_bin, type_core_bins

    tw, tc = np.asarray(m["type_wait"], np.float64), np.asarray(m["type_count"], np.float64)
    bins = type_core_bins()
    out = {}
    for name, (lo, hi) in SIZE_CLASSES.items():
        sel = (bins >= core_bin(lo)) & (bins <= (bins.max() if hi is None else core_bin(hi)))
        out[name] = (tw[:, sel] * tc[:, sel]).sum(1) / np.maximum(tc[:, sel].sum(1), 1)
        out["placed_" + name.removeprefix("wait_")] = tc[:, sel].sum(1)
    return out


def _shared(arg) -> Path:
    if arg:
        return Path(arg)
    if os.environ.get("JAXSCHED_SHARED"):
        return Path(os.environ["JAXSCHED_SHARED"])
    return Path(__file__).resolve().parents[3] / "shared"


def env_speed(env, starts, policy: str) -> dict:
    """Compile seconds, run seconds and agent steps/s of playing ``starts`` to the end."""
    h, t = env.cfg.head, env.cfg.tail

    def act(s, o, a):
        if policy == "random":
            key = jax.random.fold_in(jax.random.PRNGKey(a), s.steps)
            return jax.random.randint(key, (), 0, env.num_actions, jnp.int32)
        return obs_policy(o.obs, policy, h, t, env.cfg.n_cores)

    fn = jax.jit(lambda e, s: run_episodes(e, s, act, jnp.arange(s.shape[0])))
    t0 = time.perf_counter()
    comp = fn.lower(env, starts).compile()
    t1 = time.perf_counter()
    out = jax.block_until_ready(comp(env, starts))
    t2 = time.perf_counter()
    steps = int(np.sum(out["steps"]))
    return {
        "compile_s": round(t1 - t0, 2),
        "run_s": round(t2 - t1, 3),
        "steps": steps,
        "steps_per_s": round(steps / (t2 - t1)),
        "mean_steps_per_episode": float(np.mean(out["steps"])),
        "max_steps_per_episode": int(np.max(out["steps"])),
    }


def _paired(model: dict, base: dict, names, echo: bool = True) -> dict:
    """Model minus each heuristic on the same episodes: mean and paired standard error of the
    per-episode differences of average wait and of the utilisation over the episode's span and
    over the arrival span (printed unless ``echo`` is off)."""
    out = {}
    for i, name in enumerate(names):
        row = {}
        for k in ("avg_wait", "util", "util_arrival_span"):
            d = np.asarray(model[k], np.float64) - np.asarray(base[k][i], np.float64)
            row[k] = mean_se(d)
        out[name] = row
        u, ua = row["util"], row["util_arrival_span"]
        if echo:
            print(f"  minus {name:18s} wait {row['avg_wait'][0]:+.4g}±{row['avg_wait'][1]:.2g}  "
                  f"util {u[0]:+.4f}±{u[1]:.2g}  util_arrival_span {ua[0]:+.4f}±{ua[1]:.2g}")  # fmt: skip
    return out


def _model_row(jobs, path: str, starts, base, taken=()) -> dict:
    """The greedy agent of run or checkpoint ``path`` on ``starts``: mean ± standard error of
    each metric, and the paired differences to the heuristics ``base`` (None: not run). Its
    name gives the window, mask, reward weights other than the paper's and epoch, and ``path``
    as well when a row in ``taken`` has that name already."""
    from jaxsched.systems.splitwindow.run import check_obs_dim, greedy_metrics, load_model, make_env

    model = load_model(path)
    menv = make_env(jobs, model.run)
    check_obs_dim(model, menv)
    actor = SWActor(menv.num_actions, tuple(model.run.hidden), model.run.activation)
    m = greedy_metrics(menv, actor, model.params, starts)
    mask = " mask" if model.run.mask else ""
    w = model.run.weights
    weights = "" if np.allclose(w, 1 / 3) else " weights " + "/".join(f"{x:g}" for x in w)
    name = f"DBF {model.run.head}-{model.run.tail}{mask}{weights} (epoch {model.epoch})"
    if name in taken:
        name = f"{name} [{path}]"
    return _metrics_row(name, m, base)


def _rlscheduler_row(jobs, env, where: str, starts, base) -> dict:
    """A trained RLScheduler policy (run directory, checkpoint or shipped name) choosing the
    next job in the heuristics' cycle, with its run's back-filling around its choice."""
    from jaxsched.envs.splitwindow_baselines import run_picker
    from jaxsched.envs.splitwindow_learned import rlscheduler_pick
    from jaxsched.models import resolve
    from jaxsched.systems.rlscheduler.evaluate import load_policy

    pol = load_policy(resolve(where))
    if pol.run.user_feature:
        raise SystemExit(f"{pol.path}: a fairness model with the per-user feature cannot run here")
    fn = lambda o, k: pol.net.apply(pol.params, o, k)  # noqa: E731
    pick = rlscheduler_pick(jobs, fn, max_queue=pol.run.max_queue, cutoff=pol.run.cutoff)
    m = run_picker(env, starts, pick, pol.run.backfill)
    name = f"RLScheduler {where} + {pol.run.backfill} (epoch {pol.epoch})"
    return _metrics_row(name, m, base)


def _inspector_row(trace: Path, env, where: str, starts, base, backfill: str) -> dict:
    """A trained SchedInspector (run directory, checkpoint or shipped name) inspecting its
    base heuristic's proposals online, with ``backfill`` ("run": its run's)."""
    from jaxsched.envs.splitwindow_baselines import run_picker
    from jaxsched.envs.splitwindow_learned import inspector_aux, inspector_pick
    from jaxsched.models import resolve
    from jaxsched.nets.schedinspector import InspectorPolicy
    from jaxsched.systems.schedinspector.evaluate import load_inspector
    from jaxsched.workload.schedinspector import inspector_jobs

    ins = load_inspector(resolve(where))
    if ins.run.mode != "compat":
        raise SystemExit(f"{ins.path}: only compat-mode inspectors (seven features) run here")
    si, wait = inspector_jobs(read_swf(trace), "compat")
    fn = lambda o, k: InspectorPolicy().apply(ins.params, o, k)  # noqa: E731
    pick = inspector_pick(si, fn, base=ins.run.base, swf_wait=wait, env_submit=env.data.submit)
    bf = ins.run.backfill if backfill == "run" else backfill
    m = run_picker(env, starts, pick, bf, inspector_aux(si.n_jobs))
    name = f"SchedInspector {where} ({ins.run.base}) + {bf} (epoch {ins.epoch})"
    return _metrics_row(name, m, base)


def _offline_row(trace: Path, where: str, starts, length: int = 128) -> dict:
    """SchedInspector's own protocol ("-o", spec §7): ``length``-job sequences from the same
    starts in its own environment (no arrival after the last job; every job scheduled), the
    inspected run and its base alone: mean ± s.e. of wait, bsld and utilisation, and the
    paired inspected − base difference."""
    from jaxsched.models import resolve
    from jaxsched.systems.schedinspector.evaluate import compare, load_inspector

    ins = load_inspector(resolve(where))
    out = compare(ins, [int(x) for x in starts], length, trace=str(trace))
    name = f"SchedInspector {where} ({ins.run.base}) + {ins.run.backfill}, offline {length} jobs"
    row = {"name": name}
    for side in ("inspected", "base"):
        row[side] = {k: mean_se(out[side][k]) for k in ("wait", "bsld", "util")}
    row["paired"] = {
        k: mean_se(np.asarray(out["inspected"][k]) - np.asarray(out["base"][k]))
        for k in ("wait", "bsld", "util")
    }
    row["rejection_ratio"] = float(np.sum(out["rejections"]) / max(np.sum(out["decisions"]), 1))
    print(f"{name}: " + "  ".join(
        f"{k} {v[0]:.4g}±{v[1]:.2g} (base {row['base'][k][0]:.4g}, paired {row['paired'][k][0]:+.4g}"
        f"±{row['paired'][k][1]:.2g})" for k, v in row["inspected"].items()
    ) + f"  rejections {row['rejection_ratio']:.1%}")  # fmt: skip
    return row


def mean_se(x) -> list:
    """``[mean, standard error]`` of a sample (:func:`jaxsched.sim.evaluate.standard_error`:
    sample standard deviation; 0 for a single value) — every row of this script and of
    ``splitwindow_sweep.py``."""
    from jaxsched.sim.evaluate import standard_error

    x = np.asarray(x, np.float64)
    return [float(x.mean()), standard_error(x) if x.size > 1 else 0.0]


def _metrics_row(name: str, m: dict, base) -> dict:
    """Mean ± standard error of each metric of ``m`` (host arrays ``[B]``), its per-episode
    values, and the paired differences to the heuristics ``base`` (None: not run)."""
    m = {**m, **size_class_waits(m)}
    keys = METRICS + tuple(SIZE_CLASSES)
    row = {k: mean_se(m[k]) for k in keys}
    print(f"{name:18s} " + "  ".join(f"{k} {v[0]:.4g}±{v[1]:.2g}" for k, v in row.items()))
    out = {"name": name, "metrics": row}
    out["per_episode"] = {k: [float(x) for x in np.asarray(m[k])] for k in keys}
    if base is not None:
        out["paired"] = _paired(m, base, baseline_names())
    return out


def _versus_first(rows: list) -> dict:
    """Each model after the first minus the first, on the same episodes: mean and paired
    standard error of average wait, queue length, utilisation and the waits of the job-size
    classes (printed)."""
    first, out = rows[0], {}
    for r in rows[1:]:
        d = {}
        for k in ("avg_wait", "avg_queue_len", "util", "util_arrival_span", *SIZE_CLASSES):
            x = np.asarray(r["per_episode"][k]) - np.asarray(first["per_episode"][k])
            d[k] = mean_se(x)
        out[r["name"]] = d
        print(f"{r['name']} - {first['name']}: " + "  ".join(
            f"{k} {v[0]:+.4g}±{v[1]:.2g}" for k, v in d.items()))  # fmt: skip
    return out


def stored_baselines(path: str, trace: str, starts: list) -> tuple[dict, dict]:
    """The heuristics of an earlier ``--json`` of this script: ``({metric: float64 [H, B]},
    {name: {metric: [mean, s.e.]}})`` in :func:`baseline_names` order. SystemExit (one line)
    unless it holds every heuristic and metric, on the same trace and episode starts."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"--baselines-from {path}: not readable as JSON ({e})") from None
    if doc.get("trace") != trace or doc.get("starts") != list(starts):
        raise SystemExit(
            f"--baselines-from {path}: other episodes (trace {doc.get('trace')!r}; starts "
            f"{'not recorded' if 'starts' not in doc else 'differ'}); run the heuristics again"
        )
    per = doc.get("baselines_per_episode") or {}
    for name in baseline_names():
        missing = [k for k in METRICS if k not in per.get(name, {})]
        if missing:
            raise SystemExit(f"--baselines-from {path}: {name} lacks {', '.join(missing)}")
    base = {k: np.asarray([per[n][k] for n in baseline_names()], np.float64) for k in METRICS}
    return base, baseline_table(base)


def baseline_table(m: dict) -> dict:
    """``{heuristic: {metric: [mean, s.e.]}}`` of the heuristics' per-episode values ``m``
    (``{metric: [H, B]}``, :func:`baseline_names` order), printed one line each."""
    table = {}
    for i, name in enumerate(baseline_names()):
        table[name] = {k: mean_se(m[k][i]) for k in METRICS}
        row = "  ".join(f"{k} {v[0]:.4g}±{v[1]:.2g}" for k, v in table[name].items())
        print(f"{name:18s} {row}")
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=None)
    ap.add_argument("--trace", default="lublin_256.swf.gz")
    ap.add_argument("--head", type=int, default=20)
    ap.add_argument("--tail", type=int, default=0)
    ap.add_argument(
        "--batch", default="16", help="comma list of batch sizes for the speed test (0: none)"
    )
    ap.add_argument("--policy", default="P1", help="P1..P4 or random")
    ap.add_argument("--episodes", type=int, default=20, help="evaluation episodes (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-baselines", action="store_true")
    ap.add_argument(
        "--baselines-from", default=None, metavar="JSON",
        help="the heuristics' per-episode values from an earlier --json of this script on the "
        "same trace and episodes, instead of running them again",
    )  # fmt: skip
    ap.add_argument(
        "--model", action="append", default=[], help="a splitwindow run directory or checkpoint"
    )
    ap.add_argument(
        "--rlscheduler", action="append", default=[], metavar="MODEL",
        help="a trained RLScheduler policy (run directory, checkpoint or shipped name, e.g. "
        "lublin1-bf) choosing the next job, with its run's back-filling (repeatable)",
    )  # fmt: skip
    ap.add_argument(
        "--inspector", action="append", default=[], metavar="MODEL",
        help="a trained SchedInspector (run directory, checkpoint or shipped name, e.g. "
        "si-lublin1-sjf) inspecting its base heuristic online (repeatable)",
    )  # fmt: skip
    ap.add_argument(
        "--inspector-backfill", default="run", choices=("run", "none", "rlscheduler", "easy"),
        help="back-filling around the inspected runs' accepted jobs (run: the model's own)",
    )  # fmt: skip
    ap.add_argument(
        "--offline", action="store_true",
        help="also each --inspector in its own 128-job protocol from the same starts",
    )  # fmt: skip
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    trace = _shared(a.shared) / "traces" / a.trace
    jobs = read_swf(trace).jobs("rlscheduler")
    env = SplitWindowEnv(jobs, a.head, a.tail)
    rng = np.random.RandomState(a.seed)
    res = {"trace": a.trace, "window": f"{a.head}-{a.tail}", "cpu": os.cpu_count(), "speed": []}
    for b in [int(x) for x in a.batch.split(",") if int(x) > 0]:
        starts = rng.randint(0, env.cfg.sample_high + 1, size=b).astype(np.int32)
        r = {"batch": b, "policy": a.policy, **env_speed(env, starts, a.policy)}
        print(json.dumps(r))
        res["speed"].append(r)
    starts = np.random.RandomState(a.seed).randint(0, env.cfg.sample_high + 1, a.episodes)
    res["starts"] = [int(x) for x in starts]
    base = None
    if a.baselines_from and a.episodes:
        base, res["baselines"] = stored_baselines(a.baselines_from, a.trace, res["starts"])
        print(f"baselines: from {a.baselines_from}")
    elif a.episodes and not a.skip_baselines:
        t0 = time.perf_counter()
        base = run_baselines(env, starts)
        res["baselines_s"] = round(time.perf_counter() - t0, 1)
        res["baselines"] = table = baseline_table(base)
        print(f"baselines: {a.episodes} episodes x {len(table)} in {res['baselines_s']} s")
    if base is not None:
        res["baselines_per_episode"] = {
            name: {k: [float(x) for x in base[k][i]] for k in METRICS}
            for i, name in enumerate(baseline_names())
        }
    for path in a.model if a.episodes else []:
        taken = {r["name"] for r in res.get("models", {}).values()}
        res.setdefault("models", {})[path] = _model_row(jobs, path, starts, base, taken)
    for where in a.rlscheduler if a.episodes else []:
        res.setdefault("models", {})[where] = _rlscheduler_row(jobs, env, where, starts, base)
    for where in a.inspector if a.episodes else []:
        row = _inspector_row(trace, env, where, starts, base, a.inspector_backfill)
        res.setdefault("models", {})[where] = row
        if a.offline:
            res.setdefault("offline", {})[where] = _offline_row(trace, where, starts)
    if len(res.get("models", {})) > 1:
        res["versus_first"] = _versus_first(list(res["models"].values()))
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
