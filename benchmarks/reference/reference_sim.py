"""Time the original RLScheduler simulator (SchedGym) from a local checkout, side by side.

The reference code is not part of jaxsched (third-party, and it needs an old gym); this module
imports it from a directory the user names — a clone of the paper's repository
(``git clone https://github.com/DIR-LAB/deep-batch-scheduler``; the paper's version is commit
a384fd4) — and runs its own heuristic loop, ``HPCEnv.schedule_curr_sequence_reset``, on given
sequences, timing each run. Only that loop is used: it needs numpy, nothing of gym or scipy,
so missing ``gym``/``scipy`` modules are replaced by empty stand-ins before the import.

    from benchmarks.reference.reference_sim import time_reference
    rows = time_reference("/src/deep-batch-scheduler", "traces/lublin-1.swf",
                          [1981, 2756], 1024, ["fcfs", "sjf"], ["none", "rlscheduler"])

Each sequence is set up the way the reference's ``reset_for_test`` does (idle cluster, clock at
the first submit, the first job queued), with the start given instead of drawn.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import io
import os
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

#: our policy names -> the reference's score functions (``HPCEnv`` methods)
SCORE_FN = {
    "fcfs": "fcfs_score",
    "wfp3": "wfp_score",
    "unicep": "uni_score",
    "sjf": "sjf_score",
    "f1": "f1_score",
    "f2": "f2_score",
    "f3": "f3_score",
    "f4": "f4_score",
    "sqf": "smallest_score",
}
MODULE = "HPCSimPickJobs"


class ReferenceUnavailable(RuntimeError):
    """The reference checkout cannot be used (missing file, wrong version)."""


def _stub(name: str, installed: list, **attrs) -> None:
    """Install an empty module ``name`` with ``attrs`` unless the real one imports (its name
    is appended to ``installed``)."""
    try:
        importlib.import_module(name)
        return
    except ImportError:
        pass
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    installed.append(name)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, mod)


class _Space:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _np_random(seed=None):
    rng = np.random.RandomState(seed)
    return rng, seed


def load_reference(
    ref_dir, module: str = MODULE, cls: str = "HPCEnv", repo: str = "DIR-LAB/deep-batch-scheduler"
) -> types.ModuleType:
    """Import ``module`` (default ``HPCSimPickJobs``) from the checkout ``ref_dir`` of ``repo``
    and check it defines ``cls``; gym, scipy and tensorflow are stubbed if absent (only the
    simulator is used; SchedInspector's ``HPCSimSkip`` imports tensorflow at the top)."""
    ref_dir = Path(ref_dir).expanduser().resolve()
    if not (ref_dir / f"{module}.py").is_file():
        raise ReferenceUnavailable(f"{ref_dir}: no {module}.py there (expected a clone of {repo})")
    stubs: list = []
    _stub("tensorflow", stubs)
    _stub("gym", stubs, Env=object)
    _stub("gym.spaces", stubs, Box=_Space, Discrete=_Space)
    _stub("gym.utils", stubs)
    _stub("gym.utils.seeding", stubs, np_random=_np_random)
    _stub("scipy", stubs)
    _stub("scipy.signal", stubs)
    if str(ref_dir) not in sys.path:
        sys.path.insert(0, str(ref_dir))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            mod = importlib.import_module(module)
    finally:
        for name in stubs:  # the stand-ins were only needed by the import itself
            sys.modules.pop(name, None)
    if not hasattr(mod, cls):
        raise ReferenceUnavailable(f"{ref_dir / (module + '.py')}: no {cls} class")
    return mod


def _plain_swf(trace: Path, tmp: Path) -> Path:
    """The reference reads plain text: gunzip ``.gz`` traces into ``tmp``."""
    if trace.suffix != ".gz":
        return trace
    out = tmp / trace.stem
    with gzip.open(trace, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _set_sequence(env, start: int, length: int) -> None:
    """What the reference's ``reset_for_test(length, ...)`` does, with ``start`` given."""
    env.cluster.reset()
    env.loads.reset()
    env.job_queue, env.running_jobs, env.visible_jobs, env.pairs = [], [], [], []
    env.scheduled_rl, env.scheduled_scores = {}, []
    env.penalty, env.pivot_job = 0, False
    env.start = start
    env.start_idx_last_reset = start
    env.num_job_in_batch = length
    env.last_job_in_batch = start + length
    env.current_timestamp = env.loads[start].submit_time
    env.job_queue.append(env.loads[start])
    env.next_arriving_job_idx = start + 1


def time_reference(
    ref_dir, trace, starts, length: int, policies, backfills, metric_type: int = 0
) -> list:
    """Run the reference's heuristic loop on every (backfill, policy, start).

    Args:
      ref_dir: the reference checkout; trace: SWF path (plain or .gz); starts: 0-based start
        indices; length: jobs per sequence; policies: names of :data:`SCORE_FN`;
      backfills: ``"none"`` and/or ``"rlscheduler"`` (the reference's ``backfil`` flag);
      metric_type: the reference's ``job_score_type`` (0 = average bounded slowdown).
    Returns:
      one dict per (policy, backfill): ``{"policy", "backfill", "ms": [per sequence],
      "ms_per_sequence": mean, "values": [the reference's metric per sequence]}``.
    """
    mod = load_reference(ref_dir)
    for p in policies:
        if p not in SCORE_FN:
            raise ReferenceUnavailable(
                f"policy {p!r} has no reference score function (known: {', '.join(SCORE_FN)})"
            )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = _plain_swf(Path(trace), Path(tmp))
        for bf in backfills:
            if bf not in ("none", "rlscheduler"):
                raise ReferenceUnavailable(
                    f"backfill {bf!r}: the reference has none/rlscheduler only"
                )
            with contextlib.redirect_stdout(io.StringIO()):
                env = mod.HPCEnv(backfil=bf == "rlscheduler", job_score_type=metric_type)
                env.seed(0)
                env.my_init(workload_file=os.fspath(path))
            for pol in policies:
                fn = getattr(env, SCORE_FN[pol], None)
                if fn is None:
                    raise ReferenceUnavailable(f"{MODULE}.HPCEnv has no {SCORE_FN[pol]}")
                ms, values = [], []
                for s in starts:
                    _set_sequence(env, int(s), length)
                    t0 = time.perf_counter()
                    logs = env.schedule_curr_sequence_reset(fn)
                    ms.append(1000.0 * (time.perf_counter() - t0))
                    values.append(float(sum(logs.values())))
                rows.append(
                    {
                        "policy": pol,
                        "backfill": bf,
                        "ms": ms,
                        "ms_per_sequence": float(np.mean(ms)),
                        "values": values,
                    }
                )
    return rows


def reference_env_steps_per_s(
    ref_dir, trace, steps: int, backfill: str = "none", seed: int = 0
) -> dict:
    """Step the reference environment (``HPCSimPickJobs.HPCEnv``: ``reset`` with its SJF and F1
    runs, ``step`` with observation building) ``steps`` times with uniformly random valid
    actions, resetting at the end of each episode, as a training rollout does.

    Args:
      ref_dir: the reference checkout; trace: SWF path (plain or .gz); steps: env steps timed;
      backfill: ``"none"`` or ``"rlscheduler"`` (the reference's ``backfil`` flag); seed: of the
        reference's sequence draws and of the random actions.
    Returns:
      ``{"steps", "seconds", "steps_per_s", "episodes"}`` (resets inside the timed loop).
    """
    if backfill not in ("none", "rlscheduler"):
        raise ReferenceUnavailable(f"backfill {backfill!r}: the reference has none/rlscheduler")
    mod = load_reference(ref_dir)
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = _plain_swf(Path(trace), Path(tmp))
        with contextlib.redirect_stdout(io.StringIO()):
            env = mod.HPCEnv(backfil=backfill == "rlscheduler", job_score_type=0)
            env.seed(seed)
            env.my_init(workload_file=os.fspath(path))
            t0 = time.perf_counter()
            env.reset()
            episodes = 0
            for _ in range(steps):
                valid = [i for i, p in enumerate(env.pairs) if p[0] is not None]
                a = int(valid[rng.integers(len(valid))]) if valid else 0
                if env.step(a)[2]:
                    episodes += 1
                    env.reset()
            seconds = time.perf_counter() - t0
    return {
        "steps": steps,
        "seconds": seconds,
        "steps_per_s": steps / seconds,
        "episodes": episodes,
    }
