"""Layering of the package, checked on the source with ``ast``:

* nothing under ``jaxsched/train/`` imports :mod:`jaxsched.envs`, :mod:`jaxsched.sim` or
  :mod:`jaxsched.systems` (the generic training code knows no environment and no system) — the
  one exception is the documented alias ``train/filtering.py``, which resolves
  :mod:`jaxsched.systems.rlscheduler.filtering` lazily for :mod:`jaxsched.envs` until
  ``sample_accepted_starts`` moves there;
* one definition each: the masked logit constants and the Gumbel sampler / log-softmax live in
  ``jaxsched/nets/categorical.py`` only, ``JOB_FEATURES`` in ``jaxsched/envs/rlscheduler.py``.
"""

import ast
from pathlib import Path

from shared_data import REPO

PKG = REPO / "jaxsched"
FORBIDDEN = ("jaxsched.envs", "jaxsched.sim", "jaxsched.systems")
#: train/ files allowed to name a forbidden module, and why
ALIASES = {"filtering.py": "lazy alias of jaxsched.systems.rlscheduler.filtering for envs"}


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


def _names_forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def test_train_imports_no_environment_simulator_or_system():
    bad = {}
    for path in _files(PKG / "train"):
        mods = [m for m in _imported_modules(ast.parse(path.read_text())) if _names_forbidden(m)]
        if mods and path.name not in ALIASES:
            bad[str(path.relative_to(REPO))] = sorted(set(mods))
    assert not bad, f"jaxsched/train must not import envs/sim/systems: {bad}"
    # the alias holds nothing but the lazy lookup
    alias = ast.parse((PKG / "train" / "filtering.py").read_text())
    defs = [n.name for n in alias.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert defs == ["__getattr__"]


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
    assert owners["JOB_FEATURES"] == {"envs/rlscheduler.py"}
    assert owners["jax.random.gumbel"] == set()  # the one sampler draws flat uniforms
    assert owners["jax.nn.log_softmax"] == {"nets/categorical.py"}
