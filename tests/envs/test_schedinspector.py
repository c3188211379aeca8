"""SchedInspector: base keys (spec §4), the rejection transition (§3.3), the environment
(§3.2–3.6) and always-accept == the base scheduler (§11).

Hand cases are computed on paper in the comments; the base orders against a plain-Python sort;
the device keys against the host's exact ones. One small environment configuration (length 4)
carries the contract check and the hand case; a second (length 12) the always-accept check of
all 16 bases × 2 backfilling modes in one vmapped call.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsched.sim  # noqa: F401
from jaxsched.envs.schedinspector import (
    SchedInspectorEnv,
    jit_features,
    jit_final,
    jit_reset_at,
    jit_step,
)
from jaxsched.envs.testing import check_env_contract
from jaxsched.errors import ConfigError
from jaxsched.policies import inspector_bases as B
from jaxsched.sim import engine as E
from jaxsched.sim import inspect as I
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload.schedinspector import inspector_jobs
from jaxsched.workload.swf import parse_swf


def swf(rows, procs=4, wait=None) -> str:
    """SWF text of ``rows`` = [(submit, run, procs), ...] on ``procs`` one-processor nodes."""
    lines = [f"; MaxNodes: {procs}", f"; MaxProcs: {procs}"]
    for i, (s, r, n) in enumerate(rows):
        w = 0 if wait is None else wait[i]
        lines.append(f"{i + 1} {s} {w} {r} {n} -1 -1 {n} {r} -1 1 1 1 1 1 1 -1 -1")
    return "\n".join(lines) + "\n"


# The hand case (4 nodes): j0..j3 form the sequence, j4 is the job after it (its submit time
# is what the reference's rejection rule reads once all sequence jobs arrived, §3.3), the
# rest pads the trace so that reset(key) can sample (starts in [4, 7)).
HAND = [(0, 1000, 3), (100, 1000, 2), (2000, 10, 1), (2000, 50, 4), (5000, 10, 1)]
PAD = [(6000 + 100 * i, 10 + i, 1 + i % 4) for i in range(7)]


@pytest.fixture(scope="module")
def hand_env():
    jobs, wait = inspector_jobs(parse_swf(swf(HAND + PAD)))
    return SchedInspectorEnv(jobs, base="fcfs", length=4, swf_wait=wait, job_slice=0)


# ----------------------------------------------------------------------------------------------
# Base keys
# ----------------------------------------------------------------------------------------------
def _python_order(name, s, q, n, w, P):
    """Plain-Python (key, index) order of the spec §4 table."""
    pos = lambda x: x if x > 0 else 0.1  # noqa: E731
    keys = {
        "fcfs": lambda i: (s[i],),
        "lcfs": lambda i: (-s[i],),
        "sqf": lambda i: (n[i], s[i]),
        "lqf": lambda i: (-n[i],),
        "sjf": lambda i: (q[i], n[i]),
        "ljf": lambda i: (-q[i],),
        "saf": lambda i: (q[i] * n[i],),
        "laf": lambda i: (-q[i] * n[i],),
        "sexp": lambda i: ((-1 - s[i] + q[i]) / n[i],),
        "lexp": lambda i: (-(-1 - s[i] + q[i]) / n[i],),
        "srf": lambda i: (q[i] / n[i],),
        "lrf": lambda i: (-q[i] / n[i],),
        "multifactor": lambda i: (-(1000 * w[i] / 43200 + 1000 * (1 - n[i] / P)),),
        "f1": lambda i: (math.log10(pos(q[i])) * n[i] + 870 * math.log10(pos(s[i])),),
        "wfp3": lambda i: (-(((-1 - s[i]) / q[i]) ** 3) * n[i],),
        "unicep": lambda i: (-((-1 - s[i]) + 1e-15) / (math.log2(n[i] + 1e-15) * q[i]),),
        # the extension's codes 16-18: RLScheduler's F2-F4
        "f2": lambda i: (math.sqrt(q[i]) * n[i] + 25600 * math.log10(s[i]),),
        "f3": lambda i: (q[i] * n[i] + 6860000 * math.log10(s[i]),),
        "f4": lambda i: (q[i] * math.sqrt(n[i]) + 530000 * math.log10(s[i]),),
    }[name]
    return sorted(range(len(s)), key=lambda i: (*keys(i), i))


def test_base_keys_match_plain_python_and_device():
    rng = np.random.default_rng(3)
    M, P = 40, 64
    s = np.sort(rng.integers(1, 5000, M))
    q = rng.choice([10, 60, 60, 300, 1000, 3600], M)
    n = rng.choice([1, 2, 2, 4, 8, 32, 64], M)
    w = rng.integers(0, 9000, M)
    assert B.BASES[4] == "sjf" and B.BASES[13] == "f1" and B.BASES[16:] == ("f2", "f3", "f4")
    assert len(B.BASES) == 19 and B.REFERENCE_BASES == 16
    dev = jax.jit(lambda c: B.device_keys(c, *map(jnp.asarray, (s, q, n, w)), float(P)))
    for code, name in enumerate(B.BASES):
        rank = B.trace_rank(name, s, q, n, w, P)
        want = _python_order(name, *(x.tolist() for x in (s, q, n, w)), P)
        assert np.argsort(rank).tolist() == want, name
        k1, k2 = (np.asarray(k) for k in dev(jnp.int32(code)))
        assert np.lexsort((np.arange(M), k2, k1)).tolist() == want, name
    # SJF's tie rule differs from RLScheduler's: (q, n) here
    r = B.trace_rank("sjf", [0, 1], [5, 5], [4, 2])
    assert r.tolist() == [1, 0]
    assert B.base_code("smallest") == 2 and B.base_code(12) == 12 and B.base_code("7") == 7
    with pytest.raises(ConfigError, match="unknown base"):
        B.base_code("nope")
    with pytest.raises(ConfigError, match="multifactor base needs"):
        B.host_base_keys("multifactor", s, q, n)


def test_inspector_parse_rules():
    text = swf([(0, -1, 2), (10, 0, 1), (20, 50, 1)])
    jobs, wait = inspector_jobs(parse_swf(text))
    assert jobs.run.tolist() == [10, 0, 50]  # -1 -> 10, zero kept
    assert jobs.req_time.tolist() == jobs.run.tolist()  # compat: q := r
    assert jobs.max_exec_time == 50 and wait.tolist() == [0, 0, 0]
    paper, _ = inspector_jobs(parse_swf(text), "paper")
    assert paper.req_time.tolist() == [-1, 0, 50]  # the SWF estimate (field 9)
    with pytest.raises(ConfigError, match="unknown SchedInspector mode"):
        inspector_jobs(parse_swf(text), "other")


# ----------------------------------------------------------------------------------------------
# The rejection transition and the environment, by hand
# ----------------------------------------------------------------------------------------------
# FCFS base, actions below (0 accept, 1 reject); t, free after each step:
#  1 A j0 starts 0 (→1000); queue empty → j1 arrives       t=100   free 1
#  2 R j1: 700 < min(2000, 1000)          wait             t=700
#  3 R j1: 1300 ≥ 1000                    release j0       t=1000  free 4
#  4 R j1: 1600 < min(2000, inf)          wait             t=1600
#  5 R j1: 2200 ≥ 2000                    arrival j2       t=2000
#  6 A j1 starts 2000 (→3000)                                      free 2
#  7 R j2: arrival j3 (s=2000)                             t=2000
#  8 A j2 starts 2000 (→2010)                                      free 1
#  9 R j3 (4 nodes): 2600 ≥ 2010          release j2       t=2010  free 2
# 10 R j3: 2610 < min(s_after=5000, 3000) wait             t=2610
# 11 R j3: 3210 ≥ 3000                    release j1       t=3000  free 4
# 12 R j3: nothing runs, no arrival left: frozen           t=3000
# 13 A j3 starts 3000 → done.  waits 0, 1900, 0, 1000; bsld 1, 2.9, 1, 21.
# Base FCFS alone: j1 waits for j0 (1000), j2 at 2000, j3 after j1 and j2 release at 2010:
# waits 0, 900, 0, 10; bsld 1, 1.9, 1, 1.2 → 1.275.
ACTIONS = [0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0]
CLOCK = [100, 700, 1000, 1600, 2000, 2000, 2000, 2000, 2010, 2610, 3000, 3000, 3000]
KINDS = {2: I.REJECT_WAIT, 3: I.REJECT_EVENT, 4: I.REJECT_WAIT, 5: I.REJECT_EVENT}


def test_hand_case(hand_env):
    env = hand_env
    state, ts = jit_reset_at(env, 0)
    assert ts.observation.obs.shape == (7,) and ts.observation.mask.tolist() == [True, True]
    kind = jax.jit(lambda e, s: I.reject_kind(e._sequence(s.start), s.sim, e._s_after(s.start)))
    for i, (a, t) in enumerate(zip(ACTIONS, CLOCK), 1):
        if i in KINDS:
            assert int(kind(env, state)) == KINDS[i], i
        state, ts = jit_step(env, state, jnp.int32(a))
        assert int(state.sim.t) == t, (i, int(state.sim.t))
        assert bool(ts.last()) == (i == len(ACTIONS)), i
        if i == 9:  # proposed j3 (4 nodes, 2 free): features of spec §3.4 by hand
            f = np.asarray(jit_features(env, state))
            want = [10 / 43200, 50 / 1000, 1.0 - 1e-5, 0.5, 1e-5, 600 / 43200]
            np.testing.assert_allclose(f[:6], want, rtol=1e-12)
            np.testing.assert_allclose(f[6], (600 / 50) / 7680, rtol=1e-12)
    assert state.sim.start.tolist() == [0, 2000, 2000, 3000]
    assert state.rejected.tolist() == [0, 4, 1, 4]
    ex = ts.extras
    assert int(ex["decisions"]) == 13 and int(ex["rejections"]) == 9
    assert float(ex["value"]) == pytest.approx((1 + 2.9 + 1 + 21) / 4, rel=1e-12)
    assert float(ex["base_value"]) == pytest.approx(1.275, rel=1e-12)
    assert float(ts.reward) == pytest.approx((1.275 - 6.475) / 6.475, rel=1e-6)
    vals = jit_final(env, state)[0]
    assert float(vals["wait"]) == 725.0 and float(vals["mbsld"]) == 21.0
    work = 1000 * 3 + 1000 * 2 + 10 * 1 + 50 * 4
    assert float(vals["util"]) == pytest.approx(work / (3050 * 4), rel=1e-12)


def test_quirk_reads_the_job_after_the_sequence():
    """Same case with j4 submitted at 2000 (already past at step 10): the reference then
    releases j1 instead of waiting (decisions 12, rejections 8); paper mode (no quirk) would
    wait at step 10."""
    hand = HAND[:4] + [(2000, 10, 1)] + PAD
    jobs, wait = inspector_jobs(parse_swf(swf(hand)))
    env = SchedInspectorEnv(jobs, base="fcfs", length=4, swf_wait=wait, job_slice=0)
    acts = ACTIONS[:10] + [1, 0]  # step 10 releases j1 at 3000, step 11 is frozen
    state, _ = jit_reset_at(env, 0)
    for i, a in enumerate(acts, 1):
        if i == 10:
            before = state
        state, ts = jit_step(env, state, jnp.int32(a))
        assert bool(ts.last()) == (i == len(acts)), i
    assert state.sim.start.tolist() == [0, 2000, 2000, 3000]
    assert int(ts.extras["decisions"]) == 12 and int(ts.extras["rejections"]) == 8
    seq = env._sequence(jnp.int32(0))
    assert int(I.reject_kind(seq, before.sim, jnp.int64(2000))) == I.REJECT_EVENT
    assert int(I.reject_kind(seq, before.sim, E.BIG)) == I.REJECT_WAIT
    paper = SchedInspectorEnv(jobs, base="fcfs", length=4, mode="paper", job_slice=0)
    assert int(paper._s_after(jnp.int32(0))) == int(E.BIG)
    assert jax.jit(paper.features64)(before).shape == (8,)


def test_reject_mask_after_72(hand_env):
    """Always reject under FCFS with the evaluation mask: each job is rejected exactly 72
    times, then accepted; without the mask (training) reject stays allowed."""
    env = hand_env
    state, ts = jit_reset_at(env, 0)
    masked = 0
    while not bool(ts.last()):
        masked += int(~ts.observation.mask[1])
        assert bool(ts.observation.mask[1]) == (int(state.rejected[env.proposed_job(state)]) < 72)
        state, ts = jit_step(env, state, jnp.int32(1))
    assert state.rejected.tolist() == [72] * 4 and masked == 4
    assert int(ts.extras["decisions"]) == 4 * 73 and int(ts.extras["rejections"]) == 288
    free = env.with_options(max_rejections_mask=False)
    s = state.replace(sim=jit_reset_at(env, 0)[0].sim)  # job 0 proposed, rejected 72 times
    assert not bool(jax.jit(env.observe)(s).mask[1]) and bool(jax.jit(free.observe)(s).mask[1])


def test_step_cap_ends_an_episode_with_its_reward(hand_env):
    """With a step cap (the trainer's --cap-reward), the decision that reaches it ends an
    unfinished episode with the cap reward; an episode that finishes on that very decision
    keeps its own reward; auto-reset then starts a fresh episode."""
    from jaxsched.envs import AutoResetWrapper

    capped = hand_env.with_options(step_cap=5, cap_reward=-0.75, max_rejections_mask=False)
    state, ts = jit_reset_at(capped, 0)
    for i in range(1, 6):
        state, ts = jit_step(capped, state, jnp.int32(1))
        assert bool(ts.last()) == (i == 5) and not bool(state.sim.done), i
        assert float(ts.reward) == (-0.75 if i == 5 else 0.0), i
    wrapped = AutoResetWrapper(capped)
    state, _ = jit_reset_at(capped, 0)
    for _ in range(5):
        state, ts = jax.jit(wrapped.step)(state, jnp.int32(1))
    assert bool(ts.last()) and int(state.decisions) == 0 and int(state.rejections) == 0
    # the hand case's 13 decisions with the cap at 13: it finishes there, with its own reward
    same = hand_env.with_options(step_cap=13, cap_reward=-0.75)
    state, _ = jit_reset_at(same, 0)
    for a in ACTIONS:
        state, ts = jit_step(same, state, jnp.int32(a))
    assert bool(state.sim.done) and float(ts.reward) == pytest.approx((1.275 - 6.475) / 6.475)


def test_util_weight_adds_the_relative_utilisation_change(hand_env):
    """The hand case with util_weight 2: the final reward is the ratio reward plus
    2 * (u_I - u_B) / u_B, with u_I = the hand-computed utilisation of the inspected run."""
    env = hand_env.with_options(util_weight=2.0)
    state, _ = jit_reset_at(env, 0)
    for a in ACTIONS:
        state, ts = jit_step(env, state, jnp.int32(a))
    u_i = (1000 * 3 + 1000 * 2 + 10 * 1 + 50 * 4) / (3050 * 4)
    u_b = float(jit_final(env, state)[1]["util"])
    assert u_b != u_i
    want = (1.275 - 6.475) / 6.475 + 2.0 * (u_i - u_b) / u_b
    assert float(ts.reward) == pytest.approx(want, rel=1e-6)


def test_contract(hand_env):
    out = check_env_contract(hand_env, starts=[0, 3, 7], batch=3, num_steps=12)
    assert out["episodes_ended"] >= 1


def test_bad_arguments(hand_env):
    jobs, wait = inspector_jobs(parse_swf(swf(HAND + PAD)))
    for kw, msg in (
        ({"metric": "x"}, "unknown metric"),
        ({"mode": "x"}, "unknown mode"),
        ({"reward": "x"}, "unknown reward"),
        ({"backfill": "easy"}, "'none' or 'rlscheduler'"),
        ({"length": 99}, "longer than the trace"),
    ):
        with pytest.raises(ConfigError, match=msg):
            SchedInspectorEnv(jobs, **kw)
    with pytest.raises(ConfigError, match="outside"):
        hand_env.init_state_at(20)


# ----------------------------------------------------------------------------------------------
# Always accept == the base scheduler, all 16 bases, with and without backfilling
# ----------------------------------------------------------------------------------------------
def test_always_accept_equals_base():
    rng = np.random.default_rng(7)
    M, L, P = 40, 10, 16
    s = np.sort(rng.integers(0, 900, M))
    s[10:14] = s[10]  # equal submit times
    rows = list(zip(s, rng.choice([0, 10, 50, 50, 400, 900], M), rng.choice([1, 2, 4, 8, 16], M)))
    jobs, wait = inspector_jobs(parse_swf(swf(rows, P, rng.integers(0, 500, M))))
    starts = jnp.asarray([0, 9, 30], jnp.int32)

    def accept_all(env, start):
        """Action 0 at every decision: the transition's accept path, decision by decision
        (the full step adds the reject branch and the reward, checked by the hand cases)."""
        st = env.init_state_at(start)
        seq = env._sequence(st.start)

        def body(s):
            return s.replace(sim=env._accept(seq, s.sim, env.proposed_slot(s)))

        st = jax.lax.while_loop(lambda s: ~s.sim.done, body, st)
        return env.inspected_values(st), env.base_values(st), st.sim.decisions, st.sim.start

    per_env = jax.vmap(accept_all, in_axes=(None, 0))
    f4 = {}
    for bf in ("none", "rlscheduler", "rlscheduler-sjbf"):
        envs = [
            SchedInspectorEnv(jobs, base=b, length=L, backfill=bf, swf_wait=wait, job_slice=0)
            for b in B.BASES
        ]
        stacked = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *envs)
        ins, base, dec, st = jax.jit(jax.vmap(per_env, in_axes=(0, None)))(stacked, starts)
        for k in I.VALUES:
            np.testing.assert_array_equal(np.asarray(ins[k]), np.asarray(base[k]), err_msg=k)
        assert (np.asarray(st) >= 0).all() and (np.asarray(dec) <= L).all()
        # the bases do differ (the check is not vacuous)
        assert len(np.unique(np.asarray(base["bsld"]).round(9))) > 4, bf
        # F4 (an extension's base) with each backfilling is the engine's F4 with it
        f4[bf] = np.asarray(base["bsld"])[B.BASES.index("f4")]
        res = evaluate(jobs, np.asarray(starts).tolist(), L, ["f4"], [bf], metrics=("bsld",))
        np.testing.assert_allclose(f4[bf], [r["value"] for r in res.rows], rtol=1e-12, err_msg=bf)
    assert not np.allclose(f4["rlscheduler"], f4["rlscheduler-sjbf"])  # the two orders differ
    with pytest.raises(ConfigError, match="SchedInspector backfills as the reference"):
        SchedInspectorEnv(jobs, base="f4", length=L, backfill="easy-sjbf", swf_wait=wait)
