"""Schema ``deeprm-reference``: DeepRM episodes (``shared/reference/deeprm/*.json``, see its
README) replayed through :mod:`jaxsched.sim.datacenter` in its ``deeprm`` compatibility mode.

A file holds a ``config`` (the reference parameters: ``num_res``, ``res_slot``,
``time_horizon``, ``num_nw``, ``backlog_size``, ``max_job_size``, ``max_job_len``,
``simu_len``, ``max_track_since_new``, ``episode_max_length``, ``end``, ``discount``, the three
penalties and the job distribution ``dist``) and ``sequences``: per (rate, seed) the jobset
(``simu_len`` entries ``[arrival|null, len, cpu, mem, ...]``) and one run per agent.

The check, in one batched rollout over every run of the file:

* each jobset equals DeepRM's generator (:func:`jaxsched.workload.deeprm.deeprm_jobset`) for its
  seed and rate;
* the deterministic agents (``SJF``, ``Packer``/``Tetris``, ``PackerSJF_k<knob>``,
  ``FirstFit``) are *run* by our heuristics; every other agent (``Random``, ``GreedyRandom``,
  any name not known) replays its recorded ``actions``;
* per run: actions, kinds, every reward, every job ``[arrival, start, finish, len, decided]``,
  steps, final time, end condition, arrivals/drops/jobs/finished/completed counts, stale
  job-steps, the four means, ``total_reward`` and ``total_reward_ideal``;
* per rate and agent: the pooled ``summary`` means.
"""

from __future__ import annotations

import functools
import math
import re
import time

import numpy as np

from jaxsched.conformance.base import FieldError, Mismatch, Report, require, value_error

NAME = "deeprm-reference"
DESCRIPTION = "DeepRM episodes per jobset and agent (shared/reference/deeprm/*.json)"

#: agent name -> (policy, knob) of jaxsched.sim.datacenter.baselines; others replay
_RUN_AGENTS = {
    "SJF": ("sjf", 1.0),
    "Packer": ("packer", 1.0),
    "Tetris": ("packer", 1.0),
    "FirstFit": ("first_fit", 1.0),
}
_KNOB = re.compile(r"^PackerSJF_k([0-9.]+)$")
_CONFIG_INTS = (
    "num_res",
    "res_slot",
    "time_horizon",
    "num_nw",
    "backlog_size",
    "max_job_size",
    "max_job_len",
    "simu_len",
    "max_track_since_new",
    "episode_max_length",
)
_COUNTS = ("steps", "final_time", "num_arrivals", "num_dropped", "num_jobs", "num_finished")
_COUNTS += ("num_completed_by_end", "stale_job_steps")
_MEANS = {
    "mean_slowdown": "slowdown",
    "mean_slowdown_py2floor": "floor",
    "mean_completion_time": "completion",
    "mean_waiting_time": "waiting",
}


def matches(doc) -> bool:
    """Tagged ``deeprm-reference[/v]``, or untagged with ``config``, ``agents`` and
    ``sequences``."""
    if not isinstance(doc, dict):
        return False
    tag = doc.get("schema")
    if isinstance(tag, str):
        return tag == NAME or tag.startswith(NAME + "/")
    return all(k in doc for k in ("config", "agents", "sequences"))


def agent_policy(name: str) -> tuple[str, float]:
    """``(policy, knob)`` an agent is run with; ``("replay", 1.0)`` for recorded agents."""
    if name in _RUN_AGENTS:
        return _RUN_AGENTS[name]
    m = _KNOB.match(name)
    return ("tetris", float(m.group(1))) if m else ("replay", 1.0)


def params_from_config(cfg: dict):
    """The :class:`~jaxsched.sim.datacenter.DCParams` of a file's ``config``."""
    from jaxsched.sim.datacenter import DCParams

    v = {k: require(cfg, k, int, f"config.{k}", minimum=1) for k in _CONFIG_INTS}
    end = cfg.get("end", "all_done")
    if end not in ("all_done", "no_new_job"):
        raise FieldError("config.end", f"must be 'all_done' or 'no_new_job', got {end!r}")
    pen = {
        k: float(require(cfg, k, float, f"config.{k}")) if k in cfg else -1.0
        for k in ("delay_penalty", "hold_penalty", "dismiss_penalty")
    }
    cap = v["episode_max_length"]
    return DCParams(
        num_res=v["num_res"],
        res_slot=v["res_slot"],
        horizon=v["time_horizon"],
        num_slots=v["num_nw"],
        backlog_size=v["backlog_size"],
        max_job_size=v["max_job_size"],
        max_job_len=v["max_job_len"],
        simu_len=v["simu_len"],
        max_track_since_new=v["max_track_since_new"],
        end=end,
        time_cap=cap,
        step_cap=cap,
        deeprm=True,
        future=True,
        **pen,
    )


def _jobset(seq: dict, where: str, p) -> tuple[np.ndarray, np.ndarray]:
    """``(lens [S], dems [S, d])`` of a sequence (entries without an arrival are no job)."""
    entries = require(seq, "sequence", list, f"{where}.sequence")
    if len(entries) != p.simu_len:
        raise FieldError(f"{where}.sequence", f"has {len(entries)} entries, want simu_len")
    lens = np.zeros(p.simu_len, np.int32)
    dems = np.zeros((p.simu_len, p.num_res), np.int32)
    for e, row in enumerate(entries):
        ok = isinstance(row, list) and len(row) == 2 + p.num_res
        if not ok or not all(isinstance(x, int) for x in row[1:]):
            raise FieldError(f"{where}.sequence[{e}]", f"must be [arrival, len, demands], {row}")
        if row[0] is not None:
            lens[e], dems[e] = row[1], row[2:]
    if np.any(lens > p.max_job_len) or np.any(dems > p.res_slot) or np.any(lens < 0):
        raise FieldError(f"{where}.sequence", "a job is longer or larger than the config allows")
    return lens, dems


def _runs(doc: dict, p) -> list[dict]:
    """Every (sequence, agent) run of the file, validated."""
    out = []
    for i, seq in enumerate(require(doc, "sequences", list)):
        where = f"sequences[{i}]"
        if not isinstance(seq, dict):
            raise FieldError(where, "must be an object")
        rate = require(seq, "rate", float, f"{where}.rate")
        seed = require(seq, "seed", int, f"{where}.seed")
        lens, dems = _jobset(seq, where, p)
        runs = seq.get("runs")
        if not isinstance(runs, dict):
            raise FieldError(f"{where}.runs", "must be an object of agent runs")
        for agent, run in runs.items():
            w = f"{where}.runs.{agent}"
            acts = require(run, "actions", list, f"{w}.actions")
            if not all(isinstance(a, int) and 0 <= a <= p.num_slots for a in acts):
                raise FieldError(f"{w}.actions", f"must be integers in 0..{p.num_slots}")
            policy, knob = agent_policy(agent)
            key = {"rate": rate, "seed": seed, "agent": agent}
            out.append(dict(seq=i, where=w, key=key, run=run, lens=lens, dems=dems,
                            policy=policy, knob=knob, actions=acts))  # fmt: skip
    return out


@functools.lru_cache(maxsize=8)
def _batched_rollout(p, T: int):
    """The compiled, vmapped rollout of ``T`` steps (one per configuration)."""
    import jax

    from jaxsched.sim.datacenter import baselines

    def one(lens, dems, code, knob, a, n):
        return baselines.rollout(p, lens, dems, code, knob, a, n, jax.random.PRNGKey(0), T)

    return jax.jit(jax.vmap(one))


def _simulate(p, runs: list[dict]) -> dict:
    """One vmapped rollout over all runs: numpy arrays with a leading run axis."""
    import jax.numpy as jnp

    from jaxsched.sim.datacenter import baselines

    longest = max(len(r["actions"]) for r in runs)
    T = max(p.step_cap, longest, 1)
    acts = np.full((len(runs), T), p.num_slots, np.int32)
    for k, r in enumerate(runs):
        acts[k, : len(r["actions"])] = r["actions"]
    st, out = _batched_rollout(p, T)(
        jnp.asarray(np.stack([r["lens"] for r in runs])),
        jnp.asarray(np.stack([r["dems"] for r in runs])),
        jnp.asarray([baselines.policy_code(r["policy"]) for r in runs], jnp.int32),
        jnp.asarray([r["knob"] for r in runs], jnp.float64),
        jnp.asarray(acts),
        jnp.asarray([len(r["actions"]) for r in runs], jnp.int32),
    )
    res = {k: np.asarray(getattr(st, k)) for k in ("start", "finish", "decided", "recorded")}
    res |= {k: np.asarray(getattr(st, k)) for k in ("dropped", "t", "steps", "end")}
    res["stale"] = np.asarray(st.stale_steps)
    res |= {f"step_{k}": np.asarray(v) for k, v in out.items()}
    return res


def _fsum_mean(xs) -> float | None:
    return math.fsum(xs) / len(xs) if len(xs) else None


def episode(res: dict, k: int, lens: np.ndarray, discount: float = 1.0) -> dict:
    """Run ``k`` of :func:`_simulate`'s result in the reference file's terms (lists, counts,
    exact means: correctly rounded sums divided by the count)."""
    from jaxsched.sim.datacenter import END_NAMES

    live = res["step_live"][k]
    placed = res["step_placed"][k][live]
    rewards = res["step_reward"][k][live]
    g = 0.0
    for r in rewards[::-1]:
        g = float(r) + discount * g
    rec = np.flatnonzero(res["recorded"][k])
    start, finish, decided = res["start"][k], res["finish"][k], res["decided"][k]
    jobs = [[int(e), int(start[e]), int(finish[e]), int(lens[e]), int(decided[e])] for e in rec]
    fin = [j for j in jobs if j[2] >= 0]
    final = int(res["t"][k])
    ideal = -math.fsum(
        1.0 / j[3] for t in range(1, final + 1) for j in jobs if j[0] <= t and not 0 <= j[2] <= t
    )
    return {
        "actions": [int(a) for a in res["step_action"][k][live]],
        "kinds": "".join("A" if x else "M" for x in placed),
        "rewards": [float(r) for r, x in zip(rewards, placed) if not x],
        "jobs": jobs,
        "steps": int(res["steps"][k]),
        "final_time": final,
        "terminated": END_NAMES[int(res["end"][k])],
        "num_arrivals": len(jobs) + int(np.sum(res["dropped"][k])),
        "num_dropped": int(np.sum(res["dropped"][k])),
        "num_jobs": len(jobs),
        "num_finished": len(fin),
        "num_completed_by_end": sum(1 for j in fin if j[2] <= final),
        "stale_job_steps": int(res["stale"][k]),
        "slowdown": [(j[2] - j[0]) / j[3] for j in fin],
        "floor": [float((j[2] - j[0]) // j[3]) for j in fin],
        "completion": [float(j[2] - j[0]) for j in fin],
        "waiting": [float(j[1] - j[0]) for j in fin],
        "total_reward": g,
        "total_reward_ideal": ideal,
    }


def _same(report: Report, where: str, key: dict, expected, got) -> None:
    """An exact comparison of non-numeric values (lists, strings) as one counted value."""
    report.total += 1
    if expected == got:
        report.matched += 1
        return
    if isinstance(expected, list) and isinstance(got, list):
        i = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), None)
        i = min(len(expected), len(got)) if i is None else i
        key = dict(key, first_difference=i)
        expected, got = str(expected[i : i + 3])[:80], str(got[i : i + 3])[:80]
    report.mismatches.append(Mismatch(where, key, expected, got, math.inf))
    report.worst_error = math.inf


def _compare_run(report: Report, r: dict, ep: dict, tol: float) -> None:
    run, where = r["run"], r["where"]
    for f in ("actions", "kinds", "jobs", "terminated"):
        if f in run:
            _same(report, f"{where}.{f}", dict(r["key"], field=f), run[f], ep[f])
    if "rewards" in run:
        exp = run["rewards"]
        if len(exp) != len(ep["rewards"]):
            _same(report, f"{where}.rewards", dict(r["key"], field="len(rewards)"), len(exp),
                  len(ep["rewards"]))  # fmt: skip
        for i, (e, g) in enumerate(zip(exp, ep["rewards"])):
            report.add(f"{where}.rewards[{i}]", dict(r["key"], field="reward"), e, g, tol)
    for f in (*_COUNTS, "total_reward", "total_reward_ideal"):
        if f in run:
            report.add(f"{where}.{f}", dict(r["key"], field=f), run[f], ep[f], tol)
    for f, mine in _MEANS.items():
        if f in run:
            got = _fsum_mean(ep[mine])
            if run[f] is None and got is None:
                report.total, report.matched = report.total + 1, report.matched + 1
            else:
                report.add(f"{where}.{f}", dict(r["key"], field=f), run[f], got, tol)


def _compare_summary(report: Report, doc: dict, runs: list, eps: list, tol: float) -> None:
    summary = doc.get("summary")
    if not isinstance(summary, dict):
        return
    pooled: dict = {}
    for r, ep in zip(runs, eps):
        pooled.setdefault((float(r["key"]["rate"]), r["key"]["agent"]), []).append(ep)
    for rate, agents in summary.items():
        for agent, vals in (agents or {}).items():
            group = pooled.get((float(rate), agent), [])
            where = f"summary[{rate}][{agent}]"
            got = {
                f"pooled_{f}": _fsum_mean([x for ep in group for x in ep[mine]])
                for f, mine in _MEANS.items()
            }
            got["finished_jobs"] = sum(ep["num_finished"] for ep in group)
            got["sequences"] = len(group)
            got["mean_total_reward"] = _fsum_mean([ep["total_reward"] for ep in group])
            seq_means = [_fsum_mean(ep["slowdown"]) for ep in group]
            got["mean_of_sequence_mean_slowdown"] = _fsum_mean(
                [m for m in seq_means if m is not None]
            )
            for f, g in got.items():
                if f in vals:
                    report.add(where, {"rate": rate, "agent": agent, "field": f}, vals[f], g, tol)


def _check_generator(report: Report, doc: dict, p, runs: list) -> None:
    """Each jobset against DeepRM's generator for its seed and rate (``config.dist``)."""
    from jaxsched.workload.deeprm import DeepRMDist, deeprm_jobset

    dist = DeepRMDist(p.num_res, p.max_job_size, p.max_job_len,
                      float(doc["config"].get("dist", {}).get("job_small_chance", 0.8)))  # fmt: skip
    for i, seq in enumerate(doc["sequences"]):
        lens, dems = deeprm_jobset(seq["seed"], seq["rate"], p.simu_len, dist)
        got = [[int(a), *map(int, b)] for a, b in zip(lens, dems)]
        want = [row[1:] for row in seq["sequence"]]
        key = {"rate": seq["rate"], "seed": seq["seed"], "field": "sequence"}
        _same(report, f"sequences[{i}].sequence", key, want, got)


def check(doc, traces_dir=None, *, tolerance: float, traces=None) -> Report:
    """Replay every run of ``doc``; see the module docstring."""
    t0 = time.perf_counter()
    cfg = doc.get("config")
    if not isinstance(cfg, dict):
        raise FieldError("config", "missing field")
    p = params_from_config(cfg)
    discount = float(cfg.get("discount", 1.0))
    runs = _runs(doc, p)
    report = Report(file="", schema=NAME)
    _check_generator(report, doc, p, runs)
    if runs:
        res = _simulate(p, runs)
        report.evaluations += 1
        eps = [episode(res, k, r["lens"], discount) for k, r in enumerate(runs)]
        for r, ep in zip(runs, eps):
            _compare_run(report, r, ep, tolerance)
        _compare_summary(report, doc, runs, eps, tolerance)
    report.seconds = time.perf_counter() - t0
    return report


__all__ = ["NAME", "DESCRIPTION", "matches", "check", "agent_policy", "params_from_config"]
__all__ += ["episode"]
_ = value_error  # the comparison rule used by Report.add
