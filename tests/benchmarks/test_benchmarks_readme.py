"""benchmarks/README.md names every script in benchmarks/ (issue 50: no script a reader cannot find)."""

from shared_data import REPO


def scripts_missing_from_readme(folder):
    text = (folder / "README.md").read_text()
    scripts = sorted(p for p in folder.rglob("*") if p.suffix in (".py", ".sh"))
    return [str(p.relative_to(folder)) for p in scripts if f"`{p.name}`" not in text]


def test_every_benchmark_script_is_in_the_readme():
    assert scripts_missing_from_readme(REPO / "benchmarks") == []


def test_a_script_missing_from_the_readme_is_found(tmp_path):
    (tmp_path / "README.md").write_text("| `a.py` | listed |\n")
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.sh").write_text("")
    assert scripts_missing_from_readme(tmp_path) == ["b.sh"]
