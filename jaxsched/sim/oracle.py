"""Plain-Python oracle simulator for one job sequence (SchedGym event model).

This is the small, obviously-correct reference that the vectorised JAX engine is tested against,
and the CPU baseline of the benchmarks.  It simulates the L jobs of ONE sequence from an idle
cluster and returns the start time of every job.

Event model (both modes; spec ``rlscheduler.md`` §2.3–§2.6):

* ``advance_one`` processes exactly one event: the next arrival if its submit time is <= the
  earliest actual finish of a running job (ties go to the arrival), otherwise the release of ONE
  running job (one release per event even if several finish at the same second).
* A decision is taken whenever the queue is non-empty; the chosen job is *committed*: if it does
  not fit, events are processed (with backfill passes when enabled) until it fits, then it starts.
  After a start the next decision is taken at the same clock with the same queue minus that job;
  only when the queue is empty is time advanced to the next arrival.  The episode ends right
  after a start that leaves the queue empty once all jobs have arrived.
* A job occupies ``k = ceil(n / ppn)`` whole nodes; free capacity is counted in nodes.

``compat=True`` emulates the reference's Python lists literally (spec §2.8 is only used as an
independent check in the tests):

* the running list is stably re-sorted by actual finish before every event and the first one is
  popped; the shadow computation of the greedy backfilling stably re-sorts it by estimated finish
  and that order persists;
* the heuristic decision stably re-sorts the queue list by the priority key and takes its head;
  a backfill pass stably re-sorts the queue list by submit time and scans a snapshot of it;
  arrivals are appended;  RL-style decisions (``choose``) first sort the queue by submit time, as
  the reference's observation builder does;
* priority keys are the reference's float64 formulas (§4), with the WFP3/UNICEP waiting-time bug
  (w = -1 - s, static keys);
* the greedy backfilling (§2.6): shadow time computed once at entry from requested times,
  compared in processors; candidates must satisfy ``t + q < shadow`` (strict) and fit now; a pass
  after every single event.

``compat=False`` (the "correct" mode) keeps the event model but: release ties among equal actual
finish go to the job started first; WFP3/UNICEP use the real waiting time ``w = t - s`` at the
decision time; every backfill scan goes in (submit, index) order; ``backfill="easy"`` is true EASY
(reservation recomputed at entry and after every event, extra-nodes rule).

``backfill="rlscheduler-sjbf"`` / ``"easy-sjbf"``: the same backfilling with every pass scanning
its candidates shortest requested time first, ties in the mode's own scan order (a stable sort
by requested time of the list the plain mode scans; the queue list itself keeps its order).

Policies (smaller key first, ties to the lower sequence index): fcfs (s), sjf (q, s), wfp3,
unicep, f1..f4 (§4), smallest (n, s), saf (q·n), srf (q/n), ljf (-q), lcfs (-s).

Inputs are plain Python lists or numpy integer arrays (converted to Python ints; no numpy is
used).  Invalid input raises :class:`jaxsched.errors.ConfigError` (a ``ValueError``): unequal
lengths, decreasing submit times, a job needing more than ``num_nodes`` nodes (it could never
start), negative processors or run time, req_time == 0 with wfp3/unicep (the reference divides
by it), ``backfill="easy"`` with ``compat=True`` (the reference has no EASY).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from jaxsched.errors import ConfigError

__all__ = [
    "POLICIES",
    "BACKFILLS",
    "DecisionView",
    "SimResult",
    "node_counts",
    "priority_keys",
    "simulate",
    "simulate_with_choices",
    "simulate_detailed",
    "metrics",
]

POLICIES = tuple("fcfs sjf wfp3 unicep f1 f2 f3 f4 smallest saf srf ljf lcfs".split())
BACKFILLS = ("none", "rlscheduler", "easy", "rlscheduler-sjbf", "easy-sjbf")

_INF = float("inf")


# ----------------------------------------------------------------------------------------------
# numpy-like scalar maths (the reference calls np.log10 / np.sqrt on Python scalars)
# ----------------------------------------------------------------------------------------------
def _log10(x: float) -> float:
    if x > 0:
        return math.log10(x)
    return -_INF if x == 0 else math.nan


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else math.nan


def _log2(x: float) -> float:
    if x > 0:
        return math.log2(x)
    return -_INF if x == 0 else math.nan


def _static_key(policy: str, s: int, q: int, n: int):
    """Priority key of one job as the reference computes it (smaller = first).

    For wfp3/unicep this is the *compat* key (waiting time = -1 - s, the reference's bug)."""
    if policy == "fcfs":
        return s
    if policy == "sjf":
        return (q, s)
    if policy == "smallest":
        return (n, s)
    if policy == "f1":
        return _log10(q if q > 0 else 0.1) * n + 870 * _log10(s if s > 0 else 0.1)
    if policy == "f2":
        return _sqrt(q) * n + 25600 * _log10(s)
    if policy == "f3":
        return q * n + 6860000 * _log10(s)
    if policy == "f4":
        return q * _sqrt(n) + 530000 * _log10(s)
    if policy == "wfp3":
        w = -1 - s
        return -math.pow(float(w) / q, 3) * n
    if policy == "unicep":
        w = -1 - s
        return -(w + 1e-15) / (_log2(n + 1e-15) * q)
    if policy == "saf":
        return q * n
    if policy == "srf":
        return q / n if n > 0 else _INF
    if policy == "ljf":
        return -q
    if policy == "lcfs":
        return -s
    raise ConfigError(f"unknown policy {policy!r}; expected one of {POLICIES}")


def priority_keys(policy: str, submit, req_time, procs) -> list:
    """Static (compat) priority keys of all jobs, as Python floats/ints/tuples."""
    return [_static_key(policy, int(s), int(q), int(n)) for s, q, n in zip(submit, req_time, procs)]


def _wfp3_dynamic(w: int, q: int, n: int) -> float:
    # correct mode (our definition, no reference): the cube as two float64 products, which the
    # JAX engine computes bit-identically (libm's pow may differ from it by one ulp)
    x = float(w) / q
    return -(x * x * x) * n


def _unicep_dynamic(w: int, q: int, n: int) -> float:
    return -(w + 1e-15) / (_log2(n + 1e-15) * q)


def node_counts(procs, procs_per_node: float) -> list[int]:
    """k_i = ceil(n_i / ppn), computed as the reference does (float division)."""
    ppn = float(procs_per_node)
    return [int(math.ceil(float(n) / ppn)) for n in procs]


# ----------------------------------------------------------------------------------------------
# Decision hook
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DecisionView:
    """What a ``choose`` callback sees at a decision point (read-only by convention).

    ``queue`` holds the waiting jobs' sequence indices in (submit, index) order; the callback
    must return one of them.  ``running`` holds the running jobs' indices (list order of the
    simulator, not meaningful).  The per-job arrays are the inputs as Python lists (shared, do
    not modify); ``starts[i]`` is -1 for jobs not started yet."""

    t: int
    free_nodes: int
    queue: tuple
    running: tuple
    submit: list
    run: list
    req_time: list
    procs: list
    nodes: list
    starts: list
    num_nodes: int
    procs_per_node: float


@dataclass
class SimResult:
    """Detailed outcome of one simulated sequence."""

    starts: list  # start time of every job
    backfilled: list  # True if the job was started by a backfill pass
    entry_shadow: dict = field(default_factory=dict)
    # committed job -> reservation ("shadow") time computed when it entered a backfill wait
    # (rlscheduler: the one shadow of §2.6; easy: the first reservation)
    entry_extra: dict = field(default_factory=dict)  # easy only: extra nodes at entry
    decisions: int = 0  # number of committed picks
    decision_log: list = field(default_factory=list)
    # record=True: (t, j, n_arrived, queue) per decision: the queue (list order, j included)
    # when j was picked; n_arrived = number of jobs that had arrived by then
    pass_log: list = field(default_factory=list)
    # record=True: (t, j, n_arrived at the pick of j, scan order) per backfill pass; the scan
    # order includes j for "rlscheduler" (as the reference's list does) and excludes it for easy
    events: int = 0  # number of advance_one calls
    end_time: int = 0  # clock at episode end (= latest start)


# ----------------------------------------------------------------------------------------------
# The simulator
# ----------------------------------------------------------------------------------------------
def _as_int_list(x) -> list:
    return [int(v) for v in x]


def _checked_inputs(submit, run, req_time, procs, num_nodes, procs_per_node, policy, backfill,
                    compat, choose):  # fmt: skip
    """The sequence as int lists ``(submit, run, req_time, procs, nodes)`` with ``num_nodes``
    and ``procs_per_node``; ConfigError for anything the simulator cannot run."""
    s = _as_int_list(submit)
    r = _as_int_list(run)
    q = _as_int_list(req_time)
    n = _as_int_list(procs)
    L = len(s)
    if not (len(r) == len(q) == len(n) == L):
        raise ConfigError("submit, run, req_time and procs must have the same length")
    if (policy is None) == (choose is None):
        raise ConfigError("give exactly one of policy= or choose=")
    if policy is not None and policy not in POLICIES:
        raise ConfigError(f"unknown policy {policy!r}; expected one of {POLICIES}")
    if backfill not in BACKFILLS:
        raise ConfigError(f"unknown backfill {backfill!r}; expected one of {BACKFILLS}")
    if backfill in ("easy", "easy-sjbf") and compat:
        raise ConfigError(f"backfill={backfill!r} has no reference counterpart; use compat=False")
    N = int(num_nodes)
    ppn = float(procs_per_node)
    if N <= 0 or not ppn > 0:
        raise ConfigError("num_nodes and procs_per_node must be positive")
    for i in range(1, L):
        if s[i] < s[i - 1]:
            raise ConfigError(f"submit times must be nondecreasing (job {i})")
    k = node_counts(n, ppn)
    for i in range(L):
        if k[i] > N:
            raise ConfigError(f"job {i} needs {k[i]} nodes > num_nodes={N}; it could never start")
        if k[i] < 0:
            raise ConfigError(f"job {i} has a negative processor count {n[i]}")
        if r[i] < 0:
            raise ConfigError(f"job {i} has a negative run time {r[i]}")
    if policy in ("wfp3", "unicep") and any(v == 0 for v in q):
        raise ConfigError(f"{policy} divides by the requested time; a job has req_time == 0")
    return s, r, q, n, k, N, ppn


class _Run:
    """The event loop of one sequence, one method per phase (decision, wait with the chosen
    backfilling, start).  The state lives in plain lists and ints on ``self`` and is changed
    in place in the reference's order: ``queue`` and ``running`` are the reference's lists
    (their order matters in compat mode), ``start``/``fin``/``est`` per job."""

    def __init__(self, s, r, q, n, k, N, ppn, policy, backfill, compat, choose, record):
        self.s, self.r, self.q, self.n, self.k, self.N, self.ppn = s, r, q, n, k, N, ppn
        self.backfill, self.compat, self.choose, self.record = backfill, compat, choose, record
        L = len(s)
        self.L = L
        self.dynamic = policy in ("wfp3", "unicep") and not compat
        self.keys = None
        if policy is not None and not self.dynamic:
            keys = priority_keys(policy, s, q, n)
            # correct mode: ties -> lowest index
            self.keys = keys if compat else [(kv, i) for i, kv in enumerate(keys)]
        self.dynamic_fn = _wfp3_dynamic if policy == "wfp3" else _unicep_dynamic
        self.start = [-1] * L
        self.fin = [0] * L  # actual finish of started jobs
        self.est = [0] * L  # estimated (requested) finish of started jobs
        self.bf = [False] * L
        self.res = SimResult(starts=self.start, backfilled=self.bf)
        self.t = s[0]
        self.F = N  # free nodes
        self.queue = [0]  # waiting job indices (list order matters in compat mode)
        self.running: list = []  # running job indices (list order matters)
        self.nxt = 1  # next job to arrive
        self.events = 0
        self.waiting = [False] * L
        self.waiting[0] = True
        self.zero_k = 0 in k
        self.sjbf = backfill.endswith("-sjbf")
        self.bf_len = q  # the run length EASY backfills by (EASY++'s subclass: predictions)

    # -- engine primitives ---------------------------------------------------------------------
    def advance(self) -> None:
        """advance_one(): exactly one event (arrival wins ties; one release)."""
        self.events += 1
        running = self.running
        if running:
            running.sort(key=self.fin.__getitem__)  # stable; persists
            f0 = self.fin[running[0]]
        else:
            f0 = _INF
        nxt = self.nxt
        if nxt < self.L and self.s[nxt] <= f0:
            self.t = max(self.t, self.s[nxt])
            self.queue.append(nxt)
            self.waiting[nxt] = True
            self.nxt = nxt + 1
        else:
            x = running.pop(0)
            self.t = max(self.t, f0)
            self.F += self.k[x]

    def start_job(self, b: int, backfilled: bool = False) -> None:
        t = self.t
        self.F -= self.k[b]
        self.start[b] = t
        self.fin[b] = t + self.r[b]
        self.est[b] = t + self.q[b]
        self.running.append(b)
        self.queue.remove(b)
        self.waiting[b] = False
        if backfilled:
            self.bf[b] = True

    # -- decision ------------------------------------------------------------------------------
    def pick(self) -> int:
        """The job committed at this decision point (callback, policy key or dynamic key)."""
        queue = self.queue
        if self.choose is not None:
            return self._pick_by_callback()
        if self.compat:
            queue.sort(key=self.keys.__getitem__)  # stable; persists
            return queue[0]
        if self.dynamic:
            best, j = None, -1
            for b in queue:  # index order; strict < keeps the lowest index
                kv = self.dynamic_fn(self.t - self.s[b], self.q[b], self.n[b])
                if best is None or kv < best:
                    best, j = kv, b
            return j
        return min(queue, key=self.keys.__getitem__)

    def _pick_by_callback(self) -> int:
        if self.compat:
            self.queue.sort(key=self.s.__getitem__)  # the reference's observation builder
        view = DecisionView(
            t=self.t,
            free_nodes=self.F,
            queue=tuple(self.queue),  # correct mode: kept in index = (submit, index) order
            running=tuple(self.running),
            submit=self.s,
            run=self.r,
            req_time=self.q,
            procs=self.n,
            nodes=self.k,
            starts=self.start,
            num_nodes=self.N,
            procs_per_node=self.ppn,
        )
        j = int(self.choose(view))
        if not (0 <= j < self.L and self.waiting[j]):
            raise ConfigError(f"choose returned {j}, which is not a waiting job")
        return j

    # -- waiting until the committed job fits ---------------------------------------------------
    def wait_without_backfilling(self, j: int, n_arrived: int) -> None:
        while self.k[j] > self.F:
            self.advance()

    def _rlscheduler_shadow(self, j: int) -> int:
        """The one shadow time of spec §2.6, from requested run times."""
        t, k, est = self.t, self.k, self.est
        shadow = t
        if self.compat:
            self.running.sort(key=est.__getitem__)  # stable; persists (affects release ties)
            cap = self.F * self.ppn
            for x in self.running:
                cap += k[x] * self.ppn
                shadow = est[x]
                if cap >= self.n[j]:
                    break
        else:
            avail = self.F
            for x in sorted(self.running, key=est.__getitem__):
                avail += k[x]
                shadow = est[x]
                if avail >= k[j]:
                    break
        return shadow

    def wait_rlscheduler(self, j: int, n_arrived: int) -> None:
        """The reference's greedy backfilling: one shadow, then every event a pass over the
        queue starting each job that fits now and ends (by request) before the shadow."""
        shadow = self._rlscheduler_shadow(j)
        self.res.entry_shadow[j] = shadow
        while self.k[j] > self.F:
            if self.compat:
                self.queue.sort(key=self.s.__getitem__)  # stable; persists
            scan = self._scan_order(self.queue)  # a snapshot
            if self.record:
                self.res.pass_log.append((self.t, j, n_arrived, tuple(scan)))
            if self.F > 0 or self.zero_k:  # (nothing can fit when no node is free)
                for b in scan:
                    if self.t + self.q[b] < shadow and self.k[b] <= self.F:
                        self.start_job(b, backfilled=True)
            self.advance()

    def _scan_order(self, queue: list) -> list:
        """A backfill pass's candidates: a copy of ``queue`` in list order, or stably sorted by
        requested time for the ``-sjbf`` modes (EASY++: by prediction, ``bf_len``)."""
        return sorted(queue, key=self.bf_len.__getitem__) if self.sjbf else list(queue)

    def end_estimate(self, x: int) -> int:
        """EASY's estimated end of the running job ``x``: ``max(start + q, t)``."""
        return max(self.est[x], self.t)

    def _easy_reservation(self, j: int) -> tuple:
        """(shadow, extra nodes) from the running jobs' :meth:`end_estimate`."""
        ends = sorted((self.end_estimate(x), self.k[x]) for x in self.running)
        avail, shadow = self.F, None
        for e, kx in ends:
            if shadow is not None and e > shadow:
                break
            avail += kx
            if shadow is None and avail >= self.k[j]:
                shadow = e
        return shadow, avail - self.k[j]

    def wait_easy(self, j: int, n_arrived: int) -> None:
        """True EASY (correct mode): the reservation recomputed at every event; a job may
        start if it fits now and ends by the shadow, or uses only the extra nodes."""
        first = True
        while self.k[j] > self.F:
            shadow, extra = self._easy_reservation(j)
            if first:
                self.res.entry_shadow[j] = shadow
                self.res.entry_extra[j] = extra
                first = False
            scan = self._scan_order(self.queue)  # index order = (submit, index), or SJBF's
            if self.record:
                self.res.pass_log.append((self.t, j, n_arrived, tuple(b for b in scan if b != j)))
            for b in scan:
                kb = self.k[b]
                if b == j or kb > self.F:
                    continue
                if self.t + self.bf_len[b] <= shadow:
                    self.start_job(b, backfilled=True)
                elif kb <= extra:
                    self.start_job(b, backfilled=True)
                    extra -= kb
            self.advance()

    # -- the loop --------------------------------------------------------------------------------
    def wait_for(self, backfill: str):
        """The wait (with its backfilling) of mode ``backfill``: ``wait(j, n_arrived)``."""
        if backfill == "none":
            return self.wait_without_backfilling
        return self.wait_easy if backfill.startswith("easy") else self.wait_rlscheduler

    def run(self) -> SimResult:
        """The whole sequence; the wait is looked up at every decision, so a subclass may
        change ``backfill`` between decisions (:mod:`jaxsched.planning.driver`)."""
        while True:  # at a decision point: the queue is non-empty
            j = self.pick()
            self.res.decisions += 1
            if self.record:
                self.res.decision_log.append((self.t, j, self.nxt, tuple(self.queue)))
            if self.k[j] > self.F:
                self.wait_for(self.backfill)(j, self.nxt)
            self.start_job(j)
            if not self.queue:
                if self.nxt >= self.L:
                    break
                while not self.queue:
                    self.advance()
        self.res.events = self.events
        self.res.end_time = self.t
        return self.res


def simulate_detailed(
    submit,
    run,
    req_time,
    procs,
    *,
    num_nodes: int,
    procs_per_node: float,
    policy: str | None = None,
    backfill: str = "none",
    compat: bool = True,
    choose: Callable[[DecisionView], int] | None = None,
    record: bool = False,
) -> SimResult:
    """Simulate one sequence; exactly one of ``policy`` / ``choose`` must be given.

    ``record=True`` fills ``decision_log`` and ``pass_log`` (for tests of the tie rules)."""
    s, r, q, n, k, N, ppn = _checked_inputs(
        submit, run, req_time, procs, num_nodes, procs_per_node, policy, backfill, compat, choose
    )
    if len(s) == 0:
        return SimResult(starts=[], backfilled=[])
    return _Run(s, r, q, n, k, N, ppn, policy, backfill, compat, choose, record).run()


def simulate(
    submit,
    run,
    req_time,
    procs,
    *,
    num_nodes: int,
    procs_per_node: float,
    policy: str,
    backfill: str = "none",
    compat: bool = True,
) -> list[int]:
    """Start time of every job of one sequence scheduled by a heuristic ``policy``.

    policy: fcfs, sjf, wfp3, unicep, f1, f2, f3, f4, smallest, saf, srf, ljf, lcfs.
    backfill: "none", "rlscheduler" (reference greedy backfilling), "easy" (compat=False only),
    "rlscheduler-sjbf", "easy-sjbf" (the same, candidates shortest requested time first).
    """
    return simulate_detailed(
        submit,
        run,
        req_time,
        procs,
        num_nodes=num_nodes,
        procs_per_node=procs_per_node,
        policy=policy,
        backfill=backfill,
        compat=compat,
    ).starts


def simulate_with_choices(
    submit,
    run,
    req_time,
    procs,
    *,
    num_nodes: int,
    procs_per_node: float,
    choose: Callable[[DecisionView], int],
    backfill: str = "none",
    compat: bool = True,
) -> list[int]:
    """Like :func:`simulate`, but every decision is ``choose(view)`` (the RL case).

    ``choose`` receives a :class:`DecisionView` and returns the sequence index of a waiting job.
    In compat mode the backfill scan order is the reference's RL order, (submit, index)."""
    return simulate_detailed(
        submit,
        run,
        req_time,
        procs,
        num_nodes=num_nodes,
        procs_per_node=procs_per_node,
        choose=choose,
        backfill=backfill,
        compat=compat,
    ).starts


# ----------------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------------
def _ratio(num: float, den: float) -> float:
    """num / den with IEEE semantics for a zero denominator."""
    if den != 0:
        return num / den
    return math.nan if num == 0 or math.isnan(num) else math.copysign(_INF, num)


def metrics(submit, run, procs, starts, *, num_procs: float, compat: bool, users=None) -> dict:
    """Sequence metrics from start times (spec §3).

    bsld (10 s bound), sld, wait, turnaround: averages over all jobs.  util_ref: the reference's
    Σ r·n / ((t_end − s_first)·P) with t_end = the latest start (= clock at episode end);
    util_busy: Σ r·n / ((max(start + r) − s_first)·P); util = util_ref if compat else util_busy.
    max_wait, makespan = max(start + r) − s_first.  fairness: max over users of the per-user
    average bsld (nan without ``users``).  Divisions follow IEEE float64: a zero denominator gives
    inf (nan if the numerator is 0 too) — e.g. util of a one-job sequence, or the sld of a
    zero-runtime job (the reference drops those jobs).  Inputs invalid for any schedule raise
    :class:`~jaxsched.errors.ConfigError` (a ``ValueError``).
    """
    s = [int(v) for v in submit]
    r = [int(v) for v in run]
    n = [int(v) for v in procs]
    st = [int(v) for v in starts]
    L = len(s)
    if not (len(r) == len(n) == len(st) == L):
        raise ConfigError("submit, run, procs and starts must have the same length")
    if L == 0:
        raise ConfigError("empty sequence")
    if any(v < 0 for v in st):
        raise ConfigError("some job has no start time")
    wait = [st[i] - s[i] for i in range(L)]
    bsld = [max(1.0, float(wait[i] + r[i]) / max(r[i], 10)) for i in range(L)]
    sld = [_ratio(float(wait[i] + r[i]), float(r[i])) for i in range(L)]
    work = math.fsum(float(r[i] * n[i]) for i in range(L))
    s_first = s[0]
    t_end = max(st)
    busy_end = max(st[i] + r[i] for i in range(L))

    P = float(num_procs)
    out = {
        "bsld": math.fsum(bsld) / L,
        "sld": math.fsum(sld) / L,
        "wait": math.fsum(wait) / L,
        "turnaround": math.fsum(wait[i] + r[i] for i in range(L)) / L,
        "util_ref": _ratio(work, (t_end - s_first) * P),
        "util_busy": _ratio(work, (busy_end - s_first) * P),
        "max_wait": max(wait),
        "makespan": busy_end - s_first,
    }
    out["util"] = out["util_ref"] if compat else out["util_busy"]
    out["fairness"] = math.nan
    if users is not None:
        u = [int(v) for v in users]
        if len(u) != L:
            raise ConfigError("users must have one entry per job")
        acc: dict = {}
        for i in range(L):
            a = acc.setdefault(u[i], [0.0, 0])
            a[0] += bsld[i]
            a[1] += 1
        out["fairness"] = max(tot / cnt for tot, cnt in acc.values())
    return out
