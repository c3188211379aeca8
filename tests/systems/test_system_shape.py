"""Every system has the same shape (issue 50): the same files with the same roles, and the
registry's hooks implemented."""

from pathlib import Path

import jaxsched.systems as systems

#: file -> role, in every jaxsched/systems/<name>/ (a system may have more)
ROLES = {
    "__init__.py": "SYSTEM, the registry entry",
    "config.py": "the run configuration (run.json)",
    "cli.py": "the train flags",
    "run.py": "the training driver and model loading",
    "evaluate.py": "a trained model against its baselines",
    "plot.py": "the training curve",
}


def missing_files(folder: Path) -> list[str]:
    return sorted(f for f in ROLES if not (folder / f).is_file())


def test_every_system_folder_has_every_role():
    root = Path(systems.__file__).parent
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_"))
    assert len(folders) == len(systems.names())
    assert {f.name: missing_files(f) for f in folders} == {f.name: [] for f in folders}


def test_every_system_plots_and_evaluates_a_model():
    for name in systems.names():
        s = systems.get(name)
        assert s.plot is not None, name
        # a model is evaluated through evaluate --model: rows, a report, or a comparison
        assert s.report is not None or s.compare is not None or name == "rlscheduler", name


def test_a_missing_role_is_found(tmp_path):
    for f in ("__init__.py", "cli.py", "run.py"):
        (tmp_path / f).write_text("")
    assert missing_files(tmp_path) == ["config.py", "evaluate.py", "plot.py"]


def test_plot_draws_a_shipped_model_of_every_system(tmp_path, capsys):
    """`jaxsched plot DIR` on one shipped model of each system writes its training curve."""
    from jaxsched.cli import main
    from jaxsched.models import names, resolve

    one = {}
    for name in names():
        one.setdefault(systems.system_of_run(resolve(name)).name, name)
    assert sorted(one) == sorted(systems.names())
    for system, name in one.items():
        png = tmp_path / f"{system}.png"
        assert main(["plot", str(resolve(name)), "--out", str(png)]) == 0, name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
