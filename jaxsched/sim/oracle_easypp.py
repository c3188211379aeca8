"""Plain-Python EASY++ (Tsafrir, Etsion and Feitelson, "Backfilling using system-generated
predictions rather than user runtime estimates", IEEE TPDS 2007), on the oracle's event model.

EASY++ is EASY (correct mode, :mod:`jaxsched.sim.oracle`) with system-generated run time
predictions in place of the requested times, and shortest-job-first backfilling on them:

* **prediction** of job ``j``, fixed when it arrives: the mean of the actual run times of the
  same user's two most recently *finished* jobs (in release order, among the jobs of the
  simulated sequence released before ``j``'s arrival event), rounded up to whole seconds; the one
  run time if only one has finished; ``j``'s requested time if none has. Capped by the
  requested time: ``p_j = min(mean, q_j)``.
* **reservation** of the committed job from predicted ends: a running job ``x`` is expected to
  end at ``start_x + p_x``; once it outlives its prediction (``start_x + p_x < t``) the
  prediction is **corrected to the requested time**, i.e. it is expected at
  ``max(start_x + q_x, t)`` (Tsafrir et al.'s simplest correction; one correction step, since
  the request is the kill limit).
* **backfilling**: candidates scanned by (prediction, index); a job backfills if it fits now and
  ``t + p_b <= shadow``, or it fits in the extra nodes (EASY's rule, extra nodes from predicted
  ends).
* the **main order** is any static heuristic (EASY++ proper: FCFS).

Users are the trace's user ids (SWF field 12); a trace without them (the Lublin presets write
-1) cannot give predictions: :func:`simulate_easypp` raises :class:`~jaxsched.errors.ConfigError`.
The JAX version is :mod:`jaxsched.sim.easypp`; this module is its reference.
"""

from __future__ import annotations

from jaxsched.errors import ConfigError
from jaxsched.sim.oracle import SimResult, _checked_inputs, _Run

__all__ = ["predict", "simulate_easypp", "check_users"]


def predict(history: list, q: int) -> int:
    """The EASY++ prediction of a job requesting ``q`` seconds from its user's finished run
    times ``history`` (oldest first; only the last two are used): int seconds."""
    last = history[-2:]
    if not last:
        return q
    mean = -(-sum(last) // len(last))  # ceil
    return min(mean, q)


def check_users(users) -> list:
    """The user ids as ints; ConfigError if the trace carries none (all negative)."""
    u = [int(v) for v in users]
    if u and all(v < 0 for v in u):
        raise ConfigError(
            "EASY++ predicts run times from each user's history, and this trace has no user "
            "ids (SWF field 12 is -1 for every job, as in the Lublin presets)"
        )
    return u


class _EasyPP(_Run):
    """:class:`jaxsched.sim.oracle._Run` with EASY++'s predictions (``bf_len``), predicted and
    corrected ends (:meth:`end_estimate`) and the user history kept at every release."""

    def __init__(self, users, *args):
        super().__init__(*args)
        self.user = users
        self.hist: dict = {}  # user -> finished run times, release order
        self.pred = [0] * self.L
        self.pred[0] = self.q[0]  # job 0 arrives with the cluster idle: no history yet
        self.bf_len = self.pred
        self.sjbf = True
        self.res.predictions = self.pred

    def advance(self) -> None:
        before, nxt = list(self.running), self.nxt
        super().advance()
        if self.nxt > nxt:  # an arrival: predict it from its user's history now
            self.pred[nxt] = predict(self.hist.get(self.user[nxt], []), self.q[nxt])
        else:  # a release: the released job joins its user's history
            (x,) = set(before) - set(self.running)
            self.hist.setdefault(self.user[x], []).append(self.r[x])

    def end_estimate(self, x: int) -> int:
        end = self.start[x] + self.pred[x]
        return end if end >= self.t else max(self.est[x], self.t)


def simulate_easypp(
    submit,
    run,
    req_time,
    procs,
    users,
    *,
    num_nodes: int,
    procs_per_node: float,
    policy: str = "fcfs",
    record: bool = False,
) -> SimResult:
    """Simulate one sequence under EASY++ (correct mode); ``users`` int ``[L]`` user ids.

    Returns the oracle's :class:`~jaxsched.sim.oracle.SimResult` with one more attribute,
    ``predictions`` (int ``[L]``, every job's prediction at its arrival)."""
    s, r, q, n, k, N, ppn = _checked_inputs(
        submit, run, req_time, procs, num_nodes, procs_per_node, policy, "easy-sjbf", False, None
    )
    u = check_users(users)
    if len(u) != len(s):
        raise ConfigError("users must have one entry per job")
    if policy in ("wfp3", "unicep"):
        raise ConfigError("EASY++ takes a static main order (fcfs, sjf, f1, ...), not " + policy)
    if not s:
        return SimResult(starts=[], backfilled=[])
    return _EasyPP(u, s, r, q, n, k, N, ppn, policy, "easy-sjbf", False, None, record).run()
