"""RLScheduler's run configuration (``run.json``), its environment and its slot-prefix options.

:class:`RunConfig` is everything that shapes a training run; it is saved as ``DIR/run.json``
(with ``"system": "rlscheduler"``; a ``run.json`` without the key is RLScheduler's too, as in
run directories written before the systems registry).
"""

from __future__ import annotations

import dataclasses

from jaxsched.envs import RLSchedulerEnv
from jaxsched.envs.rlscheduler_features import pad_row
from jaxsched.errors import ConfigError
from jaxsched.train.ppo import PPOConfig
from jaxsched.train.prefix import SlotPrefix

__all__ = [
    "SYSTEM_NAME",
    "VAL_INFO",
    "RunConfig",
    "SLOT_BUCKETS",
    "prefix_options",
    "make_env",
    "policy_net",
]

#: the registry name of this system (``jaxsched train rlscheduler``)
SYSTEM_NAME = "rlscheduler"
#: the validation sequences and the heuristics' results on them (``--validate``)
VAL_INFO = "validation.json"


#: ranges of the run.json sizes that shape arrays (observation slots, jobs per sequence)
RUN_BOUNDS = {"max_queue": (1, 1 << 16), "length": (1, 1 << 22), "job_slice": (0, 1 << 31)}


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
      filter: trajectory filter of spec §7 (:data:`jaxsched.systems.rlscheduler.filtering.FILTERS`):
        ``off``, ``paper`` ((median, 2·mean) of SJF over all sampling starts) or ``reference``
        ((10, 150) with the code's off-by-one); training sequences are drawn only among the
        accepted starts. filter_epochs: length of phase 1 in epochs; after it training goes on
        with all sequences (phase 2). 0: the filter stays on for the whole run.
      init_from: checkpoint (file or run directory) whose networks and optimiser states start
        this run (the reference's ``--pre_trained``; e.g. phase 2 of a filtered run, or a
        continuation with other PPO settings); empty: a fresh initialisation from ``seed``.
      user_feature: observation rows with the per-user feature of the reference's fairness
        environment (``HPCEnvFair``; 9 features instead of 8). Off in run.json files written
        before it existed.
      split: with ``--split train`` the run's split (:func:`jaxsched.workload.splits.run_json_fields`:
        name, fractions, the three job index ranges; ``job_slice`` is then the training
        range's end and validation draws from the validation range); empty otherwise.
      jobs_seen: ``[first, last)``, the job index range training and validation drew from
        (recorded with ``split``; empty otherwise, :func:`~jaxsched.workload.splits.jobs_seen_of`
        then infers it from ``job_slice``).
      residual: a residual policy over this static heuristic (``f1``, ``sjf``,
        ``tuned:tuned-sdsc-easy``, ...; issue 49): the env's prior
        (:class:`~jaxsched.envs.RLSchedulerEnv`'s ``prior``) and the
        :class:`~jaxsched.nets.ResidualKernelPolicy` (the kernel policy only); ``""``: none
        (absent from run.json).
      residual_temperature: the residual policy's initial temperature (in rank units; learnt
        from there); recorded only with ``residual``.
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
    user_feature: bool = False
    split: dict = dataclasses.field(default_factory=dict)
    jobs_seen: list = dataclasses.field(default_factory=list)
    residual: str = ""
    residual_temperature: float = 0.5

    def ppo_config(self) -> PPOConfig:
        return PPOConfig.from_dict(self.ppo)

    def to_dict(self) -> dict:
        """The fields as a dict; ``split`` and ``jobs_seen`` only when set (the run.json of a
        run without a split is as before they existed)."""
        d = dataclasses.asdict(self)
        for key in ("split", "jobs_seen"):
            if not d[key]:
                del d[key]
        if not self.residual:
            del d["residual"], d["residual_temperature"]
        return d

    def to_run_json(self) -> dict:
        """The content of ``run.json``: ``{"system": "rlscheduler", **to_dict()}``."""
        return {"system": SYSTEM_NAME, **self.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        """From :meth:`to_dict` or a ``run.json`` (whose ``"system"`` key, if any, must name
        this system; run directories written before the key existed have none)."""
        d = dict(d)
        system = d.pop("system", SYSTEM_NAME)
        d.pop("devices", None)  # run.json's record of the device count (computation only)
        d.pop("trace_sha256", None)  # the training trace's content hash (the run directory's)
        if system != SYSTEM_NAME:
            raise ConfigError(f"run settings of system {system!r}, not {SYSTEM_NAME!r}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ConfigError(f"unknown run setting(s): {', '.join(sorted(unknown))}")
        from jaxsched.systems import check_run_values

        check_run_values(cls, d, RUN_BOUNDS)
        return cls(**d)


#: slot-prefix buckets of the update (:class:`jaxsched.train.SlotPrefix`'s ``buckets``)
SLOT_BUCKETS = (8, 16, 32, 64)


def prefix_options(rc: RunConfig) -> dict:
    """``make_train`` options that evaluate the per-slot networks of a run on slot prefixes
    (computation only: the same update up to float rounding). The kernel policy is per-slot;
    the kernel value net sees the padding rows through :class:`~jaxsched.nets.KernelValue`'s
    ``pad_row``. A queue never holds more jobs than a sequence has, so ``max_valid`` is the
    run's ``length``: the buckets past the first that holds it (the full width too, below the
    paper's 128 jobs) are never picked and not built (the same update, bit for bit)."""
    if rc.policy != "kernel":
        return {}
    pad = pad_row(rc.user_feature, bool(rc.residual)) if rc.value == "kernel" else None
    prefix = SlotPrefix(SLOT_BUCKETS, value_pad_row=pad, max_valid=int(rc.length))
    return {"slot_prefix": prefix}


def policy_net(rc: RunConfig):
    """The policy network of a run: :func:`jaxsched.nets.make_policy` of ``rc.policy``, or with
    ``rc.residual`` the :class:`~jaxsched.nets.ResidualKernelPolicy` (ConfigError unless the
    policy is the kernel one)."""
    from jaxsched import nets

    if not rc.residual:
        return nets.make_policy(rc.policy)
    if nets.make_policy(rc.policy).__class__ is not nets.KernelPolicy:
        raise ConfigError(f"--residual needs the kernel policy network, not {rc.policy!r}")
    return nets.ResidualKernelPolicy(temperature=float(rc.residual_temperature))


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
        user_feature=rc.user_feature,
        prior=rc.residual,
    )
