"""A training run stopped at any point and resumed ends with the files of a run that was never
stopped: log rows (timings aside), best.ckpt and best.json, the checkpoints kept, run.json.

The stops are injected in-process (a BaseException raised at the chosen point, as a kill would
end the process there) into the generic host loop with a fake trainer (one tiny jit, shared by
every case of this module)."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsched.train.loop as loop
from jaxsched import fileio
from jaxsched.errors import CheckpointError
from jaxsched.fileio import append_line
from jaxsched.train.checkpoint import list_checkpoints, load_checkpoint
from jaxsched.train.loop import (
    BEST_FILE,
    BEST_INFO,
    LOG_FILE,
    RUN_FILE,
    BestCheckpoint,
    EpochSpec,
    read_log,
    run_epochs,
    start_or_resume,
)

EPOCHS = 5
SCORES = {1: 5.0, 2: 3.0, 3: 4.0, 4: 2.5, 5: 2.8}
TIMING = ("seconds", "first_epoch_s_incl_compile")


class Killed(BaseException):
    """A stand-in for SIGKILL: nothing after the point it is raised at runs."""


_UPDATE = jax.jit(lambda s: ({"x": s["x"] + 1.0}, {"x": s["x"] + 1.0}))


class CountTrainer:
    update = staticmethod(_UPDATE)

    def run_config(self):
        return {"count": 1}


def _train(out, resume=False):
    tr = CountTrainer()
    state, history, done = start_or_resume(
        out, {"x": jnp.float32(0.0)}, tr, resume=resume, run_json={"system": "count"},
        log=lambda m: None,
    )  # fmt: skip
    best = BestCheckpoint(out, extra={"jobs": 7})

    def validate(st, epoch, ck):
        best.offer(SCORES[epoch], epoch, ck)
        return {"val": SCORES[epoch], "val_x": float(np.asarray(st["x"]))}

    spec = EpochSpec(
        trainer_at=lambda e: tr, row=lambda e, m, t: {"x": float(m["x"])},
        message=lambda row: "", validate=validate, validate_every=2, keep=2,
    )  # fmt: skip
    run_epochs(out, state, history, spec, done_epochs=done, epochs=EPOCHS, t0=0.0,
               progress=False, log=lambda m: None)  # fmt: skip


def _files(out):
    rows = [{k: v for k, v in r.items() if k not in TIMING} for r in read_log(out)]
    best = load_checkpoint(out / BEST_FILE)
    cks = [load_checkpoint(p) for p in list_checkpoints(out)]
    return {
        "rows": rows,
        "run": (out / RUN_FILE).read_text(),
        "best_info": json.loads((out / BEST_INFO).read_text()),
        "best": (best.epoch, float(np.asarray(best.state["x"]))),
        "checkpoints": [
            (
                p.name,
                float(np.asarray(c.state["x"])),
                c.epoch,
                [float(np.asarray(m["x"])) for m in c.metrics_history],
            )
            for p, c in zip(list_checkpoints(out), cks)
        ],  # fmt: skip
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "run"
    _train(out)
    files = _files(out)
    assert [r["epoch"] for r in files["rows"]] == [1, 2, 3, 4, 5]
    assert files["best"] == (4, 4.0)
    return files


def _kill_at(monkeypatch, target, attr, epoch, *, before=True, when=None):
    """Make ``target.attr`` raise :class:`Killed` on its call at ``epoch`` (``before``: instead
    of running; else right after it ran)."""
    real = getattr(target, attr)
    state = {"epoch": 0}

    def wrapped(*a, **kw):
        if when is not None and not when(*a, **kw):
            return real(*a, **kw)
        state["epoch"] += 1
        if state["epoch"] == epoch and before:
            raise Killed
        out = real(*a, **kw)
        if state["epoch"] == epoch:
            raise Killed
        return out

    monkeypatch.setattr(target, attr, wrapped)


def _is(name):
    return lambda path, *a, **kw: str(path).endswith(name)


CASES = {
    # the checkpoint of epoch 3 is written, its row is not: resumed, the row comes back
    "after checkpoint, before validation": (loop, "finish_epoch", 3, True, None),
    # epoch 4 (validated): best.ckpt replaced, best.json not yet
    "between best.ckpt and best.json": (loop, "write_json", 2, True, _is(BEST_INFO)),
    # epoch 2 validated, best written, the log row not appended
    "after validation, before the log row": (loop, "append_line", 2, True, None),
    # inside epoch 4's checkpoint write: its temporary file is written, never renamed
    "inside a checkpoint write": (
        fileio.os,
        "replace",
        1,
        True,
        lambda src, dst: str(dst).endswith("00000004.ckpt"),
    ),
    # after the whole of epoch 5 but for the program's end
    "after the last log row": (loop, "append_line", 5, False, None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_stop_then_resume_gives_the_uninterrupted_files(tmp_path, monkeypatch, reference, case):
    target, attr, n, before, when = CASES[case]
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        _kill_at(m, target, attr, n, before=before, when=when)
        with pytest.raises(Killed):
            _train(out)
    _train(out, resume=True)
    assert _files(out) == reference


def test_a_row_cut_in_its_write_is_replaced(tmp_path, monkeypatch, reference):
    out = tmp_path / "run"
    real = loop.append_line
    calls = []

    def cut(path, line):
        calls.append(line)
        if len(calls) == 3:  # epoch 3's row: half of it reaches the file
            with open(path, "a") as f:
                f.write(line[: len(line) // 2])
            raise Killed
        real(path, line)

    with monkeypatch.context() as m:
        m.setattr(loop, "append_line", cut)
        with pytest.raises(Killed):
            _train(out)
    assert [r["epoch"] for r in read_log(out)] == [1, 2]  # the cut row is not read
    _train(out, resume=True)
    assert _files(out) == reference
    assert (out / LOG_FILE).read_text().count("\n") == EPOCHS


def test_resume_without_a_checkpoint_keeps_the_log(tmp_path):
    out = tmp_path / "run"
    _train(out)
    log = (out / LOG_FILE).read_text()
    for p in list_checkpoints(out):
        p.unlink()
    with pytest.raises(CheckpointError, match="no checkpoint to resume from, but log.jsonl has 5"):
        _train(out, resume=True)
    assert (out / LOG_FILE).read_text() == log


def test_append_line_never_glues_onto_a_cut_row(tmp_path):
    p = tmp_path / LOG_FILE
    p.write_text('{"epoch": 1}\n{"epoch": 2, "x"')
    assert [r["epoch"] for r in read_log(tmp_path)] == [1]
    append_line(p, '{"epoch": 2}')
    assert p.read_text() == '{"epoch": 1}\n{"epoch": 2}\n'


_KILLED_CHILD = """
import os, signal, sys
sys.path.insert(0, {tests!r})
import jaxsched.train.loop as loop
from jaxsched import fileio
from train.test_interrupt import _train
real = loop.finish_epoch
def finish(out, spec, state, row, ck, due):
    if row["epoch"] == 4:  # epoch 4's checkpoint is on disk; its validation and row are not
        os.kill(os.getpid(), signal.SIGKILL)
    return real(out, spec, state, row, ck, due)
loop.finish_epoch = finish
_train(__import__("pathlib").Path({out!r}))
"""


@pytest.mark.extended
def test_a_real_sigkill_then_resume_gives_the_uninterrupted_files(tmp_path, reference):
    # the in-process stops above are its cheaper siblings; this one is a real SIGKILL
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "run"
    tests = str(Path(__file__).resolve().parents[1])
    code = _KILLED_CHILD.format(tests=tests, out=str(out))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(tests).parent), tests])}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert [r["epoch"] for r in read_log(out)] == [1, 2, 3]
    _train(out, resume=True)
    assert _files(out) == reference
