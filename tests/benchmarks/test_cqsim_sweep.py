"""benchmarks/reference/cqsim_sweep.py without CQSim: the ``--requested-procs-from allocated`` variant
(CTC-SP2's field 8 is −1 on every line) and the comparison of a run with CQSim's (start, end,
class, metrics to 1e-9), on hand-made cases."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from shared_data import load_benchmark

from jaxsched.errors import SWFError
from jaxsched.sim.cqsim.run import cqsim_metrics
from jaxsched.workload.cqsim import cqsim_slice

S = load_benchmark("cqsim_sweep")
CR = load_benchmark("cqsim_reference")

#: CTC-SP2's shape: field 8 (requested processors) −1; field 5 (allocated) 3, 1, 0 (dropped
#: by CQSim's n <= 0 rule), and one line with field 8 given (2, kept as it is)
SWF = """; MaxNodes: 4
; MaxProcs: 4
1 0 5 100 3 -1 -1 -1 120 -1 1 -1 -1 -1 -1 -1 -1 -1
2 5 0 30 1 -1 -1 -1 30 -1 1 -1 -1 -1 -1 -1 -1 -1
3 6 0 30 0 -1 -1 -1 30 -1 1 -1 -1 -1 -1 -1 -1 -1
4 9 0 7 4 -1 -1 2 60 -1 1 -1 -1 -1 -1 -1 -1 -1
"""


def test_requested_procs_from_allocated(tmp_path):
    path = tmp_path / "ctc.swf"
    path.write_text(SWF)
    assert S.load_trace(path).job_id.tolist() == [4]  # plain: only the job with field 8 kept
    all_missing = tmp_path / "all.swf"
    all_missing.write_text(SWF.replace(" 2 60 ", " -1 60 "))
    with pytest.raises(SWFError, match="no job left"):
        S.load_trace(all_missing)  # CTC-SP2 as it is: CQSim's rules drop every job
    assert S.load_trace(all_missing, "allocated").nodes.tolist() == [3, 1, 4]
    tr = S.load_trace(path, "allocated")
    assert tr.job_id.tolist() == [1, 2, 4] and tr.nodes.tolist() == [3, 1, 2]
    # the slice CQSim is given has field 8 = the substituted count, and reads back the same
    jobs = cqsim_slice(tr, 0, 3)
    back = cqsim_slice(S.load_trace(CR.write_swf(jobs, tmp_path / "s.swf")), 0, 3)
    assert back.nodes.tolist() == [3, 1, 2] and back.submit.tolist() == [0, 5, 9]
    with pytest.raises(ValueError, match="requested_procs_from"):
        S.load_trace(path, "used")


def test_variant_is_in_the_cache_key_and_the_json(tmp_path, capsys):
    (tmp_path / "traces").mkdir()
    ctc = SWF.replace(" 2 60 ", " -1 60 ")  # field 8 -1 on every line, as in CTC-SP2
    (tmp_path / "traces" / "CTC.swf.gz").write_bytes(gzip.compress(ctc.encode()))
    out = tmp_path / "rows.json"
    argv = ["--shared", str(tmp_path), "--trace", "CTC", "--mode", "easy", "--jobs", "1",
            "--cache", str(tmp_path / "cache"), "--cached-only", "--json", str(out)]  # fmt: skip
    assert S.main([*argv, "--requested-procs-from", "allocated"]) == 0
    (row,) = json.loads(out.read_text())
    assert row["requested_procs_from"] == "allocated" and row["slices_total"] == 3
    assert row["not_checked"] == [0, 1, 2]  # nothing cached: looked up under the variant's key
    assert S.cache_path(tmp_path, "CTC" + S.VARIANTS["allocated"], "easy", 0, 1) != S.cache_path(
        tmp_path, "CTC", "easy", 0, 1
    )
    assert S.main(argv) == 0  # the plain trace: 0 slices, no variant in its row
    (row,) = json.loads(out.read_text())
    assert row["slices_total"] == 0 and "requested_procs_from" not in row
    assert S.main([*argv, "--requested-procs-from", "allocated", "--write-ref", "x.json"]) == 2
    assert "--write-ref writes the plain trace" in capsys.readouterr().err


def _run(start, run, submit, nodes, cls=None, N=4):
    start = np.asarray(start, np.int64)
    out = {"start": start, "end": start + run,
           "metrics": cqsim_metrics(submit, run, nodes, start, N)}  # fmt: skip
    if cls is not None:
        out["class"] = np.asarray(cls, np.int64)
    return out


def test_differences_start_end_class_and_metrics():
    submit, run, nodes = np.array([0, 5, 9]), np.array([100, 30, 7]), np.array([4, 2, 1])
    ref = _run([0, 100, 100], run, submit, nodes, cls=[1, 1, 0])
    assert S.differences(ref, _run([0, 100, 100], run, submit, nodes, cls=[1, 1, 0])) == {}
    # one start later: start, end and the metrics that depend on it
    d = S.differences(ref, _run([0, 100, 130], run, submit, nodes, cls=[1, 1, 0]))
    assert d["start"] == (2, 1) and d["end"] == (2, 1)
    assert {"avg_wait", "max_wait", "makespan", "avg_bsld"} <= set(d["metrics"])
    assert "jobs" not in d["metrics"]
    # a class alone; and no class compared when CQSim's is unknown (master modes)
    assert S.differences(ref, _run([0, 100, 100], run, submit, nodes, cls=[1, 1, 2])) == {
        "class": (2, 1)
    }
    plain = {k: v for k, v in ref.items() if k != "class"}
    assert S.differences(plain, _run([0, 100, 100], run, submit, nodes, cls=[2, 2, 2])) == {}
    # an end alone (a wrong run time); metrics within 1e-9 pass, beyond it fail
    bad_end = {**ref, "end": ref["end"] + np.array([0, 0, 1])}
    assert S.differences(ref, bad_end) == {"end": (2, 1)}
    m = dict(ref["metrics"])
    near = {**ref, "metrics": {**m, "avg_wait": m["avg_wait"] * (1 + 1e-12)}}
    far = {**ref, "metrics": {**m, "avg_wait": m["avg_wait"] * (1 + 1e-6)}}
    missing = {**ref, "metrics": {k: v for k, v in m.items() if k != "util"}}
    assert S.differences(ref, near) == {}
    assert S.differences(ref, far) == {"metrics": ["avg_wait"]}
    assert S.differences(ref, missing) == {"metrics": ["util"]}
    assert S.describe({"start": (2, 1), "metrics": ["avg_wait"]}) == (
        "start 1 jobs, first at slice index 2; metrics avg_wait"
    )


def test_reference_run_end_from_cache_or_start_plus_run(tmp_path):
    (tmp_path / "ctc.swf").write_text(SWF)
    jobs = cqsim_slice(S.load_trace(tmp_path / "ctc.swf", "allocated"), 0, 3)
    cached = {"start": [0, 100, 100], "class": [1, 1, 0]}
    ref = S.reference_run(jobs, cached)
    assert ref["end"].tolist() == [100, 130, 107] and ref["class"].tolist() == [1, 1, 0]
    assert ref["metrics"]["max_wait"] == 95
    ref = S.reference_run(jobs, {"start": [0, 100, 100], "end": [100, 131, 107]})
    assert ref["end"].tolist() == [100, 131, 107] and "class" not in ref
