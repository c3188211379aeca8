"""Smoke test of benchmarks/paper/dras_baselines.py: its CQSim loader against the reference file's
loaded job list, and the baseline table on a 300-job prefix of SDSC-SP2's test period."""

from __future__ import annotations

import json

import numpy as np
from shared_data import SHARED, load_benchmark

DB = load_benchmark("dras_baselines")


def test_loader_matches_the_reference_slices():
    jobs = DB.load_cqsim(SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    ref = json.loads(
        (SHARED / "reference/cqsim/SDSC-SP2-1998-4.2-cln-a20000-n2000.json").read_text()
    )
    assert jobs["submit"].size == ref["loaded_jobs"] and jobs["N"] == ref["machine_size"]
    sl = ref["slices"][0]
    a, b = sl["start"], sl["start"] + sl["jobs"]
    for k in ("nodes", "run", "req_time"):
        np.testing.assert_array_equal(jobs[k][a:b], sl["input"][k])
    np.testing.assert_array_equal(jobs["submit"][a:b] - jobs["submit"][a], sl["input"]["submit"])


def test_baseline_table_on_a_prefix(capsys):
    DB.main(["--jobs", "300", "--shared", str(SHARED)])
    out = capsys.readouterr().out
    assert "test period 300 jobs" in out
    for m in ("fcfs", "binpacking", "random", "optimization"):
        assert any(line.startswith(m) for line in out.splitlines()), m
    assert "max wait / FCFS+EASY's" in out
