"""Training checkpoints: parameters, optimizer states, RNG key, epoch, config, metrics history.

File format (one file per checkpoint, ``checkpoint_<epoch:08d>.ckpt`` in a directory):

* line 1: a JSON header (UTF-8, one line) —
  ``{"format": "jaxsched-checkpoint", "version": 2, "epoch": E, "config": {...} | null,
  "payload_bytes": B, "payload_sha256": "<hex>", "structure": {"path/to/leaf": [shape,
  dtype], ...}, "jax": "...", "flax": "...", "header_sha256": "<hex>"}``;
* then exactly ``B`` bytes of flax msgpack (:func:`flax.serialization.msgpack_serialize`) of
  ``{"state": <state dict of the TrainState>, "metrics_history": [...], "extra": ...}``.

``header_sha256`` (version 2) is the SHA-256 of the header without that key, written as
compact JSON with sorted keys: with ``payload_sha256`` in it, it covers the epoch, the
configuration and the structure as well as the payload.  Version-1 files (the shipped models
among them) have no header checksum; they are read and their payload verified as before.

Writes are atomic (:func:`jaxsched.fileio.atomic_writer`: a fresh temporary name in the same
directory, flushed and fsync-ed, then renamed over the final name); a crash leaves either the
old set of checkpoints or the new one, never a partial file under a checkpoint name.  After a
save only the newest ``keep`` checkpoints are kept.

Loading verifies everything before anything is used: header syntax, format and version,
header checksum (version 2), payload length (truncation), SHA-256 (corruption), the
configuration (when the caller gives the
one it expects) and every leaf's shape and dtype against a template state (when given).  Any
problem raises :class:`jaxsched.errors.CheckpointError` with a one-line message ``"<file>:
<what is wrong>"``.  Arrays round-trip bit for bit, so training resumed from a checkpoint
continues exactly as if it had not stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any, NamedTuple

import flax
import jax
import numpy as np
from flax import serialization

from jaxsched.errors import CheckpointError, ConfigError
from jaxsched.fileio import atomic_writer

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Checkpoint",
    "save_checkpoint",
    "load_checkpoint",
    "latest_checkpoint",
    "list_checkpoints",
    "checkpoint_path",
]

FORMAT = "jaxsched-checkpoint"
FORMAT_VERSION = 2
#: the versions :func:`load_checkpoint` reads (1: no header checksum)
READ_VERSIONS = (1, 2)
_NAME_RE = re.compile(r"^checkpoint_(\d+)\.ckpt$")


class Checkpoint(NamedTuple):
    """A loaded checkpoint.

    ``state``: the restored TrainState (the template's type) when ``target`` was given,
    otherwise the nested state dict of numpy arrays; ``epoch``: int; ``config``: the saved
    configuration as JSON data (dict) or None; ``metrics_history``: list of metrics dicts;
    ``extra``: whatever was saved as ``extra``; ``header``: the JSON header; ``path``: the file.
    """

    state: Any
    epoch: int
    config: Any
    metrics_history: list
    extra: Any
    header: dict
    path: Path


def checkpoint_path(directory, epoch: int) -> Path:
    """Where :func:`save_checkpoint` puts the checkpoint of ``epoch``."""
    return Path(directory) / f"checkpoint_{int(epoch):08d}.ckpt"


def list_checkpoints(directory) -> list[Path]:
    """Checkpoint files in ``directory``, oldest epoch first (empty if there are none)."""
    d = Path(directory)
    if not d.is_dir():
        return []
    found = []
    for p in d.iterdir():
        m = _NAME_RE.match(p.name)
        if m and p.is_file():
            found.append((int(m.group(1)), p))
    return [p for _, p in sorted(found)]


def latest_checkpoint(directory) -> Path | None:
    """The newest checkpoint in ``directory``, or None."""
    found = list_checkpoints(directory)
    return found[-1] if found else None


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def _config_json(config):
    """JSON-normalised config (dataclasses -> dicts, tuples -> lists)."""
    if config is None:
        return None
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        config = dataclasses.asdict(config)
    try:
        return json.loads(json.dumps(config, sort_keys=True))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"checkpoint config is not JSON-serialisable: {e}") from None


def _short(value, limit: int = 60) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _diff(saved, given, path=""):
    """Paths where two JSON values differ (first few)."""
    out = []
    if isinstance(saved, dict) and isinstance(given, dict):
        for k in sorted(set(saved) | set(given)):
            p = f"{path}.{k}" if path else str(k)
            if k not in saved:
                out.append(f"{p}: not in the checkpoint")
            elif k not in given:
                out.append(f"{p}: only in the checkpoint")
            else:
                out.extend(_diff(saved[k], given[k], p))
    elif saved != given:
        out.append(f"{path or 'config'}: saved {_short(saved)}, given {_short(given)}")
    return out


def _host_tree(tree):
    """Numpy copy of a pytree; typed PRNG keys become their raw key data."""

    def conv(x):
        if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        return np.asarray(jax.device_get(x))

    return jax.tree_util.tree_map(conv, tree)


def _flatten_sd(sd, prefix=""):
    """``{"a/b/c": leaf}`` of a nested state dict."""
    out = {}
    if isinstance(sd, dict):
        if not sd and prefix:
            out[prefix] = None  # keep empty containers visible in the structure
        for k, v in sd.items():
            out.update(_flatten_sd(v, f"{prefix}/{k}" if prefix else str(k)))
    else:
        out[prefix] = sd
    return out


def _structure(sd) -> dict:
    s = {}
    for k, v in _flatten_sd(sd).items():
        if v is None:
            s[k] = None
        else:
            a = np.asarray(v)
            s[k] = [list(a.shape), a.dtype.name]
    return s


def _fmt_leaf(info) -> str:
    if info is None:
        return "empty"
    return f"shape {tuple(info[0])} {info[1]}"


def _structure_mismatch(saved: dict, expected: dict) -> str | None:
    for k in sorted(set(saved) | set(expected)):
        if k not in saved:
            return f"state does not match: {k} is missing from the checkpoint"
        if k not in expected:
            return f"state does not match: {k} is in the checkpoint but not in the target state"
        if saved[k] != expected[k]:
            return (
                f"state does not match: {k}: saved {_fmt_leaf(saved[k])}, expected "
                f"{_fmt_leaf(expected[k])}"
            )
    return None


def _history_host(history):
    return [
        jax.tree_util.tree_map(
            lambda x: (
                np.asarray(jax.device_get(x))
                if isinstance(x, (jax.Array, np.ndarray, np.generic))
                else x
            ),
            dict(m),
        )
        for m in history
    ]


# ----------------------------------------------------------------------------------------------
# save / load
# ----------------------------------------------------------------------------------------------


def save_checkpoint(
    directory,
    state,
    *,
    epoch: int,
    config=None,
    metrics_history=None,
    extra=None,
    keep: int | None = 1,
) -> Path:
    """Write a checkpoint atomically; returns its path.

    Args:
        directory: created if needed.
        state: the pytree to save (a :class:`jaxsched.train.TrainState`, possibly with a leading
            seed axis); must be a flax-serialisable pytree of arrays.
        epoch: the number of updates done (int >= 0); names the file.
        config: JSON-able configuration (a dataclass such as ``PPOConfig``, or a dict such as
            ``PPOTrainer.run_config()``) — compared on load.
        metrics_history: list of metrics dicts (arrays/scalars), one per epoch.
        extra: any further msgpack-able data (dicts, lists, numbers, strings, numpy arrays).
        keep: keep only this many newest checkpoints in ``directory`` (None: keep all).
    """
    if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
        raise ConfigError(f"save_checkpoint: epoch must be an integer >= 0, got {epoch!r}")
    if keep is not None and (not isinstance(keep, (int, np.integer)) or keep < 1):
        raise ConfigError(f"save_checkpoint: keep must be None or >= 1, got {keep!r}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    sd = serialization.to_state_dict(_host_tree(state))
    payload = serialization.msgpack_serialize(
        {
            "state": sd,
            "metrics_history": _history_host(metrics_history or []),
            "extra": extra,
        }
    )
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "epoch": int(epoch),
        "config": _config_json(config),
        "payload_bytes": len(payload),
        "payload_sha256": hashlib.sha256(payload).hexdigest(),
        "structure": _structure(sd),
        "jax": jax.__version__,
        "flax": flax.__version__,
    }
    header["header_sha256"] = _header_sha256(header)
    head = _canonical(header)

    final = checkpoint_path(directory, epoch)
    with atomic_writer(final) as f:
        f.write(head)
        f.write(b"\n")
        f.write(payload)

    if keep is not None:
        for old in list_checkpoints(directory)[:-keep]:
            if old != final:
                try:
                    old.unlink()
                except FileNotFoundError:
                    pass
    return final


def _canonical(header: dict) -> bytes:
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _header_sha256(header: dict) -> str:
    """SHA-256 of the header without its own ``header_sha256``, as compact sorted JSON."""
    return hashlib.sha256(
        _canonical({k: v for k, v in header.items() if k != "header_sha256"})
    ).hexdigest()


def load_checkpoint(path, *, target=None, config=None) -> Checkpoint:
    """Read and verify a checkpoint.

    Args:
        path: a checkpoint file, or a directory (its newest checkpoint is read).
        target: template state (e.g. ``trainer.init(key)``); when given, every saved leaf must
            have the template's shape and dtype and the result is of the template's type.
        config: the configuration the caller is about to train with (same kinds as for
            :func:`save_checkpoint`); when given it must equal the saved one.

    Raises:
        CheckpointError: no checkpoint, unreadable, not a checkpoint, unsupported version,
            truncated, corrupt (checksum), different config, or different state structure.
    """
    p = Path(path)
    if p.is_dir():
        latest = latest_checkpoint(p)
        if latest is None:
            raise CheckpointError(f"{p}: no checkpoint in this directory")
        p = latest

    def fail(msg):
        raise CheckpointError(f"{p}: {msg}")

    try:
        data = p.read_bytes()
    except OSError as e:
        fail(f"cannot read: {e.strerror or e}")
    nl = data.find(b"\n")
    if nl < 0:
        fail("not a jaxsched checkpoint or truncated (no header line)")
    try:
        header = json.loads(data[:nl].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        fail("not a jaxsched checkpoint (header is not JSON)")
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        fail("not a jaxsched checkpoint (unknown format)")
    version = header.get("version")
    if isinstance(version, bool) or version not in READ_VERSIONS:
        fail(
            f"unsupported checkpoint format version {version!r} "
            f"(this jaxsched reads {', '.join(map(str, READ_VERSIONS))})"
        )
    if version >= 2 and header.get("header_sha256") != _header_sha256(header):
        fail("corrupt: header SHA-256 does not match (epoch, configuration or structure altered)")
    try:
        n_bytes = int(header["payload_bytes"])
        sha = str(header["payload_sha256"])
        epoch = int(header["epoch"])
        saved_structure = dict(header["structure"])
    except (KeyError, TypeError, ValueError):
        fail("header is incomplete (payload_bytes, payload_sha256, epoch, structure)")

    payload = data[nl + 1 :]
    if len(payload) < n_bytes:
        fail(f"truncated: payload has {len(payload)} of {n_bytes} bytes")
    if len(payload) > n_bytes:
        fail(f"corrupt: {len(payload) - n_bytes} unexpected bytes after the payload")
    if hashlib.sha256(payload).hexdigest() != sha:
        fail("corrupt: payload SHA-256 does not match the header")

    saved_config = header.get("config")
    if config is not None:
        given = _config_json(config)
        diffs = _diff(saved_config, given)
        if diffs:
            more = f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""
            fail(f"saved with a different configuration: {diffs[0]}{more}")

    try:
        content = serialization.msgpack_restore(payload)
        sd = content["state"]
        history = list(content.get("metrics_history") or [])
        extra = content.get("extra")
    except Exception as e:  # noqa: BLE001 - any decoder failure means a bad file
        fail(f"payload cannot be decoded ({type(e).__name__})")
    if _structure(sd) != saved_structure:
        fail("corrupt: payload does not match the header's structure")

    state = sd
    if target is not None:
        expected = _structure(serialization.to_state_dict(_host_tree(target)))
        msg = _structure_mismatch(saved_structure, expected)
        if msg:
            fail(msg)
        try:
            state = serialization.from_state_dict(target, sd)
        except (ValueError, KeyError, TypeError) as e:
            fail(f"state does not match the target: {str(e).splitlines()[0] if str(e) else e}")
        state = _rewrap_keys(target, state)
    return Checkpoint(
        state=state,
        epoch=epoch,
        config=saved_config,
        metrics_history=history,
        extra=extra,
        header=header,
        path=p,
    )


def _rewrap_keys(target, state):
    """Give typed-PRNG-key leaves of the template back their key type."""

    def fix(t, s):
        if isinstance(t, jax.Array) and jax.dtypes.issubdtype(t.dtype, jax.dtypes.prng_key):
            return jax.random.wrap_key_data(np.asarray(s), impl=jax.random.key_impl(t))
        return s

    return jax.tree_util.tree_map(fix, target, state)
