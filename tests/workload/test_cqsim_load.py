"""CQSim's trace loading (jaxsched.workload.cqsim) against the reference file and hand cases."""

import gzip
import json

import numpy as np
import pytest

from jaxsched.errors import ConfigError, SWFError
from jaxsched.workload.cqsim import cqsim_slice, load_cqsim
from tests.shared_data import SHARED

REF = SHARED / "reference" / "cqsim" / "SDSC-SP2-1998-4.2-cln-a0-n2000.json"
TRACE = SHARED / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def test_sdsc_loaded_jobs_and_slice_a0():
    doc = json.loads(REF.read_text())
    tr = load_cqsim(TRACE)
    assert tr.loaded_jobs == doc["loaded_jobs"] == 53999
    assert tr.num_nodes == doc["machine_size"] == 128
    sl = doc["slices"][0]
    jobs = cqsim_slice(tr, sl["start"], sl["jobs"])
    inp = sl["input"]
    for ours, key in [("job_id", "id"), ("submit", "submit"), ("nodes", "nodes"),
                      ("run", "run"), ("req_time", "req_time")]:  # fmt: skip
        np.testing.assert_array_equal(getattr(jobs, ours), inp[key], err_msg=key)
    assert (jobs.priority == 0).all()


def _write(tmp_path, lines, header="; MaxProcs: 8\n"):
    p = tmp_path / "t.swf.gz"
    with gzip.open(p, "wt") as f:
        f.write(header + "\n".join(lines) + "\n")
    return p


def _line(i, s, r, n, t):
    f = [-1] * 18
    f[0], f[1], f[3], f[7], f[8] = i, s, r, n, t
    return " ".join(map(str, f))


def test_rules_hand_case(tmp_path):
    lines = [
        _line(1, 100, 50, 2, 40),  # run cut to 40
        _line(2, 110, 0, 2, 40),  # run 0: dropped
        _line(3, 120, 10, 0, 40),  # size 0: dropped
        _line(4, 130, 10, 16, 40),  # wider than N: kept
        _line(5, 140, 10, 2, -1),  # estimate -1: dropped
        _line(6, 150, 30, 1, 40),
    ]
    tr = load_cqsim(_write(tmp_path, lines))
    assert tr.loaded_jobs == 3 and tr.num_nodes == 8
    np.testing.assert_array_equal(tr.job_id, [1, 4, 6])
    np.testing.assert_array_equal(tr.run, [40, 10, 30])
    sl = cqsim_slice(tr, 1, 2, density=0.5, priority=0.2)
    np.testing.assert_array_equal(sl.submit, [0, 10])
    np.testing.assert_array_equal(sl.priority, [1, 0])
    with pytest.raises(ConfigError, match="outside the 3 loaded jobs"):
        cqsim_slice(tr, 2, 2)


def test_missing_machine_size(tmp_path):
    with pytest.raises(SWFError, match="MaxProcs"):
        load_cqsim(_write(tmp_path, [_line(1, 0, 5, 1, 9)], header=""))
