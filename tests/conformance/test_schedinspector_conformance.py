"""``jaxsched conformance`` on SchedInspector files (schema ``schedinspector-runs``).

1. a subset of the shipped Lublin-2 file (2 starts × 2 bases, no backfilling, every inspector
   and metric: 60 values + decision / rejection counts) through the real command: all match;
   the full 3,600 rows run with ``jaxsched conformance shared/reference/schedinspector``;
2. the same rows with a rule the file never had (R4: R1 without its rejection cap) carrying
   R1's values: the command reports R4 rows, and only those, as mismatches (exit 1);
3. malformed rule definitions and unknown bases: exit 2, one line.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from shared_data import SHARED

from jaxsched.conformance.cli import main

REF = SHARED / "reference" / "schedinspector" / "lublin_256_new2-seq256.json"
TRACES = SHARED / "traces"


def run_main(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def subset():
    doc = json.loads(REF.read_text())
    keep = {168, 942}
    doc["results"] = [
        r
        for r in doc["results"]
        if r["start"] in keep and r["base"] in ("sjf", "f1") and r["backfill"] == "none"
    ]
    return doc


def test_subset_matches(tmp_path, subset):
    f = tmp_path / "si.json"
    f.write_text(json.dumps(subset))
    rc, out, err = run_main([f, "--traces", TRACES, "--json"])
    assert rc == 0, (out, err)
    rep = json.loads(out)["files"][0]
    assert rep["schema"] == "schedinspector-runs"
    n_counts = sum(r["decisions"] is not None for r in subset["results"])
    assert len(subset["results"]) == 60
    assert rep["total"] == rep["matched"] == 60 + 2 * n_counts


def test_unseen_rule_and_wrong_values(tmp_path, subset):
    doc = json.loads(json.dumps(subset))
    doc["protocol"]["rules"]["R4"] = {
        "reject_iff_all": [{"feature": 4, "op": "<=", "threshold": 0.5}]
    }
    # R4 = R1 without its 3-rejection cap, given R1's values; R3's rows make room (same batch)
    n = len(doc["results"])
    doc["results"] = [r for r in doc["results"] if r["inspector"] != "R3"]
    doc["results"] += [dict(r, inspector="R4") for r in doc["results"] if r["inspector"] == "R1"]
    first_r4 = len(doc["results"]) - 12
    f = tmp_path / "si.json"
    f.write_text(json.dumps(doc))
    rc, out, err = run_main([f, "--traces", TRACES, "--json"])
    rep = json.loads(out)["files"][0]
    assert rc == 1
    bad = {m["where"].split(".")[0] for m in rep["mismatches"]}
    assert n == 60 and bad and all(int(w[8:-1]) >= first_r4 for w in bad)


@pytest.mark.parametrize(
    "change, what",
    [
        (lambda d: d["protocol"]["rules"]["R1"].update(reject_iff_all=[{"feature": 1}]), "op"),
        (lambda d: d["results"][0].update(base="nope"), "results[0].base"),
        (lambda d: d["results"][1].update(inspector="R9"), "results[1].inspector"),
    ],
)
def test_malformed(tmp_path, subset, change, what):
    doc = json.loads(json.dumps(subset))
    change(doc)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    rc, out, err = run_main([f, "--traces", TRACES])
    assert rc == 2 and what in err and len(err.strip().splitlines()) == 1, err
