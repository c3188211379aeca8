"""The DRAS-branch side of ``benchmarks/reference/cqsim_sweep.py --cqsim-dras`` (issue 46): the fixed
policies, the stand-in TensorFlow / Keras modules and the patched policy query
(``benchmarks/reference/cqsim_dras_standins.py``), the 19-field SWF, the 10-field job output and the
subprocess plumbing on a fake DRAS checkout, all without CQSim; then, where a checkout of CQSim's
DRAS branch is found (``$JAXSCHED_CQSIM_DRAS``, else ``refs/CQSim-DRAS`` next to the checkout),
the real branch against our engine and oracle on a small hand-made workload."""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest
from shared_data import REPO, load_benchmark

from jaxsched.sim import oracle_cqsim as O
from jaxsched.workload.cqsim import CQSimJobs

CR = load_benchmark("cqsim_reference")
X = load_benchmark("cqsim_dras_standins")


def _dras_checkout():
    env = os.environ.get("JAXSCHED_CQSIM_DRAS")
    for cand in [env] if env else [REPO.parent / "refs" / "CQSim-DRAS"]:
        try:
            return CR.cqsim_dras_src(cand)
        except CR.CQSimUnavailable:
            pass
    return None


DRAS_SRC = _dras_checkout()


@pytest.mark.parametrize(
    ("policy", "nodes", "slot"),
    [("fcfs", [5, 1, 9], 0), ("smallest", [5, 1, 9, 1], 1), ("largest", [5, 9, 1, 9], 1),
     ("smallest", [3], 0), ("largest", [2, 2, 2], 0)],
)  # fmt: skip
def test_fixed_pick(policy, nodes, slot):
    assert X.fixed_pick(policy, nodes) == slot
    # the oracle's rule (what the engine replays) picks the same slot
    assert (
        O.fixed_policy(policy)(1, list(range(len(nodes))), types.SimpleNamespace(nodes=nodes))
        == slot
    )


def test_fixed_pick_rejects_unknown_policy_and_empty_window():
    with pytest.raises(ValueError, match="unknown fixed policy 'sjf'"):
        X.fixed_pick("sjf", [1])
    with pytest.raises(ValueError, match="empty window"):
        X.fixed_pick("largest", [])


def test_one_hot_only_looks_at_the_window():
    jobs = [{"reqProc": n} for n in (4, 2, 8, 1)]
    assert X.one_hot("largest", jobs, 3) == [0.0, 0.0, 1.0]  # job 4 (1 node) is outside W = 3
    assert X.one_hot("smallest", jobs, 3) == [0.0, 1.0, 0.0]
    assert X.one_hot("smallest", jobs, 6) == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_standins_and_patch_answer_the_branch_queries():
    """The stand-ins import where the branch imports, and the patched query gives the branch
    a one-hot vector from which its own draw (np.random.choice, after truncating to the queue
    and renormalising as Cqsim_sim.score_calculate does) always returns the fixed slot."""
    before = {k: sys.modules.get(k) for k in ("tensorflow", "keras", "keras.backend")}
    try:
        installed = X.install_standins()
        import keras.backend as K  # noqa: F401  (what Reinforcement_learning.py imports)
        import tensorflow as tf  # noqa: F401

        assert set(installed) <= {"tensorflow", "keras", "keras.backend"}
    finally:
        for k, v in before.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    class Basic_algorithm:  # the branch's class, only what the patch touches
        def __init__(self, model):
            self.model = model

        def compute_score_probabilities(self, *a, **k):
            raise AssertionError("not patched")

    rl, alg = (
        types.SimpleNamespace(ValueModel=None),
        types.SimpleNamespace(Basic_algorithm=Basic_algorithm),
    )
    X.patch("largest", rl, alg)
    model = rl.ValueModel(window_size=3, job_cols=2)
    assert isinstance(model, X.FixedModel) and model.get_window_size() == 3
    assert model.learn([], [], []) == 0.0 and model.load_weights_complete_filename("a", "b") is None
    with pytest.raises(RuntimeError, match="the network was asked"):
        model.get_probabilities(None)
    a = Basic_algorithm(model)
    rng = np.random.default_rng(0)
    for queue in ([2, 7, 7, 9], [3, 1], [5]):
        jobs = [{"reqProc": n} for n in queue]
        p, fv = a.compute_score_probabilities(jobs, None, 0)
        assert len(p) == 3 and fv[0] is None
        if len(p) > len(jobs):  # Cqsim_sim.score_calculate's truncation
            p = [float(i) / sum(p[: len(jobs)]) for i in p[: len(jobs)]]
        picks = {int(rng.choice(len(p), p=p)) for _ in range(50)}
        assert picks == {X.fixed_pick("largest", queue[:3])}
    assert a.compute_score_probabilities([], None, 0) == -1
    with pytest.raises(ValueError, match="unknown fixed policy"):
        X.patch("random", rl, alg)


#: four jobs on 4 nodes with a priority flag; the DRAS branch's loader reads field 19
JOBS = CQSimJobs(
    job_id=np.array([1, 2, 3, 4]), submit=np.array([0, 0, 10, 10]), run=np.array([50, 20, 5, 5]),
    req_time=np.array([60, 20, 10, 10]), nodes=np.array([3, 2, 1, 4]),
    priority=np.array([0, 1, 0, 0], np.int32), num_nodes=4,
)  # fmt: skip


def test_swf_with_priority_field_and_ten_field_output(tmp_path):
    lines = CR.write_swf(JOBS, tmp_path / "s.swf", priority_field=True).read_text().splitlines()
    assert lines[:2] == ["; MaxNodes: 4", "; MaxProcs: 4"]
    assert [len(x.split()) for x in lines[2:]] == [19] * 4
    assert [x.split()[18] for x in lines[2:]] == ["0", "1", "0", "0"]
    assert lines[3] == "2 0 -1 20 -1 -1 -1 2 20 -1 1 -1 -1 -1 -1 -1 -1 -1 1"
    rst = "1;3;3;60.0;50.0;0.0;0.0;0.0;50.0;1\n2;2;2;20.0;20.0;50.0;0.0;50.0;70.0;2\n"
    assert CR.parse_rst(rst, fields=10) == {1: (0, 50, 1), 2: (50, 70, 2)}
    with pytest.raises(CR.CQSimUnavailable, match="line 1: 10 fields, expected 9"):
        CR.parse_rst(rst)


#: a stand-in DRAS checkout (PG/): cqsim.py imports tensorflow and keras as the branch does,
#: builds the ValueModel and asks Basic_algorithm once per job (a window of all jobs), and
#: writes the 10-field output with start = submit and class = the slot the policy picked
FAKE_PG = {
    "Config/config_sys.set": "backfill=3\nwin=5\njob_trace=x.swf\nnode_struc=x.swf\n",
    "CqSim/__init__.py": "",
    "CqSim/Reinforcement_learning.py": "import tensorflow as tf\nimport keras.backend as K\n"
    "class ValueModel:\n    def __init__(self, **k):\n        raise RuntimeError('the network')\n",
    "CqSim/Basic_algorithm.py": "class Basic_algorithm:\n    def __init__(self, model):\n"
    "        self.model = model\n",
    "CqSim/Cqsim_sim.py": """import os
import tensorflow as tf
class Cqsim_sim:
    def __init__(self, jobs, out, alg):
        self.jobs, self.out, self.alg = jobs, out, alg
    def start_scan(self):
        pass
    def cqsim_sim(self):
        lines = []
        window = [{"reqProc": int(j[7])} for j in self.jobs]
        for j in self.jobs:
            self.start_scan()
            p, _ = self.alg.compute_score_probabilities(window, None, 0)
            s, r = float(j[1]), float(j[3])
            lines.append(f"{j[0]};{j[7]};{j[7]};{j[8]}.0;{r};0.0;{s};{s};{s + r};{p.index(1.0)}")
        os.makedirs(os.path.dirname(self.out), exist_ok=True)
        open(self.out, "w").write("\\n".join(lines) + "\\n")
""",
    "cqsim.py": """import sys
import CqSim.Cqsim_sim as S, CqSim.Reinforcement_learning as RL, CqSim.Basic_algorithm as BA
cfg = dict(l.split("=", 1) for l in open("Config/" + sys.argv[2]).read().split())
assert (cfg["backfill"], cfg["win"], cfg["is_training"], cfg["monitor"]) == ("3", "50", "0", "500")
name = cfg["job_trace"]
jobs = [l.split() for l in open("../data/InputFiles/" + name) if not l.startswith(";")]
assert all(len(j) == 19 for j in jobs)
alg = BA.Basic_algorithm(RL.ValueModel(window_size=int(cfg["win"])))
S.Cqsim_sim(jobs, "../data/Results/" + name.split(".")[0] + ".rst", alg).cqsim_sim()
""",
}


def test_run_on_a_fake_dras_checkout(tmp_path):
    for rel, text in FAKE_PG.items():
        (tmp_path / "PG" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "PG" / rel).write_text(text)
    for policy, slot in (("fcfs", 0), ("smallest", 2), ("largest", 3)):
        r = CR.run_cqsim_dras(tmp_path, JOBS, policy, name="a0")
        assert r["passes"] == 4
        assert r["schedule"] == {1: (0, 50, slot), 2: (0, 20, slot), 3: (10, 15, slot),
                                 4: (10, 15, slot)}  # fmt: skip
    assert not (tmp_path / "data").exists()  # the checkout is not written to
    with pytest.raises(CR.CQSimUnavailable, match="not a CQSim DRAS checkout"):
        CR.cqsim_dras_src(tmp_path / "PG" / "CqSim")


def test_sweep_rejects_a_missing_dras_checkout(tmp_path, capsys):
    sweep = load_benchmark("cqsim_sweep")
    assert sweep.main(["--cqsim-dras", str(tmp_path / "nowhere"), "--mode", "dras-fcfs"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere: not a CQSim DRAS checkout" in err


def _backlog(n: int = 40, N: int = 16, seed: int = 18) -> CQSimJobs:
    """A small workload with a backlog deep enough that the three policies differ."""
    rng = np.random.default_rng(seed)
    req, submit = rng.integers(10, 400, n), np.sort(rng.integers(0, 1500, n))
    return CQSimJobs(
        job_id=np.arange(1, n + 1), submit=submit - submit[0],
        run=np.minimum(rng.integers(5, 400, n), req), req_time=req,
        nodes=rng.integers(1, N + 1, n), priority=np.zeros(n, np.int32), num_nodes=N,
    )  # fmt: skip


@pytest.mark.skipif(DRAS_SRC is None, reason="no checkout of CQSim's DRAS branch "
                    "($JAXSCHED_CQSIM_DRAS, or refs/CQSim-DRAS next to the checkout)")  # fmt: skip
def test_real_dras_branch_equals_engine_and_oracle():
    from jaxsched.sim.cqsim.run import simulate_cqsim

    jobs = _backlog()
    ours = simulate_cqsim(jobs, tuple(f"dras-{p}" for p in X.POLICIES))
    starts = []
    for policy, got in zip(X.POLICIES, ours):
        r = CR.run_cqsim_dras(DRAS_SRC, jobs, policy)
        st = np.array([r["schedule"][int(j)][0] for j in jobs.job_id])
        cl = np.array([r["schedule"][int(j)][2] for j in jobs.job_id])
        orc = O.simulate_cqsim(jobs.submit, jobs.nodes, jobs.run, jobs.req_time,
                               num_nodes=jobs.num_nodes, mode="dras",
                               policy=O.fixed_policy(policy))  # fmt: skip
        np.testing.assert_array_equal(got.start, st, err_msg=f"engine, {policy}")
        np.testing.assert_array_equal(got.cls, cl, err_msg=f"engine classes, {policy}")
        np.testing.assert_array_equal(orc.start, st, err_msg=f"oracle, {policy}")
        np.testing.assert_array_equal(orc.cls, cl, err_msg=f"oracle classes, {policy}")
        assert set(cl.tolist()) == {0, 1, 2}  # every class occurs
        starts.append(tuple(st.tolist()))
    assert len(set(starts)) == 3  # the case tells the three policies apart
