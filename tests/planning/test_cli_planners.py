"""The planners as CLI policies (host only, a tiny trace): evaluate's planner rows are the
planner driven directly on each sequence, simulate writes the driver's schedule, and bad
names or backfilling combinations are one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_traces import planner_sequence

from jaxsched.cli import main
from jaxsched.planning import planner_policy, run_planner
from jaxsched.sim import oracle
from jaxsched.workload import read_swf
from jaxsched.workload.validate import validate_schedule


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """120 jobs in bursts on 6 one-processor nodes, requested times unlike run times."""
    rng = np.random.default_rng(11)
    s, r, q, n = planner_sequence(rng, L=120, nodes=6)
    lines = ["; MaxNodes: 6", "; MaxProcs: 6"]
    for i in range(120):
        lines.append(f"{i + 1} {s[i]} 0 {max(r[i], 1)} {n[i]} -1 -1 {n[i]} {q[i]} -1 1 "
                     f"{1 + i % 3} 1 1 1 1 -1 -1")  # fmt: skip
    path = tmp_path_factory.mktemp("plan") / "tiny.swf"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _direct(jobs, name, start, length, backfill, compat):
    w = jobs.window(start, length)
    res, _ = run_planner(planner_policy(name), w.submit, w.run, w.req_time, w.procs,
                         num_nodes=w.num_nodes, procs_per_node=w.procs_per_node,
                         compat=compat)  # fmt: skip
    return w, res.starts


@pytest.mark.parametrize("compat", [True, False])
def test_evaluate_planner_rows_are_the_planner_driven_directly(capsys, trace, compat):
    bf = "rlscheduler" if compat else "easy"
    argv = ["evaluate", trace, "--policy", "rollout:f1,k=4,h=16,window:n=4,h=8", "--backfill",
            f"none,{bf}", "--metric", "bsld,wait", "--jobs", "40", "--starts", "0,30,80",
            "--json"] + (["--compat", "rlscheduler"] if compat else [])  # fmt: skip
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert len(rows) == 3 * 2 * 2 * 2
    jobs = read_swf(trace).jobs("rlscheduler")
    fam = {"none": "none", "rlscheduler": "rlscheduler+rlscheduler-sjbf", "easy": "easy+easy-sjbf"}
    pols = "+".join(p for p in oracle.POLICIES if p != "lcfs")
    for r in rows:
        name = r["policy"]
        if name.startswith("rollout"):
            full = f"{name},bf={r['backfill']}"
        else:  # the default cells, the column's family of modes
            full = f"{name},cells={pols}/{fam[r['backfill']]}"
        w, starts = _direct(jobs, full, r["start"], 40, r["backfill"], compat)
        m = oracle.metrics(w.submit, w.run, w.procs, starts, num_procs=6, compat=compat)
        assert r["value"] == m[r["metric"]], (r, full)


def test_evaluate_bare_names_and_versus_in_one_table(capsys, trace):
    """Bare names run the documented defaults; --versus pairs with a planner as with any
    policy."""
    argv = ["evaluate", trace, "--compat", "rlscheduler", "--policy", "rollout,window",
            "--backfill", "rlscheduler", "--jobs", "40", "--starts", "0,50"]  # fmt: skip
    assert main(argv + ["--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    jobs = read_swf(trace).jobs("rlscheduler")
    full = {"rollout": "rollout:f3,k=8,h=64,bf=rlscheduler", "window": "window:n=32"}
    for r in rows:
        w, starts = _direct(jobs, full[r["policy"]], r["start"], 40, "rlscheduler", True)
        m = oracle.metrics(w.submit, w.run, w.procs, starts, num_procs=6, compat=True)
        assert r["value"] == m["bsld"]
    assert main(argv + ["--versus", "window"]) == 0
    out = capsys.readouterr().out
    assert "paired difference to window" in out and "planners" in out


@pytest.mark.parametrize("policy,backfill", [("rollout:f3,k=4", "rlscheduler"),
                                             ("window:n=8", "rlscheduler-sjbf")])  # fmt: skip
def test_simulate_writes_the_drivers_valid_schedule(tmp_path, capsys, trace, policy, backfill):
    out = tmp_path / "s.swf"
    argv = ["simulate", trace, "--compat", "rlscheduler", "--policy", policy, "--backfill",
            backfill, "--start", "10", "--jobs", "60", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert "engine: host" in capsys.readouterr().out
    jobs = read_swf(trace).jobs("rlscheduler")
    from jaxsched.planning.policy import planner_for

    w = jobs.window(10, 60)
    p = planner_for(policy, backfill, True)
    res, _ = run_planner(p, w.submit, w.run, w.req_time, w.procs, num_nodes=6,
                         procs_per_node=1.0, compat=True)  # fmt: skip
    validate_schedule(w, np.asarray(res.starts))
    back = read_swf(out)
    np.testing.assert_array_equal(back.wait, np.asarray(res.starts) - w.submit)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["simulate", "--policy", "rollout:f3,bf=rlscheduler-sjbf", "--backfill", "rlscheduler",
          "--compat", "rlscheduler"], "fixes its backfilling"),
        (["simulate", "--policy", "window:cells=f1/easy", "--backfill", "rlscheduler"],
         "outside --backfill rlscheduler"),
        (["simulate", "--policy", "rollout", "--backfill", "easy++"], "not easy++"),
        (["simulate", "--policy", "rollout", "--engine", "jax"], "runs on the host"),
        (["simulate", "--policy", "rollout:zz"], "base rule 'zz' unknown"),
        (["simulate", "--policy", "window:z=3"], "unknown option 'z'"),
        (["evaluate", "--policy", "fcfs,k=8"], "no planner"),
        (["evaluate", "--policy", "rollout:f3,bf=easy", "--backfill", "none,easy"],
         "--backfill none"),
        (["evaluate", "--policy", "rollout", "--compat", "rlscheduler", "--backfill", "easy"],
         "reference"),
    ],
)  # fmt: skip
def test_bad_planner_requests_are_one_line_errors(tmp_path, capsys, trace, argv, needle):
    extra = ["--out", str(tmp_path / "x.swf")] if argv[0] == "simulate" else ["--jobs", "20"]
    assert main([argv[0], trace, *argv[1:], *extra]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
