"""``jaxsched train rlscheduler --seeds``: a 2-seed sweep (one vmapped update per epoch,
resumed half-way) equals two single-seed runs; one run directory per seed; clear errors.

Sizes: tiny_ppo(2, 3) on 30 bursts. (test_filter's tiny_ppo(4, 2), which would share its
compiled update, does not work here: a few parameters of the batched and the single programs
then differ by up to 1e-3, Adam's normalisation amplifying rounding in near-zero gradients.)"""

import dataclasses
import json

import jax
import numpy as np
import pytest
from test_train_run import LENGTH, burst_trace, tiny_ppo

import jaxsched.sim  # noqa: F401
from jaxsched.cli import main
from jaxsched.errors import ConfigError
from jaxsched.systems.rlscheduler.run import _run_config, _Trainers, train
from jaxsched.train.checkpoint import list_checkpoints, load_checkpoint
from jaxsched.train.loop import read_log
from jaxsched.workload import read_swf

PPO = tiny_ppo(n_envs=2, iters=3)
FLAGS = ["--compat", "rlscheduler", "--length", LENGTH, "--trajectories", PPO["num_envs"],
         "--pi-iters", PPO["train_pi_iters"], "--v-iters", PPO["train_v_iters"],
         "--pi-lr", PPO["pi_lr"], "--no-progress", "--no-compare"]  # fmt: skip


def _cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A sweep over seeds 0 and 1 (epoch 1, then --resume to epoch 2, every checkpoint kept)
    and what ``--seed s`` alone trains: the run's trainer, ``init(PRNGKey(s))`` and two
    updates (one trainer for both seeds: building one is most of this test's time)."""
    d = tmp_path_factory.mktemp("sweep")
    trace = burst_trace(d / "burst.swf", bursts=30)
    base = ["train", "rlscheduler", trace, "--out", d / "sweep", "--seeds", "0-1", *FLAGS]
    val = ["--validate", "1", "--val-sequences", "3", "--val-jobs", LENGTH]  # test_train_run's
    assert main([str(a) for a in base + ["--epochs", "1", "--keep-checkpoints", "0", *val]]) == 0
    argv = base + ["--epochs", "2", "--keep-checkpoints", "0", "--resume", *val]
    assert main([str(a) for a in argv]) == 0
    rc = _run_config(trace, ppo=PPO, init_from=None, length=LENGTH, compat=True)
    jobs = read_swf(trace).jobs(rc.rules)
    trainer = _Trainers(jobs, rc, d / "unused", False, print).phase1
    singles = {}
    for s in (0, 1):
        st0 = trainer.init(jax.random.PRNGKey(s))
        st, m1 = trainer.update(st0)
        st, m2 = trainer.update(st)
        singles[s] = (dataclasses.replace(rc, seed=s), st, jax.device_get([m1, m2]), st0)
    return trace, d, singles


def _flat(tree):
    leaves = jax.tree_util.tree_leaves(tree)
    return np.concatenate([np.asarray(x, np.float64).ravel() for x in leaves])


#: the module's sweep (a vmapped RLScheduler update, resumed, validated per seed) is the extended
#: tier's: its parts are each run by a cheaper test of the suite: the vmapped PPO update equals
#: separate runs (tests/train/test_ppo.py::test_vmap_over_seeds_equals_separate_runs), the sweep's
#: epochs, directories, rows, checkpoints and resume (tests/train/test_sweep.py), and
#: `train rlscheduler --seeds` end to end (test_train_split.py::test_sweep_records_the_split_...)
SWEEP_TIER = pytest.mark.extended


@SWEEP_TIER
def test_sweep_seed_equals_single_seed_run(runs):
    """Seed s of the sweep = the run --seed s alone gives: same run.json, PRNG state (bit for
    bit: the streams are integers), actions taken (same returns and policy-step counts), and
    parameters and optimiser states close (not bit-equal: the vmapped program batches the
    seeds' matrix products, and Adam turns a rounding difference in a gradient component
    near 0 into a step of up to the learning rate): each network's parameters and optimiser
    state apart by under 5 % of how far the two updates moved them (Euclidean norms; measured
    0.2-0.7 % for the policy, 1e-8 for the rest)."""
    _, d, singles = runs
    for s, (rc, state, ms, state0) in singles.items():
        sw = d / "sweep" / f"seed-{s}"
        saved = json.loads((sw / "run.json").read_text())
        assert len(saved.pop("trace_sha256")) == 64 and saved == rc.to_run_json()
        a = load_checkpoint(sw, target=state)
        assert a.epoch == 2 and int(a.state.step) == int(state.step) == 2
        np.testing.assert_array_equal(a.state.rng, state.rng)
        for k in ("policy_params", "value_params", "policy_opt_state", "value_opt_state"):
            x, y, y0 = (_flat(getattr(t, k)) for t in (a.state, state, state0))
            assert x.size > 100 and np.linalg.norm(x - y) <= 0.05 * np.linalg.norm(y - y0), k
        rows = read_log(sw)
        assert [r["epoch"] for r in rows] == [1, 2] and all(r["sweep_seeds"] == 2 for r in rows)
        for r, m in zip(rows, ms):
            assert r["return"] == pytest.approx(float(m["episode_return"]), rel=1e-6)
            assert r["pi_iters"] == int(m["pi_iters"])
            # pi_loss is a mean of standardised advantages times ratios near 1: O(1) terms that
            # cancel to ~1e-5, so float32 summation order alone moves it by ~1e-5 (seen on a
            # newer CPU: 0.9e-5 against 2.3e-5)
            assert r["pi_loss"] == pytest.approx(float(m["pi_loss"]), rel=1e-3, abs=1e-4)
        # resumed at epoch 1 with every checkpoint kept
        assert [load_checkpoint(p).epoch for p in list_checkpoints(sw)] == [1, 2]
        # validated every epoch, the best checkpoint kept per seed
        scored = {r["epoch"]: r["val_bsld"] for r in rows}
        best = json.loads((sw / "best.json").read_text())
        assert best["value"] == min(scored.values()) and (sw / "best.ckpt").is_file()
        assert json.loads((sw / "validation.json").read_text())["starts"] == best["starts"]
    # the two seeds really are different runs
    p0, p1 = singles[0][1].policy_params, singles[1][1].policy_params
    assert any(
        not np.allclose(x, y)
        for x, y in zip(jax.tree_util.tree_leaves(p0), jax.tree_util.tree_leaves(p1))
    )


def test_sweep_flag_errors_are_one_line(capsys, tmp_path):
    trace = burst_trace(tmp_path / "burst.swf", bursts=30)
    cases = [
        (["--seeds", "0,0"], "repeated"),
        (["--seeds", "3-1"], "empty range"),
        (["--seeds", "a-b"], "expected e.g. 0-7"),
        (["--seeds", "0-1", "--seed", "2"], "not allowed with argument"),
    ]
    for extra, needle in cases:
        argv = ["train", "rlscheduler", trace, "--epochs", "1", "--out", tmp_path / "n", *extra]
        rc, _, err = _cli(capsys, *argv)
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and needle in lines[0], err


@SWEEP_TIER
def test_sweep_over_existing_runs_errors_are_one_line(runs, capsys, tmp_path):
    trace, d, _ = runs
    sweep = d / "sweep"
    # a sweep over existing seed directories without --resume; seeds at different epochs
    rc, _, err = _cli(capsys, "train", "rlscheduler", trace, "--epochs", "3", "--out", sweep,
                      "--seeds", "0-1", *FLAGS)  # fmt: skip
    assert rc == 2 and "already holds a training run" in err and "seed-0" in err
    lag = tmp_path / "lag"
    for s in (0, 1):
        (lag / f"seed-{s}").mkdir(parents=True)
        for f in ("run.json", "log.jsonl"):
            (lag / f"seed-{s}" / f).write_bytes((sweep / f"seed-{s}" / f).read_bytes())
    ck0 = list_checkpoints(sweep / "seed-0")
    (lag / "seed-0" / ck0[0].name).write_bytes(ck0[0].read_bytes())  # epoch 1
    (lag / "seed-1" / ck0[1].name).write_bytes(
        list_checkpoints(sweep / "seed-1")[1].read_bytes()
    )  # epoch 2
    kw = dict(compare=False, progress=False, log=lambda s: None)
    with pytest.raises(ConfigError, match=r"different epochs \(seed-0: 1, seed-1: 2\)"):
        train(trace, lag, 3, seeds=[0, 1], resume=True, **kw)
    with pytest.raises(ConfigError, match="not seed 1 of the same settings"):
        (lag / "seed-1" / "run.json").write_text((lag / "seed-0" / "run.json").read_text())
        train(trace, lag, 3, seeds=[0, 1], resume=True, **kw)
