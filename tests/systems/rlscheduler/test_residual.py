"""The residual policy (issue 49, ``--residual HEURISTIC``): untrained, its greedy schedule IS
the heuristic's (F1, SJF and a tuned priority; with and without backfilling; with more jobs
waiting than observation slots and with jobs submitted at the same second), its logits are
exactly -rank / temperature, and a residual run records the option, validates its untrained
model as epoch 0 (= the heuristic's validation value) and loads back for ``evaluate``."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tiny_traces import cores_tiny

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched import nets
from jaxsched.cli import main
from jaxsched.envs import RLSchedulerEnv
from jaxsched.envs.rlscheduler import jit_reset_at, jit_step
from jaxsched.errors import ConfigError
from jaxsched.sim.evaluate import evaluate
from jaxsched.systems.rlscheduler.config import RunConfig, make_env, policy_net
from jaxsched.systems.rlscheduler.evaluate import load_policy
from jaxsched.workload import read_swf

LENGTH, MQ, TEMP = 48, 6, 0.5
STARTS = (40, 150)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    # bursts of jobs at the same second (gap 0) on 256 cores: queues longer than MQ, ties
    path = tmp_path_factory.mktemp("residual") / "tiny.swf"
    return cores_tiny(path, 400, 11, [0, 0, 5, 60, 600], [16, 64, 128, 256], [30, 300, 3000])


@pytest.fixture(scope="module")
def jobs(trace):
    return read_swf(trace).jobs("rlscheduler")


_APPLY = jax.jit(lambda params, obs, mask: nets.ResidualKernelPolicy(temperature=TEMP).apply(
    params, obs, mask))  # fmt: skip


def _greedy(env, params, start):
    """Start times of the untrained residual policy's greedy schedule, and whether some
    decision had more waiting jobs than slots."""
    st, ts = jit_reset_at(env, start)
    crowded = False
    while not bool(ts.last()):
        logits = _APPLY(params, ts.observation.obs, ts.observation.mask)
        crowded |= int(st.sim.n_queued) > MQ
        st, ts = jit_step(env, st, nets.greedy_action(logits, ts.observation.mask))
    return np.asarray(st.sim.start), crowded


@pytest.mark.parametrize(
    "compat, backfill", [(True, "none"), (True, "rlscheduler"), (False, "easy")]
)
def test_untrained_greedy_schedule_is_the_heuristics(jobs, compat, backfill):
    s = np.asarray(jobs.submit)
    for start in STARTS:  # the windows hold jobs submitted at the same second
        assert (np.diff(s[start : start + LENGTH]) == 0).any()
    for prior in ("f1", "sjf", "tuned:tuned-sdsc-easy"):
        env = RLSchedulerEnv(jobs, length=LENGTH, max_queue=MQ, backfill=backfill,
                             compat=compat, prior=prior)  # fmt: skip
        _, ts = jit_reset_at(env, STARTS[0])
        params = nets.ResidualKernelPolicy(temperature=TEMP).init(
            jax.random.PRNGKey(1), ts.observation.obs, ts.observation.mask
        )
        want = evaluate(jobs, list(STARTS), LENGTH, [prior], [backfill], compat=compat,
                        metrics=("bsld",)).start_times[:, 0, 0]  # fmt: skip
        for i, start in enumerate(STARTS):
            got, crowded = _greedy(env, params, start)
            assert crowded  # the prior's own cut-off was used
            np.testing.assert_array_equal(got, want[i], err_msg=f"{prior} {backfill} {start}")


def test_prior_column_and_untrained_logits(jobs):
    env = RLSchedulerEnv(jobs, length=LENGTH, max_queue=MQ, compat=True, prior="f1")
    st, ts = jit_reset_at(env, STARTS[0])
    while int(st.sim.n_queued) < 3:  # a decision with several waiting jobs
        st, ts = jit_step(env, st, 0)
    obs, mask = ts.observation.obs, np.asarray(ts.observation.mask)
    assert obs.shape == (MQ, 9) and env.obs_shape == (MQ, 9)
    k = int(mask.sum())
    col = np.asarray(obs[:, -1])
    np.testing.assert_array_equal(col[:k], np.arange(k) / 128.0)
    np.testing.assert_array_equal(col[k:], 1.0)
    net = nets.ResidualKernelPolicy(temperature=TEMP)
    params = net.init(jax.random.PRNGKey(2), obs, ts.observation.mask)
    logits = np.asarray(net.apply(params, obs, ts.observation.mask))
    # the correction is exactly zero: -rank / T on the jobs, masked elsewhere
    np.testing.assert_allclose(logits[:k], -np.arange(k) / TEMP, rtol=1e-6)
    assert np.all(logits[k:] < -1e5)
    # the visible jobs are in F1's order (the sequence's own F1 rank)
    vis = np.asarray(env.visible_jobs(st))[:k]
    rank = np.asarray(st.sim.policy_rank)
    assert np.all(np.diff(rank[vis]) > 0)


def test_residual_settings_errors(jobs, trace):
    with pytest.raises(ConfigError, match="static priority key"):
        RLSchedulerEnv(jobs, length=LENGTH, prior="random")
    with pytest.raises(ConfigError, match="static priority key"):
        RLSchedulerEnv(jobs, length=LENGTH, compat=False, prior="wfp3")
    with pytest.raises(ConfigError, match="kernel policy"):
        policy_net(RunConfig(trace=str(trace), policy="mlp_v2", residual="f1"))
    # no residual: run.json without the fields, the plain kernel policy
    rc = RunConfig(trace=str(trace))
    assert "residual" not in rc.to_dict() and type(policy_net(rc)) is nets.KernelPolicy
    assert make_env(jobs, rc).obs_shape == (128, 8)


def test_residual_run_records_validates_epoch_zero_and_loads(trace, jobs, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["train", "rlscheduler", trace, "--compat", "rlscheduler", "--length", 16,
            "--epochs", 1, "--trajectories", 4, "--pi-iters", 2, "--v-iters", 2,
            "--no-progress", "--no-compare", "--split", "train", "--validate", 1,
            "--val-sequences", 2, "--val-jobs", 16, "--keep-checkpoints", 0,
            "--residual", "f1", "--residual-temperature", 0.25, "--out", out]  # fmt: skip
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    run = json.loads((out / "run.json").read_text())
    assert run["residual"] == "f1" and run["residual_temperature"] == 0.25
    rows = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [0, 1] and rows[0]["untrained"] is True
    # untrained = F1: its validation value is F1's on the same sequences
    val = json.loads((out / "validation.json").read_text())
    assert rows[0]["val_bsld"] == pytest.approx(val["f1"], rel=1e-12)
    assert (out / "checkpoint_00000000.ckpt").is_file()
    pol = load_policy(out / "checkpoint_00000000.ckpt")
    assert pol.epoch == 0 and pol.run.residual == "f1"
    assert isinstance(pol.net, nets.ResidualKernelPolicy) and pol.net.temperature == 0.25
    assert float(jnp.exp(-pol.params["params"]["log_inv_temperature"])) == pytest.approx(0.25)
    capsys.readouterr()
    rc = main([str(a) for a in ["evaluate", trace, "--compat", "rlscheduler", "--policy", "f1",
               "--backfill", "none", "--jobs", 16, "--sequences", 4, "--split", "test",
               "--model", out / "checkpoint_00000000.ckpt", "--json"]])  # fmt: skip
    text, err = capsys.readouterr()
    assert rc == 0, err
    by = {}
    for r in json.loads(text)["results"]:
        if r["metric"] == "bsld":
            by.setdefault(r["policy"], {})[r["start"]] = r["value"]
    assert set(by) == {"f1", "rl"} and by["rl"].keys() == by["f1"].keys()
    for start, value in by["f1"].items():  # the same schedule (metrics to float rounding)
        assert by["rl"][start] == pytest.approx(value, rel=1e-12)
