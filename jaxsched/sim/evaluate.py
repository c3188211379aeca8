"""Host-side driver: evaluate heuristic schedulers on many job sequences in one compiled call.

Every (sequence, policy, backfill mode) combination is one element of a batch; the whole batch
runs as one ``jit(vmap(while_loop))``. Queue and running-list capacities are static shapes:
the batch first runs with small capacities, and only the runs that overflow (a queue longer
than the capacity) are re-run with larger ones, so the common case stays cheap.

Example::

    from jaxsched.workload import read_swf, reference_starts
    from jaxsched.sim.evaluate import evaluate
    jobs = read_swf("traces/lublin-1.swf").jobs("rlscheduler")
    starts = reference_starts(1, 10, 1024, 10000)          # the paper's sequences
    res = evaluate(jobs, starts, 1024, ["fcfs", "sjf", "f1"], ["none", "rlscheduler"],
                   compat=True)
    res.table("bsld")          # {(policy, backfill): mean over sequences}
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable
from collections.abc import Sequence as Seq

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched import formatting as F
from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H
from jaxsched.policies import tuned as T
from jaxsched.precision import scoped
from jaxsched.sim import engine as E
from jaxsched.sim import metrics as M

#: metric names accepted by :func:`evaluate`
METRICS = M.METRICS


@dataclasses.dataclass
class EvalResult:
    """Results of :func:`evaluate`.

    Attributes:
      rows: list of dicts ``{"start", "jobs", "policy", "backfill", "metric", "value"}`` (the
        schema of ``shared/reference``); one per sequence × policy × backfill × metric.
      starts: int64 ``[S]`` start indices; policies, backfills, metrics: the names evaluated.
      start_times: int64 ``[S, P, B, L]`` the schedules (start time of every job).
      timing: ``{"compile_s", "run_s", "decisions", "micro_steps", "runs", "capacities"}``.
    """

    rows: list
    starts: np.ndarray
    policies: list
    backfills: list
    metrics: list
    start_times: np.ndarray
    timing: dict

    def _cells(self, metric: str) -> dict:
        """``{(policy, backfill): {start: [values in row order]}}`` of one metric."""
        acc: dict = {}
        for r in self.rows:
            if r["metric"] == metric:
                acc.setdefault((r["policy"], r["backfill"]), {}).setdefault(
                    int(r["start"]), []
                ).append(r["value"])
        return acc

    def table(self, metric: str) -> dict:
        """Mean over sequences: ``{(policy, backfill): value}``."""
        return {k: float(np.mean(_flat(v))) for k, v in self._cells(metric).items()}

    def sem(self, metric: str) -> dict:
        """Standard error of each mean of :meth:`table` (sample standard deviation over the
        sequences / sqrt(number of sequences); NaN for a single sequence):
        ``{(policy, backfill): value}``."""
        return {k: standard_error(_flat(v)) for k, v in self._cells(metric).items()}

    def paired(self, metric: str, versus: str) -> dict:
        """Paired differences to policy ``versus`` on the same sequences: ``{(policy,
        backfill): (mean, standard error)}`` of ``value(policy) - value(versus)`` over the
        sequences, per backfilling mode. Far less noisy than comparing two means, since most of
        the spread between sequences is shared. Raises ConfigError for an unknown ``versus``."""
        check_versus(versus, self.policies)
        by = self._cells(metric)
        out = {}
        for (p, b), seqs in by.items():
            ref = by[(versus, b)]
            d = [x - y for st in sorted(seqs) for x, y in zip(seqs[st], ref.get(st, []))]
            out[(p, b)] = (float(np.mean(d)) if d else math.nan, standard_error(d))
        return out

    def to_json(self) -> dict:
        return {"results": self.rows, "timing": self.timing}


def window_arrays(jobs, starts: Seq[int], length: int) -> dict:
    """Gather the jobs ``start … start+length-1`` of every start: dict of ``[S, length]`` arrays."""
    starts = np.asarray(starts, dtype=np.int64)
    n = jobs.n_jobs
    if length < 1:
        raise ConfigError(f"sequence length must be ≥ 1 (got {length})")
    bad = [int(s) for s in starts if s < 0 or s + length > n]
    if bad:
        raise ConfigError(
            f"sequence start {bad[0]} with {length} jobs runs past the {n} loaded "
            f"jobs (valid starts: 0 … {n - length})"
        )
    idx = starts[:, None] + np.arange(length)[None, :]
    nodes = np.ceil(jobs.procs / jobs.procs_per_node).astype(np.int64)
    used = np.zeros(n, bool)
    used[idx.ravel()] = True
    _check_jobs(jobs, nodes, used)
    return {
        "submit": jobs.submit[idx],
        "run": jobs.run[idx],
        "req": jobs.req_time[idx],
        "procs": jobs.procs[idx],
        "nodes": nodes[idx].astype(np.int32),
        "user": jobs.user[idx],
        "log2n": H.host_log2n(jobs.procs[idx]),
    }


def _where(jobs, j: int) -> str:
    """``file:line: job N`` (as much of it as is known) for error messages."""
    line = getattr(jobs, "line", None)
    path = getattr(jobs, "path", None)
    at = ""
    if path:
        at = f"{path}:{int(line[j])}: " if line is not None and line[j] > 0 else f"{path}: "
    return f"{at}job {int(jobs.job_id[j])}"


def _check_jobs(jobs, nodes: np.ndarray, used: np.ndarray) -> None:
    """Reject jobs the simulator cannot schedule (spec §10.3), among those ``used``."""
    bad = used & (jobs.procs <= 0)
    if bad.any():
        j = int(np.argmax(bad))
        raise ConfigError(
            f"{_where(jobs, j)}: processors: {int(jobs.procs[j])} requested; a job "
            f"needs at least one processor (the default parse rules drop such jobs)"
        )
    bad = used & (nodes > jobs.num_nodes)
    if bad.any():
        j = int(np.argmax(bad))
        raise ConfigError(
            f"{_where(jobs, j)}: processors: needs {int(nodes[j])} nodes but the "
            f"machine has {jobs.num_nodes}"
        )


_COMPILED: dict = {}


def _batch_fn(Q: int, R: int, dynamic: bool, fast: bool, fairness: bool):
    """The jitted batch function of one static configuration (built once per process)."""

    def batch(
        submit,
        run,
        req,
        procs,
        nodes,
        user,
        log2n,
        prank,
        policy,
        backfill,
        compat,
        num_nodes,
        num_procs,
    ):
        B, L = submit.shape
        seq = E.Sequence(
            submit=submit,
            run=run,
            req=req,
            procs=procs,
            nodes=nodes,
            n_jobs=jnp.full((B,), L, jnp.int32),
            num_nodes=jnp.full((B,), num_nodes, jnp.int32),
            log2n=log2n,
        )
        if fast:
            st = E.run_static_nobf_batch(seq, prank, R)
        else:
            params = E.SimParams(policy=policy, backfill=backfill, compat=jnp.full((B,), compat))
            st0 = jax.vmap(lambda q, p: E.reset(q, p, Q, R))(seq, prank)
            st = E.run_heuristic_batch(seq, params, st0, dynamic=dynamic)
        valid = jnp.ones(L, bool)
        m = jax.vmap(
            lambda s_, r_, p_, st_, u_: M.all_metrics(
                s_, r_, p_, st_, valid, num_procs, compat, users=u_ if fairness else None
            )
        )(submit, run, procs, st.start, user)
        return st.start, m, st.overflow, st.stuck, st.decisions, st.steps

    fn = batch
    n_dev = jax.local_device_count()
    if n_dev > 1:
        # one independent while_loop per device (CPU: one per core with
        # XLA_FLAGS=--xla_force_host_platform_device_count=N, see use_all_cpu_cores())
        mesh = jax.sharding.Mesh(np.array(jax.local_devices()), ("b",))
        spec = jax.sharding.PartitionSpec("b")
        rep = jax.sharding.PartitionSpec()
        fn = jax.shard_map(
            fn, mesh=mesh, in_specs=(spec,) * 10 + (rep,) * 3, out_specs=spec, check_vma=False
        )
    return jax.jit(fn)


def _run_batch(
    arrays: dict,
    prank: np.ndarray,
    pol: np.ndarray,
    bf: np.ndarray,
    compat: bool,
    num_nodes: int,
    num_procs: float,
    Q: int,
    R: int,
    dynamic: bool,
    fast: bool,
    fairness: bool,
    timing: dict,
):
    """Run one batch (compiling it first if this configuration and these shapes are new, timed
    separately); returns numpy outputs."""
    args = [
        jnp.asarray(arrays[k]) for k in ("submit", "run", "req", "procs", "nodes", "user", "log2n")
    ]
    args += [
        jnp.asarray(prank, jnp.int32),
        jnp.asarray(pol, jnp.int32),
        jnp.asarray(bf, jnp.int32),
        jnp.asarray(compat),
        jnp.asarray(num_nodes, jnp.int32),
        jnp.asarray(num_procs, jnp.float64),
    ]
    key = (
        Q,
        R,
        dynamic,
        fast,
        fairness,
        jax.local_device_count(),
        tuple((a.shape, str(a.dtype)) for a in args),
    )
    t0 = time.perf_counter()
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _batch_fn(Q, R, dynamic, fast, fairness).lower(*args).compile()
        _COMPILED[key] = compiled
    t1 = time.perf_counter()
    out = jax.block_until_ready(compiled(*args))
    t2 = time.perf_counter()
    timing["compile_s"] += t1 - t0
    timing["run_s"] += t2 - t1
    return jax.tree_util.tree_map(np.asarray, out)


def _bucket(n: int) -> int:
    """Batch size for ``n`` runs: few distinct compiled shapes without much padding — a power
    of two up to 16, then a multiple of 8 (of 32 above 256); at least the number of devices
    and a multiple of it."""
    d = max(1, jax.local_device_count())
    if n <= 16:
        b = 1
        while b < n:
            b *= 2
    else:
        step = 8 if n <= 256 else 32
        b = -(-n // step) * step
    return -(-max(b, d) // d) * d


def use_all_cpu_cores() -> None:
    """Expose every CPU core as a JAX device (call before JAX initialises its backend, i.e. before
    the first computation). :func:`evaluate` then runs one share of the batch per core. Does
    nothing if ``XLA_FLAGS`` already sets a device count; accelerators are unaffected (the flag
    only adds host devices; :mod:`jaxsched.host_devices`)."""
    import os

    from jaxsched.host_devices import split_host

    split_host(os.cpu_count() or 1)


@scoped
def evaluate(
    jobs,
    starts: Iterable[int],
    length: int,
    policies: Seq[str],
    backfills: Seq[str],
    *,
    compat: bool = True,
    metrics: Seq[str] = ("bsld", "wait", "turnaround", "sld", "util"),
    queue_cap: int = 256,
    run_cap: int = 64,
    seed: int = 0,
) -> EvalResult:
    """Evaluate heuristics on sequences of a loaded trace.

    Args:
      jobs: a :class:`jaxsched.workload.swf.Jobs` (``read_swf(path).jobs(rules)``).
      starts: 0-based start indices into ``jobs``; each sequence is ``length`` consecutive jobs
        on an idle cluster with the clock at the first submit time.
      policies: heuristic names (:data:`jaxsched.policies.heuristics.POLICIES`), or tuned
        priorities (``"tuned:PATH"`` or :class:`jaxsched.policies.tuned.TunedPriority`).
      backfills: ``"none"``, ``"rlscheduler"``, ``"easy"``, ``"rlscheduler-sjbf"`` and/or
        ``"easy-sjbf"`` (:data:`jaxsched.sim.types.BACKFILLS`); ``"easy++"`` (correct mode,
        traces with user ids: :mod:`jaxsched.sim.easypp`).
      compat: True = the reference SchedGym semantics, False = the correct default mode,
        ``"cqsim"`` = the CQSim engine mode (``jobs`` from
        :func:`jaxsched.workload.cqsim.load_cqsim`; :mod:`jaxsched.sim.cqsim.evaluate`).
      metrics: names from :data:`METRICS`.
      queue_cap, run_cap: first-try capacities of the backfilling runs' queue and of every
        run's running list (grown 4x automatically on overflow; the schedules never depend on
        them). 256/64 was the fastest first try on the four traces of the paper
        (benchmarks/experiments/capacities.py, RESULTS.md §1).
      seed: seeds the ``random`` policy's per-job uniforms (one draw per sequence and run).
    """
    if isinstance(compat, str) and compat == "cqsim":  # CQSim engine mode (sim/cqsim)
        from jaxsched.sim.cqsim.evaluate import evaluate_cqsim

        return evaluate_cqsim(jobs, starts, length, policies, backfills, metrics)
    if any(b.strip().lower() == "easy++" for b in backfills):  # EASY++ (sim/easypp)
        from jaxsched.sim.easypp import evaluate_with_easypp

        return evaluate_with_easypp(jobs, starts, length, policies, backfills, compat=compat,
                                    metrics=metrics, queue_cap=queue_cap, run_cap=run_cap,
                                    seed=seed)  # fmt: skip
    starts = np.asarray(list(starts), dtype=np.int64)
    tuned = {i: tp for i, tp in enumerate(map(T.as_tuned, policies)) if tp is not None}
    policies, pcodes, backfills, bcodes = _check_names(policies, backfills, metrics, compat)
    arrays = window_arrays(jobs, starts, length)
    S, P, B, L = len(starts), len(pcodes), len(bcodes), length
    si, pi, bi = np.meshgrid(np.arange(S), np.arange(P), np.arange(B), indexing="ij")
    si, pi, bi = si.ravel(), pi.ravel(), bi.ravel()
    pol = np.asarray(pcodes)[pi]
    bfc = np.asarray(bcodes)[bi]
    n = len(si)
    prank = _policy_ranks(arrays, si, pi, pcodes, L, seed, tuned)
    dyn_mask = (~np.asarray(compat)) & ((pol == H.WFP3) | (pol == H.UNICEP))
    timing = {
        "compile_s": 0.0,
        "run_s": 0.0,
        "decisions": 0,
        "micro_steps": 0,
        "runs": n,
        "capacities": [],
    }
    out = {
        "start": np.full((n, L), -1, np.int64),
        "metrics": {m: np.full(n, np.nan) for m in metrics},
    }
    # three compiled variants: static keys without backfilling (bitmask fast path), static keys
    # with backfilling, clock-dependent keys (WFP3/UNICEP in the correct mode)
    fast_mask = ~dyn_mask & (bfc == E.BACKFILL_NONE)
    groups = [
        (False, True, fast_mask),
        (False, False, ~dyn_mask & ~fast_mask),
        (True, False, dyn_mask),
    ]
    batch = {k: v[si] for k, v in arrays.items()}  # per run
    for dynamic, fast, mask in groups:
        _run_growing(
            jobs, batch, prank, pol, bfc, np.nonzero(mask)[0], out, timing,
            compat=compat, dynamic=dynamic, fast=fast, metrics=metrics,
            first_caps=(queue_cap, run_cap), max_caps=(L, min(L, int(jobs.num_nodes))),
        )  # fmt: skip
    rows = [
        {
            "start": int(starts[si[i]]),
            "jobs": L,
            "policy": policies[pi[i]],
            "backfill": backfills[bi[i]],
            "metric": name,
            "value": float(out["metrics"][name][i]),
        }
        for i in range(n)
        for name in metrics
    ]
    return EvalResult(
        rows=rows,
        starts=starts,
        policies=policies,
        backfills=backfills,
        metrics=list(metrics),
        start_times=out["start"].reshape(S, P, B, L),
        timing=timing,
    )


def _check_names(policies, backfills, metrics, compat):
    """Canonical ``(policies, policy codes, backfills, backfill codes)``; ConfigError for an
    unknown name or EASY in the reference semantics."""
    tuned = [T.as_tuned(p) for p in policies]
    # a tuned priority runs as a static key (its host rank; FCFS's code is any static code)
    pcodes = [H.POLICY_CODE["fcfs"] if tp else H.policy_code(p.strip().lower())
              for p, tp in zip(policies, tuned)]  # fmt: skip
    bcodes = [E.backfill_code(b) for b in backfills]
    for m in metrics:
        if m not in METRICS:
            raise ConfigError(f"unknown metric {m!r}; choose from {', '.join(METRICS)}")
    for code in (E.BACKFILL_EASY, E.BACKFILL_EASY_SJBF):
        if compat and code in bcodes:
            raise ConfigError(
                f"backfill {E.BACKFILLS[code]!r} is not part of the reference simulator; "
                "use it without --compat (the correct mode)"
            )
    names = [tp.name if tp else H.POLICIES[c] for c, tp in zip(pcodes, tuned)]
    return names, pcodes, [E.BACKFILLS[c] for c in bcodes], bcodes


def _policy_ranks(arrays, si, pi, pcodes, L, seed, tuned=None) -> np.ndarray:
    """int32 ``[runs, L]``: each run's static priority rank of its jobs (host keys, exact);
    ``tuned``: ``{policy index: TunedPriority}`` ranked by their own keys."""
    prank = np.zeros((len(si), L), np.int32)
    rng = np.random.default_rng(seed)
    for p_i, code in enumerate(pcodes):
        rows = np.nonzero(pi == p_i)[0]
        sub = {k: arrays[k][si[rows]] for k in ("submit", "req", "procs")}
        if tuned and p_i in tuned:
            prank[rows] = tuned[p_i].rank(sub["submit"], sub["req"], sub["procs"])
            continue
        rand_u = rng.random((len(rows), L)) if code == H.RANDOM else None
        prank[rows] = H.host_rank(code, sub["submit"], sub["req"], sub["procs"], rand_u)
    return prank


def _run_growing(jobs, batch, prank, pol, bfc, todo, out, timing, *, compat, dynamic, fast,
                 metrics, first_caps, max_caps):  # fmt: skip
    """Run the runs ``todo`` (indices into the per-run arrays ``batch``, ``prank``, ``pol``,
    ``bfc``) in padded batches, re-running those whose queue or running list overflowed with 4x
    the capacity; fills ``out["start"]`` / ``out["metrics"]`` and ``timing`` in place."""
    (Q, R), (qmax, rmax) = (
        (min(first_caps[0], max_caps[0]), min(first_caps[1], max_caps[1])),
        max_caps,
    )
    while len(todo):
        nb = _bucket(len(todo))
        pad = np.concatenate([todo, np.repeat(todo[:1], nb - len(todo))])
        sub = {k: v[pad] for k, v in batch.items()}
        start, m, bad, stuck, dec, steps = _run_batch(
            sub,
            prank[pad],
            pol[pad],
            bfc[pad],
            compat,
            int(jobs.num_nodes),
            float(jobs.num_procs),
            Q,
            R,
            dynamic,
            fast,
            "fairness" in metrics,
            timing,
        )
        k = len(todo)
        if stuck[:k].any():
            raise ConfigError("a sequence could not be scheduled (a job never fits)")
        ok = bad[:k] == 0
        done_idx = todo[ok]
        out["start"][done_idx] = start[:k][ok]
        for name in metrics:
            out["metrics"][name][done_idx] = m[name][:k][ok]
        timing["decisions"] += int(dec[:k][ok].sum())
        timing["micro_steps"] += int(steps[:k][ok].sum())
        timing["capacities"].append({"queue": Q, "running": R, "runs": int(ok.sum())})
        todo = todo[~ok]
        if len(todo):
            if not (bad[:k] & 3).any() or (
                Q >= qmax and R >= rmax and not (bad[:k] & E.ABORTED).any()
            ):
                raise ConfigError("internal error: capacity overflow at maximum capacity")
            flags = np.bitwise_or.reduce(bad[:k])
            Q = min(Q * 4, qmax) if flags & 1 else Q
            R = min(R * 4, rmax) if flags & 2 else R


def check_versus(versus: str, policies: Seq[str]) -> None:
    """ConfigError unless ``versus`` names one of ``policies`` (callers check before a long
    run; :meth:`EvalResult.paired` checks again)."""
    if versus not in policies:
        raise ConfigError(
            f"--versus {versus}: not among the evaluated policies ({', '.join(policies)})"
        )


def _flat(per_start: dict) -> list:
    return [x for vs in per_start.values() for x in vs]


def standard_error(values) -> float:
    """The standard error of the mean of ``values`` (sample std / sqrt(n); NaN for n < 2)."""
    v = np.asarray(values, dtype=np.float64)
    return float(np.std(v, ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan


def format_table(res: EvalResult, sem: bool = False, versus: str | None = None) -> str:
    """A readable table: one row per policy, one column per metric × backfill mode (mean over
    the sequences). ``sem``: each mean with ``± standard error`` over the sequences. ``versus``
    (a policy name): each cell is instead the paired difference to that policy on the same
    sequences, ``mean ± standard error`` (see :meth:`EvalResult.paired`)."""
    cols = [(m, b) for m in res.metrics for b in res.backfills]
    if versus is not None:
        tables = {m: res.paired(m, versus) for m in res.metrics}
    else:
        tables = {m: res.table(m) for m in res.metrics}
        errs = {m: res.sem(m) for m in res.metrics} if sem else None
    head = ["policy"] + [f"{m} ({'no bf' if b == 'none' else b})" for m, b in cols]
    if versus is not None:
        head[0] = f"policy - {versus}"
    body = []
    for p in res.policies:
        row = [p]
        for m, b in cols:
            if versus is not None:
                d, e = tables[m][(p, b)]
                row.append(f"{F.number(d, signed=True)} ± {F.std_error(e)}")
            else:
                v = tables[m][(p, b)]
                row.append(F.number(v) + (f" ± {F.std_error(errs[m][(p, b)])}" if sem else ""))
        body.append(row)
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    fmt = lambda r: "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
    )
    lines = [fmt(head), "  ".join("-" * w for w in widths)] + [fmt(r) for r in body]
    return "\n".join(lines)
