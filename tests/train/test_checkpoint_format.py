"""Checkpoint format version 2: the header checksum covers the epoch, the configuration and the
structure; version-1 files (the shipped models) still load, their payload verified as before.
No network or trainer: a two-leaf state dict."""

import json
from pathlib import Path

import numpy as np
import pytest

import jaxsched.models
from jaxsched.errors import CheckpointError
from jaxsched.train.checkpoint import FORMAT_VERSION, load_checkpoint, save_checkpoint

STATE = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "step": np.int32(4)}


def _split(path):
    head, payload = path.read_bytes().split(b"\n", 1)
    return json.loads(head), payload


def _write(path, header, payload):
    path.write_bytes(json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n"
                     + payload)  # fmt: skip


def test_new_files_are_version_2_and_verify_their_header(tmp_path):
    path = save_checkpoint(tmp_path, STATE, epoch=3, config={"lr": 0.1})
    header, payload = _split(path)
    assert FORMAT_VERSION == 2 and header["version"] == 2 and len(header["header_sha256"]) == 64
    ck = load_checkpoint(path, config={"lr": 0.1})
    assert ck.epoch == 3 and ck.config == {"lr": 0.1}
    for key, value in (("epoch", 7), ("config", {"lr": 0.5}), ("header_sha256", "0" * 64)):
        _write(path, {**header, key: value}, payload)
        with pytest.raises(CheckpointError, match="header SHA-256 does not match") as e:
            load_checkpoint(path)
        assert str(e.value).startswith(str(path)) and "\n" not in str(e.value)
    del header["header_sha256"]
    _write(path, header, payload)  # a version-2 header without its checksum
    with pytest.raises(CheckpointError, match="header SHA-256"):
        load_checkpoint(path)


def test_version_1_files_still_load_verified(tmp_path):
    path = save_checkpoint(tmp_path, STATE, epoch=3, config={"lr": 0.1})
    header, payload = _split(path)
    del header["header_sha256"]
    _write(path, {**header, "version": 1}, payload)
    assert load_checkpoint(path).epoch == 3
    _write(path, {**header, "version": 1}, payload[:-1] + bytes([payload[-1] ^ 1]))
    with pytest.raises(CheckpointError, match="payload SHA-256"):
        load_checkpoint(path)


def test_shipped_models_are_version_1_and_load():
    root = Path(jaxsched.models.__file__).parent
    files = sorted(root.rglob("*.ckpt"))
    assert files
    for f in files:
        assert json.loads(f.read_bytes().split(b"\n", 1)[0])["version"] == 1, f
        load_checkpoint(f)
