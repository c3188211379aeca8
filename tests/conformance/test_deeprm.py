"""``jaxsched conformance`` on DeepRM reference files (schema ``deeprm-reference``).

1. the plain-Python oracle (jaxsched.sim.datacenter.oracle) replays every recorded run of the
   shipped files exactly (it is then a trusted generator of files);
2. the shipped ``deeprm-params-default.json``: every value matched (the full simu50 file is left
   to ``jaxsched conformance``: one more compile);
3. a file never seen, written here by the oracle in another configuration (3 slots, a backlog of
   2 so arrivals drop, a smaller cluster, a short step cap, other rates and seeds, other agents):
   every value matched; a perturbed value is a mismatch.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from shared_data import SHARED

from jaxsched.conformance import check_file
from jaxsched.conformance import deeprm as schema
from jaxsched.sim.datacenter import oracle
from jaxsched.workload.deeprm import DeepRMDist, deeprm_jobset

REF = SHARED / "reference" / "deeprm"


def _doc(name):
    return json.loads((REF / name).read_text())


@pytest.mark.parametrize("name", ["deeprm-params-default.json", "deeprm-simu50.json"])
def test_oracle_replays_shipped_runs(name):
    doc = _doc(name)
    p = schema.params_from_config(doc["config"])
    keys = ("actions", "kinds", "jobs", "steps", "final_time", "terminated", "stale_job_steps")
    for seq in doc["sequences"][::3]:
        lens = [row[1] if row[0] is not None else 0 for row in seq["sequence"]]
        dems = [row[2:] if row[0] is not None else [0, 0] for row in seq["sequence"]]
        for run in seq["runs"].values():
            acts = iter(run["actions"])
            ep = oracle.episode(p, lens, dems, lambda o: next(acts))
            assert {k: ep[k] for k in keys} == {k: run[k] for k in keys}
            assert np.allclose(ep["rewards"], run["rewards"], rtol=0, atol=1e-12)


def test_shipped_file_all_match():
    rep = check_file(REF / "deeprm-params-default.json")
    assert rep.ok and rep.total > 3000, [m.describe() for m in rep.mismatches[:5]]
    assert rep.worst_error < 1e-12


def _agents(knob):
    sjf = oracle.greedy(lambda o, e: 1.0 / o.lens[e])

    def pack(o, e):
        return float(sum(a * d for a, d in zip(o.avail[0], o.dems[e])))

    return {
        "SJF": sjf,
        "Packer": oracle.greedy(pack),
        f"PackerSJF_k{knob}": oracle.greedy(
            lambda o, e: knob * pack(o, e) + (1 - knob) * (1.0 / o.lens[e])
        ),
        "FirstFit": oracle.greedy(lambda o, e: 1.0),
    }


def _unseen_doc(end: str) -> dict:
    cfg = dict(num_res=2, res_slot=8, time_horizon=16, num_nw=3, backlog_size=2, max_job_size=8,
               max_job_len=12, simu_len=14, max_track_since_new=6, episode_max_length=45,
               end=end, discount=1)  # fmt: skip
    p = schema.params_from_config(cfg)
    dist = DeepRMDist(2, 8, 12)
    rng = random.Random(5)
    seqs = []
    for rate, seed in ((0.9, 3), (0.5, 77), (0.7, 7)):
        lens, dems = deeprm_jobset(seed, rate, cfg["simu_len"], dist)
        entry = [[e if (e > 0 and lens[e]) else None, int(lens[e]), *map(int, dems[e])]
                 for e in range(cfg["simu_len"])]  # fmt: skip
        runs = {}
        for name, agent in _agents(0.3).items():
            runs[name] = oracle.episode(p, lens, dems.tolist(), agent)
        runs["Random"] = oracle.episode(p, lens, dems.tolist(), lambda o: rng.randrange(4))
        runs["Hold"] = oracle.episode(p, lens, dems.tolist(), lambda o: 3)  # always void
        seqs.append(dict(rate=rate, seed=seed, sequence=entry, runs=runs))
    return dict(schema="deeprm-reference/1", config=cfg, agents=list(runs), sequences=seqs)


def test_unseen_oracle_file(tmp_path):
    doc = _unseen_doc("all_done")
    runs = [r for s in doc["sequences"] for r in s["runs"].values()]
    assert any(r["num_dropped"] for r in runs)  # the small backlog drops arrivals
    assert any(r["terminated"] == "step_cap" for r in runs)
    assert any(r["stale_job_steps"] for r in runs)
    f = tmp_path / "unseen.json"
    f.write_text(json.dumps(doc))
    rep = check_file(f)
    assert rep.ok, [m.describe() for m in rep.mismatches[:5]]
    doc["sequences"][1]["runs"]["SJF"]["rewards"][2] += 1e-6
    f.write_text(json.dumps(doc))
    rep = check_file(f)
    assert not rep.ok and rep.mismatches[0].where == "sequences[1].runs.SJF.rewards[2]"
