"""Host driver of the CQSim engine mode: runs slices under reference modes in one vmapped,
jitted call (capacities grown and the run repeated on overflow) and the reference metrics.

``simulate_cqsim(jobs, modes)`` → one :class:`CQRun` per mode (start times, job classes,
metrics). Metrics (reference README "Metrics", averages over the slice's jobs): ``avg_wait``,
``max_wait``, ``avg_bsld`` (max(1, turnaround / max(run, 10))), ``avg_slowdown``
(turnaround / run), ``avg_turnaround``, ``makespan`` (last end − first submit), ``util`` (time
average of busy/N from the first submit to the last finish, i.e. Σ n·run / (N · makespan)),
``util_node_seconds`` (the same sum), ``log_first_time``, ``log_last_time``, ``jobs``.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.sim.cqsim import engine as CE
from jaxsched.sim.cqsim.types import OVER_PROFILE, OVER_QUEUE, OVER_RUNNING, cq_params
from jaxsched.sim.types import Sequence

__all__ = ["CQRun", "simulate_cqsim", "simulate_cqsim_batch", "cqsim_metrics", "sequence_of"]


@dataclasses.dataclass
class CQRun:
    """One run: ``mode``; ``start``, ``end`` int64 ``[n]``; ``cls`` int32 ``[n]`` (0 backfilled,
    1 ready, 2 reserved); ``metrics`` (dict); ``passes`` (scheduling passes), ``decisions``
    (level-1 + level-2 decisions), ``steps`` (micro-steps)."""

    mode: str
    start: np.ndarray
    end: np.ndarray
    cls: np.ndarray
    metrics: dict
    passes: int
    decisions: int
    steps: int


def sequence_of(jobs, pad_to: int | None = None) -> Sequence:
    """The engine's :class:`~jaxsched.sim.types.Sequence` of a
    :class:`~jaxsched.workload.cqsim.CQSimJobs` (one processor per node), padded with empty
    jobs to ``pad_to`` entries if that is longer (``n_jobs`` stays the real count)."""
    L = max(jobs.n_jobs, int(pad_to or 0))

    def a(x, dt=jnp.int64):
        x = np.asarray(x)
        return jnp.asarray(np.concatenate([x, np.zeros(L - x.shape[0], x.dtype)]), dt)

    return Sequence(
        submit=a(jobs.submit), run=a(jobs.run), req=a(jobs.req_time), procs=a(jobs.nodes),
        nodes=a(jobs.nodes, jnp.int32), n_jobs=jnp.asarray(jobs.n_jobs, jnp.int32),
        num_nodes=jnp.asarray(jobs.num_nodes, jnp.int32),
    )  # fmt: skip


def _bucket(n: int) -> int:
    """The padded length of a run of ``n`` jobs: ``max(2048, next power of two)``."""
    return max(2048, 1 << max(0, int(n) - 1).bit_length())


@functools.lru_cache(maxsize=16)
def _run_fn(N: int, Q: int, R: int, batched: bool):
    """jit of reset + run_fixed for capacities (N, Q, R); ``batched``: vmapped over the
    sequence, the priority flags and the params (each with a leading batch axis)."""

    def one(seq, prio, params):
        st = CE.reset(seq, N, Q, R, prio)
        st = CE.run_fixed(seq, params, st)
        return st.start, st.cls, st.overflow, st.stuck, st.passes, st.decisions, st.steps

    return jax.jit(jax.vmap(one) if batched else one)


def _grown(L: int, n_jobs: int, N: int, Q: int, R: int, batched: bool, args, grow: bool):
    """Run ``_run_fn(N, Q, R, batched)(*args)``; while a run overflows (``grow``), double the
    capacity it names and run again: the running slots ``R`` up to ``L`` (every running job
    holds a slot), the queue slots ``Q`` (the profile's ``R + Q + 2`` points grow with it) up
    to ``n_jobs + 64``, which no queue exceeds. Returns ``(out, Q, R)``."""
    while True:
        out = jax.device_get(_run_fn(N, Q, R, batched)(*args))
        over = int(np.bitwise_or.reduce(np.ravel(np.asarray(out[2], np.int64))))
        if grow and over & OVER_RUNNING and R < L:
            R = min(2 * R, L)
        elif grow and over & (OVER_QUEUE | OVER_PROFILE) and Q < n_jobs + 64:
            Q = 2 * Q
        else:
            return out, Q, R


def simulate_cqsim(
    jobs, modes=("easy",), runtime: str = "code", queue_cap: int = 256, pad_to: int | None = None,
    run_cap: int | None = None, grow: bool = True,
) -> list:  # fmt: skip
    """Run ``jobs`` (:class:`~jaxsched.workload.cqsim.CQSimJobs`) under each reference mode
    (``none``, ``easy``, ``cons``, ``dras-fcfs``, ``dras-smallest``, ``dras-largest``), one
    compiled call per mode (unbatched: each micro-step runs only its own phase). Capacities:
    ``queue_cap`` queue slots (Q), ``run_cap`` running slots (R; default ``min(N, padded
    length)``: every job holds a node), ``R + Q + 2`` profile points; a run that overflows one
    is run again with it doubled (``grow``; with ``grow=False``, or past the largest useful
    size, :class:`~jaxsched.errors.ConfigError` names it). Returns a list of :class:`CQRun`.
    :class:`~jaxsched.errors.ConfigError` also if a run cannot finish (a job wider than the
    machine). ``pad_to``: compile for at least this many jobs; by default runs are padded to
    ``max(2048, next power of two)`` jobs, so runs of different lengths share one compiled
    program (padding costs little: a micro-step's work does not grow with the length)."""
    seq = sequence_of(jobs, pad_to or _bucket(jobs.n_jobs))
    prio = jnp.zeros(seq.submit.shape, jnp.int32).at[: jobs.n_jobs].set(jobs.priority)
    N, L = int(jobs.num_nodes), int(seq.submit.shape[0])
    R = max(1, int(run_cap)) if run_cap is not None else min(N, L)
    Q = max(int(queue_cap), 4)
    runs = []
    for m in modes:
        params = cq_params(m, runtime)
        out, Q, R = _grown(L, jobs.n_jobs, N, Q, R, False, (seq, prio, params), grow)
        runs.append(_result(jobs, m, out, N, Q, R))
    return runs


def _result(jobs, mode: str, out, N: int, Q: int, R: int) -> CQRun:
    start, cls, over, stuck, passes, dec, steps = out
    caps = ((OVER_QUEUE, f"queue slots (Q = {Q})"), (OVER_RUNNING, f"running slots (R = {R})"),
            (OVER_PROFILE, f"profile points (P = R + Q + 2 = {R + Q + 2})"))  # fmt: skip
    full = [name for bit, name in caps if int(over) & bit]
    if full:
        raise ConfigError(
            f"CQSim engine ({mode}): capacity exceeded: {', '.join(full)}; the run was "
            "stopped (run it with a larger capacity or with grow=True)"
        )
    if bool(stuck):
        raise ConfigError(
            f"CQSim engine ({mode}): a run could not finish (is a job wider than the "
            f"machine's {N} nodes?)"
        )
    n = jobs.n_jobs
    s, cls = np.asarray(start, np.int64)[:n], np.asarray(cls)[:n]
    met = cqsim_metrics(jobs.submit, jobs.run, jobs.nodes, s, N)
    e = s + np.asarray(jobs.run, np.int64)
    return CQRun(mode, s, e, cls, met, int(passes), int(dec), int(steps))


def simulate_cqsim_batch(jobs_list, mode: str = "easy", runtime: str = "code",
                         queue_cap: int = 256) -> list:  # fmt: skip
    """:func:`simulate_cqsim` for several slices of equal length and machine under one mode,
    vmapped in one compiled call (the vectorised engine; capacities grown as there). Returns
    one :class:`CQRun` each."""
    if len({(j.n_jobs, j.num_nodes) for j in jobs_list}) != 1:
        raise ConfigError("simulate_cqsim_batch: the slices need equal lengths and machines")
    stack = lambda *x: jnp.stack(x)  # noqa: E731
    seq = jax.tree_util.tree_map(stack, *[sequence_of(j) for j in jobs_list])
    prio = jnp.stack([jnp.asarray(j.priority, jnp.int32) for j in jobs_list])
    params = jax.tree_util.tree_map(stack, *[cq_params(mode, runtime)] * len(jobs_list))
    j0 = jobs_list[0]
    N, L = int(j0.num_nodes), j0.n_jobs
    out, Q, R = _grown(L, L, N, max(int(queue_cap), 4), min(N, L), True, (seq, prio, params), True)
    return [_result(j, mode, [o[b] for o in out], N, Q, R) for b, j in enumerate(jobs_list)]


def cqsim_metrics(submit, run, nodes, start, num_nodes: int) -> dict:
    """The reference metrics (module docstring) of one schedule (int ``[n]`` arrays)."""
    submit, run, nodes, start = (np.asarray(a, np.int64) for a in (submit, run, nodes, start))
    end = start + run
    wait = start - submit
    ta = (end - submit).astype(np.float64)
    r = run.astype(np.float64)
    first, last = int(submit.min()), int(end.max())
    span = last - first
    ns = float(np.sum(nodes * run)) / (num_nodes * span) if span > 0 else 0.0
    return {
        "jobs": int(submit.shape[0]),
        "avg_wait": float(np.mean(wait)),
        "max_wait": int(wait.max()),
        "avg_bsld": float(np.mean(np.maximum(1.0, ta / np.maximum(r, 10.0)))),
        "avg_slowdown": float(np.mean(ta / r)),
        "avg_turnaround": float(np.mean(ta)),
        "makespan": int(span),
        "util": ns,
        "util_node_seconds": ns,
        "log_first_time": float(first),
        "log_last_time": float(last),
    }
