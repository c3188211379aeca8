"""``evaluate --split test``'s leak check knows a model's training trace by its content hash
(run.json ``trace_sha256``): a renamed copy of the trace is the trace it trained on."""

import hashlib

import pytest

from jaxsched.errors import ConfigError
from jaxsched.workload.splits import check_unseen, file_sha256


def test_a_renamed_copy_of_the_training_trace_is_not_held_out(tmp_path):
    trace = tmp_path / "lublin-1.swf"
    trace.write_text("; MaxProcs: 8\n1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n")
    copy = tmp_path / "fresh-name.swf"
    copy.write_bytes(trace.read_bytes())
    assert file_sha256(copy) == hashlib.sha256(trace.read_bytes()).hexdigest()
    run = {"trace": str(trace), "jobs_seen": [0, 50], "trace_sha256": file_sha256(trace)}
    with pytest.raises(ConfigError, match=r"--model m: it trained or was chosen on jobs \[0, 50\)"):
        check_unseen(run, "m", copy, (40, 100), allow_seen=False)
    assert check_unseen(run, "m", copy, (40, 100), allow_seen=True)  # in-sample
    assert not check_unseen(run, "m", copy, (50, 100), allow_seen=False)  # no overlap
    other = tmp_path / "other.swf"
    other.write_text("; MaxProcs: 8\n1 5 0 10 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n")
    assert not check_unseen(run, "m", other, (0, 100), allow_seen=False)  # other jobs
    # the same name stays the run's trace (e.g. the same jobs recompressed)
    with pytest.raises(ConfigError):
        check_unseen(run, "m", tmp_path / "sub" / "lublin-1.swf", (0, 100), allow_seen=False)
    # a model without a stored hash keeps the path rule
    del run["trace_sha256"]
    assert not check_unseen(run, "m", copy, (0, 100), allow_seen=False)
