"""Every script of benchmarks/ imports from the folder it lies in, and every speed benchmark
(benchmarks/speed/) answers ``--help`` (issue 50: a script moved or an import path broken shows
here, not on a lent GPU). No JAX work: the scripts with logic of their own have their smoke
tests beside this file."""

import sys

import pytest
from shared_data import REPO, load_benchmark

BENCH = REPO / "benchmarks"
SPEED = sorted(p.stem for p in (BENCH / "speed").glob("*.py"))
OTHERS = sorted(
    p.stem for f in ("paper", "reference", "experiments") for p in (BENCH / f).glob("*.py")
)


def test_the_folders_are_found():
    assert {"throughput", "env_throughput", "train_speed"} <= set(SPEED)
    assert {"paper_tables", "reference_sim", "capacities"} <= set(OTHERS)


@pytest.mark.parametrize("name", SPEED)
def test_speed_script_answers_help(name, monkeypatch, capsys):
    mod = load_benchmark(name)
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as stop:
        mod.main()
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("name", OTHERS)
def test_script_imports(name):
    assert load_benchmark(name).__file__.startswith(str(BENCH))


def test_no_script_lies_flat_in_benchmarks():
    """Scripts live in a folder by purpose (benchmarks/README.md); only the package's
    ``__init__.py`` and the shared ``common.py`` lie in benchmarks/ itself."""
    flat = {p.name for p in BENCH.glob("*") if p.suffix in (".py", ".sh")}
    assert flat == {"__init__.py", "common.py"}


def test_simulate_vs_oracle_at_a_tiny_size(tmp_path, capsys):
    """benchmarks/speed/simulate_vs_oracle.py end to end on tests/data/tiny.swf, host side
    (its jax column is evaluate's call, which tests/sim/test_single.py checks): a row per
    policy x mode, every engine's schedule the oracle's, ratios printed."""
    import json

    from shared_data import DATA

    mod = load_benchmark("simulate_vs_oracle")
    out = tmp_path / "rows.json"
    argv = ["--traces", str(DATA / "tiny.swf"), "--rules", "default", "--engines",
            "oracle,host,auto", "--repeats", "1", "--json", str(out)]  # fmt: skip
    assert mod.main(argv) == 0
    rows = json.loads(out.read_text())
    assert [(r["policy"], r["backfill"]) for r in rows] == [
        (p, b) for p in ("fcfs", "sjf", "f1") for b in ("easy", "none")
    ]
    assert all(r["same"] and r["host_ratio"] > 0 for r in rows)
    assert "| host / oracle |" in capsys.readouterr().out


def test_evaluate_vs_oracle_at_a_tiny_size(tmp_path, capsys):
    """benchmarks/speed/evaluate_vs_oracle.py end to end on tests/data/tiny.swf, host side
    (its compiled columns are evaluate's calls, which tests/sim/ checks): a row per mode over
    the distinct test-split starts, the host engine's schedules the oracle's, ratios printed."""
    import json

    from shared_data import DATA

    mod = load_benchmark("evaluate_vs_oracle")
    out = tmp_path / "rows.json"
    argv = ["--traces", str(DATA / "tiny.swf"), "--rules", "default", "--columns", "oracle,host", "--length", "2",
            "--sequences", "3", "--repeats", "1", "--json", str(out)]  # fmt: skip
    assert mod.main(argv) == 0
    rows = json.loads(out.read_text())
    assert [r["backfill"] for r in rows] == ["none", "rlscheduler"]
    assert all(r["same"] and r["host_ratio"] > 0 and r["runs"] == 3 * r["sequences"]
               for r in rows)  # fmt: skip
    assert "| oracle / host |" in capsys.readouterr().out
