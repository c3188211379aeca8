"""benchmarks/paper/schedinspector_heldout.py --versus: an inspector paired with heuristics on the
same sequences, through SchedInspector's own base rules and through jaxsched.sim.evaluate."""

from __future__ import annotations

import numpy as np
import pytest
from shared_data import REPO, load_benchmark

H = load_benchmark("schedinspector_heldout")


@pytest.mark.extended  # two environments and an evaluate program; the pairing rule is two lines
def test_versus_routes_agree_and_pair_per_sequence():
    from jaxsched.systems.schedinspector.config import load_jobs, make_env
    from jaxsched.systems.schedinspector.evaluate import inspect_runs, load_inspector

    model = load_inspector(REPO / "jaxsched" / "models" / "si-lublin1-sjf")
    jobs, wait = load_jobs(str(REPO / "traces" / "lublin-1.swf"), model.run.mode)
    starts = np.asarray([100, 2500, 7000], np.int32)
    env = make_env(model.run, jobs, wait, length=H.LENGTH, evaluation=True)
    names = ["sjf", "f1", "f4", "smallest", "f1@none", "f4@rlscheduler"]
    v = H.versus(model, env, jobs, wait, starts, names)
    assert v["sjf"]["route"] == v["f1"]["route"] == v["f4"]["route"] == "schedinspector base"
    assert v["smallest"]["route"] == v["f1@none"]["route"] == "jaxsched.sim.evaluate"
    # NAME@BACKFILL: that heuristic with that backfilling (the model's own is none)
    assert v["f1@none"]["heuristic"] == pytest.approx(v["f1"]["heuristic"], rel=1e-9)
    assert v["f4@rlscheduler"]["heuristic"][0] != pytest.approx(v["f4"]["heuristic"][0])
    r = inspect_runs(env, model.params, starts)
    ins, base = (np.asarray(r[k]["bsld"], np.float64) for k in ("inspected", "base"))
    assert v["sjf"]["heuristic"][0] == pytest.approx(base.mean(), rel=1e-12)
    assert v["sjf"]["difference"][0] == pytest.approx((ins - base).mean(), rel=1e-12)
    # F1 and F4 (an extension's base) through both routes: the same schedules (the
    # environments' base rule and the engine)
    from jaxsched.sim.evaluate import evaluate

    for name in ("f1", "f4"):
        res = evaluate(jobs, [int(s) for s in starts], H.LENGTH, [name], ["none"], compat=True,
                       metrics=("bsld",))  # fmt: skip
        want = np.mean([r["value"] for r in res.rows])
        assert v[name]["heuristic"][0] == pytest.approx(want, rel=1e-9), name
