"""The named train / validation / test splits (issue 47): ranges, fractions, DRAS's months,
the generator seed sets, run.json's jobs_seen and the refusal of a model that saw the test."""

from __future__ import annotations

import numpy as np
import pytest

from jaxsched.errors import ConfigError
from jaxsched.workload import splits as S


@pytest.mark.parametrize("n", [3, 10, 73_496, 10_000, 7])
@pytest.mark.parametrize("fractions", [S.DEFAULT_FRACTIONS, (0.6, 0.0, 0.4), "0.7,0.1,0.2"])
def test_ranges_are_disjoint_consecutive_and_cover_the_trace(n, fractions):
    sp = S.chronological_split(n, fractions)
    parts = [sp.range(name) for name in S.SPLIT_NAMES]
    assert parts[0][0] == 0 and parts[-1][1] == n
    for (_, a1), (b0, _) in zip(parts, parts[1:]):
        assert a1 == b0  # consecutive: disjoint and no gap
    assert all(a <= b for a, b in parts)
    assert sp.train[1] - sp.train[0] >= 1 and sp.test[1] - sp.test[0] >= 1
    covered = np.zeros(n, int)
    for a, b in parts:
        covered[a:b] += 1
    assert (covered == 1).all()
    assert sp == S.chronological_split(n, fractions)  # deterministic


def test_default_split_of_ten_thousand_jobs():
    sp = S.chronological_split(10_000)
    assert (sp.train, sp.validation, sp.test) == ((0, 5000), (5000, 6000), (6000, 10_000))
    assert sp.to_json() == {
        "basis": "fractions",
        "fractions": [0.5, 0.1, 0.4],
        "n_jobs": 10_000,
        "train": [0, 5000],
        "validation": [5000, 6000],
        "test": [6000, 10_000],
    }


@pytest.mark.parametrize(
    "bad, words",
    [
        ("0.5,0.5", "need three"),
        ("0.5,0.1,0.3", "sum to 0.9"),
        ("0,0.5,0.5", "must be > 0"),
        ("0.5,-0.1,0.6", "validation >= 0"),
        ("a,b,c", "not three numbers"),
        ("0.5,0.1,nan", "must be > 0"),
    ],
)
def test_bad_fractions_give_one_line_errors(bad, words):
    with pytest.raises(ConfigError, match="--split-fractions") as e:
        S.chronological_split(100, bad)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_too_short_trace_is_refused():
    with pytest.raises(ConfigError, match="too short"):
        S.chronological_split(1)
    with pytest.raises(ConfigError, match="unknown split 'tests'"):
        S.chronological_split(100).range("tests")


def test_months_split_matches_dras_split_trace():
    from jaxsched.workload.dras import DAY, MONTH, split_trace
    from jaxsched.workload.jobs import Jobs

    rng = np.random.default_rng(0)
    submit = np.sort(rng.integers(0, 5 * MONTH, 400)) + 1_000
    n = submit.size
    arrays = {k: np.full(n, -1, np.int64) for k in Jobs.ARRAYS}
    arrays.update(submit=submit, run=np.full(n, 50), req_time=np.full(n, 100), procs=np.full(n, 2))
    jobs = Jobs(
        **arrays, num_procs=8, num_nodes=8, procs_per_node=1.0, max_exec_time=0, max_req_mem=0,
        max_user=0, max_group=0, max_executable=0, fixes={}, rules="default",
    )  # fmt: skip
    sizes = [p.n_jobs for p in split_trace(jobs, 2 * MONTH, MONTH)]
    sp = S.months_split(submit, 2, 1)
    assert [b - a for a, b in (sp.train, sp.validation, sp.test)] == sizes
    assert sp.basis == "months" and sp.months == (2, 1)
    assert sp.to_json()["months"] == [2, 1]
    assert (
        S.months_split(submit, 1, 0, month=40 * DAY).validation[0]
        == (S.months_split(submit, 1, 0, month=40 * DAY).validation[1])
    )
    with pytest.raises(ConfigError, match="test period is empty"):
        S.months_split(submit, 5, 1)
    with pytest.raises(ConfigError, match="not in order"):
        S.months_split(submit[::-1], 2, 1)


def test_starts_lie_inside_their_range():
    starts = S.starts_in_range((600, 1000), 100, 500, seed=3)
    assert starts.min() >= 600 and starts.max() + 100 <= 1000
    assert (starts == S.starts_in_range((600, 1000), 100, 500, seed=3)).all()
    assert starts.max() == 900 and starts.min() == 600  # both ends reachable
    with pytest.raises(ConfigError, match=r"jobs \[600, 700\) hold 100 jobs, fewer than the 256"):
        S.starts_in_range((600, 700), 256, 1)


def test_generator_seed_sets_are_named_and_disjoint():
    for name, sp in S.GENERATOR_SPLITS.items():
        assert sp.generator == name
        sets = [set(sp.seeds(p)) if len(sp.seeds(p)) < 20_000 else None for p in S.SPLIT_NAMES]
        for p in S.SPLIT_NAMES:
            assert len(sp.seeds(p)) >= 1
        small = [s for s in sets if s is not None]
        assert sum(map(len, small)) == len(set().union(*small))
    assert 20261128 in S.seed_split("lublin-1").test  # RESULTS §14.14's fresh trace
    assert 314159 in S.seed_split("deeprm").validation  # A2C's evaluation jobsets
    with pytest.raises(ConfigError, match="overlap"):
        S.SeedSplit("x", range(0, 10), range(5, 6), range(20, 21), "")
    with pytest.raises(ConfigError, match="no seed split for generator 'nope'"):
        S.seed_split("nope")


def test_run_json_fields_and_jobs_seen():
    sp = S.chronological_split(1000)
    rec = S.run_json_fields(sp, "train", (0, 600))
    assert rec["split"]["name"] == "train" and rec["split"]["train"] == [0, 500]
    assert rec["jobs_seen"] == [0, 600]
    assert S.jobs_seen_of(rec) == (0, 600)
    assert S.jobs_seen_of({"job_slice": 10000}) == (0, 10000)  # the shipped paper models
    assert S.jobs_seen_of({"job_slice": 0}) == (0, None)  # the whole trace
    assert S.jobs_seen_of({"system": "a2c", "trace": ""}) is None  # unknown
    # SchedInspector validated on the whole trace; a run without job_slice drew from all of it
    assert S.jobs_seen_of({"system": "schedinspector", "job_slice": 10000}) == (0, None)
    assert S.jobs_seen_of({"system": "dras", "trace": "t.swf"}) == (0, None)


def test_check_unseen_refuses_overlap_in_one_line():
    test = (600, 1000)
    trace = "traces/t.swf"
    with pytest.raises(ConfigError, match="end of the trace"):  # lublin_256 = lublin-1
        S.check_unseen({"trace": "lublin_256.swf.gz", "job_slice": 0}, "m", "x/lublin-1.swf",
                       test, False)  # fmt: skip
    assert (
        S.check_unseen({"trace": "t.swf", "jobs_seen": [0, 600]}, "m", trace, test, False) is False
    )
    assert S.check_unseen({"trace": "x.swf", "job_slice": 0}, "m", trace, test, False) is False
    for run in (
        {"trace": "a/t.swf.gz", "jobs_seen": [0, 601]},
        {"trace": "t.swf", "job_slice": 0},
        {"system": "a2c"},
    ):
        with pytest.raises(ConfigError, match="--model m: .*--allow-seen") as e:
            S.check_unseen(run, "m", trace, test, False)
        assert "\n" not in str(e.value)
        assert S.check_unseen(run, "m", trace, test, True) is True
    with pytest.raises(ConfigError, match=r"jobs \[0, 10000\), which overlap .*\[6000, 10000\)"):
        S.check_unseen({"trace": "t.swf", "job_slice": 10000}, "m", trace, (6000, 10000), False)


def test_dras_load_split_is_the_months_split():
    from shared_data import SHARED

    from jaxsched.systems.dras.config import load_split

    s = load_split(str(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"))
    sp = s.split
    assert sp.basis == "months" and sp.months == (2, 1)
    sizes = [b - a for a, b in (sp.train, sp.validation, sp.test)]
    assert sizes == [s.train.n_jobs, s.val.n_jobs, s.test.n_jobs] == [5178, 2751, 46070]
