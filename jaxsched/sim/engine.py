"""The batch-scheduling engine: pure, jit/vmap-compiled state transitions.

The engine reproduces RLScheduler's SchedGym event model (spec ``rlscheduler.md`` §2) as a
sequence of *micro-steps*. Each micro-step performs exactly one of

* **decide**: the queue is non-empty and no job is committed: the chosen job starts if it fits,
  otherwise it becomes the *committed* job (and, with backfilling, its reservation is taken);
* **start**: the committed job fits now, or a backfill candidate exists: start it;
* **advance**: one event (``advance_one``): the next arrival if it comes no later than the
  earliest actual finish (arrival wins ties), else one release.

Every job arrives once, is released at most once and starts once, so an episode of L jobs takes
at most ``4 L`` micro-steps whatever the policy; each micro-step does O(queue capacity + running
capacity) work, independent of L. The reference's list-order
tie rules are closed-form keys (spec §2.8).

Shapes: ``L`` jobs per sequence (padded; ``n_jobs`` valid), ``Q`` queue slots, ``R`` running
slots. Times are int64 seconds (absolute trace time), priority keys float64. Capacities ``Q``
and ``R`` are static; if a run needs more the ``overflow`` flag is set and the host driver
(:mod:`jaxsched.sim.evaluate`) re-runs with larger capacities.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H


def _argmin(x: chex.Array) -> chex.Array:
    """Index (int32) of the first minimum of a 1-D array: two plain reductions, which XLA
    vectorises (its variadic argmin reduction is several times slower on CPU)."""
    i = jnp.arange(x.shape[0], dtype=jnp.int32)
    return jnp.min(jnp.where(x == jnp.min(x), i, jnp.int32(x.shape[0] - 1)))


def _argmin_unique(key: chex.Array, valid: chex.Array, bound: int) -> chex.Array:
    """Index (int32) of the smallest key among ``valid`` entries, for keys that are distinct
    where valid and lie in ``[0, bound)``: one min reduction over ``key * n + index``
    (``bound * n`` must fit the key's integer type). 0 if nothing is valid."""
    n = key.shape[0]
    i = jnp.arange(n, dtype=key.dtype)
    code = jnp.where(valid, key * n + i, jnp.asarray(bound, key.dtype) * n)
    return (jnp.min(code) % n).astype(jnp.int32) * jnp.any(valid)


def _argmax_bool(x: chex.Array) -> chex.Array:
    """Index (int32) of the first True of a bool array (0 if none)."""
    i = jnp.arange(x.shape[0], dtype=jnp.int32)
    return jnp.min(jnp.where(x, i, jnp.int32(x.shape[0]))) % x.shape[0]


BIG = jnp.iinfo(jnp.int64).max // 4  # "infinite" time
IMAX = jnp.iinfo(jnp.int64).max  # argmin sentinel for composite keys

#: Backfilling codes.
BACKFILL_NONE, BACKFILL_RLSCHEDULER, BACKFILL_EASY = 0, 1, 2
BACKFILLS = ("none", "rlscheduler", "easy")


def backfill_code(name: str) -> int:
    """``"none"|"rlscheduler"|"easy"`` (also ``"greedy"`` for rlscheduler) → int code."""
    key = {"greedy": "rlscheduler", "off": "none", "no": "none"}.get(
        name.strip().lower(), name.strip().lower()
    )
    if key not in BACKFILLS:
        raise ConfigError(f"unknown backfill mode {name!r}; choose from {', '.join(BACKFILLS)}")
    return BACKFILLS.index(key)


@struct.dataclass
class Sequence:
    """One job sequence (an episode's workload). All arrays ``[L]``, in trace order.

    Attributes:
      submit, run, req, procs: int64 absolute submit time, actual and requested run time,
        requested processors (after the parse rules).
      nodes: int32 whole nodes a job occupies, ``ceil(procs / procs_per_node)``.
      n_jobs: int32 scalar, number of valid jobs (the rest is padding).
      num_nodes: int32 scalar, nodes of the machine.
      log2n: optional float64 ``[L]`` ``log2(procs + 1e-15)`` computed on the host with libm
        (:func:`jaxsched.policies.heuristics.host_log2n`); only the correct-mode UNICEP key
        reads it, and without it the device's log2 may break exact ties differently.
    """

    submit: chex.Array
    run: chex.Array
    req: chex.Array
    procs: chex.Array
    nodes: chex.Array
    n_jobs: chex.Array
    num_nodes: chex.Array
    log2n: chex.Array = None


@struct.dataclass
class SimParams:
    """Per-run semantics; every field is a traced scalar so runs can be vmapped over it.

    Attributes:
      policy: int32 heuristic code (:mod:`jaxsched.policies.heuristics`), used by
        :func:`heuristic_choice` and for the backfill scan order in compat mode.
      backfill: int32 backfill code (``BACKFILL_*``).
      compat: bool, True = reference SchedGym semantics, False = the correct default mode.
    """

    policy: chex.Array
    backfill: chex.Array
    compat: chex.Array


@struct.dataclass
class SimState:
    """The simulator state of one sequence.

    Attributes:
      t: int64 clock. free: int32 free nodes. next: int32 index of the next job to arrive.
      q_job: int32 ``[Q]`` job index per queue slot, -1 = empty; q_k (int32 nodes), q_req
        (int32 requested time, clamped to 2^31-1), q_s (int64 submit), q_rank (int32 policy
        rank), q_b (the reference's backfill scan key of a job that arrived before the
        commit: ``g * L + rank`` with g the first index of its submit time; int32 for
        L <= 46340, else int64): copies of the waiting job's attributes, so a step reads
        contiguous slots instead of gathering. g_arr: int32 g of the newest arrival.
        n_q: int32 number of waiting jobs.
      r_job: int32 ``[R]`` job index per running slot; the ``n_r`` running jobs form a prefix
        sorted by estimated finish ``r_e`` (so reservations are a cumulative sum);
        r_f / r_e: int64 actual and estimated finish; r_k: int32 nodes; r_flag: bool, present
        at a reservation sort (reference list-order emulation, spec §2.8.4); r_cnt: int32 start
        order; r_cum: int32 running sum of ``r_k`` over the sorted prefix (kept up to date on
        insert and release, so a reservation needs no prefix sum).
      cj: int32 committed job (-1 none); cslot: its queue slot; shadow: int64 reservation time;
        nac: int32 ``next`` when the job was committed (jobs ≥ nac arrived "late", §2.8.2).
      cnt: int32 jobs started so far. start: int64 ``[L]`` start times (-1 = not started).
      prank: int32 ``[L]`` the policy's static rank of each job (decision and backfill order).
      done, stuck: bool flags; overflow: int32, bit 0 = queue full, bit 1 = running list full.
      decisions, steps: int32 counters.
    """

    t: chex.Array
    free: chex.Array
    next: chex.Array
    q_job: chex.Array
    q_k: chex.Array
    q_req: chex.Array
    q_s: chex.Array
    q_rank: chex.Array
    q_b: chex.Array
    g_arr: chex.Array
    n_q: chex.Array
    r_job: chex.Array
    r_f: chex.Array
    r_e: chex.Array
    r_k: chex.Array
    r_flag: chex.Array
    r_cnt: chex.Array
    r_cum: chex.Array
    n_r: chex.Array
    cj: chex.Array
    cslot: chex.Array
    shadow: chex.Array
    nac: chex.Array
    cnt: chex.Array
    start: chex.Array
    prank: chex.Array
    done: chex.Array
    overflow: chex.Array
    stuck: chex.Array
    decisions: chex.Array
    steps: chex.Array


_I32MIN, _I32MAX = -(2**31), 2**31 - 1


def _req32(q):
    """Requested time as int32 (clamped; 2^31 s is 68 years)."""
    return jnp.clip(q, _I32MIN, _I32MAX).astype(jnp.int32)


def _key_dtype(L: int):
    """Integer type of the backfill scan keys (``L*L + L`` must fit)."""
    return jnp.int32 if L * L + 2 * L < 2**31 else jnp.int64


def reset(seq: Sequence, prank: chex.Array, queue_cap: int, run_cap: int) -> SimState:
    """The initial state: idle cluster, clock at the first submit, job 0 in the queue.

    Args:
      seq: the sequence. prank: int32 ``[L]`` static policy rank (``arange(L)`` for RL).
      queue_cap, run_cap: static capacities Q and R.
    """
    L = seq.submit.shape[0]
    i32, i64 = jnp.int32, jnp.int64
    prank = prank.astype(i32)
    zq = lambda dt: jnp.zeros((queue_cap,), dt)
    zr = lambda dt: jnp.zeros((run_cap,), dt)
    return SimState(
        t=seq.submit[0].astype(i64),
        free=seq.num_nodes.astype(i32),
        next=jnp.asarray(1, i32),
        q_job=jnp.full((queue_cap,), -1, i32).at[0].set(0),
        q_k=zq(i32).at[0].set(seq.nodes[0]),
        q_req=zq(i32).at[0].set(_req32(seq.req[0])),
        q_s=zq(i64).at[0].set(seq.submit[0]),
        q_rank=zq(i32).at[0].set(prank[0]),
        q_b=zq(_key_dtype(L)).at[0].set(prank[0]),
        g_arr=jnp.asarray(0, i32),
        n_q=jnp.asarray(1, i32),
        r_job=jnp.full((run_cap,), -1, i32),
        r_f=zr(i64),
        r_e=zr(i64),
        r_k=zr(i32),
        r_flag=zr(bool),
        r_cnt=zr(i32),
        r_cum=zr(i32),
        n_r=jnp.asarray(0, i32),
        cj=jnp.asarray(-1, i32),
        cslot=jnp.asarray(-1, i32),
        shadow=jnp.asarray(0, i64),
        nac=jnp.asarray(0, i32),
        cnt=jnp.asarray(0, i32),
        start=jnp.full((L,), -1, i64),
        prank=prank,
        done=jnp.asarray(False),
        overflow=jnp.asarray(0, i32),
        stuck=jnp.asarray(False),
        decisions=jnp.asarray(0, i32),
        steps=jnp.asarray(0, i32),
    )


def reservation(e, k, cum, valid, free, need, t):
    """Shadow time and free nodes at it for a job needing ``need`` nodes (spec §2.6).

    The running slots are kept sorted by estimated finish ``e`` (valid slots first), so the
    shadow is the ``e`` at which the free nodes plus the cumulative released nodes first reach
    ``need`` (ties in ``e`` do not change it) — O(R).

    Args:
      e: int64 ``[R]`` estimated finish, ascending over the valid prefix; k: int32 ``[R]``
      nodes; cum: int32 ``[R]`` running sum of ``k`` over the prefix; valid: bool ``[R]`` (a
      prefix); free, need: int32 scalars; t: int64 clock (the shadow when nothing runs).
    Returns:
      ``(shadow, nodes_at_shadow)``: int64, int32.
    """
    ok = valid & (free + cum >= need)
    first = _argmax_bool(ok)
    last = jnp.maximum(jnp.sum(valid) - 1, 0)
    shadow = jnp.where(ok.any(), e[first], jnp.where(valid.any(), e[last], t))
    at = free + jnp.sum(jnp.where(valid & (e <= shadow), k, 0))
    return shadow, at.astype(jnp.int32)


def heuristic_choice(
    seq: Sequence, params: SimParams, st: SimState, dynamic: bool = True
) -> chex.Array:
    """The queue slot a heuristic picks: smallest (key, trace index) among waiting jobs.

    ``dynamic`` (static) compiles in the clock-dependent WFP3/UNICEP keys of the correct mode;
    pass False when no run of the batch needs them (it saves two transcendental functions per
    queue slot and micro-step).
    """
    qv = st.q_job >= 0
    L, Q = seq.submit.shape[0], st.q_job.shape[0]
    if L * Q + Q < 2**31:
        slot = _argmin_unique(st.q_rank, qv, L)  # ranks are a permutation of 0..L-1
    else:
        slot = _argmin(jnp.where(qv, st.q_rank, jnp.iinfo(jnp.int32).max))
    if not dynamic:
        return slot
    dyn = H.is_dynamic(params.policy, params.compat)
    qj = jnp.where(qv, st.q_job, 0)
    key = H.dynamic_key(
        params.policy,
        st.t,
        st.q_s,
        st.q_req,
        seq.procs[qj],
        None if seq.log2n is None else seq.log2n[qj],
    )
    key = jnp.where(qv, key, jnp.inf)
    m = jnp.min(key)
    cand = qv & ((key == m) | jnp.isnan(m))
    dslot = _argmin(jnp.where(cand, qj, jnp.iinfo(jnp.int32).max))
    return jnp.where(dyn, dslot, slot)


def micro_step(seq: Sequence, params: SimParams, st: SimState, choice: chex.Array) -> SimState:
    """One micro-step (see the module docstring). ``choice`` is the queue slot to decide on when
    this step is a decision (ignored otherwise). A finished state is returned unchanged."""
    return _micro(seq, params, st, choice, True)[0]


def _micro(seq: Sequence, params: SimParams, st: SimState, choice: chex.Array, write_start: bool):
    """:func:`micro_step`, also returning the job started by this step (int32, -1 = none; it
    starts at ``st.t``). With ``write_start=False`` the ``start`` array is left untouched (the
    batched runner logs starts instead: a per-step write into ``[L]`` costs more than the
    rest of the step)."""
    L = seq.submit.shape[0]
    Q = st.q_job.shape[0]
    R = st.r_job.shape[0]
    i32 = jnp.int32
    active = ~st.done
    bf = params.backfill
    qi = jnp.arange(Q, dtype=i32)
    ri = jnp.arange(R, dtype=i32)

    qv = st.q_job >= 0
    has_q = st.n_q > 0
    committed = st.cj >= 0
    rv = ri < st.n_r

    # the job under consideration: the committed one, or the new choice
    cur_slot = jnp.where(committed, st.cslot, choice).astype(i32)
    cur_k = st.q_k[cur_slot]
    fits = cur_k <= st.free

    # reservation (recomputed every step for EASY; latched at commit for the greedy variant)
    easy = bf == BACKFILL_EASY
    e_eff = jnp.where(easy, jnp.maximum(st.r_e, st.t), st.r_e)
    shadow_now, nodes_at = reservation(e_eff, st.r_k, st.r_cum, rv, st.free, cur_k, st.t)
    shadow = jnp.where(easy, shadow_now, st.shadow)
    extra = nodes_at - cur_k

    # backfill candidate: first in scan order that is eligible and fits now
    # compat scan order (spec §2.8.3): jobs that arrived before the commit by (submit, policy
    # rank) -- q_b -- then the later arrivals by index; all earlier arrivals come first since
    # submit times are non-decreasing in the index. Correct mode: (submit, index) = index.
    KD = st.q_b.dtype
    late = st.q_job >= st.nac
    qj = st.q_job.astype(KD)
    bkey = jnp.where(params.compat, jnp.where(late, L * L + qj, st.q_b), qj)
    # t + q < shadow (greedy) or t + q <= shadow (EASY), compared in int32 as q <= bound
    bound = jnp.clip(shadow - st.t - jnp.where(easy, 0, 1), _I32MIN, _I32MAX).astype(i32)
    elig = (st.q_req <= bound) | (easy & (st.q_k <= extra))
    elig = elig & qv & (qi != cur_slot) & (st.q_k <= st.free) & (bf != BACKFILL_NONE)
    # keys are distinct: one reduction over key * Q + slot
    bdt = jnp.int32 if (L * L + L + 1) * Q < 2**31 else jnp.int64
    bslot = _argmin_unique(bkey.astype(bdt), elig, L * L + L)
    has_bf = elig[bslot]

    # advance candidate: arrival vs the earliest release (ties: reference list order)
    fmin = jnp.min(jnp.where(rv, st.r_f, BIG))
    base = seq.submit[0]
    tie_compat = jnp.where(st.r_flag, (st.r_e - base + 1) << 20, jnp.int64(1) << 61) | st.r_cnt
    tie = jnp.where(params.compat, tie_compat, st.r_cnt.astype(jnp.int64))
    rslot = _argmin(jnp.where(rv & (st.r_f == fmin), tie, IMAX))
    more = st.next < seq.n_jobs
    nj = jnp.minimum(st.next, L - 1)
    s_next = seq.submit[nj]
    arrive = more & (s_next <= fmin)

    # what this step does
    decide = active & ~committed & has_q
    do_start = (decide & fits) | (active & committed & (fits | has_bf))
    start_slot = jnp.where(committed & ~fits, bslot, cur_slot)
    do_commit = decide & ~fits
    do_adv = active & ~decide & ~(committed & (fits | has_bf))
    do_arr = do_adv & arrive
    do_rel = do_adv & ~arrive & (st.n_r > 0)
    stuck = do_adv & ~arrive & (st.n_r == 0)

    # --- start a job: leave the queue, enter the running list (sorted by estimated finish)
    sj = jnp.maximum(st.q_job[start_slot], 0)
    sk = st.q_k[start_slot]
    free = st.free - jnp.where(do_start, sk, 0)
    new_e = st.t + seq.req[sj]
    pos = jnp.sum(rv & (st.r_e <= new_e))
    r_over = do_start & (st.n_r >= R)

    def put(a, v):
        ins = jnp.where(ri < pos, a, jnp.where(ri == pos, v, jnp.roll(a, 1)))
        return jnp.where(do_start, ins, a)

    r_job = put(st.r_job, sj)
    r_f = put(st.r_f, st.t + seq.run[sj])
    r_e = put(st.r_e, new_e)
    r_k = put(st.r_k, sk)
    r_flag = put(st.r_flag, False)
    r_cnt = put(st.r_cnt, st.cnt)
    r_cum = jnp.where(
        do_start,
        jnp.where(ri < pos, st.r_cum, jnp.where(ri == 0, 0, jnp.roll(st.r_cum, 1)) + sk),
        st.r_cum,
    )
    if write_start:
        start = st.start.at[sj].set(jnp.where(do_start, st.t, st.start[sj]))
    else:
        start = st.start
    cnt = st.cnt + do_start.astype(i32)
    cj = jnp.where(do_start & committed & fits, -1, st.cj)

    # --- commit (take the reservation; the reference re-sorts its running list here)
    cj = jnp.where(do_commit, sj, cj)
    cslot = jnp.where(do_commit, cur_slot, st.cslot)
    shadow_l = jnp.where(do_commit, shadow_now, st.shadow)
    nac = jnp.where(do_commit, st.next, st.nac)
    r_flag = jnp.where(do_commit & params.compat & (bf != BACKFILL_NONE), r_flag | rv, r_flag)

    # --- advance one event: an arrival fills the start slot's hole or the first free slot
    fslot = jnp.where(do_start, start_slot, _argmax_bool(~qv)).astype(i32)
    q_over = do_arr & (st.n_q >= Q)
    put_q = do_arr | do_start
    new_job = jnp.where(do_arr, st.next, -1)

    hit = put_q & (qi == fslot)

    def setq(a, v):
        return jnp.where(hit, v, a)

    q_job = setq(st.q_job, new_job)
    q_k = setq(st.q_k, seq.nodes[nj])
    q_req = setq(st.q_req, _req32(seq.req[nj]))
    q_s = setq(st.q_s, s_next)
    q_rank = setq(st.q_rank, st.prank[nj])
    g_new = jnp.where(s_next == seq.submit[jnp.maximum(nj - 1, 0)], st.g_arr, nj)
    g_arr = jnp.where(do_arr, g_new, st.g_arr)
    q_b = setq(st.q_b, (g_new.astype(st.q_b.dtype) * L + st.prank[nj]).astype(st.q_b.dtype))
    n_q = st.n_q + do_arr.astype(i32) - do_start.astype(i32)
    nxt = st.next + do_arr.astype(i32)
    t = jnp.where(
        do_arr, jnp.maximum(st.t, s_next), jnp.where(do_rel, jnp.maximum(st.t, fmin), st.t)
    )
    k_rel = r_k[rslot]
    free = free + jnp.where(do_rel, k_rel, 0)
    r_cum = jnp.where(do_rel, jnp.where(ri < rslot, r_cum, jnp.roll(r_cum, -1) - k_rel), r_cum)

    def drop(a, fill):
        out = jnp.where(ri < rslot, a, jnp.where(ri == R - 1, fill, jnp.roll(a, -1)))
        return jnp.where(do_rel, out, a)

    r_job, r_f, r_e = drop(r_job, -1), drop(r_f, 0), drop(r_e, 0)
    r_k, r_flag, r_cnt = drop(r_k, 0), drop(r_flag, False), drop(r_cnt, 0)
    n_r = st.n_r + do_start.astype(i32) - do_rel.astype(i32)

    # --- episode end: after a start, nothing waits, nothing left to arrive
    # (an overflow ends the run early: its result is discarded and re-run with more room)
    done = (
        st.done | stuck | r_over | q_over | (do_start & (n_q == 0) & (nxt >= seq.n_jobs) & (cj < 0))
    )

    return SimState(
        t=t,
        free=free,
        next=nxt,
        q_job=q_job,
        q_k=q_k,
        q_req=q_req,
        q_s=q_s,
        q_rank=q_rank,
        q_b=q_b,
        g_arr=g_arr,
        n_q=n_q,
        r_job=r_job,
        r_f=r_f,
        r_e=r_e,
        r_k=r_k,
        r_flag=r_flag,
        r_cnt=r_cnt,
        r_cum=r_cum,
        n_r=n_r,
        cj=cj,
        cslot=cslot,
        shadow=shadow_l,
        nac=nac,
        cnt=cnt,
        start=start,
        prank=st.prank,
        done=done,
        overflow=st.overflow | q_over.astype(i32) | (2 * r_over.astype(i32)),
        stuck=st.stuck | stuck,
        decisions=st.decisions + decide.astype(i32),
        steps=st.steps + active.astype(i32),
    ), jnp.where(do_start, sj, -1)


def at_decision(st: SimState) -> chex.Array:
    """True when the state is a scheduling point: a job must be chosen from the queue."""
    return ~st.done & (st.cj < 0) & (st.n_q > 0)


def run_heuristic(seq: Sequence, params: SimParams, st: SimState, dynamic: bool = True) -> SimState:
    """Run an episode to the end under the heuristic ``params.policy`` (one ``while_loop``);
    ``dynamic`` as in :func:`heuristic_choice`."""

    def body(s):
        return micro_step(seq, params, s, heuristic_choice(seq, params, s, dynamic))

    return jax.lax.while_loop(lambda s: ~s.done, body, st)


#: ``overflow`` bit of runs stopped unfinished because most of their batch overflowed
ABORTED = 4


def _logged_loop(step, st, max_steps: int):
    """Run the batched ``step(st) -> (st, started)`` until every run is done, logging the job
    each run starts at every iteration; returns ``(st, start)`` with int64 ``[B, L]`` start
    times filled in once at the end. The loop counter is shared by the batch, so the log write
    is one in-place row update per iteration. Runs not done after ``max_steps`` are flagged
    ``stuck``.

    Once more than half of the batch has overflowed its capacities (it will be re-run with
    larger ones), the loop stops early and the unfinished runs get the :data:`ABORTED`
    overflow bit, so the driver re-runs them too instead of finishing them at this size."""
    B, L = st.start.shape
    log_j = jnp.full((max_steps, B), -1, jnp.int32)
    log_t = jnp.zeros((max_steps, B), jnp.int64)

    def body(c):
        it, s, lj, lt = c
        s2, started = step(s)
        lj = jax.lax.dynamic_update_slice(lj, started[None, :], (it, jnp.int32(0)))
        lt = jax.lax.dynamic_update_slice(lt, s.t[None, :], (it, jnp.int32(0)))
        return it + 1, s2, lj, lt

    def cond(c):
        it, s = c[0], c[1]
        many_over = 2 * jnp.sum(s.overflow != 0) > B
        return (it < max_steps) & jnp.any(~s.done) & ~many_over

    it, st, log_j, log_t = jax.lax.while_loop(
        cond, body, (jnp.asarray(0, jnp.int32), st, log_j, log_t)
    )
    rows = jnp.broadcast_to(jnp.arange(B)[None, :], log_j.shape)
    cols = jnp.where(log_j >= 0, log_j, L)
    start = st.start.at[rows, cols].set(log_t, mode="drop")
    aborted = ~st.done & (2 * jnp.sum(st.overflow != 0) > B)
    st = st.replace(
        start=start,
        stuck=st.stuck | (~st.done & ~aborted),
        overflow=st.overflow | jnp.where(aborted, ABORTED, 0).astype(jnp.int32),
    )
    return st, start


def run_heuristic_batch(
    seq: Sequence, params: SimParams, st: SimState, dynamic: bool = True
) -> SimState:
    """:func:`run_heuristic` for a batch (every leaf with a leading batch axis ``B``), with the
    start times logged per iteration instead of written per micro-step (faster on CPU)."""
    L = st.start.shape[1]

    def step(s):
        return jax.vmap(lambda q, p, x: _micro(q, p, x, heuristic_choice(q, p, x, dynamic), False))(
            seq, params, s
        )

    return _logged_loop(step, st, 4 * L + 8)[0]


def advance_to_decision(seq: Sequence, params: SimParams, st: SimState) -> SimState:
    """Run micro-steps until the next scheduling point or the end of the episode."""
    dummy = jnp.asarray(0, jnp.int32)
    return jax.lax.while_loop(
        lambda s: ~s.done & ~at_decision(s), lambda s: micro_step(seq, params, s, dummy), st
    )


def schedule(seq: Sequence, params: SimParams, st: SimState, slot: chex.Array) -> SimState:
    """Decision-level API: at a scheduling point, choose the waiting job in queue ``slot``;
    returns the state at the next scheduling point (or the final state)."""
    slot = jnp.asarray(slot, jnp.int32)

    # one loop (the decision is its first iteration): micro_step is traced and compiled once
    def body(c):
        s, first = c
        return micro_step(seq, params, s, jnp.where(first, slot, 0)), jnp.asarray(False)

    return jax.lax.while_loop(
        lambda c: c[1] | (~c[0].done & ~at_decision(c[0])), body, (st, jnp.asarray(True))
    )[0]


# ----------------------------------------------------------------------------------------------
# Fast path: no backfilling, static priority keys
# ----------------------------------------------------------------------------------------------
@struct.dataclass
class NoBackfillState:
    """State of :func:`run_static_nobf`: the waiting set is a bitmask in *rank* space (bit r of
    ``wait`` is set while the job of policy rank r waits), so a decision is "lowest set bit"
    — O(L/64) work however long the queue is.

    Attributes:
      t: int64 clock; free: int32; next: int32; n_q: int32 waiting jobs; cj: int32 committed job.
      wait: uint64 ``[ceil(L/64)]`` bitmask; r_f: int64 ``[R]`` actual finish of running slot;
      r_k: int32 ``[R]`` nodes (0 = empty slot); r_cnt: int32 ``[R]`` start order;
      cnt: int32; start: int64 ``[L]``; done, stuck: bool; overflow: int32 (bit 1 = running
      list full); decisions, steps: int32.
    """

    t: chex.Array
    free: chex.Array
    next: chex.Array
    n_q: chex.Array
    cj: chex.Array
    wait: chex.Array
    r_f: chex.Array
    r_k: chex.Array
    r_cnt: chex.Array
    cnt: chex.Array
    start: chex.Array
    done: chex.Array
    stuck: chex.Array
    overflow: chex.Array
    decisions: chex.Array
    steps: chex.Array


def _nobf_init(seq: Sequence, prank: chex.Array, run_cap: int) -> NoBackfillState:
    L = seq.submit.shape[0]
    W = (L + 63) // 64
    i32, i64, u64 = jnp.int32, jnp.int64, jnp.uint64
    w0, b0 = _bit(prank[0].astype(i32))
    return NoBackfillState(
        t=seq.submit[0].astype(i64),
        free=seq.num_nodes.astype(i32),
        next=jnp.asarray(1, i32),
        n_q=jnp.asarray(1, i32),
        cj=jnp.asarray(-1, i32),
        wait=jnp.zeros(W, u64).at[w0].set(b0),
        r_f=jnp.zeros(run_cap, i64),
        r_k=jnp.zeros(run_cap, i32),
        r_cnt=jnp.zeros(run_cap, i32),
        cnt=jnp.asarray(0, i32),
        start=jnp.full((L,), -1, i64),
        done=jnp.asarray(False),
        stuck=jnp.asarray(False),
        overflow=jnp.asarray(0, i32),
        decisions=jnp.asarray(0, i32),
        steps=jnp.asarray(0, i32),
    )


def _bit(r):
    """(word, mask) of bit ``r`` of a uint64 bitmask."""
    return (r // 64).astype(jnp.int32), jnp.left_shift(jnp.uint64(1), (r % 64).astype(jnp.uint64))


def _nobf_step(
    seq: Sequence, prank: chex.Array, inv: chex.Array, s: NoBackfillState, write_start: bool
):
    """One micro-step of :func:`run_static_nobf`; also returns the job started (-1 = none)."""
    L = seq.submit.shape[0]
    i32 = jnp.int32
    one = jnp.uint64(1)
    W = s.wait.shape[0]
    wi_ = jnp.arange(W, dtype=i32)
    ri = jnp.arange(s.r_k.shape[0], dtype=i32)
    active = ~s.done
    committed = s.cj >= 0
    # lowest waiting rank: first non-zero word, then count trailing zeros
    wi = _argmax_bool(s.wait != 0)
    word = jnp.sum(jnp.where(wi_ == wi, s.wait, jnp.uint64(0))).astype(jnp.uint64)
    low = word & (~word + one)
    tz = jax.lax.population_count(low - one).astype(i32)
    choice = inv[jnp.minimum(wi * 64 + tz, L - 1)]
    j = jnp.where(committed, s.cj, choice)
    kj = seq.nodes[j]
    fits = kj <= s.free
    decide = active & ~committed & (s.n_q > 0)
    do_start = (decide | (active & committed)) & fits
    do_commit = decide & ~fits
    do_adv = active & ~(decide | committed) | (active & committed & ~fits)
    rv = s.r_k > 0
    fmin = jnp.min(jnp.where(rv, s.r_f, BIG))
    rslot = _argmin(jnp.where(rv & (s.r_f == fmin), s.r_cnt, jnp.iinfo(i32).max))
    nj = jnp.minimum(s.next, L - 1)
    s_next = seq.submit[nj]
    arrive = (s.next < seq.n_jobs) & (s_next <= fmin)
    do_arr = do_adv & arrive
    do_rel = do_adv & ~arrive & rv.any()
    stuck = do_adv & ~arrive & ~rv.any()
    # start j: clear its bit, take a free running slot; an arrival sets its bit
    wj, bj = _bit(prank[j])
    wa, ba = _bit(prank[nj])
    wait = jnp.where(do_start & (wi_ == wj), s.wait & ~bj, s.wait)
    wait = jnp.where(do_arr & (wi_ == wa), wait | ba, wait)
    fs = _argmax_bool(~rv)
    r_over = do_start & rv.all()
    put = do_start & (ri == fs)
    r_f = jnp.where(put, s.t + seq.run[j], s.r_f)
    r_k = jnp.where(put, kj, s.r_k)
    r_cnt = jnp.where(put, s.cnt, s.r_cnt)
    if write_start:
        start = s.start.at[j].set(jnp.where(do_start, s.t, s.start[j]))
    else:
        start = s.start
    free = s.free - jnp.where(do_start, kj, 0)
    cj = jnp.where(do_start, -1, jnp.where(do_commit, j, s.cj))
    # a release frees its slot
    free = free + jnp.where(do_rel, jnp.sum(jnp.where(ri == rslot, r_k, 0)).astype(i32), 0)
    r_k = jnp.where(do_rel & (ri == rslot), 0, r_k)
    t = jnp.where(do_arr, jnp.maximum(s.t, s_next), jnp.where(do_rel, jnp.maximum(s.t, fmin), s.t))
    n_q = s.n_q + do_arr.astype(i32) - do_start.astype(i32)
    nxt = s.next + do_arr.astype(i32)
    done = s.done | stuck | r_over | (do_start & (n_q == 0) & (nxt >= seq.n_jobs))
    return NoBackfillState(
        t=t,
        free=free,
        next=nxt,
        n_q=n_q,
        cj=cj,
        wait=wait,
        r_f=r_f,
        r_k=r_k,
        r_cnt=r_cnt,
        cnt=s.cnt + do_start.astype(i32),
        start=start,
        done=done,
        stuck=s.stuck | stuck,
        overflow=s.overflow | (2 * r_over.astype(i32)),
        decisions=s.decisions + decide.astype(i32),
        steps=s.steps + active.astype(i32),
    ), jnp.where(do_start, j, -1)


def _inverse(prank: chex.Array) -> chex.Array:
    L = prank.shape[0]
    return jnp.zeros(L, jnp.int32).at[prank].set(jnp.arange(L, dtype=jnp.int32))


def run_static_nobf(seq: Sequence, prank: chex.Array, run_cap: int) -> NoBackfillState:
    """Run an episode without backfilling under a static-key heuristic (``prank``: int32 ``[L]``
    rank of each job in (key, index) order). Same semantics as :func:`run_heuristic` with
    ``backfill = none`` (both modes agree there: no reservation sort, releases tie in start
    order), with O(L/64 + R) work per micro-step instead of O(Q + R)."""
    prank = prank.astype(jnp.int32)
    inv = _inverse(prank)
    return jax.lax.while_loop(
        lambda s: ~s.done,
        lambda s: _nobf_step(seq, prank, inv, s, True)[0],
        _nobf_init(seq, prank, run_cap),
    )


def run_static_nobf_batch(seq: Sequence, prank: chex.Array, run_cap: int) -> NoBackfillState:
    """:func:`run_static_nobf` for a batch (leading axis ``B`` on every leaf), with the start
    times logged per iteration (see :func:`run_heuristic_batch`)."""
    prank = prank.astype(jnp.int32)
    L = prank.shape[1]
    inv = jax.vmap(_inverse)(prank)
    st = jax.vmap(lambda q, p: _nobf_init(q, p, run_cap))(seq, prank)
    step = jax.vmap(lambda q, p, i, s: _nobf_step(q, p, i, s, False), in_axes=(0, 0, 0, 0))
    return _logged_loop(lambda s: step(seq, prank, inv, s), st, 4 * L + 8)[0]
