"""Tests of the RLScheduler job-picking environment (jaxsched/envs/rlscheduler.py).

The environment is driven in lockstep with the plain-Python oracle
(``oracle.simulate_with_choices``): at every decision the oracle's state (clock, free nodes,
waiting jobs) is turned into an observation by the small builder below, written from spec
rlscheduler.md §2.9/§2.10 alone, and compared with the env's observation bit for bit; the
same job is then chosen in both, so at the end the start times and the reward can be compared
with the oracle's schedule and metric.

1. observations, masks and visible jobs == the Python builder, random choices, Lublin-1
   windows (max_queue 128) and a synthetic trace with memory/user/group/executable ids,
   2 processors per node, tied submit times and a small max_queue (the >max_queue cut-off, both
   rules), backfilling none / rlscheduler (compat) and EASY (correct mode); start times ==
   the oracle's, final reward == −(oracle's average bounded slowdown);
2. a hand-computed cut-off (reference interleave incl. the F1 tie rule for q = 0, and FCFS);
3. the mask, padding rows and the masked-action fallback;
4. always picking slot 0 == the FCFS heuristic (oracle), with both cut-off rules where they
   apply; reward sign and value for bsld, wait, util, sld and fairness == the oracle's
   metrics; a step on a finished episode is a no-op;
5. vmap over 4 envs (auto-reset inside ``lax.scan``) == a Python loop over single envs;
   jit == no-jit (observation and reward op by op); ``reset`` samples exactly
   [length, U - length - 1); no recompilation between backfill modes, compat and cut-off
   rules; the contract checks of jaxsched/envs/testing.py (compiled once, vmap == loop,
   auto-reset scan == step by step, masks, NaN, determinism) with and without backfilling;
6. the Gymnasium wrapper (a minimal stand-in module when gymnasium is not installed): the
   reference's seeded start stream, the FCFS episode's reward.
"""

from __future__ import annotations

import importlib
import math
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shared_data import REPO as ROOT

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.envs import FIRST, LAST, MID, AutoResetWrapper, RLSchedulerEnv
from jaxsched.envs.rlscheduler import jit_reset, jit_reset_at, jit_step
from jaxsched.envs.testing import check_env_contract
from jaxsched.errors import ConfigError
from jaxsched.sim import oracle as O
from jaxsched.workload import parse_swf, read_swf, reference_starts

C = 1.0 - 1e-5

# jitted once for every env configuration (the env is an argument: its trace data are leaves)
RESET_AT, RESET, STEP = jit_reset_at, jit_reset, jit_step
METRIC = jax.jit(lambda env, state: (env.metric_value(state), env.terminal_reward(state)))


# ----------------------------------------------------------------------------------------------
# Plain-Python observation builder (spec §2.9, written independently of the env)
# ----------------------------------------------------------------------------------------------
def _log10(x: float) -> float:
    return math.log10(x) if x > 0 else -math.inf


def _norm_id(v: int, vmax: int) -> float:
    if v == -1:
        return 1.0
    return min(float(v) / float(vmax), C) if vmax else 0.0


def py_observation(view, jobs, start: int, max_queue: int, cutoff: str, user_feature=False):
    """(obs float32 [max_queue, 8], visible job list) at an oracle decision ``view``.
    ``jobs`` is the whole trace, ``start`` the sequence's first trace index. With
    ``user_feature``: [max_queue, 9], :func:`py_user_info` before "can run now"."""
    s, q, n = view.submit, view.req_time, view.procs
    queue = sorted(view.queue, key=lambda j: (s[j], j))
    if len(queue) <= max_queue:
        visible = queue
    elif cutoff == "fcfs":
        visible = queue[:max_queue]
    else:

        def f2(j):
            return math.sqrt(q[j]) * n[j] + 25600 * _log10(s[j])

        def f1(j):
            return _log10(q[j] if q[j] > 0 else 0.1) * n[j] + 870 * _log10(
                s[j] if s[j] > 0 else 0.1
            )

        l1 = sorted(queue, key=lambda j: (q[j], s[j], f2(j), f1(j), j))[:max_queue]
        l2 = sorted(queue, key=lambda j: (n[j], s[j], q[j], f2(j), f1(j), j))[:max_queue]
        visible, i = [], 0
        while len(visible) < max_queue:
            for cand in (l1[i], l2[i]):
                if cand not in visible and len(visible) < max_queue:
                    visible.append(cand)
            i += 1
    rows = []
    for j in visible:
        g = start + j
        rows.append(
            [
                min((view.t - s[j]) / 43200, C),
                min(q[j] / jobs.max_exec_time, C),
                min(n[j] / jobs.num_procs, C),
                _norm_id(int(jobs.req_mem[g]), jobs.max_req_mem),
                _norm_id(int(jobs.user[g]), jobs.max_user),
                _norm_id(int(jobs.group[g]), jobs.max_group),
                _norm_id(int(jobs.executable[g]), jobs.max_executable),
                C if view.nodes[j] <= view.free_nodes else 1e-5,
            ]
        )
    rows += [[0, 1, 1, 1, 1, 1, 1, 0]] * (max_queue - len(visible))
    rows = np.asarray(rows, np.float64)
    if user_feature:  # the padding row has 1 there
        info = py_user_info(view, jobs, start, visible)
        rows = np.insert(rows, 7, info + [1.0] * (max_queue - len(visible)), axis=1)
    return rows.astype(np.float32), visible


def py_user_info(view, jobs, start: int, visible) -> list[float]:
    """The reference's ninth feature, written as HPCEnvFair computes it: per user, the mean
    bounded slowdown of its jobs started so far (a dict in start order), then for each visible
    job 1 - its user's mean / the largest mean (1 if its user has no started job)."""
    s, r = view.submit, view.run
    tot, cnt = {}, {}
    for j in sorted((j for j in range(len(s)) if view.starts[j] >= 0), key=view.starts.__getitem__):
        u = int(jobs.user[start + j])
        score = max(1.0, (view.starts[j] - s[j] + r[j]) / max(r[j], 10))
        tot[u] = tot.get(u, 0.0) + score
        cnt[u] = cnt.get(u, 0) + 1
    pus = {u: tot[u] / cnt[u] for u in tot}
    out = []
    for j in visible:
        u = int(jobs.user[start + j])
        if u not in pus or max(pus.values()) == 0:
            out.append(1.0)
        else:
            out.append(1.0 - pus[u] / max(pus.values()))
    return out


# ----------------------------------------------------------------------------------------------
# Traces
# ----------------------------------------------------------------------------------------------
LUBLIN = read_swf(ROOT / "traces" / "lublin-1.swf").jobs("rlscheduler")
L_LUB = 64
L_SYN = 24
MQ_SYN = 6

# jobs 0..23 of the synthetic trace: (submit, run, req_time, procs); job 0 fills the machine
# (16 nodes x 2 processors), job 1 waits for it while jobs 2..23 arrive, so the decision at
# t = 6000 sees 22 waiting jobs.  Expected visible jobs with max_queue = 6:
#   L1 (q, s, f2, f1, idx): 12, 11 (q = 0: F1 puts the wider job first), 5, 8, 4, 10
#   L2 (n, s, q, ...):      6, 7, 10, 3, 9, 11
#   interleave: 12, 6, 11, 7, 5, 10
HAND = [
    (1000, 5000, 5000, 32),
    (1001, 100, 100, 2),
    (1002, 400, 500, 8),
    (1002, 600, 500, 2),
    (1003, 90, 100, 16),
    (1004, 50, 50, 4),
    (1005, 800, 900, 1),
    (1005, 800, 900, 1),
    (1006, 60, 50, 4),
    (1007, 1500, 2000, 2),
    (1008, 300, 300, 1),
    (1009, 5, 0, 3),
    (1009, 5, 0, 6),
]
HAND += [(1010 + i, 5000 + 300 * i, 5000 + 400 * i, 20 + i) for i in range(11)]
HAND_REF = [12, 6, 11, 7, 5, 10]
HAND_FCFS = [2, 3, 4, 5, 6, 7]


def synthetic_swf(n_random: int = 150, seed: int = 3) -> str:
    rng = np.random.default_rng(seed)
    lines = ["; MaxNodes: 16", "; MaxProcs: 32"]
    rows = list(HAND)
    t = 1100
    for _ in range(n_random):
        t += int(rng.choice([0, 0, 5, 30, 120, 400]))
        run = int(rng.integers(10, 3000))
        req = int(max(1, run * rng.choice([0.5, 1.0, 1.0, 2.0, 3.0])))
        rows.append((t, run, req, int(rng.integers(1, 33))))
    for i, (s, r, q, n) in enumerate(rows):
        mem = -1 if i % 5 == 0 else int(rng.integers(0, 4096))
        user = -1 if i % 7 == 0 else int(rng.integers(1, 20))
        group = -1 if i % 4 == 0 else int(rng.integers(1, 6))
        exe = -1 if i % 3 == 0 else int(rng.integers(1, 50))
        lines.append(
            f"{i + 1} {s} -1 {r} {n} -1 {mem} {n} {q} {mem} 1 {user} {group} {exe} 1 1 -1 -1"
        )
    return "\n".join(lines) + "\n"


SYN = parse_swf(synthetic_swf()).jobs("rlscheduler")


@pytest.fixture(scope="module")
def lub_envs():
    return {
        (c, b): RLSchedulerEnv(LUBLIN, length=L_LUB, backfill=b, compat=c)
        for c, b in [(True, "none"), (True, "rlscheduler"), (False, "easy")]
    }


@pytest.fixture(scope="module")
def syn_envs():
    return {
        (b, cut): RLSchedulerEnv(SYN, length=L_SYN, backfill=b, max_queue=MQ_SYN, cutoff=cut)
        for b in ("none", "rlscheduler")
        for cut in ("reference", "fcfs")
    }


# ----------------------------------------------------------------------------------------------
# Lockstep driver
# ----------------------------------------------------------------------------------------------
def assert_obs_equal(got, want, user_feature: bool, msg=""):
    """Observations equal exactly; the per-user feature (column 7) to float rounding (its
    sums come in another order than the reference's)."""
    assert got.dtype == np.float32 and got.shape == want.shape
    if not user_feature:
        np.testing.assert_array_equal(got, want, err_msg=msg)
        return
    np.testing.assert_array_equal(np.delete(got, 7, axis=1), np.delete(want, 7, axis=1), msg)
    np.testing.assert_allclose(got[:, 7], want[:, 7], rtol=1e-6, atol=1e-7, err_msg=msg)


def drive(env, jobs, start, backfill, compat, pick, cutoff="reference", obs_log=None):
    """Play one episode in the env and the oracle side by side; ``pick(visible, rng_state)``
    returns the observation slot to choose.  Returns (oracle starts, final state, last
    timestep, list of visible-job lists, number of decisions with a cut-off); ``obs_log``
    (a list) gets every observation."""
    L, MQ = env.length, env.max_queue
    w = jobs.window(start, L)
    st, ts = RESET_AT(env, start)
    assert int(ts.step_type) == FIRST and float(ts.discount) == 1.0
    box = {"st": st, "ts": ts, "cut": 0}
    seen = []

    def choose(view):
        st, ts = box["st"], box["ts"]
        box["cut"] += len(view.queue) > MQ
        assert not bool(ts.last()) and float(ts.reward) == 0.0 and float(ts.discount) == 1.0
        want, visible = py_observation(view, jobs, start, MQ, cutoff, env.user_feature)
        got = np.asarray(ts.observation.obs)
        assert got.shape == env.obs_shape
        assert_obs_equal(got, want, env.user_feature, f"t={view.t} queue={view.queue}")
        if obs_log is not None:
            obs_log.append(got)
        mask = np.asarray(ts.observation.mask)
        assert mask.tolist() == [i < len(visible) for i in range(MQ)]
        assert_obs_equal(np.asarray(ts.observation.critic_obs), want, env.user_feature)
        vj = np.asarray(env.visible_jobs(st))
        assert vj[: len(visible)].tolist() == visible and (vj[len(visible) :] == -1).all()
        a = pick(visible)
        box["st"], box["ts"] = STEP(env, st, a)
        seen.append(visible)
        return visible[a]

    starts = O.simulate_with_choices(
        w.submit,
        w.run,
        w.req_time,
        w.procs,
        num_nodes=jobs.num_nodes,
        procs_per_node=jobs.procs_per_node,
        choose=choose,
        backfill=backfill,
        compat=compat,
    )
    st, ts = box["st"], box["ts"]
    assert bool(ts.last()) and float(ts.discount) == 0.0
    assert int(st.sim.overflow) == 0
    assert np.asarray(st.sim.start).tolist() == starts
    assert int(ts.extras["decisions"]) == len(seen)
    return starts, st, ts, seen, box["cut"]


def random_picker(seed):
    rng = np.random.default_rng(seed)
    return lambda visible: int(rng.integers(len(visible)))


def oracle_metrics(jobs, start, L, starts, compat=True):
    w = jobs.window(start, L)
    return O.metrics(
        w.submit, w.run, w.procs, starts, num_procs=jobs.num_procs, compat=compat, users=w.user
    )


# ----------------------------------------------------------------------------------------------
# 1. Observations and schedules == the oracle + the Python builder
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "compat, backfill", [(True, "none"), (True, "rlscheduler"), (False, "easy")]
)
def test_lublin_random_choices_match_oracle(lub_envs, compat, backfill):
    env = lub_envs[(compat, backfill)]
    n_dec = 0
    for k, start in enumerate((1981, 4299)):
        starts, st, ts, seen, _ = drive(
            env, LUBLIN, start, backfill, compat, random_picker(10 * k + len(backfill))
        )
        # the running list has the trace's bound (jaxsched.workload.capacity), below
        # min(L, nodes) = 64: drive's no-overflow and oracle checks hold at that capacity
        assert st.sim.run_job.shape == (58,)
        bsld = oracle_metrics(LUBLIN, start, L_LUB, starts, compat)["bsld"]
        assert float(ts.extras["metric"]) == pytest.approx(bsld, rel=1e-12)
        assert float(ts.reward) == pytest.approx(-bsld, rel=1e-6)
        assert ts.reward.dtype == jnp.float32
        assert int(ts.extras["start"]) == start
        n_dec += len(seen)
        assert sum(len(v) > 1 for v in seen) >= 3, "too few non-trivial decisions"
    assert n_dec >= 30


@pytest.mark.parametrize("backfill", ["none", "rlscheduler"])
@pytest.mark.parametrize("cutoff", ["reference", "fcfs"])
def test_synthetic_random_choices_with_cutoff(syn_envs, backfill, cutoff):
    env = syn_envs[(backfill, cutoff)]
    cuts = 0
    for k, start in enumerate((0, 30, 70, 110)):
        starts, st, ts, seen, cut = drive(env, SYN, start, backfill, True, random_picker(k), cutoff)
        cuts += cut
        bsld = oracle_metrics(SYN, start, L_SYN, starts)["bsld"]
        assert float(ts.extras["metric"]) == pytest.approx(bsld, rel=1e-12)
    assert cuts >= 5, "the cut-off rule was hardly exercised"


# ----------------------------------------------------------------------------------------------
# 2. Hand-computed cut-off
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cutoff, expected", [("reference", HAND_REF), ("fcfs", HAND_FCFS)])
def test_hand_cutoff(syn_envs, cutoff, expected):
    env = syn_envs[("none", cutoff)]
    st, ts = RESET_AT(env, 0)
    st, ts = STEP(env, st, 0)  # job 0 starts, job 1 arrives
    assert np.asarray(env.visible_jobs(st))[:2].tolist() == [1, -1]
    st, ts = STEP(env, st, 0)  # job 1 waits for job 0; jobs 2..23 arrive
    assert int(st.sim.t) == 6000 and int(st.sim.n_queued) == 22
    assert np.asarray(env.visible_jobs(st)).tolist() == expected
    assert np.asarray(ts.observation.mask).all()
    # wait feature of job 2 (submitted at 1002): (6000 - 1002) / 43200
    obs = np.asarray(ts.observation.obs)
    row = expected.index(5)
    assert obs[row, 0] == np.float32(4996 / 43200)
    assert obs[row, 2] == np.float32(4 / 32)  # processors / MaxProcs
    assert obs[row, 7] == np.float32(C)  # 2 of 16 nodes fit in 15 free
    # choosing slot 2 schedules the job shown there
    st2, _ = STEP(env, st, 2)
    assert int(st2.sim.start[expected[2]]) == 6000


# ----------------------------------------------------------------------------------------------
# 3. Mask, padding, masked actions
# ----------------------------------------------------------------------------------------------
def test_mask_padding_and_masked_action(lub_envs):
    env = lub_envs[(True, "none")]
    st, ts = RESET_AT(env, 1981)
    obs, mask = np.asarray(ts.observation.obs), np.asarray(ts.observation.mask)
    assert mask.tolist() == [True] + [False] * 127
    pad = np.asarray([0, 1, 1, 1, 1, 1, 1, 0], np.float32)
    assert (obs[1:] == pad).all() and not (obs[0] == pad).all()
    # drive until at least 3 jobs wait, then compare a masked action with slot 0
    for _ in range(40):
        if int(np.asarray(ts.observation.mask).sum()) >= 3:
            break
        st, ts = STEP(env, st, 0)
    n = int(np.asarray(ts.observation.mask).sum())
    assert n >= 3
    m = np.asarray(ts.observation.mask)
    assert m[:n].all() and not m[n:].any()
    ref = STEP(env, st, 0)
    for bad in (n, 127, 500, -1):
        out = STEP(env, st, bad)
        for x, y in zip(jax.tree_util.tree_leaves(ref), jax.tree_util.tree_leaves(out)):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# ----------------------------------------------------------------------------------------------
# 4. FCFS and metrics
# ----------------------------------------------------------------------------------------------
def play(env, start, action=0):
    st, ts = RESET_AT(env, start)
    while not bool(ts.last()):
        st, ts = STEP(env, st, action)
    return st, ts


@pytest.mark.parametrize("backfill", ["none", "rlscheduler"])
def test_slot_zero_is_fcfs(lub_envs, syn_envs, backfill):
    env = lub_envs[(True, backfill)]
    for start in (2756, 8850):
        st, ts = play(env, start)
        w = LUBLIN.window(start, L_LUB)
        want = O.simulate(
            w.submit,
            w.run,
            w.req_time,
            w.procs,
            num_nodes=LUBLIN.num_nodes,
            procs_per_node=LUBLIN.procs_per_node,
            policy="fcfs",
            backfill=backfill,
            compat=True,
        )
        assert np.asarray(st.sim.start).tolist() == want
        bsld = oracle_metrics(LUBLIN, start, L_LUB, want)["bsld"]
        assert float(ts.reward) == pytest.approx(-bsld, rel=1e-6)
    # small max_queue: FCFS cut-off keeps FCFS, the reference cut-off does not
    w = SYN.window(0, L_SYN)
    want = O.simulate(
        w.submit,
        w.run,
        w.req_time,
        w.procs,
        num_nodes=SYN.num_nodes,
        procs_per_node=SYN.procs_per_node,
        policy="fcfs",
        backfill=backfill,
        compat=True,
    )
    st, _ = play(syn_envs[(backfill, "fcfs")], 0)
    assert np.asarray(st.sim.start).tolist() == want
    st, _ = play(syn_envs[(backfill, "reference")], 0)
    assert np.asarray(st.sim.start).tolist() != want


def test_every_metric_reward_matches_oracle(lub_envs, syn_envs):
    start = 4022
    env = lub_envs[(True, "rlscheduler")]
    st, ts = play(env, start, action=1)  # slot 1 when it exists, else slot 0
    starts = np.asarray(st.sim.start).tolist()
    want = oracle_metrics(LUBLIN, start, L_LUB, starts)
    assert want["bsld"] > 1.5  # the sequence has real waiting
    for metric in ("bsld", "wait", "util", "sld"):
        e = RLSchedulerEnv(LUBLIN, length=L_LUB, backfill="rlscheduler", metric=metric)
        value, reward = (float(x) for x in METRIC(e, st))
        assert value == pytest.approx(want[metric], rel=1e-12), metric
        sign = 1.0 if metric == "util" else -1.0
        assert reward == pytest.approx(sign * want[metric], rel=1e-6), metric
    assert float(ts.reward) == float(env.terminal_reward(st))  # what the last step paid
    # fairness with real user ids (synthetic trace): max over users of the mean bsld
    st_s, _ = play(syn_envs[("rlscheduler", "reference")], 60, action=1)
    want_s = oracle_metrics(SYN, 60, L_SYN, np.asarray(st_s.sim.start).tolist())
    assert len(set(SYN.window(60, L_SYN).user.tolist())) > 5
    assert want_s["fairness"] > want_s["bsld"]
    e = RLSchedulerEnv(SYN, length=L_SYN, max_queue=MQ_SYN, metric="fairness")
    value, reward = (float(x) for x in METRIC(e, st_s))
    assert value == pytest.approx(want_s["fairness"], rel=1e-12)
    assert reward == pytest.approx(-want_s["fairness"], rel=1e-6)
    # a step on a finished episode changes nothing and pays nothing
    again, ts2 = STEP(env, st, 0)
    assert bool(ts2.last()) and float(ts2.reward) == 0.0 and float(ts2.discount) == 0.0
    for x, y in zip(jax.tree_util.tree_leaves(again), jax.tree_util.tree_leaves(st)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# ----------------------------------------------------------------------------------------------
# 5. vmap, scan, auto-reset, jit, sampling, recompilation
# ----------------------------------------------------------------------------------------------
def greedy_policy(obs):
    """Deterministic test policy: the visible job with the smallest requested time."""
    return jnp.argmin(jnp.where(obs.mask, obs.obs[:, 1], jnp.inf)).astype(jnp.int32)


T_SCAN = 40


@pytest.mark.parametrize("n_env", [4, pytest.param(12, marks=pytest.mark.extended)])  # 12: test-all
def test_vmap_autoreset_scan_equals_loop(syn_envs, n_env):
    """``n_env`` envs (max_queue 6, so the cut-off happens inside) under vmap, auto-reset
    inside a scan of T_SCAN steps == each env stepped alone in a Python loop, resetting by
    hand with ``reset(state.key)`` (what the wrapper does); every finished episode's reward
    == the oracle's metric of the schedule. With 12 envs the wrapper resets the few rows
    that finish at a step on a gathered chunk (``sparse_cond``; 4 envs: the whole batch)."""
    env = syn_envs[("rlscheduler", "reference")]
    wrapped = AutoResetWrapper(env)

    @jax.jit
    def rollout(env, keys):
        def one(key):
            st, ts = env.reset(key)

            def body(carry, _):
                st, ts = carry
                a = greedy_policy(ts.observation)
                st, ts = env.step(st, a)
                return (st, ts), (
                    a,
                    ts.reward,
                    ts.discount,
                    ts.step_type,
                    ts.extras["start"],
                    ts.extras["metric"],
                    ts.observation.obs,
                    st.start,
                    st.sim.n_queued,
                )

            return jax.lax.scan(body, (st, ts), None, length=T_SCAN)[1]

        return jax.vmap(one)(keys)

    keys = jax.random.split(jax.random.PRNGKey(7), n_env)
    out = rollout(wrapped, keys)
    acts, rews, discs, types, starts, mets, obs, st_starts, n_q = (np.asarray(x) for x in out)
    if n_env > 8:  # some step ends between 1 and 8 episodes: the gathered reset ran
        ends = (types == LAST).sum(axis=0)
        assert ((ends >= 1) & (ends <= 8)).any()
    pol = jax.jit(greedy_policy)
    episodes = 0
    for b in range(n_env):
        st, ts = RESET(env, keys[b])
        for t in range(T_SCAN):
            a = int(pol(ts.observation))
            assert a == acts[b, t]
            st, ts = STEP(env, st, a)
            assert float(ts.reward) == rews[b, t] and int(ts.step_type) == types[b, t]
            assert float(ts.discount) == discs[b, t]
            assert int(ts.extras["start"]) == starts[b, t]
            if bool(ts.last()):
                episodes += 1
                assert discs[b, t] == 0.0
                assert mets[b, t] > 0 and rews[b, t] == np.float32(-mets[b, t])
                w = SYN.window(int(st.start), L_SYN)
                want = O.metrics(
                    w.submit,
                    w.run,
                    w.procs,
                    np.asarray(st.sim.start),
                    num_procs=SYN.num_procs,
                    compat=True,
                )["bsld"]
                assert mets[b, t] == pytest.approx(want, rel=1e-12)
                # the terminal timestep carries the next episode's first observation
                st, ts = RESET(env, st.key)
                assert int(ts.extras["decisions"]) == 0 and int(st.sim.n_queued) == 1
            else:
                assert rews[b, t] == 0.0 and types[b, t] == MID and discs[b, t] == 1.0
            np.testing.assert_array_equal(np.asarray(ts.observation.obs), obs[b, t])
            assert int(st.start) == st_starts[b, t]
    assert episodes >= 4, "too few episodes ended inside the scan"
    assert (n_q > MQ_SYN).any(), "the cut-off never happened"
    lo, hi = env.start_range
    assert ((starts >= lo) & (starts < hi)).all()


@pytest.mark.parametrize(
    "backfill, compat, cutoff",
    [("none", True, "reference"), ("rlscheduler", True, "reference"), ("easy", False, "fcfs")],
)
def test_env_contract(backfill, compat, cutoff):
    """The contract checks (jaxsched/envs/testing.py) on 8-job sequences of the synthetic
    trace with 6 observation slots (start 0 overflows them: the cut-off), with and without
    backfilling."""
    env = RLSchedulerEnv(
        SYN, length=8, backfill=backfill, compat=compat, max_queue=MQ_SYN, cutoff=cutoff
    )
    info = check_env_contract(env, starts=[0, 5, 40], batch=3, num_steps=12)
    assert info["episodes_ended"] >= 3


def test_jit_equals_no_jit(syn_envs):
    """The env's own computations op by op (``jax.disable_jit``) == compiled: the observation
    (sorts, the interleaved cut-off, float64 features) with and without a cut-off, and the
    reward.  (Running the engine's ``schedule`` op by op costs ~10 s; it is compared with its
    compiled form in tests/test_engine.py.)"""
    senv = syn_envs[("none", "reference")]
    st1, ts1 = RESET_AT(senv, 0)
    st1, ts1 = STEP(senv, st1, 0)
    st2, ts2 = STEP(senv, st1, 0)
    assert int(st1.sim.n_queued) == 1 and int(st2.sim.n_queued) > MQ_SYN
    fin, fts = play(senv, 0, action=1)
    with jax.disable_jit():
        eager = [senv.recompute_observation(st1), senv.recompute_observation(st2)]
        vis = senv.visible_jobs(st2)
        reward = senv.terminal_reward(fin)
    for e, ts in zip(eager, (ts1, ts2)):
        np.testing.assert_array_equal(np.asarray(e.obs), np.asarray(ts.observation.obs))
        np.testing.assert_array_equal(np.asarray(e.mask), np.asarray(ts.observation.mask))
    assert np.asarray(vis).tolist() == HAND_REF
    assert float(reward) == float(fts.reward) != 0.0


def test_reset_samples_the_reference_range(syn_envs):
    env = RLSchedulerEnv(SYN, length=L_SYN, max_queue=MQ_SYN, job_slice=2 * L_SYN + 5)
    assert env.start_range == (L_SYN, L_SYN + 4)
    got = set()
    for key in jax.random.split(jax.random.PRNGKey(0), 60):
        st, ts = RESET(env, key)
        got.add(int(st.start))
        assert int(ts.step_type) == FIRST and int(np.asarray(ts.observation.mask).sum()) == 1
    assert got == {24, 25, 26, 27}
    lo, hi = syn_envs[("none", "reference")].start_range
    assert (lo, hi) == (L_SYN, SYN.n_jobs - L_SYN - 1)
    with pytest.raises(ConfigError):
        RLSchedulerEnv(SYN, length=L_SYN, job_slice=2 * L_SYN + 1).reset(jax.random.PRNGKey(0))
    with pytest.raises(ConfigError):
        RLSchedulerEnv(SYN, length=L_SYN).reset_at(SYN.n_jobs - L_SYN + 1)
    with pytest.raises(ConfigError):
        RLSchedulerEnv(SYN, backfill="easy", compat=True)
    with pytest.raises(ConfigError):
        RLSchedulerEnv(SYN, cutoff="random")
    with pytest.raises(ConfigError):
        RLSchedulerEnv(SYN, metric="nope")


def test_no_recompilation_across_modes(lub_envs, syn_envs, count_compilations):
    envs = list(lub_envs.values())
    st, _ = RESET_AT(envs[0], 1981)
    STEP(envs[0], st, 0)
    st_s, _ = RESET_AT(syn_envs[("none", "reference")], 30)
    STEP(syn_envs[("none", "reference")], st_s, 0)
    with count_compilations() as c:
        for e in envs[1:]:
            st, _ = RESET_AT(e, 1981)
            jax.block_until_ready(STEP(e, st, 0))
        for e in syn_envs.values():
            st, _ = RESET_AT(e, 30)
            jax.block_until_ready(STEP(e, st, 0))
    assert c.n == 0, c.names


# ----------------------------------------------------------------------------------------------
# 6. Gymnasium wrapper (optional dependency; a minimal stand-in is used when it is missing)
# ----------------------------------------------------------------------------------------------
def _gym_module(monkeypatch):
    try:
        import gymnasium  # noqa: F401
    except ImportError:
        stub = types.ModuleType("gymnasium")

        class Env:
            def reset(self, *, seed=None, options=None):
                return None

        stub.Env = Env
        stub.spaces = types.SimpleNamespace(
            Box=lambda **kw: ("Box", kw),
            Discrete=lambda n: ("Discrete", n),
            MultiBinary=lambda n: ("MultiBinary", n),
            Dict=lambda d: ("Dict", d),
        )
        monkeypatch.setitem(sys.modules, "gymnasium", stub)
        monkeypatch.delitem(sys.modules, "jaxsched.envs.gym", raising=False)
    return importlib.import_module("jaxsched.envs.gym")


def test_gymnasium_wrapper(lub_envs, monkeypatch):
    gym_mod = _gym_module(monkeypatch)
    env = gym_mod.RLSchedulerGymEnv(lub_envs[(True, "rlscheduler")])
    want_starts = reference_starts(1, 2, L_LUB, LUBLIN.n_jobs).tolist()
    obs, info = env.reset(seed=1)
    assert info["start"] == want_starts[0]  # the reference's draw for env.seed(1)
    assert obs["obs"].shape == (128, 8) and obs["mask"].sum() == 1
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(0)
        assert not truncated
        total += reward
        steps += 1
        if not terminated:
            assert reward == 0.0
            assert env.action_masks().tolist() == obs["mask"].astype(bool).tolist()
    w = LUBLIN.window(want_starts[0], L_LUB)
    fcfs = O.simulate(
        w.submit,
        w.run,
        w.req_time,
        w.procs,
        num_nodes=LUBLIN.num_nodes,
        procs_per_node=LUBLIN.procs_per_node,
        policy="fcfs",
        backfill="rlscheduler",
        compat=True,
    )
    bsld = oracle_metrics(LUBLIN, want_starts[0], L_LUB, fcfs)["bsld"]
    assert total == pytest.approx(-bsld, rel=1e-6) and info["metric"] == pytest.approx(bsld)
    with pytest.raises(RuntimeError):
        env.step(0)
    _, info = env.reset()
    assert info["start"] == want_starts[1]  # the stream continues
    _, info = env.reset(options={"start": 123})
    assert info["start"] == 123


# ----------------------------------------------------------------------------------------------
# 6. The fairness environment's per-user feature (HPCEnvFair, spec §3)
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backfill", ["none", "rlscheduler"])
def test_user_feature_matches_the_reference_formula(backfill):
    env = RLSchedulerEnv(
        SYN, length=L_SYN, backfill=backfill, max_queue=MQ_SYN, metric="fairness", user_feature=True
    )
    assert env.obs_shape == (MQ_SYN, 9) and env.user_feature
    log = []
    for k, start in enumerate((30, 70, 110)):
        drive(env, SYN, start, backfill, True, random_picker(100 + k), obs_log=log)
    informative = sum(int(np.sum((o[:, 7] > 0.0) & (o[:, 7] < 1.0))) for o in log)
    assert informative >= 10, "the feature was hardly ever strictly between 0 and 1"


def test_user_feature_hand_case():
    # user 0's started job waited (bsld 3), user 1's did not (bsld 1): user 0 is the worst;
    # user 2 has no started job
    from jaxsched.envs.rlscheduler_features import user_info

    users = jnp.asarray([0, 1, 0, 1, 2], jnp.int32)
    submit = jnp.asarray([0, 0, 0, 0, 0], jnp.int64)
    run = jnp.asarray([100, 100, 50, 100, 100], jnp.int64)
    started = jnp.asarray([200, 0, -1, -1, -1], jnp.int64)
    got = user_info(users, submit, run, started, jnp.asarray([0, 1, 2], jnp.int32), 3)
    np.testing.assert_allclose(np.asarray(got), [0.0, 1.0 - 1.0 / 3.0, 1.0])
    nothing = user_info(users, submit, run, jnp.full(5, -1, jnp.int64), users[:3], 3)
    np.testing.assert_array_equal(np.asarray(nothing), [1.0, 1.0, 1.0])
