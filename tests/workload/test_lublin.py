"""Tests of the bit-exact Lublin–Feitelson generator (spec: shared/spec/lublin_model.md)."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import math
from pathlib import Path

import numpy as np
import pytest
from shared_data import REPO
from shared_data import shared_dir as _shared_dir

from jaxsched.workload import drand48 as D48
from jaxsched.workload import lublin as L


def _load_swf(path: Path) -> np.ndarray:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        rows = np.loadtxt(fh, comments=";", dtype=np.int64, ndmin=2)
    assert rows.shape[1] == 18
    return rows


@functools.cache
def _preset_jobs(name: str) -> L.LublinJobs:
    return L.generate(L.PRESETS[name])


SHARED_FILES = {"lublin-1": "lublin_256.swf.gz", "lublin-2": "lublin_256_new2.swf.gz"}

# --------------------------------------------------------------------------------------
# drand48
# --------------------------------------------------------------------------------------


def test_drand48_check_values():
    r = L.Drand48(1487089399)
    assert r.random() == 0.012150527750240059
    assert r.random() == 0.76314525687800483
    r = L.Drand48(1568124476)
    assert r.random() == 0.14664425894534716
    assert r.random() == 0.28659642426961796


def test_srand48_state_and_low_32_bits():
    r = L.Drand48(1487089399)
    assert r.state == (1487089399 << 16) | 0x330E
    a, b = L.Drand48(5), L.Drand48(5 + 2**32)
    assert [a.random() for _ in range(3)] == [b.random() for _ in range(3)]


@pytest.mark.parametrize("k", [1, 5, 23, 24, 639, 3000])
def test_vector_paths_equal_sequential_draws(k, monkeypatch):
    seq = L.Drand48(42)
    us = [seq.random() for _ in range(k)]
    ref_sum = 0.0
    for u in us:
        ref_sum += math.log(u)
    r = L.Drand48(42)
    assert r.uniforms(k).tolist() == us
    assert r.state == seq.state
    assert L.Drand48(42).sum_log(k) == ref_sum
    # the math.log fallback path (used where numpy's log differs from libm's)
    monkeypatch.setattr(D48, "_np_log_ok", False)  # drand48 lives in its own module
    r = L.Drand48(42)
    assert r.sum_log(k) == ref_sum
    assert r.state == seq.state


# --------------------------------------------------------------------------------------
# Incomplete gamma and daily weights
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a,x", [(1.0, 0.3), (1.0, 7.0), (3.0, 0.5), (3.0, 2.0), (3.0, 9.5), (8.0, 20.0)]
)
def test_gammainc_integer_shape_closed_form(a, x):
    # P(n, x) = 1 - exp(-x) * sum_{k<n} x^k / k!
    expected = 1.0 - math.exp(-x) * sum(x**k / math.factorial(k) for k in range(int(a)))
    assert L.gammainc_lower(a, x) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_gammainc_half_shape_and_edges():
    for x in (0.1, 1.0, 2.5, 10.0):  # P(1/2, x) = erf(sqrt(x))
        assert L.gammainc_lower(0.5, x) == pytest.approx(math.erf(math.sqrt(x)), rel=1e-9)
    assert L.gammainc_lower(2.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        L.gammainc_lower(0.0, 1.0)


@pytest.mark.parametrize(
    "params,expected",
    [
        (
            L.TYPELESS_DEFAULTS,
            {0: 0.5078, 8: 0.1997, 9: 0.1758, 10: 0.1649, 27: 1.8331, 47: 0.5637},
        ),
        (L.BATCH_DEFAULTS, {0: 0.5462, 9: 0.2354, 10: 0.3472, 26: 1.6659, 47: 0.5939}),
        (L.INTERACTIVE_DEFAULTS, {0: 0.5135, 10: 0.1187, 11: 0.1797, 28: 1.8810, 47: 0.5728}),
    ],
)
def test_daily_weights_table(params, expected):
    w = L.daily_weights(params)
    assert w.shape == (48,)
    assert w.mean() == pytest.approx(1.0, abs=1e-12)
    for j, v in expected.items():
        assert round(float(w[j]), 4) == v, (j, w[j])
    assert int(np.argmin(w[:12])) in (9, 10)  # minimum 04:30-05:30


def test_arrival_shape_products():
    assert L.BATCH_DEFAULTS.arrival_shape == pytest.approx(6.35505385, abs=1e-12)
    assert L.INTERACTIVE_DEFAULTS.arrival_shape == pytest.approx(6.4180147, abs=1e-12)
    assert L.TYPELESS_DEFAULTS.arrival_shape == pytest.approx(10.46048175, abs=1e-12)


# --------------------------------------------------------------------------------------
# Bit-exact regeneration of the RLScheduler traces
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lublin-1", "lublin-2"])
def test_regenerates_shared_trace_exactly(name):
    ref = _load_swf(_shared_dir() / "traces" / SHARED_FILES[name])
    jobs = _preset_jobs(name)
    assert len(jobs) == ref.shape[0] == 10000
    for arr in (jobs.job_id, jobs.submit, jobs.runtime, jobs.nodes, jobs.job_type):
        assert arr.dtype == np.int64
    np.testing.assert_array_equal(jobs.job_id, ref[:, 0])
    np.testing.assert_array_equal(jobs.submit, ref[:, 1])
    np.testing.assert_array_equal(jobs.runtime, ref[:, 3])
    np.testing.assert_array_equal(jobs.nodes, ref[:, 4])
    np.testing.assert_array_equal(jobs.job_type, ref[:, 14])


def test_lublin_1_checksums():
    j = _preset_jobs("lublin-1")
    assert int(j.submit.sum()) == 39_781_557_652
    assert int(j.runtime.sum()) == 48_627_667
    assert int(j.nodes.sum()) == 221_010
    assert int((j.runtime * j.nodes).sum()) == 2_092_781_168
    assert int(j.submit[-1]) == 7_711_701
    first = list(zip(j.submit[:4].tolist(), j.runtime[:4].tolist(), j.nodes[:4].tolist()))
    assert first == [(5094, 12072, 16), (5170, 2, 1), (6742, 24089, 1), (7287, 9053, 128)]
    assert not j.job_type.any()
    assert j.seed == 1487089399


def test_lublin_2_checksums():
    j = _preset_jobs("lublin-2")
    assert int(j.submit.sum()) == 23_761_552_328
    assert int(j.runtime.sum()) == 16_959_554
    assert int(j.nodes.sum()) == 390_073
    assert int((j.runtime * j.nodes).sum()) == 726_158_669
    assert int(j.submit[-1]) == 4_602_313
    cols = (j.submit[:3], j.runtime[:3], j.nodes[:3], j.job_type[:3])
    first = list(zip(*(c.tolist() for c in cols)))
    assert first == [(139, 4277, 256, 0), (269, 158, 128, 0), (1062, 10, 17, 0)]
    assert int(np.argmax(j.job_type == 1)) == 7  # first batch job is #8
    assert (j.submit[7], j.runtime[7], j.nodes[7]) == (6342, 23, 1)
    assert int((j.job_type == 1).sum()) == 1296
    assert int((np.diff(j.submit) == 0).sum()) == 10  # ties go to interactive


def test_fewer_jobs_give_a_prefix():
    full = _preset_jobs("lublin-2")
    part = L.generate(dataclasses.replace(L.LUBLIN_2, n_jobs=300))
    np.testing.assert_array_equal(part.submit, full.submit[:300])
    np.testing.assert_array_equal(part.runtime, full.runtime[:300])
    np.testing.assert_array_equal(part.nodes, full.nodes[:300])
    np.testing.assert_array_equal(part.job_type, full.job_type[:300])


def test_load_factor_one_is_identity_and_two_doubles_rate():
    base = L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=2000))
    same = L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=2000, load_factor=1.0))
    np.testing.assert_array_equal(base.submit, same.submit)
    fast = L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=2000, load_factor=2.0))
    # same draws, only the time warp differs: sizes and runtimes are unchanged
    np.testing.assert_array_equal(base.runtime, fast.runtime)
    np.testing.assert_array_equal(base.nodes, fast.nodes)
    assert 0.45 < fast.submit[-1] / base.submit[-1] < 0.55


def test_start_hour_shifts_the_cycle():
    a = L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=500))
    b = L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=500, start_hour=12))
    np.testing.assert_array_equal(a.nodes, b.nodes)  # same draws
    assert not np.array_equal(a.submit, b.submit)
    # starting at noon (busy) the first arrivals come sooner than starting at midnight
    assert b.submit[50] < a.submit[50]


# --------------------------------------------------------------------------------------
# Statistics over fresh seeds (spec §10.3) and analytic size probabilities
# --------------------------------------------------------------------------------------

SEEDS = range(1, 11)

# (mean, per-sample sd) over 10,000-job samples, spec §10.3
EXPECT = {
    "lublin-1": {
        "ia_mean": (914.5, 58.7), "ia_med": (116.1, 3.4), "ia_p90": (1241, 57),
        "rt_mean": (4884, 86), "rt_med": (145.8, 8.2), "rt_p90": (15529, 233),
        "rt_le10": (0.1470, 0.0036), "rt_le60": (0.4012, 0.0055), "rt_gt3600": (0.3452, 0.0053),
        "n_mean": (22.19, 0.46), "n_med": (7.9, 0.4), "serial": (0.2441, 0.0039),
        "pow2": (0.8593, 0.0031), "n256": (0.0162, 0.0013), "batch": (0.0, 0.0),
        "load": (0.869, 0.064), "corr": (0.261, 0.010),
    },
    "lublin-2": {
        "ia_mean": (534.2, 49.6), "ia_med": (51.3, 2.1), "ia_p90": (689, 49),
        "rt_mean": (1906, 249), "rt_med": (31.8, 2.4), "rt_p90": (2049, 1111),
        "rt_le10": (0.2919, 0.0094), "rt_le60": (0.6067, 0.0135), "rt_gt3600": (0.0820, 0.0107),
        "n_mean": (38.06, 0.83), "n_med": (11.4, 1.6), "serial": (0.1763, 0.0053),
        "pow2": (0.8372, 0.0057), "n256": (0.0354, 0.0021), "batch": (0.152, 0.026),
        "load": (0.585, 0.071), "corr": (0.204, 0.021),
    },
}  # fmt: skip
# means and upper percentiles are dominated by rare huge draws (skewed sampling distribution)
HEAVY_TAILED = {"ia_mean", "rt_mean", "ia_p90", "rt_p90", "load"}


def _stats(j: L.LublinJobs) -> dict[str, float]:
    ia = np.diff(j.submit)
    r, n = j.runtime, j.nodes
    return {
        "ia_mean": ia.mean(), "ia_med": np.median(ia), "ia_p90": np.percentile(ia, 90),
        "rt_mean": r.mean(), "rt_med": np.median(r), "rt_p90": np.percentile(r, 90),
        "rt_le10": (r <= 10).mean(), "rt_le60": (r <= 60).mean(), "rt_gt3600": (r > 3600).mean(),
        "n_mean": n.mean(), "n_med": np.median(n), "serial": (n == 1).mean(),
        "pow2": ((n & (n - 1)) == 0).mean(), "n256": (n == 256).mean(),
        "batch": (j.job_type == 1).mean(),
        "load": float((r * n).sum()) / (256.0 * j.submit[-1]),
        "corr": np.corrcoef(np.log(n), np.log(r))[0, 1],
    }  # fmt: skip


@functools.cache
def _fresh_samples(name: str) -> tuple[L.LublinJobs, ...]:
    return tuple(L.generate(dataclasses.replace(L.PRESETS[name], seed=s)) for s in SEEDS)


@pytest.mark.parametrize("name", ["lublin-1", "lublin-2"])
def test_statistics_over_fresh_seeds(name):
    samples = _fresh_samples(name)
    per = [_stats(j) for j in samples]
    k = len(per)
    bad = []
    for key, (mu, sd) in EXPECT[name].items():
        vals = np.array([p[key] for p in per])
        if sd == 0.0:
            if not np.all(vals == mu):
                bad.append(f"{key}: {vals} != {mu}")
            continue
        z = (vals.mean() - mu) / (sd / math.sqrt(k))
        limit = 4.0 if key in HEAVY_TAILED else 3.5
        if abs(z) > limit:
            bad.append(f"{key}: mean over {k} seeds {vals.mean():.4f}, expected {mu} (z={z:.2f})")
        worst = np.abs(vals - mu).max() / sd
        if worst > 5.0:
            bad.append(f"{key}: a single sample is {worst:.1f} sd from {mu}")
    assert not bad, "\n".join(bad)


def _size_pmf(p: L.LublinParams) -> dict[int, float]:
    """Exact size probabilities from spec §3 (independent of the generator code)."""

    def cdf(x: float) -> float:  # CDF of the two-stage uniform `par`
        lo_w = p.uprob / (p.umed - p.ulow)
        hi_w = (1.0 - p.uprob) / (p.uhi - p.umed)
        if x <= p.ulow:
            return 0.0
        if x <= p.umed:
            return (x - p.ulow) * lo_w
        if x <= p.uhi:
            return p.uprob + (x - p.umed) * hi_w
        return 1.0

    pmf = {1: p.serial}
    for m in range(0, 12):  # power-of-two branch: round(par) = m
        q = p.pow2 * (cdf(m + 0.5) - cdf(m - 0.5))
        if q > 0:
            pmf[2**m] = pmf.get(2**m, 0.0) + q
    other = 1.0 - p.serial - p.pow2
    for size in range(1, 2**12):  # other branch: round(2**par) = size
        q = other * (cdf(math.log2(size + 0.5)) - cdf(math.log2(size - 0.5)))
        if q > 0:
            pmf[size] = pmf.get(size, 0.0) + q
    return pmf


# spec §10.3 table: E[n], P(1), P(pow2 incl. 1), P(2), P(4), ..., P(256)
SIZE_TABLE = {
    "typeless-256": (22.169, 0.2440, 0.8599, [0.0910, 0.1173, 0.1113, 0.1084, 0.1069, 0.0325, 0.0324, 0.0162]),
    "interactive-256": (41.100, 0.1541, 0.8140, [0.0588, 0.1081, 0.1019, 0.0988, 0.0973, 0.0793, 0.0771, 0.0385]),
    "batch-256": (21.238, 0.2927, 0.9675, [0.0408, 0.1358, 0.1343, 0.1337, 0.1333, 0.0447, 0.0348, 0.0174]),
    "typeless-default": (12.134, 0.2440, 0.8691, [0.1156, 0.1491, 0.1414, 0.1377, 0.0327, 0.0325, 0.0162, 0.0]),
    "batch-default": (13.893, 0.2927, 0.9684, [0.0473, 0.1572, 0.1556, 0.1548, 0.0981, 0.0418, 0.0209, 0.0]),
    "interactive-default": (8.045, 0.1541, 0.8455, [0.1352, 0.2485, 0.1566, 0.0761, 0.0749, 0.0, 0.0, 0.0]),
}  # fmt: skip
SIZE_PARAMS = {
    "typeless-256": L.LUBLIN_1.typeless,
    "interactive-256": L.LUBLIN_2.interactive,
    "batch-256": L.LUBLIN_2.batch,
    "typeless-default": L.TYPELESS_DEFAULTS,
    "batch-default": L.BATCH_DEFAULTS,
    "interactive-default": L.INTERACTIVE_DEFAULTS,
}


@pytest.mark.parametrize("key", list(SIZE_TABLE))
def test_analytic_size_pmf_matches_spec_table(key):
    pmf = _size_pmf(SIZE_PARAMS[key])
    mean, p1, ppow2, pk = SIZE_TABLE[key]
    assert sum(pmf.values()) == pytest.approx(1.0, abs=1e-12)
    assert sum(s * q for s, q in pmf.items()) == pytest.approx(mean, abs=6e-4)
    assert pmf[1] == pytest.approx(p1, abs=6e-5)
    assert sum(q for s, q in pmf.items() if s & (s - 1) == 0) == pytest.approx(ppow2, abs=6e-5)
    for m, expected in zip(range(1, 9), pk):
        assert pmf.get(2**m, 0.0) == pytest.approx(expected, abs=6e-5), 2**m


@pytest.mark.parametrize(
    "name,jtype,key",
    [
        ("lublin-1", 0, "typeless-256"),
        ("lublin-2", 0, "interactive-256"),
        ("lublin-2", 1, "batch-256"),
    ],
)
def test_empirical_sizes_match_analytic_pmf(name, jtype, key):
    nodes = np.concatenate([j.nodes[j.job_type == jtype] for j in _fresh_samples(name)])
    n = nodes.size
    pmf = _size_pmf(SIZE_PARAMS[key])
    assert nodes.min() >= 1 and nodes.max() <= 256
    assert set(np.unique(nodes).tolist()) <= set(pmf)
    checks = {s: pmf[s] for s in (1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 100)}
    checks["pow2"] = sum(q for s, q in pmf.items() if s & (s - 1) == 0)
    emp = {s: float((nodes == s).mean()) for s in checks if s != "pow2"}
    emp["pow2"] = float(((nodes & (nodes - 1)) == 0).mean())
    for s, q in checks.items():
        tol = 4.0 * math.sqrt(q * (1 - q) / n) + 1e-4
        assert abs(emp[s] - q) <= tol, (s, emp[s], q, n)
    mean = sum(s * q for s, q in pmf.items())
    assert abs(nodes.mean() - mean) <= 4.0 * nodes.std() / math.sqrt(n)


# --------------------------------------------------------------------------------------
# Machine-size helper
# --------------------------------------------------------------------------------------


def test_machine_params_rule():
    p = L.machine_params(L.TYPELESS_DEFAULTS, 256)
    assert (p.uhi, p.umed, p.ulow) == (8.0, 5.5, 0.8)
    p = L.machine_params(L.BATCH_DEFAULTS, 1000)
    assert p.uhi == pytest.approx(math.log2(1000)) and p.umed == pytest.approx(
        math.log2(1000) - 2.5
    )
    p = L.machine_params(L.BATCH_DEFAULTS, 4)  # tiny machine: umed clamped into [ulow, uhi]
    assert p.ulow <= p.umed <= p.uhi == 2.0
    with pytest.raises(ValueError):
        L.machine_params(L.BATCH_DEFAULTS, 1)


@pytest.mark.parametrize("nodes,typed", [(100, True), (200, False), (2, True), (8, False)])
def test_machine_config_sizes_fit_the_machine(nodes, typed):
    cfg = L.machine_config(nodes, typed=typed, n_jobs=1500, seed=7)
    j = L.generate(cfg)
    assert j.nodes.min() >= 1 and j.nodes.max() <= nodes
    assert cfg.header_max_nodes == nodes
    assert (j.runtime >= 1).all() and (j.runtime <= L.MAX_RUNTIME).all()
    assert (np.diff(j.submit) >= 0).all() and j.submit[0] > 0
    assert set(np.unique(j.job_type).tolist()) <= ({0, 1} if typed else {0})
    if nodes >= 100:
        assert j.nodes.max() >= nodes // 2  # the large end of the machine is used


def test_config_validation():
    with pytest.raises(ValueError):
        L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=0))
    with pytest.raises(ValueError):
        L.generate(dataclasses.replace(L.LUBLIN_1, start_hour=24))
    with pytest.raises(ValueError):
        bad = dataclasses.replace(L.TYPELESS_DEFAULTS, b2=0.0)
        L.generate(dataclasses.replace(L.LUBLIN_1, typeless=bad))
    with pytest.raises(ValueError):
        L.generate(dataclasses.replace(L.LUBLIN_1, load_factor=0.0))


def test_seed_none_uses_clock_and_reports_it():
    j = L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=20, seed=None))
    again = L.generate(dataclasses.replace(L.LUBLIN_1, n_jobs=20, seed=j.seed))
    np.testing.assert_array_equal(j.submit, again.submit)
    assert j.seed > 1_700_000_000


# --------------------------------------------------------------------------------------
# SWF text
# --------------------------------------------------------------------------------------


def test_swf_text_header_and_fields():
    cfg = dataclasses.replace(L.LUBLIN_2, n_jobs=50)
    jobs = L.generate(cfg)
    text = L.to_swf_text(jobs, cfg)
    lines = text.splitlines()
    header = [ln for ln in lines if ln.startswith(";")]
    assert header == [
        "; Version: 2",
        "; Acknowledge: Uri Lublin, Hebrew University",
        "; Information: http://www.cs.huji.ac.il/labs/parallel/workload",
        "; MaxJobs: 50",
        "; MaxRecords: 50",
        "; MaxNodes: 256",
        "; MaxRuntime: 162754",
    ]
    rows = np.array([[int(f) for f in ln.split()] for ln in lines[7:]], dtype=np.int64)
    assert rows.shape == (50, 18)
    np.testing.assert_array_equal(rows[:, 0], jobs.job_id)
    np.testing.assert_array_equal(rows[:, 1], jobs.submit)
    np.testing.assert_array_equal(rows[:, 3], jobs.runtime)
    np.testing.assert_array_equal(rows[:, 4], jobs.nodes)
    np.testing.assert_array_equal(rows[:, 14], jobs.job_type)
    assert (rows[:, [2, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17]] == -1).all()
    assert (rows[:, 10] == 1).all()
    # the shared trace's header is the same 7 lines
    with gzip.open(_shared_dir() / "traces" / "lublin_256_new2.swf.gz", "rt") as fh:
        ref_header = [next(fh).rstrip("\n") for _ in range(8)]
    assert ref_header[:7] == [h.replace(": 50", ": 10000") for h in header]
    assert not ref_header[7].startswith(";")

    cmd = "jaxsched trace generate lublin --preset lublin-2 --jobs 50 --out x.swf"
    with_cmd = L.to_swf_text(jobs, cfg, command=cmd).splitlines()
    assert with_cmd[:7] == lines[:7]
    extra = [ln for ln in with_cmd[7:] if ln.startswith(";")]
    assert extra and all(ln.startswith("; Generator") for ln in extra)
    assert extra[0] == "; Generator: " + cmd
    assert with_cmd[7 + len(extra) :] == lines[7:]


# --------------------------------------------------------------------------------------
# Committed traces and the CLI function
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lublin-1", "lublin-2"])
def test_committed_trace_is_fresh_and_exact(name, tmp_path, monkeypatch):
    committed = REPO / "traces" / f"{name}.swf"
    text = committed.read_text()
    assert (
        f"; Generator: jaxsched trace generate lublin --preset {name} --out traces/{name}.swf\n"
        in text
    )
    # job fields equal RLScheduler's trace
    rows = _load_swf(committed)
    ref = _load_swf(_shared_dir() / "traces" / SHARED_FILES[name])
    np.testing.assert_array_equal(rows[:, [0, 1, 3, 4, 14]], ref[:, [0, 1, 3, 4, 14]])
    # and the file is byte for byte what the command writes today
    monkeypatch.chdir(tmp_path)
    out = L.generate_cli(name, None, False, 10000, None, 0, f"traces/{name}.swf")
    assert out == f"traces/{name}.swf"
    assert (tmp_path / out).read_text() == text


def test_generate_cli_nodes_mode(tmp_path):
    out = str(tmp_path / "sub" / "m.swf")
    assert L.generate_cli(None, 96, True, 200, 123, 8, out) == out
    text = Path(out).read_text()
    assert "; MaxNodes: 96\n" in text and "; MaxJobs: 200\n" in text
    gen = [ln for ln in text.splitlines() if ln.startswith("; Generator:")]
    assert gen == [
        "; Generator: jaxsched trace generate lublin --nodes 96 --typed --jobs 200 --seed 123"
        f" --start-hour 8 --out {out}"
    ]
    rows = _load_swf(Path(out))
    expect = L.generate(L.machine_config(96, typed=True, n_jobs=200, seed=123, start_hour=8))
    np.testing.assert_array_equal(rows[:, 1], expect.submit)
    assert rows[:, 4].max() <= 96
    # seed None: the clock seed is written to the header, so the file can be reproduced
    out2 = str(tmp_path / "t.swf")
    L.generate_cli(None, 64, False, 30, None, 0, out2)
    line = next(ln for ln in Path(out2).read_text().splitlines() if ln.startswith("; Generator:"))
    assert "--typeless --jobs 30 --seed " in line


def test_generate_cli_preset_overrides(tmp_path):
    out = str(tmp_path / "p.swf")
    L.generate_cli("LUBLIN-1", None, True, 100, None, 0, out)  # typed is ignored for presets
    rows = _load_swf(Path(out))
    full = _preset_jobs("lublin-1")
    np.testing.assert_array_equal(rows[:, 1], full.submit[:100])
    assert "--preset lublin-1 --jobs 100 --out" in Path(out).read_text()


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        (dict(preset=None, nodes=None), "either"),
        (dict(preset="lublin-1", nodes=256), "not both"),
        (dict(preset="lublin-3"), "unknown preset"),
        (dict(preset=None, nodes=1), "--nodes"),
        (dict(preset=None, nodes=0), "--nodes"),
        (dict(preset=None, nodes=-8), "--nodes"),
        (dict(preset=None, nodes=12.5), "--nodes"),
        (dict(jobs=0), "--jobs"),
        (dict(jobs=-5), "--jobs"),
        (dict(start_hour=24), "--start-hour"),
        (dict(start_hour=-1), "--start-hour"),
        (dict(seed=-1), "--seed"),
        (dict(seed=2**32), "--seed"),
        (dict(out=""), "--out"),
    ],
)
def test_generate_cli_argument_errors(kwargs, needle, tmp_path):
    args = dict(preset="lublin-1", nodes=None, typed=False, jobs=10, seed=None, start_hour=0)
    args["out"] = str(tmp_path / "x.swf")
    args.update(kwargs)
    with pytest.raises(ValueError) as err:
        L.generate_cli(**args)
    msg = str(err.value)
    assert needle in msg and "\n" not in msg
    assert not (tmp_path / "x.swf").exists()


def test_generate_cli_non_power_of_two_nodes_allowed(tmp_path):
    out = str(tmp_path / "odd.swf")
    L.generate_cli(None, 3, False, 300, 5, 0, out)
    rows = _load_swf(Path(out))
    assert set(np.unique(rows[:, 4]).tolist()) <= {1, 2, 3}
