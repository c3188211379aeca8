"""No stale path in the documentation: every repository path that README.md and docs/ name in a
code span (`jaxsched/...`, `benchmarks/...`, `tests/...`, `docs/...`, `traces/...`) exists.
(Links between pages are checked by `mkdocs build --strict` in `make test`.)"""

import re

from shared_data import REPO

ROOTS = ("jaxsched/", "benchmarks/", "tests/", "docs/", "traces/")
#: a path inside a code span: a root, then path characters (globs and placeholders allowed)
_ROOTS = "|".join(map(re.escape, ROOTS))
PATH = re.compile(rf"`((?:{_ROOTS})[A-Za-z0-9_./*<>{{}}|-]*)")


def named_paths(text: str) -> set[str]:
    """Repository paths named in ``text``'s code spans, trailing punctuation dropped."""
    return {m.group(1).rstrip(".,:") for m in PATH.finditer(text)}


def missing(paths, root) -> list[str]:
    """The paths of ``paths`` with no match under ``root`` (globs and ``<name>`` placeholders
    are matched as wildcards; ``a|b`` as alternatives)."""
    out = []
    for p in sorted(paths):
        pattern = re.sub(r"<[^>]*>|\{[^}]*\}", "*", p)
        alternatives = [pattern] if "|" not in pattern else pattern.split("|")
        if not any(list(root.glob(a.rstrip("/"))) for a in alternatives if a):
            out.append(p)
    return out


def test_every_path_the_docs_name_exists():
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    stale = {}
    for page in pages:
        if "notebook" in page.parts:  # history: it names what was there at the time
            continue
        bad = missing(named_paths(page.read_text()), REPO)
        if bad:
            stale[str(page.relative_to(REPO))] = bad
    assert stale == {}


def test_a_stale_path_is_found(tmp_path):
    (tmp_path / "jaxsched" / "cli").mkdir(parents=True)
    (tmp_path / "jaxsched" / "cli" / "train.py").write_text("")
    text = "see `jaxsched/cli.py`, `jaxsched/cli/`, `jaxsched/cli/<name>.py` and `jaxsched/cli/train.py`."
    assert missing(named_paths(text), tmp_path) == ["jaxsched/cli.py"]
