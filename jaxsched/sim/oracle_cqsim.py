"""Plain-Python oracle of CQSim's event semantics and DRAS's scheduling loops (no JAX).

The second, independent implementation of spec ``dras.md`` §2.1–§2.6 that the JAX engine's
``compat="cqsim"`` mode and the DRAS environment are tested against.  It simulates the L jobs of
one slice from an empty machine of N nodes and returns every job's start time and class.

Events (§2.1 with the notes at the top of the spec, reference README "Points that decide exact
agreement"): a job's *submit* at ``submit[j]`` and its *finish* at ``start + run``.  At equal times
finishes come before submits, equal-time finishes run in the order their jobs started, equal-time
submits in trace order.  Every event is followed by exactly one scheduling pass.  Monitor events
only log in CQSim and are not modelled (they change nothing).

Machine (§2.2): per-node owner and estimated end (start + req_time); a starting job takes the
lowest-indexed free nodes (first fit).

Availability profile (§2.3, :class:`Profile`): points ``(time, free)``; the first point is (now,
free nodes now) and is never merged; then the running jobs by estimated end, equal ends merged
(a running job whose estimated end is ``now`` makes a second point at ``now``).  Reservation
search, placement ("subtract in [start, start + d), a point at start + d unless one exists";
subtracted from the point the search found on, so a reservation at the second point at now
leaves the first point as it was, as CQSim does, issue 46) and the Fits test as in the README.
Durations ``d``: ``durations="run"`` (code: the waiting job's actual run time) or
``"estimate"`` (paper: its req_time).

Modes (``mode=``):

* ``"easy"`` — FCFS + EASY (CQSim backfill mode 1): start the head while it fits, reserve the
  first that does not, start every later job that Fits (entering it in the profile);
* ``"easy-sjbf"`` — EASY with shortest-job-first backfilling (issue 47 §2): as ``"easy"``, but
  each pass scans its backfill candidates shortest requested time first (a stable sort of the
  queue after the head, so ties keep arrival order); not a CQSim mode;
* ``"cons"`` — conservative (mode 2): as EASY, but every later job that does not fit gets a
  reservation too, in queue order;
* ``"none"`` — FCFS without backfilling;
* ``"dras"`` — the DRAS-PG loop of §2.5 driven by ``policy(level, window, view) -> slot``;
  switches ``reserve="oldest"|"pick"``, ``persistent``, ``durations`` (``paper=True`` sets the
  paper's pick / not persistent / estimates, §2.4 and §13);
* ``"dql"`` — the DQL loop of §2.6 (no persistent reservation, the whole queue at level 1 unless
  ``window`` is given, all candidates at level 2); ``policy(level, candidates, view) -> index``;
* ``"immediate"`` — no reservation, no backfilling (the §8 baselines): ``policy(view)`` returns a
  list of waiting jobs that start now (in order, each must fit); it is called again after a
  non-empty answer, the pass ends on an empty one.

Job classes (§10): 0 backfilled, 1 ready, 2 reserved (a job that ever held the reservation).
In ``cons`` every job that ever held a reservation (it did not fit at some pass) is reserved.

Rewards (§6): each decision of the ``dras`` / ``dql`` loops is recorded as a :class:`Decision`
with the code's type-5 reward (:func:`reward_type5`) and the paper's Eq. 1 (:func:`reward_paper`),
with the code's timing: PG level 1 before the pick starts, level 2 after each chosen job starts
(in choice order); DQL both levels after the start (non-fitting picks are not recorded).
``max_wait`` is taken over the queue before each level-1 pick and at the start of a level-2 pass
(the reserved job included).

Inputs are plain lists or integer arrays, converted to Python ints; invalid input raises
:class:`jaxsched.errors.ConfigError` (one line).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from jaxsched.errors import ConfigError

__all__ = [
    "MODES",
    "BACKFILLED",
    "READY",
    "RESERVED",
    "WAIT_FLOOR",
    "Profile",
    "View",
    "Decision",
    "CqsimResult",
    "simulate_cqsim",
    "reward_type5",
    "reward_paper",
    "node_rows",
    "pg_state",
    "dql_state",
    "fixed_policy",
    "cqsim_metrics",
]

MODES = ("easy", "easy-sjbf", "cons", "none", "dras", "dql", "immediate")
BACKFILLED, READY, RESERVED = 0, 1, 2
#: the code's 6-hour floor on max_wait in the type-5 reward (seconds)
WAIT_FLOOR = 21600


# ----------------------------------------------------------------------------------------------
# Rewards (spec §6)
# ----------------------------------------------------------------------------------------------
def reward_type5(n: int, wait: float, free: int, N: int, max_wait: float) -> float:
    """The code's reward type 5 for one selected job of ``n`` nodes, queued ``wait`` s, with
    ``free`` idle nodes of ``N`` and ``max_wait`` the longest queued time (6-h floor)."""
    running = N - free
    util = running / N if free < n else (n + running) / N
    waitr = wait / max_wait if max_wait >= WAIT_FLOOR else wait / WAIT_FLOOR
    return (util + waitr + n / N) / 3


def reward_paper(n: int, wait: float, free: int, N: int, max_wait: float) -> float:
    """The paper's Eq. 1 for one selected job: (w/t_max + n/N + N_used/N)/3 with N_used = N −
    free at the recording time; the wait term is 0 when t_max is 0 (all jobs just arrived)."""
    waitr = wait / max_wait if max_wait > 0 else 0.0
    return (waitr + n / N + (N - free) / N) / 3


# ----------------------------------------------------------------------------------------------
# Availability profile (spec §2.3)
# ----------------------------------------------------------------------------------------------
class Profile:
    """Free nodes over future time as parallel lists ``t`` (nondecreasing) and ``f``."""

    def __init__(self, now: int, free: int, releases) -> None:
        """``releases``: (estimated end, nodes) of the running jobs, any order."""
        self.t, self.f = [now], [free]
        acc = free
        for e, n in sorted(releases):
            acc += n
            if len(self.t) > 1 and self.t[-1] == e:  # merged, but never into the first point
                self.f[-1] = acc
            else:
                self.t.append(e)
                self.f.append(acc)

    def earliest(self, n: int, d: int) -> int:
        """Start time of the reservation search for ``n`` nodes during ``d`` s (ConfigError if
        no point ever has ``n`` free nodes)."""
        return self.t[self.search(n, d)]

    def search(self, n: int, d: int) -> int:
        """Index of the point where the reservation search for ``n`` nodes during ``d`` s
        starts (ConfigError if no point ever has ``n`` free nodes)."""
        t, f, P = self.t, self.f, len(self.t)
        i = 0
        while i < P:
            if f[i] < n:
                i += 1
                continue
            end, k = t[i] + d, i + 1
            while k < P and t[k] < end and f[k] >= n:
                k += 1
            if k == P or t[k] >= end:
                return i
            i = k + 1
        raise ConfigError(f"no reservation possible for a job of {n} nodes")

    def place(self, start: int, n: int, d: int, first: int = 0) -> None:
        """Enter ``n`` nodes used during [start, start + d): taken at every point from index
        ``first`` (the point where the reservation starts; 0 for a job started now) on that lies
        before start + d. A reservation found at the second point at now thus leaves the first
        point as it was, as CQSim's ``Node_struc.reserve`` does (issue 46)."""
        t, f = self.t, self.f
        end = start + d
        pos = len(t)
        while pos > 0 and t[pos - 1] > end:
            pos -= 1
        if t[pos - 1] != end:  # a point at the end gives the nodes back (value before use)
            t.insert(pos, end)
            f.insert(pos, f[pos - 1])
        for i in range(first, pos):
            if t[i] < end:
                f[i] -= n

    def reserve(self, n: int, d: int) -> int:
        """Search and place a reservation; returns its start."""
        i = self.search(n, d)
        self.place(self.t[i], n, d, i)
        return self.t[i]

    def fits(self, n: int, d: int) -> bool:
        """True iff every point before now + d has at least ``n`` free nodes."""
        end = self.t[0] + d
        for tk, fk in zip(self.t, self.f):
            if tk >= end:
                return True
            if fk < n:
                return False
        return True


# ----------------------------------------------------------------------------------------------
# What a policy sees
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class View:
    """A decision point (read-only by convention; the lists are the simulator's own).

    ``queue``: waiting jobs (slice indices) in arrival order; ``window``: the jobs the policy
    chooses among (level 1: the first W waiting jobs; level 2: the first W backfill candidates;
    ``immediate`` mode: the whole queue).  ``reserved`` is the reserved job or -1;
    ``instance`` counts scheduling passes from 0.  Per node: ``node_owner`` (-1 free) and
    ``node_est_end`` (start + req_time of the owner, 0 when free)."""

    t: int
    level: int
    free: int
    queue: tuple
    window: tuple
    reserved: int
    instance: int
    N: int
    submit: list
    nodes: list
    run: list
    req_time: list
    priority: list
    node_owner: list
    node_est_end: list


@dataclass(frozen=True)
class Decision:
    """One recorded decision: pass ``instance``, ``level`` 1/2, time ``t``, the job and its
    window ``slot``, the window length, and both rewards."""

    instance: int
    level: int
    t: int
    job: int
    slot: int
    window_len: int
    reward5: float
    reward_paper: float


@dataclass
class CqsimResult:
    """Outcome of one slice: ``start``/``end``/``cls`` per job, the recorded decisions, the
    number of scheduling passes, and ``util`` (time average of busy/N from the first submit to
    the last finish, logged after every event as CQSim does)."""

    start: list
    end: list
    cls: list
    decisions: list = field(default_factory=list)
    passes: int = 0
    util: float = math.nan


def node_rows(view: View) -> list:
    """The N node rows of §3 as (col0, col1) tuples: (1, 0) free, (0, est_end − now) busy."""
    t = view.t
    return [(1, 0) if o < 0 else (0, e - t) for o, e in zip(view.node_owner, view.node_est_end)]


def pg_state(view: View, W: int = 50) -> list:
    """DRAS-PG input of §3 as [2W + N] rows (col0, col1): per window slot (n, t), (p, wait),
    empty slots zero, then :func:`node_rows`."""
    rows = []
    for j in view.window[:W]:
        rows.append((view.nodes[j], view.req_time[j]))
        rows.append((view.priority[j], view.t - view.submit[j]))
    rows.extend([(0, 0)] * (2 * W - len(rows)))
    return rows + node_rows(view)


def dql_state(view: View, j: int) -> list:
    """DRAS-DQL input of §3 for candidate ``j``: [2 + N] rows, (n, t), (p, wait), node rows."""
    return [(view.nodes[j], view.req_time[j]), (view.priority[j], view.t - view.submit[j])] + (
        node_rows(view)
    )


def fixed_policy(name: str) -> Callable:
    """The reference's fixed DRAS policies: ``fcfs`` (slot 0), ``smallest`` / ``largest``
    (fewest / most requested nodes, the lowest slot on ties)."""
    if name == "fcfs":
        return lambda level, window, view: 0
    if name not in ("smallest", "largest"):
        raise ConfigError(f"unknown fixed policy {name!r}; expected fcfs, smallest or largest")
    sign = 1 if name == "smallest" else -1

    def pick(level, window, view):
        keys = [sign * view.nodes[j] for j in window]
        return keys.index(min(keys))

    return pick


# ----------------------------------------------------------------------------------------------
# The simulator
# ----------------------------------------------------------------------------------------------
class _Run:
    """The event loop of one slice, one method per phase.  State in plain lists on ``self``:
    ``queue`` (waiting jobs, arrival order), ``running`` (start order), per job ``start``,
    ``held`` (ever held a reservation), ``bf`` (backfilled), per node owner / estimated end."""

    def __init__(self, jobs, N, mode, policy, W, reserve, persistent, durations, after_pass):
        self.s, self.n, self.r, self.q, self.p = jobs
        self.after_pass = after_pass
        self.N, self.mode, self.policy, self.W = N, mode, policy, W
        self.reserve_pick, self.persistent = reserve == "pick", persistent
        self.dur = self.r if durations == "run" else self.q
        L = len(self.s)
        self.start = [-1] * L
        self.held = [False] * L
        self.bf = [False] * L
        self.t, self.free = 0, N
        self.owner, self.est = [-1] * N, [0] * N
        self.queue: list = []
        self.running: list = []
        self.reserved = -1
        self.instance = 0
        self.n_started = 0
        self.decisions: list = []
        self.events = [(self.s[j], 1, j, j) for j in range(L)]
        heapq.heapify(self.events)
        self.busy_area, self.t_log, self.t_first = 0.0, self.s[0], self.s[0]  # L >= 1

    # -- machine -------------------------------------------------------------------------------
    def start_job(self, j: int, backfilled: bool = False) -> None:
        n, t = self.n[j], self.t
        if n > self.free:
            raise AssertionError(f"job {j} started with {self.free} < {n} free nodes")
        self.free -= n
        est, left = t + self.q[j], n
        for i in range(self.N):  # first fit by node index
            if left == 0:
                break
            if self.owner[i] < 0:
                self.owner[i], self.est[i] = j, est
                left -= 1
        self.start[j] = t
        self.bf[j] = backfilled
        self.queue.remove(j)
        self.running.append(j)
        heapq.heappush(self.events, (t + self.r[j], 0, self.n_started, j))
        self.n_started += 1

    def finish_job(self, j: int) -> None:
        self.free += self.n[j]
        self.running.remove(j)
        for i in range(self.N):
            if self.owner[i] == j:
                self.owner[i], self.est[i] = -1, 0

    def profile(self) -> Profile:
        return Profile(
            self.t, self.free, [(self.start[x] + self.q[x], self.n[x]) for x in self.running]
        )

    def max_wait(self) -> int:
        return max(self.t - self.s[j] for j in self.queue) if self.queue else 0

    def view(self, level: int, window) -> View:
        return View(
            self.t, level, self.free, tuple(self.queue), tuple(window), self.reserved,
            self.instance, self.N, self.s, self.n, self.r, self.q, self.p, self.owner, self.est,
        )  # fmt: skip

    def record(self, level: int, j: int, slot: int, wlen: int, maxw: int) -> None:
        args = (self.n[j], self.t - self.s[j], self.free, self.N, maxw)
        d = Decision(self.instance, level, self.t, j, slot, wlen, reward_type5(*args),
                     reward_paper(*args))  # fmt: skip
        self.decisions.append(d)

    def ask(self, level: int, window) -> int:
        a = self.policy(level, tuple(window), self.view(level, window))
        if not (isinstance(a, int) or hasattr(a, "__index__")) or not 0 <= int(a) < len(window):
            raise ConfigError(f"policy returned {a!r}; expected a slot in [0, {len(window)})")
        return int(a)

    # -- CQSim master passes ---------------------------------------------------------------------
    def start_head(self) -> None:
        """Start jobs from the head of the queue while they fit."""
        while self.queue and self.n[self.queue[0]] <= self.free:
            self.start_job(self.queue[0])

    def pass_easy(self, shortest_first: bool = False) -> None:
        self.start_head()
        if not self.queue:
            return
        R = self.queue[0]
        self.held[R] = True
        prof = self.profile()
        prof.reserve(self.n[R], self.dur[R])
        scan = self.queue[1:]
        if shortest_first:  # stable: equal requested times keep arrival order
            scan = sorted(scan, key=self.q.__getitem__)
        for j in scan:
            if prof.fits(self.n[j], self.dur[j]):
                prof.place(self.t, self.n[j], self.dur[j])
                self.start_job(j, backfilled=True)

    def pass_easy_sjbf(self) -> None:
        self.pass_easy(shortest_first=True)

    def pass_cons(self) -> None:
        """Start the head while it fits; then the head and every later job a reservation in
        queue order, a job that Fits now starting (CQSim backfill mode 2)."""
        self.start_head()
        if not self.queue:
            return
        R = self.queue[0]
        self.held[R] = True
        prof = self.profile()
        prof.reserve(self.n[R], self.dur[R])
        for j in list(self.queue[1:]):
            if prof.fits(self.n[j], self.dur[j]):
                prof.place(self.t, self.n[j], self.dur[j])
                self.start_job(j, backfilled=True)
            else:
                prof.reserve(self.n[j], self.dur[j])
                self.held[j] = True

    def pass_none(self) -> None:
        self.start_head()

    def pass_immediate(self) -> None:
        while self.queue:
            jobs = list(self.policy(self.view(1, self.queue)))
            if not jobs:
                return
            for j in jobs:
                j = int(j)
                if j not in self.queue or self.n[j] > self.free:
                    raise ConfigError(f"policy chose job {j}, which is not waiting or not fitting")
                self.start_job(j)

    # -- DRAS passes -----------------------------------------------------------------------------
    def pass_dras(self) -> None:
        """The DRAS-PG loop of spec §2.5 (level 1 until a non-fitting pick, then level 2)."""
        while self.queue:
            Q = self.queue
            if self.persistent and self.reserved == Q[0]:
                pick = Q[0]  # level 1 skipped, nothing recorded
            else:
                window, maxw = Q[: self.W], self.max_wait()
                a = self.ask(1, window)
                pick = window[a]
                self.record(1, pick, a, len(window), maxw)  # before the start
            if self.n[pick] <= self.free:
                self.start_job(pick)
                if pick == self.reserved:
                    self.reserved = -1
                continue
            R = pick if self.reserve_pick else Q[0]
            self.reserved = R
            self.held[R] = True
            if len(Q) > 1:
                self.level2(R, self.W)
            return

    def pass_dql(self) -> None:
        """The DQL loop of spec §2.6: level 1 over the queue (or its first W), no persistent
        reservation; then level 2 for the oldest job over all candidates."""
        while self.queue:
            Q = self.queue
            window, maxw = (Q[: self.W] if self.W else list(Q)), self.max_wait()
            a = self.ask(1, window)
            pick = window[a]
            if self.n[pick] > self.free:
                break
            self.start_job(pick)
            self.record(1, pick, a, len(window), maxw)  # after the start
        if self.queue:
            self.held[self.queue[0]] = True
            if len(self.queue) > 1:
                self.level2(self.queue[0], None)

    def level2(self, R: int, W) -> None:
        """Level-2 backfilling around the reservation of ``R``: choose among the Fits
        candidates (first ``W``, all if None) until none remain, then start the chosen."""
        prof = self.profile()
        prof.reserve(self.n[R], self.dur[R])
        remaining = [j for j in self.queue if j != R]
        maxw = self.max_wait()
        chosen = []
        while True:
            C = [j for j in remaining if prof.fits(self.n[j], self.dur[j])]
            if not C:
                break
            window = C[:W] if W else C
            a = self.ask(2, window)
            j = window[a]
            prof.place(self.t, self.n[j], self.dur[j])
            remaining.remove(j)
            chosen.append((j, a, len(window)))
        for j, a, wlen in chosen:
            self.start_job(j, backfilled=True)
            self.record(2, j, a, wlen, maxw)  # after the start

    # -- the loop --------------------------------------------------------------------------------
    def run(self) -> CqsimResult:
        do_pass = getattr(self, "pass_" + self.mode.replace("-", "_"))
        busy = 0
        while self.events:
            t, kind, _, j = heapq.heappop(self.events)
            self.t = t
            if kind == 0:
                self.finish_job(j)
            else:
                self.queue.append(j)
            do_pass()
            if self.after_pass is not None:
                self.after_pass(self.instance, self.decisions)
            self.instance += 1
            self.busy_area += busy * (t - self.t_log)  # utilisation log: value since last event
            self.t_log, busy = t, self.N - self.free
        L = len(self.s)
        end = [self.start[j] + self.r[j] for j in range(L)]
        cls = [RESERVED if self.held[j] else BACKFILLED if self.bf[j] else READY for j in range(L)]
        span = self.t_log - self.t_first
        util = self.busy_area / (self.N * span) if span > 0 else math.nan
        return CqsimResult(self.start, end, cls, self.decisions, self.instance, util)


def _checked(submit, nodes, run, req_time, N, priority, mode, policy, reserve, durations):
    s, n, r, q = ([int(v) for v in x] for x in (submit, nodes, run, req_time))
    L = len(s)
    p = [0] * L if priority is None else [int(v) for v in priority]
    if not (len(n) == len(r) == len(q) == len(p) == L):
        raise ConfigError("submit, nodes, run, req_time (and priority) must have equal lengths")
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; expected one of {MODES}")
    if (policy is None) != (mode in ("easy", "easy-sjbf", "cons", "none")):
        raise ConfigError(
            f"mode {mode!r} " + ("needs" if policy is None else "takes no") + " policy"
        )
    if reserve not in ("oldest", "pick") or durations not in ("run", "estimate"):
        raise ConfigError("reserve must be oldest|pick and durations run|estimate")
    if int(N) <= 0:
        raise ConfigError(f"num_nodes must be positive, got {N}")
    for j in range(L):
        if j and s[j] < s[j - 1]:
            raise ConfigError(f"submit times must be nondecreasing (job {j})")
        if min(n[j], r[j], q[j]) <= 0 or s[j] < 0:
            raise ConfigError(
                f"job {j}: submit < 0 or nodes, run or req_time <= 0 (CQSim drops it)"
            )
        if n[j] > int(N):
            raise ConfigError(f"job {j} needs {n[j]} nodes > num_nodes={N}; it could never start")
        if r[j] > q[j]:
            raise ConfigError(f"job {j}: run {r[j]} > req_time {q[j]} (load with the cut to t)")
    return (s, n, r, q, p), int(N)


def simulate_cqsim(
    submit, nodes, run, req_time, *, num_nodes: int, mode: str = "easy",
    policy: Callable | None = None, window: int | None = None, reserve: str = "oldest",
    persistent: bool = True, durations: str = "run", paper: bool = False, priority=None,
    after_pass: Callable | None = None,
) -> CqsimResult:  # fmt: skip
    """Simulate one slice (L jobs, submit times nondecreasing, run <= req_time) on
    ``num_nodes`` nodes.  ``mode`` and ``policy`` as in the module docstring; ``window``: W of
    the DRAS loops (``dras``: None = 50; ``dql``: None = the whole queue, the code's
    ``use_window = 0``);
    ``paper=True`` is ``reserve="pick", persistent=False, durations="estimate"``;
    ``after_pass(instance, decisions)`` is called after every scheduling pass with the pass
    index and the list of all :class:`Decision` so far (e.g. a PG update every 10 passes).
    Returns a :class:`CqsimResult` (lists of length L)."""
    if paper:
        reserve, persistent, durations = "pick", False, "estimate"
    jobs, N = _checked(submit, nodes, run, req_time, num_nodes, priority, mode, policy, reserve,
                       durations)  # fmt: skip
    if mode == "dras" and window is None:
        window = 50
    if window is not None and int(window) < 1:
        raise ConfigError(f"window must be >= 1 (or None), got {window}")
    if not jobs[0]:
        return CqsimResult([], [], [])
    return _Run(jobs, N, mode, policy, window, reserve, persistent, durations, after_pass).run()


def cqsim_metrics(submit, nodes, run, start, *, num_nodes: int, util: float = math.nan) -> dict:
    """The reference files' per-slice metrics (README "Metrics") from start times; ``util`` is
    the simulator's logged utilisation (:attr:`CqsimResult.util`)."""
    s, n, r, st = ([int(v) for v in x] for x in (submit, nodes, run, start))
    L = len(s)
    if L == 0 or any(v < 0 for v in st):
        raise ConfigError("metrics need a non-empty slice with every job started")
    wait = [st[j] - s[j] for j in range(L)]
    ta = [wait[j] + r[j] for j in range(L)]
    makespan = max(st[j] + r[j] for j in range(L)) - s[0]
    work = math.fsum(float(n[j] * r[j]) for j in range(L))
    return {
        "jobs": L,
        "avg_wait": math.fsum(wait) / L,
        "max_wait": max(wait),
        "avg_bsld": math.fsum(max(1.0, ta[j] / max(r[j], 10)) for j in range(L)) / L,
        "avg_slowdown": math.fsum(ta[j] / r[j] for j in range(L)) / L,
        "avg_turnaround": math.fsum(ta) / L,
        "makespan": makespan,
        "util": util,
        "util_node_seconds": work / (int(num_nodes) * makespan),
    }
