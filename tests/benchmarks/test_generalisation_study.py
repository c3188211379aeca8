"""benchmarks/paper/generalisation_study.py (issue 49's study): the rows of
benchmarks/data/generalisation-study.json are complete and consistent, each names a notebook
section that exists, the printed table and the closest rows of a hand-made study, the two PNGs."""

from __future__ import annotations

import json
import re

import pytest
from shared_data import REPO, load_benchmark

G = load_benchmark("generalisation_study")
NOTEBOOK = REPO / "docs" / "notebook"

STR, INT, NUM, BOOL = (str,), (int,), (int, float), (bool,)
#: every field of a row and the types its value may have (None where listed)
FIELDS = {
    "id": STR, "system": STR, "trace": STR, "backfilling": STR, "method": STR, "model": STR,
    "training_jobs_distinct": INT + (type(None),), "epochs": INT + (type(None),),
    "sequences_per_epoch": INT + (type(None),), "training_sequence_length": INT + (type(None),),
    "jobs_scheduled_in_training": INT + (type(None),), "jobs_scheduled_note": STR + (type(None),),
    "chosen_on": STR, "test_jobs": STR, "test_sequences": INT,
    "test_sequence_length": INT + (type(None),), "test_seed": INT + (type(None),),
    "baseline": STR, "baseline_mean": NUM + (type(None),), "baselines_compared": STR,
    "vs_strongest": BOOL, "margin_mean": NUM, "margin_se": NUM,
    "margin_pct": NUM + (type(None),), "margin_pct_derived": BOOL,
    "margin_vs_f1_mean": NUM + (type(None),), "margin_vs_f1_se": NUM + (type(None),),
    "margin_vs_f1_pct": NUM + (type(None),), "metric": STR, "section": STR, "command": STR,
    "training_command": STR + (type(None),), "notes": STR + (type(None),),
    "ceiling_mean": NUM + (type(None),), "ceiling_margin_pct": NUM + (type(None),),
    "gap_closed": NUM + (type(None),),
}  # fmt: skip
CHOSEN_ON = {
    "validation",
    "training log/paper",
    "validation over the whole trace (test jobs included)",
}


def row(**kw) -> dict:
    """A row with every field: a made-up measurement, ``kw`` on top."""
    r = {
        "id": "x", "system": "RLScheduler", "trace": "T", "backfilling": "none",
        "method": "residual over F1", "model": "m", "training_jobs_distinct": 1000, "epochs": 2,
        "sequences_per_epoch": 10, "training_sequence_length": 100,
        "jobs_scheduled_in_training": 2000, "jobs_scheduled_note": None,
        "chosen_on": "validation", "test_jobs": "test split", "test_sequences": 200,
        "test_sequence_length": 1024, "test_seed": 0, "baseline": "F1", "baseline_mean": 50.0,
        "baselines_compared": "F1-F4", "vs_strongest": True, "margin_mean": -3.0,
        "margin_se": 1.0, "margin_pct": -6.0, "margin_pct_derived": False,
        "margin_vs_f1_mean": None, "margin_vs_f1_se": None, "margin_vs_f1_pct": None,
        "metric": "bsld", "section": "22-generalisation.md §22.7", "command": "cmd x",
        "training_command": None, "notes": None, "ceiling_mean": None,
        "ceiling_margin_pct": None, "gap_closed": None,
    }  # fmt: skip
    r.update(kw)
    return r


def test_field_types_are_checked():
    """The checks below catch a missing field and a wrong type."""
    assert problems(row()) == []
    bad = row(test_sequences="200")
    del bad["metric"]
    assert problems(bad) == ["x: fields", "x: test_sequences"]


def problems(r) -> list[str]:
    out = [] if set(r) == set(FIELDS) else [f"{r.get('id')}: fields"]
    out += [f"{r['id']}: {k}" for k, t in FIELDS.items() if k in r and not isinstance(r[k], t)]
    return out


@pytest.fixture(scope="module")
def rows():
    return G.load(G.DEFAULT)


def test_every_row_has_every_field_with_its_type(rows):
    assert len(rows) > 50
    assert [p for r in rows for p in problems(r)] == []
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        assert r["chosen_on"] in CHOSEN_ON, r["id"]
        assert not isinstance(r["test_sequences"], bool) and r["test_sequences"] > 0, r["id"]
        assert r["margin_se"] >= 0, r["id"]
        if r["jobs_scheduled_in_training"] is None:  # a reason where the count is missing
            assert r["jobs_scheduled_note"], r["id"]
        counts = (r["epochs"], r["sequences_per_epoch"], r["training_sequence_length"])
        if None not in counts:
            assert r["jobs_scheduled_in_training"] == counts[0] * counts[1] * counts[2], r["id"]
        f1 = (r["margin_vs_f1_mean"], r["margin_vs_f1_se"])
        assert (f1[0] is None) == (f1[1] is None), r["id"]


def test_percentages_agree_with_the_margin_and_the_baseline(rows):
    """Transcription check: where a row has both, margin / baseline mean is its % to the
    source's rounding (one decimal at least), and a derived % is exactly that, to 2 decimals."""
    for r in rows:
        if r["margin_pct"] is None or not r["baseline_mean"]:
            assert not r["margin_pct_derived"], r["id"]
            continue
        pct = 100 * r["margin_mean"] / r["baseline_mean"]
        assert r["margin_pct"] == pytest.approx(pct, abs=0.06), r["id"]
        if r["margin_pct_derived"]:
            assert r["margin_pct"] == round(pct, 2), r["id"]


def test_every_section_exists_in_the_notebook(rows):
    for r in rows:
        name, sec = re.fullmatch(r"(\S+\.md) §(\d+\.\d+)", r["section"]).groups()
        page = NOTEBOOK / name
        assert page.is_file(), r["section"]
        assert re.search(rf"^## {re.escape(sec)} ", page.read_text(), re.M), r["section"]


def test_the_closest_rows_the_notebook_names(rows):
    """§22.8 names these: over every system, and over RLScheduler's rows alone."""
    c = G.closest(rows)
    assert (c["se"]["id"], c["pct"]["id"]) == ("si-sdsc-sjf-split", "si-lublin1-f1")
    rl = G.closest([r for r in rows if r["system"] == "RLScheduler"])
    assert rl["se"]["id"] == rl["pct"]["id"] == "rl-resid-lublin-f1-t2"


def two_rows():
    """Same method, traces out of order; B is closer in standard errors (−10), A in % (−6)."""
    a = row(id="A", trace="b", model="ma", margin_vs_f1_mean=-3.0, margin_vs_f1_se=1.5)
    b = row(id="B", trace="a", model="mb", backfilling="rlscheduler", margin_mean=-1.0,
            margin_se=0.1, margin_pct=-2.0, jobs_scheduled_in_training=None, epochs=None,
            jobs_scheduled_note="not recorded", section="21-held-out-tables.md §21.9",
            command="cmd b")  # fmt: skip
    return [a, b]


EXPECTED_TABLE = """\
| method | trace | backfilling | model | metric | training jobs (distinct) | jobs scheduled in training | chosen on | test: sequences × jobs | baseline: mean | strongest | model − baseline (paired) | % | in s.e. | − F1 (paired) | id | § |
|---|---|---|---|---|---:|---:|---|---|---|---|---:|---:|---:|---|---|---|
| residual over F1 | a | rlscheduler | `mb` | bsld | 1,000 | — | validation | 200 × 1,024 | F1: 50 | yes | −1.0 ± 0.1 | −2.0 % | −10.0 |  | B | 21-held-out-tables.md §21.9 |
| residual over F1 | b | none | `ma` | bsld | 1,000 | 2,000 | validation | 200 × 1,024 | F1: 50 | yes | −3 ± 1 | −6.0 % | −3.0 | −3.0 ± 1.5 | A | 22-generalisation.md §22.7 |"""


def test_two_rows_print_the_table_and_the_closest(tmp_path, capsys):
    path = tmp_path / "study.json"
    path.write_text(json.dumps({"rows": two_rows()}))
    assert G.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(EXPECTED_TABLE + "\n\n")
    closest = [ln for ln in out.splitlines() if ln.startswith("- all systems")]
    assert closest == [
        "- all systems, in standard errors: B (residual over F1; a, backfilling rlscheduler; "
        "`mb` against F1): −1.0 ± 0.1, −2.0 %, −10.0 s.e.: beats it at two standard errors, by "
        "under 5 % [21-held-out-tables.md §21.9]",
        "- all systems, in %: A (residual over F1; b, backfilling none; `ma` against F1): "
        "−3 ± 1, −6.0 %, −3.0 s.e.: beats it at two standard errors, by 5 % or more (issue 49's "
        "bar, in this row's setting) [22-generalisation.md §22.7]",
    ]
    assert "- B:\n\n      cmd b\n" in out and "- A:\n\n      cmd x\n" in out


def test_closest_keeps_to_the_strongest_baselines_unless_asked():
    a, b = two_rows()
    b["vs_strongest"] = False
    assert G.closest([a, b])["se"]["id"] == "A"
    assert G.closest([a, b], all_baselines=True)["se"]["id"] == "B"
    assert G.closest([b]) == {"se": None, "pct": None}


def test_grouped_by_method_then_trace():
    rs = [row(id="1", method="m2", trace="z"), row(id="2", method="m1", trace="y"),
          row(id="3", method="m2", trace="a")]  # fmt: skip
    assert [r["id"] for r in G.ordered(rs)] == ["3", "1", "2"]


def test_plots_write_two_pngs(tmp_path, capsys):
    path = tmp_path / "study.json"
    rows = two_rows()
    rows[1]["epochs"] = 5  # 5,000 jobs scheduled in training (derived by load)
    path.write_text(json.dumps({"rows": rows}))
    assert G.main([str(path), "--no-commands", "--plots", str(tmp_path / "png")]) == 0
    assert "cmd x" not in capsys.readouterr().out
    for name in G.PLOT_FILES:
        data = (tmp_path / "png" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name


def test_planner_rows_carry_the_ceiling_and_the_gap(rows):
    """The look-ahead planners' rows (issue 63): no training, a ceiling below the baseline and
    the share of the gap closed agreeing with the margin; the other rows have none."""
    planners = [r for r in rows if r["method"] == "planner"]
    assert len(planners) >= 6
    for r in rows:
        if r["method"] != "planner":
            assert (r["ceiling_mean"], r["gap_closed"]) == (None, None), r["id"]
            continue
        assert r["jobs_scheduled_in_training"] is None and r["chosen_on"] == "validation"
        gap = r["baseline_mean"] - r["ceiling_mean"]
        assert gap > 0, r["id"]
        want = pytest.approx(-r["margin_mean"] / gap, rel=5e-3, abs=2e-3)
        assert r["gap_closed"] == want, r["id"]
