"""The host loop every system's trainer runs: epochs, ``log.jsonl``, validation, best and last
checkpoints, resume, progress bar.

A run directory (``--out DIR``) holds::

    DIR/run.json                  what was trained (the system's run configuration; written by
                                  the system, with a "system" key naming it)
    DIR/log.jsonl                 one JSON object per epoch
    DIR/checkpoint_00000012.ckpt  the newest checkpoint(s) (:mod:`jaxsched.train.checkpoint`)
    DIR/best.ckpt, best.json      with validation: the best checkpoint so far and its score

The loop is algorithm- and environment-agnostic: a *trainer* is any object with
``update(state) -> (state, metrics)`` (jit-compiled, one epoch) and ``run_config() -> dict``
(recorded in checkpoint headers, checked on resume); the system supplies the columns of each
log row, the progress message and the validation.  :func:`fit` is the minimal loop for library
use (a list of metrics, optional checkpoints).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

import jax

from jaxsched.errors import CheckpointError, ConfigError
from jaxsched.fileio import append_line, atomic_write
from jaxsched.train.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from jaxsched.workload.paths import resolve_trace
from jaxsched.workload.splits import file_sha256

__all__ = [
    "RUN_FILE",
    "LOG_FILE",
    "BEST_FILE",
    "BEST_INFO",
    "fit",
    "EpochSpec",
    "run_epochs",
    "open_run",
    "start_or_resume",
    "load_run",
    "BestCheckpoint",
    "read_log",
    "run_file",
    "epoch_rows",
    "training_seconds",
    "read_run_json",
    "write_json",
    "finish_epoch",
    "save_epoch",
    "recover_log",
    "TRACE_HASH",
    "file_sha256",
    "check_resume_trace",
]

#: the ``run.json`` key of the SHA-256 of the training trace's bytes (written by
#: :func:`start_or_resume` for a run whose settings name a ``trace`` file)
TRACE_HASH = "trace_sha256"

RUN_FILE = "run.json"
LOG_FILE = "log.jsonl"
#: the checkpoint with the best validation score so far, and its description
BEST_FILE = "best.ckpt"
BEST_INFO = "best.json"


# ----------------------------------------------------------------------------------------------
# library loop
# ----------------------------------------------------------------------------------------------
def fit(
    trainer,
    train_state,
    num_updates: int,
    *,
    history: list | None = None,
    checkpoint_dir=None,
    checkpoint_every: int = 0,
    keep: int = 1,
    callback: Callable | None = None,
):
    """Run ``num_updates`` updates from Python, collecting metrics and checkpointing.

    Args:
        trainer, train_state: e.g. from :func:`jaxsched.train.make_train` (a batch of vmapped
            states is not supported here; use ``jax.vmap(trainer.update)`` directly for that).
        num_updates: updates to run now.
        history: metrics of earlier updates (e.g. from a loaded checkpoint); appended to.
        checkpoint_dir: if given, a checkpoint is written every ``checkpoint_every`` updates
            (0: only at the end) and at the end, keeping the last ``keep``.
        callback: ``callback(epoch, metrics)`` after each update (host values).

    Returns:
        ``(train_state, history)``; ``history[i]`` is the metrics dict (numpy scalars) of epoch
        ``i + 1``.  The epoch number of a checkpoint is ``len(history)``.
    """
    history = list(history or [])
    saved_at = None
    for _ in range(num_updates):
        train_state, metrics = trainer.update(train_state)
        metrics = jax.device_get(metrics)
        history.append(metrics)
        epoch = len(history)
        if callback is not None:
            callback(epoch, metrics)
        if checkpoint_dir is not None and checkpoint_every and epoch % checkpoint_every == 0:
            _save(trainer, checkpoint_dir, train_state, epoch, history, keep)
            saved_at = epoch
    if checkpoint_dir is not None and saved_at != len(history):
        _save(trainer, checkpoint_dir, train_state, len(history), history, keep)
    return train_state, history


def _save(trainer, directory, state, epoch, history, keep):
    save_checkpoint(
        directory,
        state,
        epoch=epoch,
        config=trainer.run_config(),
        metrics_history=history,
        keep=keep,
    )


# ----------------------------------------------------------------------------------------------
# run directories
# ----------------------------------------------------------------------------------------------
def open_run(out, resume: bool) -> dict | None:
    """Check a run directory before anything is built: with ``resume``, the saved ``run.json``
    (a dict; ConfigError if there is none); without, None (ConfigError if ``out`` already holds
    a run)."""
    out = Path(out)
    run_file = out / RUN_FILE
    if resume:
        if not run_file.is_file():
            raise ConfigError(
                f"{out}: nothing to resume (no {RUN_FILE}); drop --resume to start a new run"
            )
        return read_run_json(run_file)
    if run_file.exists():
        raise ConfigError(
            f"{out}: already holds a training run; use --resume to continue it "
            f"or choose another --out"
        )
    return None


def read_run_json(path, error=ConfigError) -> dict:
    """The JSON object of a ``run.json`` file; an unreadable, empty or corrupt file (or one
    that holds no JSON object) is a one-line ``error`` naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise error(
            f"{path}: cannot read the run settings: {getattr(e, 'strerror', None) or e}"
        ) from None
    if not text.strip():
        raise error(f"{path}: empty (not a complete run.json)")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise error(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise error(f"{path}: not a JSON object of run settings")
    return data


def _same_file(a, b) -> bool:
    try:
        return Path(a).samefile(b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def check_resume_trace(run_json_path, saved: dict, given) -> None:
    """``--resume`` with TRACE ``given``: one-line ConfigError unless it is the trace the run
    was trained on, by content where ``run.json`` holds its SHA-256 (the given file's and the
    stored path's bytes must still hash to it), else by path."""
    stored_path, stored_hash = saved.get("trace"), saved.get(TRACE_HASH)
    if not given or not stored_path:
        return
    where = Path(run_json_path)
    stored_path = resolve_trace(stored_path, where.parent)  # as the run reads it
    if not stored_hash:
        if not _same_file(given, stored_path):
            raise ConfigError(
                f"{where}: TRACE {given} is not the run's trace {stored_path} (stored: "
                f"{stored_path}, given: {given}); resume with the run's trace"
            )
        return
    paths = [given] + ([] if _same_file(given, stored_path) else [stored_path])
    for path in paths:
        got = file_sha256(path)
        if got != stored_hash:
            what = "TRACE" if path == given else "the run's trace"
            raise ConfigError(
                f"{where}: {what} {path} has other content than the run was trained on "
                f"(trace_sha256 stored: {stored_hash[:16]}..., given: {got[:16]}...)"
            )


def write_json(path, data, *, indent: int | None = 1) -> Path:
    """``data`` as one JSON document (newline-terminated), written atomically
    (:func:`jaxsched.fileio.atomic_write`)."""
    return atomic_write(path, json.dumps(data, indent=indent) + "\n")


def run_file(path) -> Path:
    """``run.json`` of the run directory ``path``, or of the directory holding the checkpoint
    file ``path``; one-line :class:`~jaxsched.errors.CheckpointError` when there is none."""
    p = Path(path)
    if p.is_file() and not (p.parent / RUN_FILE).is_file():
        raise CheckpointError(
            f"{p}: no {RUN_FILE} beside it in {p.parent} (a checkpoint is loaded from its "
            "training directory)"
        )
    f = (p if p.is_dir() else p.parent) / RUN_FILE
    if not f.is_file():
        raise CheckpointError(f"{f}: missing (not a jaxsched training directory)")
    return f


def load_run(path, config_from_dict: Callable, params_key: str):
    """A trained run's settings and its parameters: ``run.json`` of the run directory ``path``
    (or of the directory holding the checkpoint file ``path``) through ``config_from_dict``, and
    ``state[params_key]`` of its newest checkpoint (or of that file) as device arrays.

    Returns ``(config, params, checkpoint)``. One-line
    :class:`~jaxsched.errors.CheckpointError` when ``run.json`` is missing or unreadable or the
    checkpoint holds no ``params_key``."""
    p, settings = Path(path), run_file(path)
    data = read_run_json(settings, CheckpointError)
    try:
        config = config_from_dict(data)
    except (ValueError, TypeError) as e:
        raise CheckpointError(f"{settings}: unreadable run settings: {e}") from None
    ck = load_checkpoint(p)
    if not isinstance(ck.state, dict) or params_key not in ck.state:
        raise CheckpointError(f"{ck.path}: no {params_key} in this checkpoint")
    params = jax.tree_util.tree_map(jax.numpy.asarray, ck.state[params_key])
    return config, params, ck


def start_or_resume(
    out,
    state,
    trainer,
    *,
    resume: bool,
    run_json: dict,
    fresh: Callable | None = None,
    log: Callable[[str], None] = print,
):
    """The state a run continues from: the newest checkpoint of ``out`` when resuming (checked
    against ``trainer.run_config()`` and the structure of ``state``), else ``fresh(state)``
    (e.g. networks from another run; default: ``state`` itself), in which case ``out`` is
    created with ``run.json`` = ``run_json`` and an empty log.

    Returns ``(state, history list, done_epochs int)``."""
    out = Path(out)
    if resume and latest_checkpoint(out) is not None:
        ck = load_checkpoint(out, target=state, config=trainer.run_config())
        log(f"resuming {out} at epoch {ck.epoch}")
        return ck.state, list(ck.metrics_history), ck.epoch
    if resume:
        # killed before its first checkpoint: start again, unless the run has more to lose
        logged = _logged_epochs(out)
        if logged or (out / BEST_FILE).exists():
            what = f"{LOG_FILE} has {len(logged)} epoch(s)" if logged else f"{BEST_FILE} exists"
            raise CheckpointError(
                f"{out}: no checkpoint to resume from, but {what}; restore the checkpoint "
                f"files or train into another --out"
            )
    if fresh is not None:
        state = fresh(state)
    out.mkdir(parents=True, exist_ok=True)
    run_json = dict(run_json)
    trace = run_json.get("trace")
    if isinstance(trace, str) and trace and TRACE_HASH not in run_json:
        found = resolve_trace(trace, out)
        if Path(found).is_file():
            run_json[TRACE_HASH] = file_sha256(found)
    write_json(out / RUN_FILE, run_json)
    atomic_write(out / LOG_FILE, "")
    return state, [], 0


def _logged_epochs(out) -> list:
    """The epochs of the complete rows of ``DIR/log.jsonl`` (empty without a log)."""
    p = Path(out) / LOG_FILE
    if not p.is_file():
        return []
    return [int(r["epoch"]) for r in read_log(out) if isinstance(r, dict) and "epoch" in r]


class BestCheckpoint:
    """``DIR/best.ckpt`` and ``DIR/best.json``: a copy of the checkpoint with the best score so
    far (lower is better, or higher with ``higher_is_better``), picked up again on resume."""

    def __init__(self, out, *, higher_is_better: bool = False, extra: dict | None = None):
        self.out = Path(out)
        self.sign = -1.0 if higher_is_better else 1.0
        self.extra = dict(extra or {})
        self.best = None
        info = self.out / BEST_INFO
        if info.is_file() and (self.out / BEST_FILE).is_file():
            try:
                self.best = float(json.loads(info.read_text())["value"])
            except (ValueError, KeyError, TypeError):
                self.best = None

    def offer(self, value: float, epoch: int, checkpoint: Path) -> bool:
        """Keep ``checkpoint`` (of ``epoch``, scored ``value``) if it is the best so far;
        returns whether it was."""
        if self.best is not None and not self.sign * value < self.sign * self.best:
            return False
        self.best = value
        atomic_write(self.out / BEST_FILE, Path(checkpoint).read_bytes())
        write_json(
            self.out / BEST_INFO, {"epoch": epoch, "value": value, **self.extra}, indent=None
        )
        return True


def read_log(out, *, nonempty: bool = False) -> list:
    """The per-epoch rows of ``DIR/log.jsonl``; with ``nonempty`` a log without a row is a
    one-line :class:`ConfigError` (what a training curve needs)."""
    p = Path(out) / LOG_FILE
    if not p.is_file():
        raise ConfigError(f"{p}: missing (not a jaxsched training directory)")
    rows = []
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ConfigError(f"{p}: cannot read: {e.strerror or e}") from None
    lines = text.split("\n")
    for i, line in enumerate(lines, 1):
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if not isinstance(row, dict):
                if i == len(lines):
                    # a last line without its newline that is not a whole row: cut by a kill
                    # in the middle of its write (the next append_line truncates it)
                    break
                raise ConfigError(f"{p}:{i}: not a JSON object") from None
            rows.append(row)
    if nonempty and not rows:
        raise ConfigError(f"{p}: no epochs logged yet")
    return rows


def epoch_rows(out) -> list:
    """The rows of ``DIR/log.jsonl`` one per epoch, in epoch order; an epoch logged more than
    once (a run resumed from an earlier checkpoint) by its last line."""
    last = {int(r["epoch"]): r for r in read_log(out)}
    return [last[e] for e in sorted(last)]


def training_seconds(out) -> dict:
    """Cumulative training time at the end of each logged epoch of the run in ``out``:
    ``{epoch: seconds}``, the sum of the log's per-epoch ``seconds`` (the first epoch's includes
    compilation; validation and checkpoint writing are not counted). An epoch logged more than
    once counts once (its last line)."""
    total, cum = 0.0, {}
    for r in epoch_rows(out):
        total += float(r.get("seconds", 0.0))
        cum[int(r["epoch"])] = total
    return cum


# ----------------------------------------------------------------------------------------------
# the epoch loop
# ----------------------------------------------------------------------------------------------
@dataclasses.dataclass
class EpochSpec:
    """What a system plugs into :func:`run_epochs`.

    Attributes:
        trainer_at: ``epoch -> trainer`` (1-based epoch; e.g. another trainer in a second
            training phase).
        row: ``(epoch, metrics, trainer) -> dict``, the system's columns of the epoch's log
            line (host metrics of the update, ``episode_info_*`` included); they follow
            ``epoch`` and ``seconds``.
        message: ``row -> str`` for the progress bar / log line.
        validate: optional ``(state, epoch, checkpoint path) -> dict`` of further columns (e.g.
            a validation score; keep the best with :class:`BestCheckpoint`), called every
            ``validate_every`` epochs and at the last one.
        validate_every: K > 0 with ``validate``.
        keep: epoch checkpoints kept (0 or None: all).
    """

    trainer_at: Callable
    row: Callable
    message: Callable
    validate: Callable | None = None
    validate_every: int = 0
    keep: int | None = 1


def run_epochs(
    out,
    state,
    history: list,
    spec: EpochSpec,
    *,
    done_epochs: int,
    epochs: int,
    t0: float,
    progress: bool = True,
    log: Callable[[str], None] = print,
):
    """Run epochs ``done_epochs + 1 .. epochs``: update, log row, checkpoint (keeping
    ``spec.keep``), validation, progress.  ``t0`` (``time.perf_counter()`` before the trainer
    was built) gives the first epoch's ``first_epoch_s_incl_compile``; ``history`` (metrics of
    the epochs done, without ``episode_info_*``) is appended to and saved in each checkpoint.

    Returns ``(state, history)``."""
    out = Path(out)
    recover_log(out, spec, state, done_epochs)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=epochs, initial=done_epochs, unit="epoch", dynamic_ncols=True)
    try:
        for epoch in range(done_epochs + 1, epochs + 1):
            e0 = time.perf_counter()
            trainer = spec.trainer_at(epoch)
            state, m = trainer.update(state)
            m = jax.device_get(m)
            e1 = time.perf_counter()
            row = {"epoch": epoch, "seconds": round(e1 - e0, 3), **spec.row(epoch, m, trainer)}
            if epoch == done_epochs + 1:
                row["first_epoch_s_incl_compile"] = round(e1 - t0, 3)
            history.append({k: v for k, v in m.items() if not k.startswith("episode_info")})
            ck, due = save_epoch(out, spec, state, row, history, trainer, epochs)
            finish_epoch(out, spec, state, row, ck, due)
            msg = spec.message(row)
            if bar is not None:
                bar.set_postfix_str(msg)
                bar.update(1)
            else:
                log(f"epoch {epoch}/{epochs}: {msg}")
    finally:
        if bar is not None:
            bar.close()
    return state, history


#: the ``extra`` key of an epoch checkpoint holding the epoch's log row (without validation)
#: and whether the epoch is validated: what :func:`recover_log` needs to finish an epoch that
#: was interrupted after its checkpoint was written
PENDING_KEY = "log_row"


def save_epoch(out, spec: EpochSpec, state, row: dict, history: list, trainer, epochs: int):
    """Write the checkpoint of ``row["epoch"]`` with the epoch's log row inside it (so the row
    is never lost: :func:`recover_log`); returns ``(checkpoint path, validation due)``."""
    epoch = int(row["epoch"])
    every = int(spec.validate_every or 0)
    due = bool(spec.validate is not None and every and (epoch % every == 0 or epoch == epochs))
    ck = save_checkpoint(
        out,
        state,
        epoch=epoch,
        config=trainer.run_config(),
        metrics_history=history,
        extra={PENDING_KEY: json.dumps(row), "validate": due},
        keep=int(spec.keep or 0) or None,
    )
    return ck, due


def finish_epoch(out, spec: EpochSpec, state, row: dict, ck, due: bool) -> dict:
    """After an epoch's checkpoint ``ck``: its validation when ``due`` (which may update
    ``best.ckpt``), then its row appended to ``log.jsonl`` (a cut last line is dropped
    first); returns the row."""
    if due:
        row.update(spec.validate(state, int(row["epoch"]), ck))
    append_line(Path(out) / LOG_FILE, json.dumps(row))
    return row


def recover_log(out, spec: EpochSpec, state, done_epochs: int) -> dict | None:
    """On resume at ``done_epochs``: when the run was stopped after the checkpoint of that
    epoch was written but before its row reached ``log.jsonl`` (validation included), finish
    the epoch now from the row the checkpoint holds (validating ``state`` when the epoch was
    due to be), as the run would have. Returns the recovered row or None."""
    out = Path(out)
    if not done_epochs or not (out / LOG_FILE).is_file():
        return None
    logged = _logged_epochs(out)
    if logged and max(logged) >= done_epochs:
        return None
    from jaxsched.train.checkpoint import checkpoint_path

    ck_path = checkpoint_path(out, done_epochs)
    if not ck_path.is_file():
        return None
    extra = load_checkpoint(ck_path).extra
    if not isinstance(extra, dict) or PENDING_KEY not in extra:
        return None  # written by an older jaxsched: the row is lost
    try:
        row = json.loads(extra[PENDING_KEY])
    except (TypeError, ValueError):
        raise CheckpointError(f"{ck_path}: its log row is not JSON") from None
    return finish_epoch(out, spec, state, row, ck_path, bool(extra.get("validate")))
