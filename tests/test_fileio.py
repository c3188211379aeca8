"""jaxsched.fileio: whole files or none, no planted link followed, no folder created, log lines
never glued onto a partial line."""

import os

import pytest

from jaxsched.errors import ConfigError
from jaxsched.fileio import append_line, atomic_write, atomic_writer, check_folder


def test_atomic_write_replaces_whole(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("old")
    atomic_write(p, "new\n")
    assert p.read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]  # no temporary left


def test_failure_inside_the_block_keeps_the_old_file(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(p) as fh:
        fh.write(b"half")
        raise RuntimeError("killed")
    assert p.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]


def test_missing_folder_is_one_line_error_and_nothing_created(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        atomic_write(tmp_path / "no" / "such" / "a.txt", "x")
    with pytest.raises(ConfigError, match="does not exist"):
        check_folder(tmp_path / "no" / "a.txt")  # the same error, before any work
    check_folder(tmp_path / "a.txt")
    assert not (tmp_path / "no").exists()


def test_planted_link_at_old_fixed_temporary_name_is_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(victim, tmp_path / "best.ckpt.tmp")
    atomic_write(tmp_path / "best.ckpt", b"data")
    assert victim.read_text() == "keep"
    assert (tmp_path / "best.ckpt").read_bytes() == b"data"


def test_gzip_by_suffix_is_deterministic(tmp_path):
    import gzip

    a = atomic_write(tmp_path / "a.swf.gz", "x\n", gzip_by_suffix=True).read_bytes()
    b = atomic_write(tmp_path / "a.swf.gz", "x\n", gzip_by_suffix=True).read_bytes()
    assert a == b and gzip.decompress(a) == b"x\n"


def test_append_line_drops_a_partial_last_line(tmp_path):
    log = tmp_path / "log.jsonl"
    append_line(log, '{"epoch": 0}')
    with open(log, "a") as fh:
        fh.write('{"epoch": 1, "cut')  # a kill in the middle of a write
    append_line(log, '{"epoch": 1}')
    assert log.read_text() == '{"epoch": 0}\n{"epoch": 1}\n'
    with pytest.raises(ValueError):
        append_line(log, "two\nlines")
