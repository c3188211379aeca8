"""Tests of the engine's building blocks (jaxsched/sim/primitives.py): the event primitives
``advance_one`` / ``advance_until`` (what SchedInspector's "reject" needs: time passes, no
scheduling decision is taken).

1. a hand-computed 4-job schedule: arrivals and a release up to a time, the clock moved to it,
   nothing started;
2. ``advance_until(t)`` == ``advance_one`` event by event up to ``t`` on random traces, at the
   scheduling points of a random policy, with and without backfilling;
3. ``advance_one`` is the micro-step's advance: while a committed job waits without
   backfilling, ``micro_step`` and ``advance_one`` give the same state, leaf for leaf;
4. the re-exports: ``engine.advance_until`` is the primitive.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.sim import engine as E
from jaxsched.sim import primitives as P

NONE = E.SimParams(
    policy=jnp.int32(0), backfill=jnp.int32(E.BACKFILL_NONE), compat=jnp.asarray(True)
)
GREEDY = NONE.replace(backfill=jnp.int32(E.BACKFILL_RLSCHEDULER))

ADVANCE_UNTIL = jax.jit(P.advance_until)
ADVANCE_ONE = jax.jit(P.advance_one)
SCHEDULE = jax.jit(E.schedule)
MICRO = jax.jit(E.micro_step)


def make_seq(submit, run, nodes, num_nodes, req=None) -> E.Sequence:
    i64 = lambda a: jnp.asarray(np.asarray(a, np.int64))  # noqa: E731
    return E.Sequence(
        submit=i64(submit),
        run=i64(run),
        req=i64(run if req is None else req),
        procs=i64(nodes),
        nodes=jnp.asarray(np.asarray(nodes, np.int32)),
        n_jobs=jnp.int32(len(submit)),
        num_nodes=jnp.int32(num_nodes),
    )


def random_seq(rng, L, num_nodes=8) -> E.Sequence:
    submit = np.cumsum(rng.integers(0, 30, L))
    run = rng.integers(1, 120, L)
    req = run + rng.integers(0, 60, L)
    nodes = rng.integers(1, num_nodes + 1, L)
    return make_seq(submit, run, nodes, num_nodes, req)


def _equal(a, b, what=""):
    for i, (x, y) in enumerate(zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b))):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y), f"{what} leaf {i}")


def test_advance_until_hand_computed():
    # jobs: submit 0, 10, 20, 30; run 100, 50, 5, 5; nodes 2, 2, 1, 1 on 4 nodes
    seq = make_seq([0, 10, 20, 30], [100, 50, 5, 5], [2, 2, 1, 1], 4)
    st = E.reset(seq, jnp.arange(4, dtype=jnp.int32), 4, 4)
    st = SCHEDULE(seq, NONE, st, 0)  # job 0 starts at 0; job 1 arrives at 10: a decision
    assert (
        int(st.t) == 10 and int(st.n_queued) == 1 and int(st.n_running) == 1 and int(st.free) == 2
    )

    a = ADVANCE_UNTIL(seq, NONE, st, 25)  # job 2 arrives at 20; job 3 (30) is later
    assert int(a.t) == 25 and int(a.next) == 3 and int(a.n_queued) == 2
    assert sorted(np.asarray(a.queue_job)[np.asarray(a.queue_job) >= 0].tolist()) == [1, 2]
    assert int(a.n_running) == 1 and int(a.free) == 2 and int(a.steps) == int(st.steps) + 1
    assert int(a.decisions) == int(st.decisions) and int(a.n_started) == int(st.n_started)

    b = ADVANCE_UNTIL(seq, NONE, a, 100)  # job 3 arrives at 30, job 0 ends at 100
    assert int(b.t) == 100 and int(b.next) == 4 and int(b.n_queued) == 3
    assert int(b.n_running) == 0 and int(b.free) == 4 and int(b.steps) == int(a.steps) + 2
    assert np.asarray(b.start).tolist() == [0, -1, -1, -1]  # nothing started meanwhile
    assert not bool(b.done)

    c = ADVANCE_UNTIL(seq, NONE, b, 500)  # no event left: only the clock moves
    assert int(c.t) == 500 and int(c.steps) == int(b.steps)
    d = ADVANCE_UNTIL(seq, NONE, c, 400)  # an earlier time changes nothing
    _equal(d, c)
    assert E.advance_until is P.advance_until


def _event_time(seq, params, st):
    ev = P.next_event(seq, params, st)
    return int(jnp.where(ev.arrive, ev.s_next, ev.fmin))


def test_advance_until_equals_event_by_event():
    rng = np.random.default_rng(5)
    checked = 0
    for trial in range(4):
        L = 24
        seq = random_seq(rng, L)
        params = NONE if trial % 2 == 0 else GREEDY
        st = E.reset(seq, jnp.arange(L, dtype=jnp.int32), L, L)
        for _ in range(6):
            if bool(st.done):
                break
            horizon = int(st.t) + int(rng.integers(0, 200))
            want = st
            while not bool(want.done) and _event_time(seq, params, want) <= horizon:
                want = ADVANCE_ONE(seq, params, want)
            want = want.replace(t=jnp.maximum(want.t, horizon))
            got = ADVANCE_UNTIL(seq, params, st, horizon)
            _equal(got, want, f"trial {trial}")
            checked += 1
            # continue the episode from the un-advanced state with a random decision
            slot = int(rng.choice(np.flatnonzero(np.asarray(st.queue_job) >= 0)))
            st = SCHEDULE(seq, params, st, slot)
    assert checked >= 12


def test_advance_one_is_the_micro_step_advance():
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(3):
        L = 32
        seq = random_seq(rng, L, num_nodes=6)
        st = E.reset(seq, jnp.arange(L, dtype=jnp.int32), L, L)
        while not bool(st.done):
            waiting = int(st.committed_job) >= 0 and int(
                st.queue_nodes[int(st.committed_slot)]
            ) > int(st.free)
            if waiting:
                _equal(MICRO(seq, NONE, st, 0), ADVANCE_ONE(seq, NONE, st), "advance")
                compared += 1
            choice = 0
            if E.at_decision(st):
                choice = int(rng.choice(np.flatnonzero(np.asarray(st.queue_job) >= 0)))
            st = MICRO(seq, NONE, st, choice)
    assert compared >= 10
