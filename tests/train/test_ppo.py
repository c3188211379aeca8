"""Tests of the PPO trainer (jaxsched/train/ppo.py), the trajectory filter inside it and
checkpoints (checkpoint.py), on a toy environment of the contract.

Toy environment ``PickSmallestEnv``: ``tests/toy_env.py`` (one file against the environment
contract of ``jaxsched/envs/core.py``) under :class:`jaxsched.envs.AutoResetWrapper`; ``N = 6``
slots of 8 features, reward 1 for picking the valid slot with the smallest feature 0, episodes
of 1..5 steps, so a random policy earns E[1/m] = 0.29 per step; ``timestep.extras["length"]``
is used as the "SJF value" of the filter tests.

1. configuration defaults = spec §6, validation;
2. (GAE, reward-to-go and the valid-step mask: test_returns.py and test_rollout.py);
3. one shared training run (module fixture): compiled once, learns (clearly beats random),
   collects exactly num_envs x episodes_per_env complete episodes;
4. KL early stop: the rule in the run (the loop itself: test_kl_stop.py);
5. ``jax.vmap(update)`` over 2 seeds == the seeds run one at a time;
6. float32 params/observations/metrics with 64-bit mode on;
7. trajectory filter inside the trainer (phase 1 drops exactly the rejected episodes, phase 2
   none);
8. (filtering rules: tests/systems/rlscheduler/test_filtering.py);
9. checkpoints: round trip, bit-for-bit resume, keep-last, atomic replace, corrupt / truncated /
   foreign / mismatched files raise CheckpointError with a one-line message naming the file.
"""

from __future__ import annotations

import dataclasses
import json
import os

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from toy_env import RANDOM_REWARD_PER_STEP
from toy_env import PickSmallestEnv as ContractToyEnv

from jaxsched import fileio
from jaxsched.envs import AutoResetWrapper
from jaxsched.errors import CheckpointError, ConfigError, JaxschedError
from jaxsched.systems.rlscheduler.filtering import (
    TrajectoryFilter,
)
from jaxsched.train import (
    EpisodeFilter,
    NetInput,
    PPOConfig,
    SlotPrefix,
    TrainState,
    episode_summaries,
    fit,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    make_train,
    optim,
    save_checkpoint,
    valid_step_mask,
)

# ----------------------------------------------------------------------------------------------
# toy environment and networks
# ----------------------------------------------------------------------------------------------


def PickSmallestEnv(**kwargs):
    """The toy environment of the contract (``tests/toy_env.py``) under the one auto-reset
    wrapper: a new environment is one file against the contract, and PPO trains it."""
    return AutoResetWrapper(ContractToyEnv(**kwargs))


class RowPolicy(nn.Module):
    """Per-slot MLP (a tiny kernel network); raw logits (the trainer masks them)."""

    @nn.compact
    def __call__(self, obs, mask):
        h = nn.relu(nn.Dense(16)(obs))
        return nn.Dense(1)(h)[..., 0]


class MeanValue(nn.Module):
    @nn.compact
    def __call__(self, obs):
        h = nn.relu(nn.Dense(16)(obs))
        return nn.Dense(1)(jnp.mean(h, axis=-2))[..., 0]


BASE = PPOConfig(num_envs=16, episodes_per_env=2, max_episode_steps=5, pi_lr=3e-3, vf_lr=1e-2)
N_UPDATES = 20


def _tree_equal(a, b):
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


class _Compiles:
    """Counts XLA compilations (same hook as the count_compilations fixture of conftest)."""

    EVENT = "/jax/core/compile/backend_compile_duration"

    def __enter__(self):
        self.n = 0

        def listener(name, duration, **kw):
            if name == self.EVENT:
                self.n += 1

        self._listener = listener
        jax.monitoring.register_event_duration_secs_listener(listener)
        return self

    def __exit__(self, *exc):
        jax.monitoring.unregister_event_duration_listener(self._listener)


@pytest.fixture(scope="module")
def trainer():
    return make_train(
        BASE,
        PickSmallestEnv(),
        RowPolicy(),
        MeanValue(),
        episode_info_fn=lambda ts: {"len": ts.extras["length"]},
    )


@pytest.fixture(scope="module")
def run(trainer):
    """One training run shared by several tests: compile counts and the metrics history."""
    s0 = trainer.init(jax.random.PRNGKey(0))
    jax.block_until_ready(s0)
    compiles = []
    s = s0
    history = []
    for _i in range(N_UPDATES):
        with _Compiles() as c:
            s, m = trainer.update(s)
            jax.block_until_ready(s)
        compiles.append(c.n)
        history.append(jax.device_get(m))
    return {"s0": s0, "final": s, "history": history, "compiles": compiles}


# ----------------------------------------------------------------------------------------------
# 1. configuration
# ----------------------------------------------------------------------------------------------


def test_config_defaults_are_the_reference():
    c = PPOConfig()
    assert (c.num_envs, c.episodes_per_env, c.max_episode_steps) == (100, 1, 256)
    assert c.num_episodes == 100 and c.rollout_steps == 256
    assert (c.gamma, c.gae_lambda, c.clip_ratio) == (1.0, 0.97, 0.2)
    assert (c.pi_lr, c.vf_lr, c.adam_b1, c.adam_b2, c.adam_eps) == (3e-4, 1e-3, 0.9, 0.999, 1e-8)
    assert (c.train_pi_iters, c.train_v_iters) == (80, 80)
    assert c.target_kl == 0.01 and c.kl_stop_factor == 1.5  # stop when KL > 0.015
    assert c.normalize_advantages and c.value_target == "reward_to_go"
    assert c.entropy_coef == 0.0 and c.max_grad_norm is None
    assert PPOConfig.from_dict(c.to_dict()) == c


@pytest.mark.parametrize(
    "bad",
    [
        dict(num_envs=0),
        dict(gamma=1.5),
        dict(gae_lambda=-0.1),
        dict(train_pi_iters=-1),
        dict(value_target="td"),
        dict(target_kl=-1.0),
        dict(max_episode_steps=2.5),
        dict(lr_anneal_epochs=-1),
        dict(lr_anneal_epochs=1.5),
        dict(lr_end_fraction=1.5),
    ],
)
def test_config_rejects_bad_values(bad):
    with pytest.raises(ConfigError):
        PPOConfig(**bad)
    with pytest.raises(ConfigError):
        PPOConfig.from_dict({"no_such_field": 1})


def test_config_dict_leaves_out_later_fields_at_their_defaults():
    """Checkpoints saved before the learning-rate schedule existed hold a config without its
    fields; a run that does not use it must still compare equal to them (resume)."""
    d = PPOConfig().to_dict()
    assert "lr_anneal_epochs" not in d and "lr_end_fraction" not in d
    c = PPOConfig(lr_anneal_epochs=5, lr_end_fraction=0.1)
    assert c.to_dict()["lr_anneal_epochs"] == 5 and c.to_dict()["lr_end_fraction"] == 0.1
    assert PPOConfig.from_dict(c.to_dict()) == c and PPOConfig.from_dict(d) == PPOConfig()


def _leaves_equal(a, b) -> bool:
    return all(
        np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b))
    )


def test_lr_anneal_reaches_zero_and_resumes(tmp_path):
    """Annealed to 0 over one update: the first update moves both networks, every later one
    leaves them exactly as they are; the schedule's step count survives a checkpoint; with an
    end fraction of 1 the schedule is the constant learning rate."""
    base = dataclasses.replace(BASE, target_kl=None)
    tr = make_train(
        dataclasses.replace(base, lr_anneal_epochs=1), PickSmallestEnv(), RowPolicy(), MeanValue()
    )
    s0 = tr.init(jax.random.PRNGKey(3))
    s1, _ = tr.update(s0)
    s2, _ = tr.update(s1)
    assert not _leaves_equal(s1.policy_params, s0.policy_params)
    assert not _leaves_equal(s1.value_params, s0.value_params)
    assert _leaves_equal(s2.policy_params, s1.policy_params)
    assert _leaves_equal(s2.value_params, s1.value_params)
    save_checkpoint(tmp_path, s1, epoch=1, config=tr.run_config())
    ck = load_checkpoint(tmp_path, target=s0, config=tr.run_config())
    _tree_equal(tr.update(ck.state)[0], s2)
    # a constant "schedule" is the constant learning rate: the trainer's Adam with an end
    # fraction of 1 takes exactly the steps of the constant one on the same gradients (compared
    # here, not through two whole trainings: there the two compiled programs may sum the
    # gradients in another order, and Adam makes a step of up to the learning rate of a
    # rounding difference near 0)
    flat = dataclasses.replace(base, lr_anneal_epochs=1, lr_end_fraction=1.0)
    txs = [optim.adam_for_steps(base.pi_lr, c, base.train_pi_iters) for c in (base, flat)]
    params = {"w": jnp.linspace(-1.0, 1.0, 5, dtype=jnp.float32)}  # as the trainers
    states = [tx.init(params) for tx in txs]
    for k in range(2 * base.train_pi_iters + 1):  # past the end of the (flat) decay
        grads = {"w": jnp.sin(jnp.arange(5, dtype=jnp.float32) * (k + 1))}
        (uc, sc), (uf, sf) = (tx.update(grads, st, params) for tx, st in zip(txs, states))
        np.testing.assert_array_equal(np.asarray(uc["w"]), np.asarray(uf["w"]))
        states = [sc, sf]
    const = make_train(base, PickSmallestEnv(), RowPolicy(), MeanValue())
    # ... and a half-way schedule moves the networks less than the constant one in update 2
    half = make_train(
        dataclasses.replace(base, lr_anneal_epochs=2), PickSmallestEnv(), RowPolicy(), MeanValue()
    )
    h1 = half.update(half.init(jax.random.PRNGKey(3)))[0]
    c1 = const.update(const.init(jax.random.PRNGKey(3)))[0]
    step = lambda t, s: sum(
        float(np.abs(np.asarray(x) - np.asarray(y)).sum())
        for x, y in zip(
            jax.tree_util.tree_leaves(t.update(s)[0].policy_params),
            jax.tree_util.tree_leaves(s.policy_params),
        )
    )
    assert 0 < step(half, h1) < step(const, c1)


# ----------------------------------------------------------------------------------------------
# 3. the shared training run
# ----------------------------------------------------------------------------------------------


def test_update_is_compiled_once(run):
    # 1 compile, or 0 when the test run's persistent compilation cache already holds it
    assert run["compiles"][0] <= 1, run["compiles"]
    assert run["compiles"][1:] == [0] * (N_UPDATES - 1), run["compiles"]


def test_ppo_learns_toy_env(run):
    rps = np.array([h["reward_per_step"] for h in run["history"]])
    assert abs(rps[0] - RANDOM_REWARD_PER_STEP) < 0.15, rps  # untrained ≈ random
    late = rps[-3:].mean()
    assert late > 0.7 and late > 2 * RANDOM_REWARD_PER_STEP, rps
    assert run["history"][-1]["v_loss"] < run["history"][0]["v_loss_old"]


def test_rollout_collects_complete_episodes(run):
    for h in run["history"]:
        assert int(h["episodes"]) == BASE.num_episodes
        assert int(h["incomplete_episodes"]) == 0
        assert 1.0 <= float(h["episode_length"]) <= 5.0
        np.testing.assert_allclose(
            float(h["episode_length"]) * int(h["episodes"]), int(h["steps"]), rtol=1e-6
        )
        # per-episode summaries: lengths counted from the dones == lengths the env reported
        valid = np.asarray(h["episode_info_valid"])
        assert valid.shape == (BASE.num_episodes,) and valid.all()
        np.testing.assert_array_equal(h["episode_info_length"], h["episode_info_len"])
        assert int(np.sum(h["episode_info_length"])) == int(h["steps"])
        np.testing.assert_allclose(
            np.mean(h["episode_info_return"]), h["episode_return"], rtol=1e-5
        )
    # variable episode lengths -> variable number of steps per update
    assert len({int(h["steps"]) for h in run["history"]}) > 1
    assert [int(h["update"]) for h in run["history"]] == list(range(1, N_UPDATES + 1))
    assert int(run["final"].step) == N_UPDATES


# ----------------------------------------------------------------------------------------------
# 4. KL early stop
# ----------------------------------------------------------------------------------------------


def test_train_scan_matches_updates(run, trainer):
    s2, ms = trainer.train(run["s0"], 2)
    assert int(s2.step) == 2 and ms["update"].tolist() == [1, 2]
    h = run["history"][0]
    for k in ("episodes", "steps", "reward_per_step", "value_mean", "v_loss_old", "entropy"):
        np.testing.assert_array_equal(ms[k][0], h[k], err_msg=k)  # same first rollout
    np.testing.assert_array_equal(
        s2.rng, jax.device_get(trainer.update(trainer.update(run["s0"])[0])[0].rng)
    )


def test_kl_early_stop_in_training_run(run):
    limit = BASE.kl_stop_factor * BASE.target_kl  # 0.015
    stops = 0
    for h in run["history"]:
        if bool(h["kl_stopped"]):
            stops += 1
            assert float(h["approx_kl_seen"]) > limit
            assert int(h["pi_iters"]) < BASE.train_pi_iters
        else:
            assert int(h["pi_iters"]) == BASE.train_pi_iters
            assert float(h["approx_kl_seen"]) <= limit
    assert stops >= 2, [int(h["pi_iters"]) for h in run["history"]]


# ----------------------------------------------------------------------------------------------
# 5. vmap over seeds
# ----------------------------------------------------------------------------------------------


def test_vmap_over_seeds_equals_separate_runs(trainer):
    keys = [jax.random.PRNGKey(11), jax.random.PRNGKey(12)]
    inits = [trainer.init(k) for k in keys]
    singles = [jax.device_get(trainer.update(s)) for s in inits]
    batched = jax.jit(lambda a, b: jax.tree_util.tree_map(lambda x, y: jnp.stack([x, y]), a, b))(
        *inits
    )
    # vmap(init) gives the same batch (checked on shapes only: compiling it costs seconds)
    vinit = jax.eval_shape(jax.vmap(trainer.init), jnp.stack(keys))
    assert jax.tree_util.tree_structure(vinit) == jax.tree_util.tree_structure(batched)
    assert [(a.shape, a.dtype) for a in jax.tree_util.tree_leaves(vinit)] == [
        (a.shape, a.dtype) for a in jax.tree_util.tree_leaves(batched)
    ]
    vstate, vm = jax.device_get(jax.jit(jax.vmap(trainer.update))(batched))

    # the learnt networks are compared on probe observations
    env = PickSmallestEnv()

    @jax.jit
    def probe(pparams, vparams):
        _, ts = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(99), 64))
        x = NetInput(ts.observation.obs, ts.observation.mask)
        logits = jax.vmap(trainer.policy_logits, (None, 0))(pparams, x)
        return jax.nn.softmax(logits), jax.vmap(trainer.value, (None, 0))(vparams, x)

    seed_probs = []
    for i, (s, m) in enumerate(singles):
        si = jax.tree_util.tree_map(lambda a: a[i], vstate)
        np.testing.assert_array_equal(si.rng, s.rng)
        assert int(si.step) == int(s.step) == 1
        # the rollouts are identical ...
        for k in (
            "episodes",
            "steps",
            "reward_per_step",
            "value_mean",
            "v_loss_old",
            "entropy",
            "pi_loss_old",
            "episode_return",
            "pi_iters",
        ):
            np.testing.assert_array_equal(vm[k][i], m[k], err_msg=k)
        # ... and so are the updated networks, up to float rounding.  (Raw policy parameters
        # are not compared: directions the loss is invariant to, such as the output bias under
        # softmax, have pure-rounding-noise gradients that Adam scales up to learning-rate size.)
        p_v, v_v = probe(si.policy_params, si.value_params)
        p_s, v_s = probe(s.policy_params, s.value_params)
        np.testing.assert_allclose(p_v, p_s, atol=1e-3)
        np.testing.assert_allclose(v_v, v_s, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(vm["v_loss"][i], m["v_loss"], rtol=1e-5)
        seed_probs.append(p_v)
    # the two seeds really differ
    assert float(vm["reward_per_step"][0]) != float(vm["reward_per_step"][1])
    assert np.abs(seed_probs[0] - seed_probs[1]).max() > 1e-2


# ----------------------------------------------------------------------------------------------
# 6. float32 with 64-bit mode on
# ----------------------------------------------------------------------------------------------


def test_float32_under_x64():
    with jax.enable_x64(True):
        tr = make_train(BASE, PickSmallestEnv(), RowPolicy(), MeanValue())
        key = jax.random.PRNGKey(0)
        state = jax.eval_shape(tr.init, key)
        new_state, metrics = jax.eval_shape(tr.update, state)
        traj, _ = jax.eval_shape(
            tr.collect, state.policy_params, state.value_params, key, state.step
        )
    for tree in (state, new_state, metrics, traj):
        for leaf in jax.tree_util.tree_leaves(tree):
            assert leaf.dtype != jnp.float64, tree
    # a typed key gives the same state layout as a raw one
    typed = jax.eval_shape(tr.init, jax.random.key(0))
    assert jax.tree_util.tree_structure(typed) == jax.tree_util.tree_structure(state)
    assert typed.rng.dtype == jnp.uint32
    for leaf in jax.tree_util.tree_leaves((new_state.policy_params, new_state.value_params)):
        assert leaf.dtype == jnp.float32
    assert traj.x.obs.dtype == jnp.float32 and traj.x.obs.shape == (10, 16, 6, 8)
    assert traj.logp.dtype == traj.value.dtype == traj.reward.dtype == jnp.float32
    assert new_state.rng.dtype == jnp.uint32 and new_state.step.dtype == jnp.int32
    # input and output state have identical avals, so a second update never recompiles
    assert jax.tree_util.tree_structure(state) == jax.tree_util.tree_structure(new_state)
    for a, b in zip(jax.tree_util.tree_leaves(state), jax.tree_util.tree_leaves(new_state)):
        assert (a.shape, a.dtype) == (b.shape, b.dtype)


# ----------------------------------------------------------------------------------------------
# 7. trajectory filter inside the trainer
# ----------------------------------------------------------------------------------------------


def _episode_lengths(done_col):
    """Per step: the length of the episode the step belongs to (numpy, one env column)."""
    out = np.zeros(len(done_col), int)
    start = 0
    for t, d in enumerate(done_col):
        if d:
            out[start : t + 1] = t + 1 - start
            start = t + 1
    out[start:] = -1  # unfinished episode
    return out


def test_trajectory_filter_in_trainer():
    flt = TrajectoryFilter(2.5, 10.0, phase1_updates=1)  # episodes of 3..5 steps only
    tr = make_train(
        BASE,
        PickSmallestEnv(),
        RowPolicy(),
        MeanValue(),
        episode_filter=EpisodeFilter(flt, lambda ts: ts.extras["length"]),
    )
    s = tr.init(jax.random.PRNGKey(5))
    key = jax.random.PRNGKey(6)
    traj1, _ = tr.collect(s.policy_params, s.value_params, key, jnp.int32(0))  # phase 1
    traj2, _ = tr.collect(s.policy_params, s.value_params, key, jnp.int32(1))  # phase 2
    done = np.asarray(traj1.done)
    np.testing.assert_array_equal(done, traj2.done)  # same rollout, only weights differ
    plain, _ = valid_step_mask(done, BASE.episodes_per_env)
    np.testing.assert_array_equal(traj2.valid, plain)
    lengths = np.stack([_episode_lengths(done[:, e]) for e in range(done.shape[1])], 1)
    np.testing.assert_array_equal(traj1.valid, np.asarray(plain) & (lengths >= 3))
    assert 0 < np.asarray(traj1.valid).sum() < np.asarray(plain).sum()
    # per-episode view: the valid slots are exactly the accepted episodes
    summ = jax.device_get(jax.jit(episode_summaries, static_argnums=1)(traj1, 2))
    first_lengths = []
    for e in range(done.shape[1]):
        ends = np.flatnonzero(done[:, e])
        first_lengths += [ends[0] + 1, ends[1] - ends[0]]
    first_lengths = np.array(first_lengths)
    np.testing.assert_array_equal(summ["episode_info_valid"], first_lengths >= 3)
    v = summ["episode_info_valid"]
    np.testing.assert_array_equal(summ["episode_info_length"][v], first_lengths[v])
    assert tr.run_config()["trajectory_filter"] == dataclasses.asdict(flt)
    with pytest.raises(ConfigError, match="episode_filter must be an EpisodeFilter"):
        make_train(BASE, PickSmallestEnv(), RowPolicy(), MeanValue(), episode_filter=flt)


# ----------------------------------------------------------------------------------------------
# 9. checkpoints
# ----------------------------------------------------------------------------------------------


def test_checkpoint_round_trip(run, trainer, tmp_path):
    s = run["final"]
    path = save_checkpoint(
        tmp_path,
        s,
        epoch=N_UPDATES,
        config=trainer.run_config(),
        metrics_history=run["history"],
        extra={"note": "x"},
    )
    assert path.name == f"checkpoint_{N_UPDATES:08d}.ckpt"
    ck = load_checkpoint(path, target=run["s0"], config=trainer.run_config())
    assert isinstance(ck.state, TrainState)
    _tree_equal(ck.state, s)
    assert ck.epoch == N_UPDATES and ck.extra == {"note": "x"}
    assert ck.config == json.loads(json.dumps(trainer.run_config()))
    assert PPOConfig.from_dict(ck.config["ppo"]) == BASE
    assert len(ck.metrics_history) == N_UPDATES
    for a, b in zip(ck.metrics_history, run["history"]):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    header = json.loads(path.read_bytes().split(b"\n", 1)[0])
    assert header["format"] == "jaxsched-checkpoint" and header["version"] == 2
    assert len(header["payload_sha256"]) == 64
    # without a template: the raw state dict
    raw = load_checkpoint(tmp_path)
    np.testing.assert_array_equal(raw.state["rng"], s.rng)


def test_resume_is_bit_for_bit(trainer, tmp_path):
    s0 = trainer.init(jax.random.PRNGKey(7))
    straight, _ = trainer.update(trainer.update(s0)[0])
    s1, m1 = trainer.update(s0)
    save_checkpoint(
        tmp_path, s1, epoch=1, config=trainer.run_config(), metrics_history=[jax.device_get(m1)]
    )
    ck = load_checkpoint(tmp_path, target=s0, config=trainer.run_config())
    resumed, _ = trainer.update(ck.state)
    _tree_equal(resumed, straight)
    # the host loop resumes the same way and extends the history
    state, hist = fit(
        trainer, ck.state, 1, history=ck.metrics_history, checkpoint_dir=tmp_path / "fit"
    )
    _tree_equal(state, straight)
    assert len(hist) == 2
    ck2 = load_checkpoint(tmp_path / "fit", target=s0, config=trainer.run_config())
    assert ck2.epoch == 2 and len(ck2.metrics_history) == 2
    _tree_equal(ck2.state, straight)


def test_keep_last_and_atomic_writes(run, tmp_path, monkeypatch):
    s = run["s0"]
    for e in (1, 2, 3):
        save_checkpoint(tmp_path, s, epoch=e, keep=2)
    assert [p.name for p in list_checkpoints(tmp_path)] == [
        "checkpoint_00000002.ckpt",
        "checkpoint_00000003.ckpt",
    ]
    assert latest_checkpoint(tmp_path).name == "checkpoint_00000003.ckpt"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint_00000002.ckpt", "checkpoint_00000003.ckpt"]
    assert load_checkpoint(tmp_path).epoch == 3
    before = (tmp_path / "checkpoint_00000003.ckpt").read_bytes()

    # a crash at the rename leaves the old file intact and no temporary behind
    def boom(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(fileio.os, "replace", boom)
    with pytest.raises(OSError):
        save_checkpoint(tmp_path, run["final"], epoch=3, keep=2)
    monkeypatch.undo()
    assert (tmp_path / "checkpoint_00000003.ckpt").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["checkpoint_00000002.ckpt", "checkpoint_00000003.ckpt"]
    save_checkpoint(tmp_path, s, epoch=4, keep=None)
    assert len(list_checkpoints(tmp_path)) == 3


@pytest.fixture
def saved(run, trainer, tmp_path):
    return save_checkpoint(
        tmp_path,
        run["s0"],
        epoch=1,
        config=trainer.run_config(),
        metrics_history=run["history"][:1],
    )


def _expect_error(path, match, **kw):
    with pytest.raises(CheckpointError, match=match) as ei:
        load_checkpoint(path, **kw)
    msg = str(ei.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    assert isinstance(ei.value, JaxschedError)


def test_corrupt_checkpoint(saved, run):
    data = bytearray(saved.read_bytes())
    data[-20] ^= 0xFF
    saved.write_bytes(bytes(data))
    _expect_error(saved, "SHA-256", target=run["s0"])


def test_truncated_checkpoint(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[:-100])
    _expect_error(saved, "truncated")
    head = data.split(b"\n", 1)[0]
    saved.write_bytes(head[: len(head) // 2])  # cut inside the header
    _expect_error(saved, "no header line")
    saved.write_bytes(b"")
    _expect_error(saved, "no header line")


def test_foreign_or_future_file(saved):
    saved.write_bytes(b"hello world\nsome bytes")
    _expect_error(saved, "header is not JSON")
    saved.write_bytes(b'{"format": "something-else"}\n')
    _expect_error(saved, "unknown format")
    saved.write_bytes(b'{"format": "jaxsched-checkpoint", "version": 99}\n')
    _expect_error(saved, "version 99")
    _expect_error(saved.parent / "nowhere.ckpt", "cannot read")
    _expect_error(saved.parent / "empty_dir_that_is_missing", "cannot read")


def test_missing_checkpoint_directory(tmp_path):
    _expect_error(tmp_path, "no checkpoint")


def test_mismatched_config(saved, trainer):
    other = dict(trainer.run_config())
    other["ppo"] = dataclasses.replace(BASE, pi_lr=1e-3).to_dict()
    _expect_error(
        saved, r"different configuration: ppo\.pi_lr: saved 0\.003, given 0\.001", config=other
    )
    _expect_error(saved, "different configuration", config=dataclasses.replace(BASE))


def test_mismatched_shapes(saved, run):
    s0 = run["s0"]
    # same structure, one kernel of a different shape
    params = s0.policy_params
    assert params["params"]["Dense_0"]["kernel"].shape == (8, 16)
    params = {
        "params": {
            **params["params"],
            "Dense_0": {**params["params"]["Dense_0"], "kernel": jnp.zeros((8, 17), jnp.float32)},
        }
    }
    target = s0.replace(policy_params=params)
    _expect_error(
        saved,
        r"state does not match: policy_params/params/Dense_0/kernel: "
        r"saved shape \(8, 16\) float32, expected shape \(8, 17\) float32",
        target=target,
    )
    # a leaf the checkpoint does not have
    target = s0.replace(
        value_params={"params": {**s0.value_params["params"], "extra": jnp.zeros(3, jnp.float32)}}
    )
    _expect_error(saved, "missing from the checkpoint", target=target)
    # a different dtype
    target = s0.replace(step=jnp.zeros((), jnp.float32))
    _expect_error(
        saved, r"step: saved shape \(\) int32, expected shape \(\) float32", target=target
    )


def test_save_checkpoint_rejects_bad_arguments(run, tmp_path):
    with pytest.raises(ConfigError):
        save_checkpoint(tmp_path, run["s0"], epoch=-1)
    with pytest.raises(ConfigError):
        save_checkpoint(tmp_path, run["s0"], epoch=1, keep=0)
    with pytest.raises(ConfigError):
        save_checkpoint(tmp_path, run["s0"], epoch=1, config={"f": object()})


# ----------------------------------------------------------------------------------------------
# slot_prefix: the policy steps on slot prefixes give the full-width update
# ----------------------------------------------------------------------------------------------
def test_slot_prefix_equals_full_width():
    """PickSmallestEnv's valid slots are a prefix of 2..6 slots, RowPolicy is per-slot: chunks
    of 7 samples (160 samples: the last chunk padded) on prefixes of 2, 4 or 6 slots give the
    full-width policy and value losses and gradients up to float rounding. (Whole bucketed
    updates run in every RLScheduler training test: its trainer always uses slot prefixes.)"""
    from jaxsched.nets import KernelValue

    full = make_train(BASE, PickSmallestEnv(), RowPolicy(), KernelValue())
    cut = make_train(
        BASE,
        PickSmallestEnv(),
        RowPolicy(),
        KernelValue(),
        slot_prefix=SlotPrefix((2, 4), chunk_size=7, value_pad_row=(0, 1, 1, 1, 1, 1, 1, 0)),
    )
    s0 = full.init(jax.random.PRNGKey(4))
    tr, _ = full.collect(s0.policy_params, s0.value_params, jax.random.PRNGKey(5), 0)
    flat = lambda a: jnp.reshape(a, (-1,) + a.shape[2:])  # noqa: E731
    x = jax.tree_util.tree_map(flat, tr.x)
    n = np.asarray(x.mask).sum(1)
    assert set(n.tolist()) >= {2, 3, 5, 6}  # every bucket is used
    adv = jax.random.normal(jax.random.PRNGKey(6), n.shape)
    w = flat(tr.valid) & (jnp.arange(n.size) % 5 != 0)
    params = jax.tree_util.tree_map(lambda p: p * 1.7, s0.policy_params)  # ratios != 1
    args = (params, x, flat(tr.action), flat(tr.logp), adv, w)
    (la, aux_a), ga = full.policy_loss_and_grad(*args)
    (lb, aux_b), gb = cut.policy_loss_and_grad(*args)
    np.testing.assert_allclose(float(lb), float(la), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(aux_b), np.asarray(aux_a), rtol=1e-5, atol=1e-7)
    assert float(aux_a[2]) > 0.05  # some ratios are clipped
    for u, v in zip(jax.tree_util.tree_leaves(ga), jax.tree_util.tree_leaves(gb)):
        np.testing.assert_allclose(np.asarray(v), np.asarray(u), rtol=1e-4, atol=1e-6)
    target = jax.random.normal(jax.random.PRNGKey(7), n.shape)
    lv_a, gv_a = full.value_loss_and_grad(s0.value_params, x, target, w)
    lv_b, gv_b = cut.value_loss_and_grad(s0.value_params, x, target, w)
    np.testing.assert_allclose(float(lv_b), float(lv_a), rtol=1e-5)
    for u, v in zip(jax.tree_util.tree_leaves(gv_a), jax.tree_util.tree_leaves(gv_b)):
        np.testing.assert_allclose(np.asarray(v), np.asarray(u), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "prefix",
    [
        SlotPrefix((0, 4)),
        SlotPrefix(()),
        SlotPrefix((4,), chunk_size=0),
        SlotPrefix((4,), max_valid=0),
        ((2, 4), 7),
    ],
)
def test_slot_prefix_rejects_bad_values(prefix):
    with pytest.raises(ConfigError, match="slot_buckets|chunk_size|max_valid|SlotPrefix"):
        make_train(BASE, PickSmallestEnv(), RowPolicy(), MeanValue(), slot_prefix=prefix)
