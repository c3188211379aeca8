"""One schedule of one sequence (``jaxsched simulate``): on the host or on the compiled engine.

Two exact engines give the same start times (tests/sim/test_single.py checks them against each
other and against :mod:`jaxsched.sim.oracle`):

* ``"host"``: the plain-Python event loop of :mod:`jaxsched.sim.oracle` (EASY++:
  :mod:`jaxsched.sim.oracle_easypp`), fed the engine's own static priority ranks
  (:func:`jaxsched.policies.heuristics.host_rank`, a tuned priority's ranks, the ``random``
  policy's uniforms drawn as :func:`jaxsched.sim.evaluate.evaluate` draws them) in place of the
  oracle's per-job Python keys: ints compare faster than the oracle's tuples, and the order is
  the one the compiled engine schedules by. WFP3/UNICEP in the correct mode keep the oracle's
  clock-dependent keys. Without backfilling a static order runs on heaps
  (:func:`_static_without_backfilling`; the oracle takes the minimum of its whole queue at
  every decision: SDSC-SP2 under FCFS 4.1 s against 0.07 s). EASY skips the pass of an event
  at which no node is free and scans only the jobs that fit (:class:`_SkipFull`), and sorts
  the running jobs' requested ends once per reservation (:class:`_FastReservation`).
* ``"jax"``: :func:`jaxsched.sim.evaluate.evaluate` as a batch of one (one compiled loop), or
  :func:`jaxsched.sim.chunked.schedule_window` (the same engine in chunks, for a progress bar).

``"auto"`` (:func:`choose_engine`) takes the host for every heuristic schedule: one sequence is
one sequential event loop, which the compiled engine runs no faster per event on a CPU (one
``while_loop`` gives an accelerator nothing to run in parallel; not measured on one here), and
its compile alone (2-16 s per configuration on the shared 2-core CPU) exceeds the host's whole
run of a 60,000-job trace (0.07-0.9 s; benchmarks/speed/simulate_vs_oracle.py, notebook §26). Both engines take every policy and mode
:func:`jaxsched.sim.evaluate.evaluate` does, and refuse the same requests (EASY++ under
WFP3/UNICEP: EASY++ takes a static main order).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H
from jaxsched.policies import tuned as T

__all__ = ["ENGINES", "BACKFILL_CHOICES", "Names", "check_names", "choose_engine", "host_starts",
           "jax_starts", "schedule"]  # fmt: skip

#: the ``--engine`` choices
ENGINES = ("auto", "host", "jax")
#: every backfilling mode :func:`jaxsched.sim.evaluate.evaluate` takes (EASY++ last)
BACKFILL_CHOICES = ("none", "rlscheduler", "easy", "rlscheduler-sjbf", "easy-sjbf", "easy++")


@dataclasses.dataclass(frozen=True)
class Names:
    """A checked policy and backfilling mode: ``policy`` the name reported (a heuristic's
    canonical name or ``tuned:PATH``), ``code`` its heuristic code (FCFS's for a tuned
    priority, whose ranks are ``tuned``'s), ``backfill`` the canonical mode name."""

    policy: str
    code: int
    backfill: str
    tuned: T.TunedPriority | None = None

    @property
    def easypp(self) -> bool:
        return self.backfill == "easy++"

    @property
    def dynamic(self) -> bool:
        return self.code in (H.WFP3, H.UNICEP) and self.tuned is None


def check_names(policy: str, backfill: str, compat: bool) -> Names:
    """The policy and mode as :func:`jaxsched.sim.evaluate.evaluate` reads them (its own
    checks: heuristic names and aliases, ``tuned:PATH``, backfill names and aliases, EASY modes
    only in the correct mode, EASY++ likewise); ConfigError otherwise."""
    from jaxsched.sim import evaluate as V
    from jaxsched.sim.easypp import NAME

    pp = backfill.strip().lower() == NAME
    if pp and compat:  # evaluate_with_easypp's message
        raise ConfigError("EASY++ is not part of the reference simulator; use the correct mode")
    tuned = T.as_tuned(policy)
    names, codes, bnames, _ = V._check_names([policy], [] if pp else [backfill], [], compat)
    out = Names(names[0], int(codes[0]), NAME if pp else bnames[0], tuned)
    if pp and out.dynamic:  # evaluate_easypp's refusal, before any work
        raise ConfigError(
            f"EASY++ takes a static main order (fcfs, sjf, f1, ...), not {out.policy}"
        )
    return out


def choose_engine(engine: str, names: Names, compat: bool) -> str:
    """``"host"`` or ``"jax"`` for ``--engine engine``; ``auto``: the host, the faster for one
    sequence on every policy and mode (the module docstring). ``names`` and ``compat`` are
    the request, for a rule that would depend on them."""
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    return "host" if engine == "auto" else engine


def _ranks(names: Names, a: dict, seed: int) -> np.ndarray:
    """The static priority rank of every job of the window ``a`` (one row), as ``evaluate``
    ranks them (:func:`jaxsched.sim.evaluate._policy_ranks` for one run)."""
    s, q, n = a["submit"], a["req"], a["procs"]
    if names.tuned is not None:
        return names.tuned.rank(s, q, n)[0]
    rand_u = None
    if names.code == H.RANDOM:
        rand_u = np.random.default_rng(seed).random(s.shape)
    return H.host_rank(names.code, s, q, n, rand_u)[0]


def host_starts(jobs, start: int, length: int, names: Names, compat: bool, *,
                progress: Callable[[int, int], None] | None = None, seed: int = 0) -> np.ndarray:  # fmt: skip
    """Start times (int64 ``[length]``) of jobs ``start … start+length-1`` on the host engine;
    ``progress(started, length)`` about 200 times along the way (and at the end).

    Static keys without backfilling (either mode: their schedules are the same, no list
    order matters there) run :func:`_static_without_backfilling` on heaps; everything else
    the oracle's event loop (:class:`jaxsched.sim.oracle._Run`; EASY's waits by
    :class:`_SkipFull` and :class:`_FastReservation`)."""
    from jaxsched.sim.evaluate import window_arrays

    a = window_arrays(jobs, [int(start)], int(length))  # the engine's checks and messages
    s, r, q, n, k = (a[x][0] for x in ("submit", "run", "req", "procs", "nodes"))
    _check(s, r, q, names, jobs)
    dynamic = names.dynamic and not compat
    every = max(1, length // 200)
    if names.backfill == "none" and not dynamic:
        rank = _ranks(names, a, seed)
        starts = _static_without_backfilling(s.tolist(), r.tolist(), k.tolist(),
                                             int(jobs.num_nodes), rank, progress, every)  # fmt: skip
    else:
        bf = "easy-sjbf" if names.easypp else names.backfill
        args = (s.tolist(), r.tolist(), q.tolist(), n.tolist(), k.tolist(), int(jobs.num_nodes),
                float(jobs.procs_per_node), names.policy if dynamic else None, bf, compat, None,
                False)  # fmt: skip
        if names.easypp:
            from jaxsched.sim.oracle_easypp import check_users

            args = (check_users(a["user"][0]), *args)
        run = _host_class(names.easypp, progress is not None)(*args)
        if not dynamic:
            run.keys = _ranks(names, a, seed).tolist()  # unique ints: ties need no index
        if progress is not None:
            run.progress, run.every = progress, every
        starts = run.run().starts
    if progress is not None:
        progress(length, length)
    return np.asarray(starts, np.int64)


def _check(s, r, q, names: Names, jobs) -> None:
    """The oracle's input checks that :func:`~jaxsched.sim.evaluate.window_arrays` leaves
    (:func:`jaxsched.sim.oracle._checked_inputs`, its messages), on arrays."""
    if int(jobs.num_nodes) <= 0 or not float(jobs.procs_per_node) > 0:
        raise ConfigError("num_nodes and procs_per_node must be positive")
    bad = np.nonzero(np.diff(s) < 0)[0]
    if bad.size:
        raise ConfigError(f"submit times must be nondecreasing (job {int(bad[0]) + 1})")
    bad = np.nonzero(r < 0)[0]
    if bad.size:
        raise ConfigError(f"job {int(bad[0])} has a negative run time {int(r[bad[0]])}")
    if names.dynamic and (q == 0).any():
        raise ConfigError(f"{names.policy} divides by the requested time; a job has req_time == 0")


def _static_without_backfilling(s, r, k, N, rank, progress, every) -> list:
    """The oracle's event loop (:meth:`jaxsched.sim.oracle._Run.run` without backfilling) for a
    static order, on heaps: the waiting jobs by rank (the committed job leaves the heap when
    picked; without backfilling nothing else starts while it waits), the running ones by
    (actual finish, start order), the oracle's release order in both modes (its running list
    is only ever stably sorted by actual finish here). One event per arrival or release, an
    arrival first on a tie, as ``advance`` does."""
    from heapq import heappop, heappush

    L = len(s)
    by_rank = [0] * L
    for i, x in enumerate(rank.tolist()):
        by_rank[x] = i
    rank = rank.tolist()
    start = [-1] * L
    t, F, nxt, order, started = s[0], N, 1, 0, 0
    queue, running = [rank[0]], []  # ranks; (finish, start order, job)
    inf = float("inf")
    while True:  # a decision: the queue is not empty
        j = by_rank[heappop(queue)]
        kj = k[j]
        while kj > F:  # the committed job waits; arrivals join the queue meanwhile
            f0 = running[0][0] if running else inf
            if nxt < L and s[nxt] <= f0:
                t = max(t, s[nxt])
                heappush(queue, rank[nxt])
                nxt += 1
            else:
                t = max(t, f0)
                F += k[heappop(running)[2]]
        F -= kj
        start[j] = t
        heappush(running, (t + r[j], order, j))
        order += 1
        started += 1
        if progress is not None and started % every == 0:
            progress(started, L)
        if not queue:
            if nxt >= L:
                return start
            while not queue:  # time moves to the next arrival, releases on the way
                f0 = running[0][0] if running else inf
                if s[nxt] <= f0:
                    t = max(t, s[nxt])
                    heappush(queue, rank[nxt])
                    nxt += 1
                else:
                    t = max(t, f0)
                    F += k[heappop(running)[2]]


class _Progress:
    """Counts starts and reports every ``every`` of them (a mixin over the oracle's runs)."""

    progress: Callable[[int, int], None]
    every = 1
    started = 0

    def start_job(self, b: int, backfilled: bool = False) -> None:
        super().start_job(b, backfilled)
        self.started += 1
        if self.started % self.every == 0:
            self.progress(self.started, self.L)


class _SkipFull:
    """EASY's wait (:meth:`jaxsched.sim.oracle._Run.wait_easy`) without the reservation and
    the pass of an event at which no node is free: every job needs a node (window_arrays
    refuses jobs without processors), so such a pass starts nothing and changes nothing (the
    reservation it computes is only recorded at entry, which :class:`SimResult` callers here
    do not read); a pass scans only the waiting jobs that fit in the free nodes at its start
    (the free nodes only shrink during a pass, so the others would be passed over)."""

    def wait_easy(self, j: int, n_arrived: int) -> None:
        k, start_job, bf_len = self.k, self.start_job, self.bf_len
        while k[j] > self.F:
            F = self.F
            if F:  # the oracle's pass, over the jobs that fit now (in the pass's order:
                # filtering first keeps it, the SJBF order being a stable sort)
                shadow, extra = self._easy_reservation(j)
                for b in self._scan_order([b for b in self.queue if k[b] <= F]):
                    kb = k[b]
                    if b == j or kb > self.F:
                        continue
                    if self.t + bf_len[b] <= shadow:
                        start_job(b, backfilled=True)
                    elif kb <= extra:
                        start_job(b, backfilled=True)
                        extra -= kb
            self.advance()


class _FastReservation:
    """EASY's reservation (:meth:`jaxsched.sim.oracle._Run._easy_reservation`) from the
    running jobs' requested ends ``max(start + q, t)`` (not EASY++'s predictions): sorted by
    request and clamped at the clock on the way, the same nondecreasing ends; the shadow and
    the extra nodes do not depend on the order of equal ends."""

    def _easy_reservation(self, j: int) -> tuple:
        k, est, t, running = self.k, self.est, self.t, self.running
        kj, avail, shadow = k[j], self.F, None
        for e, kx in sorted(zip(map(est.__getitem__, running), map(k.__getitem__, running))):
            if e < t:
                e = t
            if shadow is not None and e > shadow:
                break
            avail += kx
            if shadow is None and avail >= kj:
                shadow = e
        return shadow, avail - kj


_CLASSES: dict = {}


def _host_class(easypp: bool, progress: bool):
    """The oracle's run class (EASY++'s for ``easypp``) with :class:`_SkipFull`, for EASY
    :class:`_FastReservation`, for ``progress`` :class:`_Progress`."""
    key = (easypp, progress)
    if key not in _CLASSES:
        if easypp:
            from jaxsched.sim.oracle_easypp import _EasyPP as base
        else:
            from jaxsched.sim.oracle import _Run as base
        mixins = ((_Progress,) if progress else ()) + (_SkipFull,)
        mixins += () if easypp else (_FastReservation,)
        _CLASSES[key] = type(f"_Host{base.__name__}", (*mixins, base), {})
    return _CLASSES[key]


def jax_starts(jobs, start: int, length: int, names: Names, compat: bool, *,
               progress: Callable[[int, int], None] | None = None, seed: int = 0) -> np.ndarray:  # fmt: skip
    """Start times on the compiled engine: one compiled loop (:func:`~jaxsched.sim.evaluate.
    evaluate`), or with ``progress`` the same engine in chunks (:func:`~jaxsched.sim.chunked.
    schedule_window`; a tuned priority and EASY++ have no chunked form and run as one loop)."""
    if progress is None or names.tuned is not None or names.easypp:
        from jaxsched.sim.evaluate import evaluate

        policy = names.tuned if names.tuned is not None else names.policy
        res = evaluate(jobs, [int(start)], int(length), [policy], [names.backfill],
                       compat=compat, metrics=["bsld"], seed=seed)  # fmt: skip
        if progress is not None:  # no chunks: one report, at the end
            progress(int(length), int(length))
        return np.asarray(res.start_times[0, 0, 0], np.int64)
    from jaxsched.sim.chunked import schedule_window

    return schedule_window(jobs, int(start), int(length), names.policy, names.backfill,
                           compat=compat, progress=progress, seed=seed)  # fmt: skip


def schedule(jobs, start: int, length: int, policy: str, backfill: str, *, compat: bool = False,
             engine: str = "auto", progress=None, seed: int = 0) -> tuple:  # fmt: skip
    """``(start times, engine run)`` of one sequence: names checked (:func:`check_names`),
    the engine chosen (:func:`choose_engine`) and run."""
    names = check_names(policy, backfill, compat)
    which = choose_engine(engine, names, compat)
    fn = host_starts if which == "host" else jax_starts
    return fn(jobs, start, length, names, compat, progress=progress, seed=seed), which
