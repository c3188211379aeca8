"""Tests of the JAX engine (jaxsched/sim/engine.py) and its batched driver (sim/evaluate.py).

1. every value of shared/reference/*-seq1024.json through ``evaluate(..., compat=True)``
   (2 traces x 10 sequences x 9 policies x 2 backfill settings x 5 metrics, rel. err <= 1e-9);
2. the oracle table of spec rlscheduler.md §8.4 (Lublin-1/2, paper seeds 1, 2, 20);
3. engine == oracle (every start time and decision count) on seeded random small traces, every
   oracle policy, compat=True (none, rlscheduler) and compat=False (none, rlscheduler, easy),
   one compiled ``jit(vmap(run_heuristic))`` for all of them; the no-backfilling fast path
   ``run_static_nobf`` likewise; ``evaluate`` in the correct mode (start times, all metrics,
   running-list regrowth);
4. the decision-level API (``reset`` + ``schedule``) driven by random choices == the oracle's
   ``simulate_with_choices`` given the same choices;
5. jit == no-jit and vmap == one-at-a-time;
6. hand-computed schedules of 3-5 jobs (no backfilling, greedy ``<``, EASY ``<=`` and extra
   nodes, compat release ties, compat backfill scan order, node granularity, priority ties);
7. schedule invariants (no over-allocation, start >= submit, every job starts once) and the
   reservation guarantee; the engine commits the same jobs as the oracle and latches the same
   greedy reservation;
8. no recompilation when the jitted functions (ours and evaluate's) are called again with the
   same shapes;
plus the priority order of every heuristic against the oracle's float64 keys (ties).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shared_data import SHARED

import jaxsched.sim  # noqa: F401  (turns on jax x64)
from jaxsched.errors import ScheduleError
from jaxsched.policies import heuristics as H
from jaxsched.sim import engine as E
from jaxsched.sim import oracle as O
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload import read_swf, validate


@functools.cache
def load_jobs(name: str):
    return read_swf(SHARED / "traces" / name).jobs("rlscheduler")


# ----------------------------------------------------------------------------------------------
# 1. Reference values
# ----------------------------------------------------------------------------------------------
# The 1,800 reference values of ../shared/reference/*.json (the RLScheduler files) are replayed
# through `evaluate` by tests/conformance/test_conformance.py::test_shipped_files_all_match (one
# batched simulator call per file, every value within 1e-9); a second replay here compiled the
# same engine at other capacities and doubled that cost.


# ----------------------------------------------------------------------------------------------
# 2. Spec §8.4 oracle table (paper seeds, §8.2 start lists)
# ----------------------------------------------------------------------------------------------
SEED_STARTS = {
    1: (1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085),
    2: (5316, 6704, 7470, 7238, 7216, 1167, 8814, 2516, 6433, 7528),
    20: (1131, 5655, 1684, 6977, 1245, 5498, 6628, 5299, 7328, 8682),
}
SPEC_POLICIES = ("fcfs", "wfp3", "unicep", "sjf", "f1")  # the table's column order
# (trace, metric, seed, backfilled?) -> FCFS, WFP3, UNICEP, SJF, F1 (spec §8.4, 6 decimals)
SPEC_TABLE = {
    ("Lublin-1", "bsld", 1, False): (
        7273.771360,
        19753.527528,
        22274.744676,
        277.348341,
        258.366372,
    ),
    ("Lublin-1", "bsld", 1, True): (235.817305, 133.873761, 307.232858, 73.306497, 75.068151),
    ("Lublin-2", "bsld", 1, False): (
        7842.470887,
        9523.175073,
        11265.311477,
        787.887380,
        698.336791,
    ),
    ("Lublin-2", "bsld", 1, True): (247.606741, 318.353081, 379.592399, 91.993360, 148.249385),
    ("Lublin-1", "util", 1, False): (0.656603, 0.746515, 0.690843, 0.761601, 0.815952),
    ("Lublin-1", "util", 1, True): (0.868172, 0.864352, 0.883390, 0.778415, 0.840126),
    ("Lublin-2", "util", 1, False): (0.404068, 0.543274, 0.510429, 0.561872, 0.477525),
    ("Lublin-2", "util", 1, True): (0.587014, 0.582865, 0.586529, 0.592752, 0.551859),
    ("Lublin-1", "sld", 2, False): (
        9711.105413,
        26630.895016,
        29995.021475,
        397.248208,
        339.338099,
    ),
    ("Lublin-1", "sld", 2, True): (316.724349, 199.668069, 478.208297, 91.824605, 87.365684),
    ("Lublin-2", "sld", 2, False): (
        13913.533930,
        18948.406060,
        21977.977494,
        1489.680114,
        1925.391025,
    ),
    ("Lublin-2", "sld", 2, True): (275.545422, 310.056239, 423.610682, 162.572697, 133.157602),
    ("Lublin-1", "wait", 20, False): (
        241111.291211,
        476218.575000,
        683473.848047,
        42509.916406,
        18936.351172,
    ),
    ("Lublin-1", "wait", 20, True): (
        24887.564746,
        19112.030469,
        32110.481836,
        30099.951074,
        12692.977832,
    ),
    ("Lublin-2", "wait", 20, False): (
        134542.207031,
        178924.053418,
        202814.313379,
        18278.375488,
        26104.975684,
    ),
    ("Lublin-2", "wait", 20, True): (
        6300.899512,
        8713.203320,
        8155.599707,
        4011.754785,
        5828.306250,
    ),
}
SPEC_TRACES = {"Lublin-1": "lublin_256.swf.gz", "Lublin-2": "lublin_256_new2.swf.gz"}


# the extended tier: tests/sim/test_oracle.py::test_spec_table_8_4 checks every cell of the
# table with the plain-Python oracle, and the engine equals the oracle (this module's property
# tests) and the reference's own values (tests/conformance: 1,800 runs of 1,024 jobs)
@pytest.mark.extended
@pytest.mark.xla_full_opt  # 20 runs of 1024 jobs x 10 policy-backfill pairs: run time
def test_spec_table_8_4():
    # Lublin-1 and Lublin-2 describe the same machine (256 nodes x 1 processor), so both are
    # evaluated in ONE batch: the second trace is appended to the first and its sequence starts
    # are offset by the first trace's length (no 1024-job window crosses the seam).
    j1, j2 = load_jobs(SPEC_TRACES["Lublin-1"]), load_jobs(SPEC_TRACES["Lublin-2"])
    for j in (j1, j2):
        assert j.n_jobs == 10000 and j.num_nodes == 256 and j.num_procs == 256
        assert j.procs_per_node == 1.0
    both = dataclasses.replace(
        j1, **{a: np.concatenate([getattr(j1, a), getattr(j2, a)]) for a in j1.ARRAYS}
    )
    offset = {"Lublin-1": 0, "Lublin-2": j1.n_jobs}
    seq_starts = sorted({s for ss in SEED_STARTS.values() for s in ss})
    assert max(seq_starts) + 1024 <= 10000
    starts = [s + off for off in offset.values() for s in seq_starts]
    res = evaluate(
        both,
        starts,
        1024,
        SPEC_POLICIES,
        ["none", "rlscheduler"],
        compat=True,
        metrics=("bsld", "util", "sld", "wait"),
        queue_cap=256,
        run_cap=256,
    )
    val = {(r["start"], r["policy"], r["backfill"], r["metric"]): r["value"] for r in res.rows}
    bad = []
    for (trace, metric, seed, bf), cells in SPEC_TABLE.items():
        for policy, expect in zip(SPEC_POLICIES, cells):
            vals = [
                val[(s + offset[trace], policy, "rlscheduler" if bf else "none", metric)]
                for s in SEED_STARTS[seed]
            ]
            mean = float(np.mean(vals))
            # the table prints 6 decimals: within half a unit of the last printed digit
            if not abs(mean - expect) <= 5e-7 + 1e-12 * abs(expect):
                bad.append((trace, metric, seed, bf, policy, mean, expect))
    assert not bad, f"{len(bad)} of 80 cells differ; first: {bad[:4]}"


# ----------------------------------------------------------------------------------------------
# Random small traces and a compiled batch runner (sections 3, 5, 7, 8)
# ----------------------------------------------------------------------------------------------
LMAX = 24  # padded sequence length of every random trace
NMAX = 8  # largest machine; every job uses >= 1 node, so <= NMAX jobs run at once
QCAP, RCAP = LMAX, NMAX
MODES = (
    (True, "none"),
    (True, "rlscheduler"),
    (False, "none"),
    (False, "rlscheduler"),
    (False, "easy"),
)
POLICIES = tuple(O.POLICIES)  # every oracle policy (the engine has all of them)
TRACE_COUNTS: collections.Counter = collections.Counter()  # Python-side trace counter (§8)


@dataclasses.dataclass
class Trace:
    submit: np.ndarray
    run: np.ndarray
    req: np.ndarray
    procs: np.ndarray
    num_nodes: int
    ppn: float
    style: str

    @property
    def n(self) -> int:
        return len(self.submit)

    @property
    def nodes(self) -> np.ndarray:
        return np.asarray(O.node_counts(self.procs, self.ppn), np.int64)

    def oracle(self, **kw):
        return O.simulate_detailed(
            self.submit,
            self.run,
            self.req,
            self.procs,
            num_nodes=self.num_nodes,
            procs_per_node=self.ppn,
            **kw,
        )

    def padded(self) -> dict:
        """Arrays of length LMAX; the padding jobs (index >= n) must be ignored by the engine,
        so they get plausible values that would change the schedule if they leaked in."""
        pad = LMAX - self.n
        last = int(self.submit[-1])
        f = lambda a, v: np.concatenate([np.asarray(a, np.int64), np.full(pad, v, np.int64)])
        return dict(
            submit=f(self.submit, last),
            run=f(self.run, 7),
            req=f(self.req, 7),
            procs=f(self.procs, 1),
            nodes=f(self.nodes, 1).astype(np.int32),
            n_jobs=np.int32(self.n),
            num_nodes=np.int32(self.num_nodes),
        )


def trace_from_jobs(jobs, num_nodes, ppn=1.0, style="hand") -> Trace:
    s, r, q, n = (np.asarray(c, np.int64) for c in zip(*jobs))
    return Trace(s, r, q, n, num_nodes, float(ppn), style)


def random_traces(seed: int, count: int) -> list:
    """Seeded small traces that make queues form: many equal submit times, small machines,
    wide and narrow jobs, ppn 1 and 2, run times exact / over-estimated ("exact", "over": the
    reservation guarantee holds) or unrelated to the request ("any": under- and over-estimated),
    a few zero run times, requested time >= 1, trace starts at 0 (log10(0) keys) or later."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        N = int(rng.integers(1, NMAX + 1))
        ppn = 1.0 if rng.random() < 0.6 else 2.0
        L = LMAX if rng.random() < 0.6 else int(rng.integers(1, LMAX + 1))
        gaps = rng.choice([0, 0, 0, 0, 1, 1, 2, 3, 5, 8, 30], size=L)
        gaps[0] = 0
        submit = int(rng.choice([0, 1, 3, 100, 86400])) + np.cumsum(gaps)
        style = ("exact", "over", "any")[i % 3]
        run = rng.choice([0, 1, 2, 3, 4, 5, 7, 10, 15, 20, 40], size=L)
        if style == "exact":
            run = np.maximum(run, 1)
            req = run.copy()
        elif style == "over":
            req = np.maximum(run + rng.choice([0, 0, 1, 3, 10, 30], size=L), 1)
        else:
            req = rng.choice([1, 2, 3, 5, 8, 10, 20, 40], size=L)
        maxp = int(N * ppn)
        narrow = rng.integers(1, min(maxp, int(ppn)) + 1, size=L)
        wide = rng.integers(1, maxp + 1, size=L)
        procs = np.where(rng.random(L) < 0.45, wide, narrow)
        out.append(
            Trace(
                submit.astype(np.int64),
                run.astype(np.int64),
                req.astype(np.int64),
                procs.astype(np.int64),
                N,
                ppn,
                style,
            )
        )
    return out


def _sim_one(
    submit, run, req, procs, nodes, n_jobs, num_nodes, log2n, prank, policy, backfill, compat
):
    """One heuristic episode with run_heuristic; returns the final SimState."""
    seq = E.Sequence(
        submit=submit,
        run=run,
        req=req,
        procs=procs,
        nodes=nodes,
        n_jobs=n_jobs,
        num_nodes=num_nodes,
        log2n=log2n,
    )
    params = E.SimParams(policy=policy, backfill=backfill, compat=compat)
    return E.run_heuristic(seq, params, E.reset(seq, prank, QCAP, RCAP))


def _batch_fn(*args):
    TRACE_COUNTS["batch"] += 1
    return jax.vmap(_sim_one)(*args)


def _one_fn(*args):
    TRACE_COUNTS["one"] += 1
    return _sim_one(*args)


RUN_BATCH = jax.jit(_batch_fn)
RUN_ONE = jax.jit(_one_fn)

ARG_NAMES = ("submit", "run", "req", "procs", "nodes", "n_jobs", "num_nodes")


def host_args(trace: Trace, policy: str) -> list:
    """The host-computed per-job inputs: libm log2(n + 1e-15) and the policy's exact static
    rank (padding jobs rank after the real ones, in index order)."""
    p = trace.padded()
    rank = np.arange(LMAX, dtype=np.int32)
    rank[: trace.n] = H.host_rank(policy, trace.submit, trace.req, trace.procs)
    return [H.host_log2n(p["procs"]), rank]


def build_args(combos) -> list:
    """combos: list of (Trace, policy, compat, backfill) -> stacked numpy argument list."""
    pads = [c[0].padded() for c in combos]
    args = [np.stack([p[k] for p in pads]) for k in ARG_NAMES]
    hosts = [host_args(c[0], c[1]) for c in combos]
    args += [np.stack([h[i] for h in hosts]) for i in range(2)]
    args.append(np.asarray([H.policy_code(c[1]) for c in combos], np.int32))
    args.append(np.asarray([E.backfill_code(c[3]) for c in combos], np.int32))
    args.append(np.asarray([c[2] for c in combos], bool))
    return args


def one_args(trace: Trace, policy: str, compat: bool, backfill: str) -> list:
    p = trace.padded()
    return (
        [p[k] for k in ARG_NAMES]
        + host_args(trace, policy)
        + [np.int32(H.policy_code(policy)), np.int32(E.backfill_code(backfill)), np.bool_(compat)]
    )


def to_numpy(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


@pytest.fixture(scope="module")
def random_batch():
    """48 random traces x 13 policies x 5 modes, run in one compiled call, with the oracle's
    detailed results of the same runs."""
    traces = random_traces(20240611, 48)
    combos = [(tr, p, c, b) for tr in traces for p in POLICIES for c, b in MODES]
    args = build_args(combos)
    final = to_numpy(RUN_BATCH(*args))
    oracle = [tr.oracle(policy=p, compat=c, backfill=b) for tr, p, c, b in combos]
    return dict(traces=traces, combos=combos, args=args, final=final, oracle=oracle)


def _describe(tr: Trace) -> str:
    jobs = list(zip(tr.submit.tolist(), tr.run.tolist(), tr.req.tolist(), tr.procs.tolist()))
    return f"N={tr.num_nodes} ppn={tr.ppn} jobs(s,r,q,n)={jobs}"


# ----------------------------------------------------------------------------------------------
# 3. Engine == oracle on random traces
# ----------------------------------------------------------------------------------------------
def test_random_traces_equal_oracle(random_batch):
    final, combos, oracle = random_batch["final"], random_batch["combos"], random_batch["oracle"]
    assert len(combos) == 48 * len(POLICIES) * len(MODES)
    assert set(POLICIES) <= set(H.POLICIES) and len(POLICIES) == 13
    # the instances really exercise waiting and backfilling
    assert sum(any(r.backfilled) for r in oracle) > 300
    assert (
        sum(
            max(s - tr.submit[i] for i, s in enumerate(r.starts)) > 0
            for (tr, *_), r in zip(combos, oracle)
        )
        > 1000
    )
    assert final.done.all() and not final.stuck.any() and (np.asarray(final.overflow) == 0).all()
    bad = []
    for i, ((tr, _p, _c, _b), res) in enumerate(zip(combos, oracle)):
        got = final.start[i]
        if got[: tr.n].tolist() != res.starts or (got[tr.n :] != -1).any():
            bad.append((tr.n, i))
        elif int(final.decisions[i]) != res.decisions or int(final.n_started[i]) != tr.n:
            bad.append((tr.n, i))
    if bad:
        _, i = min(bad)
        tr, p, c, b = combos[i]
        pytest.fail(
            f"{len(bad)} of {len(combos)} runs differ from the oracle; smallest: "
            f"policy={p} compat={c} backfill={b} {_describe(tr)}\n"
            f"engine {final.start[i][: tr.n].tolist()} (decisions "
            f"{int(final.decisions[i])})\noracle {oracle[i].starts} "
            f"(decisions {oracle[i].decisions})"
        )


def _sim_fast(submit, run, req, procs, nodes, n_jobs, num_nodes, log2n, prank):
    """The no-backfilling fast path (static keys): run_static_nobf."""
    seq = E.Sequence(
        submit=submit,
        run=run,
        req=req,
        procs=procs,
        nodes=nodes,
        n_jobs=n_jobs,
        num_nodes=num_nodes,
        log2n=log2n,
    )
    return E.run_static_nobf(seq, prank, RCAP)


RUN_FAST = jax.jit(jax.vmap(_sim_fast))


def test_fast_path_without_backfilling_equals_oracle(random_batch):
    """run_static_nobf (used by evaluate for static keys without backfilling) == the oracle and
    == run_heuristic, in both modes (static keys: every policy in compat mode, all but the
    clock-dependent WFP3/UNICEP in the correct mode)."""
    sel = [
        i
        for i, (tr, p, c, b) in enumerate(random_batch["combos"])
        if b == "none" and (c or p not in ("wfp3", "unicep"))
    ]
    assert len(sel) == 48 * (13 + 11)
    args = [a[sel] for a in random_batch["args"][: len(ARG_NAMES) + 2]]
    st = to_numpy(RUN_FAST(*args))
    assert st.done.all() and not st.stuck.any() and (np.asarray(st.overflow) == 0).all()
    final = random_batch["final"]
    bad = []
    for row, i in enumerate(sel):
        tr, p, c, b = random_batch["combos"][i]
        res = random_batch["oracle"][i]
        if (
            st.start[row][: tr.n].tolist() != res.starts
            or (st.start[row][tr.n :] != -1).any()
            or int(st.decisions[row]) != res.decisions
        ):
            bad.append((tr.n, i, row))
    if bad:
        _, i, row = min(bad)
        tr, p, c, b = random_batch["combos"][i]
        pytest.fail(
            f"{len(bad)} fast-path runs differ from the oracle; smallest: policy={p} "
            f"compat={c} {_describe(tr)}\nfast {st.start[row][: tr.n].tolist()}\n"
            f"oracle {random_batch['oracle'][i].starts}"
        )
    np.testing.assert_array_equal(st.start, final.start[sel])


def synthetic_jobs(seed: int, n: int, num_nodes: int, ppn: float):
    """A Jobs-like object with what :func:`evaluate` reads (a random trace on one machine)."""
    rng = np.random.default_rng(seed)
    gaps = rng.choice([0, 0, 0, 1, 2, 4, 10], size=n)
    run = rng.choice([1, 2, 3, 5, 8, 13, 30], size=n).astype(np.int64)
    req = np.where(
        rng.random(n) < 0.5, run + rng.choice([0, 2, 20], size=n), rng.choice([1, 3, 9, 27], size=n)
    ).astype(np.int64)
    procs = rng.integers(1, int(num_nodes * ppn) + 1, size=n).astype(np.int64)
    return types.SimpleNamespace(
        submit=(50 + np.cumsum(gaps)).astype(np.int64),
        run=run,
        req_time=req,
        procs=procs,
        user=rng.integers(1, 4, size=n).astype(np.int64),
        job_id=np.arange(1, n + 1),
        num_nodes=num_nodes,
        procs_per_node=ppn,
        num_procs=int(num_nodes * ppn),
        n_jobs=n,
    )


EVAL_L = 20
EVAL_POLICIES = ("fcfs", "sjf", "f1", "f3", "smallest", "saf", "srf", "ljf", "lcfs")
EVAL_BACKFILLS = ("rlscheduler", "easy")
EVAL_METRICS = (
    "bsld",
    "sld",
    "wait",
    "turnaround",
    "util",
    "util_ref",
    "util_busy",
    "max_wait",
    "makespan",
    "fairness",
)


def evaluate_small(jobs, starts):
    """evaluate() in the correct mode with backfilling (EASY and greedy), starting with room
    for ONE running job so the running-list overflow re-run happens (the queue regrowth is
    exercised by the reference tests).  The WFP3/UNICEP and no-backfilling compiled groups are
    left out to save compilations (run_heuristic and run_static_nobf are checked above)."""
    return evaluate(
        jobs,
        starts,
        EVAL_L,
        EVAL_POLICIES,
        EVAL_BACKFILLS,
        compat=False,
        metrics=EVAL_METRICS,
        queue_cap=EVAL_L,
        run_cap=1,
    )


def check_evaluate_small(jobs, starts, res):
    """Start times and every metric of the correct mode against the oracle."""
    vals = {(r["start"], r["policy"], r["backfill"], r["metric"]): r["value"] for r in res.rows}
    for si, a in enumerate(starts):
        sl = slice(a, a + EVAL_L)
        cols = (jobs.submit[sl], jobs.run[sl], jobs.req_time[sl], jobs.procs[sl])
        for pi, p in enumerate(EVAL_POLICIES):
            for bi, b in enumerate(EVAL_BACKFILLS):
                want = O.simulate(
                    *cols,
                    num_nodes=jobs.num_nodes,
                    procs_per_node=jobs.procs_per_node,
                    policy=p,
                    backfill=b,
                    compat=False,
                )
                assert res.start_times[si, pi, bi].tolist() == want, (a, p, b)
                m = O.metrics(
                    cols[0],
                    cols[1],
                    cols[3],
                    want,
                    num_procs=jobs.num_procs,
                    compat=False,
                    users=jobs.user[sl],
                )
                for name in EVAL_METRICS:
                    assert vals[(a, p, b, name)] == pytest.approx(m[name], rel=1e-12), (
                        a,
                        p,
                        b,
                        name,
                    )


@pytest.fixture(scope="module")
def small_eval():
    jobs = synthetic_jobs(17, 120, num_nodes=4, ppn=2.0)
    starts = [0, 13, 40, 77, 100]
    return jobs, starts, evaluate_small(jobs, starts)


def test_evaluate_correct_mode_with_running_list_regrowth(small_eval):
    jobs, starts, res = small_eval
    caps = [(c["queue"], c["running"]) for c in res.timing["capacities"]]
    assert caps[0] == (EVAL_L, 1) and caps[-1] == (EVAL_L, 4), caps
    check_evaluate_small(jobs, starts, res)


def test_evaluate_does_not_recompile_for_the_same_shapes(small_eval, count_compilations):
    """evaluate() called again with the same shapes and configuration (the same sequences in
    another order, so the capacity re-runs have the same batch sizes too) should reuse its
    compiled batch functions instead of compiling them again:
    every compilation costs seconds, which dominates repeated evaluations (e.g. once per
    training epoch, or the CLI evaluating several traces of one machine size).  The results
    must still be right."""
    jobs, first, _ = small_eval
    starts = first[::-1]
    with count_compilations() as c:
        res = evaluate_small(jobs, starts)
    check_evaluate_small(jobs, starts, res)
    spent = res.timing["compile_s"] + res.timing["run_s"]
    assert c.n == 0, (
        f"evaluate() compiled {c.n} more time(s) for identical shapes "
        f"({res.timing['compile_s']:.2f} s of {spent:.2f} s): {c.names}"
    )


# ----------------------------------------------------------------------------------------------
# 7. Invariants of the engine's schedules; reservations
# ----------------------------------------------------------------------------------------------
def check_schedule(tr: Trace, start: np.ndarray) -> None:
    """No over-allocation (nodes and processors at any instant), no start before submit, every
    real job started exactly once (padding never): the package's schedule validator."""
    n = tr.n
    assert (start[n:] == -1).all(), "a padding job was started"
    try:
        validate.check_schedule(
            tr.submit, tr.run, tr.procs, start[:n], num_procs=tr.num_nodes * tr.ppn,
            num_nodes=tr.num_nodes, procs_per_node=tr.ppn,
        )  # fmt: skip
    except ScheduleError as e:
        raise AssertionError(str(e)) from None


def test_random_schedules_invariants(random_batch):
    final = random_batch["final"]
    for i, (tr, p, c, b) in enumerate(random_batch["combos"]):
        try:
            check_schedule(tr, final.start[i])
            if p == "fcfs" and b == "none":  # in-order without backfilling
                s = final.start[i][: tr.n]
                assert (np.diff(s) >= 0).all(), "FCFS without backfilling ran out of order"
        except AssertionError as e:
            raise AssertionError(f"{e}: policy={p} compat={c} backfill={b} {_describe(tr)}") from e
    assert (final.n_started == [tr.n for tr, *_ in random_batch["combos"]]).all()


def test_invariant_checker_can_fail():
    pad = lambda v: np.asarray(v + [-1] * (LMAX - len(v)))
    tr = trace_from_jobs([(0, 5, 5, 2), (0, 5, 5, 2)], 3)
    check_schedule(tr, pad([0, 5]))
    with pytest.raises(AssertionError):
        check_schedule(tr, pad([0, 4]))  # 4 nodes busy during [4, 5)
    tr = trace_from_jobs([(3, 5, 5, 1)], 1)
    with pytest.raises(AssertionError):
        check_schedule(tr, pad([2]))  # before its submit time
    with pytest.raises(AssertionError):
        check_schedule(tr, pad([3, 4]))  # a padding job started
    with pytest.raises(AssertionError):
        check_schedule(tr, pad([]))  # never started


SCAN_STEPS = 4 * LMAX + 2


def _sim_scan(
    submit, run, req, procs, nodes, n_jobs, num_nodes, log2n, prank, policy, backfill, compat
):
    """Like _sim_one but micro-step by micro-step, recording the committed job and the
    latched reservation after every step (the engine's view of its reservations)."""
    seq = E.Sequence(
        submit=submit,
        run=run,
        req=req,
        procs=procs,
        nodes=nodes,
        n_jobs=n_jobs,
        num_nodes=num_nodes,
        log2n=log2n,
    )
    params = E.SimParams(policy=policy, backfill=backfill, compat=compat)

    def body(s, _):
        s = E.micro_step(seq, params, s, E.heuristic_choice(seq, params, s))
        return s, (s.committed_job, s.shadow_time)

    st, (cj, shadow) = jax.lax.scan(body, E.reset(seq, prank, QCAP, RCAP), None, length=SCAN_STEPS)
    return st.done, st.start, cj, shadow


RUN_SCAN = jax.jit(jax.vmap(_sim_scan))


def test_reservations_match_oracle_and_are_kept(random_batch):
    """The engine commits the same jobs as the oracle (observed micro-step by micro-step), and
    the greedy variant's latched reservation equals the oracle's.  With requested >= actual run
    times a committed job never starts after its entry reservation (EASY and the greedy
    variant: backfilled jobs cannot delay it; the engine's schedule equals the oracle's, whose
    entry reservation is used), and with exact estimates it starts exactly at it."""
    sel = [i for i, (tr, p, c, b) in enumerate(random_batch["combos"]) if b != "none"]
    args = [a[sel] for a in random_batch["args"]]
    done, start, cj, shadow = to_numpy(RUN_SCAN(*args))
    assert done.all()
    final = random_batch["final"]
    np.testing.assert_array_equal(start, final.start[sel])  # scan == run_heuristic
    checked = {"exact": 0, "over": 0}
    for row, i in enumerate(sel):
        tr, p, c, b = random_batch["combos"][i]
        res = random_batch["oracle"][i]
        entry = {}
        prev = -1
        for j, sh in zip(cj[row].tolist(), shadow[row].tolist()):
            if j >= 0 and j != prev:
                assert j not in entry, "a job was committed twice"
                entry[j] = sh
            prev = j
        # the greedy variant latches its reservation at the commit (spec §2.6): it must be the
        # oracle's; EASY recomputes it, so only the committed jobs are compared there
        if b == "rlscheduler":
            assert entry == res.entry_shadow, (p, c, b, _describe(tr), entry, res.entry_shadow)
        else:
            assert entry.keys() == res.entry_shadow.keys(), (p, c, b, _describe(tr))
        if tr.style in checked:
            for j, sh in res.entry_shadow.items():
                assert start[row][j] <= sh, (j, p, c, b, _describe(tr))
                if tr.style == "exact":
                    assert start[row][j] == sh, (j, p, c, b, _describe(tr))
                checked[tr.style] += 1
    assert checked["exact"] > 100 and checked["over"] > 100, checked


# ----------------------------------------------------------------------------------------------
# 4. Decision-level API driven by random choices
# ----------------------------------------------------------------------------------------------
def _reset_rl(submit, run, req, procs, nodes, n_jobs, num_nodes):
    seq = E.Sequence(
        submit=submit,
        run=run,
        req=req,
        procs=procs,
        nodes=nodes,
        n_jobs=n_jobs,
        num_nodes=num_nodes,
    )
    # RL episodes: backfill scan order (submit, index) in compat mode -> static rank = index
    return E.reset(seq, jnp.arange(submit.shape[0], dtype=jnp.int32), QCAP, RCAP)


def _schedule(submit, run, req, procs, nodes, n_jobs, num_nodes, backfill, compat, st, slot):
    seq = E.Sequence(
        submit=submit,
        run=run,
        req=req,
        procs=procs,
        nodes=nodes,
        n_jobs=n_jobs,
        num_nodes=num_nodes,
    )
    params = E.SimParams(policy=jnp.int32(0), backfill=backfill, compat=compat)
    return E.schedule(seq, params, st, slot)


RESET_BATCH = jax.jit(jax.vmap(_reset_rl))
SCHEDULE_BATCH = jax.jit(jax.vmap(_schedule))


def drive_random_choices(combos, seed):
    """combos: (Trace, compat, backfill).  Returns the final states and, per run, the list of
    (chosen job, set of waiting jobs) of every decision."""
    seq_args = build_args([(tr, "fcfs", c, b) for tr, c, b in combos])
    base = seq_args[: len(ARG_NAMES)]
    bf, compat = seq_args[-2], seq_args[-1]
    st = RESET_BATCH(*base)
    rng = np.random.default_rng(seed)
    log = [[] for _ in combos]
    for _ in range(2 * LMAX + 2):
        q_job, done, at = (
            np.asarray(x) for x in (st.queue_job, st.done, jax.vmap(E.at_decision)(st))
        )
        if done.all():
            break
        slots = np.zeros(len(combos), np.int32)
        for r in np.nonzero(~done)[0]:
            assert at[r], "schedule() returned a state that is neither done nor a decision"
            valid = np.nonzero(q_job[r] >= 0)[0]
            slots[r] = rng.choice(valid)
            log[r].append((int(q_job[r][slots[r]]), frozenset(q_job[r][valid].tolist())))
        st = SCHEDULE_BATCH(*base, bf, compat, st, slots)
    return to_numpy(st), log


def test_decision_api_random_choices_equal_oracle():
    traces = random_traces(7, 24)
    combos = [(tr, c, b) for tr in traces for c, b in MODES]
    final, log = drive_random_choices(combos, seed=99)
    assert final.done.all() and not final.stuck.any() and (np.asarray(final.overflow) == 0).all()
    n_dec = 0
    for r, (tr, c, b) in enumerate(combos):
        picks = iter(log[r])

        def choose(view, picks=picks):
            j, queue = next(picks)
            assert set(view.queue) == queue, ("different waiting jobs at a decision", view.t)
            return j

        starts = O.simulate_with_choices(
            tr.submit,
            tr.run,
            tr.req,
            tr.procs,
            num_nodes=tr.num_nodes,
            procs_per_node=tr.ppn,
            choose=choose,
            backfill=b,
            compat=c,
        )
        assert next(picks, None) is None, "the engine took more decisions than the oracle"
        assert len(log[r]) == int(final.decisions[r])
        assert final.start[r][: tr.n].tolist() == starts, (c, b, _describe(tr), log[r])
        check_schedule(tr, final.start[r])
        n_dec += len(log[r])
    # random choices differ from any heuristic: non-trivial decisions were made
    assert n_dec > 1000
    assert sum(len(q) > 1 for lg in log for _, q in lg) > 300


# ----------------------------------------------------------------------------------------------
# 5. jit == no-jit, vmap == one at a time
# ----------------------------------------------------------------------------------------------
# six jobs with equal submit times, an under-estimated job (r > q) and release ties
TINY = trace_from_jobs(
    [(0, 10, 10, 2), (0, 4, 8, 1), (1, 6, 3, 2), (1, 2, 2, 1), (1, 10, 20, 3), (4, 1, 5, 1)],
    num_nodes=3,
)


def assert_trees_equal(a, b, what):
    la, ta = jax.tree_util.tree_flatten(to_numpy(a))
    lb, tb = jax.tree_util.tree_flatten(to_numpy(b))
    assert ta == tb
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(x, y, err_msg=what)


def test_jit_equals_no_jit():
    """One episode op by op (``jax.disable_jit``; ~1 s per episode, ~5 s for the first, which
    compiles every primitive once): reset, heuristic_choice and the decision-level schedule()
    in compat mode with greedy backfilling and SJF; the final state must equal the jitted
    run_heuristic's, field by field (choices only matter at decisions, so driving schedule()
    with the heuristic's choice is the same sequence of micro-steps)."""
    args = [jnp.asarray(a) for a in one_args(TINY, "sjf", True, "rlscheduler")]
    submit, run, req, procs, nodes, n_jobs, num_nodes, log2n, prank, policy, backfill, compat = args
    with jax.disable_jit():
        seq = E.Sequence(
            submit=submit,
            run=run,
            req=req,
            procs=procs,
            nodes=nodes,
            n_jobs=n_jobs,
            num_nodes=num_nodes,
            log2n=log2n,
        )
        params = E.SimParams(policy=policy, backfill=backfill, compat=compat)
        st = E.reset(seq, prank, QCAP, RCAP)
        decisions = 0
        while bool(E.at_decision(st)):
            st = E.schedule(seq, params, st, E.heuristic_choice(seq, params, st))
            decisions += 1
    assert bool(st.done) and decisions == int(st.decisions) >= 4
    assert_trees_equal(RUN_ONE(*one_args(TINY, "sjf", True, "rlscheduler")), st, "no-jit")
    expect = TINY.oracle(policy="sjf", backfill="rlscheduler", compat=True)
    assert np.asarray(st.start)[: TINY.n].tolist() == expect.starts
    assert any(expect.backfilled)  # the instance does backfill


def test_vmap_equals_one_at_a_time(random_batch):
    combos = random_batch["combos"]
    rng = np.random.default_rng(5)
    picks = rng.choice(len(combos), size=12, replace=False)
    for i in picks:
        single = RUN_ONE(*one_args(*combos[i]))
        batched = jax.tree_util.tree_map(lambda x: x[i], random_batch["final"])
        assert_trees_equal(single, batched, str(combos[i][1:]))


# ----------------------------------------------------------------------------------------------
# 6. Hand-computed schedules
# ----------------------------------------------------------------------------------------------
def engine_starts(jobs, N, policy, compat, backfill, ppn=1.0) -> list:
    tr = trace_from_jobs(jobs, N, ppn)
    st = RUN_ONE(*one_args(tr, policy, compat, backfill))
    assert bool(st.done) and not bool(st.stuck)
    start = np.asarray(st.start)
    assert (start[tr.n :] == -1).all()
    return start[: tr.n].tolist()


def check_hand(jobs, N, policy, expected: dict, ppn=1.0):
    """expected: {(compat, backfill): start times}; the oracle must agree with the hand values
    too (guards the hand computation itself)."""
    for (c, b), want in expected.items():
        assert engine_starts(jobs, N, policy, c, b, ppn) == want, ("engine", policy, c, b)
        s, r, q, n = (list(x) for x in zip(*jobs))
        assert (
            O.simulate(
                s, r, q, n, num_nodes=N, procs_per_node=ppn, policy=policy, backfill=b, compat=c
            )
            == want
        ), ("oracle", policy, c, b)


def test_hand_no_backfill_committed_job_blocks():
    # N = 3, jobs (submit, run, req, procs).  t=0: job0 takes all 3 nodes.  The queue is empty,
    # so the next event is job1's arrival (also submitted at 0): it is alone in the queue, is
    # committed and waits (needs 2).  job2 (q=2) and job3 (q=1) arrive at t=1 meanwhile.
    # t=10: job0 is released -> job1 starts at 10 (1 node left).  SJF then sees {job2, job3}:
    # job3 (shorter) starts at 10; job2 is committed and starts at job3's end, 11.
    # FCFS: job2 starts at 10 and job3 waits for job2's end at 12.
    jobs = [(0, 10, 10, 3), (0, 6, 6, 2), (1, 2, 2, 1), (1, 1, 1, 1)]
    for c in (True, False):
        check_hand(jobs, 3, "sjf", {(c, "none"): [0, 10, 11, 10]})
        check_hand(jobs, 3, "fcfs", {(c, "none"): [0, 10, 10, 12]})


def test_hand_greedy_strict_vs_easy_nonstrict():
    # N = 4, FCFS.  job0 (2 nodes) really ends at 5 but requested 12.  job1 (3 nodes) is
    # committed at t=1 (2 free): the reservation uses the request: 2 + 2 = 4 >= 3 at 12 ->
    # shadow 12 (extra 4 - 3 = 1).
    #   job2 (s=2, q=10): would end by its request at 12 == shadow.
    #   job3 (s=3, q=8): would end at 11 < shadow.
    # greedy (rlscheduler): job2 fails 12 < 12 (strict); job3 is backfilled at 3 (1 free).
    #   t=5 job0 ends -> 3 free -> job1 starts at 5 (0 free); job2 is committed, waits for
    #   job3's actual end 3 + 3 = 6.  -> [0, 5, 6, 3]
    # EASY (<=): job2 is backfilled at 2, job3 at 3 (reservation still 12 with job2's 1 node
    #   also due at 12).  t=5: job0 and job2 (2 + 3) both end; job1 starts at 5. -> [0, 5, 2, 3]
    # none: job1 at 5 (1 free), job2 at 5, job3 waits for job2's end 8. -> [0, 5, 5, 8]
    jobs = [(0, 5, 12, 2), (1, 10, 10, 3), (2, 3, 10, 1), (3, 3, 8, 1)]
    check_hand(
        jobs,
        4,
        "fcfs",
        {
            (True, "none"): [0, 5, 5, 8],
            (False, "none"): [0, 5, 5, 8],
            (True, "rlscheduler"): [0, 5, 6, 3],
            (False, "rlscheduler"): [0, 5, 6, 3],
            (False, "easy"): [0, 5, 2, 3],
        },
    )


def test_hand_easy_extra_nodes_rule():
    # N = 6, FCFS.  job0 (4 nodes) runs 0..10, 2 free.  job1 (5 nodes) committed at t=1:
    # 2 + 4 = 6 >= 5 at 10 -> shadow 10, extra 6 - 5 = 1.
    # EASY:
    #   t=2 job2 (30 s, 1 node) ends long after 10 but fits in the extra node -> backfilled
    #       (1 free).
    #   t=3 reservation recomputed: 1 free + 4 at 10 = 5 -> shadow 10, extra 0 -> job3 (30 s)
    #       is NOT backfilled although a node is free.
    #   t=4 job4 (req 6) ends by its request at 10 <= 10 -> backfilled (0 free); it really
    #       ends at 9 (1 free): job3 still has extra 0 and 9 + 30 > 10 -> stays.
    #   t=10 job0 ends (5 free) -> job1 starts at 10; job3 is committed and waits for job1's
    #       end at 15.  -> [0, 10, 2, 15, 4]
    # greedy: no job ends strictly before 10 by its request (4 + 6 = 10) and there is no
    #   extra-nodes rule: job1 at 10 (1 free), job2 at 10, job3 committed -> 15, then job4
    #   at 15.  Without backfilling: the same.
    jobs = [(0, 10, 10, 4), (1, 5, 5, 5), (2, 30, 30, 1), (3, 30, 30, 1), (4, 5, 6, 1)]
    check_hand(
        jobs,
        6,
        "fcfs",
        {
            (False, "easy"): [0, 10, 2, 15, 4],
            (True, "rlscheduler"): [0, 10, 10, 15, 15],
            (False, "rlscheduler"): [0, 10, 10, 15, 15],
            (True, "none"): [0, 10, 10, 15, 15],
            (False, "none"): [0, 10, 10, 15, 15],
        },
    )


def test_hand_compat_release_tie_order():
    # N = 5, FCFS, greedy backfilling.  job0 (1 node, r 10, q 30) and job1 (3 nodes, r 10,
    # q 20) start at 0 and both really end at 10 (1 free).  job2 (5 nodes) is committed at 1;
    # its shadow: by estimate job1 (20) then job0 (30): 1 + 3 < 5, + 1 = 5 -> 30.
    # job3 (4 nodes, 4 s) arrives at 2 (2 + 4 < 30, but only 1 node free).
    # compat: the reservation sort left the running list in estimate order [job1, job0]; at
    #   t=10 the stable sort by actual end keeps it, so job1 is released FIRST (4 free) and the
    #   pass between the two releases backfills job3 (10 + 4 < 30).  job0 is then released,
    #   job2 waits for job3's end at 14.  -> [0, 0, 14, 10]
    # correct mode: equal ends are released in start order: job0 first (2 free, job3 does not
    #   fit), then job1 -> job2 starts at 10, job3 at job2's end 15.  -> [0, 0, 10, 15]
    jobs = [(0, 10, 30, 1), (0, 10, 20, 3), (1, 5, 5, 5), (2, 4, 4, 4)]
    check_hand(
        jobs,
        5,
        "fcfs",
        {
            (True, "rlscheduler"): [0, 0, 14, 10],
            (False, "rlscheduler"): [0, 0, 10, 15],
            (False, "easy"): [0, 0, 10, 15],
            (True, "none"): [0, 0, 10, 15],
        },
    )


def test_hand_compat_backfill_scan_order():
    # N = 4, SJF, greedy backfilling.  job0 (4 nodes) runs 0..10; job1 (3 nodes) is committed
    # at 1 (shadow 10).  job2 (q 5), job3 (q 4), job4 (q 2, 4 nodes) all arrive at t=2 while
    # nothing is free.  t=10: job1 starts (1 free); SJF commits job4 (needs 4): shadow = job1's
    # estimated end 30.  The pass at t=10 has one free node for job2 / job3 (both end before 30):
    # compat scans equal submit times in the heuristic's order (spec §2.8.2): job3 (q 4) first
    #   -> job3 at 10, job2 at job3's end 13.  -> [0, 10, 13, 10, 30]
    # correct mode scans (submit, index): job2 first -> job2 at 10, job3 at 13.
    # Without backfilling job4 takes the whole machine at 30 and the others follow at 36.
    jobs = [(0, 10, 10, 4), (1, 20, 20, 3), (2, 3, 5, 1), (2, 3, 4, 1), (2, 6, 2, 4)]
    check_hand(
        jobs,
        4,
        "sjf",
        {
            (True, "rlscheduler"): [0, 10, 13, 10, 30],
            (False, "rlscheduler"): [0, 10, 10, 13, 30],
            (False, "easy"): [0, 10, 10, 13, 30],
            (True, "none"): [0, 10, 36, 36, 30],
            (False, "none"): [0, 10, 36, 36, 30],
        },
    )


def test_hand_node_granularity():
    # 3 nodes x 2 processors.  job0 asks 3 processors -> 2 whole nodes, job1 2 processors ->
    # 1 node: the machine is full although only 5 of 6 processors are requested, so job2
    # (1 processor) waits for t=10.
    jobs = [(0, 10, 10, 3), (0, 10, 10, 2), (1, 5, 5, 1)]
    check_hand(jobs, 3, "fcfs", {(c, b): [0, 0, 10] for c, b in MODES}, ppn=2.0)


# ----------------------------------------------------------------------------------------------
# Priority-key ties: the engine must order jobs exactly as the reference's float64 keys do
# ----------------------------------------------------------------------------------------------
# Spec §4 / §2.8.1: the pick is the smallest (key, trace index), keys in float64 as the
# reference computes them (numpy/libm: log10, log2, pow).  Mathematically equal keys that come
# out bit-identical there (e.g. F1's log10(3)*9 == log10(27)*3) are ties broken by the index; the
# engine must not break them by 1-ulp differences of its own transcendental functions.
KEY_Q = (
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    12,
    16,
    20,
    25,
    26,
    27,
    30,
    31,
    32,
    40,
    50,
    60,
    64,
    100,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    43200,
)
KEY_N = tuple(range(1, 65))
KEY_S = (1, 7, 1000, 123457)
DYNAMIC_KEY = jax.jit(H.dynamic_key)


def test_static_key_order_matches_oracle():
    """For every policy and jobs sharing a submit time (common in real traces), the engine's
    static rank (its decision order in both modes, and in compat mode also the backfill order)
    equals the order of (oracle key, index)."""
    qn = [(q, n) for q in KEY_Q for n in KEY_N]
    q = np.asarray([a for a, _ in qn], np.int64)
    n = np.asarray([b for _, b in qn], np.int64)
    bad = {}
    for policy in POLICIES:
        for s0 in KEY_S:
            s = np.full(len(qn), s0, np.int64)
            rank = H.host_rank(policy, s, q, n)
            keys = O.priority_keys(policy, s, q, n)
            want = sorted(range(len(qn)), key=lambda i: (keys[i], i))
            got = np.argsort(rank, kind="stable").tolist()
            if got != want:
                k = next(i for i in range(len(qn)) if got[i] != want[i])
                bad.setdefault(policy, (s0, [qn[want[k]], qn[got[k]]]))
    assert not bad, (
        "static priority order differs from the reference keys (policy: submit "
        f"time, [(q, n) the oracle ranks first, (q, n) the engine ranks first]): {bad}"
    )


def test_dynamic_key_order_matches_oracle():
    """Correct mode, WFP3/UNICEP with the real waiting time: at a decision the engine picks the
    smallest (key, index); the order must be the oracle's for every set of waiting jobs."""
    W, Q, N = np.meshgrid(
        np.arange(0, 61), np.asarray(KEY_Q[:24]), np.asarray(KEY_N[:32]), indexing="ij"
    )
    W, Q, N = W.ravel(), Q.ravel(), N.ravel()
    t = 100000
    bad = {}
    for policy, f in (("wfp3", O._wfp3_dynamic), ("unicep", O._unicep_dynamic)):
        kx = np.asarray(
            DYNAMIC_KEY(np.int32(H.policy_code(policy)), np.int64(t), t - W, Q, N, H.host_log2n(N))
        )
        kp = np.asarray([f(int(w), int(q), int(n)) for w, q, n in zip(W, Q, N)])
        idx = np.arange(len(W))
        want, got = np.lexsort((idx, kp)), np.lexsort((idx, kx))
        if (want != got).any():
            k = int(np.argmax(want != got))
            bad[policy] = [(int(W[i]), int(Q[i]), int(N[i])) for i in (want[k], got[k])]
    assert not bad, (
        "dynamic priority order differs from the oracle ((w, q, n) the oracle "
        f"picks first, (w, q, n) the engine picks first): {bad}"
    )


@pytest.mark.parametrize(
    "policy, modes, jobs, N, expected",
    [
        # F1 (both modes: static key).  All four jobs are submitted at t=1, so 870*log10(s) = 0 and
        # the keys are log10(q)*n: job2 log10(3)*9, job3 log10(27)*3 -- equal (27 = 3^3), also in
        # float64 with numpy/libm (4.294091292476962), so the tie goes to job2.  Schedule (N = 9):
        # job0 runs 1..11; job1 (alone in the queue) is committed and starts at 11 (0 free);
        # the decision at 11 picks job2 (tie -> lower index): it waits for job1's end, starts at 21
        # and runs 3 s; job3 follows at 24.  Picking job3 first would give job3 21, job2 25.
        (
            "f1",
            MODES,
            [(1, 10, 10, 9), (1, 10, 10, 9), (1, 3, 3, 9), (1, 4, 27, 3)],
            9,
            [1, 11, 21, 24],
        ),
        # WFP3 with the reference's static key ((1 + s)/q)^3 * n at s=1000: job2 (q 9, n 27) and
        # job3 (q 3, n 1) tie: (1001/9)^3 * 27 == (1001/3)^3 (bit-identical with math.pow).  Same
        # blocking pattern (N = 27): job2 at 1020, job3 at 1023.
        (
            "wfp3",
            ((True, "none"), (True, "rlscheduler")),
            [(1000, 10, 10, 27), (1000, 10, 10, 27), (1000, 3, 9, 27), (1000, 4, 3, 1)],
            27,
            [1000, 1010, 1020, 1023],
        ),
        # UNICEP, correct mode (w = t - s at the decision, t = 10): job2 (s 1, q 3) and job3 (s 7,
        # q 1), both 15 processors: -(9 + 1e-15)/(log2(15 + 1e-15)*3) == -(3 + 1e-15)/(log2(..)*1)
        # in float64 with libm's log2 -> tie -> job2 (committed at 10, starts at job1's end 20, runs
        # 3 s), job3 at 23.  (N = 15; job0 runs 0..10, job1 committed at 1 starts at 10.)
        (
            "unicep",
            ((False, "none"), (False, "rlscheduler"), (False, "easy")),
            [(0, 10, 10, 15), (1, 10, 10, 15), (1, 3, 3, 15), (7, 1, 1, 15)],
            15,
            [0, 10, 20, 23],
        ),
    ],
    ids=["f1-both-modes", "wfp3-compat", "unicep-correct-mode"],
)
def test_hand_priority_ties_go_to_the_lower_index(policy, modes, jobs, N, expected):
    check_hand(jobs, N, policy, {m: expected for m in modes})


# ----------------------------------------------------------------------------------------------
# 8. No recompilation
# ----------------------------------------------------------------------------------------------
def test_no_recompilation_same_shapes(random_batch, count_compilations):
    """A second call with the same shapes but other values (other traces, machine sizes,
    sequence lengths, policies and modes in every batch slot) must reuse the compiled code."""
    before = TRACE_COUNTS["batch"]
    assert before >= 1  # compiled by the fixture
    perm = np.random.default_rng(8).permutation(len(random_batch["combos"]))
    args = [a[perm] for a in random_batch["args"]]
    with count_compilations() as c:
        again = to_numpy(RUN_BATCH(*args))
    assert TRACE_COUNTS["batch"] == before, "RUN_BATCH was traced again for the same shapes"
    assert c.n == 0, c.names
    np.testing.assert_array_equal(again.start, random_batch["final"].start[perm])
    # the single-run function: calls with other traces / policies / modes, one trace
    tr = random_traces(3, 3)
    RUN_ONE(*one_args(tr[0], "saf", False, "easy"))
    one0 = TRACE_COUNTS["one"]
    for t, (c, b) in zip(tr[1:] + [TINY], MODES):
        st = RUN_ONE(*one_args(t, "lcfs", c, b))
        assert (
            np.asarray(st.start)[: t.n].tolist()
            == t.oracle(policy="lcfs", compat=c, backfill=b).starts
        )
    assert TRACE_COUNTS["one"] == one0, "RUN_ONE was traced again for the same shapes"
