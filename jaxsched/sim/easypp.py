"""EASY++ (Tsafrir, Etsion and Feitelson 2007) on the engine, correct mode, vectorised.

The semantics are :mod:`jaxsched.sim.oracle_easypp`'s (its reference): each job's run time is
predicted at its arrival as the mean of its user's last two finished run times (capped by the
request; the request without history), the committed job's reservation comes from predicted ends
(a running job that outlives its prediction is expected at its requested end), and candidates
backfill shortest prediction first.

Implementation: the engine's ``easy-sjbf`` micro-step run on a copy of the sequence whose
requested times are the predictions (so the queue's requested times, the backfill bound, the
SJBF order and a started job's estimated end are predicted ones), inside a loop that carries
the per-user history and, before every micro-step, (1) corrects the running jobs that outlived
their prediction (estimated end := start + requested time, the running list re-sorted by
estimated end, which the reservation's prefix sum needs) and (2) writes the next arrival's
prediction from the current history (a release and an arrival never share a micro-step, so
this is the history at its arrival). Users are dense per-sequence ids (``user_ids``).

Shapes: ``L`` jobs, ``Q`` queue slots, ``R`` running slots; times int64.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H
from jaxsched.policies import tuned as T
from jaxsched.sim import engine as E
from jaxsched.sim.primitives import next_event

__all__ = [
    "NAME",
    "predict",
    "user_ids",
    "correct_running",
    "run_easypp",
    "run_easypp_batch",
    "evaluate_easypp",
    "evaluate_with_easypp",
]

#: the backfill-mode name of EASY++ in tables and ``jaxsched evaluate --backfill``
NAME = "easy++"


def predict(h1, h2, nh, q):
    """EASY++ prediction (int64) from the user's last (``h1``) and second-to-last (``h2``)
    finished run times, ``nh`` of them known (int32, 0..2), and the request ``q``."""
    mean2 = -((-(h1 + h2)) // 2)  # ceil
    return jnp.minimum(jnp.where(nh >= 2, mean2, jnp.where(nh == 1, h1, q)), q)


def user_ids(users: np.ndarray) -> np.ndarray:
    """Dense per-row user ids: int32 ``[..., L]`` in ``0..L-1`` (equal ids stay equal within a
    row). ConfigError if the trace has no user ids (every id negative: the Lublin presets)."""
    users = np.asarray(users)
    if users.size and (users < 0).all():
        raise ConfigError(
            "EASY++ predicts run times from each user's history, and this trace has no user "
            "ids (SWF field 12 is -1 for every job, as in the Lublin presets)"
        )
    flat = users.reshape(-1, users.shape[-1])
    out = np.stack([np.unique(r, return_inverse=True)[1].reshape(-1) for r in flat])
    return out.reshape(users.shape).astype(np.int32)


def correct_running(st: E.SimState, req) -> E.SimState:
    """Running jobs that outlived their predicted end (``run_est_finish < t``) get their
    requested end ``start + req`` as estimated end; the running list is stably re-sorted by
    estimated end and its node prefix sum rebuilt. ``req``: int64 ``[L]`` true requests."""
    R = st.run_job.shape[0]
    rv = jnp.arange(R, dtype=jnp.int32) < st.n_running
    rj = jnp.maximum(st.run_job, 0)
    req_end = st.start[rj] + req[rj]
    over = rv & (st.run_est_finish < st.t) & (st.run_est_finish < req_end)
    est = jnp.where(over, req_end, st.run_est_finish)
    perm = jnp.argsort(jnp.where(rv, est, E.IMAX), stable=True)
    nodes = st.run_nodes[perm]
    return st.replace(
        run_job=st.run_job[perm],
        run_finish=st.run_finish[perm],
        run_est_finish=est[perm],
        run_nodes=nodes,
        run_sort_flag=st.run_sort_flag[perm],
        run_order=st.run_order[perm],
        run_cum_nodes=jnp.cumsum(jnp.where(rv, nodes, 0)).astype(jnp.int32),
    )


def _step(seq: E.Sequence, uid, params: E.SimParams, c):
    """One EASY++ micro-step on the carry ``(state, predictions [L], h1 [L], h2 [L], nh [L])``."""
    st, pred, h1, h2, nh = c
    L = seq.submit.shape[0]
    st = correct_running(st, seq.req)
    nj = jnp.minimum(st.next, L - 1)
    u = uid[nj]
    p_nj = predict(h1[u], h2[u], nh[u], seq.req[nj])
    pred = pred.at[nj].set(jnp.where(st.next < seq.n_jobs, p_nj, pred[nj]))
    pseq = seq.replace(req=pred)
    x = jnp.maximum(st.run_job[next_event(pseq, params, st).rslot], 0)
    new = E.micro_step(pseq, params, st, E.heuristic_choice(pseq, params, st, dynamic=False))
    rel = ~st.done & (new.n_running < st.n_running)  # this step released x
    ux, rx = uid[x], seq.run[x]
    h2 = h2.at[ux].set(jnp.where(rel, h1[ux], h2[ux]))
    h1 = h1.at[ux].set(jnp.where(rel, rx, h1[ux]))
    nh = nh.at[ux].set(jnp.where(rel, jnp.minimum(nh[ux] + 1, 2), nh[ux]))
    return new, pred, h1, h2, nh


def run_easypp(seq: E.Sequence, uid, prank, policy, queue_cap: int, run_cap: int):
    """One EASY++ episode.

    Args:
      seq: the sequence (true requests); uid: int32 ``[L]`` dense user ids (:func:`user_ids`);
      prank: int32 ``[L]`` the main order's static rank (host, exact); policy: int32 code of
      that static heuristic; queue_cap, run_cap: static capacities.
    Returns:
      ``(state, predictions)``: the final :class:`~jaxsched.sim.types.SimState` (start times in
      ``state.start``; its overflow flag set if a capacity was too small) and int64 ``[L]``
      every job's prediction at its arrival.
    """
    L = seq.submit.shape[0]
    params = E.SimParams(
        policy=jnp.asarray(policy, jnp.int32),
        backfill=jnp.asarray(E.BACKFILL_EASY_SJBF, jnp.int32),
        compat=jnp.asarray(False),
    )
    st = E.reset(seq, prank, queue_cap, run_cap)
    zl = jnp.zeros((L,), jnp.int64)
    c = (st, seq.req.astype(jnp.int64), zl, zl, jnp.zeros((L,), jnp.int32))
    c = jax.lax.while_loop(lambda c: ~c[0].done, lambda c: _step(seq, uid, params, c), c)
    return c[0], c[1]


def run_easypp_batch(seq, uid, prank, policy, queue_cap: int, run_cap: int):
    """:func:`run_easypp` vmapped over a leading batch axis of every argument but the caps."""
    return jax.vmap(lambda q, u, p, c: run_easypp(q, u, p, c, queue_cap, run_cap))(
        seq, uid, prank, policy
    )


_COMPILED: dict = {}


def _batch(Q: int, R: int):
    """jit of the batched episodes + metrics for capacities ``(Q, R)`` (built once)."""
    from jaxsched.sim import metrics as M

    def fn(submit, run, req, procs, nodes, user, uid, prank, policy, num_nodes, num_procs):
        B, L = submit.shape
        seq = E.Sequence(
            submit=submit, run=run, req=req, procs=procs, nodes=nodes,
            n_jobs=jnp.full((B,), L, jnp.int32), num_nodes=jnp.full((B,), num_nodes, jnp.int32),
        )  # fmt: skip
        st, _ = run_easypp_batch(seq, uid, prank, policy, Q, R)
        valid = jnp.ones(L, bool)
        m = jax.vmap(lambda s, r, p, x, u: M.all_metrics(s, r, p, x, valid, num_procs, False, u))(
            submit, run, procs, st.start, user
        )
        return st.start, m, st.overflow | st.stuck.astype(jnp.int32) * 8

    key = (Q, R)
    if key not in _COMPILED:
        _COMPILED[key] = jax.jit(fn)
    return _COMPILED[key]


def evaluate_easypp(arrays: dict, pcodes, num_nodes: int, num_procs: float, prank_fn):
    """EASY++ for every sequence × main order (correct mode), for :func:`jaxsched.sim.evaluate.
    evaluate`'s ``easy++`` backfill mode.

    Args:
      arrays: :func:`jaxsched.sim.evaluate.window_arrays`'s dict of ``[S, L]`` arrays (with
        ``user``); pcodes: static heuristic codes of the main orders; prank_fn(i, arrays) ->
        int32 ``[S, L]`` the exact host ranks of main order number ``i``.
    Returns:
      ``(start int64 [S, P, L], metrics {name: float64 [S, P]})``.
    """
    S, L = arrays["submit"].shape
    uid = user_ids(arrays["user"])
    R = min(L, int(num_nodes))  # every job takes >= 1 node (evaluate checks it)
    starts, mets = [], []
    for i, code in enumerate(pcodes):
        if code in (H.WFP3, H.UNICEP):
            raise ConfigError("EASY++ takes a static main order (fcfs, sjf, f1, ...)")
        prank = prank_fn(i, arrays)
        out = _batch(L, R)(
            *(jnp.asarray(arrays[k]) for k in ("submit", "run", "req", "procs", "nodes", "user")),
            jnp.asarray(uid), jnp.asarray(prank, jnp.int32),
            jnp.full((S,), code, jnp.int32), jnp.asarray(num_nodes, jnp.int32),
            jnp.asarray(num_procs, jnp.float64),
        )  # fmt: skip
        start, m, bad = jax.tree_util.tree_map(np.asarray, out)
        if bad.any():
            raise ConfigError("internal error: an EASY++ run overflowed or got stuck")
        starts.append(start)
        mets.append(m)
    start = np.stack(starts, axis=1)
    metrics = {k: np.stack([m[k] for m in mets], axis=1) for k in mets[0]}
    return start, metrics


def evaluate_with_easypp(jobs, starts, length: int, policies, backfills, **kw):
    """:func:`jaxsched.sim.evaluate.evaluate` with ``"easy++"`` among ``backfills`` (correct
    mode only): the other modes as usual, EASY++ here, merged into one
    :class:`~jaxsched.sim.evaluate.EvalResult` in the order of ``backfills``."""
    from jaxsched.sim import evaluate as V

    if kw.get("compat", True):
        raise ConfigError("EASY++ is not part of the reference simulator; use the correct mode")
    names = [b.strip().lower() for b in backfills]
    names = [b if b == NAME else E.BACKFILLS[E.backfill_code(b)] for b in names]
    rest = [b for b in names if b != NAME]
    metrics = list(kw.get("metrics", ("bsld", "wait", "turnaround", "sld", "util")))
    base = V.evaluate(jobs, starts, length, policies, rest, **kw) if rest else None
    pols, pcodes, _, _ = V._check_names(policies, rest, metrics, False)
    starts = np.asarray(list(starts), np.int64)
    arrays = V.window_arrays(jobs, starts, length)

    tuned = [T.as_tuned(p) for p in policies]

    def prank_fn(i, a):
        if tuned[i] is not None:
            return tuned[i].rank(a["submit"], a["req"], a["procs"])
        return H.host_rank(pcodes[i], a["submit"], a["req"], a["procs"])

    t0 = time.perf_counter()
    st_pp, m_pp = evaluate_easypp(arrays, pcodes, jobs.num_nodes, jobs.num_procs, prank_fn)
    run_s = time.perf_counter() - t0
    S, P = len(starts), len(pcodes)
    out = np.full((S, P, len(names), length), -1, np.int64)
    rows = list(base.rows) if base else []
    for b_i, b in enumerate(names):
        if b == NAME:
            out[:, :, b_i] = st_pp
        else:
            out[:, :, b_i] = base.start_times[:, :, rest.index(b)]
    rows += [
        {"start": int(starts[s]), "jobs": length, "policy": pols[p], "backfill": NAME,
         "metric": m, "value": float(m_pp[m][s, p])}
        for s in range(S) for p in range(P) for m in metrics
    ]  # fmt: skip
    timing = dict(base.timing) if base else {"compile_s": 0.0, "run_s": 0.0, "runs": 0}
    timing["easypp_s"] = run_s
    return V.EvalResult(
        rows=rows, starts=starts, policies=pols, backfills=names, metrics=metrics,
        start_times=out, timing=timing,
    )  # fmt: skip
