"""DRAS's run configuration (``run.json``) and its job lists (spec ``dras.md`` §7.4, §9).

Loading follows CQSim (:func:`jaxsched.workload.cqsim.load_cqsim`: fields 1, 2, 4, 8, 9, run
time cut to the estimate, non-positive jobs dropped, N = the header's MaxProcs); jobs wider than
N are dropped here as well (CQSim keeps them but could never start them).  The §9 split
(:func:`jaxsched.workload.dras.split_trace`: 30-day months, two for training, one for
validation, the rest test) and the §7.4 curriculum (:func:`~jaxsched.workload.dras.curriculum_jobset`)
work on that list.

Every training jobset has exactly ``jobs_per_set`` (L) jobs so that E of them stack into one
vmapped :class:`~jaxsched.envs.dras.DRASEnv`: sampled and synthetic jobsets are drawn with L
jobs; a *real* jobset is the L consecutive training jobs from the first job of its week (the
last L of the training period if fewer remain) — a documented adaptation of "one week".
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxsched.errors import ConfigError
from jaxsched.workload.paths import checkout_of, portable_trace, resolve_trace  # noqa: F401

__all__ = ["SYSTEM_NAME", "RunConfig", "TraceSplit", "load_split", "env_jobs", "epoch_jobsets",
           "checkout_of", "portable_trace", "resolve_trace"]  # fmt: skip

SYSTEM_NAME = "dras"


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What a DRAS run trains.

    ``variant`` pg or dql; ``mode`` code|paper (the PG / DQL rules of spec §7.2 / §7.3 and
    the runtime source of the profile); ``input_norm`` (scale inputs by N and the longest training
    estimate; False = raw units as paper and code); ``window`` W (50, fixed by the
    environment); ``hidden`` (H1, H2) — empty = sized from the trace's N
    (:func:`jaxsched.nets.dras.dras_hidden`); ``envs`` jobsets per epoch (vmapped);
    ``jobs_per_set`` L (0 = the training trace's mean weekly job count, resolved when the run
    starts); curriculum counts ``n_sampled`` / ``n_real`` / ``n_synthetic`` (cycled when the
    epochs ask for more); ``capacity`` C decisions per batch (a batch of 10 scheduling
    instances that makes more is flushed early, counted in the log); ``update`` mean (one Adam
    step on the gradients averaged over the environments, the documented deviation of spec
    §13) or sequential (each environment's batch in turn, one Adam step each; DQL's only
    form, its updates being sequential per decision); None = mean (pg) / sequential (dql);
    ``lr`` (None = the mode's); ``dql_sign`` the DQL update direction, ``code`` (the code's
    and the paper's printed sign: V moves away from its target) or ``descent`` (V moves toward
    it — a deliberate deviation from both sources, spec Open ambiguity 4); None = the mode's
    (code → code, paper → descent); ``online`` PG's online adaptation during test runs (spec
    §2.5, §12.9: level-1 decisions recorded, a PG update every 10 instances, from a fresh Adam
    state; the weights are not saved); None = on in code mode (the reference), off in paper
    mode; DQL never learns during tests; ``reward`` (PG) the reward of each decision (spec
    §6): ``code`` (type 5), ``capability`` (the paper's Eq. 1) or ``capacity`` (Eq. 2, mean
    ``−1/t`` over the jobs left waiting); None = code in code mode, in paper mode capability
    when a ``priority`` threshold is set and capacity otherwise (the paper's two kinds of
    site); DQL: the code's reward (type 5, recorded after the start) unless ``reward`` names a
    paper reward; ``loop`` the scheduling loop: ``code`` (the code's:
    PG §2.5, the oldest job's persistent reservation; DQL §2.6, the oldest reserved for one
    pass), ``persistent`` (§2.5's persistent reservation, for DQL too), ``paper`` (§2.4, both
    variants: the non-fitting pick reserved for one pass) or ``immediate`` (PG: the
    Decima-PG baseline of §8, runnable jobs only, no reservation, no backfilling); None =
    the mode's; ``priority`` (None = flag 0, else the fraction of N above which a job has
    flag 1); ``validate`` (score the validation month every ``validate_every`` epochs, keep
    ``best.ckpt`` by ``best_by``: ``wait`` (lower average wait), ``reward`` (higher total
    reward, the paper's score) or ``bounded-wait`` (lower average wait among the epochs whose
    maximum wait stays within 1.5 × FCFS + EASY's on the validation month, issue 17's bound;
    the lowest maximum wait while none does)); ``queue_cap`` engine queue slots in evaluation runs (doubled
    on overflow); ``norm_scales`` (n_scale, t_scale) of ``input_norm``, resolved when the run
    starts (N and the longest training estimate); ``keep_checkpoints`` the newest epoch
    checkpoints kept in the run directory (None = 1, 0 = every epoch's, e.g. to score them
    again later); ``load`` F (None = 1): every training jobset's arrival times divided by F
    (its arrival rate times F; validation and tests keep the trace's times) — contention that a
    lightly loaded trace rarely shows, not in the paper.
    """

    trace: str
    variant: str = "pg"
    mode: str = "code"
    input_norm: bool = False
    window: int = 50
    hidden: tuple = ()
    envs: int = 4
    jobs_per_set: int = 0
    n_sampled: int = 9
    n_real: int = 9
    n_synthetic: int = 82
    capacity: int = 256
    update: str | None = None
    lr: float | None = None
    dql_sign: str | None = None
    online: bool | None = None
    reward: str | None = None
    loop: str | None = None
    priority: float | None = None
    seed: int = 0
    validate: bool = True
    validate_every: int = 1
    best_by: str = "wait"
    queue_cap: int = 4096
    norm_scales: tuple = ()
    keep_checkpoints: int | None = None
    load: float | None = None

    def __post_init__(self):
        checks = (
            (self.variant in ("pg", "dql"), f"variant must be pg or dql, got {self.variant!r}"),
            (self.mode in ("code", "paper"), f"mode must be code or paper, got {self.mode!r}"),
            (self.window == 50, f"window must be 50 (DRASEnv's W), got {self.window}"),
            (self.update in (None, "mean", "sequential"), f"update must be mean or sequential, got {self.update!r}"),
            (self.variant == "pg" or self.update != "mean", "dql updates are sequential (--update mean is pg only)"),
            (self.dql_sign in (None, "code", "descent"), f"dql_sign must be code or descent, got {self.dql_sign!r}"),
            (self.reward in (None, "code", "capability", "capacity"), f"reward must be code, capability or capacity, got {self.reward!r}"),
            (self.loop in (None, "code", "persistent", "paper", "immediate"), f"loop must be code, persistent, paper or immediate, got {self.loop!r}"),
            (self.variant == "pg" or self.loop != "immediate", "the immediate loop (Decima-PG) is pg only"),
            (self.best_by in ("wait", "reward", "bounded-wait"), f"best_by must be wait, reward or bounded-wait, got {self.best_by!r}"),
            (self.envs >= 1 and self.capacity >= 1, "envs and capacity must be >= 1"),
            (self.keep_checkpoints is None or self.keep_checkpoints >= 0, "keep_checkpoints must be >= 0"),
            (self.load is None or self.load > 0, f"load must be > 0, got {self.load}"),
            (len(self.hidden) in (0, 2), f"hidden must be two sizes, got {self.hidden}"),
        )  # fmt: skip
        for ok, msg in checks:
            if not ok:
                raise ConfigError(msg)
        if self.update is None:
            object.__setattr__(self, "update", "mean" if self.variant == "pg" else "sequential")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        object.__setattr__(self, "norm_scales", tuple(float(v) for v in self.norm_scales))

    def resolved(self, split: TraceSplit) -> RunConfig:
        """Hidden sizes, ``jobs_per_set`` and ``norm_scales`` filled in from the trace."""
        from jaxsched.nets.dras import dras_hidden
        from jaxsched.workload.dras import weekly_jobsets

        L = self.jobs_per_set or int(
            round(np.mean([w.n_jobs for w in weekly_jobsets(split.train)]))
        )
        return dataclasses.replace(
            self,
            hidden=self.hidden or dras_hidden(split.num_nodes),
            jobs_per_set=max(2, min(L, split.train.n_jobs)),
            norm_scales=self.norm_scales
            or (float(split.num_nodes), float(split.train.req_time.max())),
        )

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        d["norm_scales"] = list(self.norm_scales)
        # unset: left out, so older runs' settings still match
        for k in ("dql_sign", "online", "reward", "loop", "keep_checkpoints", "load"):
            if d[k] is None:
                del d[k]
        return {"system": SYSTEM_NAME, **d}

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names - {"system", "trace_sha256"}
        if unknown:
            raise ConfigError(f"unknown run settings: {', '.join(sorted(unknown))}")
        from jaxsched.systems import check_run_values

        check_run_values(cls, d, {"queue_cap": (1, 1 << 22), "window": (1, 1 << 16)})
        return cls(
            **{
                k: (tuple(v) if k in ("hidden", "norm_scales") else v)
                for k, v in d.items()
                if k in names
            }
        )

    @property
    def reward_name(self) -> str:
        """The reward the run trains on (:attr:`reward` resolved by the mode and priority)."""
        if self.reward is not None:
            return self.reward
        if self.mode == "code" or self.variant == "dql":
            return "code"
        return "capacity" if self.priority is None else "capability"

    @property
    def loop_name(self) -> str:
        """The scheduling loop (:attr:`loop` or the mode's)."""
        return self.loop or self.mode

    @property
    def online_test(self) -> bool:
        """bool: a test run of this model keeps learning (PG only; None = code mode)."""
        if self.variant != "pg":
            return False
        return self.mode == "code" if self.online is None else bool(self.online)

    def dql_config(self):
        """The :class:`~jaxsched.systems.dras.dql.DQLConfig` of a dql run (mode, sign, lr; targets
        scaled by ``max |G|`` on Eq. 2, whose returns are negative, by ``max G`` otherwise)."""
        from jaxsched.systems.dras.dql import DQLConfig

        lr = {} if self.lr is None else {"lr": float(self.lr)}
        norm = "absmax" if self.reward_name == "capacity" else "max"
        return DQLConfig(mode=self.mode, sign=self.dql_sign, target_norm=norm, **lr).resolved()

    @property
    def n_curriculum(self) -> int:
        return self.n_sampled + self.n_real + self.n_synthetic


@dataclasses.dataclass(frozen=True)
class TraceSplit:
    """The §9 periods as :class:`~jaxsched.workload.jobs.Jobs` (``train``, ``val``, ``test``),
    N, ``wide`` (jobs dropped for being wider than N) and ``split``: the same periods as the
    project's :class:`~jaxsched.workload.splits.Split` (job index ranges of CQSim's job list,
    :func:`~jaxsched.workload.splits.months_split`)."""

    train: object
    val: object
    test: object
    num_nodes: int
    wide: int
    split: object = None


def load_split(trace: str, *, months: tuple = (2, 1)) -> TraceSplit:
    """CQSim's job list of ``trace`` split by §9 (``months``: training, validation)."""
    from jaxsched.workload.cqsim import cqsim_slice, load_cqsim
    from jaxsched.workload.dras import MONTH, split_trace
    from jaxsched.workload.splits import months_split

    tr = load_cqsim(trace)
    sl = cqsim_slice(tr)
    wide = sl.nodes > tr.num_nodes
    jobs = sl.as_jobs(tr.path).select(~wide)
    train, val, test = split_trace(jobs, months[0] * MONTH, months[1] * MONTH)
    for name, part in (("training", train), ("validation", val), ("test", test)):
        if part.n_jobs < 2:
            raise ConfigError(f"{trace}: the {name} period has {part.n_jobs} jobs (need >= 2)")
    split = months_split(jobs.submit, *months)
    return TraceSplit(train, val, test, int(tr.num_nodes), int(wide.sum()), split)


def env_jobs(jobs, priority: float | None = None):
    """A :class:`~jaxsched.workload.jobs.Jobs` as the :class:`~jaxsched.workload.cqsim.CQSimJobs`
    DRASEnv reads (``nodes`` = ``procs``, submit from 0, the priority flag)."""
    from jaxsched.workload.cqsim import CQSimJobs

    N = int(jobs.num_procs)
    nodes = np.asarray(jobs.procs, np.int64)
    prio = np.zeros(len(nodes), np.int32) if priority is None else (nodes > priority * N)
    return CQSimJobs(
        job_id=np.arange(1, len(nodes) + 1, dtype=np.int64),
        submit=np.asarray(jobs.submit - jobs.submit[0], np.int64),
        run=np.asarray(jobs.run, np.int64), req_time=np.asarray(jobs.req_time, np.int64),
        nodes=nodes, priority=np.asarray(prio, np.int32), num_nodes=N,
    )  # fmt: skip


def _real_set(train, week_first: int, L: int):
    lo = max(0, min(int(week_first), train.n_jobs - L))
    return train.select(np.arange(lo, lo + L))


def epoch_jobsets(rc: RunConfig, train, epoch: int) -> list:
    """The ``rc.envs`` jobsets (Jobs of exactly ``rc.jobs_per_set`` jobs) of ``epoch``
    (1-based): curriculum indices ``(epoch − 1)·E … epoch·E − 1`` modulo its length; with
    ``rc.load`` their arrival times (from the first) divided by it."""
    from jaxsched.workload.dras import CurriculumConfig, curriculum_jobset

    L = int(rc.jobs_per_set)
    if not 2 <= L <= train.n_jobs:
        raise ConfigError(f"jobs_per_set {L} must be in [2, {train.n_jobs}] (training jobs)")
    cfg = CurriculumConfig(rc.n_sampled, rc.n_real, rc.n_synthetic, L, rc.seed)
    week_of = (train.submit - train.submit[0]) // (7 * 86400)
    week_first = [int(np.argmax(week_of == w)) for w in np.unique(week_of)]
    out = []
    for e in range(rc.envs):
        i = ((epoch - 1) * rc.envs + e) % rc.n_curriculum
        if rc.n_sampled <= i < rc.n_sampled + rc.n_real:
            out.append(_real_set(train, week_first[(i - rc.n_sampled) % len(week_first)], L))
        else:
            out.append(curriculum_jobset(train, i, cfg)[1])
    if rc.load is not None:  # arrival rate x F: submit times (from 0) divided by F
        out = [
            dataclasses.replace(
                j, submit=np.round((j.submit - j.submit[0]) / rc.load).astype(j.submit.dtype)
            )
            for j in out
        ]
    return out
