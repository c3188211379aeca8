"""The learned scheduling systems, by name: each one bundles its run configuration, its
``jaxsched train <system>`` flags, its training driver (on :mod:`jaxsched.train.loop`), its
evaluation adapter for ``jaxsched evaluate --model`` and its training-curve plot.

One package per system (``rlscheduler``, ``schedinspector``, ``dras``, ``a2cscheduler``,
``splitwindow``), each with ``config.py`` (its run configuration, ``run.json``), ``cli.py``
(its ``train`` flags), ``run.py`` (the training driver), ``evaluate.py`` (a trained model
against its baselines) and ``plot.py`` (its training curve) where it has them; the system
pages in ``docs/systems/`` describe each.

Registry API.  A system is a package ``jaxsched.systems.<name>`` whose ``__init__`` defines
``SYSTEM``, a :class:`System`; it is registered by one line in :data:`SYSTEM_MODULES` below
(nothing else changes: the CLI's ``train`` subcommands, ``evaluate --model`` and ``plot`` are
generated from the registry).  :func:`get` / :func:`names` look systems up; a run directory's
``run.json`` names its system in ``"system"`` (:func:`system_of_run`; a ``run.json`` without
the key is RLScheduler's, as written before the registry existed).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from collections.abc import Callable
from pathlib import Path

from jaxsched.errors import CheckpointError, ConfigError

__all__ = [
    "System",
    "SYSTEM_MODULES",
    "DEFAULT_SYSTEM",
    "names",
    "get",
    "system_of_run",
    "load_model",
    "parse_model_spec",
    "LoadedModel",
    "check_run_values",
]

#: one line per system: the module whose ``SYSTEM`` attribute is its :class:`System`
SYSTEM_MODULES: tuple[str, ...] = (
    "jaxsched.systems.rlscheduler",
    "jaxsched.systems.splitwindow",
    "jaxsched.systems.a2cscheduler",
    "jaxsched.systems.schedinspector",
    "jaxsched.systems.dras",
)

#: the system of a ``run.json`` without a ``"system"`` key (run directories from before the
#: registry, and the shipped ``models/``)
DEFAULT_SYSTEM = "rlscheduler"

RUN_FILE = "run.json"


@dataclasses.dataclass
class LoadedModel:
    """A trained model of any system, as ``System.load_model`` returns it: ``run`` (the
    system's run configuration, from ``run.json``), ``params`` (the policy's parameters),
    ``epoch`` and ``path`` (the checkpoint file). A system's subclass adds what it needs to run
    the model (RLScheduler: ``net``; A2cScheduler: ``env``, ``actor_apply``)."""

    run: object
    params: object
    epoch: int
    path: Path


@dataclasses.dataclass(frozen=True)
class System:
    """One learned scheduling system.

    Attributes:
        name: registry name (``jaxsched train <name>``; the ``"system"`` of its ``run.json``).
        help, description: of its ``train`` subcommand.
        add_train_arguments: ``(parser) -> None``, adds its ``train`` flags.
        train: ``(args: argparse.Namespace) -> int``, runs training from the parsed flags
            (exit status).
        load_model: ``(path) -> LoadedModel``, a trained model from a run directory (newest
            checkpoint) or a checkpoint file.
        model_rows: ``(model, jobs, starts, length, backfills, metrics, compat, *, sample, name)
            -> list of dict``, the model's rows in
            :class:`jaxsched.sim.evaluate.EvalResult`'s schema on those sequences.
        plot: ``(run_dir, path=None) -> Path``, its training curve as a PNG; None for a system
            without one (``jaxsched plot DIR`` then says so in one line).
        schedule: ``(model, jobs, start, length, backfill, compat, *, sample) -> int64
            [length]`` start times of jobs ``start … start+length-1`` scheduled by the model
            (``jaxsched simulate --model``); None for a system that cannot schedule a trace
            window yet.
        report: ``(model, trace, *, sample) -> str``, the system's own evaluation of a trained
            model on ``trace`` (e.g. DRAS's §10 test-period table beside its baselines), which
            ``jaxsched evaluate TRACE --model DIR`` prints in text mode instead of the model's
            sequence rows; None for systems without one.
        report_many: ``(models, trace, *, sample, jobs) -> str`` with ``models`` a list of
            ``(label, model, online)``: one report of several models of the system (DRAS: one
            §10 table over the test period, the baselines beside them, one Kiviat
            normalisation over all rows), which ``jaxsched evaluate TRACE --model A --model B``
            prints in text mode; ``online`` (True / False / None) is ``--model``'s
            ``:on`` / ``:off`` suffix.  None for systems without one (several models then
            print one ``report`` each).
        compare: ``(model, trace, *, starts, sequences, length, seed, backfills, sample, name)
            -> (EvalResult, text)``, for a system whose model is compared with its own
            baseline rather than with the heuristics table: ``jaxsched evaluate --model``
            then prints ``text`` (SchedInspector: base alone vs base + inspector, paired
            difference ± s.e., rejection ratio) and uses the result's rows for ``--json`` /
            ``--table``; None for the others.
        selection_rule: ``(run_dir, options: dict) -> jaxsched.train.select.Rule``, how
            ``jaxsched select`` chooses an epoch from the run's own validation log (options:
            ``max_util_loss``, ``bound``).
        resume_settings: ``(dest, flag, key)`` triples: a training flag (``args.<dest>``,
            spelt ``flag``) and the ``run.json`` value it sets (``key``, dotted into nested
            objects, e.g. ``ppo.pi_lr``); ``train --resume`` refuses a flag given with
            another value than the run's (``jaxsched train`` checks, before the system
            runs; TRACE is checked by content for every system).
        rescore: ``(runs, val_sequences, *, val_seed, jobs, epochs, minutes, top, test) ->
            (document: dict, text: str)``, ``jaxsched select --rescore N``: the choice by
            scoring every kept checkpoint of the runs on ``val_sequences`` validation
            sequences (RLScheduler); None for systems without it (the command says so).
    """

    name: str
    help: str
    description: str
    add_train_arguments: Callable[[argparse.ArgumentParser], None]
    train: Callable[[argparse.Namespace], int]
    load_model: Callable
    model_rows: Callable
    plot: Callable | None = None
    schedule: Callable | None = None
    report: Callable | None = None
    report_many: Callable | None = None
    compare: Callable | None = None
    selection_rule: Callable | None = None
    rescore: Callable | None = None
    resume_settings: tuple = ()


def check_run_values(cls, d: dict, bounds: dict | None = None) -> None:
    """Check a ``run.json`` dict against the run configuration dataclass ``cls`` before it is
    used: each value of a field whose default is a bool, int, float, str, list or dict must be
    of that JSON type (an int where a float is expected is fine; floats must be finite), and
    the fields of ``bounds`` (``{name: (low, high)}``) must lie in their range (sizes that
    shape arrays: a wild value would try to allocate without limit). One-line ConfigError
    ``run.json: <field> = <value>: <what is expected>``."""
    import math

    kinds = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
             list: "a list", tuple: "a list", dict: "an object"}  # fmt: skip
    for f in dataclasses.fields(cls):
        if f.name not in d:
            continue
        v = d[f.name]
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        kind = type(default)
        if default is not None and kind in kinds:
            if kind is bool:
                ok = isinstance(v, bool)
            elif kind is int:
                ok = isinstance(v, int) and not isinstance(v, bool)
            elif kind is float:
                ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            elif kind in (list, tuple):
                ok = isinstance(v, (list, tuple))
            else:
                ok = isinstance(v, kind)
            if not ok:
                raise ConfigError(f"run.json: {f.name} = {v!r}: expected {kinds[kind]}")
        if bounds and f.name in bounds and v is not None:
            lo, hi = bounds[f.name]
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ConfigError(
                    f"run.json: {f.name} = {v!r}: expected an integer in [{lo}, {hi}]"
                )


_REGISTRY: dict[str, System] = {}


def _registry() -> dict[str, System]:
    if not _REGISTRY:
        for mod in SYSTEM_MODULES:
            system = importlib.import_module(mod).SYSTEM
            if system.name in _REGISTRY:
                raise RuntimeError(f"two systems named {system.name!r}")
            _REGISTRY[system.name] = system
    return _REGISTRY


def names() -> tuple[str, ...]:
    """The registered system names, in :data:`SYSTEM_MODULES` order."""
    return tuple(_registry())


def get(name: str) -> System:
    """The system called ``name``; ConfigError (one line) for an unknown name."""
    reg = _registry()
    if name not in reg:
        raise ConfigError(f"unknown system {name!r}; choose one of {', '.join(reg)}")
    return reg[name]


def system_of_run(path) -> System:
    """The system of a run directory, or of the run directory holding a checkpoint file: the
    ``"system"`` of its ``run.json`` (default :data:`DEFAULT_SYSTEM`, also when ``run.json`` is
    missing — that system's loader then reports the problem); an empty or corrupt
    ``run.json`` is a one-line ConfigError naming it."""
    from jaxsched.train.loop import read_run_json

    p = Path(path)
    run_file = (p if p.is_dir() else p.parent) / RUN_FILE
    name = DEFAULT_SYSTEM
    d = read_run_json(run_file) if run_file.is_file() else None
    if isinstance(d, dict) and "system" in d:
        name = d["system"]
        if not isinstance(name, str) or name not in _registry():
            raise ConfigError(
                f"{run_file}: unknown system {name!r}; this jaxsched knows {', '.join(_registry())}"
            )
    return get(name)


def load_model(path):
    """A trained model of any system from a run directory, a checkpoint file or the name of a
    shipped model (:mod:`jaxsched.models`), dispatched on :func:`system_of_run`; returns
    ``(system, model)``."""
    from jaxsched.models import names, resolve

    where, path = path, resolve(path)
    if not path.exists():
        raise CheckpointError(
            f"{where}: no such file or directory, nor a shipped model (shipped: {', '.join(names())})"
        )
    system = system_of_run(path)
    return system, system.load_model(path)


def parse_model_spec(spec: str) -> tuple:
    """A ``--model`` argument ``[LABEL=]NAME_OR_DIR[:on|:off]`` as ``(label, path, online)``:
    ``label`` the row name before ``=`` (None without one), ``online`` True / False for a
    ``:on`` / ``:off`` suffix (a DRAS PG model's online adaptation during the test; None
    without one).  An argument that exists as a path is taken whole (a directory may have
    ``=`` in its name or end in ``:on``)."""
    spec = str(spec)
    if Path(spec).exists():
        return None, spec, None
    label, sep, rest = spec.partition("=")
    if not sep or not label:
        label, rest = None, spec
    flag = ""
    if rest.endswith((":on", ":off")) and not Path(rest).exists():
        rest, _, flag = rest.rpartition(":")
    return label, rest, {"on": True, "off": False, "": None}[flag]
