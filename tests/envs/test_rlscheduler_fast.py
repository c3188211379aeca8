"""Tests of the RLScheduler environment's fast paths (jaxsched/envs/rlscheduler.py,
jaxsched/sim/batching.py).

1. ``schedule_nobf`` (the closed-form no-backfill transition) == the engine's ``schedule``
   with ``backfill = none``, decision by decision (same jobs chosen), on Lublin-1 windows, the
   synthetic trace of test_env_rlscheduler.py and a sequence whose submit times are not
   sorted; the state it returns keeps its layout (queue compact in index order, running jobs
   in release order with their running node sum, queue copies consistent);
2. in that layout the visible jobs (no sort without a cut-off) == the sort-based general path
   == a plain-Python rendering of spec §2.9 with the static L1/L2 ranks, small ``max_queue``
   (many cut-offs);
3. ``schedule_engine``'s batching rule (staged batch compaction) == ``vmap`` of the engine's
   ``schedule``, for rlscheduler and EASY backfilling, batch sizes that give 2 and 3 stages,
   and nested ``vmap``;
4. the env closed over by the jitted function (only its backfill mode's path compiled) ==
   the env passed as an argument (both paths behind a ``lax.cond``) == single steps, in a
   vmapped auto-reset scan, for backfill none and rlscheduler (compat);
5. ``sparse_cond``: unbatched, no row, few rows (gathered), many rows (whole batch, or chunks).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shared_data import REPO as ROOT
from test_rlscheduler import synthetic_swf  # noqa: E402

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv
from jaxsched.envs.rlscheduler import jit_reset_at, jit_step
from jaxsched.sim import engine as E
from jaxsched.sim.batching import schedule_engine, sparse_cond, stage_sizes
from jaxsched.sim.nobf import schedule_nobf
from jaxsched.workload import parse_swf, read_swf

LUBLIN = read_swf(ROOT / "traces" / "lublin-1.swf").jobs("rlscheduler")
SYN = parse_swf(synthetic_swf()).jobs("rlscheduler")

NONE = E.SimParams(
    policy=jnp.asarray(0, jnp.int32), backfill=jnp.asarray(0, jnp.int32), compat=jnp.asarray(True)
)
FAST = jax.jit(schedule_nobf)
ENGINE = jax.jit(E.schedule)


# ----------------------------------------------------------------------------------------------
# 1. schedule_nobf == engine
# ----------------------------------------------------------------------------------------------
def canonical(st: E.SimState) -> dict:
    """Layout-free view of a state: the waiting and running *sets* and every counter."""
    st = jax.tree_util.tree_map(np.asarray, st)
    qv = st.queue_job >= 0
    rv = np.arange(st.run_job.shape[0]) < st.n_running
    running = sorted(
        zip(
            st.run_job[rv].tolist(),
            st.run_finish[rv].tolist(),
            st.run_est_finish[rv].tolist(),
            st.run_nodes[rv].tolist(),
            st.run_order[rv].tolist(),
        )
    )
    return {
        "t": int(st.t),
        "free": int(st.free),
        "next": int(st.next),
        "n_q": int(st.n_queued),
        "queue": sorted(st.queue_job[qv].tolist()),
        "n_r": int(st.n_running),
        "running": running,
        "start": st.start.tolist(),
        "cnt": int(st.n_started),
        "cj": int(st.committed_job),
        "done": bool(st.done),
        "overflow": int(st.overflow),
        "stuck": bool(st.stuck),
        "decisions": int(st.decisions),
        "steps": int(st.steps),
    }


def check_layout(seq: E.Sequence, st: E.SimState):
    st = jax.tree_util.tree_map(np.asarray, st)
    nq, nr = int(st.n_queued), int(st.n_running)
    q = st.queue_job
    assert (q[:nq] >= 0).all() and (q[nq:] == -1).all()
    assert (np.diff(q[:nq]) > 0).all(), "queue not in index order"
    np.testing.assert_array_equal(st.queue_nodes[:nq], np.asarray(seq.nodes)[q[:nq]])
    np.testing.assert_array_equal(st.queue_submit[:nq], np.asarray(seq.submit)[q[:nq]])
    np.testing.assert_array_equal(
        st.queue_req[:nq], np.minimum(np.asarray(seq.req)[q[:nq]], 2**31 - 1)
    )
    np.testing.assert_array_equal(st.queue_rank[:nq], st.policy_rank[q[:nq]])
    key = list(zip(st.run_finish[:nr].tolist(), st.run_order[:nr].tolist()))
    assert key == sorted(key), "running list not in release order"
    np.testing.assert_array_equal(st.run_cum_nodes[:nr], np.cumsum(st.run_nodes[:nr]))
    assert (st.run_job[nr:] == -1).all()


def lockstep(seq: E.Sequence, L: int, Q: int, R: int, seed: int) -> int:
    """Random decisions applied to both transitions; returns the number of decisions."""
    rng = np.random.default_rng(seed)
    prank = jnp.arange(L, dtype=jnp.int32)
    fast = eng = E.reset(seq, prank, Q, R)
    n = 0
    while not bool(fast.done):
        assert canonical(fast) == canonical(eng)
        check_layout(seq, fast)
        waiting = sorted(np.asarray(fast.queue_job)[np.asarray(fast.queue_job) >= 0].tolist())
        j = waiting[int(rng.integers(len(waiting)))]
        s_fast = int(np.flatnonzero(np.asarray(fast.queue_job) == j)[0])
        s_eng = int(np.flatnonzero(np.asarray(eng.queue_job) == j)[0])
        fast = FAST(seq, fast, s_fast)
        eng = ENGINE(seq, NONE, eng, s_eng)
        n += 1
    assert canonical(fast) == canonical(eng)
    assert bool(eng.done) and int(fast.overflow) == 0
    # a step on a finished state changes nothing
    again = FAST(seq, fast, 0)
    for x, y in zip(jax.tree_util.tree_leaves(again), jax.tree_util.tree_leaves(fast)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    return n


def window_seq(jobs, start, L):
    env = RLSchedulerEnv(jobs, length=L)
    return env._sequence(jnp.asarray(start, jnp.int32)), env._config


@pytest.mark.parametrize(
    "jobs, start, L", [(LUBLIN, 1981, 96), (LUBLIN, 6100, 96), (SYN, 0, 40), (SYN, 60, 40)]
)
def test_closed_form_equals_engine(jobs, start, L):
    seq, c = window_seq(jobs, start, L)
    assert lockstep(seq, L, c.queue_cap, c.run_cap, seed=start) == L


def test_closed_form_unsorted_submits():
    """Arrivals follow the index even when a later job was submitted earlier."""
    rng = np.random.default_rng(5)
    L = 48
    submit = np.sort(rng.integers(0, 4000, L))
    for i in rng.choice(L - 1, 12, replace=False):  # local inversions
        submit[i], submit[i + 1] = submit[i + 1], submit[i]
    run = rng.integers(1, 900, L)
    procs = rng.integers(1, 9, L)
    seq = E.Sequence(
        submit=jnp.asarray(submit, jnp.int64),
        run=jnp.asarray(run, jnp.int64),
        req=jnp.asarray(run * 2, jnp.int64),
        procs=jnp.asarray(procs, jnp.int64),
        nodes=jnp.asarray(procs, jnp.int32),
        n_jobs=jnp.asarray(L, jnp.int32),
        num_nodes=jnp.asarray(10, jnp.int32),
    )
    assert (np.diff(submit) < 0).any()
    for seed in range(3):
        assert lockstep(seq, L, L, L, seed) == L


# ----------------------------------------------------------------------------------------------
# 2. visible jobs in the no-backfill layout
# ----------------------------------------------------------------------------------------------
def reference_visible(env, st):
    """The visible jobs from the waiting set alone (spec §2.9, plain Python): (submit, index)
    order, or the reference's interleaved cut-off by the static L1/L2 ranks."""
    nq = int(st.sim.n_queued)
    q = np.asarray(st.sim.queue_job)
    jobs = sorted(q[q >= 0].tolist())
    start, MQ = int(st.start), env.max_queue
    d = env._data
    sub = np.asarray(d.submit)[start : start + env.length]
    jobs.sort(key=lambda j: (sub[j], j))
    if nq <= MQ:
        return jobs
    r1, r2 = (np.asarray(r)[start : start + env.length] for r in (d.rank_l1, d.rank_l2))
    l1 = sorted(jobs, key=lambda j: r1[j])[:MQ]
    l2 = sorted(jobs, key=lambda j: r2[j])[:MQ]
    out, i = [], 0
    while len(out) < MQ:
        for c in (l1[i], l2[i]):
            if c not in out and len(out) < MQ:
                out.append(c)
        i += 1
    return out


@pytest.mark.parametrize("jobs, L, MQ, start", [(SYN, 60, 4, 40), (LUBLIN, 128, 16, 2500)])
def test_visible_in_closed_form_layout(jobs, L, MQ, start):
    env = RLSchedulerEnv(jobs, length=L, backfill="none", max_queue=MQ)
    general = jax.jit(lambda e, s: e._visible(s.start, s.sim))  # sorts, any slot layout
    rng = np.random.default_rng(L)
    st, ts = jit_reset_at(env, start)
    cuts = 0
    while not bool(ts.last()):
        n = int(np.asarray(ts.observation.mask).sum())
        st, ts = jit_step(env, st, int(rng.integers(n)))
        cuts += int(st.sim.n_queued) > MQ
        np.testing.assert_array_equal(np.asarray(st.visible_slots), np.asarray(general(env, st)))
        want = reference_visible(env, st)
        assert np.asarray(env.visible_jobs(st)).tolist() == want + [-1] * (MQ - len(want))
    assert cuts >= 5


# ----------------------------------------------------------------------------------------------
# 3. schedule_engine's batching rule
# ----------------------------------------------------------------------------------------------
def mid_episode_states(env, B, steps, seed):
    st, ts = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(seed), B))

    @jax.jit
    def run(st, ts, key):
        def body(c, _):
            st, ts, key = c
            key, sub = jax.random.split(key)
            n = ts.observation.mask.sum(1)
            a = jnp.floor(jax.random.uniform(sub, (B,)) * n).astype(jnp.int32)
            st, ts = jax.vmap(env.step)(st, a)
            return (st, ts, key), None

        return jax.lax.scan(body, (st, ts, key), None, length=steps)[0][0]

    return run(st, ts, jax.random.PRNGKey(seed + 1))


@pytest.mark.parametrize(
    "backfill, compat, B",
    [
        ("rlscheduler", True, 40),
        pytest.param("easy", False, 8, marks=pytest.mark.extended),
    ],  # 2nd: make test-all
)
def test_compacting_schedule_equals_vmap(backfill, compat, B):
    env = RLSchedulerEnv(LUBLIN, length=96, backfill=backfill, compat=compat)
    st = mid_episode_states(AutoResetWrapper(env), B, 40, seed=B)
    seq = jax.jit(jax.vmap(env._sequence))(st.start)
    slot = jnp.maximum(st.visible_slots[:, 1], st.visible_slots[:, 0])  # slot 1 where it exists
    params = env._params()
    want = jax.jit(jax.vmap(lambda q, s, a: E.schedule(q, params, s, a)))(seq, st.sim, slot)
    got = jax.jit(jax.vmap(lambda q, s, a: schedule_engine(q, params, s, a)))(seq, st.sim, slot)
    assert stage_sizes(B) == {8: [8, 4], 40: [40, 10, 4]}[B]
    assert stage_sizes(3) == [3]
    if B == 40:  # some rows need many more
        d = np.asarray(want.steps - st.sim.steps)
        assert d.max() > 3 * np.median(d)
    for x, y in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    if B != 8:
        return
    # nested vmap (e.g. seeds x environments)
    r = lambda x: x.reshape((2, B // 2) + x.shape[1:]) if B % 2 == 0 else x[None]  # noqa: E731
    nested = jax.jit(jax.vmap(jax.vmap(lambda q, s, a: schedule_engine(q, params, s, a))))(
        jax.tree_util.tree_map(r, seq), jax.tree_util.tree_map(r, st.sim), r(slot)
    )
    for x, y in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(nested)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y).reshape(np.shape(x)))


# ----------------------------------------------------------------------------------------------
# 4. static (closed-over env) == dynamic (env argument) == single steps
# ----------------------------------------------------------------------------------------------
T_SCAN = 48


def rollout_fn(B):
    """Random valid actions (uniform over the visible jobs) for B envs, T_SCAN steps."""

    def rollout(env, keys):
        st, ts = jax.vmap(env.reset)(keys)

        def body(c, key):
            st, ts = c
            n = ts.observation.mask.sum(1)
            a = jnp.floor(jax.random.uniform(key, (B,)) * n).astype(jnp.int32)
            st, ts = jax.vmap(env.step)(st, a)
            return (st, ts), (
                a,
                ts.reward,
                ts.step_type,
                ts.extras["metric"],
                ts.observation.obs,
                ts.observation.mask,
                st.sim.start,
            )

        steps = jax.random.split(jax.random.PRNGKey(3), T_SCAN)
        return jax.lax.scan(body, (st, ts), steps)[1]

    return rollout


@pytest.mark.parametrize(
    "backfill, compat, MQ",
    [
        pytest.param("none", True, 6, marks=pytest.mark.extended),
        ("rlscheduler", True, 6),
    ],  # 1st: make test-all
)
def test_closed_over_env_equals_argument(backfill, compat, MQ):
    env = AutoResetWrapper(
        RLSchedulerEnv(SYN, length=24, backfill=backfill, compat=compat, max_queue=MQ)
    )
    B = 6
    keys = jax.random.split(jax.random.PRNGKey(11), B)
    f = rollout_fn(B)
    dynamic = jax.jit(f)(env, keys)
    static = jax.jit(lambda k: f(env, k))(keys)
    for x, y in zip(dynamic, static):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    types = np.asarray(dynamic[2])  # [T_SCAN, B]
    assert (types == 2).sum() >= B  # every env finished an episode
    # (the scan against stepping one env at a time: check_env_contract, test_rlscheduler.py)


# ----------------------------------------------------------------------------------------------
# 5. sparse_cond
# ----------------------------------------------------------------------------------------------
def _t(x, y):
    return {"a": x * 2 + y, "b": jnp.stack([x, -x])}


def _f(x, y):
    return {"a": x, "b": jnp.zeros(2, x.dtype)}


@pytest.mark.parametrize("loop", [False, True])
def test_sparse_cond(loop):
    x = jnp.arange(12.0)
    for p in (jnp.zeros(12, bool), jnp.arange(12) % 5 == 0, jnp.arange(12) < 9, jnp.ones(12, bool)):
        got = jax.jit(jax.vmap(lambda p, x: sparse_cond(p, _t, _f, x, 100.0, chunk=4, loop=loop)))(
            p, x
        )
        want = jax.vmap(lambda p, x: jax.lax.cond(p, _t, _f, x, 100.0))(p, x)
        for k in ("a", "b"):
            np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]))
    # unbatched predicate, and no vmap at all
    got = jax.vmap(lambda x: sparse_cond(True, _t, _f, x, 1.0))(x)
    np.testing.assert_array_equal(np.asarray(got["a"]), np.asarray(x * 2 + 1))
    assert float(sparse_cond(False, _t, _f, 3.0, 1.0)["a"]) == 3.0


_TRACED: list = []


def _t_counted(x, y):
    _TRACED.append(jnp.shape(x))
    return _t(x, y)


def test_sparse_cond_traces_its_branch_once_per_shape():
    """Under a vmapped while_loop (which batches its body until the carry settles, running the
    batching rule more than once) the expensive branch is traced once unbatched (the cond of
    one row) and once per batched shape (the gathered chunk of 8 rows, all 12 rows): 3 traces,
    where tracing it anew on every run of the rule gave 5; the results are the plain cond's."""

    def rows(x):
        def body(c):
            i, v = c
            return i + 1, sparse_cond(v > 3.0, _t_counted, _f, v, 1.0)["a"]

        return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    def plain(x):
        def body(c):
            i, v = c
            return i + 1, jax.lax.cond(v > 3.0, _t, _f, v, 1.0)["a"]

        return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    x = jnp.arange(12.0)
    _TRACED.clear()
    got = jax.jit(jax.vmap(rows))(x)
    assert len(_TRACED) == 3, _TRACED
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.vmap(plain)(x)))
