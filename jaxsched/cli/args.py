"""Argument-parsing pieces shared by every ``jaxsched`` subcommand (and the systems' flags):
the subcommand registry, the one-line usage error, and argparse types."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = [
    "PROG",
    "COMMANDS",
    "command",
    "UsageError",
    "positive_int",
    "nonneg_int",
    "int_arg",
    "epoch_range",
    "csv_list",
    "csv_ints",
    "unit_weights",
    "FLAGS_FILE",
    "session_flags",
    "add_devices_argument",
    "add_run_arguments",
    "split_fractions",
    "add_split_arguments",
]

#: the file of a run directory that keeps the flags of how the run is carried out
FLAGS_FILE = "flags.json"

PROG = "jaxsched"

#: name -> function(subparsers) that adds the subcommand's parser (see the module docstring).
COMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {}


def command(name: str):
    """Register a top-level subcommand builder under ``name``."""

    def deco(fn):
        COMMANDS[name] = fn
        return fn

    return deco


class UsageError(Exception):
    """An argparse error, turned into a one-line message by :func:`main`."""

    def __init__(self, prog: str, message: str, usage: str):
        super().__init__(message)
        self.prog, self.message, self.usage = prog, message, usage


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # noqa: D401 - argparse API
        raise UsageError(self.prog, message, " ".join(self.format_usage().split()))


def _require(ok: bool, what: str, text: str) -> None:
    """The one-line argparse error of every type below: ``expected WHAT, got 'TEXT'``."""
    if not ok:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        v = 0
    _require(v >= 1, "a positive integer", text)
    return v


def epoch_range(text: str) -> tuple[int, int]:
    """argparse type: ``A-B``, two integers with A <= B (e.g. ``--epochs 1-40``)."""
    try:
        a, b = (int(x) for x in text.split("-"))
    except ValueError:
        a, b = 1, 0
    _require(a <= b, "A-B with A <= B (e.g. 1-40)", text)
    return a, b


def nonneg_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    v = int_arg(text)
    _require(v >= 0, "an integer >= 0", text)
    return v


def int_arg(text: str) -> int:
    """argparse type: an integer (one-line error otherwise)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def finite_float(text: str) -> float:
    """argparse type: a finite number (one-line error otherwise)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    _require(math.isfinite(v), "a finite number", text)
    return v


def nonneg_float(text: str) -> float:
    """argparse type: a finite number >= 0 (one-line error otherwise)."""
    v = finite_float(text)
    _require(v >= 0, "a number >= 0", text)
    return v


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (one-line error otherwise)."""
    v = finite_float(text)
    _require(v > 0, "a number > 0", text)
    return v


def csv_list(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return items


def csv_ints(text: str) -> list[int]:
    try:
        return [int(t) for t in csv_list(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None


def unit_weights(text: str) -> tuple[float, float, float]:
    """argparse type: three comma-separated numbers in [0, 1] (e.g. reward weights)."""
    parts = csv_list(text)
    _require(len(parts) == 3, "three comma-separated numbers", text)
    values = tuple(finite_float(t) for t in parts)
    _require(all(0.0 <= v <= 1.0 for v in values), "numbers in [0, 1]", text)
    return values


def session_flags(args: argparse.Namespace, defaults: dict) -> dict:
    """The values of the flags named in ``defaults`` (flags of how a run is carried out, such
    as how many checkpoints to keep, declared with ``default=None``) for a training command
    with ``args.out`` and ``args.resume``: a flag given on the command line wins; else, with
    ``--resume``, the value the run was last started with (``DIR/flags.json``); else its
    default. The result is written to ``DIR/flags.json`` unless ``DIR`` holds a run that this
    non-resuming command will refuse to touch. A corrupt file is a one-line ConfigError."""
    import json
    from pathlib import Path

    from jaxsched.errors import ConfigError
    from jaxsched.fileio import atomic_write
    from jaxsched.train.loop import RUN_FILE

    path = Path(args.out) / FLAGS_FILE
    stored = {}
    if args.resume and path.is_file():
        try:
            stored = json.loads(path.read_text())
        except ValueError:
            raise ConfigError(f"{path}: not a JSON object") from None
    out = {}
    for k, default in defaults.items():
        v = getattr(args, k)
        out[k] = v if v is not None else stored.get(k, default)
    if args.resume or not (Path(args.out) / RUN_FILE).exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({**stored, **out}, indent=1) + "\n")
    return out


def device_count(text: str) -> str:
    """argparse type of ``--devices``: ``all`` or an integer >= 1 (kept as given)."""
    from jaxsched.errors import ConfigError
    from jaxsched.train.parallel import parse_devices

    try:
        parse_devices(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--devices: ")) from None
    return text


def add_devices_argument(p) -> None:
    """``--devices all|N`` of a training command (:mod:`jaxsched.train.parallel`; the
    command calls ``expose_host_devices(args.devices)`` before JAX starts)."""
    p.add_argument(
        "--devices",
        type=device_count,
        default=None,
        metavar="all|N",
        help="train data-parallel on N devices (or all): the trajectories of an epoch split "
        "over them, gradients summed; the same training up to float rounding (default: "
        "$JAXSCHED_DEVICES, else 1). On a CPU, N > 1 splits the host into N devices "
        "(XLA_FLAGS=--xla_force_host_platform_device_count=N, set by the command), each "
        "running its share on its own core",
    )


def split_fractions(text: str) -> tuple[float, float, float]:
    """argparse type of ``--split-fractions``: ``TRAIN,VALIDATION,TEST`` (e.g. ``0.5,0.1,0.4``;
    :func:`jaxsched.workload.splits.parse_fractions`)."""
    from jaxsched.errors import ConfigError
    from jaxsched.workload.splits import parse_fractions

    try:
        return parse_fractions(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--split-fractions ")) from None


def add_split_arguments(p, parts: tuple[str, ...], help_split: str) -> None:
    """``--split PART`` (one of ``parts``) and ``--split-fractions`` of the chronological
    split (:mod:`jaxsched.workload.splits`), the same in ``train`` and ``evaluate``."""
    p.add_argument("--split", choices=parts, default=None, help=help_split)
    p.add_argument(
        "--split-fractions",
        type=split_fractions,
        default=None,
        metavar="T,V,E",
        help="with --split: the fractions of the jobs in train, validation and test, in "
        "trace order (default 0.5,0.1,0.4; see docs/splits.md)",
    )


def add_run_arguments(
    p: argparse.ArgumentParser, *, epochs_required: bool = True, seed_default=0, seed_group=None
) -> None:
    """The flags every ``jaxsched train <system>`` shares, declared once: ``--out DIR``,
    ``--epochs E``, ``--resume``, ``--seed S`` and ``--no-progress``.

    ``epochs_required=False`` for a system whose ``--out`` may name a trained run to evaluate
    without training (A2cScheduler's ``--evaluate-only``); ``seed_default`` None for a system
    whose run keeps its own seed on ``--resume``; ``seed_group``: a mutually exclusive group
    that ``--seed`` joins (RLScheduler's ``--seed`` / ``--seeds``)."""
    p.add_argument("--out", required=True, metavar="DIR", help="run directory")
    p.add_argument(
        "--epochs", type=positive_int, required=epochs_required, default=None, metavar="E",
        help="total epochs (with --resume: including the ones already done)"
        + ("" if epochs_required else "; required to train"),
    )  # fmt: skip
    p.add_argument(
        "--resume", action="store_true", help="continue the run in DIR from its newest checkpoint"
    )
    (seed_group or p).add_argument(
        "--seed", type=int_arg, default=seed_default, metavar="S", help="random seed"
    )
    p.add_argument(
        "--no-progress", action="store_true", help="one log line per epoch instead of a bar"
    )
