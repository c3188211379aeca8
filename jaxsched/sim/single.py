"""One schedule of one sequence (``jaxsched simulate``): on the host or on the compiled engine.

Two exact engines give the same start times (tests/sim/test_single.py checks them against each
other and against :mod:`jaxsched.sim.oracle`):

* ``"host"``: the plain-Python event loop of :mod:`jaxsched.sim.oracle` (EASY++:
  :mod:`jaxsched.sim.oracle_easypp`), fed the engine's own static priority ranks
  (:func:`jaxsched.policies.heuristics.host_rank`, a tuned priority's ranks, the ``random``
  policy's uniforms drawn as :func:`jaxsched.sim.evaluate.evaluate` draws them) in place of the
  oracle's per-job Python keys: ints compare faster than the oracle's tuples, and the order is
  the one the compiled engine schedules by. WFP3/UNICEP in the correct mode keep the oracle's
  clock-dependent keys.
* ``"jax"``: :func:`jaxsched.sim.evaluate.evaluate` as a batch of one (one compiled loop), or
  :func:`jaxsched.sim.chunked.schedule_window` (the same engine in chunks, for a progress bar).

``"auto"`` (:func:`choose_engine`) takes the host for every heuristic schedule: one sequence is
one sequential event loop, which the compiled engine runs no faster per event on a CPU (and an
accelerator does not help a single ``while_loop``), and its compile alone (seconds per
configuration on a 2-core CPU) exceeds the host's whole run of a 60,000-job trace
(benchmarks/speed/simulate_vs_oracle.py). Both engines take every policy and mode
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
    ``progress(started, length)`` about 200 times along the way (and at the end)."""
    from jaxsched.sim import oracle as O
    from jaxsched.sim.evaluate import window_arrays

    a = window_arrays(jobs, [int(start)], int(length))  # the engine's checks and messages
    s, r, q, n = (a[k][0].tolist() for k in ("submit", "run", "req", "procs"))
    dynamic = names.dynamic and not compat
    checked = names.policy if names.policy in O.POLICIES else "fcfs"  # the oracle's own checks
    bf = "easy-sjbf" if names.easypp else names.backfill
    s, r, q, n, k, N, ppn = O._checked_inputs(
        s, r, q, n, jobs.num_nodes, jobs.procs_per_node, checked, bf, compat, None
    )
    args = (s, r, q, n, k, N, ppn, names.policy if dynamic else None, bf, compat, None, False)
    if names.easypp:
        from jaxsched.sim.oracle_easypp import _EasyPP, check_users

        cls, args = (_HostEasyPP if progress else _EasyPP), (check_users(a["user"][0]), *args)
    else:
        cls = _HostRun if progress else O._Run
    run = cls(*args)
    if not dynamic:
        run.keys = _ranks(names, a, seed).tolist()  # unique ints: ties need no index
    if progress is not None:
        run.progress, run.every = progress, max(1, length // 200)
    res = run.run()
    if progress is not None:
        progress(length, length)
    return np.asarray(res.starts, np.int64)


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


def _host_classes():
    from jaxsched.sim.oracle import _Run
    from jaxsched.sim.oracle_easypp import _EasyPP

    return (type("_HostRun", (_Progress, _Run), {}), type("_HostEasyPP", (_Progress, _EasyPP), {}))


_HostRun, _HostEasyPP = _host_classes()


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
