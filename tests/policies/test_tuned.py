"""The tuned priority function (issue 47 §2): its keys and ranks, the model file, `evaluate`
with ``tuned:PATH`` against the oracle, and `jaxsched tune` end to end on a tiny trace."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from shared_data import REPO
from tiny_traces import schedinspector_tiny

import jaxsched.sim  # noqa: F401  (turns on jax x64)
from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H
from jaxsched.policies.tuned import TunedPriority, as_tuned, load, save
from jaxsched.sim import oracle as O
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload import read_swf


def _jobs(seed=3, rows=4, L=30):
    rng = np.random.default_rng(seed)
    s = np.sort(rng.choice([0, 0, 5, 3600, 7200, 9000], size=(rows, L)), axis=1)
    q = rng.choice([1, 10, 60, 3600, 3600, 86400], size=(rows, L))
    n = rng.choice([1, 1, 2, 8, 64], size=(rows, L))
    return s, q, n


def test_corner_weights_are_fcfs_sjf_smallest():
    s, q, n = _jobs()
    for w, policy in (((0, 0, 1), "fcfs"), ((1, 0, 0), "sjf"), ((0, 1, 0), "smallest")):
        got = TunedPriority(w).rank(s, q, n)
        assert (got == H.host_rank(policy, s, q, n)).all(), policy


def test_key_formula_and_scale_invariance():
    tp = TunedPriority((0.5, -2.0, 3.0))
    k = tp.keys([7200], [100], [10])
    assert k.tolist() == pytest.approx([0.5 * 2 - 2.0 * 1 + 3.0 * 2])
    assert tp.keys([0], [0], [0]).tolist() == [0.0]  # q, n floored at 1
    s, q, n = _jobs(5)
    big = TunedPriority((5.0, -20.0, 30.0))
    assert (tp.rank(s, q, n) == big.rank(s, q, n)).all()


def test_model_file_roundtrip_and_errors(tmp_path):
    path = save(tmp_path / "m", [0.0, 3.0, 4.0], trace="x.swf")
    d = json.loads(path.read_text())
    assert d["weights"] == pytest.approx([0.0, 0.6, 0.8]) and d["trace"] == "x.swf"
    tp = load(tmp_path / "m")
    assert tp.weights == pytest.approx((0.0, 0.6, 0.8))
    assert as_tuned(f"tuned:{tmp_path / 'm'}").name == f"tuned:{tmp_path / 'm'}"
    assert as_tuned("f1") is None
    (tmp_path / "bad.json").write_text('{"kind": "other"}')
    with pytest.raises(ConfigError, match="not a tuned-priority"):
        load(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="cannot read"):
        load(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="does not exist"):  # the model folder's parent
        save(tmp_path / "no" / "m", [1.0, 0.0, 0.0])
    assert not (tmp_path / "no").exists()
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["model.json"]


@pytest.mark.parametrize("backfill", ["none", "easy", "easy-sjbf"])
def test_evaluate_tuned_equals_oracle(tmp_path, backfill):
    """The engine under a tuned main order = the oracle choosing the smallest (key, index)."""
    jobs = read_swf(schedinspector_tiny(tmp_path / "t.swf")).jobs("rlscheduler")
    save(tmp_path / "m", [0.3, -0.5, 2.0])
    tp = load(tmp_path / "m")
    name = f"tuned:{tmp_path / 'm'}"
    starts = [0, 20, 40]
    res = evaluate(jobs, starts, 40, [name, "fcfs"], [backfill], compat=False)
    assert res.policies == [name, "fcfs"]
    for k, st in enumerate(starts):
        sl = [a[st : st + 40] for a in (jobs.submit, jobs.run, jobs.req_time, jobs.procs)]
        key = tp.keys(*[sl[0], sl[2], sl[3]])
        want = O.simulate_with_choices(
            *sl, num_nodes=jobs.num_nodes, procs_per_node=jobs.procs_per_node, compat=False,
            backfill=backfill, choose=lambda v: min(v.queue, key=lambda j: (key[j], j)),
        )  # fmt: skip
        assert res.start_times[k, 0, 0].tolist() == want


def test_tune_command_end_to_end(tmp_path):
    """`jaxsched tune` (benchmarks/paper/tune_priority.py is its wrapper) writes a model that
    beats FCFS and SJF on its training sequences and records the installed command."""
    trace = schedinspector_tiny(tmp_path / "t.swf")
    out = tmp_path / "model"
    cmd = [sys.executable, "-m", "jaxsched", "tune", str(trace), "--out",
           str(out), "--train-range", "0,40", "--backfill", "easy", "--jobs", "20",
           "--sequences", "3", "--rounds", "2", "--population", "4"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    d = json.loads((out / "model.json").read_text())
    assert d["train_range"] == [0, 40] and max(d["train_starts"]) + 20 <= 40
    assert d["train_score"] <= min(d["train_heuristics"]["fcfs"], d["train_heuristics"]["sjf"])
    assert d["command"].startswith("jaxsched tune t.swf --out model --train-range 0,40")
    assert str(tmp_path) not in d["command"]
    jobs = read_swf(trace).jobs("rlscheduler")
    res = evaluate(jobs, [40], 20, [f"tuned:{out}"], ["easy"], compat=False)
    assert np.isfinite(res.table("bsld")[(f"tuned:{out}", "easy")])


def test_cli_tuned_policy_with_the_new_backfill_modes(capsys, tmp_path):
    from jaxsched.cli import main

    path = schedinspector_tiny(tmp_path / "t.swf")
    save(tmp_path / "m", [1.0, 0.0, 0.0])  # = SJF
    rc = main(["evaluate", str(path), "--policy", f"sjf,tuned:{tmp_path / 'm'}", "--backfill",
               "none,easy-sjbf", "--jobs", "30", "--starts", "0,10", "--json"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    rows = json.loads(out)["results"]
    by = {}
    for r in rows:
        by.setdefault((r["policy"].split(":")[0], r["backfill"], r["start"]), r["value"])
    assert {b for _, b, _ in by} == {"none", "easy-sjbf"}
    for (p, b, s), v in by.items():
        if p == "tuned":
            assert v == by[("sjf", b, s)]


def test_shipped_models_load_by_name():
    for name in ("tuned-sdsc-easy", "tuned-lublin1-easy", "tuned-hpc2n-easy", "tuned-lublin2-easy"):
        tp = as_tuned(f"tuned:{name}")
        assert tp.name == f"tuned:{name}" and np.linalg.norm(tp.weights) == pytest.approx(1.0)
