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
BACKFILLS = ("none", "rlscheduler", "easy")

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
    if backfill == "easy" and compat:
        raise ConfigError("backfill='easy' has no reference counterpart; use compat=False")
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
    L = len(s)
    if L == 0:
        return SimResult(starts=[], backfilled=[])
    # The event loop below stays one function on purpose: its nested helpers share the
    # reference's mutable lists (queue, running, start, finish) exactly as the reference's code
    # does, so it can be read side by side with it; split up, a dozen lists would travel
    # between functions.

    dynamic = policy in ("wfp3", "unicep") and not compat
    keys = None
    if policy is not None and not dynamic:
        keys = priority_keys(policy, s, q, n)
        if not compat:
            keys = [(kv, i) for i, kv in enumerate(keys)]  # ties -> lowest index

    start = [-1] * L
    fin = [0] * L  # actual finish of started jobs
    est = [0] * L  # estimated (requested) finish of started jobs
    bf = [False] * L
    res = SimResult(starts=start, backfilled=bf)

    # state
    t = s[0]
    F = N
    queue = [0]  # list of waiting job indices (list order matters in compat mode)
    running: list = []  # list of running job indices (list order matters)
    nxt = 1
    events = 0
    fin_get = fin.__getitem__
    est_get = est.__getitem__
    s_get = s.__getitem__
    waiting = [False] * L
    waiting[0] = True
    zero_k = 0 in k

    def advance() -> None:
        """advance_one(): exactly one event (arrival wins ties; one release)."""
        nonlocal t, F, nxt, events
        events += 1
        if running:
            running.sort(key=fin_get)  # stable; persists
            f0 = fin[running[0]]
        else:
            f0 = _INF
        if nxt < L and s[nxt] <= f0:
            if s[nxt] > t:
                t = s[nxt]
            queue.append(nxt)
            waiting[nxt] = True
            nxt += 1
        else:
            x = running.pop(0)
            if f0 > t:
                t = f0
            F += k[x]

    def start_job(b: int) -> None:
        nonlocal F
        F -= k[b]
        start[b] = t
        fin[b] = t + r[b]
        est[b] = t + q[b]
        running.append(b)
        queue.remove(b)
        waiting[b] = False

    while True:
        # ---------------- decision point (queue non-empty) ----------------
        if choose is not None:
            if compat:
                queue.sort(key=s_get)  # the reference's observation builder
                qv = tuple(queue)
            else:
                qv = tuple(queue)  # kept in index = (submit, index) order
            j = choose(
                DecisionView(
                    t=t,
                    free_nodes=F,
                    queue=qv,
                    running=tuple(running),
                    submit=s,
                    run=r,
                    req_time=q,
                    procs=n,
                    nodes=k,
                    starts=start,
                    num_nodes=N,
                    procs_per_node=ppn,
                )
            )
            j = int(j)
            if not (0 <= j < L and waiting[j]):
                raise ConfigError(f"choose returned {j}, which is not a waiting job")
        elif compat:
            queue.sort(key=keys.__getitem__)  # stable; persists
            j = queue[0]
        elif dynamic:
            fn = _wfp3_dynamic if policy == "wfp3" else _unicep_dynamic
            best = None
            j = -1
            for b in queue:  # index order; strict < keeps the lowest index
                kv = fn(t - s[b], q[b], n[b])
                if best is None or kv < best:
                    best = kv
                    j = b
        else:
            j = min(queue, key=keys.__getitem__)
        res.decisions += 1
        kj = k[j]
        if record:
            res.decision_log.append((t, j, nxt, tuple(queue)))
            n_arrived = nxt

        # ---------------- wait until the committed job fits ----------------
        if kj > F:
            if backfill == "none":
                while kj > F:
                    advance()
            elif backfill == "rlscheduler":
                # shadow time, computed once, from requested run times
                if compat:
                    running.sort(key=est_get)  # stable; persists (affects release ties)
                    cap = F * ppn
                    shadow = t
                    nj = n[j]
                    for x in running:
                        cap += k[x] * ppn
                        shadow = est[x]
                        if cap >= nj:
                            break
                else:
                    avail = F
                    shadow = t
                    for x in sorted(running, key=est_get):
                        avail += k[x]
                        shadow = est[x]
                        if avail >= kj:
                            break
                res.entry_shadow[j] = shadow
                while kj > F:
                    if compat:
                        queue.sort(key=s_get)  # stable; persists
                    if record:
                        res.pass_log.append((t, j, n_arrived, tuple(queue)))
                    if F > 0 or zero_k:  # (nothing can fit when no node is free)
                        for b in list(queue):  # snapshot
                            if t + q[b] < shadow and k[b] <= F:
                                start_job(b)
                                bf[b] = True
                    advance()
            else:  # easy (compat=False only)
                first = True
                while kj > F:
                    # reservation from effective estimated ends e' = max(start + q, t)
                    ep = sorted((est[x] if est[x] > t else t, k[x]) for x in running)
                    avail = F
                    shadow = None
                    for e, kx in ep:
                        if shadow is not None and e > shadow:
                            break
                        avail += kx
                        if shadow is None and avail >= kj:
                            shadow = e
                    extra = avail - kj
                    if first:
                        res.entry_shadow[j] = shadow
                        res.entry_extra[j] = extra
                        first = False
                    if record:
                        res.pass_log.append((t, j, n_arrived, tuple(b for b in queue if b != j)))
                    for b in list(queue):  # index order = (submit, index)
                        if b == j:
                            continue
                        kb = k[b]
                        if kb <= F:
                            if t + q[b] <= shadow:
                                start_job(b)
                                bf[b] = True
                            elif kb <= extra:
                                start_job(b)
                                bf[b] = True
                                extra -= kb
                    advance()

        # ---------------- start the committed job ----------------
        start_job(j)
        if not queue:
            if nxt >= L:
                break
            while not queue:
                advance()

    res.events = events
    res.end_time = t
    return res


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
    backfill: "none", "rlscheduler" (reference greedy backfilling), "easy" (compat=False only).
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
