"""The persistent compilation cache's repair of half entries (JAX reads every entry's atime
file before a write to a bounded cache: one orphan would make every later write fail)."""

from __future__ import annotations

import os

from jaxsched.compile_cache import repair_cache_dir


def test_repair_dates_orphan_programs_and_drops_stray_atimes(tmp_path):
    whole = ["jit_epoch-5aaf-cache", "jit_epoch-5aaf-atime"]
    orphan = "jit_batch-77-cache"  # unbounded cache, or died between the two writes
    stray = "jit__lambda-01-atime"  # died during an eviction
    for name in whole + [orphan, stray, ".lockfile", "notes.txt"]:
        (tmp_path / name).write_bytes(b"x")
    os.utime(tmp_path / orphan, ns=(5_000_000_000, 1_234_567_890_123))
    assert repair_cache_dir(tmp_path) == 2
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(whole + [orphan, "jit_batch-77-atime", ".lockfile", "notes.txt"])
    stamp = int.from_bytes((tmp_path / "jit_batch-77-atime").read_bytes(), "little")
    assert stamp == 1_234_567_890_123 and (tmp_path / "jit_epoch-5aaf-atime").read_bytes() == b"x"
    assert repair_cache_dir(tmp_path) == 0


def test_repair_of_a_missing_folder_is_a_no_op(tmp_path):
    assert repair_cache_dir(tmp_path / "nope") == 0
