"""Issue 16's utilisation question for whole families of rules: does any priority between SJF
and FCFS (with EASY back-filling) wait less than SJF at FCFS + EASY's utilisation?

Two one-parameter families, in the split-window environment's cycle and end rules
(:func:`jaxsched.envs.splitwindow_baselines.run_picker`, the whole queue visible):

* ``aged A``: the queued job of smallest ``cores − A × hours waited`` (A = 0 is SJF by fewest
  cores; large A tends to FCFS);
* ``limit H``: the oldest job once it has waited ``H`` hours, otherwise the one of fewest cores.

Each value runs on the same ``--episodes`` episodes (starts ``RandomState(--seed)``, as
``splitwindow_env.py`` draws them), with the paired difference of the average wait and of the
utilisation (printed in points; in the JSON as fractions, with the arrival-span utilisation:
``splitwindow_env.py``'s pairing) to SJF + EASY and FCFS + EASY, and each rule's per-episode values in the
``--json`` (to pair with ``splitwindow_env.py``'s rows on the same episodes). The parameter is
traced, so each family compiles once.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/splitwindow_frontier.py --episodes 100 --seed 6
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from benchmarks.speed.splitwindow_env import _paired, _shared, mean_se
from jaxsched.envs.splitwindow import SplitWindowEnv
from jaxsched.envs.splitwindow_baselines import run_baselines, run_picker
from jaxsched.workload import read_swf

HOUR = 3600.0
FAMILIES = ("aged", "limit")
#: the two reference heuristics, in run_baselines order
REFERENCES = ("SJF+EASY", "FCFS+EASY")


def family_pick(env: SplitWindowEnv, family: str):
    """``pick(sim, param) -> (int32 queue position, param)`` of ``family`` with its parameter
    (float64 scalar) carried as the picker's ``aux``; ties go to the oldest job."""
    cores, submit = env.data.cores, env.data.submit

    def pick(sim, param):
        pos = jnp.arange(sim.q_job.shape[0])
        valid = pos < sim.q_len
        j = jnp.maximum(sim.q_job, 0)
        waited = (sim.t - submit[j]).astype(jnp.float64) / HOUR
        c = cores[j].astype(jnp.float64)
        if family == "aged":
            p = jnp.argmin(jnp.where(valid, c - param * waited, jnp.inf))
        else:
            old = valid & (waited >= param)
            sjf = jnp.argmin(jnp.where(valid, c, jnp.inf))
            p = jnp.where(old.any(), jnp.argmax(old), sjf)
        return p.astype(jnp.int32), param

    return pick


def _row(name, m, base) -> dict:
    """Mean ± s.e. of the rule's wait and utilisation, its per-episode values and, through
    ``splitwindow_env.py``'s pairing, its differences to the two references ``base``
    (``{metric: [2, B]}``)."""
    row = {"name": name, "avg_wait": mean_se(m["avg_wait"]), "util": mean_se(m["util"])}
    row["per_episode"] = {k: [float(x) for x in np.asarray(m[k])] for k in ("avg_wait", "util")}
    row["paired"] = _paired(m, base, REFERENCES, echo=False)
    (w, ws), (u, us) = row["avg_wait"], row["util"]
    vs = "  ".join(
        f"- {r}: wait {d['avg_wait'][0]:+,.0f} ± {d['avg_wait'][1]:,.0f} s, "
        f"util {100 * d['util'][0]:+.2f} ± {100 * d['util'][1]:.2f} pts"
        for r, d in row["paired"].items()
    )
    print(f"{name:14s} wait {w:9,.0f} ± {ws:5,.0f} s  util {u:.3f} ± {us:.3f}  {vs}", flush=True)
    return row


def _values(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x]
    except ValueError:
        raise SystemExit(f"not a comma list of numbers: {text!r}") from None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=None)
    ap.add_argument("--trace", default="lublin_256.swf.gz")
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--aged", default="0.5,2,4,8,16,32,128", help="values of A (cores per hour)")
    ap.add_argument("--limit", default="0.5,2,24", help="values of H (hours)")
    ap.add_argument("--placements", type=int, default=1000)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.episodes < 2:
        raise SystemExit("--episodes: at least 2 (paired standard errors)")
    values = {family: _values(getattr(a, family)) for family in FAMILIES}
    trace = _shared(a.shared) / "traces" / a.trace
    env = SplitWindowEnv(read_swf(trace).jobs("rlscheduler"), 10, 10, placements=a.placements)
    starts = np.random.RandomState(a.seed).randint(0, env.cfg.sample_high + 1, a.episodes)
    res = {"trace": a.trace, "seed": a.seed, "starts": [int(x) for x in starts], "rows": []}
    t0 = time.perf_counter()
    base = run_baselines(env, starts, priorities=("sjf", "fcfs"), backfills=("easy",))
    for i, n in enumerate(REFERENCES):
        res["rows"].append(_row(n, {k: v[i] for k, v in base.items()}, base))
    for family in FAMILIES:
        pick = family_pick(env, family)
        for v in values[family]:
            m = run_picker(env, starts, pick, "easy", jnp.asarray(v, jnp.float64))
            res["rows"].append(_row(f"{family} {v:g}", m, base))
    res["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"{a.episodes} episodes, {len(res['rows'])} rules in {res['seconds']} s")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
