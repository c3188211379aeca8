"""DRAS workloads (jaxsched.workload.dras, spec dras.md §7.4, §9): split boundaries, the sampled
jobsets' Poisson arrivals, weekly slices, the synthetic generator's statistics against the
SDSC-SP2 training months it was fitted on, and the curriculum's order and determinism."""

from __future__ import annotations

import numpy as np
import pytest
from shared_data import SHARED

from jaxsched.errors import ConfigError
from jaxsched.workload import dras, read_swf

DAY = dras.DAY


@pytest.fixture(scope="module")
def sdsc():
    trace = read_swf(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    return trace, trace.jobs(rules="default")


@pytest.fixture(scope="module")
def train(sdsc):
    return dras.split_trace(sdsc[1])[0]


def _toy(submit):
    from jaxsched.workload.jobs import Jobs

    n = len(submit)
    a = lambda v: np.full(n, v, np.int64)  # noqa: E731
    arrays = {k: a(-1) for k in Jobs.ARRAYS}
    arrays.update(submit=np.asarray(submit, np.int64), run=a(50), req_time=a(100), procs=a(2))
    return Jobs(
        **arrays, num_procs=8, num_nodes=8, procs_per_node=1.0, max_exec_time=0, max_req_mem=0,
        max_user=0, max_group=0, max_executable=0, fixes={}, rules="default",
    )  # fmt: skip


def test_split_boundaries_by_submit_time():
    days = [0, 10, 59, 60, 89, 90, 200]
    tr, va, te = dras.split_trace(_toy([1000 + d * DAY for d in days]))
    assert tr.n_jobs == 3 and va.n_jobs == 2 and te.n_jobs == 2
    np.testing.assert_array_equal(va.submit, [0, 29 * DAY])  # from the validation month's start
    np.testing.assert_array_equal(te.submit, [0, 110 * DAY])
    with pytest.raises(ConfigError):
        dras.split_trace(_toy([]))


def test_weekly_slices():
    weeks = dras.weekly_jobsets(_toy([0, DAY, 8 * DAY, 30 * DAY + 5]))
    assert [w.n_jobs for w in weeks] == [2, 1, 1]  # empty weeks skipped
    np.testing.assert_array_equal(weeks[2].submit, [2 * DAY + 5])


def test_sampled_jobset_poisson_mean(train):
    gap = (train.submit[-1] - train.submit[0]) / (train.n_jobs - 1)
    s = dras.sampled_jobset(train, 20_000, seed=3)
    assert s.submit[0] == 0 and np.all(np.diff(s.submit) >= 0)
    gaps = np.diff(s.submit)
    assert abs(gaps.mean() / gap - 1) < 0.03
    assert abs(gaps.std() / gaps.mean() - 1) < 0.05  # exponential: CV 1
    pairs = set(zip(train.procs.tolist(), train.req_time.tolist(), strict=True))
    assert set(zip(s.procs.tolist(), s.req_time.tolist(), strict=True)) <= pairs
    np.testing.assert_array_equal(dras.sampled_jobset(train, 20_000, 3).submit, s.submit)


def test_synthetic_statistics_match_fitted_trace(sdsc, train):
    epoch = dras.trace_epoch(sdsc[0])
    assert epoch == 893466664 - 7 * 3600  # PDT on 24 April 1998
    model = dras.fit_generator(train, epoch)
    syn = dras.synthetic_jobset(model, 40_000, seed=1, template=train)
    d0, h0 = dras.weekday_hour(train.submit + epoch)
    d1, h1 = dras.weekday_hour(syn.submit + dras.MONDAY_EPOCH)
    hist = lambda x, k: np.bincount(x, minlength=k) / len(x)  # noqa: E731
    assert np.abs(hist(d0, 7) - hist(d1, 7)).sum() < 0.05
    assert np.abs(hist(h0, 24) - hist(h1, 24)).sum() < 0.06
    assert hist(h0, 24).max() > 2 * hist(h0, 24).min()  # a real daily pattern was matched
    sizes = np.unique(train.procs)
    sz = lambda j: np.array([np.mean(j.procs == v) for v in sizes])  # noqa: E731
    assert np.abs(sz(train) - sz(syn)).sum() < 0.03
    a0, a1 = dras.accuracy(train), dras.accuracy(syn)
    assert abs(a0.mean() - a1.mean()) < 0.01 and abs(np.median(a0) - np.median(a1)) < 0.03
    assert np.all(syn.run <= syn.req_time) and syn.run.min() >= 1
    assert abs(len(syn.submit) / (syn.submit[-1] * model.rate) - 1) < 0.05


def test_curriculum_order_and_determinism(train):
    cfg = dras.CurriculumConfig(n_sampled=1, n_real=2, n_synthetic=1, jobs_per_set=300, seed=5)
    assert dras.curriculum_kinds(cfg) == ["sampled", "real", "real", "synthetic"]
    assert dras.curriculum_kinds().count("synthetic") == 82
    weeks = dras.weekly_jobsets(train)
    kind, real = dras.curriculum_jobset(train, 2, cfg)
    assert kind == "real" and real.n_jobs == weeks[1].n_jobs
    k, a = dras.curriculum_jobset(train, 3, cfg)
    _, b = dras.curriculum_jobset(train, 3, cfg)
    assert k == "synthetic" and a.n_jobs == 300
    np.testing.assert_array_equal(a.submit, b.submit)
    np.testing.assert_array_equal(a.run, b.run)
    with pytest.raises(ConfigError):
        dras.curriculum_jobset(train, 4, cfg)
    with pytest.raises(ConfigError):
        dras.sampled_jobset(train, 0, 1)
    # default jobset size: the mean weekly job count
    _, s0 = dras.curriculum_jobset(train, 0, dras.CurriculumConfig())
    assert s0.n_jobs == round(np.mean([w.n_jobs for w in weeks]))
    flags = dras.priority_from_size(train, 0.2)
    np.testing.assert_array_equal(flags, train.procs > 0.2 * 128)
