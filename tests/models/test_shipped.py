"""Shipped models are package data and can be named by their bare name."""

import json

import jax
import pytest

from jaxsched import models, systems


def test_names_and_paths():
    names = models.names()
    assert {"lublin1-bf", "lublin1-bf-fast", "lublin1-none"} <= set(names)
    for name in names:
        d = models.path(name)
        assert d.parent == models.ROOT
        assert (d / "README.md").is_file() and list(d.glob("*.ckpt"))
        json.loads((d / "run.json").read_text())
    with pytest.raises(KeyError, match="no shipped model 'nope'"):
        models.path("nope")


def test_resolve_prefers_an_existing_path(tmp_path, monkeypatch):
    assert models.resolve("lublin1-bf") == models.ROOT / "lublin1-bf"
    (tmp_path / "lublin1-bf").mkdir()
    monkeypatch.chdir(tmp_path)
    assert models.resolve("lublin1-bf").resolve() == tmp_path / "lublin1-bf"
    assert str(models.resolve("no-such-dir")) == "no-such-dir"


def test_load_model_by_name():
    system, model = systems.load_model("lublin1-none")
    assert system.name == "rlscheduler"
    assert model.path.parent == models.ROOT / "lublin1-none"


@pytest.mark.parametrize(
    "name,metric,backfill,epoch",
    [
        ("sdsc-bf", "bsld", "rlscheduler", 81),
        ("hpc2n-bf", "bsld", "rlscheduler", 24),
        ("sdsc-bf-fair", "fairness", "rlscheduler", 72),
        ("hpc2n-bf-fair", "fairness", "rlscheduler", 12),
        ("sdsc-none-fair", "fairness", "none", 38),
        ("hpc2n-none-fair", "fairness", "none", 28),
        ("sdsc-none", "bsld", "none", 4),
        ("hpc2n-none", "bsld", "none", 11),
    ],
)
def test_pwa_trace_models_trained_on_the_papers_job_slice(name, metric, backfill, epoch):
    # Tables V and VIII draw SDSC-SP2 and HPC2N sequences from the first 10,000 jobs: the
    # shipped models must have trained there, with the run's backfilling, filter and metric
    # recorded
    run = json.loads((models.path(name) / "run.json").read_text())
    assert run["job_slice"] == 10000 and run["backfill"] == backfill
    assert run["filter"] == "paper" and run["metric"] == metric
    system, model = systems.load_model(name)
    assert system.name == "rlscheduler" and model.epoch == epoch


@pytest.mark.parametrize("base", ["lcfs", "srf", "saf", "fcfs"])
def test_fig7_inspectors_record_their_base(base):
    # the paper's Fig. 7: SchedInspector on SDSC-SP2 over four other bases, bsld, no backfilling
    run = json.loads((models.path(f"si-sdsc-{base}") / "run.json").read_text())
    assert run["base"] == base and run["metric"] == "bsld" and run["backfill"] == "none"
    assert "SDSC-SP2" in run["trace"]
    system, model = systems.load_model(f"si-sdsc-{base}")
    assert system.name == "schedinspector" and model.epoch == (25 if base == "srf" else 10)


@pytest.mark.parametrize("metric, epoch", [("mbsld", 15), ("wait", 60)])
def test_fig9_inspectors_record_their_metric(metric, epoch):
    run = json.loads((models.path(f"si-sdsc-sjf-{metric}") / "run.json").read_text())
    assert (run["base"], run["metric"], run["backfill"]) == ("sjf", metric, "none")
    system, model = systems.load_model(f"si-sdsc-sjf-{metric}")
    assert system.name == "schedinspector" and model.epoch == epoch


def test_a2c_model_by_name_keeps_its_environment():
    # A2cScheduler at rate 0.7, invalid slots and idle-cluster void masked (its README)
    system, model = systems.load_model("a2c-l07")
    assert system.name == "a2c" and model.epoch == 30
    assert model.env.mask_invalid and model.env.no_idle_void and model.run.rate == 0.7


@pytest.mark.parametrize("name, rate, epoch", [("a2c-l06", 0.6, 30), ("a2c-l08", 0.8, 30),
                                               ("a2c-l09", 0.9, 5)])  # fmt: skip
def test_a2c_models_of_the_other_rates(name, rate, epoch):
    # actor-only exports (export_actor) of the same recipe as a2c-l07 at other rates
    system, model = systems.load_model(name)
    assert system.name == "a2c" and model.epoch == epoch and model.run.rate == rate
    assert model.env.mask_invalid and model.env.no_idle_void
    from jaxsched.train.checkpoint import load_checkpoint

    assert set(load_checkpoint(model.path).state) == {"params"}  # no optimiser, no environments
    assert set(load_checkpoint(model.path).state["params"]) == {"actor"}


@pytest.mark.extended  # a shipped model's README figure on 100 jobsets
@pytest.mark.xla_full_opt  # 100 jobsets x 500 steps: run time
def test_a2c_l09_beats_sjf_on_its_readme_jobsets():
    # the README's 100 fresh jobsets (seed 1): 10.47 against SJF's 11.26
    import dataclasses

    import numpy as np

    from jaxsched.systems.a2cscheduler import evaluate as ev
    from jaxsched.systems.a2cscheduler.config import build_env

    _, m = systems.load_model("a2c-l09")
    env = build_env(dataclasses.replace(m.run, eval_seed=1, eval_sequences=100))
    # SJF alone of the baselines (the other three would double the test's time)
    (sjf_rows,) = ev.baseline_metrics(env, [ev.BASELINES["SJF"]], 100)
    a2c_rows = ev.policy_metrics(env, m.actor_apply, m.params, 100)
    a2c, sjf = np.mean(a2c_rows["slowdown"]), np.mean(sjf_rows["slowdown"])
    assert a2c == pytest.approx(10.467, abs=0.05) and sjf == pytest.approx(11.261, abs=1e-3)


@pytest.mark.parametrize(
    "name,user_feature,length",
    [
        ("sdsc-bf-fair", True, 128),
        ("hpc2n-bf-fair", True, 128),
        ("sdsc-none-fair", False, 256),
        ("hpc2n-none-fair", False, 256),
    ],
)
def test_fairness_models_record_their_environment(name, user_feature, length):
    # with backfilling the fairness models trained in the reference's fairness environment
    # (9 features, 128-job sequences); their networks must take the features they saw
    run = json.loads((models.path(name) / "run.json").read_text())
    assert run.get("user_feature", False) is user_feature and run["length"] == length
    _, model = systems.load_model(name)
    kernels = [x for x in jax.tree_util.tree_leaves(model.params) if x.ndim == 2]
    assert kernels[0].shape[0] == (9 if user_feature else 8)


def test_split_window_model_is_the_actor_alone():
    # exported with export_policy: loads by name without its training trace, window and mask
    # as trained, the checkpoint chosen on validation (epoch 40)
    system, model = systems.load_model("sw-lublin1-h10t10-mask")
    assert system.name == "splitwindow" and model.epoch == 40
    assert (model.run.head, model.run.tail, model.run.mask) == (10, 10, True)
    kernel = model.params["params"]["_MLP_0"]["Dense_0"]["kernel"]
    assert kernel.shape == (256 + 3 * 20, 1024)
    assert model.path.stat().st_size < 5_000_000


@pytest.mark.extended  # a shipped model's README figure
def test_capped_lublin_inspector_reaches_table_4_by_starving():
    """si-lublin1-sjf-cap (its README): trained with --cap-reward -1; on the paper's first
    four test sequences it beats SJF's bsld by far while the utilisation collapses."""
    import numpy as np

    from jaxsched.systems.schedinspector.config import load_jobs
    from jaxsched.systems.schedinspector.evaluate import compare, test_starts

    run = json.loads((models.path("si-lublin1-sjf-cap") / "run.json").read_text())
    assert run["cap_reward"] == -1.0 and run["max_steps"] == 1280 and run["base"] == "sjf"
    system, model = systems.load_model("si-lublin1-sjf-cap")
    assert system.name == "schedinspector" and model.epoch == 55
    trace = models.ROOT.parents[1] / "traces" / "lublin-1.swf"  # tracked in the checkout
    jobs, _ = load_jobs(str(trace), "compat")
    res = compare(model, test_starts(jobs.n_jobs, 256, 4, 1), 256, trace=str(trace))
    base, ins = res["base"], res["inspected"]
    assert np.mean(ins["bsld"]) < 0.3 * np.mean(base["bsld"])
    assert np.mean(ins["util"]) < np.mean(base["util"]) - 0.2
    assert np.mean(ins["wait"]) > 2 * np.mean(base["wait"])


@pytest.mark.parametrize(
    "name,base,backfill,util_weight,cap_reward,seed,epoch",
    [
        ("si-lublin1-sjf-uw", "sjf", "none", 0.5, -1.0, 0, 15),
        ("si-sdsc-f1-bf-uw", "f1", "rlscheduler", 1.0, None, 3, 5),
        ("si-sdsc-sjf-bf-uw", "sjf", "rlscheduler", 1.0, None, 9, 15),
    ],
)
def test_utilisation_weighted_inspectors_record_their_options(
    name, base, backfill, util_weight, cap_reward, seed, epoch
):
    run = json.loads((models.path(name) / "run.json").read_text())
    assert (run["base"], run["backfill"], run["metric"]) == (base, backfill, "bsld")
    assert (run["util_weight"], run["cap_reward"], run["seed"]) == (util_weight, cap_reward, seed)
    system, model = systems.load_model(name)
    assert system.name == "schedinspector" and model.epoch == epoch


def test_every_shipped_model_loads_and_has_an_evaluate_route():
    """All shipped models load by name, and `jaxsched evaluate TRACE --model NAME` has a way to
    run each: rows beside the heuristics (RLScheduler), a comparison with its own base
    (SchedInspector) or the system's report (DRAS, A2cScheduler, split window)."""
    names = models.names()
    assert len(names) >= 42
    for name in names:
        system, model = systems.load_model(name)
        assert isinstance(model, systems.LoadedModel), name  # one loaded-model type
        assert model.path.parent == models.ROOT / name or model.path == models.ROOT / name, name
        route = {
            "rlscheduler": system.model_rows,
            "schedinspector": system.compare,
        }.get(system.name, system.report)
        assert route is not None, name
