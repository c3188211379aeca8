"""``jaxsched train a2c``: a tiny run (1 epoch), resumed to 2 epochs, evaluated with
``--evaluate-only``; the run directory's files; one-line errors; the evaluation's baselines
against the sim's oracle on the same fixed jobsets."""

import json

import numpy as np
import pytest

from jaxsched.cli import main
from jaxsched.sim.datacenter import oracle

TINY = ["--simu-len", "6", "--horizon", "8", "--max-job-len", "6", "--res-slot", "4", "--num-slots", "2",
        "--backlog-size", "3", "--step-cap", "40", "--num-envs", "2", "--n-steps", "3",
        "--updates-per-epoch", "2", "--eval-sequences", "3", "--no-progress"]  # fmt: skip
# (--no-evaluate on the training calls: the evaluation is compiled once, by --evaluate-only)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("a2c") / "run"
    assert main(["train", "a2c", "--out", str(out), "--epochs", "1", "--no-evaluate", *TINY]) == 0
    return out


def test_train_resume_and_evaluate(run_dir, capsys):
    rows = [json.loads(x) for x in (run_dir / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [1] and np.isfinite(rows[0]["loss"])
    run = json.loads((run_dir / "run.json").read_text())
    assert run["system"] == "a2c" and run["simu_len"] == 6
    assert main(["train", "a2c", "--out", str(run_dir), "--epochs", "2", "--resume",
                 "--no-progress", "--no-evaluate"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "resuming" in out and "epoch 2/2" in out
    assert len((run_dir / "log.jsonl").read_text().splitlines()) == 2
    assert not (run_dir / "evaluation.json").exists()
    assert main(["train", "a2c", "--out", str(run_dir), "--evaluate-only"]) == 0
    table = capsys.readouterr().out
    assert "(epoch 2)" in table and "slowdown" in table and "SJF" in table
    assert "3 jobsets of seed 314159" in table and "A2C − SJF" in table
    # fresh jobsets: another seed and count than the run's validation jobsets
    assert main(["train", "a2c", "--out", str(run_dir), "--evaluate-only", "--eval-seed", "7",
                 "--eval-sequences", "4", "--sampled", "--two-level"]) == 0  # fmt: skip
    table = capsys.readouterr().out
    assert "4 jobsets of seed 7" in table and "A2C − Tetris" in table
    assert "A2C sampled − SJF" in table and "slowdown_all" in table
    assert "A2C two-level − SJF" in table


def test_resume_keeps_the_runs_checkpoints_and_validation(tmp_path):
    # a resume without --keep-checkpoints 0 / --validate-every used to delete the kept
    # checkpoints and stop validating; the run's own settings now come from DIR/flags.json
    out = tmp_path / "run"
    first = ["train", "a2c", "--out", str(out), "--no-evaluate", *TINY]
    assert main([*first, "--epochs", "1", "--keep-checkpoints", "0", "--validate-every", "1"]) == 0
    assert main(["train", "a2c", "--out", str(out), "--epochs", "3", "--resume", "--no-progress",
                 "--no-evaluate"]) == 0  # fmt: skip
    assert sorted(p.name for p in out.glob("checkpoint_*.ckpt")) == [
        f"checkpoint_0000000{e}.ckpt" for e in (1, 2, 3)
    ]
    rows = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert [("eval_slowdown" in r) for r in rows] == [True, True, True]
    flags = json.loads((out / "flags.json").read_text())
    assert (flags["keep_checkpoints"], flags["validate_every"]) == (0, 1)


def test_unfinished_jobs_count_in_slowdown_all(run_dir):
    """A policy that never allocates: no finished job (slowdown NaN), and slowdown_all counts
    every job as started when the episode ended, as the oracle's episode gives it."""
    import jax.numpy as jnp

    from jaxsched.systems.a2cscheduler import evaluate as ev
    from jaxsched.systems.a2cscheduler.run import load_model

    env = load_model(run_dir).env
    n_act = env.params.num_slots + 1

    def always_void(params, image, mask):
        return jnp.where(jnp.arange(n_act) == n_act - 1, 0.0, -1e9)

    m = ev.policy_metrics(env, always_void, None, 3)
    lens, dems = ev._jobsets(env, 3)
    for k in range(3):
        ep = oracle.episode(env.params, np.asarray(lens[k]), np.asarray(dems[k]).tolist(),
                            lambda o: n_act - 1)  # fmt: skip
        assert all(f < 0 for _, _, f, _, _ in ep["jobs"]) and ep["jobs"]
        want = np.mean([(ep["final_time"] + ln - a) / ln for a, _, _, ln, _ in ep["jobs"]])
        assert np.isnan(m["slowdown"][k]) and m["unfinished"][k] == len(ep["jobs"])
        assert abs(m["slowdown_all"][k] - want) < 1e-12


def test_paired_differences_by_hand():
    from jaxsched.systems.a2cscheduler import evaluate as ev

    rows = {b: {"slowdown": np.array([2.0, 4.0, np.nan])} for b in ev.BASELINES}
    rows["SJF"] = {"slowdown": np.array([1.0, 1.0, 1.0])}
    rows["A2C"] = {"slowdown": np.array([1.5, 2.0, 3.0])}
    d = ev.paired(rows)
    assert d["SJF"][0] == pytest.approx(3.5 / 3)  # (0.5 + 1 + 2) / 3
    assert d["SJF"][1] == pytest.approx(np.std([0.5, 1.0, 2.0], ddof=1) / np.sqrt(3))
    assert d["Tetris"] == pytest.approx((-1.25, 0.75))  # the NaN sequence is left out
    assert "A2C − SJF" in ev.format_paired(d) and "+1.167 ± " in ev.format_paired(d)


def test_baselines_match_the_oracle_on_the_fixed_jobsets(run_dir):
    from jaxsched.systems.a2cscheduler import evaluate as ev
    from jaxsched.systems.a2cscheduler.run import load_model

    env = load_model(run_dir).env
    lens, dems = ev._jobsets(env, 3)
    got = ev.baseline_metrics(env, list(ev.BASELINES.values()), 3)[3]["slowdown"]  # SJF
    sjf = oracle.greedy(lambda o, e: 1.0 / o.lens[e])
    for k in range(3):
        ep = oracle.episode(env.params, np.asarray(lens[k]), np.asarray(dems[k]).tolist(), sjf)
        sd = [(f - a) / ln for a, _, f, ln, _ in ep["jobs"] if f >= 0]
        assert abs(np.mean(sd) - got[k]) < 1e-12


def test_errors_are_one_line(run_dir, capsys, tmp_path):
    assert main(["train", "a2c", "--out", str(run_dir), "--epochs", "3"]) == 2  # no --resume
    assert main(["train", "a2c", "--out", str(tmp_path / "x"), "--rate", "1.5",
                 "--epochs", "1"]) == 2  # fmt: skip
    assert main(["train", "a2c", "--out", str(tmp_path / "y")]) == 2  # no --epochs
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(x.startswith("jaxsched: error: ") for x in err), err
    assert "--rate must be in (0, 1]" in err[1]


def test_decode_action_by_hand():
    import jax
    import jax.numpy as jnp

    from jaxsched.systems.a2cscheduler.evaluate import decode_action

    key = jax.random.PRNGKey(0)
    # void (last) is the single most probable action, but the three jobs together are likelier
    split = jnp.log(jnp.array([0.25, 0.2, 0.2, 0.35]))
    assert int(decode_action(split, key, "greedy")) == 3
    assert int(decode_action(split, key, "two_level")) == 0
    # void at least as probable as all jobs together: void; a job the most probable: that job
    assert int(decode_action(jnp.log(jnp.array([0.3, 0.2, 0.5])), key, "two_level")) == 2
    assert int(decode_action(jnp.log(jnp.array([0.6, 0.1, 0.3])), key, "two_level")) == 0
    masked = jnp.array([-1e9, 0.0, -1e9, jnp.log(0.9)])  # one placeable job (p 0.53)
    assert int(decode_action(masked, key, "two_level")) == 1
    draws = jax.vmap(lambda k: decode_action(split, k, "sampled"))(jax.random.split(key, 4000))
    freq = np.bincount(np.asarray(draws), minlength=4) / 4000
    assert np.allclose(freq, [0.25, 0.2, 0.2, 0.35], atol=0.03)
    with pytest.raises(ValueError, match="decode must be one of"):
        decode_action(split, key, "beam")


def test_two_level_decoding_allocates_where_greedy_voids_for_ever(run_dir):
    """An actor whose void is the single most probable action as soon as two jobs can be
    placed (void 0.8·k against 1 for each of the k placeable jobs), though allocating is then
    likelier: greedy leaves jobs unallocated for ever, two-level allocates every job."""
    import dataclasses

    import jax.numpy as jnp

    from jaxsched.systems.a2cscheduler import evaluate as ev
    from jaxsched.systems.a2cscheduler.run import load_model

    env = dataclasses.replace(load_model(run_dir).env, mask_invalid=True)
    n_act = env.params.num_slots + 1

    def split_actor(params, image, mask):
        k = jnp.sum(mask[:-1])
        logits = jnp.where(jnp.arange(n_act) == n_act - 1, jnp.log(0.8 * jnp.maximum(k, 1)), 0.0)
        return jnp.where(mask, logits, -1e9)

    greedy = ev.policy_metrics(env, split_actor, None, 3, decode="greedy")
    two = ev.policy_metrics(env, split_actor, None, 3, decode="two_level")
    assert np.sum(greedy["unfinished"]) > 0
    assert np.all(two["unfinished"] == 0) and np.all(np.isfinite(two["slowdown"]))


def test_no_idle_void_flag_reaches_the_environment(tmp_path):
    from jaxsched.systems.a2cscheduler.run import load_model

    out = tmp_path / "run"
    argv = ["train", "a2c", "--out", str(out), "--epochs", "1", "--no-evaluate", "--mask"]
    assert main([*argv, "--no-idle-void", *TINY]) == 0
    assert json.loads((out / "run.json").read_text())["no_idle_void"] is True
    assert load_model(out).env.no_idle_void and load_model(out).env.mask_invalid


def test_pg_on_trace_slices(tmp_path, capsys):
    """DeepRM's policy gradient (``--algorithm pg``) on slices of a tiny SWF trace with
    memory: 20 jobs in slices of 2 (6 to train, 1 to validate, 3 to test); the log counts
    the environment steps; ``--evaluate-only --trace-eval test`` and ``jaxsched evaluate TRACE --model DIR`` name the
    test part."""
    lines = ["; MaxProcs: 8"]
    for i in range(20):
        f = [i + 1, 30 * i, 0, 5 + 7 * (i % 3), 1 + i % 8, -1, 100 * (1 + i % 5), -1, -1, 500]
        lines.append(" ".join(str(x) for x in f + [1] * 6 + [-1, -1]))
    swf = tmp_path / "mem.swf"
    swf.write_text("\n".join(lines) + "\n")
    out = tmp_path / "pg"
    flags = ["--trace", str(swf), "--trace-jobs", "2", "--trace-unit", "10", "--algorithm", "pg",
             "--pg-trajectories", "2"]  # fmt: skip
    assert main(["train", "a2c", "--out", str(out), "--epochs", "1", "--no-evaluate",
                 "--keep-checkpoints", "0", *TINY, *flags]) == 0  # fmt: skip
    row = json.loads((out / "log.jsonl").read_text())
    assert 0 < row["steps"] <= 2 * 2 * 40 and row["episodes"] >= 1
    assert "critic" not in json.dumps(row)
    assert main(["train", "a2c", "--out", str(out), "--evaluate-only", "--trace-eval", "test"]) == 0
    text = capsys.readouterr().out
    assert f"3 jobsets of the test part of {swf}" in text and "A2C − SJF" in text
    # jaxsched evaluate TRACE --model DIR: the same test slices, through the report hook
    assert main(["evaluate", str(swf), "--model", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"3 jobsets of the test part of {swf}" in text and "10 slices of 2 jobs" in text
    # the training trace gone (another machine): the model still loads, for another trace
    moved = swf.rename(tmp_path / "moved.swf")
    assert main(["evaluate", str(moved), "--model", str(out)]) == 0
    assert f"3 jobsets of the test part of {moved}" in capsys.readouterr().out
    assert main(["train", "a2c", "--out", str(tmp_path / "x"), "--algorithm", "pg",
                 "--num-envs", "3", "--pg-trajectories", "2", "--epochs", "1"]) == 2  # fmt: skip
    assert main(["train", "a2c", "--out", str(tmp_path / "y"), "--trace", str(tmp_path / "no.swf"),
                 "--epochs", "1"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "multiple of --pg-trajectories" in err[0], err
    assert "no.swf" in err[1] and "jaxsched: error: " in err[1], err


def test_export_actor_evaluates_the_same(run_dir, tmp_path):
    """The exported actor-only model loads as the run's own newest checkpoint does and gives
    the same greedy slowdown on the same jobsets, in a smaller file."""
    from jaxsched.systems.a2cscheduler import evaluate as ev
    from jaxsched.systems.a2cscheduler.run import export_actor, load_model

    ck = export_actor(run_dir, tmp_path / "shipped")
    full, small = load_model(run_dir), load_model(tmp_path / "shipped")
    assert small.epoch == full.epoch and ck.stat().st_size < full.path.stat().st_size / 2
    assert (tmp_path / "shipped" / "run.json").read_text() == (run_dir / "run.json").read_text()
    a = ev.policy_metrics(full.env, full.actor_apply, full.params, 3)["slowdown"]
    b = ev.policy_metrics(small.env, small.actor_apply, small.params, 3)["slowdown"]
    np.testing.assert_array_equal(a, b)
