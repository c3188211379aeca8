"""The documentation cannot disagree with itself: every results block of README.md, docs/ and
the model cards is what ``benchmarks/docs/generate_pages.py`` writes from
``benchmarks/data/results.json``; the cards, installed as package data, speak to users (no
work-process words, no pointers into the uninstalled benchmarks/); README stays short.
Host-side text checks only (no JAX)."""

from __future__ import annotations

import re

import pytest
from shared_data import REPO, load_benchmark

gen = load_benchmark("generate_pages")
CARDS = sorted((REPO / "jaxsched" / "models").glob("*/README.md"))


def test_every_page_is_what_the_generator_writes():
    stale = gen.stale()
    assert not stale, (
        f"stale generated blocks in {sorted(stale)}: "
        "PYTHONPATH=. .venv/bin/python benchmarks/docs/generate_pages.py"
    )


def test_a_hand_edit_inside_a_block_is_caught():
    page = REPO / "docs" / "results.md"
    text = page.read_text()
    assert "**+967.87 ± 64.58 (+221.46 %)**" in text
    edited = text.replace("**+967.87 ± 64.58 (+221.46 %)**", "**+41.36 ± 64.58 (+9.00 %)**")
    assert gen.regenerate(edited, page, gen.load()) == text


def test_an_edit_of_a_record_reaches_every_page_that_shows_it():
    records = gen.load()
    (rec,) = [r for r in records if r["id"] == "rl-heldout-sdsc-none"]
    rec["diff"] = 1234.5
    changed = gen.stale(records)
    for page in [
        "docs/results.md",
        "docs/systems/rlscheduler.md",
        "jaxsched/models/sdsc-none/README.md",
    ]:
        assert page in changed and "+1,234.50 ± 64.58" in changed[page]


def test_every_block_has_an_end_and_a_known_name():
    for page in gen.pages():
        text = page.read_text()
        starts = text.count("<!-- generated: ")
        assert starts == text.count(gen.END), page
        for m in gen.BLOCK.finditer(text):
            gen.render(m.group(1), gen.load(), page)  # KeyError on an unknown name


def test_every_record_names_its_source():
    notebook = REPO / "docs" / "notebook"
    for r in gen.load():
        for key in (
            "id",
            "system",
            "protocol",
            "section",
            "notebook",
            "commit",
            "date",
            "machine",
            "command",
        ):
            assert r.get(key), (r["id"], key)
        assert r["protocol"] in {"held-out", "in-sample", "speed"}, r["id"]
        heading = "# " + r["section"].lstrip("§")
        assert heading in (notebook / r["notebook"]).read_text(), (r["id"], r["section"])
    ids = [r["id"] for r in gen.load()]
    assert len(ids) == len(set(ids))


#: words of the work process, not of the product; "§" only for the spec's sections
WORK_WORDS = re.compile(
    r"\bsession|\bissue\b|\bissues\b|not yet|\byet\b|before that|RESULTS\.md|benchmarks/|notebook"
    r"|python -m jaxsched\.systems|--evaluate-only|docs/",
    re.I,
)
SECTION = re.compile(r"§")
SPEC_SECTION = re.compile(r"spec(?:'s)?(?: `[a-z_]+\.md`)?(?: \([^)]*)? §|spec's curriculum \(§")


@pytest.mark.parametrize("card", CARDS, ids=lambda p: p.parent.name)
def test_model_card_speaks_to_users(card):
    text = card.read_text()
    bad = [m.group(0) for m in WORK_WORDS.finditer(text)]
    assert not bad, f"{card.parent.name}: {bad}"
    for line in text.splitlines():
        if SECTION.search(line):
            assert SPEC_SECTION.search(line) or "(§5 analysis)" in line, (card.parent.name, line)


@pytest.mark.parametrize("card", CARDS, ids=lambda p: p.parent.name)
def test_model_card_leads_with_its_held_out_result(card):
    text = card.read_text()
    block = text.split("<!-- generated: card ", 1)[1].split(gen.END, 1)[0]
    first_heading = text.find("\n## ")
    assert text.index("<!-- generated: card") < first_heading, f"{card.parent.name}: results first"
    name = card.parent.name
    if name.startswith("tuned-"):
        assert "baseline, not a learned scheduler" in block
        return
    assert "| **held out** |" in block or "No held-out figure:" in block, name
    if "| **held out** |" in block and "in-sample" in block:
        assert block.index("**held out**") < block.index("in-sample"), name
    assert "jaxsched evaluate " in block and "--model" in block, name


def test_readme_is_short_and_its_cells_are_readable():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    for line in text.splitlines():
        if line.startswith("|"):
            for cell in line.strip("|").split(" | "):
                assert len(cell) <= 300, cell[:80]
