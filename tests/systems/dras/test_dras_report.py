"""Tests of the DRAS report table and plots (jaxsched/systems/dras/report.py, plot.py) on
schedules of the CQSim oracle."""

from __future__ import annotations

import pytest

from jaxsched.errors import ConfigError
from jaxsched.policies import dras_baselines as B
from jaxsched.sim import oracle_cqsim as C
from jaxsched.systems.dras import plot as P
from jaxsched.systems.dras import report as R

CASE = dict(
    submit=[0, 1, 2, 3, 4, 5], nodes=[3, 4, 1, 1, 2, 2], run=[10, 10, 20, 2, 3, 8],
    req_time=[10, 10, 20, 2, 3, 8],
)  # fmt: skip


@pytest.fixture(scope="module")
def schedules():
    out = {}
    for name in ("fcfs", "binpacking"):
        res = C.simulate_cqsim(CASE["submit"], CASE["nodes"], CASE["run"], CASE["req_time"],
                               num_nodes=4, **B.baseline_kwargs(name))  # fmt: skip
        out[name] = dict(CASE, start=res.start, cls=res.cls)
    return out


def test_method_table_and_text(schedules):
    table = R.method_table(schedules, N=4)
    assert set(table) == {"fcfs", "binpacking"}
    assert table["binpacking"]["ready_jobs"] == 1.0
    assert table["fcfs"]["backfilled_jobs"] > 0
    best = max(table, key=lambda m: table[m]["kiviat_area"])
    assert max(table[best]["kiviat"]) == 1.0
    text = R.report(schedules, N=4)
    lines = text.splitlines()
    assert lines[2].startswith("fcfs") and lines[3].startswith("binpacking")
    assert "79.25/9.88/10.87 / 30.45/16.99/52.56" in lines[2]  # the paper's Table IV row
    assert R.paper_row("FCFS+EASY") == R.PAPER_TABLE_IV["fcfs"] and R.paper_row("x") is None
    with pytest.raises(ConfigError):
        R.method_table({}, N=4)


def test_plots_write_pngs(schedules, tmp_path):
    table = R.method_table(schedules, N=4)
    for f, arg, name in ((P.plot_kiviat, table, "k.png"), (P.plot_wait_vs_size, schedules, "w.png"),
                         (P.plot_weekly, schedules, "wk.png")):  # fmt: skip
        out = f(arg, tmp_path / name)
        assert out.read_bytes()[:4] == b"\x89PNG"
