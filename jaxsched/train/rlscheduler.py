"""Train and evaluate RLScheduler policies on a trace (the engine behind ``jaxsched train``).

The pieces: the pick-a-job environment (:class:`jaxsched.envs.RLSchedulerEnv`, with
auto-reset), the kernel policy and value networks (:mod:`jaxsched.nets`) and the compiled PPO
update (:func:`jaxsched.train.make_train`). The Python loop here only logs, compares with the
heuristics, checkpoints and resumes.

Run directory layout (``--out DIR``)::

    DIR/run.json                  what was trained (trace, metric, backfill, PPO config, seed)
    DIR/log.jsonl                 one JSON object per epoch (return, metric, SJF/F1 of the same
                                  sequences, KL, losses, seconds)
    DIR/checkpoint_00000012.ckpt  the newest checkpoint (parameters, optimiser states, RNG,
                                  epoch, metrics history)
    DIR/validation.json           with --validate: the validation sequences and SJF / F1 on them
    DIR/best.ckpt, best.json      with --validate: the best checkpoint so far and its score
    DIR/filter.npz                with a trajectory filter: SJF's metric per start index and
                                  the acceptance interval (computed once, reused on resume)

Example::

    from jaxsched.train.rlscheduler import train, load_policy, policy_metric
    train("traces/lublin-1.swf", "runs/l1", epochs=20)
    pol = load_policy("runs/l1")
    policy_metric(pol, jobs, starts=[1981, 2756], length=1024)     # greedy (argmax) picks
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import time
from collections.abc import Callable
from collections.abc import Sequence as Seq
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched import formatting as F
from jaxsched import nets
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv
from jaxsched.envs.rlscheduler import PAD_ROW
from jaxsched.errors import CheckpointError, ConfigError
from jaxsched.sim.evaluate import evaluate
from jaxsched.train.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from jaxsched.train.ppo import PPOConfig, make_train
from jaxsched.workload import read_swf

RUN_FILE = "run.json"
LOG_FILE = "log.jsonl"
#: the checkpoint with the best validation score so far, and its description
BEST_FILE = "best.ckpt"
BEST_INFO = "best.json"
#: the validation sequences and the heuristics' results on them
VAL_INFO = "validation.json"


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Everything that shapes a training run (saved as ``run.json`` and in checkpoints).

    Attributes:
      trace: SWF path; rules: parse rules of :meth:`jaxsched.workload.Trace.jobs`.
      metric: reward metric (:data:`jaxsched.sim.metrics.METRICS`); backfill: ``none``,
        ``rlscheduler`` or ``easy``; compat: reference semantics (True) or the correct mode.
      length: jobs per training sequence (256); max_queue: observation slots (128);
      cutoff: ``reference`` or ``fcfs``; job_slice: sample starts from the first N jobs
        (0 = all).
      policy, value: network names (:func:`jaxsched.nets.make_policy` / ``make_value``).
      seed: PRNG seed; ppo: :class:`PPOConfig` as a dict.
      filter: trajectory filter of spec §7 (:data:`jaxsched.train.filtering.FILTERS`):
        ``off``, ``paper`` ((median, 2·mean) of SJF over all sampling starts) or ``reference``
        ((10, 150) with the code's off-by-one); training sequences are drawn only among the
        accepted starts. filter_epochs: length of phase 1 in epochs; after it training goes on
        with all sequences (phase 2). 0: the filter stays on for the whole run.
      init_from: checkpoint (file or run directory) whose networks and optimiser states start
        this run (the reference's ``--pre_trained``; e.g. phase 2 of a filtered run, or a
        continuation with other PPO settings); empty: a fresh initialisation from ``seed``.
    """

    trace: str
    rules: str = "rlscheduler"
    metric: str = "bsld"
    backfill: str = "none"
    compat: bool = True
    length: int = 256
    max_queue: int = 128
    cutoff: str = "reference"
    job_slice: int = 0
    policy: str = "kernel"
    value: str = "kernel"
    seed: int = 0
    ppo: dict = dataclasses.field(default_factory=lambda: PPOConfig().to_dict())
    filter: str = "off"
    filter_epochs: int = 0
    init_from: str = ""

    def ppo_config(self) -> PPOConfig:
        return PPOConfig.from_dict(self.ppo)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ConfigError(f"unknown run setting(s): {', '.join(sorted(unknown))}")
        return cls(**d)


#: slot-prefix buckets of the update (:func:`jaxsched.train.make_train`'s ``slot_buckets``)
SLOT_BUCKETS = (8, 16, 32, 64)


def prefix_options(rc: RunConfig) -> dict:
    """``make_train`` options that evaluate the per-slot networks of a run on slot prefixes
    (computation only: the same update up to float rounding). The kernel policy is per-slot;
    the kernel value net sees the padding rows through :class:`~jaxsched.nets.KernelValue`'s
    ``pad_row``."""
    if rc.policy != "kernel":
        return {}
    opts = {"slot_buckets": SLOT_BUCKETS}
    if rc.value == "kernel":
        opts["value_pad_row"] = PAD_ROW
    return opts


def make_env(jobs, rc: RunConfig, length: int | None = None, start_table=None) -> RLSchedulerEnv:
    """The environment of a run (``length`` overrides the training length, e.g. 1024 for the
    paper's test sequences; ``start_table`` restricts the sampled starts, spec §7)."""
    return RLSchedulerEnv(
        jobs,
        length=length or rc.length,
        backfill=rc.backfill,
        compat=rc.compat,
        metric=rc.metric,
        max_queue=rc.max_queue,
        cutoff=rc.cutoff,
        job_slice=rc.job_slice,
        start_table=start_table,
    )


FILTER_FILE = "filter.npz"


def _start_table(jobs, rc: RunConfig, out: Path, log) -> np.ndarray:
    """The trajectory filter's acceptance table of a run (bool ``[n_jobs]``): SJF's metric per
    start computed once and cached in ``DIR/filter.npz``."""
    from jaxsched.train.filtering import make_filter, sjf_by_start

    path = out / FILTER_FILE
    low, high = RLSchedulerEnv(jobs, length=rc.length, job_slice=rc.job_slice).start_range
    values = None
    if path.is_file():
        try:
            with np.load(path) as z:
                values = np.asarray(z["sjf"], np.float64)
            if values.shape != (jobs.n_jobs,):
                values = None
        except (OSError, ValueError, KeyError):
            values = None  # unreadable cache: recompute it
    if values is None:
        t0 = time.perf_counter()
        values = sjf_by_start(
            jobs, rc.length, low, high, backfill=rc.backfill, compat=rc.compat, metric=rc.metric
        )
        log(
            f"trajectory filter: SJF {rc.metric} of the {high - low} sampling starts "
            f"computed in {time.perf_counter() - t0:.1f} s"
        )
    flt = make_filter(rc.filter, values[low:high])
    table = np.asarray(flt.start_table(values), bool)
    n_ok = int(table[low:high].sum())
    if n_ok == 0:
        raise ConfigError(
            f"--filter {rc.filter}: none of the {high - low} sampling starts has "
            f"an SJF {rc.metric} in ({flt.lower:g}, {flt.upper:g})"
        )
    if not path.is_file():
        tmp = out / (FILTER_FILE + ".tmp.npz")
        np.savez(tmp, sjf=values, lower=flt.lower, upper=flt.upper, mode=rc.filter)
        os.replace(tmp, path)
    log(
        f"trajectory filter {rc.filter}: SJF {rc.metric} in ({flt.lower:.4g}, "
        f"{flt.upper:.4g}), {n_ok} of {high - low} starts accepted"
        + (f" for the first {rc.filter_epochs} epochs" if rc.filter_epochs else "")
    )
    return table


def _episode_fn(env: RLSchedulerEnv, policy_net, sample: bool):
    """``(params, start, key) -> (metric, start_times)`` for one sequence, compiled once."""

    def run(params, start, key):
        state, ts = env.reset_at(start)

        def cond(c):
            return ~c[1].last()

        def body(c):
            st, t, k = c
            k, sub = jax.random.split(k)
            logits = policy_net.apply(params, t.observation.obs, t.observation.mask)
            a = (
                nets.sample_action(sub, logits, t.observation.mask)
                if sample
                else nets.greedy_action(logits, t.observation.mask)
            )
            st, t = env.step(st, a)
            return st, t, k

        state, ts, _ = jax.lax.while_loop(cond, body, (state, ts, key))
        return env.metric_value(state), state.sim.start

    return run


@dataclasses.dataclass
class LoadedPolicy:
    """A trained policy: its run configuration, network and parameters."""

    run: RunConfig
    net: object
    params: object
    epoch: int
    path: Path


def _episodes_fn(env: RLSchedulerEnv, policy_net, sample: bool):
    """``(params, starts [S], keys [S]) -> (metrics [S], start_times [S, L])``, compiled."""
    return jax.jit(jax.vmap(_episode_fn(env, policy_net, sample), in_axes=(None, 0, 0)))


def load_policy(path) -> LoadedPolicy:
    """Load the newest checkpoint of a run directory (or a checkpoint file)."""
    p = Path(path)
    run_file = (p if p.is_dir() else p.parent) / RUN_FILE
    if not run_file.is_file():
        raise CheckpointError(f"{run_file}: missing (not a jaxsched training directory)")
    try:
        rc = RunConfig.from_dict(json.loads(run_file.read_text()))
    except (ValueError, TypeError) as e:
        raise CheckpointError(f"{run_file}: unreadable run settings: {e}") from None
    ck = load_checkpoint(p)
    st = ck.state
    if not isinstance(st, dict) or "policy_params" not in st:
        raise CheckpointError(f"{ck.path}: no policy parameters in this checkpoint")
    params = jax.tree_util.tree_map(jnp.asarray, st["policy_params"])
    return LoadedPolicy(
        run=rc, net=nets.make_policy(rc.policy), params=params, epoch=ck.epoch, path=ck.path
    )


def policy_metric(
    policy: LoadedPolicy,
    jobs,
    starts: Seq[int],
    length: int,
    *,
    backfill: str | None = None,
    metric: str | None = None,
    sample: bool = False,
    seed: int = 0,
):
    """Run a learned policy on the sequences ``start … start+length-1`` (greedy picks, or
    sampled ones as the reference's test script does with ``sample=True``).

    Returns ``(values, start_times)``: float64 ``[S]`` metric per sequence and int64
    ``[S, length]`` start times.
    """
    rc = policy.run
    if backfill is not None or metric is not None:
        rc = dataclasses.replace(rc, backfill=backfill or rc.backfill, metric=metric or rc.metric)
    env = make_env(jobs, rc, length)
    fn = _episodes_fn(env, policy.net, sample)
    starts = np.asarray(list(starts), np.int32)
    n = jobs.n_jobs
    bad = [int(s) for s in starts if s < 0 or s + length > n]
    if bad:
        raise ConfigError(
            f"sequence start {bad[0]} with {length} jobs runs past the {n} loaded jobs"
        )
    keys = jax.random.split(jax.random.PRNGKey(seed), len(starts))
    vals, st = fn(policy.params, jnp.asarray(starts), keys)
    return np.asarray(vals, np.float64), np.asarray(st)


# ----------------------------------------------------------------------------------------------
# Training loop
# ----------------------------------------------------------------------------------------------
def _episode_starts(metrics: dict) -> np.ndarray:
    s = np.asarray(metrics.get("episode_info_start", []))
    ok = np.asarray(metrics.get("episode_info_valid", np.ones(s.shape, bool)), bool)
    return s[ok].astype(np.int64)


def _heuristic_means(jobs, starts, rc: RunConfig, policies=("sjf", "f1")) -> dict:
    if len(starts) == 0:
        return {}
    res = evaluate(
        jobs,
        starts,
        rc.length,
        list(policies),
        [rc.backfill],
        compat=rc.compat,
        metrics=(rc.metric,),
    )
    return {p: float(v) for (p, _), v in res.table(rc.metric).items()}


def train(
    trace,
    out,
    epochs: int,
    *,
    metric: str = "bsld",
    backfill: str = "none",
    compat: bool = True,
    seed: int = 0,
    resume: bool = False,
    rules: str = "rlscheduler",
    ppo: dict | None = None,
    length: int = 256,
    max_queue: int = 128,
    cutoff: str = "reference",
    job_slice: int = 0,
    policy: str = "kernel",
    value: str = "kernel",
    compare: bool = True,
    progress: bool = True,
    validate: int = 0,
    val_sequences: int = 10,
    val_jobs: int = 1024,
    val_seed: int = 2,
    filter: str = "off",
    filter_epochs: int = 0,
    init_from=None,
    keep_checkpoints: int = 1,
    log: Callable[[str], None] = print,
) -> dict:
    """Train an RLScheduler policy for ``epochs`` epochs in total (``resume`` continues the
    run in ``out`` from its newest checkpoint, bit for bit; without it ``out`` must not hold a
    run yet). Returns ``{"epochs", "history", "run"}``.

    ``ppo``: overrides of :class:`PPOConfig` fields (e.g. ``{"num_envs": 20}``); ``compare``:
    evaluate SJF and F1 on each epoch's sequences for the log (cheap: one batched call).

    ``validate`` = K > 0: every K epochs (and at the last one) the greedy policy runs on
    ``val_sequences`` sequences of ``val_jobs`` jobs drawn the reference's way with
    ``val_seed`` (the paper's test sequences are seed 1, so the default 2 keeps them out of
    model selection); the log gets ``val_<metric>``, and the best checkpoint so far is kept as
    ``DIR/best.ckpt`` with ``DIR/best.json`` (epoch, score, starts) — load it with
    ``load_policy(DIR / "best.ckpt")`` or ``evaluate --model DIR/best.ckpt``.

    ``filter`` / ``filter_epochs``: the trajectory filter (:class:`RunConfig`); with
    ``filter_epochs`` = K > 0, epochs 1..K train on the accepted sequences (phase 1) and the
    later ones on all (phase 2), in the same run and checkpoints.

    ``init_from``: start from the networks and optimiser states of another run's checkpoint
    (:class:`RunConfig`); the epochs of this run count from 1 again.

    ``keep_checkpoints``: how many of the newest epoch checkpoints stay in ``out`` (default 1;
    0 keeps every epoch's, e.g. to score them all afterwards with ``evaluate --model``).
    """
    out = Path(out)
    jobs_cache = {}
    rc = RunConfig(
        trace=str(trace),
        rules=rules,
        metric=metric,
        backfill=backfill,
        compat=compat,
        length=length,
        max_queue=max_queue,
        cutoff=cutoff,
        job_slice=job_slice,
        policy=policy,
        value=value,
        seed=seed,
        ppo=PPOConfig.from_dict({**PPOConfig().to_dict(), **(ppo or {})}).to_dict(),
        filter=filter,
        filter_epochs=filter_epochs,
        init_from=str(init_from) if init_from else "",
    )
    if (
        isinstance(keep_checkpoints, bool)
        or not isinstance(keep_checkpoints, (int, np.integer))
        or keep_checkpoints < 0
    ):
        raise ConfigError(
            f"--keep-checkpoints must be an integer >= 0 (0 keeps all), got {keep_checkpoints!r}"
        )
    run_file = out / RUN_FILE
    if resume:
        if not run_file.is_file():
            raise ConfigError(
                f"{out}: nothing to resume (no {RUN_FILE}); drop --resume to start a new run"
            )
        saved = RunConfig.from_dict(json.loads(run_file.read_text()))
        rc = saved
    elif run_file.exists():
        raise ConfigError(
            f"{out}: already holds a training run; use --resume to continue it "
            f"or choose another --out"
        )
    if epochs < 1:
        raise ConfigError(f"--epochs must be >= 1 (got {epochs})")
    from jaxsched.train.filtering import FILTERS

    if rc.filter not in FILTERS:
        raise ConfigError(
            f"unknown trajectory filter {rc.filter!r}; choose from {', '.join(FILTERS)}"
        )
    if int(rc.filter_epochs) < 0:
        raise ConfigError(f"--filter-epochs must be >= 0 (got {rc.filter_epochs})")
    jobs = jobs_cache.setdefault(rc.trace, read_swf(rc.trace).jobs(rc.rules))
    val = None
    if validate:  # before anything is written: a bad setting fails cleanly
        if int(validate) < 0:
            raise ConfigError(f"--validate must be >= 0 (got {validate})")
        val = _Validator(jobs, rc, out, val_sequences, val_jobs, val_seed)

    def trainer_for(start_table=None):
        env = AutoResetWrapper(make_env(jobs, rc, start_table=start_table))
        return make_train(
            rc.ppo_config(),
            env,
            nets.make_policy(rc.policy),
            nets.make_value(rc.value),
            episode_info_fn=lambda ts: {"start": ts.extras["start"]},
            **prefix_options(rc),
        )

    if rc.filter != "off":
        if not resume:
            out.mkdir(parents=True, exist_ok=True)
        phase1 = trainer_for(_start_table(jobs, rc, out, log))
        phase2 = None  # the unfiltered trainer, built when phase 2 starts
    else:
        phase1 = trainer_for()

    def trainer_at(epoch):
        nonlocal phase2
        if rc.filter == "off" or not rc.filter_epochs or epoch <= rc.filter_epochs:
            return phase1
        if phase2 is None:
            phase2 = trainer_for()
        return phase2

    trainer = phase1
    t0 = time.perf_counter()
    state = trainer.init(jax.random.PRNGKey(rc.seed))
    history: list = []
    done_epochs = 0
    if resume and latest_checkpoint(out) is not None:
        ck = load_checkpoint(out, target=state, config=trainer.run_config())
        state, history, done_epochs = ck.state, list(ck.metrics_history), ck.epoch
        log(f"resuming {out} at epoch {done_epochs}")
    else:
        if rc.init_from:  # every leaf must match this run's networks (clear error if not)
            src = load_checkpoint(rc.init_from, target=state).state
            state = state.replace(
                policy_params=src.policy_params,
                value_params=src.value_params,
                policy_opt_state=src.policy_opt_state,
                value_opt_state=src.value_opt_state,
            )
            log(f"networks and optimiser states from {rc.init_from}")
        out.mkdir(parents=True, exist_ok=True)
        run_file.write_text(json.dumps(rc.to_dict(), indent=1) + "\n")
        (out / LOG_FILE).write_text("")
    if done_epochs >= epochs:
        log(f"{out}: already trained for {done_epochs} epochs (asked for {epochs})")
        return {"epochs": done_epochs, "history": history, "run": rc}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=epochs, initial=done_epochs, unit="epoch", dynamic_ncols=True)
    compile_s = None
    try:
        for epoch in range(done_epochs + 1, epochs + 1):
            e0 = time.perf_counter()
            trainer = trainer_at(epoch)
            state, m = trainer.update(state)
            m = jax.device_get(m)
            e1 = time.perf_counter()
            if compile_s is None:
                compile_s = e1 - t0
            starts = _episode_starts(m)
            row = {
                "epoch": epoch,
                "seconds": round(e1 - e0, 3),
                "episodes": int(len(starts)),
                "return": float(m["episode_return"]),
                rc.metric: float(abs(m["episode_return"])),
                "approx_kl": float(m["approx_kl"]),
                "pi_iters": int(m["pi_iters"]),
                "pi_loss": float(m["pi_loss"]),
                "v_loss": float(m["v_loss"]),
                "entropy": float(m["entropy"]),
            }
            if rc.filter != "off":
                row["filtered"] = trainer is phase1
            if compare:
                row.update(
                    {f"{p}_{rc.metric}": v for p, v in _heuristic_means(jobs, starts, rc).items()}
                )
            if epoch == done_epochs + 1:
                row["first_epoch_s_incl_compile"] = round(e1 - t0, 3)
            hist_m = {k: v for k, v in m.items() if not k.startswith("episode_info")}
            history.append(hist_m)
            ck = save_checkpoint(
                out,
                state,
                epoch=epoch,
                config=trainer.run_config(),
                metrics_history=history,
                keep=int(keep_checkpoints) or None,
            )
            if val is not None and (epoch % int(validate) == 0 or epoch == epochs):
                row[f"val_{rc.metric}"] = val(state.policy_params, epoch, ck)
            with open(out / LOG_FILE, "a") as f:
                f.write(json.dumps(row) + "\n")
            msg = (
                f"{rc.metric} {F.number(row[rc.metric])}"
                + "".join(
                    f" {p} {F.number(row.get(f'{p}_{rc.metric}', math.nan))}"
                    for p in ("sjf", "f1")
                    if compare
                )
                + (
                    f" val {F.number(row[f'val_{rc.metric}'])} (sjf "
                    f"{F.number(val.heuristics.get('sjf', math.nan))} f1 "
                    f"{F.number(val.heuristics.get('f1', math.nan))})"
                    if f"val_{rc.metric}" in row
                    else ""
                )
                + f" {row['seconds']:.1f}s/epoch"
            )
            if bar is not None:
                bar.set_postfix_str(msg)
                bar.update(1)
            else:
                log(f"epoch {epoch}/{epochs}: {msg}")
    finally:
        if bar is not None:
            bar.close()
    return {"epochs": epochs, "history": history, "run": rc}


class _Validator:
    """Greedy validation runs of a training run (compiled once) and the best checkpoint."""

    def __init__(self, jobs, rc: RunConfig, out: Path, n: int, length: int, seed: int):
        from jaxsched.sim.metrics import HIGHER_IS_BETTER
        from jaxsched.workload import reference_starts

        self.starts = reference_starts(seed, n, length, jobs.n_jobs)
        self.out, self.length = out, int(length)
        self.sign = -1.0 if rc.metric in HIGHER_IS_BETTER else 1.0
        env = make_env(jobs, rc, length)
        self.fn = _episodes_fn(env, nets.make_policy(rc.policy), False)
        self.keys = jax.random.split(jax.random.PRNGKey(0), n)
        res = evaluate(
            jobs,
            self.starts,
            self.length,
            ["sjf", "f1"],
            [rc.backfill],
            compat=rc.compat,
            metrics=(rc.metric,),
        )
        self.heuristics = {p: v for (p, _), v in res.table(rc.metric).items()}
        out.mkdir(parents=True, exist_ok=True)
        (out / VAL_INFO).write_text(
            json.dumps(
                {
                    "starts": [int(x) for x in self.starts],
                    "jobs": self.length,
                    "seed": int(seed),
                    "metric": rc.metric,
                    "backfill": rc.backfill,
                    **self.heuristics,
                }
            )
            + "\n"
        )
        self.best = None
        info = out / BEST_INFO
        if info.is_file() and (out / BEST_FILE).is_file():
            try:
                self.best = float(json.loads(info.read_text())["value"])
            except (ValueError, KeyError, TypeError):
                self.best = None

    def __call__(self, params, epoch: int, checkpoint: Path) -> float:
        vals, _ = self.fn(params, jnp.asarray(self.starts, jnp.int32), self.keys)
        value = float(np.mean(np.asarray(vals)))
        if self.best is None or self.sign * value < self.sign * self.best:
            self.best = value
            tmp = self.out / (BEST_FILE + ".tmp")
            shutil.copyfile(checkpoint, tmp)
            os.replace(tmp, self.out / BEST_FILE)
            (self.out / BEST_INFO).write_text(
                json.dumps(
                    {
                        "epoch": epoch,
                        "value": value,
                        "starts": [int(x) for x in self.starts],
                        "jobs": self.length,
                    }
                )
                + "\n"
            )
        return value


def read_log(out) -> list:
    """The per-epoch rows of ``DIR/log.jsonl``."""
    p = Path(out) / LOG_FILE
    if not p.is_file():
        raise ConfigError(f"{p}: missing (not a jaxsched training directory)")
    rows = []
    for i, line in enumerate(p.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise ConfigError(f"{p}:{i}: not a JSON object") from None
    return rows


def training_seconds(out) -> dict:
    """Cumulative training time at the end of each logged epoch of the run in ``out``:
    ``{epoch: seconds}``, the sum of the log's per-epoch ``seconds`` (the first epoch's includes
    compilation; validation and checkpoint writing are not counted). An epoch logged more than
    once counts once (its last line)."""
    per = {}
    for r in read_log(out):
        per[int(r["epoch"])] = float(r.get("seconds", 0.0))
    total, cum = 0.0, {}
    for e in sorted(per):
        total += per[e]
        cum[e] = total
    return cum


def plot(out, path=None) -> Path:
    """Training curve as a PNG: the metric of each epoch's sampled sequences with SJF and F1 on
    the same sequences, and with ``--validate`` the greedy policy's validation scores with SJF
    and F1 on the validation sequences (horizontal lines)."""
    rows = read_log(out)
    if not rows:
        raise ConfigError(f"{Path(out) / LOG_FILE}: no epochs logged yet")
    rc = RunConfig.from_dict(json.loads((Path(out) / RUN_FILE).read_text()))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("plotting needs matplotlib: pip install 'jaxsched[plot]'") from None
    ep = [r["epoch"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(ep, [r[rc.metric] for r in rows], label="RL (training sequences)")
    for p in ("sjf", "f1"):
        k = f"{p}_{rc.metric}"
        if any(k in r for r in rows):
            ax.plot(ep, [r.get(k, np.nan) for r in rows], "--", label=p.upper())
    vk = f"val_{rc.metric}"
    val_rows = [r for r in rows if vk in r]
    if val_rows:
        ax.plot(
            [r["epoch"] for r in val_rows],
            [r[vk] for r in val_rows],
            "o-",
            ms=3,
            label="RL greedy (validation sequences)",
        )
        info = Path(out) / VAL_INFO
        heur = json.loads(info.read_text()) if info.is_file() else {}
        for p, style in (("sjf", ":"), ("f1", "-.")):
            if isinstance(heur.get(p), (int, float)):
                ax.axhline(
                    heur[p],
                    linestyle=style,
                    color="gray",
                    linewidth=1,
                    label=f"{p.upper()} (validation sequences)",
                )
    ax.set_xlabel("epoch")
    ax.set_ylabel(rc.metric)
    ax.set_title(f"{Path(rc.trace).name}, backfill {rc.backfill}")
    ax.legend()
    fig.tight_layout()
    path = Path(path) if path else Path(out) / "training_curve.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def model_rows(
    policy: LoadedPolicy,
    jobs,
    starts: Seq[int],
    length: int,
    backfills: Seq[str],
    metrics: Seq[str],
    compat: bool,
    *,
    sample: bool = False,
    name: str = "rl",
    seed: int = 0,
) -> list:
    """Rows in :class:`jaxsched.sim.evaluate.EvalResult`'s schema for a learned policy on the
    given sequences (one run per backfill mode), metrics computed from its schedules."""
    from jaxsched.sim import oracle

    rows = []
    for bf in backfills:
        rc = dataclasses.replace(policy.run, backfill=bf, compat=bool(compat))
        pol = dataclasses.replace(policy, run=rc)
        _, st = policy_metric(pol, jobs, starts, length, sample=sample, seed=seed)
        for s, times in zip(starts, st):
            sl = slice(int(s), int(s) + length)
            m = oracle.metrics(
                jobs.submit[sl],
                jobs.run[sl],
                jobs.procs[sl],
                times,
                num_procs=float(jobs.num_procs),
                compat=bool(compat),
                users=jobs.user[sl],
            )
            for name_m in metrics:
                rows.append(
                    {
                        "start": int(s),
                        "jobs": length,
                        "policy": name,
                        "backfill": bf,
                        "metric": name_m,
                        "value": float(m[name_m]),
                    }
                )
    return rows
