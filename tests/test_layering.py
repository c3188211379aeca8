"""Layering of the package (docs/architecture.md), checked on the source with ``ast``:

* each room imports only the rooms below it: nothing under ``jaxsched/train/`` imports
  :mod:`jaxsched.envs`, :mod:`jaxsched.sim` or :mod:`jaxsched.systems` (the generic training
  code knows no environment and no system); the simulator knows no environment, network or
  trainer; the environments know no trainer or system; a system does not import another;
* one definition each: the masked logit constants and the Gumbel sampler / log-softmax live in
  ``jaxsched/nets/categorical.py`` only, ``JOB_FEATURES`` in ``jaxsched/envs/rlscheduler_features.py``.
"""

import ast
from pathlib import Path

import pytest
from shared_data import REPO

PKG = REPO / "jaxsched"
#: room -> the jaxsched packages it must not import (anywhere, function bodies included)
FORBIDDEN = {
    "workload": (
        "jaxsched.sim",
        "jaxsched.envs",
        "jaxsched.nets",
        "jaxsched.train",
        "jaxsched.systems",
    ),
    "policies": ("jaxsched.envs", "jaxsched.nets", "jaxsched.train", "jaxsched.systems"),
    "sim": ("jaxsched.envs", "jaxsched.nets", "jaxsched.train", "jaxsched.systems"),
    # jaxsched.registry builds environments from the systems' configurations
    "envs": ("jaxsched.nets", "jaxsched.train", "jaxsched.systems", "jaxsched.registry"),
    "nets": ("jaxsched.train", "jaxsched.systems"),
    "train": ("jaxsched.envs", "jaxsched.sim", "jaxsched.systems"),
    # look-ahead planners: host-side, over the plain-Python oracle
    "planning": ("jaxsched.envs", "jaxsched.nets", "jaxsched.train", "jaxsched.systems"),
    # pictures of schedules: host-side, from files
    "plots": (
        "jaxsched.sim",
        "jaxsched.envs",
        "jaxsched.nets",
        "jaxsched.train",
        "jaxsched.systems",
    ),
    # shipped models: data only
    "models": (
        "jaxsched.sim",
        "jaxsched.envs",
        "jaxsched.nets",
        "jaxsched.train",
        "jaxsched.systems",
    ),
}


def _files(root: Path):
    return sorted(p for p in root.rglob("*.py"))


def _imported_modules(tree: ast.AST):
    """Every module an import statement names (anywhere, function bodies included), and every
    string literal given to a call (``importlib.import_module("...")``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield arg.value


def _under(module: str, packages) -> bool:
    return any(module == f or module.startswith(f + ".") for f in packages)


def _violations(room: str, forbidden) -> dict:
    bad = {}
    for path in _files(PKG / room):
        mods = [m for m in _imported_modules(ast.parse(path.read_text())) if _under(m, forbidden)]
        if mods:
            bad[str(path.relative_to(REPO))] = sorted(set(mods))
    return bad


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_room_imports_only_the_rooms_below_it(room):
    bad = _violations(room, FORBIDDEN[room])
    assert not bad, f"jaxsched/{room} must not import {FORBIDDEN[room]}: {bad}"


def test_a_system_does_not_import_another():
    systems = [p.name for p in (PKG / "systems").iterdir() if (p / "__init__.py").is_file()]
    assert "rlscheduler" in systems
    for name in systems:
        others = tuple(f"jaxsched.systems.{o}" for o in systems if o != name)
        bad = _violations(f"systems/{name}", others)
        assert not bad, f"system {name} imports another system: {bad}"


def test_the_layering_check_can_fail(tmp_path):
    tree = ast.parse("def f():\n    from jaxsched.envs import RLSchedulerEnv\n")
    mods = list(_imported_modules(tree))
    assert any(_under(m, FORBIDDEN["train"]) for m in mods)


def _assigned(tree: ast.AST, name: str) -> bool:
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _calls(tree: ast.AST, dotted: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == dotted:
            return True
    return False


def test_one_definition_of_each_masked_categorical_helper():
    owners = {
        "MASKED_LOGIT": set(),
        "LOGIT_BOUND": set(),
        "JOB_FEATURES": set(),
        "jax.random.gumbel": set(),
        "jax.nn.log_softmax": set(),
    }
    for path in _files(PKG):
        tree = ast.parse(path.read_text())
        rel = str(path.relative_to(PKG))
        for name in ("MASKED_LOGIT", "LOGIT_BOUND", "JOB_FEATURES"):
            if _assigned(tree, name):
                owners[name].add(rel)
        for call in ("jax.random.gumbel", "jax.nn.log_softmax"):
            if _calls(tree, call):
                owners[call].add(rel)
    assert owners["MASKED_LOGIT"] == {"nets/categorical.py"}
    assert owners["LOGIT_BOUND"] == {"nets/categorical.py"}
    assert owners["JOB_FEATURES"] == {"envs/rlscheduler_features.py"}
    assert owners["jax.random.gumbel"] == set()  # the one sampler draws flat uniforms
    assert owners["jax.nn.log_softmax"] == {"nets/categorical.py"}
