"""Shipped models are package data and can be named by their bare name."""

import json

import pytest

from jaxsched import models, systems


def test_names_and_paths():
    names = models.names()
    assert {"lublin1-bf", "lublin1-bf-fast", "lublin1-none"} <= set(names)
    for name in names:
        d = models.path(name)
        assert d.parent == models.ROOT
        assert (d / "README.md").is_file() and list(d.glob("*.ckpt"))
        json.loads((d / "run.json").read_text())
    with pytest.raises(KeyError, match="no shipped model 'nope'"):
        models.path("nope")


def test_resolve_prefers_an_existing_path(tmp_path, monkeypatch):
    assert models.resolve("lublin1-bf") == models.ROOT / "lublin1-bf"
    (tmp_path / "lublin1-bf").mkdir()
    monkeypatch.chdir(tmp_path)
    assert models.resolve("lublin1-bf").resolve() == tmp_path / "lublin1-bf"
    assert str(models.resolve("no-such-dir")) == "no-such-dir"


def test_load_model_by_name():
    system, model = systems.load_model("lublin1-none")
    assert system.name == "rlscheduler"
    assert model.path.parent == models.ROOT / "lublin1-none"
