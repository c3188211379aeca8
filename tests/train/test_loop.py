"""jaxsched.train.loop: the generic host loop with a fake trainer (no environment): log rows,
checkpoints kept, validation and the best checkpoint, resume, run-directory errors."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.errors import ConfigError
from jaxsched.train.checkpoint import list_checkpoints, load_checkpoint
from jaxsched.train.loop import (
    BEST_FILE,
    BEST_INFO,
    LOG_FILE,
    RUN_FILE,
    BestCheckpoint,
    EpochSpec,
    fit,
    open_run,
    read_log,
    run_epochs,
    start_or_resume,
    training_seconds,
)


class CountTrainer:
    """``update`` adds 1 to ``x``; metrics: the new ``x`` and an episode_info array."""

    def __init__(self):
        self.update = jax.jit(
            lambda s: (
                {"x": s["x"] + 1.0},
                {"x": s["x"] + 1.0, "episode_info_v": jnp.arange(3)},
            )
        )

    def run_config(self):
        return {"count": 1}


def _spec(trainer, validate=None, every=0, keep=1):
    return EpochSpec(
        trainer_at=lambda epoch: trainer,
        row=lambda epoch, m, tr: {"x": float(m["x"]), "n": int(len(m["episode_info_v"]))},
        message=lambda row: f"x {row['x']}",
        validate=validate,
        validate_every=every,
        keep=keep,
    )


def _run(out, epochs, resume=False, **kw):
    tr = CountTrainer()
    state = {"x": jnp.float32(0.0)}
    state, history, done = start_or_resume(
        out, state, tr, resume=resume, run_json={"system": "count"}, log=lambda m: None
    )
    lines = []
    state, history = run_epochs(
        out,
        state,
        history,
        _spec(tr, **kw),
        done_epochs=done,
        epochs=epochs,
        t0=0.0,
        progress=False,
        log=lines.append,
    )
    return state, history, lines


def test_epochs_rows_checkpoints_and_resume(tmp_path):
    out = tmp_path / "run"
    assert open_run(out, resume=False) is None
    state, history, lines = _run(out, 2)
    assert float(state["x"]) == 2.0 and len(history) == 2
    assert json.loads((out / RUN_FILE).read_text()) == {"system": "count"}
    rows = read_log(out)
    assert [r["epoch"] for r in rows] == [1, 2]
    assert list(rows[0]) == ["epoch", "seconds", "x", "n", "first_epoch_s_incl_compile"]
    assert "first_epoch_s_incl_compile" not in rows[1] and rows[1]["x"] == 2.0
    assert lines == ["epoch 1/2: x 1.0", "epoch 2/2: x 2.0"]
    assert "episode_info_v" not in history[0]  # per-episode arrays stay out of the history
    assert [p.name for p in list_checkpoints(out)] == ["checkpoint_00000002.ckpt"]
    # a second start in the same directory is refused; resuming continues from epoch 2
    with pytest.raises(ConfigError, match="already holds a training run"):
        open_run(out, resume=False)
    assert open_run(out, resume=True) == {"system": "count"}
    state, history, lines = _run(out, 4, resume=True)
    assert float(state["x"]) == 4.0 and len(history) == 4
    assert [r["epoch"] for r in read_log(out)] == [1, 2, 3, 4]
    assert "first_epoch_s_incl_compile" in read_log(out)[2]
    assert set(training_seconds(out)) == {1, 2, 3, 4}
    with pytest.raises(ConfigError, match="nothing to resume"):
        open_run(tmp_path / "elsewhere", resume=True)


def test_keep_all_checkpoints_and_validation_keeps_the_best(tmp_path):
    out = tmp_path / "run"
    scores = {1: 5.0, 2: 3.0, 3: 4.0, 4: 3.5}
    best = BestCheckpoint(out, extra={"jobs": 7})
    seen = []

    def validate(state, epoch, ck):
        seen.append(epoch)
        best.offer(scores[epoch], epoch, ck)
        return {"val": scores[epoch]}

    _run(out, 4, validate=validate, every=2, keep=0)
    assert seen == [2, 4]
    assert len(list_checkpoints(out)) == 4
    rows = read_log(out)
    assert [r.get("val") for r in rows] == [None, 3.0, None, 3.5]
    assert json.loads((out / BEST_INFO).read_text()) == {"epoch": 2, "value": 3.0, "jobs": 7}
    ck = load_checkpoint(out / BEST_FILE)
    assert ck.epoch == 2 and float(np.asarray(ck.state["x"])) == 2.0
    # picked up again (resume) and higher-is-better
    assert BestCheckpoint(out).best == 3.0
    hi = BestCheckpoint(tmp_path / "hi", higher_is_better=True)
    (tmp_path / "hi").mkdir()
    assert hi.offer(1.0, 1, out / BEST_FILE) and hi.offer(2.0, 2, out / BEST_FILE)
    assert not hi.offer(1.5, 3, out / BEST_FILE)


def test_fit_checkpoints_at_the_end(tmp_path):
    tr = CountTrainer()
    state, history = fit(tr, {"x": jnp.float32(0.0)}, 3, checkpoint_dir=tmp_path)
    assert float(state["x"]) == 3.0 and len(history) == 3
    assert load_checkpoint(tmp_path).epoch == 3


def test_read_log_errors(tmp_path):
    with pytest.raises(ConfigError, match="missing"):
        read_log(tmp_path)
    (tmp_path / LOG_FILE).write_text('{"epoch": 1}\nnot json\n')
    with pytest.raises(ConfigError, match=":2: not a JSON object"):
        read_log(tmp_path)


def test_best_checkpoint_follows_no_planted_link(tmp_path):
    # the old fixed temporary name, planted as a link to another file, is left alone
    out = tmp_path / "run"
    _run(out, 1)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / (BEST_FILE + ".tmp")).symlink_to(victim)
    (out / BEST_FILE).symlink_to(tmp_path / "elsewhere.ckpt")
    assert BestCheckpoint(out).offer(1.0, 1, list_checkpoints(out)[-1])
    assert victim.read_text() == "keep me" and not (tmp_path / "elsewhere.ckpt").exists()
    assert not (out / BEST_FILE).is_symlink() and load_checkpoint(out / BEST_FILE).epoch == 1
