"""Tests of ``jaxsched conformance`` (jaxsched/conformance).

1. both shipped RLScheduler reference files (shared/reference/*-seq1024.json): every value
   matched, exit 0 (one module-scoped run, JSON output);
2. a copy with one value perturbed: exit 1, the mismatch named with -v;
3. a file the command has never seen, generated here by the plain-Python oracle (independent of
   the JAX engine) for another trace (SDSC-BLUE: 8 processors per node), other starts, other
   policies, an incomplete grid: every value matched; the same file with a wrong
   ``loaded_jobs``: exit 1;
4. malformed files (not JSON, missing or ill-typed fields, unknown schema, trace not found,
   unknown policy, the other systems' schemas): exit 2 and one line naming the file;
plus the comparison rule and the default traces folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import shutil

import pytest
from shared_data import REPO, SHARED

from jaxsched.conformance.base import default_traces_dir, value_error
from jaxsched.conformance.cli import main

# the files replay thousands of 1024-job runs: XLA's optimised programs run them 4x faster
pytestmark = pytest.mark.xla_full_opt

REF = SHARED / "reference"
TRACES = SHARED / "traces"
SHIPPED = ("lublin_256_new2-seq1024.json", "HPC2N-2002-2.2-cln-seq1024.json")


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


# ----------------------------------------------------------------------------------------------
# 1. The shipped files
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shipped():
    rc, out, err = run_main([*(REF / f for f in SHIPPED), "--traces", TRACES, "--json"])
    return rc, json.loads(out), err


def test_shipped_files_all_match(shipped):
    rc, doc, err = shipped
    assert rc == 0, err
    files = {f["file"]: f for f in doc["files"]}
    assert list(files) == [str(REF / f) for f in SHIPPED]
    for f, trace in zip(files.values(), ("lublin_256_new2.swf.gz", "HPC2N-2002-2.2-cln.swf.gz")):
        assert f["schema"] == "rlscheduler-sequences"
        assert f["trace"] == trace
        assert f["total"] == f["matched"] == 900, f["mismatches"][:3]
        assert f["ok"] and not f["mismatches"]
        assert 0 <= f["worst_error"] <= 1e-9
        assert f["evaluations"] == 1  # one batched simulator call per file
    s = doc["summary"]
    assert (s["total"], s["matched"], s["errors"], s["status"]) == (1800, 1800, 0, 0)
    assert s["wall_s"] > 0


# ----------------------------------------------------------------------------------------------
# 2. One value perturbed
# ----------------------------------------------------------------------------------------------
def test_perturbed_value_is_named(tmp_path, shipped):
    doc = json.loads((REF / SHIPPED[0]).read_text())
    k = next(
        i
        for i, r in enumerate(doc["results"])
        if (r["policy"], r["backfill"], r["metric"]) == ("f3", "rlscheduler", "bsld")
    )
    row = doc["results"][k]
    old = row["value"]
    row["value"] = old * (1 + 1e-6)
    bad = tmp_path / SHIPPED[0]
    bad.write_text(json.dumps(doc))
    rc, out, err = run_main([bad, "--traces", TRACES, "-v"])
    assert rc == 1, out + err
    assert "899/900 matched" in out and "MISMATCH" in out
    lines = [ln for ln in out.splitlines() if ln.strip().startswith("mismatch:")]
    assert len(lines) == 1, out
    ln = lines[0]
    assert str(bad) in ln and f"results[{k}]" in ln
    for field in ("start", "jobs", "policy", "backfill", "metric"):
        assert f"{field}={row[field]}" in ln
    got = re.search(r"expected (\S+) got (\S+) ", ln)
    assert got and float(got[1]) == row["value"], ln  # the file's (perturbed) value
    assert float(got[2]) == pytest.approx(old, rel=1e-9, abs=1e-9), ln  # ours


# ----------------------------------------------------------------------------------------------
# 3. A file it has never seen, from the plain-Python oracle
# ----------------------------------------------------------------------------------------------
UNSEEN_TRACE = "SDSC-BLUE-2000-4.2-cln.swf.gz"


def oracle_file(
    trace, starts, length: int, policies, backfills, metrics, compat: bool = True
) -> dict:
    """A reference file in the rlscheduler-sequences schema computed by jaxsched.sim.oracle
    (which shares no code with the JAX engine); every third value is left out, so the rows do
    not form a full grid."""
    from jaxsched.sim import oracle
    from jaxsched.workload import read_swf

    jobs = read_swf(trace).jobs("rlscheduler")
    cols = [c.tolist() for c in (jobs.submit, jobs.run, jobs.req_time, jobs.procs)]
    rows, n = [], 0
    for a in starts:
        s, r, q, p = (c[a : a + length] for c in cols)
        for policy in policies:
            for bf in backfills:
                st = oracle.simulate(
                    s,
                    r,
                    q,
                    p,
                    num_nodes=int(jobs.num_nodes),
                    procs_per_node=float(jobs.procs_per_node),
                    policy=policy,
                    backfill=bf,
                    compat=compat,
                )
                m = oracle.metrics(s, r, p, st, num_procs=jobs.num_procs, compat=compat)
                for metric in metrics:
                    n += 1
                    if n % 3:
                        rows.append(
                            {
                                "start": a,
                                "jobs": length,
                                "policy": policy,
                                "backfill": bf,
                                "metric": metric,
                                "value": m[metric],
                            }
                        )
    return {
        "trace": trace.name.removesuffix(".gz"),
        "loaded_jobs": jobs.n_jobs,
        "jobs_per_sequence": length,
        "results": rows,
    }


@pytest.fixture(scope="module")
def unseen():
    return oracle_file(
        TRACES / UNSEEN_TRACE,
        starts=(17, 120_000, 243_280 - 200),
        length=200,
        policies=("saf", "srf", "ljf", "lcfs", "f2", "wfp3"),
        backfills=("rlscheduler", "none"),
        metrics=("bsld", "wait", "util", "sld", "turnaround"),
    )


def test_unseen_oracle_file_all_match(tmp_path, unseen):
    f = tmp_path / "sdsc-blue-oracle.json"
    f.write_text(json.dumps(unseen))
    rc, out, err = run_main([f, "--traces", TRACES, "--json"])
    assert rc == 0, out + err
    (rep,) = json.loads(out)["files"]
    n = len(unseen["results"])
    assert n == 3 * 6 * 2 * 5 * 2 // 3
    assert rep["total"] == rep["matched"] == n, rep["mismatches"][:3]
    assert rep["trace"] == UNSEEN_TRACE and rep["worst_error"] <= 1e-9


def test_text_output(tmp_path, unseen):
    f = tmp_path / "sdsc-blue-oracle.json"
    f.write_text(json.dumps(unseen))
    rc, out, err = run_main([f, "--traces", TRACES])
    assert rc == 0, out + err
    line, summary = out.strip().splitlines()
    n = len(unseen["results"])
    assert re.fullmatch(
        rf"{re.escape(str(f))}  rlscheduler-sequences  trace {UNSEEN_TRACE}  {n}/{n} matched  "
        r"worst \|err\| \S+  \d+\.\d s  ok",
        line,
    ), line
    assert re.fullmatch(
        rf"conformance: 1 file\(s\) checked, 0 error\(s\), {n}/{n} values matched, worst "
        r"\|err\| \S+ \(tolerance 1e-09\); wall \d+\.\d s: all matched",
        summary,
    ), summary


def test_unseen_correct_mode_file(tmp_path):
    """The schema's "semantics": "correct" extension: true EASY backfilling, WFP3/UNICEP from
    the real waiting time, utilization over the makespan (another compiled program)."""
    doc = oracle_file(
        REPO / "traces" / "lublin-2.swf",
        starts=(3, 7_000),
        length=64,
        policies=("wfp3", "sjf", "lcfs"),
        backfills=("easy", "none"),
        metrics=("bsld", "util", "wait"),
        compat=False,
    )
    doc["semantics"] = "correct"
    f = tmp_path / "lublin2-correct.json"
    f.write_text(json.dumps(doc))
    rc, out, err = run_main([f, "--traces", REPO / "traces", "--json"])
    assert rc == 0, out + err
    (rep,) = json.loads(out)["files"]
    assert rep["total"] == rep["matched"] == len(doc["results"]) == 24
    # the same values are not those of the reference semantics
    f.write_text(json.dumps({**doc, "semantics": "rlscheduler"}))
    rc, out, err = run_main([f, "--traces", REPO / "traces"])
    assert_one_error_line(rc, out, err, f, "].backfill: 'easy' is not part of the reference")


def test_unseen_file_wrong_loaded_jobs(tmp_path, unseen):
    doc = {**unseen, "loaded_jobs": unseen["loaded_jobs"] + 1}
    f = tmp_path / "wrong-count.json"
    f.write_text(json.dumps(doc))
    rc, out, err = run_main([f, "--traces", TRACES, "-v"])
    assert rc == 1, out + err
    assert f"loaded_jobs {doc['loaded_jobs']} != {unseen['loaded_jobs']}" in out
    assert "mismatch:" in out and "loaded_jobs" in out


# ----------------------------------------------------------------------------------------------
# 4. Files that cannot be checked: exit 2, one line naming the file
# ----------------------------------------------------------------------------------------------
def tiny_doc(**top) -> dict:
    row = {"start": 0, "jobs": 16, "policy": "sjf", "backfill": "none", "metric": "bsld"}
    doc = {"trace": "lublin-1.swf", "jobs_per_sequence": 16, "results": [{**row, "value": 1.0}]}
    doc.update(top)
    return doc


def _drop(d: dict, key: str) -> dict:
    return {k: v for k, v in d.items() if k != key}


MALFORMED = {
    "not-json": ("{ not json", "not JSON"),
    "not-utf8": (b"\xff\xfe{", "not UTF-8"),
    "missing-trace": (_drop(tiny_doc(), "trace"), "trace: missing field"),
    "missing-metric": (
        tiny_doc(results=[_drop(tiny_doc()["results"][0], "metric")]),
        "results[0].metric: missing field",
    ),
    "bad-start": (
        tiny_doc(results=[{**tiny_doc()["results"][0], "start": "0"}]),
        "results[0].start: must be an integer",
    ),
    "bad-value": (
        tiny_doc(results=[{**tiny_doc()["results"][0], "value": None}]),
        "results[0].value: must be a number",
    ),
    "empty-results": (tiny_doc(results=[]), "results: no values"),
    "unknown-schema": ({"foo": 1, "bar": [1]}, "unknown schema"),
    "json-list": ([1, 2, 3], "unknown schema"),
    "trace-missing": (tiny_doc(trace="no-such-trace.swf"), "trace: 'no-such-trace.swf' not found"),
    "unknown-policy": (
        tiny_doc(results=[{**tiny_doc()["results"][0], "policy": "xyz"}]),
        "results[0].policy: unknown policy 'xyz'",
    ),
    "random-policy": (
        tiny_doc(results=[{**tiny_doc()["results"][0], "policy": "random"}]),
        "results[0].policy:",
    ),
    "past-end": (
        tiny_doc(results=[{**tiny_doc()["results"][0], "start": 9_990}]),
        "results[0].start:",
    ),
    "bad-semantics": (tiny_doc(semantics="fast"), "semantics: must be one of"),
}


def assert_one_error_line(rc: int, out: str, err: str, file, what: str) -> None:
    assert rc == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"jaxsched: error: {file}: "), lines[0]
    assert what in lines[0], lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_file(tmp_path, case):
    content, what = MALFORMED[case]
    f = tmp_path / f"{case}.json"
    if isinstance(content, bytes):
        f.write_bytes(content)
    elif isinstance(content, str):
        f.write_text(content)
    else:
        f.write_text(json.dumps(content))
    rc, out, err = run_main([f, "--traces", REPO / "traces"])
    assert_one_error_line(rc, out, err, f, what)


def test_missing_file(tmp_path):
    f = tmp_path / "absent.json"
    rc, out, err = run_main([f, "--traces", REPO / "traces"])
    assert_one_error_line(rc, out, err, f, "No such file")


def test_schema_tag_decides(tmp_path):
    f = tmp_path / "tagged.json"
    f.write_text(json.dumps(tiny_doc(schema="cqsim-reference/1")))
    rc, out, err = run_main([f, "--traces", REPO / "traces"])
    assert_one_error_line(rc, out, err, f, "slices: missing field")  # the cqsim checker's
    # an explicit rlscheduler tag wins over a SchedInspector-like protocol block
    doc = tiny_doc(schema="rlscheduler-sequences", protocol={}, trace="absent.swf")
    f.write_text(json.dumps(doc))
    rc, out, err = run_main([f, "--traces", REPO / "traces"])
    assert_one_error_line(rc, out, err, f, "trace: 'absent.swf' not found")
    f.write_text(json.dumps(tiny_doc(schema="something-else")))
    rc, out, err = run_main([f, "--traces", REPO / "traces"])
    assert_one_error_line(rc, out, err, f, "unknown schema")


def test_usage_and_help(capsys):
    assert main(["--tolerance", "-1", "x.json"]) == 2
    assert "--tolerance" in capsys.readouterr().err
    assert main(["--help"]) == 0
    help_text = capsys.readouterr().out
    for name in ("rlscheduler-sequences", "schedinspector", "cqsim-reference", "deeprm"):
        assert name in help_text


def test_the_jaxsched_command_runs_conformance(tmp_path):
    """``jaxsched conformance`` (the real command line) reaches this command."""
    from jaxsched.cli import main as jaxsched_main

    f = tmp_path / "x.json"
    f.write_text("[]")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert jaxsched_main(["conformance", str(f), "--tolerance", "1e-6"]) == 2
    assert "unknown schema" in err.getvalue()


def test_errors_do_not_stop_other_files(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("[]")
    b.write_text(json.dumps(tiny_doc(trace="nope.swf")))
    rc, out, err = run_main([a, b, "--traces", REPO / "traces"])
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 2 and str(a) in lines[0] and str(b) in lines[1]
    assert "2 error(s)" in out


# ----------------------------------------------------------------------------------------------
# Comparison rule and the default traces folder
# ----------------------------------------------------------------------------------------------
def test_value_error():
    assert value_error(1000.0, 1000.0 + 1e-6) == pytest.approx(1e-9)  # relative above 1
    assert value_error(0.5, 0.5 + 1e-10) == pytest.approx(1e-10)  # absolute below 1
    assert value_error(0.0, 0.0) == 0.0
    assert value_error(math.inf, math.inf) == 0.0
    assert value_error(math.nan, math.nan) == 0.0
    assert value_error(1.0, math.nan) == math.inf
    assert value_error(1.0, None) == math.inf
    assert value_error(-math.inf, math.inf) == math.inf


def _unknown_policy_doc(tmp_path):
    """A file whose trace is looked up before the simulator rejects its policy: the error tells
    whether the trace was found."""
    f = tmp_path / "lookup.json"
    f.write_text(json.dumps(tiny_doc(results=[{**tiny_doc()["results"][0], "policy": "xyz"}])))
    return f


def test_default_traces_dir_beside_cwd(tmp_path, monkeypatch):
    (tmp_path / "shared" / "traces").mkdir(parents=True)
    shutil.copy(REPO / "traces" / "lublin-1.swf", tmp_path / "shared" / "traces")
    (tmp_path / "work").mkdir()
    monkeypatch.delenv("JAXSCHED_SHARED", raising=False)
    monkeypatch.chdir(tmp_path / "work")
    assert str(default_traces_dir()) == "../shared/traces"
    f = _unknown_policy_doc(tmp_path)
    rc, out, err = run_main([f])
    assert_one_error_line(rc, out, err, f, "unknown policy")  # found ../shared/traces/lublin-1


def test_default_traces_dir_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXSCHED_SHARED", str(tmp_path / "elsewhere"))
    monkeypatch.chdir(tmp_path)
    assert default_traces_dir() == tmp_path / "elsewhere" / "traces"
    f = _unknown_policy_doc(tmp_path)
    rc, out, err = run_main([f])
    assert_one_error_line(rc, out, err, f, "does not exist")
    assert str(tmp_path / "elsewhere" / "traces") in err
    (tmp_path / "elsewhere" / "traces").mkdir(parents=True)
    shutil.copy(REPO / "traces" / "lublin-1.swf", tmp_path / "elsewhere" / "traces")
    rc, out, err = run_main([f])
    assert_one_error_line(rc, out, err, f, "unknown policy")
