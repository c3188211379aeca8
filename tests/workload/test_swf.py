"""SWF reading, validation, cleaning rules, writing and trace statistics."""

from __future__ import annotations

import gzip
import json
import math
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from shared_data import DATA, REPO

from jaxsched.errors import JaxschedError, SWFError, SWFWarning
from jaxsched.workload import (
    FIELDS,
    Trace,
    default_trace_path,
    format_stats,
    parse_swf,
    prepare_jobs,
    read_swf,
    trace_stats,
    write_schedule_swf,
    write_swf,
)

TINY = DATA / "tiny.swf"


from shared_data import SHARED

TRACES = SHARED / "traces"

# job counts from shared/traces/README.md
JOB_COUNTS = {
    "SDSC-SP2-1998-4.2-cln.swf.gz": 59715,
    "HPC2N-2002-2.2-cln.swf.gz": 202871,
    "CTC-SP2-1996-3.1-cln.swf.gz": 77222,
    "KTH-SP2-1996-2.1-cln.swf.gz": 28476,
    "LANL-CM5-1994-4.1-cln.swf.gz": 122060,
    "SDSC-BLUE-2000-4.2-cln.swf.gz": 243306,
    "RICC-2010-2.swf.gz": 447794,
    "CEA-Curie-2011-2.1-cln.swf.gz": 312826,
    "lublin_256.swf.gz": 10000,
    "lublin_256_new2.swf.gz": 10000,
    "lublin-aaroh.swf.gz": 10000,
}
# (MaxProcs or MaxNodes-derived P, MaxNodes) from the same README
SIZES = {
    "SDSC-SP2-1998-4.2-cln.swf.gz": (128, 128),
    "HPC2N-2002-2.2-cln.swf.gz": (240, 240),
    "CTC-SP2-1996-3.1-cln.swf.gz": (338, 338),
    "KTH-SP2-1996-2.1-cln.swf.gz": (100, 100),
    "LANL-CM5-1994-4.1-cln.swf.gz": (1024, 1024),
    "SDSC-BLUE-2000-4.2-cln.swf.gz": (1152, 144),
    "RICC-2010-2.swf.gz": (8192, 1024),
    "CEA-Curie-2011-2.1-cln.swf.gz": (93312, 5544),
    "lublin_256.swf.gz": (256, 256),
    "lublin_256_new2.swf.gz": (256, 256),
    "lublin-aaroh.swf.gz": (256, 256),
}


# traces the later tests need in full; of the others only a summary is kept (memory)
KEEP = {
    "SDSC-SP2-1998-4.2-cln.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "lublin_256.swf.gz",
    "lublin_256_new2.swf.gz",
}


def _summary(t: Trace) -> dict:
    removed = sum(int(x) for x in re.findall(r"\((\d+) jobs removed\)", t.header.get("Note", "")))
    return {
        "n_jobs": t.n_jobs,
        "skipped": t.skipped,
        "notes": t.notes,
        "size": (t.num_procs, t.num_nodes),
        "submit_sorted": bool(np.all(np.diff(t.submit) >= 0)),
        "header_counts": (t.max_records, t.max_jobs - removed if t.max_jobs else None),
        "max_procs_seen": t.max_procs_seen,
    }


@pytest.fixture(scope="module")
def traces():
    """Every shared trace parsed once (``"_summary"``: facts about each, ``"_times"``: parse
    seconds); the traces in KEEP are kept whole."""
    out, times, summary = {}, {}, {}
    for name in JOB_COUNTS:
        t0 = time.perf_counter()
        t = read_swf(TRACES / name)
        times[name] = time.perf_counter() - t0
        summary[name] = _summary(t)
        if name in KEEP:
            out[name] = t
        del t
    out["_times"], out["_summary"] = times, summary
    return out


def write(tmp_path, text: str, name: str = "t.swf") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


HEADER = "; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 8\n"


def job(i, submit, run=100, alloc=2, req=2, req_time=200, avg="-1", user=1, partition=1):
    return (
        f"{i} {submit} 0 {run} {alloc} {avg} -1 {req} {req_time} -1 1 {user} 1 -1 1 "
        f"{partition} -1 -1"
    )


def jobs_text(n=4, start=0):
    return "".join(job(i + 1, start + 10 * i) + "\n" for i in range(n))


# ----------------------------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------------------------
def test_swferror_str_and_attributes():
    e = SWFError("a.swf", 12, "run (field 4)", "not a number: 'x'")
    assert str(e) == "a.swf:12: run (field 4): not a number: 'x'"
    assert (e.path, e.line, e.field, e.message) == (
        "a.swf",
        12,
        "run (field 4)",
        "not a number: 'x'",
    )
    assert isinstance(e, JaxschedError) and isinstance(e, ValueError)
    assert str(SWFError("a.swf", None, None, "no such file")) == "a.swf: no such file"
    assert str(SWFError("a.swf", 3, None, "bad")) == "a.swf:3: bad"
    assert str(SWFError("a.swf", None, "MaxNodes", "missing")) == "a.swf: MaxNodes: missing"
    assert str(SWFError(None, None, "MaxNodes", "missing")) == "MaxNodes: missing"
    assert str(SWFError(None, 4, None, "bad")) == "line 4: bad"
    import pickle

    e2 = pickle.loads(pickle.dumps(e))
    assert str(e2) == str(e) and e2.line == 12


# ----------------------------------------------------------------------------------------------
# the hand-made trace
# ----------------------------------------------------------------------------------------------
def test_tiny_fields_and_header():
    t = read_swf(TINY)
    assert t.n_jobs == len(t) == 8
    assert t.job_id.tolist() == [1, 2, 3, 4, 6, 5, 7, 8]
    assert t.line.tolist() == list(range(17, 25))
    for name in FIELDS:
        arr = getattr(t, name)
        assert arr.dtype == (np.float64 if name in ("avg_cpu", "used_mem") else np.int64), name
    assert t.avg_cpu[2] == 552.21 and t.avg_cpu[3] == 49.999 and t.used_mem[2] == 10.5
    assert t.prev_job[4] == 4 and t.think_time[4] == 10
    assert t.max_nodes == 4 and t.max_procs == 8 and t.max_jobs == 8 and t.max_records == 8
    assert t.unix_start_time == 1000000000 and t.version == "2.2"
    assert t.time_zone_string == "Europe/Stockholm" and t.max_queues == 2
    assert t.max_runtime is None and t.time_zone is None
    assert t.header["MaxNodes"] == "4 (test partition; 8 total)"
    assert t.header["Note"] == "first note\ncontinued on an indented line\nsecond note"
    assert t.header_values("Queue") == ["1 batch", "2 debug"]
    assert t.header_values("Nothing") == []
    assert t.comments[0] == "; Version: 2.2" and len(t.comments) == 16
    assert (t.num_procs, t.num_nodes, t.procs_per_node) == (8, 4, 2.0)
    assert t.max_run_time == 1000 and t.span == 55
    assert t.skipped == [] and t.notes == [] and t.path == str(TINY)


def test_rlscheduler_rules_on_tiny():
    j = read_swf(TINY).jobs("rlscheduler")
    assert j.rules == "rlscheduler" and j.n_jobs == 7
    assert j.job_id.tolist() == [1, 3, 4, 5, 6, 7, 8]  # run == 0 dropped, sorted by job number
    assert j.procs.tolist() == [2, 4, 8, 1, 3, -1, 8]  # max(alloc, req), -1 kept (no guard)
    assert j.req_time.tolist() == [120, -1, 50, 30, 200, 10, 2000]  # -1 -> run as read
    assert j.run.tolist() == [100, 10, 50, 20, 300, 5, 1000]  # -1 -> 10
    assert j.submit.tolist() == [0, 10, 25, 30, 30, 40, 55]
    assert j.line.tolist() == [17, 19, 20, 22, 21, 23, 24]
    assert j.user.tolist() == [1, 1, 3, 4, 4, 5, 6]
    assert (j.num_nodes, j.num_procs, j.procs_per_node) == (4, 8, 2.0)
    assert j.node_demand.tolist() == [1, 2, 4, 1, 2, 0, 4]
    assert (j.max_exec_time, j.max_req_mem, j.max_user, j.max_group, j.max_executable) == (
        1000,
        4096,
        6,
        1,
        7,
    )
    assert j.fixes == {
        "procs_from_alloc": 2,
        "req_time_from_run": 2,
        "neg_run_to_10": 1,
        "dropped_zero_run": 1,
        "kept_nonpositive_procs": 1,
        "kept_nonpositive_req_time": 1,
    }
    for name in j.ARRAYS:
        assert getattr(j, name).dtype == np.int64
    w = j.window(2, 3)
    assert w.job_id.tolist() == [4, 5, 6] and w.num_procs == 8
    with pytest.raises(JaxschedError, match="outside"):
        j.window(5, 3)


def test_default_rules_on_tiny():
    t = read_swf(TINY)
    d = prepare_jobs(t, "default")
    assert d.rules == "default"
    assert d.job_id.tolist() == [1, 4, 6, 5, 8]  # file (= submit) order
    assert d.procs.tolist() == [2, 6, 3, 1, 8]  # requested if > 0, else allocated
    assert d.req_time.tolist() == [120, 50, 200, 30, 2000]  # under-estimate 200 < 300 kept
    assert d.run.tolist() == [100, 50, 300, 20, 1000]
    assert d.fixes == {
        "procs_from_alloc": 0,
        "req_time_from_run": 1,
        "dropped_nonpositive_run": 2,
        "dropped_nonpositive_procs": 1,
    }
    assert (d.max_exec_time, d.max_user) == (1000, 6)  # over all lines, before dropping
    with pytest.raises(JaxschedError, match="unknown rules"):
        t.jobs("bogus")


def test_header_fallbacks_for_machine_size(tmp_path):
    # no MaxProcs: P = MaxNodes (rlscheduler and default)
    t = read_swf(write(tmp_path, "; MaxNodes: 16\n" + jobs_text()))
    assert (t.num_procs, t.num_nodes) == (16, 16)
    assert (t.jobs().num_procs, t.jobs().num_nodes) == (16, 16)
    # no header at all: default rules use the largest job; rlscheduler needs MaxNodes
    t = read_swf(write(tmp_path, jobs_text(), "nohdr.swf"))
    assert (t.num_procs, t.num_nodes, t.max_nodes) == (2, 2, None)
    assert t.jobs("default").num_procs == 2
    with pytest.raises(SWFError) as ei:
        t.jobs("rlscheduler")
    assert str(ei.value).startswith(f"{t.path}: MaxNodes: header value missing")
    assert ei.value.line is None and ei.value.field == "MaxNodes"
    # max_procs override
    t = read_swf(write(tmp_path, HEADER + jobs_text(), "ovr.swf"), max_procs=64)
    assert (t.num_procs, t.num_nodes, t.jobs().num_procs, t.jobs().procs_per_node) == (
        64,
        4,
        64,
        16.0,
    )
    with pytest.raises(JaxschedError, match="max_procs"):
        read_swf(TINY, max_procs=0)
    with pytest.raises(ValueError, match="on_error"):
        read_swf(TINY, on_error="ignore")


# ----------------------------------------------------------------------------------------------
# bad input: one test per message shape
# ----------------------------------------------------------------------------------------------
def _err(path, **kw) -> SWFError:
    with pytest.raises(SWFError) as ei:
        read_swf(path, **kw)
    return ei.value


def test_missing_file_and_directory(tmp_path):
    e = _err(tmp_path / "nope.swf")
    assert str(e) == f"{tmp_path / 'nope.swf'}: no such file"
    assert e.line is None and e.field is None
    assert str(_err(tmp_path)).startswith(f"{tmp_path}: is a directory")


def test_wrong_field_count(tmp_path):
    lines = jobs_text().splitlines()
    lines[2] = " ".join(lines[2].split()[:17])
    p = write(tmp_path, HEADER + "\n".join(lines) + "\n")
    e = _err(p)
    assert str(e) == f"{p}:6: expected 18 fields, found 17"
    assert (e.line, e.field) == (6, None)
    lines[2] += " 1 2"
    e = _err(write(tmp_path, HEADER + "\n".join(lines) + "\n"))
    assert str(e).endswith(":6: expected 18 fields, found 19")


def test_non_numeric_field(tmp_path):
    lines = jobs_text().splitlines()
    toks = lines[1].split()
    toks[3] = "abc"
    lines[1] = " ".join(toks)
    p = write(tmp_path, HEADER + "\n".join(lines) + "\n")
    e = _err(p)
    assert str(e) == f"{p}:5: run (field 4): not a number: 'abc'"
    assert (e.line, e.field, e.message) == (5, "run (field 4)", "not a number: 'abc'")


def test_nan_and_non_integer_and_huge(tmp_path):
    p = write(tmp_path, HEADER + job(1, 0) + "\n" + job(2, 10, run="nan") + "\n")
    assert str(_err(p)) == f"{p}:5: run (field 4): not a number: nan"
    p = write(tmp_path, HEADER + job(1, 0) + "\n" + job(2, 10.5) + "\n")
    assert str(_err(p)) == f"{p}:5: submit (field 2): not an integer: 10.5"
    p = write(tmp_path, HEADER + job(1, 0) + "\n" + job(2, 10, req_time="1e30") + "\n")
    assert str(_err(p)).startswith(f"{p}:5: req_time (field 9): integer out of range")
    # fractional values are fine in fields 6 and 7; "1e2" style integers are fine too
    p = write(tmp_path, HEADER + job(1, 0, avg="0.125") + "\n" + job(2, "1e2") + "\n")
    t = read_swf(p)
    assert t.avg_cpu[0] == 0.125 and t.submit[1] == 100


def test_partition_falls_back_to_zero_with_warning(tmp_path):
    p = write(
        tmp_path,
        HEADER
        + job(1, 0, partition="batch")
        + "\n"
        + job(2, 5, partition="2.5")
        + "\n"
        + job(3, 9)
        + "\n",
    )
    with pytest.warns(SWFWarning, match="patched 2 value"):
        t = read_swf(p)
    assert t.partition.tolist() == [0, 0, 1] and len(t.notes) == 2
    assert t.notes[0].startswith(f"{p}:4: partition (field 16): 'batch'")


def test_binary_and_empty(tmp_path):
    p = tmp_path / "bin.swf"
    p.write_bytes(bytes(range(256)) * 4)
    assert str(_err(p)) == f"{p}: not an SWF file (binary data)"
    for name, text in (("empty.swf", ""), ("comments.swf", HEADER + ";\n\n  \n")):
        p = write(tmp_path, text, name)
        assert str(_err(p)) == f"{p}: empty: no job lines (is this an SWF file?)"
        with pytest.raises(SWFError, match="empty"):
            read_swf(p, on_error="skip")
    p = write(tmp_path, "job,submit,run\n1,2,3\n", "csv.swf")
    assert str(_err(p)) == f"{p}:1: expected 18 fields, found 1"


def test_corrupt_gzip_and_magic_detection(tmp_path):
    text = HEADER + jobs_text()
    p = tmp_path / "looks_plain.swf"  # gzip content without the .gz suffix
    p.write_bytes(gzip.compress(text.encode()))
    assert read_swf(p).n_jobs == 4
    p = tmp_path / "plain.swf.gz"  # plain text with a .gz suffix
    p.write_text(text)
    assert read_swf(p).n_jobs == 4
    p = tmp_path / "bad.swf.gz"
    p.write_bytes(gzip.compress(text.encode())[:40])
    assert str(_err(p)).startswith(f"{p}: corrupt compressed data")
    import bz2
    import lzma

    (tmp_path / "b.swf.bz2").write_bytes(bz2.compress(text.encode()))
    (tmp_path / "x.swf.xz").write_bytes(lzma.compress(text.encode()))
    assert read_swf(tmp_path / "b.swf.bz2").n_jobs == read_swf(tmp_path / "x.swf.xz").n_jobs == 4


def test_submit_out_of_order(tmp_path):
    p = write(tmp_path, HEADER + job(1, 0) + "\n" + job(2, 50) + "\n" + job(3, 20) + "\n")
    e = _err(p)
    assert str(e) == (
        f"{p}:6: submit (field 2): submit time 20 is earlier than that of a "
        f"previous job (50); SWF jobs must be in submit order"
    )
    assert (e.line, e.field) == (6, "submit (field 2)")


def test_job_larger_than_machine(tmp_path):
    p = write(tmp_path, HEADER + job(1, 0) + "\n" + job(2, 5, alloc=3, req=9) + "\n")
    assert str(_err(p)) == (
        f"{p}:5: req_procs (field 8): job needs 9 processors but the machine has 8 (MaxProcs)"
    )
    p = write(tmp_path, "; MaxNodes: 4\n" + job(1, 0, alloc=5, req=-1) + "\n")
    assert str(_err(p)) == (
        f"{p}:2: alloc_procs (field 5): job needs 5 processors but the "
        f"machine has 4 (MaxNodes; no MaxProcs header)"
    )
    assert read_swf(p, max_procs=5).n_jobs == 1  # the override makes it fit
    p = write(tmp_path, "; MaxProcs: 16\n" + job(1, 0, req=9) + "\n")
    assert read_swf(p).n_jobs == 1
    assert str(_err(p, max_procs=8)).endswith("machine has 8 (max_procs=8)")


def test_bad_header_values(tmp_path):
    p = write(tmp_path, "; Version: 2.2\n; MaxProcs: many\n" + jobs_text())
    e = _err(p)
    assert str(e) == f"{p}:2: MaxProcs: not an integer: 'many'"
    assert (e.line, e.field) == (2, "MaxProcs")
    p = write(tmp_path, "; MaxNodes: 0\n" + jobs_text())
    assert str(_err(p)) == f"{p}:1: MaxNodes: must be a positive integer, got '0'"
    p = write(tmp_path, "; MaxProcs: many\n; MaxNodes: 4\n" + jobs_text())
    with pytest.warns(SWFWarning, match="skipped 1"):
        t = read_swf(p, on_error="skip")
    assert t.max_procs is None and t.num_procs == 4 and t.n_jobs == 4
    assert t.skipped == [f"{p}:1: MaxProcs: not an integer: 'many' (header value ignored)"]


def test_first_bad_line_wins(tmp_path):
    # a value error on line 4 comes before a malformed line 6
    body = [job(1, 50), job(2, 10), job(3, 60), "1 2 3"]
    p = write(tmp_path, "; MaxNodes: 8\n; MaxProcs: 8\n" + "\n".join(body) + "\n")
    assert str(_err(p)).startswith(f"{p}:4: submit (field 2)")
    body = [job(1, 0), "1 2 3", job(3, 60, req=99)]
    p = write(tmp_path, "; MaxNodes: 8\n" + "\n".join(body) + "\n")
    assert str(_err(p)) == f"{p}:3: expected 18 fields, found 3"


def test_interleaved_comments_blank_lines_crlf(tmp_path):
    text = (
        HEADER
        + job(1, 0)
        + "\n\n; a comment in the middle\n"
        + job(2, 10)
        + "\n   \n"
        + job(3, 20)
        + "\n"
    )
    p = write(tmp_path, text)
    t = read_swf(p)
    assert t.line.tolist() == [4, 7, 9] and t.comments[-1] == "; a comment in the middle"
    p2 = tmp_path / "crlf.swf"
    p2.write_bytes(text.replace("\n", "\r\n").encode())
    t2 = read_swf(p2)
    assert t2.records_equal(t) and t2.line.tolist() == [4, 7, 9]
    assert t2.comments == t.comments and t2.max_procs == 8
    # the error line numbers count every physical line
    bad = text.replace(job(3, 20), job(3, 5))
    assert str(_err(write(tmp_path, bad, "bad.swf"))).startswith(f"{tmp_path / 'bad.swf'}:9:")


def test_skip_mode_counts_and_warns_once(tmp_path):
    body = [
        job(1, 0),  # 4 ok
        "1 2 3",  # 5 field count
        job(3, 10, run="x"),  # 6 not a number
        job(4, 20),  # 7 ok
        job(5, 5),  # 8 out of order (20 before it)
        job(6, 30, req=99),  # 9 too big
        job(7, 30.5),  # 10 not an integer
        job(8, 25),  # 11 ok: compared with the kept lines only (20)
        job(9, 40, run="inf"),  # 12 not finite
    ]
    p = write(tmp_path, HEADER + "\n".join(body) + "\n")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        t = read_swf(p, on_error="skip")
    swf_w = [w for w in rec if issubclass(w.category, SWFWarning)]
    assert len(swf_w) == 1
    assert f"{p}: skipped 6 bad line(s); first: {p}:5: expected 18 fields, found 3" in str(
        swf_w[0].message
    )
    assert t.job_id.tolist() == [1, 4, 8] and t.line.tolist() == [4, 7, 11]
    assert len(t.skipped) == 6
    assert [re.match(r".*?:(\d+): ", m).group(1) for m in t.skipped] == [
        "5",
        "6",
        "8",
        "9",
        "10",
        "12",
    ]
    assert t.skipped[1] == f"{p}:6: run (field 4): not a number: 'x'"
    assert t.skipped[2].startswith(f"{p}:8: submit (field 2): submit time 5 is earlier")
    assert t.skipped[3].startswith(f"{p}:9: req_procs (field 8): job needs 99")
    # without errors nothing is skipped and nothing is warned
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_swf(TINY, on_error="skip").skipped == []
    # every line bad: still an error, never an empty trace
    p = write(tmp_path, HEADER + "1 2 3\n4 5 6\n", "allbad.swf")
    with pytest.raises(SWFError, match=r"no valid job lines \(all 2 job lines were bad"):
        read_swf(p, on_error="skip")


def test_parse_swf_in_memory():
    text = HEADER + jobs_text()
    t = parse_swf(text)
    assert t.path is None and t.n_jobs == 4
    assert parse_swf(gzip.compress(text.encode()), path="mem.swf").path == "mem.swf"
    with pytest.raises(SWFError) as ei:
        parse_swf(HEADER + "1 2 3\n")
    assert str(ei.value) == "line 4: expected 18 fields, found 3"


# ----------------------------------------------------------------------------------------------
# writing
# ----------------------------------------------------------------------------------------------
def test_round_trip_tiny(tmp_path):
    t = read_swf(TINY)
    for name in ("out.swf", "out.swf.gz"):
        write_swf(t, tmp_path / name)
        back = read_swf(tmp_path / name)
        assert back.records_equal(t)
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(back, f), getattr(t, f))
        assert back.comments == t.comments and back.header == t.header
        assert (back.max_nodes, back.max_procs, back.unix_start_time) == (4, 8, 1000000000)
    text = (tmp_path / "out.swf").read_text()
    assert " 552.21 " in text and " 49.999 " in text and " 0.25 " in text
    assert " 95.5 " in text and "1000.0" not in text  # integral floats print as integers
    # explicit headers
    write_swf(t, tmp_path / "h.swf", header={"MaxNodes": 8, "Note": ["a", "b"]})
    back = read_swf(tmp_path / "h.swf")
    assert back.comments == ["; MaxNodes: 8", "; Note: a", "; Note: b"]
    assert back.records_equal(t) and back.max_procs is None and back.num_procs == 8
    write_swf(t, tmp_path / "n.swf", header=[])
    assert read_swf(tmp_path / "n.swf").comments == []
    write_swf(t, tmp_path / "l.swf", header=["MaxNodes: 4", "; MaxProcs: 8"])
    assert read_swf(tmp_path / "l.swf").comments == ["; MaxNodes: 4", "; MaxProcs: 8"]


def test_round_trip_random_values(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    vals = rng.integers(-1, 10**9, size=(n, 18)).astype(np.float64)
    vals[:, 1] = np.sort(vals[:, 1])
    vals[:, 4] = rng.integers(-1, 100, n)
    vals[:, 7] = rng.integers(-1, 100, n)
    vals[:, 5] = rng.random(n) * 10.0 ** rng.integers(-3, 9, n)  # arbitrary doubles
    vals[:, 6] = np.round(rng.random(n) * 1000, 2)
    t = Trace.from_array(vals)
    write_swf(t, tmp_path / "r.swf", header=["MaxProcs: 100"])
    back = read_swf(tmp_path / "r.swf")
    assert back.records_equal(t)
    assert np.array_equal(back.to_array(), vals)


def test_round_trip_first_2000_lines_of_real_trace(tmp_path):
    with gzip.open(TRACES / "HPC2N-2002-2.2-cln.swf.gz", "rt") as fh:
        head = [next(fh) for _ in range(2000)]
    src = tmp_path / "hpc2n_head.swf"
    src.write_text("".join(head))
    t = read_swf(src)
    assert t.n_jobs == 2000 - len(t.comments)
    assert np.any(t.avg_cpu != np.floor(t.avg_cpu))  # fractional values present
    write_swf(t, tmp_path / "again.swf")
    back = read_swf(tmp_path / "again.swf")
    assert back.records_equal(t) and back.comments == t.comments and back.header == t.header
    # values equal float() of the source text, field by field
    data = [ln.split() for ln in head if not ln.startswith(";")]
    np.testing.assert_array_equal(back.to_array(), np.array(data, dtype=float))


def test_write_schedule_swf(tmp_path):
    j = read_swf(TINY).jobs("default")
    start = j.submit + np.array([0, 5, 7, 100, -1])
    start[-1] = -1  # never started
    write_schedule_swf(j, start, tmp_path / "sched.swf", header=["Note: unit test"])
    s = read_swf(tmp_path / "sched.swf")
    assert s.n_jobs == 5 and s.job_id.tolist() == j.job_id.tolist()
    assert s.wait.tolist() == [0, 5, 7, 100, -1]
    assert s.alloc_procs.tolist() == [2, 6, 3, 1, -1]
    assert s.status.tolist() == [1, 1, 1, 1, 5]
    assert s.req_procs.tolist() == j.procs.tolist() and s.run.tolist() == j.run.tolist()
    assert s.req_time.tolist() == j.req_time.tolist() and s.submit.tolist() == j.submit.tolist()
    assert (s.max_nodes, s.max_procs, s.max_records) == (4, 8, 5)
    assert "unit test" in s.header["Note"]
    # node-granular allocation can be given explicitly
    write_schedule_swf(j, j.submit, tmp_path / "s2.swf", alloc_procs=j.node_demand * 2)
    assert read_swf(tmp_path / "s2.swf").alloc_procs.tolist() == [2, 6, 4, 2, 8]
    with pytest.raises(JaxschedError, match="before its submit time"):
        write_schedule_swf(j, j.submit - 1, tmp_path / "x.swf")
    with pytest.raises(JaxschedError, match="shape"):
        write_schedule_swf(j, j.submit[:2], tmp_path / "x.swf")


def test_trace_select_and_head():
    t = read_swf(TINY)
    h = t.head(3)
    assert h.n_jobs == 3 and h.max_procs == 8 and h.line.tolist() == [17, 18, 19]
    assert t.head(100).n_jobs == 8
    assert t.select(t.run > 50).job_id.tolist() == [1, 6, 8]


# ----------------------------------------------------------------------------------------------
# the shared traces
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(JOB_COUNTS))
def test_shared_trace_counts_and_header(traces, name):
    s = traces["_summary"][name]
    assert s["n_jobs"] == JOB_COUNTS[name]
    assert s["skipped"] == [] and s["notes"] == []
    assert s["size"] == SIZES[name]
    assert s["submit_sorted"]
    # README "header check": MaxRecords = n, or MaxJobs minus the cleaning note's removals
    assert s["n_jobs"] in s["header_counts"]
    assert s["max_procs_seen"] <= s["size"][0]


def test_hpc2n_parse_time(traces):
    dt = traces["_times"]["HPC2N-2002-2.2-cln.swf.gz"]
    print(f"HPC2N parse time {dt:.3f} s")
    assert dt < 4.0, f"parsing HPC2N took {dt:.2f} s (target: well under 2 s)"


def test_reference_loaded_jobs(traces):
    for ref, name in (
        ("HPC2N-2002-2.2-cln-seq1024.json", "HPC2N-2002-2.2-cln.swf.gz"),
        ("lublin_256_new2-seq1024.json", "lublin_256_new2.swf.gz"),
    ):
        with open(SHARED / "reference" / ref) as fh:
            loaded = json.load(fh)["loaded_jobs"]
        j = traces[name].jobs("rlscheduler")
        assert j.n_jobs == loaded
        assert np.all(np.diff(j.job_id) > 0) and np.all(j.run > 0)
    assert traces["HPC2N-2002-2.2-cln.swf.gz"].jobs().n_jobs == 202871
    assert traces["lublin_256_new2.swf.gz"].jobs().n_jobs == 10000
    j = traces["HPC2N-2002-2.2-cln.swf.gz"].jobs()
    assert (j.num_nodes, j.num_procs, j.procs_per_node) == (240, 240, 1.0)
    sp2 = traces["SDSC-SP2-1998-4.2-cln.swf.gz"].jobs()
    assert sp2.fixes["neg_run_to_10"] == 5671 and sp2.fixes["dropped_zero_run"] == 10
    assert sp2.n_jobs == 59715 - 10
    blue = traces["SDSC-BLUE-2000-4.2-cln.swf.gz"].jobs()
    assert (blue.num_nodes, blue.num_procs, blue.procs_per_node) == (144, 1152, 8.0)


# paper Table II: (it, rt, nt); the paper truncates or rounds
TABLE2 = {
    "SDSC-SP2-1998-4.2-cln.swf.gz": (1055, 6687, 11),
    "HPC2N-2002-2.2-cln.swf.gz": (538, 17024, 6),
    "lublin_256.swf.gz": (771, 4862, 22),
    "lublin_256_new2.swf.gz": (460, 1695, 39),
}
# more digits, from shared/traces/README.md and the spec (§1.6)
TABLE2_EXACT = {
    "SDSC-SP2-1998-4.2-cln.swf.gz": (1055.3, 6687.4, 11.03),
    "HPC2N-2002-2.2-cln.swf.gz": (538.5, 17024.2, 6.36),
    "lublin_256.swf.gz": (770.7, 4862.8, 22.10),
    "lublin_256_new2.swf.gz": (460.3, 1696.0, 39.01),
}


@pytest.mark.parametrize("name", list(TABLE2))
def test_table2_statistics(traces, name):
    s = trace_stats(traces[name])
    t2 = s["table2"]
    got = (t2["mean_interarrival"], t2["mean_run_time"], t2["mean_alloc_procs"])
    for value, paper, exact in zip(got, TABLE2[name], TABLE2_EXACT[name]):
        assert paper in (math.floor(value), round(value)), (value, paper)
        assert round(value, 2 if exact < 100 else 1) == exact
    assert s["jobs"] == JOB_COUNTS[name]


def test_first_10k_statistics(traces):
    # README "first 10k" columns: it / rt / nt
    expect = {
        "SDSC-SP2-1998-4.2-cln.swf.gz": (875.7, 22236, 13.86),
        "HPC2N-2002-2.2-cln.swf.gz": (1220.5, 33489, 14.06),
        "CTC-SP2-1996-3.1-cln.swf.gz": (361.8, 22360, 10.25),
        "lublin_256.swf.gz": (770.7, 4863, 22.10),
    }
    for name, (it, rt, nt) in expect.items():
        s = trace_stats(traces[name], first=10000)
        r = s["requested"]
        assert s["jobs"] == 10000
        assert round(r["mean_interarrival"], 1) == it
        assert round(r["mean_requested_time"]) == rt
        assert round(r["mean_requested_procs"], 2) == nt


def test_trace_stats_general_and_report():
    t = read_swf(TINY)
    s = trace_stats(t)
    assert s["jobs"] == 8 and s["processors"] == 8 and s["nodes"] == 4
    assert s["span_s"] == 55 and s["users"] == 6 and s["groups"] == 1
    assert s["interarrival"]["count"] == 7 and s["interarrival"]["mean"] == 55 / 7
    assert s["run_time"]["count"] == 7  # the -1 is not a run time
    assert s["requested_time"]["count"] == 6
    assert s["size"]["count"] == 7
    acc = s["estimate_accuracy"]
    assert acc["count"] == 6 and acc["max"] == 1.5 and acc["min"] == 0
    assert s["missing"]["run"] == 1 and s["missing"]["req_time"] == 2
    assert s["interarrival"]["p50"] == np.percentile(np.diff(t.submit), 50)
    json.dumps(s)  # plain Python types only
    text = format_stats(s)
    assert "jobs:         8" in text and "Table II" in text and "inter-arrival" in text
    s3 = trace_stats(t, first=3)
    assert s3["jobs"] == 3 and s3["span_s"] == 10
    with pytest.raises(JaxschedError):
        trace_stats(t, first=0)


def test_default_trace_path():
    assert default_trace_path() == REPO / "traces" / "lublin-1.swf"
    # (the demo on it: tests/cli/test_cli_trace.py::test_demo_compares_shipped_models_with_heuristics)
