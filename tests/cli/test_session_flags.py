"""``--resume`` goes on with the run's own checkpoint-keeping and validation flags (kept in
DIR/flags.json) unless the command line gives them again."""

from __future__ import annotations

import argparse
import json

import pytest

from jaxsched.cli.args import FLAGS_FILE
from jaxsched.cli.args import session_flags as _session_flags
from jaxsched.errors import ConfigError
from jaxsched.systems.rlscheduler.cli import SESSION_FLAGS


def _args(out, resume=False, **given):
    vals = {k: given.get(k) for k in SESSION_FLAGS}
    return argparse.Namespace(out=str(out), resume=resume, **vals)


def session_flags(args):
    return _session_flags(args, SESSION_FLAGS)


def test_resume_keeps_the_run_flags_unless_given(tmp_path):
    out = tmp_path / "run"
    first = session_flags(_args(out, keep_checkpoints=0, validate=2, val_sequences=20))
    assert first == {**SESSION_FLAGS, "keep_checkpoints": 0, "validate": 2, "val_sequences": 20}
    assert json.loads((out / FLAGS_FILE).read_text()) == first
    (out / "run.json").write_text("{}")  # the run exists from here on
    assert session_flags(_args(out, resume=True)) == first
    again = session_flags(_args(out, resume=True, validate=5))
    assert again == {**first, "validate": 5}
    assert json.loads((out / FLAGS_FILE).read_text()) == again
    # a fresh (refused) run into the same directory leaves the run's flags alone
    session_flags(_args(out, keep_checkpoints=3))
    assert json.loads((out / FLAGS_FILE).read_text()) == again
    # without --resume the stored flags are not used
    assert session_flags(_args(tmp_path / "new")) == SESSION_FLAGS


def test_a_corrupt_flags_file_is_one_line(tmp_path):
    (tmp_path / FLAGS_FILE).write_text("{nope")
    with pytest.raises(ConfigError, match="flags.json: not a JSON object"):
        session_flags(_args(tmp_path, resume=True))
