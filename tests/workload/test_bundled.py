"""The default trace outside a checkout: regenerated bit for bit into the data folder."""

import pytest
from shared_data import REPO

from jaxsched.workload import bundled


def _jobs_lines(path):
    return [ln for ln in path.read_text().splitlines() if not ln.startswith(";")]


def test_checkout_trace_is_used_in_a_checkout():
    assert bundled.default_trace_path() == REPO / "traces" / "lublin-1.swf"


def test_regenerated_outside_a_checkout(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bundled, "checkout_trace_path", lambda name="": tmp_path / "absent.swf")
    monkeypatch.setenv("JAXSCHED_DATA", str(tmp_path / "data"))
    path = bundled.default_trace_path()
    assert path == tmp_path / "data" / "traces" / "lublin-1.swf"
    assert "generating the default trace" in capsys.readouterr().err
    assert _jobs_lines(path) == _jobs_lines(REPO / "traces" / "lublin-1.swf")
    assert not list(path.parent.glob(".*tmp"))
    # the second call reuses the file
    path.write_text(path.read_text() + "; touched\n")
    assert bundled.default_trace_path().read_text().endswith("; touched\n")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("value", ["", None])
def test_data_dir_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("JAXSCHED_DATA", raising=False)
    else:
        monkeypatch.setenv("JAXSCHED_DATA", value)
    assert bundled.data_dir().parts[-2:] == (".cache", "jaxsched")
