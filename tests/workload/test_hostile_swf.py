"""Hostile SWF input: every malformed trace is one line ``jaxsched: error: ...`` naming the
file (and line and field where there is one) with exit status 2, from ``trace info``,
``evaluate`` and ``simulate`` alike, before anything is compiled and with no output file left;
and any SWF text either parses to a job list that keeps the simulator's promises or raises one
one-line SWFError (a hypothesis property). Host-side only: the CLI runs in-process and the
simulation entry points are replaced by a guard that fails the test if reached."""

from __future__ import annotations

import gzip
import os
import signal
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxsched.cli import main
from jaxsched.errors import SWFError
from jaxsched.workload import parse_swf, read_swf
from jaxsched.workload.jobs import RULES

HEADER = "; Version: 2.2\n; MaxNodes: 8\n; MaxProcs: 8\n"  # job lines start at line 4
E53, I31 = 2**53, 2**31


def job(i, submit, run=100, procs=2, req_time=200, wait=0, alloc=None):
    alloc = procs if alloc is None else alloc
    return f"{i} {submit} {wait} {run} {alloc} -1 -1 {procs} {req_time} -1 1 1 1 -1 1 1 -1 -1\n"


def ok_jobs(n=3, start=0):
    return "".join(job(i + 1, start + 10 * i) for i in range(n))


def _bytes(text: str) -> bytes:
    return text.encode()


# (id, file content: str, bytes or a callable(path) that makes it, expected text after
# "jaxsched: error: "; "{f}" is the file's path)
CASES = [
    # -- times beyond 2^53, which the int64 fast path let through --------------------------
    ("run-2^60", HEADER + job(1, 0) + job(2, 10, run=2**60),
     "{f}:5: run (field 4): integer out of range: 1152921504606846976"),
    ("submit-2^53+1", HEADER + job(1, 0) + job(2, E53 + 1),
     "{f}:5: submit (field 2): integer out of range"),
    ("req-time-2^62", HEADER + job(1, 0, req_time=2**62),
     "{f}:4: req_time (field 9): integer out of range"),
    ("wait-int64-max", HEADER + job(1, 0, wait=2**63 - 1),
     "{f}:4: wait (field 3): integer out of range"),
    ("submit-plus-run", HEADER + job(1, 0) + job(2, E53 // 2, run=E53 // 2 + 1),
     "{f}:5: run (field 4): submit time + wait time + run time"),
    ("jobs-in-a-row", "; MaxNodes: 1\n" + "".join(job(i + 1, i, run=E53 // 4, procs=1)
                                                   for i in range(5)),
     "{f}:2: run (field 4): a schedule of these jobs could end after 2^53 s"),
    # -- job numbers ------------------------------------------------------------------------
    ("numbers-reversed", HEADER + job(3, 0) + job(2, 10) + job(1, 20),
     "{f}:5: job_id (field 1): the rlscheduler rules order the jobs by job number"),
    ("number-repeated", HEADER + job(1, 0) + job(2, 10) + job(1, 20),
     "{f}:6: job_id (field 1): job number 1 repeats that of line 4"),
    ("underscore", HEADER + job(1, 0) + job(2, "1_000"),
     "{f}:5: submit (field 2): not a plain decimal number: '1_000'"),
    ("plus-sign", HEADER + job("+12", 0),
     "{f}:4: job_id (field 1): not a plain decimal number: '+12'"),
    # -- machine sizes beyond int32 ---------------------------------------------------------
    ("maxnodes-2^31", "; MaxNodes: 2147483648\n" + ok_jobs(),
     "{f}:1: MaxNodes: out of range: 2147483648"),
    ("maxprocs-10^12", "; MaxNodes: 8\n; MaxProcs: 1000000000000\n" + ok_jobs(),
     "{f}:2: MaxProcs: out of range"),
    ("procs-2^40", HEADER + job(1, 0, procs=2**40),
     "{f}:4: alloc_procs (field 5): processor count out of range"),
    # -- unclear or missing errors ----------------------------------------------------------
    ("fifo", lambda p: os.mkfifo(p), "{f}: not a regular file"),
    ("submit-negative", HEADER + job(1, -5) + job(2, 10),
     "{f}:4: submit (field 2): submit time -5 is negative"),
    ("submit-unknown", HEADER + job(1, -1) + job(2, 10),
     "{f}:4: submit (field 2): submit time -1 is negative"),
    ("all-dropped", HEADER + job(1, 0, run=0) + job(2, 10, run=0),
     "{f}: no job left after the rlscheduler rules: all 2 job lines were dropped "
     "(run time 0: 2)"),
    # -- kinds that were already refused ----------------------------------------------------
    ("17-fields", HEADER + job(1, 0) + " ".join(job(2, 10).split()[:17]) + "\n",
     "{f}:5: expected 18 fields, found 17"),
    ("19-fields", HEADER + job(1, 0).strip() + " 7\n", "{f}:4: expected 18 fields, found 19"),
    ("not-a-number", HEADER + job(1, 0, run="abc"), "{f}:4: run (field 4): not a number: 'abc'"),
    ("nan", HEADER + job(1, 0) + job(2, 10, run="nan"), "{f}:5: run (field 4): not a number: nan"),
    ("inf", HEADER + job(1, 0, req_time="inf"), "{f}:4: req_time (field 9): not a number: inf"),
    ("fraction", HEADER + job(1, 0) + job(2, 10.5), "{f}:5: submit (field 2): not an integer"),
    ("binary", bytes(range(256)) * 4, "{f}: not an SWF file (binary data)"),
    ("empty", "", "{f}: empty: no job lines"),
    ("comments-only", HEADER + ";\n\n", "{f}: empty: no job lines"),
    ("larger-than-machine", HEADER + job(1, 0) + job(2, 5, procs=9),
     "{f}:5: alloc_procs (field 5): job needs 9 processors but the machine has 8"),
    ("submit-decreasing", HEADER + job(1, 50) + job(2, 10),
     "{f}:5: submit (field 2): submit time 10 is earlier"),
    ("maxprocs-many", "; MaxNodes: 8\n; MaxProcs: many\n" + ok_jobs(),
     "{f}:2: MaxProcs: not an integer: 'many'"),
    ("maxnodes-0", "; MaxNodes: 0\n" + ok_jobs(), "{f}:1: MaxNodes: must be a positive integer"),
    ("no-maxnodes", "; MaxProcs: 8\n" + ok_jobs(), "{f}: MaxNodes: header value missing"),
    ("gzip-corrupt", gzip.compress(_bytes(HEADER + ok_jobs()))[:40],
     "{f}: corrupt compressed data"),
    ("missing", None, "{f}: no such file"),
    ("directory", lambda p: p.mkdir(), "{f}: is a directory"),
]  # fmt: skip


def _make(path, content) -> None:
    if content is None:
        return
    if callable(content):
        content(path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


@pytest.fixture
def no_simulation(monkeypatch):
    """The simulation entry points of ``evaluate`` and ``simulate``, replaced: a bad trace must
    be refused before anything is compiled."""
    import jaxsched.sim.chunked
    import jaxsched.sim.evaluate

    def reached(*a, **k):
        raise AssertionError("the trace was not refused before the simulation")

    monkeypatch.setattr(jaxsched.sim.evaluate, "evaluate", reached)
    monkeypatch.setattr(jaxsched.sim.chunked, "schedule_window", reached)


@contextmanager
def _deadline(seconds: int):
    """A read that blocks (a FIFO without a writer) fails the test instead of hanging it."""

    def expired(signum, frame):
        raise TimeoutError(f"still reading after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("name,content,expected", CASES, ids=[c[0] for c in CASES])
def test_hostile_trace_is_one_line_error(name, content, expected, tmp_path, capsys, no_simulation):
    f = tmp_path / f"{name}.swf"
    _make(f, content)
    out_file = tmp_path / "schedule.swf"
    want = "jaxsched: error: " + expected.format(f=f)
    commands = (
        ["trace", "info", str(f)],
        ["evaluate", str(f)],
        ["simulate", str(f), "--out", str(out_file)],
    )
    for argv in commands:
        with _deadline(30):
            rc = main(argv)
        out, err = capsys.readouterr()
        assert rc == 2, (argv, out, err)
        assert out == "", (argv, out)
        assert "Traceback" not in err, (argv, err)
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(want), (argv, err, want)
        assert not out_file.exists(), argv


def test_bom_is_stripped(tmp_path, capsys):
    f = tmp_path / "bom.swf"
    f.write_text("\ufeff" + HEADER + ok_jobs())
    t = read_swf(f)
    assert t.n_jobs == 3 and t.max_nodes == 8 and t.line.tolist() == [4, 5, 6]
    assert parse_swf("\ufeff" + HEADER + ok_jobs()).records_equal(t)
    assert main(["trace", "info", str(f)]) == 0
    assert "jobs:         3" in capsys.readouterr().out


def test_skip_mode_drops_the_new_kinds(tmp_path):
    """--skip-bad-lines drops repeated numbers, strict-token failures and out-of-range times
    like any bad line (counted, one warning)."""
    text = (
        HEADER
        + job(1, 0)
        + job(1, 5)  # repeated number
        + job(2, "+7")  # plus sign
        + job(3, 10, run=2**60)  # beyond 2^53
        + job(4, 20)
    )
    with pytest.warns(Warning, match="skipped 3 bad line"):
        t = parse_swf(text, path="s.swf", on_error="skip")
    assert t.job_id.tolist() == [1, 4] and t.line.tolist() == [4, 8]
    assert [m.split(": ")[1] for m in t.skipped] == [
        "job_id (field 1)",
        "submit (field 2)",
        "run (field 4)",
    ]


def test_generator_refuses_a_machine_beyond_int32(tmp_path, capsys):
    out = tmp_path / "l.swf"
    argv = ["trace", "generate", "lublin", "--jobs", "3", "--seed", "1", "--out", str(out)]
    assert main([*argv, "--nodes", "1000000000000"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "jaxsched: error: --nodes must be an integer in 2..2147483647, got 1000000000000"
    ]
    assert not out.exists()


# ----------------------------------------------------------------------------------------------
# property: any SWF text parses to jobs that keep the promises, or is one one-line SWFError
# ----------------------------------------------------------------------------------------------
HOSTILE_TOKENS = ("+12", "1_000", "nan", "inf", "-inf", "1e2", "3.0", "10.5", "abc", "0x10",
                  str(E53), str(E53 + 1), str(2**63), str(2**64), str(I31), "1e400", "-0")  # fmt: skip
BIG_VALUES = (E53 // 4, E53 // 2, E53 - 1, E53, E53 + 1, 2**62, I31 - 1, I31, -2)
HEADERS = ("; MaxNodes: 8\n", "; MaxNodes: 8\n; MaxProcs: 16\n", "; MaxNodes: 16\n; MaxProcs: 8\n",
           "")  # fmt: skip
BAD_HEADERS = ("; MaxNodes: 0\n", "; MaxNodes: 2147483648\n", "; MaxProcs: 10000000000\n",
               "; MaxNodes: many\n")  # fmt: skip


@st.composite
def swf_texts(draw):
    """SWF text: well-formed job lines (small values, -1 and 0 among them, job numbers now and
    then permuted, a first submit time of -1 now and then) with, at a drawn rate, hostile
    values, tokens, field counts and headers; blank and comment lines, CRLF and a BOM."""
    hostile = draw(st.integers(0, 3))  # 0: no hostile value at all

    def rare() -> bool:
        return hostile > 0 and draw(st.integers(0, 24 // hostile)) == 0

    def value(lo, hi):
        return draw(st.sampled_from(BIG_VALUES)) if rare() else draw(st.integers(lo, hi))

    n = draw(st.integers(0 if hostile else 1, 8))
    ids = list(range(1, n + 1))
    if draw(st.integers(0, 4)) == 0:
        ids = draw(st.permutations(ids))
    lines, submit = [], draw(st.sampled_from((0, 0, 0, 3, 5, 7, -1)))
    for i in range(n):
        if i:
            submit += -draw(st.integers(1, 5)) if rare() else draw(st.integers(0, 30))
        f = [
            draw(st.integers(-1, n)) if rare() else ids[i],
            draw(st.sampled_from(BIG_VALUES)) if rare() else submit,
            value(-1, 50),  # wait
            value(-1, 100),  # run
            value(-1, 10),  # allocated processors
            -1,
            -1,
            value(-1, 10),  # requested processors
            value(-1, 200),  # requested time
            *([-1] * 9),
        ]
        toks = [str(v) for v in f]
        if rare():
            toks[draw(st.integers(0, 17))] = draw(st.sampled_from(HOSTILE_TOKENS))
        if rare():
            toks = toks[: draw(st.integers(0, 19))]
        lines.append(" ".join(toks))
        if draw(st.integers(0, 8)) == 0:
            lines.append(draw(st.sampled_from(("", "; a comment", "  "))))
    bom = "\ufeff" if draw(st.integers(0, 8)) == 0 else ""
    eol = draw(st.sampled_from(("\n", "\r\n")))
    header = draw(st.sampled_from(BAD_HEADERS if rare() else HEADERS))
    return bom + header + eol.join(lines) + (eol if lines else "")


def _check_trace(t) -> None:
    ints = np.stack([getattr(t, n) for n in ("submit", "wait", "run", "req_time", "job_id")])
    assert np.abs(ints).max() <= E53
    assert np.all(np.diff(t.submit) >= 0)
    assert len(np.unique(t.job_id)) == t.n_jobs
    need = np.maximum(t.alloc_procs, t.req_procs)
    assert need.max() < I31
    if t.max_procs is not None or t.max_nodes is not None:
        assert need.max() <= t.num_procs
    longest = np.maximum(np.maximum(t.run, t.req_time), 0)
    assert np.all(t.submit + np.maximum(t.wait, 0) + longest <= E53)


def _check_jobs(j) -> None:
    assert j.n_jobs >= 1
    assert j.submit[0] >= 0 and np.all(np.diff(j.submit) >= 0)
    assert np.all(j.submit + np.maximum(j.run, 0) <= E53) and j.req_time.max() <= E53
    assert j.procs.max() <= j.num_procs < I31 and j.num_nodes < I31
    assert len(np.unique(j.job_id)) == j.n_jobs


def _one_line(e: SWFError) -> None:
    assert "\n" not in str(e) and str(e).startswith("h.swf"), str(e)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=swf_texts(), skip=st.booleans())
def test_any_text_parses_to_sound_jobs_or_one_line_error(text, skip):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t = parse_swf(text, path="h.swf", on_error="skip" if skip else "raise")
        except SWFError as e:
            _one_line(e)
            return
    _check_trace(t)
    for rules in RULES:
        try:
            j = t.jobs(rules)
        except SWFError as e:
            _one_line(e)
            continue
        _check_jobs(j)
