"""benchmarks/paper/<system>.py: one reproduction driver per paper (issue 50). Each lists its
parts, every part names a script of benchmarks/paper/ that answers ``--help`` through the
driver, an unknown part is a one-line error, and every paper script belongs to a driver or is
one of the shared tools. No JAX work."""

import pytest
from shared_data import REPO, load_benchmark

DRIVERS = ("rlscheduler", "schedinspector", "dras", "a2cscheduler", "splitwindow")
#: scripts of benchmarks/paper/ used for every paper (model choice, baselines, the look-ahead
#: planners against them), in no driver
SHARED_TOOLS = {
    "baselines_heldout",
    "tune_priority",
    "score_checkpoints",
    "planners_heldout",
    "planners_compute",
}


@pytest.mark.parametrize("name", DRIVERS)
def test_driver_lists_its_parts_and_runs_each_scripts_help(name, capsys):
    drv = load_benchmark(name)
    assert drv.main([]) == 0
    listing = capsys.readouterr().out
    for part, (module, _) in drv.PARTS.items():
        assert part in listing and f"benchmarks/paper/{module}.py" in listing
        assert (REPO / "benchmarks" / "paper" / f"{module}.py").is_file()
        with pytest.raises(SystemExit) as stop:
            drv.main([part, "--help"])
        assert stop.value.code == 0
        assert "usage:" in capsys.readouterr().out


def test_unknown_part_is_one_line(capsys):
    assert load_benchmark("dras").main(["tables"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "baselines, test-period" in err


def test_every_paper_script_has_a_driver():
    covered = set(SHARED_TOOLS) | set(DRIVERS)
    for name in DRIVERS:
        covered |= {module for module, _ in load_benchmark(name).PARTS.values()}
    scripts = {p.stem for p in (REPO / "benchmarks" / "paper").glob("*.py")} - {"__init__"}
    assert scripts - covered == set()
