"""``jaxsched train splitwindow``: one tiny update with validation, the run directory, the
--resume guard and the model loader (tiny trace, tiny nets, 5-placement episodes)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from jaxsched.cli import main
from jaxsched.systems import get


def _trace(path):
    rng = np.random.RandomState(1)
    sub = np.cumsum(rng.choice([0, 5, 10], size=60))
    lines = ["; MaxNodes: 8", "; MaxProcs: 8"]
    for i in range(60):
        c, r = rng.choice([1, 2, 4, 8]), rng.choice([5, 20, 60])
        lines.append(f"{i + 1} {sub[i]} 0 {r} {c} -1 -1 {c} -1 -1 1 1 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_train_one_update_validate_resume(tmp_path, capsys):
    trace = _trace(tmp_path / "t.swf")
    out = tmp_path / "run"
    argv = [str(trace), "--head", "2", "--tail", "1", "--placements", "5", "--envs", "2",
            "--steps", "40", "--minibatch", "16", "--ppo-epochs", "2", "--hidden", "8",
            "--val-episodes", "2", "--validate", "1", "--out", str(out), "--no-progress",
            "--target-kl", "0.02"]  # fmt: skip
    assert main(["train", "splitwindow", *argv, "--epochs", "1"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert (run["system"], run["head"], run["tail"], run["ppo"]["minibatch_size"]) == (
        "splitwindow", 2, 1, 16,
    )  # fmt: skip
    assert run["ppo"]["target_kl"] == 0.02 and run["ppo"]["train_pi_iters"] == 2
    assert run["trace_sha256"] == hashlib.sha256(trace.read_bytes()).hexdigest()
    (row,) = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert row["episodes"] == 2 and row["steps"] >= 10  # 2 complete episodes of >= 5 picks
    assert 1 <= row["pi_iters"] <= 2 * 5  # minibatch steps taken (2 passes of <= 80 / 16)
    assert 0 < row["val_util"] <= 1 and row["val_avg_wait"] >= 0
    assert json.loads((out / "best.json").read_text())["epoch"] == 1
    capsys.readouterr()
    # a second run into the same directory needs --resume (the resume itself is the loop's)
    assert main(["train", "splitwindow", *argv, "--epochs", "1"]) == 2
    assert "--resume" in capsys.readouterr().err
    model = get("splitwindow").load_model(out)
    assert model.epoch == 1 and model.run.head == 2
    png = tmp_path / "curve.png"
    assert main(["plot", str(out), "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG" and str(png) in capsys.readouterr().out
    # jaxsched evaluate TRACE --model DIR: the model beside FCFS and SJF with EASY, paired
    assert main(["evaluate", str(trace), "--model", str(out)]) == 0
    text = capsys.readouterr().out
    means = {}
    for line in text.splitlines():
        for name in ("DBF 2-1 (epoch 1)", "fcfs + easy", "sjf + easy", "- fcfs + easy"):
            if line.startswith(name):
                means[name] = [float(c.split(" ± ")[0].replace(",", ""))
                               for c in line[len(name):].split("  ") if " ± " in c]  # fmt: skip
    assert len(means) == 4 and all(len(v) == 3 for v in means.values())
    for got, a, b in zip(means["- fcfs + easy"], means["DBF 2-1 (epoch 1)"], means["fcfs + easy"]):
        assert abs(got - (a - b)) <= 0.011  # the paired mean is the difference of the means
    assert main(["evaluate", str(trace), "--model", str(out), "--sample"]) == 2
    assert "greedily" in capsys.readouterr().err
    # --sequences and --seed reach the report: K episodes drawn with seed S (default 20, 1)
    assert f"{trace}: 20 episodes of " in text and "(seed 1)" in text
    assert (
        main(["evaluate", str(trace), "--model", str(out), "--sequences", "3", "--seed", "5"]) == 0
    )
    given = capsys.readouterr().out
    assert f"{trace}: 3 episodes of " in given and "(seed 5)" in given


def test_resume_takes_the_runs_window_and_validation(tmp_path, capsys):
    trace = _trace(tmp_path / "t.swf")
    out = tmp_path / "run"
    common = [str(trace), "--out", str(out), "--no-progress"]
    small = ["--placements", "5", "--envs", "2", "--steps", "40", "--minibatch", "16",
             "--ppo-epochs", "1", "--hidden", "8", "--val-episodes", "2"]  # fmt: skip
    assert main(["train", "splitwindow", *common, *small, "--epochs", "1"]) == 2
    assert "--head M_H is required" in capsys.readouterr().err
    assert not out.exists()
    new = ["train", "splitwindow", *common, *small, "--head", "2", "--tail", "1"]
    assert main([*new, "--validate", "1", "--epochs", "1"]) == 0
    # --resume alone: the run's window and its validation every epoch go on
    assert main(["train", "splitwindow", *common, "--resume", "--epochs", "2"]) == 0
    rows = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2] and all("val_avg_wait" in r for r in rows)
    assert json.loads((out / "flags.json").read_text())["validate"] == 1
    capsys.readouterr()
    for flag in (["--head", "3"], ["--tail", "0"]):
        assert main(["train", "splitwindow", *common, "--resume", "--epochs", "3", *flag]) == 2
        err = capsys.readouterr().err
        assert "the run's window is 2-1" in err and flag[0] in err
    # the same window given again is accepted; --validate 0 stops validating
    resume = ["train", "splitwindow", *common, "--resume", "--head", "2", "--tail", "1"]
    assert main([*resume, "--epochs", "3", "--validate", "0"]) == 0
    rows = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and "val_avg_wait" not in rows[-1]
    assert main(["train", "splitwindow", str(trace), "--out", str(tmp_path / "no"), "--resume",
                 "--epochs", "1"]) == 2  # fmt: skip
    assert "nothing to resume" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "run.json").write_text("{")
    assert main(["train", "splitwindow", str(trace), "--out", str(bad), "--resume", "--epochs",
                 "1"]) == 2  # fmt: skip
    assert "run.json: not valid JSON" in capsys.readouterr().err


def test_export_policy_keeps_the_actor_alone(tmp_path):
    import jax
    import pytest

    from jaxsched.errors import CheckpointError, ConfigError
    from jaxsched.systems.splitwindow.run import check_obs_dim, export_policy, load_model, make_env
    from jaxsched.workload import read_swf

    trace = _trace(tmp_path / "t.swf")
    out = tmp_path / "run"
    argv = [str(trace), "--head", "2", "--tail", "1", "--placements", "5", "--envs", "2",
            "--steps", "40", "--minibatch", "16", "--ppo-epochs", "1", "--hidden", "8",
            "--out", str(out), "--no-progress", "--epochs", "1", "--mask"]  # fmt: skip
    assert main(["train", "splitwindow", *argv]) == 0
    full = load_model(out)
    ck = export_policy(out, tmp_path / "slim")
    assert ck.name == "checkpoint_00000001.ckpt"
    assert ck.stat().st_size < full.path.stat().st_size / 4  # no critic, no Adam moments
    trace.unlink()  # a policy-only model loads without its training trace
    slim = load_model(tmp_path / "slim")
    assert slim.epoch == 1 and slim.run.mask and slim.path == ck
    same = jax.tree_util.tree_map(lambda a, b: bool((a == b).all()), full.params, slim.params)
    assert all(jax.tree_util.tree_leaves(same))
    # an actor against a run.json of another window is refused in one line
    run = json.loads((tmp_path / "slim" / "run.json").read_text())
    (tmp_path / "slim" / "run.json").write_text(json.dumps({**run, "tail": 2}))
    with pytest.raises(CheckpointError, match="do not fit run.json's window 2-2"):
        load_model(tmp_path / "slim")
    # and an environment with another observation size before any JAX shape error
    jobs = read_swf(_trace(tmp_path / "t2.swf")).jobs("rlscheduler")
    with pytest.raises(ConfigError, match="reads observations of 17 values, this trace"):
        check_obs_dim(slim, make_env(jobs, slim.run.__class__(**{**vars(slim.run), "tail": 2})))


def test_seed_sweep_equals_single_seed_runs(tmp_path, capsys):
    import jax
    import numpy as np

    from jaxsched.systems.splitwindow.run import load_model

    trace = _trace(tmp_path / "t.swf")
    argv = [str(trace), "--head", "2", "--tail", "1", "--placements", "5", "--envs", "2",
            "--steps", "40", "--minibatch", "16", "--ppo-epochs", "2", "--hidden", "8",
            "--val-episodes", "2", "--validate", "1", "--no-progress", "--mask",
            "--epochs", "2"]  # fmt: skip
    assert (
        main(["train", "splitwindow", *argv, "--seeds", "0,3", "--out", str(tmp_path / "sw")]) == 0
    )
    assert main(["train", "splitwindow", *argv, "--seed", "3", "--out", str(tmp_path / "one")]) == 0
    seed3 = tmp_path / "sw" / "seed-3"
    assert json.loads((seed3 / "run.json").read_text())["seed"] == 3
    rows = [json.loads(x) for x in (seed3 / "log.jsonl").read_text().splitlines()]
    one = [json.loads(x) for x in (tmp_path / "one" / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1, 2] and rows[0]["sweep_seeds"] == 2
    # seed 3 of the sweep trains what --seed 3 alone does (up to float rounding)
    assert rows[-1]["episode_return"] == one[-1]["episode_return"]
    a, b = load_model(seed3).params, load_model(tmp_path / "one").params
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-4, atol=1e-6)
    assert (seed3 / "best.json").is_file() and (tmp_path / "sw" / "seed-0" / "best.ckpt").is_file()
    capsys.readouterr()
    # resuming the whole sweep at its epoch: nothing to do
    sweep = ["train", "splitwindow", *argv, "--seeds", "0,3", "--out", str(tmp_path / "sw")]
    assert main([*sweep, "--resume"]) == 0
    assert "already trained for 2 epochs" in capsys.readouterr().out
    assert (
        main(["train", "splitwindow", *argv, "--seeds", "0,0", "--out", str(tmp_path / "x")]) == 2
    )
    assert "a seed is repeated" in capsys.readouterr().err


def test_reward_weights_and_the_utilisation_bound_on_best(tmp_path, capsys):
    from jaxsched.envs.splitwindow_baselines import run_baselines
    from jaxsched.systems.splitwindow.run import eval_starts, make_env

    trace = _trace(tmp_path / "t.swf")
    small = [str(trace), "--head", "2", "--tail", "1", "--placements", "5", "--envs", "2",
             "--steps", "40", "--minibatch", "16", "--ppo-epochs", "1", "--hidden", "8",
             "--val-episodes", "3", "--no-progress", "--epochs", "1"]  # fmt: skip
    for bad, why in ((["--weights", "1,0"], "three comma-separated numbers"),
                     (["--weights", "0.5,2,0"], "numbers in [0, 1]"),
                     (["--max-util-loss", "1"], "needs --validate K")):  # fmt: skip
        assert main(["train", "splitwindow", *small, *bad, "--out", str(tmp_path / "x")]) == 2
        assert why in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    out = {}
    for name, loss in (("any", "100"), ("tight", "0")):
        out[name] = tmp_path / name
        argv = [*small, "--weights", "1,0,0", "--validate", "1", "--max-util-loss", loss]
        assert main(["train", "splitwindow", *argv, "--out", str(out[name])]) == 0
    model = get("splitwindow").load_model(out["any"])
    assert model.run.weights == (1.0, 0.0, 0.0) and model.run.max_util_loss == 100
    env = make_env(read_jobs(trace), model.run)
    assert env.cfg.weights == (1.0, 0.0, 0.0)
    ref = float(np.mean(run_baselines(env, eval_starts(env, 3, 1), ("fcfs",), ("easy",))["util"]))
    (row,) = [json.loads(x) for x in (out["any"] / "log.jsonl").read_text().splitlines()]
    assert row["val_util_fcfs_easy"] == ref
    assert json.loads((out["any"] / "best.json").read_text())["val_util_fcfs_easy"] == ref
    # with P = 0 the one validation counts only if it ran at least FCFS + EASY's utilisation
    assert (out["tight"] / "best.json").exists() == (row["val_util"] >= ref)


def read_jobs(trace):
    from jaxsched.workload import read_swf

    return read_swf(trace).jobs("rlscheduler")


def test_a_queue_capacity_that_overflows_stops_training(tmp_path, capsys):
    # every episode of a 2-slot queue overflows: training on the cut episodes would learn
    # another problem, so the run stops at its first epoch with one line naming the flag
    trace = _trace(tmp_path / "t.swf")
    out = tmp_path / "run"
    argv = [str(trace), "--head", "2", "--tail", "1", "--placements", "5", "--envs", "2",
            "--steps", "40", "--minibatch", "16", "--ppo-epochs", "1", "--hidden", "8",
            "--queue-cap", "2", "--out", str(out), "--no-progress", "--epochs", "1"]  # fmt: skip
    assert main(["train", "splitwindow", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "more than 2 queued jobs" in err and "--queue-cap" in err, err
    assert (out / "log.jsonl").read_text() == ""  # nothing of the cut epoch was kept
    assert not list(out.glob("checkpoint_*.ckpt"))


def test_a_run_stopped_after_its_checkpoint_resumes_to_the_same_files(tmp_path, monkeypatch):
    # the settings of test_resume_takes_the_runs_window_and_validation (its compiled
    # programs); epoch 2 is stopped after its checkpoint, before its validation and log row
    import jax

    import jaxsched.train.loop as loop
    from jaxsched.train.checkpoint import load_checkpoint

    trace = _trace(tmp_path / "t.swf")
    small = ["--placements", "5", "--envs", "2", "--steps", "40", "--minibatch", "16",
             "--ppo-epochs", "1", "--hidden", "8", "--val-episodes", "2", "--head", "2",
             "--tail", "1", "--validate", "1", "--no-progress"]  # fmt: skip

    def files(out):
        rows = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
        rows = [{k: v for k, v in r.items() if k not in ("seconds", "first_epoch_s_incl_compile")}
                for r in rows]  # fmt: skip
        best = load_checkpoint(out / "best.ckpt")
        leaves = [np.asarray(x).tolist() for x in jax.tree_util.tree_leaves(best.state)]
        return rows, json.loads((out / "best.json").read_text()), best.epoch, leaves

    ref, cut = tmp_path / "ref", tmp_path / "cut"
    assert (
        main(["train", "splitwindow", str(trace), "--out", str(ref), *small, "--epochs", "2"]) == 0
    )

    class Killed(BaseException):
        pass

    real = loop.finish_epoch

    def stop(out, spec, state, row, ck, due):
        if row["epoch"] == 2:
            raise Killed
        return real(out, spec, state, row, ck, due)

    with monkeypatch.context() as m:
        m.setattr(loop, "finish_epoch", stop)
        with pytest.raises(Killed):
            main(["train", "splitwindow", str(trace), "--out", str(cut), *small, "--epochs", "2"])
    assert len((cut / "log.jsonl").read_text().splitlines()) == 1
    resume = ["train", "splitwindow", str(trace), "--out", str(cut), "--resume", "--epochs", "2"]
    assert main([*resume, "--no-progress"]) == 0
    got, want = files(cut), files(ref)
    assert [r["epoch"] for r in got[0]] == [1, 2]
    assert got == want  # rows (validation included), best.json, best.ckpt's epoch and state
