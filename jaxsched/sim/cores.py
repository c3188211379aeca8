"""Per-core cluster model and an arrival-ordered queue, for schedulers that see every core
(split-window deep back-filling, spec ``split_window.md`` §2).

The engine of :mod:`jaxsched.sim.engine` counts free nodes and keeps a sorted running list; a
split-window agent instead sees each core's remaining busy time (spec §3.1), cores have
identities and a job takes the ``c`` lowest-indexed free cores (§2.3). This module holds that
model as pure primitives (``jit``/``vmap``-able), reusing the engine's list helpers
(:func:`~jaxsched.sim.primitives.running_drop`, :func:`~jaxsched.sim.primitives.argmax_bool`):

* :func:`init_state` — an empty cluster and queue at a start index of the trace;
* :func:`start_job` — start the job at a queue position now, if it fits (the engine's "start a
  job if it fits");
* :func:`next_event` / :func:`advance_one` — the next event (one arrival, or the completions of
  one instant) and processing exactly one event; :func:`advance_until` — every event up to a
  time;
* :func:`reward_terms` — η, L, W of the reward ℜ(t) (spec §5) and the running maxima.

Event order (reference README rule 5): the earlier of the next arrival and the earliest
completion; completions win ties; arrivals at one instant are separate events in trace order;
the completions of one instant are one event (``completions="all"``, default) or one job per
event, earlier-placed first (``completions="each"``, the alternative of spec §11).

Shapes: ``J`` trace jobs, ``N`` cores, ``Q`` queue capacity, ``T`` job types. Times int64
seconds. An arrival into a full queue sets ``overflow`` (nothing is dropped silently: the
episode stops and host code raises :class:`QueueOverflow`).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxsched.errors import JaxschedError
from jaxsched.precision import require_x64
from jaxsched.sim.primitives import running_drop
from jaxsched.sim.types import BIG

__all__ = [
    "COMPLETIONS",
    "CORE_EDGES",
    "RUN_EDGES",
    "core_bin",
    "type_core_bins",
    "QueueOverflow",
    "CoreTrace",
    "CoreState",
    "make_trace",
    "job_types",
    "init_state",
    "start_job",
    "next_event",
    "advance_one",
    "advance_until",
    "reward_terms",
    "update_maxima",
    "check_overflow",
]

#: completion-event readings (spec §11): one event per instant, or one job per event
COMPLETIONS = ("all", "each")
#: job-type bins (spec §8.7): cores upper edges (1, 2, 3-4, ..., 129-256) and run-time upper
#: edges in seconds (< 1 min, < 10 min, < 1 h, < 10 h, longer)
CORE_EDGES = (1, 2, 4, 8, 16, 32, 64, 128)
RUN_EDGES = (60, 600, 3600, 36000)


class QueueOverflow(JaxschedError):
    """An episode whose queue outgrew the fixed capacity (raise the ``queue_cap``)."""


@struct.dataclass
class CoreTrace:
    """Device-side trace: ``submit`` int64 ``[J]``, ``run`` int64 ``[J]`` (duration = runtime
    feature), ``cores`` int32 ``[J]``, ``jtype`` int32 ``[J]`` (job-type bin of §8.7)."""

    submit: jax.Array
    run: jax.Array
    cores: jax.Array
    jtype: jax.Array


def core_bin(cores) -> np.ndarray:
    """Core bin (int) of jobs of ``cores`` cores: by :data:`CORE_EDGES`, a bin holds
    ``c <= edge``; the last bin holds the rest."""
    return np.searchsorted(np.asarray(CORE_EDGES), np.asarray(cores), side="left")


def job_types(cores: np.ndarray, run: np.ndarray) -> np.ndarray:
    """int32 ``[J]`` job-type index ``core_bin * (len(RUN_EDGES) + 1) + run_bin``: core bins
    by :func:`core_bin`, run bins by :data:`RUN_EDGES` (``r < edge``)."""
    rb = np.searchsorted(np.asarray(RUN_EDGES), np.asarray(run), side="right")
    return (core_bin(cores) * (len(RUN_EDGES) + 1) + rb).astype(np.int32)


#: number of job types
N_TYPES = (len(CORE_EDGES) + 1) * (len(RUN_EDGES) + 1)


def type_core_bins() -> np.ndarray:
    """int ``[N_TYPES]``: the core bin of each job type (the core part of :func:`job_types`)."""
    return np.arange(N_TYPES) // (len(RUN_EDGES) + 1)


def make_trace(submit, run, cores) -> CoreTrace:
    """A :class:`CoreTrace` from host arrays (submit and run int64, cores int)."""
    submit, run, cores = (np.asarray(a, np.int64) for a in (submit, run, cores))
    return CoreTrace(
        submit=jnp.asarray(submit, jnp.int64),
        run=jnp.asarray(run, jnp.int64),
        cores=jnp.asarray(cores, jnp.int32),
        jtype=jnp.asarray(job_types(cores, run)),
    )


@struct.dataclass
class CoreState:
    """Cluster, queue and episode accumulators.

    Attributes:
      t: int64 clock; t0: int64 the episode's first submit time.
      core_end: int64 ``[N]`` finish time of the job on each core (−1 free).
      core_start: int64 ``[N]`` its start time; core_tag: int32 ``[N]`` its placement number
        (−1 free; ties of ``completions="each"`` release the lowest tag first).
      q_job: int32 ``[Q]`` trace index at each queue position (0 = oldest), −1 past ``q_len``.
      q_len: int32; q_sum_submit: int64 sum of the queued jobs' submit times.
      next: int32 next trace index to arrive; start: int32 the episode's first index.
      placed: int32 jobs started; l_max, w_max: int32 / int64 running maxima of L and W (§5).
      area_busy, area_queue: int64 integrals of busy cores and of L over [t0, t] (§8.1-2).
      t_win: int64 end of the arrival span (the submit time of the episode's last counted job,
        :func:`init_state`); area_busy_win, area_queue_win: int64 the same integrals over
        [t0, min(t, t_win)], a window that is the same for every policy.
      wait_sum: int64 Σ (start − submit) of placed jobs; bsld_sum, load_sum: float64 Σ bsld
        and Σ wait·c·r of placed jobs; type_wait: float64 ``[T]``, type_count: int32 ``[T]``
        per job type (§8.7).
      overflow: bool an arrival found the queue full; exhausted: bool no event is left.
    """

    t: jax.Array
    t0: jax.Array
    core_end: jax.Array
    core_start: jax.Array
    core_tag: jax.Array
    q_job: jax.Array
    q_len: jax.Array
    q_sum_submit: jax.Array
    next: jax.Array
    start: jax.Array
    placed: jax.Array
    l_max: jax.Array
    w_max: jax.Array
    area_busy: jax.Array
    area_queue: jax.Array
    t_win: jax.Array
    area_busy_win: jax.Array
    area_queue_win: jax.Array
    wait_sum: jax.Array
    bsld_sum: jax.Array
    load_sum: jax.Array
    type_wait: jax.Array
    type_count: jax.Array
    overflow: jax.Array
    exhausted: jax.Array


def init_state(tr: CoreTrace, start, n_cores: int, queue_cap: int, span_jobs: int = 0) -> CoreState:
    """Empty cluster and queue, clock at the submit time of job ``start`` (int32 scalar), no
    event processed yet. The arrival span ends at the submit time of job ``start + span_jobs
    - 1`` (the trace's last job at most; ``span_jobs`` 0: an empty span)."""
    require_x64("jaxsched.sim.cores.init_state")
    start = jnp.asarray(start, jnp.int32)
    t0 = tr.submit[start]
    last = jnp.clip(start + span_jobs - 1, 0, tr.submit.shape[0] - 1)
    i64, i32 = jnp.int64, jnp.int32
    z64, z32 = jnp.zeros((), i64), jnp.zeros((), i32)
    return CoreState(
        t=t0,
        t0=t0,
        core_end=jnp.full((n_cores,), -1, i64),
        core_start=jnp.zeros((n_cores,), i64),
        core_tag=jnp.full((n_cores,), -1, i32),
        q_job=jnp.full((queue_cap,), -1, i32),
        q_len=z32,
        q_sum_submit=z64,
        next=start,
        start=start,
        placed=z32,
        l_max=z32,
        w_max=z64,
        area_busy=z64,
        area_queue=z64,
        t_win=t0 if span_jobs <= 0 else tr.submit[last],
        area_busy_win=z64,
        area_queue_win=z64,
        wait_sum=z64,
        bsld_sum=jnp.zeros((), jnp.float64),
        load_sum=jnp.zeros((), jnp.float64),
        type_wait=jnp.zeros((N_TYPES,), jnp.float64),
        type_count=jnp.zeros((N_TYPES,), i32),
        overflow=jnp.zeros((), bool),
        exhausted=jnp.zeros((), bool),
    )


def busy_cores(st: CoreState) -> chex.Array:
    """int32 number of busy cores."""
    return jnp.sum(st.core_tag >= 0).astype(jnp.int32)


def queue_wait(st: CoreState) -> chex.Array:
    """int64 W(t) = Σ over queued jobs of (t − s_j), exact."""
    return st.q_len.astype(jnp.int64) * st.t - st.q_sum_submit


def start_job(tr: CoreTrace, st: CoreState, pos, enabled=True):
    """Start the job at queue position ``pos`` (int32, 0 = oldest) now on its ``c`` lowest
    indexed free cores, if ``enabled`` and it exists and fits. Returns ``(state, started)``
    (bool scalar); the clock does not move."""
    pos = jnp.asarray(pos, jnp.int32)
    ok_pos = (pos >= 0) & (pos < st.q_len)
    j = st.q_job[jnp.clip(pos, 0, st.q_job.shape[0] - 1)]
    jj = jnp.maximum(j, 0)
    c, r, s = tr.cores[jj], tr.run[jj], tr.submit[jj]
    free = st.core_tag < 0
    ok = enabled & ok_pos & (c <= jnp.sum(free))
    take = ok & free & (jnp.cumsum(free) <= c)
    wait = st.t - s
    wf = wait.astype(jnp.float64)
    rf = r.astype(jnp.float64)
    bsld = jnp.maximum((wf + rf) / jnp.maximum(rf, 10.0), 1.0)
    hit = ok & (jnp.arange(N_TYPES) == tr.jtype[jj])
    new = st.replace(
        core_end=jnp.where(take, st.t + r, st.core_end),
        core_start=jnp.where(take, st.t, st.core_start),
        core_tag=jnp.where(take, st.placed, st.core_tag),
        q_job=running_drop(st.q_job, pos, -1, ok),
        q_len=st.q_len - ok.astype(jnp.int32),
        q_sum_submit=st.q_sum_submit - jnp.where(ok, s, 0),
        placed=st.placed + ok.astype(jnp.int32),
        wait_sum=st.wait_sum + jnp.where(ok, wait, 0),
        bsld_sum=st.bsld_sum + jnp.where(ok, bsld, 0.0),
        load_sum=st.load_sum + jnp.where(ok, wf * c.astype(jnp.float64) * rf, 0.0),
        type_wait=st.type_wait + jnp.where(hit, wf, 0.0),
        type_count=st.type_count + hit.astype(jnp.int32),
    )
    return new, ok


def next_event(tr: CoreTrace, st: CoreState):
    """``(time, arrive, any)``: int64 time of the next event, bool whether it is an arrival
    (completions win ties), bool whether any event is left."""
    fmin = jnp.min(jnp.where(st.core_tag >= 0, st.core_end, BIG))
    more = st.next < tr.submit.shape[0]
    s_next = jnp.where(more, tr.submit[jnp.minimum(st.next, tr.submit.shape[0] - 1)], BIG)
    arrive = more & (s_next < fmin)
    return jnp.where(arrive, s_next, fmin), arrive, more | (fmin < BIG)


def update_maxima(st: CoreState) -> CoreState:
    """The running maxima L_max, W_max updated with the current L and W."""
    return st.replace(
        l_max=jnp.maximum(st.l_max, st.q_len), w_max=jnp.maximum(st.w_max, queue_wait(st))
    )


def _release(st: CoreState, t_ev, completions: str, go):
    """Core fields after the completions at ``t_ev`` (where ``go``)."""
    ending = go & (st.core_tag >= 0) & (st.core_end == t_ev)
    if completions == "each":
        first = jnp.min(jnp.where(ending, st.core_tag, jnp.iinfo(jnp.int32).max))
        ending = ending & (st.core_tag == first)
    return dict(
        core_end=jnp.where(ending, -1, st.core_end),
        core_start=jnp.where(ending, 0, st.core_start),
        core_tag=jnp.where(ending, -1, st.core_tag),
    )


def _arrive(tr: CoreTrace, st: CoreState, go):
    """Queue fields after the next arrival (where ``go``); a full queue sets ``overflow``."""
    cap = st.q_job.shape[0]
    full = go & (st.q_len >= cap)
    put = go & ~full
    j = jnp.minimum(st.next, tr.submit.shape[0] - 1)
    return dict(
        q_job=jnp.where(put & (jnp.arange(cap) == st.q_len), j, st.q_job),
        q_len=st.q_len + put.astype(jnp.int32),
        q_sum_submit=st.q_sum_submit + jnp.where(put, tr.submit[j], 0),
        next=st.next + go.astype(jnp.int32),
        overflow=st.overflow | full,
    )


def advance_one(tr: CoreTrace, st: CoreState, completions: str = "all", enabled=True):
    """Process exactly one event (the clock moves to it; busy-core and queue integrals grow),
    then update the running maxima. Nothing happens unless ``enabled``; a state with no event
    left gets ``exhausted``. ``completions`` is static (:data:`COMPLETIONS`)."""
    t_ev, arrive, anyev = next_event(tr, st)
    enabled = jnp.asarray(enabled)
    go = enabled & anyev & ~st.overflow
    out = st.replace(
        **_integrals(st, jnp.where(go, t_ev, st.t)),
        exhausted=st.exhausted | (enabled & ~anyev),
        **_release(st, t_ev, completions, go & ~arrive),
        **_arrive(tr, st, go & arrive),
    )
    return update_maxima(out)


def advance_until(tr: CoreTrace, st: CoreState, t, completions: str = "all") -> CoreState:
    """Process every event at or before ``t`` (int64), then move the clock to ``t`` if later
    (integrals included)."""
    t = jnp.asarray(t, jnp.int64)

    def cond(s):
        t_ev, _, anyev = next_event(tr, s)
        return anyev & (t_ev <= t) & ~s.overflow

    out = jax.lax.while_loop(cond, lambda s: advance_one(tr, s, completions), st)
    return update_maxima(out.replace(**_integrals(out, jnp.maximum(t, out.t))))


def _integrals(st: CoreState, t_new) -> dict:
    """The clock moved to ``t_new`` (int64, >= ``st.t``) with the cluster and queue of ``st``
    held over the interval: the new clock and the grown integrals (whole and arrival span)."""
    dt = t_new - st.t
    dw = jnp.minimum(t_new, st.t_win) - jnp.minimum(st.t, st.t_win)
    busy, q = busy_cores(st).astype(jnp.int64), st.q_len.astype(jnp.int64)
    return dict(
        t=t_new,
        area_busy=st.area_busy + dt * busy,
        area_queue=st.area_queue + dt * q,
        area_busy_win=st.area_busy_win + dw * busy,
        area_queue_win=st.area_queue_win + dw * q,
    )


def reward_terms(st: CoreState, n_cores: int):
    """float64 ``(1 − η, L/L_max, W/W_max)`` at the current clock (spec §5; a ratio whose
    maximum is 0 is 0). Call on a state whose maxima are up to date (:func:`update_maxima`)."""
    f64 = jnp.float64
    eta = busy_cores(st).astype(f64) / n_cores
    lr = jnp.where(st.l_max > 0, st.q_len.astype(f64) / jnp.maximum(st.l_max, 1).astype(f64), 0.0)
    w = queue_wait(st)
    wr = jnp.where(st.w_max > 0, w.astype(f64) / jnp.maximum(st.w_max, 1).astype(f64), 0.0)
    return 1.0 - eta, lr, wr


def check_overflow(overflow, queue_cap: int) -> None:
    """Raise :class:`QueueOverflow` (one line) if any entry of the host bool array is set."""
    ov = np.asarray(overflow)
    if ov.any():
        raise QueueOverflow(
            f"{int(ov.sum())} episode(s) had more than {queue_cap} queued jobs; "
            "raise queue_cap (--queue-cap)"
        )
