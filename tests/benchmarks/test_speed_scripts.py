"""Every speed benchmark in benchmarks/speed/ imports from where it lies and answers ``--help``
(issue 50: a script moved or an import path broken shows here, not on a lent GPU). No JAX work:
the scripts with logic of their own have their smoke tests beside this file."""

import sys

import pytest
from shared_data import REPO, load_benchmark

SPEED = sorted(p.stem for p in (REPO / "benchmarks" / "speed").glob("*.py"))


def test_the_speed_folder_is_found():
    assert {"throughput", "env_throughput", "train_speed"} <= set(SPEED)


@pytest.mark.parametrize("name", SPEED)
def test_speed_script_answers_help(name, monkeypatch, capsys):
    mod = load_benchmark(name)
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as stop:
        mod.main()
    assert stop.value.code == 0
    assert "usage:" in capsys.readouterr().out
