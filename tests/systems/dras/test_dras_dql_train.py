"""``jaxsched train dras --variant dql`` end to end on the tiny trace of test_dras_train.py
(N = 8): two epochs straight and one + --resume agree bit for bit; ε decays per ready start;
the trained network's greedy decisions over the validation month in the JAX environment
(DRASDQLEnv on the engine's DQL mode) equal oracle_cqsim's DQL loop driven by the same network:
the jobs picked, their levels, their rewards, start times and job classes."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest
from test_dras_train import straight_and_resumed

from jaxsched import systems
from jaxsched.errors import ConfigError
from jaxsched.systems.dras.config import RunConfig, env_jobs, load_split
from jaxsched.train.checkpoint import load_checkpoint

ARGS = ["--variant", "dql", "--hidden", "8,8", "--envs", "2", "--jobs-per-set", "12",
        "--capacity", "16", "--curriculum", "1,1,1", "--no-progress", "--input-norm"]  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return straight_and_resumed(tmp_path_factory.mktemp("dras_dql"), ARGS)


def _log(out):
    return [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]


def test_resume_is_bit_for_bit(runs):
    _, a, b = runs
    sa, sb = load_checkpoint(a).state, load_checkpoint(b).state
    assert set(sa) == {"params", "opt_state", "key"}
    la, lb = jax.tree_util.tree_leaves(sa), jax.tree_util.tree_leaves(sb)
    assert all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))
    keys = ("reward", "decisions", "epsilon", "avg_wait", "val_reward", "val_wait")
    assert [{k: r[k] for k in keys} for r in _log(a)] == [{k: r[k] for k in keys} for r in _log(b)]


def test_run_settings_and_epsilon(runs):
    _, a, _ = runs
    rj = json.loads((a / "run.json").read_text())
    assert rj["variant"] == "dql" and rj["update"] == "sequential" and "dql_sign" not in rj
    rc = RunConfig.from_dict(rj)
    assert rc.dql_config().sign == "code" and rc.dql_config().eps_decay == 0.99
    for r in _log(a):
        # every jobset of 12 jobs starts each job by one recorded decision; ε = 0.99^(ready
        # starts) averaged over the two episodes, so between 0.99^12 and 1
        assert r["decisions"] == 12 and 0.99**12 - 1e-6 <= r["epsilon"] < 1.0
        assert r["updates"] * 10 >= r["passes"] and r["early_flushes"] == 0
        assert 0 <= r["max_batch_span"] <= 9  # a batch's decisions lie within 10 instances


def _oracle_policy(net, params, n_nodes):
    from jaxsched.sim.oracle_cqsim import dql_state

    apply = jax.jit(net.apply)

    def pick(level, window, view):
        x = np.zeros((50, 2 + n_nodes, 2), np.float32)
        for i, j in enumerate(window):
            x[i] = np.asarray(dql_state(view, j), np.float32)
        return int(np.argmax(np.asarray(apply(params, x))[: len(window)]))

    return pick


def test_jax_dql_loop_equals_oracle(runs):
    from jaxsched.sim.oracle_cqsim import simulate_cqsim
    from jaxsched.systems.dras.evaluate import make_policy, run_model

    trace, a, _ = runs
    _, model = systems.load_model(a)
    cj = env_jobs(load_split(str(trace)).val)  # the validation month: its rollout is compiled
    cj = dataclasses.replace(cj, submit=cj.submit // 100)  # same shapes, jobs now compete
    n = len(cj.submit)
    r = run_model(model.run, model.params, cj)
    pol = _oracle_policy(make_policy(model.run), model.params, 8)
    o = simulate_cqsim(cj.submit, cj.nodes, cj.run, cj.req_time, num_nodes=8, mode="dql",
                       policy=pol, window=50)  # fmt: skip
    assert r["decisions"] == len(o.decisions) == n  # every job starts by one recorded decision
    assert r["job"].tolist() == [d.job for d in o.decisions]
    assert r["level"].tolist() == [d.level for d in o.decisions]
    assert 2 in r["level"].tolist()  # level 2 (back-filling) is exercised
    np.testing.assert_allclose(r["rewards"], [d.reward5 for d in o.decisions], rtol=1e-5)
    assert r["start"].tolist() == o.start and r["cls"].tolist() == o.cls
    assert r["reward"] == pytest.approx(sum(d.reward5 for d in o.decisions), rel=1e-5)


def test_bad_dql_settings_one_line(runs):
    trace, *_ = runs
    with pytest.raises(ConfigError, match="dql updates are sequential"):
        RunConfig(trace=str(trace), variant="dql", update="mean")
    with pytest.raises(ConfigError, match="dql_sign"):
        RunConfig(trace=str(trace), variant="dql", dql_sign="up")


def test_dql_on_the_papers_capacity_reward(runs, tmp_path):
    """``--variant dql --loop paper --reward capacity`` trains and validates on Eq. 2: every
    recorded reward is Eq. 2's (non-positive, not type 5's positive thirds) and every
    decision is recorded (more than one per job); the evaluation keeps the last len(jobs)."""
    from jaxsched.cli import main as jaxsched_main
    from jaxsched.systems.dras.evaluate import run_model

    trace, *_ = runs
    out = tmp_path / "cap"
    argv = ["train", "dras", str(trace), *ARGS, "--loop", "paper", "--reward", "capacity"]
    assert jaxsched_main(argv + ["--out", str(out), "--epochs", "1"]) == 0
    rc = RunConfig.from_dict(json.loads((out / "run.json").read_text()))
    assert rc.reward == "capacity" and rc.dql_config().target_norm == "absmax"  # G < 0
    assert dataclasses.replace(rc, reward="capability").dql_config().target_norm == "max"
    from jaxsched.systems.dras import run as dras_run

    # the code-reward runs of this module and this one compile an epoch each (same shapes)
    assert {k[-1].target_norm for k in dras_run._EPOCH_FNS if k[0] == "dql"} == {"max", "absmax"}
    _, model = systems.load_model(out)
    cj = env_jobs(load_split(str(trace)).val)
    cj = dataclasses.replace(cj, submit=cj.submit // 100)  # jobs compete: queues form
    r = run_model(model.run, model.params, cj)
    n, k = len(cj.submit), r["decisions"]
    assert k > n and len(r["rewards"]) == n  # non-fitting level-1 picks are recorded too
    assert (r["rewards"] <= 0).all() and (r["rewards"] < 0).any()
    assert r["reward"] < float(np.sum(r["rewards"])) < 0  # the total counts the earlier ones
    assert _log(out)[-1]["val_reward"] < 0
