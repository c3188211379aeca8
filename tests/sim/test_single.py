"""One sequence on the host engine or the compiled one (jaxsched/sim/single.py, issue 60 items
3-4): the host's start times equal the oracle's on every policy x backfilling x mode it takes
(host-side, in the suite), and the compiled engine's: in the suite on the tiny trace with
every static policy and backfilling mode (the one program tests/cli/test_cli_simulate.py
compiles, whose two modes run on both engines), the whole grid in the extended tier."""

from __future__ import annotations

import numpy as np
import pytest
from shared_data import DATA, REPO

import jaxsched.sim  # noqa: F401  (x64)
from jaxsched.errors import ConfigError
from jaxsched.policies import heuristics as H
from jaxsched.sim import oracle as O
from jaxsched.sim import single
from jaxsched.sim.oracle_easypp import simulate_easypp
from jaxsched.workload import read_swf

TUNED = "tuned:tuned-sdsc-easy"
#: (compat, backfilling modes) as `jaxsched simulate` takes them
MODES = [
    (False, ["none", "rlscheduler", "easy", "rlscheduler-sjbf", "easy-sjbf"]),
    (True, ["none", "rlscheduler", "rlscheduler-sjbf"]),
]


@pytest.fixture(scope="module")
def tiny():
    return read_swf(DATA / "tiny.swf").jobs("default")


@pytest.fixture(scope="module")
def lublin():
    """Jobs 2000..2199 of Lublin-1: queues of up to 24 jobs; FCFS + EASY backfills 170 of them."""
    jobs = read_swf(REPO / "traces" / "lublin-1.swf").jobs("rlscheduler")
    return jobs, 2000, 200


def _oracle(jobs, start, length, policy, backfill, compat):
    w = slice(start, start + length)
    return O.simulate(
        jobs.submit[w], jobs.run[w], jobs.req_time[w], jobs.procs[w],
        num_nodes=jobs.num_nodes, procs_per_node=jobs.procs_per_node,
        policy=policy, backfill=backfill, compat=compat,
    )  # fmt: skip


@pytest.mark.parametrize("compat, backfills", MODES)
def test_host_equals_the_oracle_on_every_mode(tiny, lublin, compat, backfills):
    """Every oracle policy under every mode: the host (fed the engine's ranks; heaps without
    backfilling, EASY's passes skipped where no node is free) = the oracle (its own Python
    keys and lists), with and without a progress callback."""
    jobs, start, length = lublin
    for b in backfills:
        for p in O.POLICIES:
            want = _oracle(jobs, start, length, p, b, compat)
            got, engine = single.schedule(jobs, start, length, p, b, compat=compat)
            assert engine == "host"
            assert got.tolist() == want, (p, b, compat)
            got = single.schedule(tiny, 0, tiny.n_jobs, p, b, compat=compat)[0]
            assert got.tolist() == _oracle(tiny, 0, tiny.n_jobs, p, b, compat), (p, b)
    for b in ("none", backfills[-1]):  # the heap path and the oracle's loop
        seen = []
        got = single.schedule(jobs, start, length, "sjf", b, compat=compat,
                              progress=lambda k, n: seen.append((k, n)))[0]  # fmt: skip
        assert got.tolist() == _oracle(jobs, start, length, "sjf", b, compat)
        assert seen[-1] == (length, length) and len(seen) > 100
        assert [k for k, _ in seen] == sorted(k for k, _ in seen)


def test_host_easypp_equals_the_oracle(tiny):
    for p in ("fcfs", "sjf", "f1"):
        want = simulate_easypp(
            tiny.submit, tiny.run, tiny.req_time, tiny.procs, tiny.user,
            num_nodes=tiny.num_nodes, procs_per_node=tiny.procs_per_node, policy=p,
        ).starts  # fmt: skip
        assert single.schedule(tiny, 0, tiny.n_jobs, p, "easy++")[0].tolist() == want


def test_auto_rule_and_refusals(tiny):
    names = single.check_names("SJF", "greedy", True)  # evaluate's aliases and case
    assert (names.policy, names.backfill) == ("sjf", "rlscheduler")
    for p in ("fcfs", "wfp3", "random", TUNED):
        for b in ("none", "easy", "easy-sjbf"):
            assert single.choose_engine("auto", single.check_names(p, b, False), False) == "host"
    assert single.check_names(TUNED, "easy++", False).policy == TUNED
    with pytest.raises(ConfigError, match="static main order"):  # as evaluate refuses it
        single.check_names("unicep", "easy++", False)
    with pytest.raises(ConfigError, match="not part of the reference"):
        single.check_names("fcfs", "easy++", True)
    with pytest.raises(ConfigError, match="not part of the reference"):
        single.check_names("fcfs", "easy-sjbf", True)
    with pytest.raises(ConfigError, match="unknown policy"):
        single.check_names("fcsf", "easy", False)
    with pytest.raises(ConfigError, match="unknown backfill"):
        single.check_names("fcfs", "eazy", False)
    with pytest.raises(ConfigError, match="user ids"):  # Lublin-1 has none
        jobs = read_swf(REPO / "traces" / "lublin-1.swf").jobs("rlscheduler")
        single.schedule(jobs, 0, 50, "fcfs", "easy++")


def test_host_equals_jax_on_tiny_with_backfilling(tiny):
    """Host = the compiled engine in chunks on the tiny trace, every static policy (random
    included) under every backfilling mode of both modes: one compiled program, the one
    tests/cli/test_cli_simulate.py compiles for this trace (policy, mode and compat are its
    arguments); WFP3/UNICEP's clock-dependent keys, no backfilling and tuned priorities are
    the extended grid's."""
    seen = []
    for compat, backfills in MODES:
        for b in backfills[1:]:
            for p in H.POLICIES:
                names = single.check_names(p, b, compat)
                if names.dynamic and not compat:
                    continue
                want = single.host_starts(tiny, 0, tiny.n_jobs, names, compat)
                got = single.jax_starts(tiny, 0, tiny.n_jobs, names, compat,
                                        progress=lambda k, n: seen.append(k))  # fmt: skip
                np.testing.assert_array_equal(got, want, err_msg=f"{p} {b} {compat}")
    assert seen and max(seen) == tiny.n_jobs


@pytest.mark.extended  # cheaper sibling: test_host_equals_the_oracle_on_every_mode (host side)
# and tests/cli/test_cli_simulate.py::test_swf_and_csv_schedules_equal_the_oracle (both engines)
@pytest.mark.parametrize("compat, backfills", MODES)
def test_host_equals_jax_on_the_whole_grid(tiny, lublin, compat, backfills):
    """Every policy of the engine (random and a tuned priority included) under every mode, on
    the host and in one compiled evaluate call per trace; EASY++ (static orders) as well."""
    from jaxsched.sim.evaluate import evaluate

    pols = [p for p in H.POLICIES if p != "random"] + [TUNED, "random"]
    for jobs, start, length in ((tiny, 0, tiny.n_jobs), lublin):
        res = evaluate(jobs, [start], length, pols, backfills, compat=compat, metrics=["bsld"])
        _check_grid(jobs, start, length, pols, backfills, compat, res)
    if not compat:  # EASY++: static main orders, a trace with user ids
        pols = [p for p in pols if p not in ("wfp3", "unicep")]
        res = evaluate(tiny, [0], tiny.n_jobs, pols, ["easy++"], compat=False, metrics=["bsld"])
        _check_grid(tiny, 0, tiny.n_jobs, pols, ["easy++"], False, res)


def _check_grid(jobs, start, length, pols, bfs, compat, res):
    for i, p in enumerate(pols):
        for j, b in enumerate(bfs):
            if p == "random" and j > 0:
                continue  # evaluate draws random's uniforms one row per mode
            got = single.schedule(jobs, start, length, p, b, compat=compat, engine="host")
            np.testing.assert_array_equal(got[0], res.start_times[0, i, j], err_msg=f"{p} {b}")


def test_host_easy_equals_the_oracle_on_sdsc_sp2():
    """The host's EASY shortcuts (passes skipped with no node free, only the jobs that fit
    scanned, the reservation from sorted requests clamped at the clock) on 3,000 jobs of a
    real log: long queues, a full machine, and 188 jobs running past their request."""
    from shared_data import SHARED

    jobs = read_swf(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz").jobs("rlscheduler")
    for p in ("fcfs", "sjf", "f1", "wfp3"):
        for b in ("easy", "easy-sjbf"):
            got = single.schedule(jobs, 0, 3000, p, b)[0]
            assert got.tolist() == _oracle(jobs, 0, 3000, p, b, False), (p, b)
