"""RLScheduler training end to end: a learning test on a hand-made trace where the right policy
is known, resume bit for bit, `jaxsched train` / `evaluate --model` / `plot`, and clear errors
for corrupt or missing run directories."""

import json
import shutil
from pathlib import Path

import jax
import numpy as np
import pytest
from shared_data import REPO

import jaxsched.sim  # noqa: F401
from jaxsched.cli import main
from jaxsched.sim.evaluate import evaluate
from jaxsched.systems.rlscheduler.evaluate import load_policy, policy_metric
from jaxsched.systems.rlscheduler.run import train
from jaxsched.train.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint
from jaxsched.train.loop import read_log
from jaxsched.workload import read_swf

#: epoch of each checkpoint committed under models/
SHIPPED_EPOCHS = {"lublin1-none": 14, "lublin1-bf": 129, "lublin1-bf-fast": 28}

LENGTH = 36
#: the tests that need no learning (resume, filter phases) train on sequences of 16 jobs: the
#: update's slot-prefix buckets are then 8 and 16 (at 36 jobs: 8, 16, 32 and 64), half the
#: branches to build; test_filter's tests share the compiled update of this size
SHORT = 16
TEST_STARTS = [100, 400, 700, 1000]


def burst_trace(path: Path, bursts: int = 120, per: int = 12, gap: int = 7000) -> Path:
    """Bursts of `per` jobs one second apart, alternating long (1000 s) and short (10 s), every
    job needing the whole 4-node machine: jobs run one at a time, so the order is everything.
    FCFS alternates long and short jobs; shortest-first is optimal for bounded slowdown."""
    lines = ["; MaxNodes: 4", "; MaxProcs: 4"]
    jid = 1
    for b in range(bursts):
        for i in range(per):
            run = 1000 if i % 2 == 0 else 10
            lines.append(f"{jid} {b * gap + i} -1 {run} 4 -1 -1 4 {run} -1 1 1 1 -1 -1 -1 -1 -1")
            jid += 1
    path.write_text("\n".join(lines) + "\n")
    return path


def tiny_ppo(n_envs=16, iters=20, lr=3e-3):
    return {
        "num_envs": n_envs,
        "train_pi_iters": iters,
        "train_v_iters": iters,
        "max_episode_steps": LENGTH,
        "pi_lr": lr,
    }


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("learn")
    trace = burst_trace(d / "burst.swf")
    out = d / "run"
    train(
        trace,
        out,
        10,
        metric="bsld",
        backfill="none",
        compat=True,
        length=LENGTH,
        ppo=tiny_ppo(),
        progress=False,
        compare=True,
        log=lambda s: None,
        validate=3,
        val_sequences=3,
        val_jobs=LENGTH,
        val_seed=2,
    )
    return trace, out


def test_learned_policy_beats_fcfs(trained):
    """After 10 short epochs the greedy policy must be far better than FCFS on held-out
    sequences (it should find shortest-first; a broken trainer stays near FCFS or random)."""
    trace, out = trained
    jobs = read_swf(trace).jobs("rlscheduler")
    pol = load_policy(out)
    assert pol.epoch == 10
    rl, starts = policy_metric(pol, jobs, TEST_STARTS, LENGTH)
    table = evaluate(
        jobs, TEST_STARTS, LENGTH, ["fcfs", "sjf"], ["none"], compat=True, metrics=("bsld",)
    ).table("bsld")
    fcfs, sjf = table[("fcfs", "none")], table[("sjf", "none")]
    assert fcfs > 2.5 * sjf  # the instance really rewards the right order
    assert rl.mean() < 0.5 * fcfs, (rl.mean(), fcfs, sjf)
    # every job of every sequence started, never before its submission
    for s, st in zip(TEST_STARTS, starts):
        assert (st >= jobs.submit[s : s + LENGTH]).all()


def test_log_rows_and_heuristics_of_the_same_sequences(trained):
    _, out = trained
    rows = read_log(out)
    assert [r["epoch"] for r in rows] == list(range(1, 11))
    for r in rows:
        assert r["episodes"] == 16 and r["bsld"] == pytest.approx(-r["return"], rel=1e-6)
        assert r["sjf_bsld"] >= 1.0 and r["f1_bsld"] >= 1.0 and r["seconds"] > 0
    # the RL curve ends clearly below where it started
    assert np.mean([r["bsld"] for r in rows[-3:]]) < np.mean([r["bsld"] for r in rows[:2]])


def test_validation_scores_and_best_checkpoint(trained):
    """Epochs 3, 6, 9 and the last are validated; best.ckpt is the best of them, and its
    policy re-run on the validation sequences gives the logged score."""
    trace, out = trained
    rows = read_log(out)
    scored = {r["epoch"]: r["val_bsld"] for r in rows if "val_bsld" in r}
    assert sorted(scored) == [3, 6, 9, 10]
    info = json.loads((out / "best.json").read_text())
    best_epoch = min(scored, key=lambda e: (scored[e], e))
    assert info["epoch"] == best_epoch and info["value"] == scored[best_epoch]
    assert info["jobs"] == LENGTH and len(info["starts"]) == 3
    pol = load_policy(out / "best.ckpt")
    assert pol.epoch == best_epoch
    jobs = read_swf(trace).jobs("rlscheduler")
    vals, _ = policy_metric(pol, jobs, info["starts"], LENGTH)
    assert float(np.mean(vals)) == pytest.approx(info["value"], rel=1e-9)
    # the heuristics on the same validation sequences, recomputed with the oracle
    val = json.loads((out / "validation.json").read_text())
    assert val["starts"] == info["starts"] and val["jobs"] == LENGTH and val["seed"] == 2
    from jaxsched.sim import oracle

    for p in ("sjf", "f1"):
        ref = []
        for s in val["starts"]:
            sl = slice(s, s + LENGTH)
            st = oracle.simulate(
                jobs.submit[sl],
                jobs.run[sl],
                jobs.req_time[sl],
                jobs.procs[sl],
                num_nodes=int(jobs.num_nodes),
                procs_per_node=float(jobs.procs_per_node),
                policy=p,
            )
            ref.append(
                oracle.metrics(
                    jobs.submit[sl],
                    jobs.run[sl],
                    jobs.procs[sl],
                    st,
                    num_procs=float(jobs.num_procs),
                    compat=True,
                )["bsld"]
            )
        assert val[p] == pytest.approx(float(np.mean(ref)), rel=1e-12)


def test_resume_continues_bit_for_bit(tmp_path):
    trace = burst_trace(tmp_path / "burst.swf", bursts=30)
    kw = dict(
        metric="bsld",
        backfill="none",
        compat=True,
        length=SHORT,
        ppo=tiny_ppo(n_envs=4, iters=2),  # test_filter's size: the same compiled update
        progress=False,
        compare=False,
        log=lambda s: None,
    )
    train(trace, tmp_path / "straight", 2, **kw)
    train(trace, tmp_path / "split", 1, keep_checkpoints=0, **kw)
    with pytest.raises(Exception, match="already holds a training run"):
        train(trace, tmp_path / "split", 2, **kw)
    train(trace, tmp_path / "split", 2, resume=True, keep_checkpoints=0, **kw)
    # keep_checkpoints=0 kept both epochs' checkpoints, the default only the newest
    assert [load_checkpoint(p).epoch for p in list_checkpoints(tmp_path / "split")] == [1, 2]
    assert len(list_checkpoints(tmp_path / "straight")) == 1
    with pytest.raises(Exception, match="keep-checkpoints must be an integer >= 0"):
        train(trace, tmp_path / "other", 1, keep_checkpoints=-1, **kw)
    a = load_checkpoint(tmp_path / "straight")
    b = load_checkpoint(tmp_path / "split")
    assert a.epoch == b.epoch == 2
    import jax

    la, lb = jax.tree_util.tree_leaves(a.state), jax.tree_util.tree_leaves(b.state)
    assert len(la) == len(lb) > 0
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert len(read_log(tmp_path / "split")) == 2
    # stopped after the last epoch's checkpoint, before its log row: a resume that finds the
    # run at its epochs writes the row from the checkpoint
    import jaxsched.train.loop as loop

    class Killed(BaseException):
        pass

    real = loop.finish_epoch

    def stop(out, spec, state, row, ck, due):
        if row["epoch"] == 2:
            raise Killed
        return real(out, spec, state, row, ck, due)

    loop.finish_epoch = stop
    try:
        with pytest.raises(Killed):
            train(trace, tmp_path / "cut", 2, **kw)
    finally:
        loop.finish_epoch = real
    assert [r["epoch"] for r in read_log(tmp_path / "cut")] == [1]
    train(trace, tmp_path / "cut", 2, resume=True, **kw)
    timing = ("seconds", "first_epoch_s_incl_compile")
    rows = [[{k: v for k, v in r.items() if k not in timing} for r in read_log(tmp_path / d)]
            for d in ("cut", "straight")]  # fmt: skip
    assert rows[0] == rows[1] and len(rows[0]) == 2


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_evaluate_model_and_plot(trained, capsys, tmp_path):
    trace, out = trained
    rc, text, err = _run(
        capsys,
        "evaluate",
        trace,
        "--compat",
        "rlscheduler",
        "--policy",
        "fcfs,sjf",
        "--backfill",
        "none",
        "--jobs",
        LENGTH,
        "--starts",
        ",".join(map(str, TEST_STARTS)),
        "--model",
        out,
        "--json",
    )
    assert rc == 0, err
    rows = json.loads(text)["results"]
    rl = [r["value"] for r in rows if r["policy"] == "rl" and r["metric"] == "bsld"]
    fcfs = [r["value"] for r in rows if r["policy"] == "fcfs" and r["metric"] == "bsld"]
    assert len(rl) == len(fcfs) == len(TEST_STARTS)
    assert np.mean(rl) < 0.5 * np.mean(fcfs)
    # two checkpoints of one run (newest and best): two distinct rows, never merged
    rc, text, err = _run(
        capsys,
        "evaluate",
        trace,
        "--compat",
        "rlscheduler",
        "--policy",
        "fcfs",
        "--backfill",
        "none",
        "--jobs",
        LENGTH,
        "--starts",
        ",".join(map(str, TEST_STARTS)),
        "--model",
        out,
        "--model",
        out / "best.ckpt",
        "--model",
        out,
        "--json",
    )
    assert rc == 0, err
    rows = [r for r in json.loads(text)["results"] if r["metric"] == "bsld"]
    best_epoch = json.loads((out / "best.json").read_text())["epoch"]
    names = sorted({r["policy"] for r in rows} - {"fcfs"})
    if best_epoch == 10:
        assert names == ["rl:run@10#1", "rl:run@10#2", "rl:run@10#3"], names
    else:
        assert names == sorted(["rl:run@10#1", f"rl:run@{best_epoch}", "rl:run@10#3"]), names
    for n in names:
        assert len([r for r in rows if r["policy"] == n]) == len(TEST_STARTS)
    png = tmp_path / "curve.png"
    rc, text, err = _run(capsys, "plot", out, "--out", png)
    assert rc == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_errors_are_one_line(trained, capsys, tmp_path):
    trace, out = trained
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    ck = latest_checkpoint(bad)
    data = bytearray(ck.read_bytes())
    data[-5] ^= 0xFF  # flip a payload byte
    ck.write_bytes(bytes(data))
    for argv, needle in [
        (["evaluate", trace, "--jobs", LENGTH, "--starts", "100", "--model", bad], ck.name),
        (["evaluate", trace, "--jobs", LENGTH, "--starts", "100", "--model", tmp_path], "run.json"),
        (["train", "rlscheduler", trace, "--epochs", "1", "--out", out], "already holds"),
        (
            ["train", "rlscheduler", trace, "--epochs", "1", "--out", tmp_path / "new", "--resume"],
            "nothing to resume",
        ),
        (
            ["train", "rlscheduler", trace, "--epochs", "0", "--out", tmp_path / "x"],
            "positive integer",
        ),
        (
            [
                "train",
                "rlscheduler",
                trace,
                "--epochs",
                "1",
                "--out",
                tmp_path / "y",
                "--validate",
                "-1",
            ],
            "integer >= 0",
        ),
        (
            [
                "train",
                "rlscheduler",
                trace,
                "--epochs",
                "1",
                "--out",
                tmp_path / "k",
                "--keep-checkpoints",
                "-2",
            ],
            "integer >= 0",
        ),
        (
            [
                "train",
                "rlscheduler",
                trace,
                "--epochs",
                "1",
                "--out",
                tmp_path / "z",
                "--validate",
                "1",
                "--val-jobs",
                "5000",
            ],
            "cannot draw sequences of 5000 jobs",
        ),
        (
            [
                "train",
                "rlscheduler",
                trace,
                "--epochs",
                "1",
                "--out",
                tmp_path / "a",
                "--lr-anneal-epochs",
                "-3",
            ],
            "argument --lr-anneal-epochs: expected an integer >= 0",
        ),
        (
            [
                "train",
                "rlscheduler",
                trace,
                "--epochs",
                "1",
                "--out",
                tmp_path / "f",
                "--lr-anneal-epochs",
                "3",
                "--lr-end-fraction",
                "2",
            ],
            "lr_end_fraction must be in",
        ),
        (["plot", tmp_path / "nope"], "log.jsonl"),
    ]:
        rc, _, err = _run(capsys, *argv)
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and lines[0].startswith("jaxsched: error: "), err
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize(
    "name, backfill, epoch, factor",
    [
        ("lublin1-none", "none", SHIPPED_EPOCHS["lublin1-none"], 0.5),
        # the backfilling models: the extended tier (make test-all)
        pytest.param(
            "lublin1-bf",
            "rlscheduler",
            SHIPPED_EPOCHS["lublin1-bf"],
            0.8,
            marks=pytest.mark.extended,
        ),
        pytest.param(
            "lublin1-bf-fast",
            "rlscheduler",
            SHIPPED_EPOCHS["lublin1-bf-fast"],
            0.8,
            marks=pytest.mark.extended,
        ),
    ],
)
def test_shipped_lublin1_model_loads_and_schedules_well(name, backfill, epoch, factor):
    """The committed Lublin-1 checkpoints stay loadable and keep beating FCFS by far on
    the first eight of the paper's test sequences (256 jobs each, to stay quick; two sequences
    were too few: the 5-minute model is worse than FCFS on one of them)."""
    repo = REPO
    pol = load_policy(repo / "jaxsched" / "models" / name)
    assert pol.epoch == epoch and pol.run.metric == "bsld" and pol.run.backfill == backfill
    jobs = read_swf(repo / "traces" / "lublin-1.swf").jobs("rlscheduler")
    starts = [1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762]
    rl, _ = policy_metric(pol, jobs, starts, 256)
    fcfs = evaluate(jobs, starts, 256, ["fcfs"], [backfill], compat=True, metrics=("bsld",)).table(
        "bsld"
    )[("fcfs", backfill)]
    assert np.all(rl >= 1.0) and rl.mean() < factor * fcfs, (rl, fcfs)


@pytest.mark.extended  # a second training run; the fairness observation: tests/envs/test_rlscheduler.py
def test_cli_user_feature_trains_and_evaluates(capsys, tmp_path):
    # the fairness environment's observation (9 features): recorded in run.json, used again
    # by evaluate --model, and the networks' first layer takes 9 inputs
    trace = burst_trace(tmp_path / "burst.swf", bursts=40)
    out = tmp_path / "fair"
    rc, text, err = _run(
        capsys, "train", "rlscheduler", trace, "--compat", "rlscheduler", "--metric",
        "fairness", "--user-feature", "--length", LENGTH, "--epochs", 1, "--trajectories", 4,
        "--pi-iters", 2, "--v-iters", 2, "--no-progress", "--no-compare", "--out", out,
    )  # fmt: skip
    assert rc == 0, err
    run = json.loads((out / "run.json").read_text())
    assert run["user_feature"] is True and run["metric"] == "fairness"
    model = load_policy(out)
    kernels = [x for x in jax.tree_util.tree_leaves(model.params) if x.ndim == 2]
    assert kernels[0].shape[0] == 9
    rc, text, err = _run(
        capsys, "evaluate", trace, "--compat", "rlscheduler", "--metric", "fairness",
        "--backfill", "none", "--policy", "fcfs", "--jobs", LENGTH, "--starts", "100,400",
        "--model", out, "--json",
    )  # fmt: skip
    assert rc == 0, err
    rows = [r for r in json.loads(text)["results"] if r["policy"].startswith("rl")]
    assert {r["metric"] for r in rows} == {"fairness"}
    assert len(rows) == 2 and all(r["value"] >= 1.0 for r in rows)
