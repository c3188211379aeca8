"""Data-parallel PPO (:mod:`jaxsched.train.parallel`): on two (fake CPU) devices the update
gives the one-device parameters and metrics up to float rounding, and the device count and
the distributed switches parse with one-line errors. With ``JAXSCHED_TEST_SLOW=1`` (over the
suite's time budget) also: two processes joined by ``jax.distributed`` give the two-device
update and only process 0 saves, and ``jaxsched train rlscheduler --devices all`` logs what one
device trains and resumes on one device.

The device count is fixed when JAX starts, so the two-device run happens in a subprocess
(``XLA_FLAGS=--xla_force_host_platform_device_count=2``). Tolerance: not bit equality — each
device sums its half of the batch and ``psum`` adds the halves, a different order of float
additions than one device's single sum (relative differences ~1e-6 per update); we ask for
1e-4 of each leaf's largest magnitude (at least 1e-5). Adam's ε is raised to 1e-4 here: with
the default 1e-8 a gradient component that is rounding noise (~1e-9, e.g. of a nearly dead
unit) still gets a step of the full learning rate in a random direction, so such parameters
differ by ~lr between any two summation orders; that is Adam's, not the data split's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from shared_data import REPO, last_json_line, run_python, subprocess_env

from jaxsched.errors import ConfigError
from jaxsched.train import parallel

TESTS = REPO / "tests"

SCRIPT = r"""
import json, sys
from jaxsched.compile_cache import enable_compile_cache
from jaxsched.train import parallel
enable_compile_cache(0.2)  # the test suite's folder ($JAXSCHED_CACHE, set by conftest)
host = sys.argv[3:]  # [process id, port]: one of two processes of a multi-host run
if host:
    parallel.initialize_distributed(coordinator_address="localhost:" + host[1],
                                    num_processes=2, process_id=int(host[0]))
import jax, numpy as np
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/train")
from test_ppo import PickSmallestEnv, RowPolicy, MeanValue
from jaxsched.train import parallel
from jaxsched.train.ppo import PPOConfig, make_train
from jaxsched.train.rollout import NetInput

cfg = PPOConfig(num_envs=8, episodes_per_env=2, max_episode_steps=5, pi_lr=3e-3, vf_lr=1e-2,
                train_pi_iters=10, train_v_iters=10, adam_eps=1e-4)
def build(dp):
    return make_train(cfg, PickSmallestEnv(), RowPolicy(), MeanValue(), data_axis=dp,
                      episode_info_fn=lambda ts: {"len": ts.extras["length"]})
one = build(None)
two = parallel.data_parallel(build(parallel.DATA_AXIS), 2)
s1 = s2 = one.init(jax.random.PRNGKey(3))
m1s, m2s = [], []
for _ in range(3):
    if not host:
        s1, m1 = one.update(s1)
        m1s.append(jax.device_get(m1))
    s2, m2 = two.update(s2)
    m2s.append(jax.device_get(m2))
leaves = lambda s: [np.asarray(jax.device_get(a)) for a in jax.tree_util.tree_leaves(s)]
if host:
    if parallel.is_main_process():
        np.savez(sys.argv[2], *leaves(s2))
    print(json.dumps({"processes": jax.process_count(), "devices": jax.device_count(),
                      "main": parallel.is_main_process()}))
    sys.exit(0)
np.savez(sys.argv[2], *leaves(s1), *leaves(s2))
stack = lambda ms: {k: np.stack([m[k] for m in ms]).tolist() for k in ms[0]}
sh = jax.tree_util.tree_leaves(s2.policy_params)[0].sharding
print(json.dumps({"devices": jax.device_count(), "one": stack(m1s), "two": stack(m2s),
                  "replicated": bool(sh.is_fully_replicated), "n_dev": len(sh.device_set)}))
"""


def _two_device_env() -> dict:
    return subprocess_env(devices=2)


@pytest.fixture(scope="module")
def two_device_run(tmp_path_factory):
    """One and two (fake) devices in one subprocess: metrics and the final states' leaves."""
    npz = tmp_path_factory.mktemp("dp") / "leaves.npz"
    got = last_json_line(run_python(["-c", SCRIPT, TESTS, npz], devices=2))
    with np.load(npz) as z:
        arrs = [z[f"arr_{i}"] for i in range(len(z.files))]
    half = len(arrs) // 2
    return got, arrs[:half], arrs[half:]


def _tol(a) -> float:
    """1e-4 of the leaf's largest magnitude, at least 1e-5: a leaf whose gradient is zero in
    exact arithmetic (the output bias of a softmax policy) holds only rounding noise."""
    return max(1e-4 * float(np.max(np.abs(a))), 1e-5)


def test_two_devices_same_parameters_as_one(two_device_run):
    got, one, two = two_device_run
    assert got["devices"] == 2 and got["replicated"] and got["n_dev"] == 2
    assert len(one) == len(two) > 4
    changed = 0
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype.kind == "f":
            np.testing.assert_allclose(b, a, rtol=0, atol=_tol(a))
            changed += int(not np.array_equal(a, b))
        else:
            np.testing.assert_array_equal(b, a)  # step counters, PRNG keys
    assert changed < len(one)  # some leaves (e.g. Adam counts) are exact


def test_two_devices_same_metrics_as_one(two_device_run):
    got, _, _ = two_device_run
    one, two = got["one"], got["two"]
    assert set(one) == set(two)
    exact = ("update", "episodes", "incomplete_episodes", "steps", "episode_info_valid",
             "episode_info_length", "episode_info_len", "pi_iters", "kl_stopped")  # fmt: skip
    for k in one:
        a, b = np.asarray(one[k]), np.asarray(two[k])
        assert a.shape == b.shape, k
        if k in exact:
            np.testing.assert_array_equal(b, a, err_msg=k)
        else:
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6, err_msg=k)
    # the episode summaries are gathered in the one-device order (envs 0-3 on device 0)
    assert np.asarray(one["episode_info_len"]).shape == (3, 16)
    assert np.asarray(one["pi_iters"]).min() >= 1


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


SLOW = pytest.mark.skipif(
    os.environ.get("JAXSCHED_TEST_SLOW") != "1",
    reason="over the suite's time budget; JAXSCHED_TEST_SLOW=1 runs it",
)


@SLOW
def test_two_processes_jax_distributed(two_device_run, tmp_path):
    """Two processes of one CPU device each, joined by jax.distributed (coordinator on
    localhost): the same update as two devices of one process; only process 0 saved.
    (~35 s on the 2-core machine: two more processes compiling; JAXSCHED_TEST_SLOW=1.)"""
    _, _, two = two_device_run
    env = subprocess_env()
    port, npz = str(_free_port()), tmp_path / "host.npz"
    cmd = [sys.executable, "-c", SCRIPT, str(TESTS), str(npz)]
    procs = [
        subprocess.Popen(cmd + [str(i), port], env=env, cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for i in (0, 1)
    ]  # fmt: skip
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    info = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert [i["main"] for i in info] == [True, False]
    assert all(i["processes"] == 2 and i["devices"] == 2 for i in info)
    with np.load(npz) as z:
        host = [z[f"arr_{i}"] for i in range(len(z.files))]
    assert len(host) == len(two)
    for a, b in zip(two, host):
        np.testing.assert_allclose(b, a, rtol=0, atol=_tol(a) if a.dtype.kind == "f" else 0)


# ----------------------------------------------------------------------------------------------
# device counts, divisibility, the distributed switches
# ----------------------------------------------------------------------------------------------


def test_parse_and_resolve_devices(monkeypatch):
    assert parallel.parse_devices("all") is None
    assert parallel.parse_devices(" 3 ") == 3
    for bad in ("0", "-1", "two", ""):
        with pytest.raises(ConfigError, match="--devices"):
            parallel.parse_devices(bad)
    monkeypatch.delenv(parallel.DEVICES_ENV, raising=False)
    assert parallel.resolve_devices() == 1
    import jax

    n = jax.device_count()
    assert parallel.resolve_devices("all") == n
    monkeypatch.setenv(parallel.DEVICES_ENV, "all")
    assert parallel.resolve_devices() == n
    with pytest.raises(ConfigError, match="only .* device"):
        parallel.resolve_devices(n + 1)


def test_expose_host_devices_sets_xla_flags_once():
    env = {"XLA_FLAGS": "--xla_cpu_use_fusion_emitters=false"}
    assert parallel.expose_host_devices("2", environ=env) == 2
    assert env["XLA_FLAGS"] == (
        "--xla_cpu_use_fusion_emitters=false --xla_force_host_platform_device_count=2"
    )
    assert parallel.expose_host_devices(4, environ=env) is None  # a count is set already
    assert env["XLA_FLAGS"].endswith("device_count=2")
    for nothing in ("1", "all", None):  # every visible device; None: the variable, unset
        env = {}
        assert parallel.expose_host_devices(nothing, environ=env) is None and env == {}
    env = {parallel.DEVICES_ENV: "3"}
    assert parallel.expose_host_devices(None, environ=env) == 3
    assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=3"
    with pytest.raises(ConfigError, match="--devices"):
        parallel.expose_host_devices("0", environ={})


def test_trajectories_must_split_evenly():
    from jaxsched.train.ppo import PPOConfig

    parallel.check_divisible(PPOConfig(num_envs=6), 3)
    with pytest.raises(ConfigError, match="7 trajectories per epoch .* divisible"):
        parallel.check_divisible(PPOConfig(num_envs=7), 2)
    with pytest.raises(ConfigError, match="minibatch_size 5"):
        parallel.check_divisible(PPOConfig(num_envs=4, minibatch_size=5), 2)


def test_distributed_requested_by_flag_or_launcher():
    assert parallel.distributed_requested(True, environ={})
    assert not parallel.distributed_requested(False, environ={})
    assert not parallel.distributed_requested(False, environ={"SLURM_NTASKS": "1"})
    assert parallel.distributed_requested(False, environ={"SLURM_NTASKS": "4"})
    assert parallel.distributed_requested(False, environ={"OMPI_COMM_WORLD_SIZE": "2"})
    assert not parallel.distributed_requested(False, environ={"OMPI_COMM_WORLD_SIZE": "x"})


def test_cli_flags():
    import argparse

    from jaxsched.systems.rlscheduler.cli import add_train_arguments

    p = argparse.ArgumentParser()
    add_train_arguments(p)
    a = p.parse_args(["t.swf", "--epochs", "1", "--out", "d", "--devices", "all"])
    assert a.devices == "all" and not a.distributed
    a = p.parse_args(["t.swf", "--epochs", "1", "--out", "d", "--devices", "2", "--distributed"])
    assert a.devices == "2" and a.distributed
    with pytest.raises(SystemExit):
        p.parse_args(["t.swf", "--epochs", "1", "--out", "d", "--devices", "0"])


def test_run_json_device_count_is_not_a_setting():
    from jaxsched.systems.rlscheduler.config import RunConfig

    rc = RunConfig(trace="t.swf")
    assert RunConfig.from_dict({**rc.to_run_json(), "devices": 2}) == rc


# ----------------------------------------------------------------------------------------------
# the command line end to end (two rlscheduler compilations: 1-5 min on the 2-core machine)
# ----------------------------------------------------------------------------------------------


def _flat(tree) -> np.ndarray:
    import jax

    return np.concatenate([np.ravel(np.asarray(x)) for x in jax.tree_util.tree_leaves(tree)])


def _train_run_helpers():
    import importlib.util

    path = TESTS / "systems" / "rlscheduler" / "test_train_run.py"
    spec = importlib.util.spec_from_file_location("_train_run_helpers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@SLOW
def test_cli_two_devices_same_log_as_one(tmp_path):
    """`jaxsched train rlscheduler ... --devices 2`, started without a device count in
    XLA_FLAGS (the command splits the CPU into two devices itself), logs and saves what one
    device trains (tolerance as above), run.json records 2, and the run resumes on one
    device."""
    from jaxsched.systems.rlscheduler.run import train
    from jaxsched.train.checkpoint import load_checkpoint
    from jaxsched.train.loop import read_log

    h = _train_run_helpers()
    trace = h.burst_trace(tmp_path / "burst.swf")
    ppo = h.tiny_ppo(n_envs=4, iters=3)
    flags = ["--length", str(h.LENGTH), "--trajectories", "4", "--pi-iters", "3",
             "--v-iters", "3", "--pi-lr", str(ppo["pi_lr"]), "--no-compare", "--no-progress"]  # fmt: skip
    run_python(["-m", "jaxsched.cli", "train", "rlscheduler", trace, "--epochs", "2", "--out",
                tmp_path / "two", "--devices", "2", *flags], timeout=900)  # fmt: skip
    kw = dict(length=h.LENGTH, ppo=ppo, progress=False, compare=False, log=lambda s: None)
    train(trace, tmp_path / "one", 2, **kw)
    one, two = read_log(tmp_path / "one"), read_log(tmp_path / "two")
    assert [r["episodes"] for r in one] == [r["episodes"] for r in two]
    for k in ("bsld", "return", "pi_loss", "v_loss", "approx_kl", "entropy"):
        a, b = [r[k] for r in one], [r[k] for r in two]
        np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-5, err_msg=k)  # pi_loss ~ 0
    assert json.loads((tmp_path / "two" / "run.json").read_text())["devices"] == 2
    assert json.loads((tmp_path / "one" / "run.json").read_text())["devices"] == 1
    # the saved parameters: close as a whole (|diff| / |params|); leaf by leaf Adam's default
    # ε (1e-8) turns the rounding noise of near-zero gradients into full steps (the toy test
    # above raises ε and checks every leaf), so the log's losses and KL are the sharp check
    s1, s2 = (load_checkpoint(tmp_path / d).state for d in ("one", "two"))
    for name in ("policy_params", "value_params"):
        a, b = (_flat(s[name]) for s in (s1, s2))
        assert np.linalg.norm(a - b) <= 1e-2 * np.linalg.norm(a), name
    res = train(trace, tmp_path / "two", 3, resume=True, devices=1, **kw)
    assert res["epochs"] == 3 and len(read_log(tmp_path / "two")) == 3
