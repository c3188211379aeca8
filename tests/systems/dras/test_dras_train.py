"""``jaxsched train dras`` end to end on a tiny four-month trace (N = 8): two epochs straight
and one + --resume agree bit for bit; the batches respect the 10-instance cadence; the run
directory loads for ``evaluate --model`` (its schedule checked against a numpy recount); bad
flags and settings fail with one line."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest

from jaxsched import systems
from jaxsched.cli import main as jaxsched_main
from jaxsched.errors import ConfigError
from jaxsched.systems.dras.config import RunConfig, env_jobs, epoch_jobsets, load_split
from jaxsched.train.checkpoint import load_checkpoint

DAY = 86400


def _trace(tmp_path):
    rng = np.random.default_rng(0)
    n = 120
    sub = np.sort(rng.integers(0, 120 * DAY, n))
    lines = ["; MaxProcs: 8", "; MaxNodes: 8"]
    for i in range(n):
        run = int(rng.integers(600, 40000))
        req, p = run + int(rng.integers(0, 20000)), int(rng.integers(1, 9))
        lines.append(f"{i + 1} {sub[i]} 0 {run} {p} -1 -1 {p} {req} -1 1 1 1 1 1 -1 -1 -1")
    path = tmp_path / "tiny.swf"
    path.write_text("\n".join(lines) + "\n")
    return path


ARGS = ["--hidden", "8,8", "--envs", "2", "--jobs-per-set", "12", "--capacity", "16",
        "--curriculum", "1,1,1", "--no-progress", "--input-norm"]  # fmt: skip


def straight_and_resumed(tmp, args):
    """``jaxsched train dras`` on the tiny trace: 2 epochs in DIR a, and 1 epoch then
    ``--resume`` to 2 in DIR b; returns (trace, a, b)."""
    trace = _trace(tmp)
    a, b = tmp / "a", tmp / "b"
    base = ["train", "dras", str(trace)] + args
    assert jaxsched_main(base + ["--out", str(a), "--epochs", "2"]) == 0
    assert jaxsched_main(base + ["--out", str(b), "--epochs", "1"]) == 0
    assert jaxsched_main(base + ["--out", str(b), "--epochs", "2", "--resume"]) == 0
    return trace, a, b


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return straight_and_resumed(tmp_path_factory.mktemp("dras"), ARGS)


def _log(out):
    return [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]


def test_resume_is_bit_for_bit(runs):
    _, a, b = runs
    sa, sb = load_checkpoint(a).state, load_checkpoint(b).state
    la, lb = jax.tree_util.tree_leaves(sa), jax.tree_util.tree_leaves(sb)
    assert len(la) == len(lb) > 4
    assert all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))
    keys = ("reward", "decisions", "updates", "avg_wait", "val_reward", "val_wait")
    assert [{k: r[k] for k in keys} for r in _log(a)] == [{k: r[k] for k in keys} for r in _log(b)]


def test_run_directory_and_cadence(runs):
    trace, a, _ = runs
    rj = json.loads((a / "run.json").read_text())
    assert rj["system"] == "dras" and rj["hidden"] == [8, 8] and rj["jobs_per_set"] == 12
    assert rj["norm_scales"][0] == 8.0 and systems.system_of_run(a).name == "dras"
    for r in _log(a):
        # every decision of a batch lies within 10 scheduling instances; no early flush at C=16
        assert 0 <= r["max_batch_span"] <= 9 and r["early_flushes"] == 0
        assert r["updates"] * 10 >= r["passes"] and r["decisions"] >= 12
        assert np.isfinite(r["val_wait"]) and (a / "best.ckpt").is_file()


def test_jobsets_have_equal_length(runs):
    trace, *_ = runs
    rc = RunConfig(trace=str(trace), envs=3, jobs_per_set=12, n_sampled=1, n_real=1, n_synthetic=1)
    split = load_split(str(trace))
    sets = epoch_jobsets(rc, split.train, 1)
    assert [j.n_jobs for j in sets] == [12, 12, 12]
    real = sets[1]  # curriculum index 1: 12 consecutive training jobs from a week's first job
    i = int(np.searchsorted(split.train.submit, real.submit[0]))
    assert np.array_equal(split.train.run[i : i + 12], real.run)
    import dataclasses

    for a, b in zip(sets, epoch_jobsets(dataclasses.replace(rc, load=2.0), split.train, 1)):
        assert np.array_equal(b.submit, np.round((a.submit - a.submit[0]) / 2))  # rate x 2
        assert np.array_equal(a.run, b.run) and b.submit.dtype == a.submit.dtype


def test_model_loads_and_schedules(runs):
    trace, a, _ = runs
    system, model = systems.load_model(a)
    assert system.name == "dras" and model.epoch == 2
    from jaxsched.sim import oracle
    from jaxsched.systems.dras.evaluate import run_model

    # the validation month's shape: the rollout compiled by the training run's validation
    jobs = load_split(str(trace)).val
    n = jobs.n_jobs
    rows = system.model_rows(model, jobs, [0], n, ["none", "easy"], ["wait", "bsld"], False)
    assert {(r["start"], r["metric"], r["backfill"]) for r in rows} == {
        (0, m, b) for m in ("wait", "bsld") for b in ("none", "easy")
    }
    cj = env_jobs(jobs.window(0, n))
    r = run_model(model.run, model.params, cj)
    st = r["start"]
    assert (st >= cj.submit).all()  # nobody starts before it arrives
    # capacity: at every start time the running jobs fit on the 8 nodes (numpy recount)
    end = st + cj.run
    for t in st:
        assert cj.nodes[(st <= t) & (end > t)].sum() <= 8
    want = oracle.metrics(cj.submit, cj.run, cj.nodes, st, num_procs=8.0, compat=False)["wait"]
    got = [x["value"] for x in rows if x["metric"] == "wait"][0]
    assert got == pytest.approx(float(want)) and want == pytest.approx(r["avg_wait"])
    assert r["avg_wait"] == pytest.approx(_log(a)[-1]["val_wait"])  # = the logged validation
    assert r["max_wait"] == _log(a)[-1]["val_max_wait"] == np.max(st - cj.submit)


def test_keep_checkpoints_and_resume_keeps_the_setting(runs, tmp_path):
    trace, a, _ = runs
    assert sorted(p.name for p in a.glob("checkpoint_*")) == ["checkpoint_00000002.ckpt"]
    base = ["train", "dras", str(trace), *ARGS, "--out", str(tmp_path / "k")]
    assert jaxsched_main(base + ["--epochs", "1", "--keep-checkpoints", "0"]) == 0
    assert jaxsched_main(base + ["--epochs", "2", "--resume"]) == 0  # the run's own setting
    kept = sorted(p.name for p in (tmp_path / "k").glob("checkpoint_*"))
    assert kept == ["checkpoint_00000001.ckpt", "checkpoint_00000002.ckpt"]
    assert json.loads((tmp_path / "k" / "run.json").read_text())["keep_checkpoints"] == 0
    assert "keep_checkpoints" not in json.loads((a / "run.json").read_text())  # unset: left out


@pytest.mark.parametrize(
    "argv, text",
    [
        (["--hidden", "0,3"], "two positive sizes"),
        (["--update", "often"], "invalid choice"),
        (["--curriculum", "1,1"], "three counts"),
        (["--reward", "wait"], "invalid choice"),
        (["--variant", "dql", "--loop", "immediate"], "the immediate loop (Decima-PG) is pg only"),
    ],
)
def test_bad_flags_one_line(runs, tmp_path, capsys, argv, text):
    trace, *_ = runs
    rc = jaxsched_main(
        ["train", "dras", str(trace), "--epochs", "1", "--out", str(tmp_path / "x")] + argv
    )
    err = capsys.readouterr().err.strip()
    assert rc != 0 and text in err and len(err.splitlines()) == 1


def test_bad_settings_one_line(runs, tmp_path, capsys):
    trace, a, _ = runs
    with pytest.raises(ConfigError, match="variant must be pg or dql"):
        RunConfig(trace=str(trace), variant="a2c")
    # training into an existing run without --resume: one line, exit status != 0
    rc = jaxsched_main(["train", "dras", str(trace), "--epochs", "1", "--out", str(a)] + ARGS)
    err = capsys.readouterr().err.strip()
    assert rc != 0 and "already holds a training run" in err and len(err.splitlines()) == 1


def test_shipped_model_loads():
    from shared_data import REPO

    system, model = systems.load_model(REPO / "jaxsched" / "models" / "dras-sdsc-pg")
    assert system.name == "dras" and model.run.input_norm and model.run.hidden == (256, 64)
    assert model.params["params"]["fc1"]["kernel"].shape == (2 * 50 + 128, 256)
    # the paper-loop model: the code's PG rules in the paper's loop, on the capacity reward
    system, model = systems.load_model("dras-sdsc-pg-paperloop")
    rc = model.run
    assert system.name == "dras" and model.epoch == 14 and rc.mode == "code" and rc.lr == 0.001
    assert (rc.loop_name, rc.reward_name, rc.online_test) == ("paper", "capacity", True)
    # DQL with the PG code loop's persistent reservation (in neither DQL source)
    system, model = systems.load_model("dras-sdsc-dql-persistent")
    rc = model.run
    assert model.epoch == 5 and (rc.variant, rc.loop_name, rc.reward_name) == (
        "dql",
        "persistent",
        "code",
    )
    # the Decima-PG baseline: the PG network in the immediate loop
    system, model = systems.load_model("dras-sdsc-decima-pg")
    assert model.epoch == 2 and (model.run.variant, model.run.loop_name) == ("pg", "immediate")
    # LANL-CM5 (capability-like): Eq. 1 with the priority flag above 20 % of N = 1,024
    system, model = systems.load_model("dras-lanl-pg-paperloop")
    rc = model.run
    assert model.epoch == 14 and (rc.loop_name, rc.reward_name, rc.priority) == (
        "paper",
        "capability",
        0.2,
    )
    assert model.params["params"]["fc1"]["kernel"].shape == (2 * 50 + 1024, 256)
    system, model = systems.load_model("dras-lanl-decima-pg")
    assert model.epoch == 1 and (model.run.loop_name, model.run.reward_name) == (
        "immediate",
        "capability",
    )
    system, model = systems.load_model("dras-lanl-dql-persistent")
    assert model.epoch == 2 and (model.run.loop_name, model.run.priority) == ("persistent", 0.2)
    system, model = systems.load_model("dras-lanl-dql-paperloop")
    rc = model.run
    assert model.epoch == 1 and rc.seed == 2 and (rc.variant, rc.loop_name) == ("dql", "paper")
    assert (rc.reward_name, rc.priority, rc.dql_config().sign) == ("code", 0.2, "code")


def test_online_adaptation_on_and_off(runs):
    """PG's online adaptation in test runs (spec §2.5, §12.9): on by default in code mode; with
    the updates switched off the same compiled run is the fixed policy's schedule; on, the
    updates change the schedule (jobs compete: the validation month's submits / 100)."""
    import dataclasses

    from jaxsched.systems.dras.evaluate import _rollout_fn, make_env, make_policy, run_model

    trace, a, _ = runs
    _, model = systems.load_model(a)
    rc = model.run
    assert rc.online is None and rc.online_test  # code mode: on
    assert not dataclasses.replace(rc, online=False).online_test
    assert not dataclasses.replace(rc, mode="paper").online_test
    cj = env_jobs(load_split(str(trace)).val)
    cj = dataclasses.replace(cj, submit=cj.submit // 100)
    fixed = run_model(rc, model.params, cj)  # validation's compiled fixed-policy rollout
    on = run_model(rc, model.params, cj, online=None)
    fn = _rollout_fn(rc, make_policy(rc).apply, False, True)  # the same compiled online run
    off = jax.device_get(fn(make_env(rc, cj), model.params, jax.random.PRNGKey(0), False))
    assert off[3] == 0 and np.asarray(off[0].start).tolist() == fixed["start"].tolist()
    assert on["updates"] >= 3 and on["start"].tolist() != fixed["start"].tolist()


def test_trace_path_relative_to_the_checkout(tmp_path):
    """The saved settings name the trace relative to the run directory's checkout (a run
    outside any checkout keeps it as given), and a stored relative path is found again."""
    from jaxsched.systems.dras.config import portable_trace, resolve_trace

    co = tmp_path / "co"
    (co / ".git").mkdir(parents=True)
    (tmp_path / "shared").mkdir()
    tr = tmp_path / "shared" / "t.swf"
    tr.write_text("")
    run = co / "runs" / "x"
    assert portable_trace(tr, run) == "../shared/t.swf"
    assert portable_trace(tr, tmp_path / "elsewhere") == str(tr)
    assert resolve_trace("../shared/t.swf", run) == str(co / "../shared/t.swf")
    assert resolve_trace(str(tr), run) == str(tr)


def test_evaluate_model_prints_the_report(runs, capsys, monkeypatch):
    """``jaxsched evaluate TRACE --model DIR`` prints DRAS's §10 table through the System
    report hook (the same text as ``python -m jaxsched.systems.dras``)."""
    from jaxsched.systems.dras import evaluate as ev

    trace, a, _ = runs
    calls = []
    monkeypatch.setattr(ev, "test_report", lambda m, t, **kw: calls.append((m, t, kw)) or "T10")
    assert jaxsched_main(["evaluate", str(trace), "--model", str(a)]) == 0
    assert capsys.readouterr().out.strip() == "T10"
    ((m, t, kw),) = calls
    assert (
        m.epoch == 2 and t == str(trace) and kw == {"sample": False, "jobs": None, "online": None}
    )
    # --jobs K: the first K test jobs; NAME:off: PG's online adaptation off
    assert jaxsched_main(["evaluate", str(trace), "--model", f"{a}:off", "--jobs", "7"]) == 0
    assert calls[1][2] == {"sample": False, "jobs": 7, "online": False}


def test_paper_mode_runs_the_paper_loop_and_reward(runs, tmp_path, monkeypatch):
    """--mode paper trains in the paper's loop (the engine's BF_DRAS_PAPER) on the capacity
    reward (no --priority), --reward overrides it; run.json keeps the flag only when given,
    so runs from before the flag load unchanged. (The override's run is configured through the
    CLI, not trained: the capability reward's values per decision are tested in
    tests/envs/test_dras_env.py.)"""
    from jaxsched.envs.dras import reward_capability, reward_capacity
    from jaxsched.sim.cqsim.types import BF_DRAS, BF_DRAS_PAPER
    from jaxsched.systems.dras import run as dras_run
    from jaxsched.systems.dras.config import RunConfig as DrasRun
    from jaxsched.systems.dras.evaluate import env_options, load_dras, make_env

    trace, a, _ = runs
    base = ["train", "dras", str(trace), "--epochs", "1", "--mode", "paper"] + ARGS
    assert jaxsched_main(base + ["--out", str(tmp_path / "p")]) == 0
    configured = []
    monkeypatch.setattr(dras_run, "train", lambda rc, out, **kw: configured.append(rc))
    assert jaxsched_main(base + ["--out", str(tmp_path / "q"), "--reward", "capability"]) == 0
    (q,) = configured
    assert q.to_dict()["reward"] == "capability"
    q = DrasRun.from_dict(json.loads(json.dumps(q.to_dict())))  # as load_dras reads run.json
    p = load_dras(tmp_path / "p").run
    assert "reward" not in json.loads((tmp_path / "p" / "run.json").read_text())
    assert (p.reward_name, q.reward_name, q.reward) == ("capacity", "capability", "capability")
    assert env_options(p)["reward_fn"] is reward_capacity
    assert env_options(q)["reward_fn"] is reward_capability
    cj = env_jobs(load_split(str(trace)).val)
    assert int(make_env(p, cj)._params().backfill) == BF_DRAS_PAPER
    code = load_dras(a).run  # the module's code-mode run
    assert (code.reward_name, int(make_env(code, cj)._params().backfill)) == ("code", BF_DRAS)
    assert RunConfig(trace="x", mode="paper", priority=0.2).reward_name == "capability"


def test_best_by_bounded_wait(runs, tmp_path):
    """``--best-by bounded-wait``: the score is the validation average wait while the maximum
    wait stays within 1.5 × FCFS + EASY's on the validation month (the bound in best.json,
    from the oracle), else 1e9 + the maximum wait; best.ckpt is the lowest score's epoch."""
    from jaxsched.systems.dras.evaluate import baseline_schedules
    from jaxsched.systems.dras.run import OUTSIDE_BOUND, bounded_wait_score

    assert bounded_wait_score(700.0, 10.0, 12.0) == 700.0
    assert bounded_wait_score(600.0, 13.0, 12.0) == OUTSIDE_BOUND + 13.0
    trace, *_ = runs
    out = tmp_path / "bw"
    argv = ["train", "dras", str(trace), *ARGS, "--best-by", "bounded-wait", "--out", str(out)]
    assert jaxsched_main(argv + ["--epochs", "2"]) == 0
    cj = env_jobs(load_split(str(trace)).val)
    fcfs = baseline_schedules(cj, ["fcfs"])["fcfs"]["start"]
    bound = 1.5 * float(np.max(fcfs - cj.submit))
    best = json.loads((out / "best.json").read_text())
    assert best["max_wait_bound"] == pytest.approx(bound) and bound > 0
    scores = [bounded_wait_score(r["val_wait"], r["val_max_wait"], bound) for r in _log(out)]
    assert best["value"] == pytest.approx(min(scores))
    assert best["epoch"] == 1 + int(np.argmin(scores))
