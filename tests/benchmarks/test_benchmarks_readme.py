"""benchmarks/README.md names every script in benchmarks/, by its folder and name (issue 50: no
script a reader cannot find)."""

from shared_data import REPO


def scripts_missing_from_readme(folder):
    """The scripts (``.py``, ``.sh``; not ``__init__.py`` nor ``data/``) under ``folder`` whose
    path relative to it, e.g. ``speed/throughput.py``, is not in a code span of its README."""
    text = (folder / "README.md").read_text()
    scripts = sorted(
        p.relative_to(folder)
        for p in folder.rglob("*")
        if p.suffix in (".py", ".sh") and p.name != "__init__.py" and "data" not in p.parts
    )
    return [str(p) for p in scripts if f"`{p.as_posix()}`" not in text]


def test_every_benchmark_script_is_in_the_readme():
    assert scripts_missing_from_readme(REPO / "benchmarks") == []


def test_a_script_missing_from_the_readme_is_found(tmp_path):
    (tmp_path / "README.md").write_text("| `speed/a.py` | listed |\n| `b.sh` | not by its path |\n")
    for name in ("speed/a.py", "gpu/b.sh", "__init__.py", "data/x/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert scripts_missing_from_readme(tmp_path) == ["gpu/b.sh"]
