"""Trajectory filtering in training (spec rlscheduler.md §7): the environment draws only accepted
starts, SJF's metric per start agrees with the plain-Python oracle, and `jaxsched train
--filter` runs its two phases, caches the table and resumes bit for bit across the switch."""

import json

import jax
import numpy as np
import pytest
from test_train_run import SHORT, burst_trace, tiny_ppo

import jaxsched.sim  # noqa: F401
from jaxsched.cli import main
from jaxsched.envs import RLSchedulerEnv
from jaxsched.errors import ConfigError
from jaxsched.sim import oracle
from jaxsched.systems.rlscheduler.filtering import sjf_by_start
from jaxsched.systems.rlscheduler.run import _run_config, _Trainers, train
from jaxsched.train.checkpoint import load_checkpoint
from jaxsched.train.loop import read_log
from jaxsched.workload import read_swf

LENGTH = SHORT  # 16 jobs: a burst and a third of the next


@pytest.fixture(scope="module")
def burst(tmp_path_factory):
    path = burst_trace(tmp_path_factory.mktemp("flt") / "burst.swf", bursts=30)
    return path, read_swf(path).jobs("rlscheduler")


def _starts(env, n=600, seed=0):
    keys = jax.random.split(jax.random.PRNGKey(seed), n)
    state, _ = jax.jit(jax.vmap(env.reset))(keys)
    return np.asarray(state.start)


def test_env_draws_only_accepted_starts(burst):
    _, jobs = burst
    m = jobs.n_jobs
    low, high = LENGTH, m - LENGTH - 1
    table = np.zeros(m, bool)
    table[::7] = True  # some inside the range, some outside it
    table[high + 1 :] = True  # outside the range: must never be drawn
    env = RLSchedulerEnv(jobs, length=LENGTH, start_table=table)
    got = _starts(env)
    inside = np.nonzero(table[low:high])[0] + low
    assert set(got.tolist()) <= set(inside.tolist())
    # uniform over the accepted starts: 600 draws over ~40 starts hit nearly all of them
    assert len(set(got.tolist())) >= 0.9 * len(inside)
    one = np.zeros(m, bool)
    one[100] = True
    assert (_starts(RLSchedulerEnv(jobs, length=LENGTH, start_table=one), n=50) == 100).all()
    # without a table: the reference's whole range
    plain = _starts(RLSchedulerEnv(jobs, length=LENGTH))
    assert plain.min() >= low and plain.max() < high and len(set(plain.tolist())) > 200


def test_env_rejects_bad_tables(burst):
    _, jobs = burst
    with pytest.raises(ConfigError, match="start_table must be bool"):
        RLSchedulerEnv(jobs, length=LENGTH, start_table=np.ones(5, bool))
    with pytest.raises(ConfigError, match="start_table must be bool"):
        RLSchedulerEnv(jobs, length=LENGTH, start_table=np.ones(jobs.n_jobs))
    outside = np.zeros(jobs.n_jobs, bool)
    outside[:LENGTH] = True  # only starts below the sampling range
    with pytest.raises(ConfigError, match="accepts none"):
        RLSchedulerEnv(jobs, length=LENGTH, start_table=outside)


@pytest.mark.parametrize("backfill", ["none", "rlscheduler"])
def test_sjf_by_start_matches_the_oracle(burst, backfill):
    _, jobs = burst
    vals = sjf_by_start(jobs, LENGTH, 40, 52, backfill=backfill, compat=True, metric="bsld")
    assert np.isnan(vals[:40]).all() and np.isnan(vals[52:]).all()
    for s in (40, 45, 51):
        sl = slice(s, s + LENGTH)
        st = oracle.simulate(
            jobs.submit[sl],
            jobs.run[sl],
            jobs.req_time[sl],
            jobs.procs[sl],
            num_nodes=int(jobs.num_nodes),
            procs_per_node=float(jobs.procs_per_node),
            policy="sjf",
            backfill=backfill,
            compat=True,
        )
        want = oracle.metrics(
            jobs.submit[sl],
            jobs.run[sl],
            jobs.procs[sl],
            st,
            num_procs=float(jobs.num_procs),
            compat=True,
        )["bsld"]
        assert vals[s] == pytest.approx(want, rel=1e-12)


def _kw(**extra):
    return dict(
        metric="bsld",
        backfill="none",
        compat=True,
        length=LENGTH,
        ppo=tiny_ppo(n_envs=4, iters=2),
        progress=False,
        compare=True,
        log=lambda s: None,
        **extra,
    )


def test_train_filter_phases_cache_and_resume(burst, tmp_path):
    trace, jobs = burst
    low, high = LENGTH, jobs.n_jobs - LENGTH - 1
    kw = _kw(filter="paper", filter_epochs=1)
    train(trace, tmp_path / "straight", 2, **kw)
    train(trace, tmp_path / "split", 1, **kw)
    train(trace, tmp_path / "split", 2, resume=True, **kw)
    # the cached table: SJF per start and the paper's (median, 2 mean) over the range
    z = np.load(tmp_path / "split" / "filter.npz")
    sjf = np.full(jobs.n_jobs, np.nan)
    for s in range(low, high):
        sl = slice(s, s + LENGTH)
        st = (
            oracle.simulate(
                jobs.submit[sl],
                jobs.run[sl],
                jobs.req_time[sl],
                jobs.procs[sl],
                num_nodes=int(jobs.num_nodes),
                procs_per_node=float(jobs.procs_per_node),
                policy="sjf",
                compat=True,
            )
            if s % 50 == 0
            else None
        )
        if st is not None:
            sjf[s] = oracle.metrics(
                jobs.submit[sl],
                jobs.run[sl],
                jobs.procs[sl],
                st,
                num_procs=float(jobs.num_procs),
                compat=True,
            )["bsld"]
    checked = ~np.isnan(sjf)
    np.testing.assert_allclose(z["sjf"][checked], sjf[checked], rtol=1e-12)
    v = z["sjf"][low:high]
    assert float(z["lower"]) == pytest.approx(np.median(v))
    assert float(z["upper"]) == pytest.approx(2 * np.mean(v))
    rows = read_log(tmp_path / "split")
    assert [r["filtered"] for r in rows] == [True, False]
    # phase 1: SJF on the epoch's sequences is inside the range
    assert float(z["lower"]) < rows[0]["sjf_bsld"] < float(z["upper"])
    a, b = load_checkpoint(tmp_path / "straight"), load_checkpoint(tmp_path / "split")
    assert a.epoch == b.epoch == 2
    for x, y in zip(jax.tree_util.tree_leaves(a.state), jax.tree_util.tree_leaves(b.state)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_cli_filter_flags(burst, tmp_path, capsys):
    trace, _ = burst
    args = [
        "train",
        "rlscheduler",
        "--compat",
        "rlscheduler",
        "--epochs",
        "1",
        "--length",
        str(LENGTH),
        "--trajectories",
        "2",
        "--pi-iters",
        "1",
        "--v-iters",
        "1",
        "--no-progress",
        "--no-compare",
    ]
    # the burst trace's SJF bsld (~50) always lies in the reference's (10, 150)
    assert main(args + [str(trace), "--filter", "reference", "--out", str(tmp_path / "r")]) == 0
    assert read_log(tmp_path / "r")[0]["filtered"] is True
    # identical jobs: SJF's bsld is 1 everywhere, the paper's (1, 2) accepts nothing
    flat = tmp_path / "flat.swf"
    flat.write_text(
        "; MaxNodes: 4\n; MaxProcs: 4\n"
        + "".join(
            f"{i + 1} {100 * i} -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n" for i in range(300)
        )
    )
    capsys.readouterr()
    rc = main(args + [str(flat), "--filter", "paper", "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert rc == 2 and "none of the" in err and len(err.strip().splitlines()) == 1
    rc = main(args + [str(trace), "--filter", "bogus", "--out", str(tmp_path / "x")])
    assert rc == 2 and "--filter" in capsys.readouterr().err
    # --job-slice (default: the whole trace) reaches the run's settings, and the validation
    # sequences come from the same first jobs: starts in [L, slice - L - 1) (spec §2.2)
    assert json.loads((tmp_path / "r" / "run.json").read_text())["job_slice"] == 0
    val = ["--validate", "1", "--val-sequences", "4", "--val-jobs", str(LENGTH)]
    assert main(args + [str(trace), "--job-slice", "100", *val, "--out", str(tmp_path / "s")]) == 0
    assert json.loads((tmp_path / "s" / "run.json").read_text())["job_slice"] == 100
    starts = json.loads((tmp_path / "s" / "validation.json").read_text())["starts"]
    assert len(starts) == 4 and all(LENGTH <= s < 100 - LENGTH - 1 for s in starts)
    rc = main(args + [str(trace), "--job-slice", "-3", "--out", str(tmp_path / "y")])
    assert rc == 2 and "--job-slice" in capsys.readouterr().err


def test_init_from_another_run(burst, tmp_path, capsys):
    """--init-from starts a run from another run's networks: with learning rates 0 the new
    run's parameters stay exactly those of the source (a fresh run with another seed keeps its
    own); a checkpoint of other networks is a one-line error."""
    trace, _ = burst
    base = [
        "train",
        "rlscheduler",
        str(trace),
        "--compat",
        "rlscheduler",
        "--length",
        str(LENGTH),
        "--trajectories",
        "2",
        "--pi-iters",
        "1",
        "--v-iters",
        "1",
        "--no-progress",
        "--no-compare",
    ]
    # every run here has learning rates 0: one compiled update for all of them (the source run's
    # parameters are then its initial ones, which is all the test needs)
    base += ["--pi-lr", "0", "--vf-lr", "0"]
    assert main(base + ["--epochs", "1", "--out", str(tmp_path / "a")]) == 0
    assert (
        main(
            base
            + [
                "--epochs",
                "1",
                "--seed",
                "5",
                "--init-from",
                str(tmp_path / "a"),
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    a, b = load_checkpoint(tmp_path / "a").state, load_checkpoint(tmp_path / "b").state
    for k in ("policy_params", "value_params"):
        la, lb = jax.tree_util.tree_leaves(a[k]), jax.tree_util.tree_leaves(b[k])
        assert len(la) == len(lb) > 0
        for x, y in zip(la, lb):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert read_log(tmp_path / "b")[0]["epoch"] == 1
    # what a fresh run with that seed starts from (and, with learning rates 0, keeps): its own,
    # different parameters (the run's trainer's init, as `train` calls it)
    ppo = {**tiny_ppo(n_envs=2, iters=1, lr=0.0), "vf_lr": 0.0}  # the runs above
    rc = _run_config(trace, ppo=ppo, init_from=None, length=LENGTH, compat=True)
    trainer = _Trainers(read_swf(trace).jobs(rc.rules), rc, tmp_path / "c", False, print).phase1
    c = trainer.init(jax.random.PRNGKey(5))
    assert any(
        not np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(
            jax.tree_util.tree_leaves(a["policy_params"]),
            jax.tree_util.tree_leaves(c.policy_params),
        )
    )
    capsys.readouterr()
    rc = main(
        base
        + [
            "--epochs",
            "1",
            "--policy-net",
            "mlp_v1",
            "--init-from",
            str(tmp_path / "a"),
            "--out",
            str(tmp_path / "d"),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and str(tmp_path / "a") in err and len(err.strip().splitlines()) == 1
