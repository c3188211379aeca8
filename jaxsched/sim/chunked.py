"""One long schedule (a whole trace) in compiled chunks, so the host can report progress.

:func:`jaxsched.sim.evaluate.evaluate` runs each schedule as one ``while_loop``: fastest, but
silent until the end (HPC2N's 203k jobs: 7-11 s without backfilling, 56-64 s with EASY on the
2-core CPU). :func:`schedule_window` runs the same engine micro-steps as ``evaluate`` (the
no-backfilling bitmask path of :mod:`jaxsched.sim.nobf` where ``evaluate`` takes it, else
:func:`jaxsched.sim.engine.micro_step_logged` under the heuristic's choice, as a batch of one)
in chunks of at most ``limit`` micro-steps: one compiled function whose step budget is an
argument, called again from the returned state until the schedule is done — no retrace, no
per-step host round trip — and calls ``progress(jobs started, jobs)`` between chunks. The
start times are those of :func:`~jaxsched.sim.evaluate.evaluate` (a test checks it); the time
is within about 1.1-2x of it (benchmarks/speed/simulate_trace.py, RESULTS.md §16).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H
from jaxsched.sim import engine as E
from jaxsched.sim import nobf
from jaxsched.sim.evaluate import window_arrays
from jaxsched.sim.primitives import logged_until

__all__ = ["schedule_window"]

_RUN_UNTIL: dict = {}
#: micro-steps of one compiled call at most (the starts are logged per step and written at the
#: end of each call); the host calls again until its own budget of about a second is used
CHUNK_STEPS = 1 << 16


def _run_until_fn(queue_cap: int, run_cap: int, dynamic: bool, fast: bool):
    """Jitted ``(first(seq, prank) -> state, run(seq, params, prank, state, limit) -> state)``:
    micro-steps until the schedule is done, overflows or gets stuck, or ``state.steps``
    reaches ``limit`` (int32 scalar), built once per configuration. ``fast``: no backfilling
    under a static-key heuristic, the path ``evaluate`` takes there (the general micro-steps
    were 10x slower on a whole trace; its only capacity is the running list)."""
    key = (None if fast else queue_cap, run_cap, dynamic, fast)
    if key not in _RUN_UNTIL:
        fns = _nobf_fns(run_cap) if fast else _engine_fns(queue_cap, run_cap, dynamic)
        _RUN_UNTIL[key] = tuple(map(jax.jit, fns))
    return _RUN_UNTIL[key]


def _nobf_fns(run_cap: int):
    """:func:`jaxsched.sim.nobf.run_static_nobf_until` in chunks."""

    def first(seq, prank):
        return nobf.init_static_nobf(seq, prank, run_cap)

    def run(seq, params, prank, st, limit):
        return nobf.run_static_nobf_until(seq, prank, st, limit, CHUNK_STEPS)

    return first, run


def _engine_fns(queue_cap: int, run_cap: int, dynamic: bool):
    """The engine's micro-steps under the heuristic's choice, as a batch of one (as ``evaluate``
    runs them: the engine's batching rules run the costly branches as sparse conditionals;
    unbatched the step was twice as slow), the starts logged (:func:`logged_until`)."""

    def one(q, p, s):
        return E.micro_step_logged(q, p, s, E.heuristic_choice(q, p, s, dynamic))

    def first(seq, prank):
        return E.reset(seq, prank, queue_cap, run_cap)

    def run(seq, params, prank, st, limit):
        add = functools.partial(jax.tree_util.tree_map, lambda x: x[None])

        def step(s):
            return jax.tree_util.tree_map(
                lambda x: x[0], jax.vmap(one)(add(seq), add(params), add(s))
            )

        return logged_until(step, st, limit, CHUNK_STEPS)

    return first, run


def _sequence(jobs, start: int, length: int):
    a = window_arrays(jobs, [start], length)
    seq = E.Sequence(
        submit=jnp.asarray(a["submit"][0]),
        run=jnp.asarray(a["run"][0]),
        req=jnp.asarray(a["req"][0]),
        procs=jnp.asarray(a["procs"][0]),
        nodes=jnp.asarray(a["nodes"][0]),
        n_jobs=jnp.asarray(length, jnp.int32),
        num_nodes=jnp.asarray(int(jobs.num_nodes), jnp.int32),
        log2n=jnp.asarray(a["log2n"][0]),
    )
    return seq, a


def schedule_window(
    jobs,
    start: int,
    length: int,
    policy: str,
    backfill: str,
    *,
    compat: bool = False,
    progress: Callable[[int, int], None] | None = None,
    seconds_per_chunk: float = 1.0,
    queue_cap: int = 256,
    run_cap: int = 64,
    seed: int = 0,
    first_chunk_steps: int = 20_000,
) -> np.ndarray:
    """Start times (int64 ``[length]``) of jobs ``start … start+length-1`` of ``jobs`` scheduled
    by the heuristic ``policy`` with ``backfill`` on an idle cluster, in chunks of about
    ``seconds_per_chunk`` (the first chunk calibrates); ``progress(started, length)`` after
    each (the first chunk has ``first_chunk_steps`` micro-steps). Capacities grow 4x on
    overflow (the run restarts), as in ``evaluate``."""
    pcode = H.policy_code(policy.strip().lower())
    bcode = E.backfill_code(backfill)
    if compat and bcode == E.BACKFILL_EASY:
        raise ConfigError("backfill 'easy' is not part of the reference simulator")
    seq, a = _sequence(jobs, int(start), int(length))
    rand_u = np.random.default_rng(seed).random((1, length)) if pcode == H.RANDOM else None
    prank = H.host_rank(pcode, a["submit"], a["req"], a["procs"], rand_u)[0]
    params = E.SimParams(
        policy=jnp.asarray(pcode, jnp.int32),
        backfill=jnp.asarray(bcode, jnp.int32),
        compat=jnp.asarray(bool(compat)),
    )
    dynamic = (not compat) and pcode in (H.WFP3, H.UNICEP)
    fast = (not dynamic) and bcode == E.BACKFILL_NONE
    caps = (min(queue_cap, length), min(run_cap, length, int(jobs.num_nodes)))
    while True:
        st = _run_chunks(seq, params, jnp.asarray(prank), _run_until_fn(*caps, dynamic, fast),
                         length, progress, seconds_per_chunk, first_chunk_steps)  # fmt: skip
        if bool(st.stuck):
            raise ConfigError("the schedule could not be completed (a job never fits)")
        over = int(st.overflow)
        if not over:
            return np.asarray(st.start, np.int64)
        q, r = caps
        caps = (min(4 * q, length) if over & 1 else q, min(4 * r, length) if over & 2 else r)


def _run_chunks(seq, params, prank, fns, length, progress, seconds_per_chunk, budget):
    first, run = fns
    st = first(seq, prank)
    while not (bool(st.done) or int(st.overflow) or bool(st.stuck)):
        t0, before = time.perf_counter(), int(st.steps)
        st = run(seq, params, prank, st, jnp.asarray(min(before + budget, 2**31 - 1), jnp.int32))
        took = max(time.perf_counter() - t0, 1e-3)
        if progress is not None:
            progress(int(st.n_started), length)
        done = max(int(st.steps) - before, 1)
        budget = int(np.clip(done * seconds_per_chunk / took, 1, 50_000_000))
    return st
