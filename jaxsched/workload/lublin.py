"""Lublin–Feitelson ("Lublin99") rigid-job workload generator, bit-exact with ``m_lublin99.c``.

Host-side reference implementation (pure Python + numpy, no JAX).  It follows
``shared/spec/lublin_model.md`` rule by rule, with a drand48-compatible RNG, so that for
the same seed and configuration it produces exactly the jobs that the original C program
writes.  In particular the two synthetic traces used by RLScheduler are regenerated bit
for bit by the presets :data:`LUBLIN_1` and :data:`LUBLIN_2`.

The model in one paragraph (see the spec for details):

* size: serial with probability ``serial``; otherwise a two-stage uniform value ``par`` in
  log2 units, rounded to an integer (power of two) with probability ``pow2``, and
  ``nodes = floor(2**par + 0.5)``;
* runtime: ``ln(runtime)`` is hyper-gamma, the mixing weight ``p = pa*nodes + pb``;
* arrivals: ``ln(inter-arrival)`` is gamma, warped onto a daily cycle of 48 half-hour
  buckets whose weights come from a gamma CDF;
* typed mode merges an interactive (type 0) and a batch (type 1) stream, typeless mode uses a
  single parameter set and labels every job interactive.

Public API
----------
``Drand48``, ``LublinParams``, ``LublinConfig``, ``LublinJobs``,
``BATCH_DEFAULTS``, ``INTERACTIVE_DEFAULTS``, ``TYPELESS_DEFAULTS``, ``LUBLIN_1``, ``LUBLIN_2``,
``PRESETS``, ``machine_params``, ``machine_config``, ``gammainc_lower``, ``daily_weights``,
``generate``, ``to_swf_text``, ``generate_cli``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shlex
import time
from dataclasses import dataclass, field

import numpy as np

from jaxsched.workload.drand48 import Drand48, safe_log
from jaxsched.workload.swf_parse import MAX_PROCS as MAX_NODES

__all__ = [
    "Drand48",
    "LublinParams",
    "LublinConfig",
    "LublinJobs",
    "BATCH_DEFAULTS",
    "INTERACTIVE_DEFAULTS",
    "TYPELESS_DEFAULTS",
    "LUBLIN_1",
    "LUBLIN_2",
    "PRESETS",
    "machine_params",
    "machine_config",
    "gammainc_lower",
    "daily_weights",
    "generate",
    "to_swf_text",
    "generate_cli",
    "INTERACTIVE",
    "BATCH",
]

# --------------------------------------------------------------------------------------
# Constants of the original program (spec §2.1)
# --------------------------------------------------------------------------------------

TOO_MUCH_TIME = 12.0  # reject ln(runtime) > 12
TOO_MUCH_ARRIVE_TIME = 13.0  # reject ln(inter-arrival) > 13
BUCKETS = 48  # half-hour buckets per day
SECONDS_IN_BUCKET = 1800
CYCLIC_DAY_START = 11
GAMMA_ITER_MAX = 1000
GAMMA_EPS = 1e-10
MAX_RUNTIME = int(math.exp(TOO_MUCH_TIME))  # 162754, printed in the header

INTERACTIVE = 0  # job type ("ACTIVE" in the C code)
BATCH = 1

# --------------------------------------------------------------------------------------
# Parameters (spec §2.2, §8, §9)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LublinParams:
    """One stream's parameter set.  All gamma pairs are (shape, scale)."""

    serial: float  # probability of a 1-node job
    pow2: float  # probability of a power-of-two parallel job (same uniform as serial)
    ulow: float  # log2 sizes: two-stage uniform [ulow, umed] w.p. uprob, else [umed, uhi]
    umed: float
    uhi: float
    uprob: float
    a1: float  # ln(runtime) gamma 1 (shape, scale)
    b1: float
    a2: float  # ln(runtime) gamma 2 (shape, scale)
    b2: float
    pa: float  # p = pa * nodes + pb, clamped to [0, 1]: probability of gamma 1
    pb: float
    aarr: float  # ln(inter-arrival) gamma: shape aarr * arar, scale barr
    barr: float
    arar: float
    anum: float  # daily cycle gamma (shape, scale), in half-hour units
    bnum: float

    def validate(self, name: str = "params") -> None:
        """Raise ValueError if the set cannot produce valid jobs."""
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{name}.{f.name} must be a finite number, got {v!r}")
        for f in ("serial", "pow2", "uprob"):
            if not 0.0 <= getattr(self, f) <= 1.0:
                raise ValueError(f"{name}.{f} must be in [0, 1], got {getattr(self, f)}")
        if self.serial + self.pow2 > 1.0 + 1e-12:
            raise ValueError(f"{name}: serial + pow2 must be <= 1")
        if not 0.0 <= self.ulow <= self.umed <= self.uhi:
            raise ValueError(
                f"{name}: need 0 <= ulow <= umed <= uhi, got {self.ulow}, {self.umed}, {self.uhi}"
            )
        for f in ("a1", "b1", "a2", "b2", "aarr", "barr", "arar", "anum", "bnum"):
            if getattr(self, f) <= 0.0:
                raise ValueError(f"{name}.{f} must be > 0, got {getattr(self, f)}")

    @property
    def arrival_shape(self) -> float:
        """Shape actually used for ln(inter-arrival): ``aarr * arar`` in double precision."""
        return self.aarr * self.arar


BATCH_DEFAULTS = LublinParams(
    serial=0.2927, pow2=0.6686, ulow=1.2, umed=5.0, uhi=7.0, uprob=0.875,
    a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
    aarr=6.0415, barr=0.8531, arar=1.0519, anum=6.1271, bnum=5.2740,
)  # fmt: skip

INTERACTIVE_DEFAULTS = LublinParams(
    serial=0.1541, pow2=0.625, ulow=1.0, umed=3.0, uhi=5.5, uprob=0.705,
    a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
    aarr=6.5510, barr=0.6621, arar=0.9797, anum=8.9186, bnum=3.6680,
)  # fmt: skip

TYPELESS_DEFAULTS = LublinParams(
    serial=0.244, pow2=0.576, ulow=0.8, umed=4.5, uhi=7.0, uprob=0.86,
    a1=4.2, b1=0.94, a2=312.0, b2=0.03, pa=-0.0054, pb=0.78,
    aarr=10.2303, barr=0.4871, arar=1.0225, anum=8.1737, bnum=3.9631,
)  # fmt: skip


@dataclass(frozen=True)
class LublinConfig:
    """A full generator configuration.  ``LublinConfig()`` equals the original's defaults
    (1000 jobs, typed mode, start hour 0, default parameters, 128-node header), except that
    the original always seeds from the clock (here: ``seed=None``).

    * ``typed``: True = interactive + batch streams, False = one typeless stream (all type 0).
    * ``header_uhi``: the typeless ``UHI`` printed as ``MaxNodes: 2**UHI`` (even in typed mode).
    * ``load_factor`` (not in the original): arrival rate multiplier, e**g / f (spec §8).
      With 1.0 the output is exactly the original's.
    * ``max_nodes`` (not in the original): cap sizes at this value (no extra RNG draws).
      Only binds when round(2**uhi) or a rounded power of two exceeds it, e.g. when ``uhi``
      is log2 of a machine size that is not a power of two.  None = no cap (original).
    """

    n_jobs: int = 1000
    seed: int | None = None
    typed: bool = True
    start_hour: int = 0
    batch: LublinParams = BATCH_DEFAULTS
    interactive: LublinParams = INTERACTIVE_DEFAULTS
    typeless: LublinParams = TYPELESS_DEFAULTS
    header_uhi: float = 7.0
    load_factor: float = 1.0
    max_nodes: int | None = None

    def validate(self) -> None:
        if isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, (int, np.integer)):
            raise ValueError(f"n_jobs must be an integer, got {self.n_jobs!r}")
        if self.n_jobs < 1:
            raise ValueError(f"n_jobs must be >= 1, got {self.n_jobs}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer))
        ):
            raise ValueError(f"seed must be an integer or None, got {self.seed!r}")
        if isinstance(self.start_hour, bool) or not isinstance(self.start_hour, (int, np.integer)):
            raise ValueError(f"start_hour must be an integer, got {self.start_hour!r}")
        if not 0 <= self.start_hour <= 23:
            raise ValueError(f"start_hour must be in 0..23, got {self.start_hour}")
        if not (self.load_factor > 0.0 and math.isfinite(self.load_factor)):
            raise ValueError(f"load_factor must be a positive number, got {self.load_factor}")
        if self.max_nodes is not None and not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(f"max_nodes must be in 1..{MAX_NODES} or None, got {self.max_nodes}")
        if not (math.isfinite(self.header_uhi) and 2.0**self.header_uhi + 0.5 < MAX_NODES + 1):
            raise ValueError(
                f"header_uhi must give a MaxNodes of at most {MAX_NODES}, got {self.header_uhi}"
            )
        if self.typed:
            self.batch.validate("batch")
            self.interactive.validate("interactive")
        else:
            self.typeless.validate("typeless")

    @property
    def header_max_nodes(self) -> int:
        """``MaxNodes`` of the SWF header."""
        if self.max_nodes is not None:
            return int(self.max_nodes)
        return int(math.floor(2.0**self.header_uhi + 0.5))


def machine_params(params: LublinParams, nodes: float, umed: float | None = None) -> LublinParams:
    """Adapt a parameter set's size model to a machine of ``nodes`` processors (spec §8).

    ``uhi = log2(nodes)`` (real-valued for non powers of two) and ``umed = uhi - 2.5`` unless
    given.  For small machines where ``uhi - 2.5`` would fall below ``ulow`` (fewer than
    about 8-13 nodes), ``ulow`` is lowered to at most ``uhi`` and ``umed`` is clamped into
    ``[ulow, uhi]``, so that every parallel job still has 2..nodes processors.
    """
    if not nodes >= 2:
        raise ValueError(f"nodes must be >= 2, got {nodes}")
    uhi = math.log2(nodes)
    ulow = min(params.ulow, uhi)
    if umed is None:
        umed = min(max(uhi - 2.5, ulow), uhi)
    elif not ulow <= umed <= uhi:
        raise ValueError(f"umed must be in [{ulow}, {uhi}], got {umed}")
    return dataclasses.replace(params, uhi=uhi, umed=umed, ulow=ulow)


def machine_config(
    nodes: int,
    *,
    typed: bool = True,
    n_jobs: int = 10000,
    seed: int | None = None,
    start_hour: int = 0,
    load_factor: float = 1.0,
) -> LublinConfig:
    """Default model parameters adapted to a machine of ``nodes`` processors (all streams),
    with sizes capped at ``nodes``."""
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)):
        raise ValueError(f"nodes must be an integer >= 2, got {nodes!r}")
    if not 2 <= nodes <= MAX_NODES:
        raise ValueError(f"nodes must be an integer in 2..{MAX_NODES}, got {nodes!r}")
    return LublinConfig(
        n_jobs=n_jobs,
        seed=seed,
        typed=typed,
        start_hour=start_hour,
        batch=machine_params(BATCH_DEFAULTS, nodes),
        interactive=machine_params(INTERACTIVE_DEFAULTS, nodes),
        typeless=machine_params(TYPELESS_DEFAULTS, nodes),
        header_uhi=math.log2(nodes),
        load_factor=load_factor,
        max_nodes=int(nodes),
    )


#: RLScheduler's ``lublin_256.swf`` (spec §9): typeless, uHi 8, uMed 5.5.
LUBLIN_1 = LublinConfig(
    n_jobs=10000,
    seed=1487089399,
    typed=False,
    start_hour=0,
    typeless=dataclasses.replace(TYPELESS_DEFAULTS, uhi=8.0, umed=5.5),
    header_uhi=8.0,
)

#: RLScheduler's ``lublin_256_new2`` (spec §9): typed, both types uHi 8, uMed 5.6.
LUBLIN_2 = LublinConfig(
    n_jobs=10000,
    seed=1568124476,
    typed=True,
    start_hour=0,
    batch=dataclasses.replace(BATCH_DEFAULTS, uhi=8.0, umed=5.6),
    interactive=dataclasses.replace(INTERACTIVE_DEFAULTS, uhi=8.0, umed=5.6),
    header_uhi=8.0,
)

PRESETS: dict[str, LublinConfig] = {"lublin-1": LUBLIN_1, "lublin-2": LUBLIN_2}


# --------------------------------------------------------------------------------------
# Regularized lower incomplete gamma and the daily cycle (spec §5.1)
# --------------------------------------------------------------------------------------


def gammainc_lower(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x) = gamma(a, x) / Gamma(a).

    Power series for x < a + 1, otherwise a continued fraction for Q = 1 - P evaluated
    with the modified Lentz method; relative tolerance 1e-10, at most 1000 iterations
    (the scheme and tolerance the original program uses).
    """
    if a <= 0.0:
        raise ValueError(f"shape a must be > 0, got {a}")
    if x <= 0.0:
        return 0.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = 1.0 / a
        total = term
        denom = a
        for _ in range(GAMMA_ITER_MAX):
            denom += 1.0
            term *= x / denom
            total += term
            if abs(term) < abs(total) * GAMMA_EPS:
                return total * math.exp(log_front)
        raise ArithmeticError(f"incomplete gamma series did not converge (a={a}, x={x})")
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, GAMMA_ITER_MAX + 1):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < tiny:
            d = tiny
        c = b + an / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < GAMMA_EPS:
            return 1.0 - math.exp(log_front) * h
    raise ArithmeticError(f"incomplete gamma continued fraction did not converge (a={a}, x={x})")


def daily_weights(params: LublinParams) -> np.ndarray:
    """The 48 half-hour arrival weights of a stream (mean 1; index 0 = 00:00-00:30).

    Bucket ``(i - 1) mod 48`` gets ``F(i + 0.5) - F(i - 0.5)`` for i = 11..58, where F is the
    Gamma(anum, bnum) CDF in half-hour units.
    """
    raw = np.zeros(BUCKETS, dtype=np.float64)
    for i in range(CYCLIC_DAY_START, CYCLIC_DAY_START + BUCKETS):
        hi = gammainc_lower(params.anum, (i + 0.5) / params.bnum)
        lo = gammainc_lower(params.anum, (i - 0.5) / params.bnum)
        raw[(i - 1) % BUCKETS] = hi - lo
    return raw / raw.mean()


# --------------------------------------------------------------------------------------
# Variates
# --------------------------------------------------------------------------------------


def _gamma(rng: Drand48, a: float, b: float) -> float:
    """Gamma(shape a, scale b) exactly as the original (Jain, ch. 28; spec §4.1)."""
    k = int(a)  # a > 0, so int() == floor()
    x = 0.0
    if k > 0:
        x = -b * rng.sum_log(k)
    d = a - k
    if d > 0.0:
        inv_d = 1.0 / d
        inv_e = 1.0 / (1.0 - d)
        rand = rng.random
        while True:  # Jöhnk's Beta(d, 1 - d)
            p = rand() ** inv_d
            q = rand() ** inv_e
            if p + q <= 1.0:
                break
        x += b * (p / (p + q)) * (-safe_log(rand()))
    return x


class _Stream:
    """Arrival state of one job type (spec §5.2-5.3)."""

    __slots__ = ("weights", "bucket", "points", "rem", "t", "shape", "scale", "load")

    def __init__(self, params: LublinParams, start_hour: int, load_factor: float):
        self.weights = daily_weights(params).tolist()
        self.bucket = start_hour * BUCKETS // 24
        self.points = 0.0
        self.rem = 0.0
        self.t = 0  # next arrival (integer seconds); float('inf') when switched off
        self.shape = params.arrival_shape
        self.scale = params.barr
        self.load = None if load_factor == 1.0 else load_factor

    def advance(self, rng: Drand48) -> None:
        while True:
            g = _gamma(rng, self.shape, self.scale)
            if g <= TOO_MUCH_ARRIVE_TIME:
                break
        e = math.exp(g)
        if self.load is not None:
            e = e / self.load
        self.points += e / SECONDS_IN_BUCKET
        w = self.weights
        bucket = self.bucket
        delta = 0.0
        while self.points > w[bucket]:
            self.points -= w[bucket]
            bucket = (bucket + 1) % BUCKETS
            delta += SECONDS_IN_BUCKET
        r = self.points / w[bucket]
        delta += SECONDS_IN_BUCKET * (r - self.rem)
        self.rem = r
        self.bucket = bucket
        self.t = math.floor(self.t + delta)


def _size(rng: Drand48, prm: LublinParams) -> int:
    u = rng.random()
    if u <= prm.serial:
        return 1
    if rng.random() <= prm.uprob:
        lo, hi = prm.ulow, prm.umed
    else:
        lo, hi = prm.umed, prm.uhi
    par = lo + rng.random() * (hi - lo)
    if u <= prm.serial + prm.pow2:
        par = math.floor(par + 0.5)
    return math.floor(2.0**par + 0.5)


def _runtime(rng: Drand48, prm: LublinParams, nodes: int) -> int:
    p = prm.pa * nodes + prm.pb
    if p > 1.0:
        p = 1.0
    elif p < 0.0:
        p = 0.0
    while True:
        if rng.random() <= p:
            x = _gamma(rng, prm.a1, prm.b1)
        else:
            x = _gamma(rng, prm.a2, prm.b2)
        if x <= TOO_MUCH_TIME:
            break
    return math.floor(math.exp(x))


# --------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LublinJobs:
    """Generated jobs (int64 arrays of length n) and the seed actually used."""

    job_id: np.ndarray  # 1..n
    submit: np.ndarray  # seconds from the start, nondecreasing
    runtime: np.ndarray  # seconds, 1..162754
    nodes: np.ndarray  # processors
    job_type: np.ndarray  # 0 interactive, 1 batch
    seed: int = field(default=0)

    def __len__(self) -> int:
        return int(self.job_id.shape[0])


def generate(config: LublinConfig) -> LublinJobs:
    """Generate ``config.n_jobs`` jobs, drawing exactly as the original program (spec §5-6).

    ``config.seed`` None seeds from the current time, like the original; the seed used is
    returned in ``LublinJobs.seed``.
    """
    config.validate()
    seed = int(time.time()) if config.seed is None else int(config.seed)
    rng = Drand48(seed)
    if config.typed:
        prm = (config.interactive, config.batch)  # indexed by job type
    else:
        prm = (config.typeless, config.typeless)
    streams = (
        _Stream(prm[INTERACTIVE], config.start_hour, config.load_factor),
        _Stream(prm[BATCH], config.start_hour, config.load_factor),
    )
    s_int, s_bat = streams
    s_bat.advance(rng)
    s_int.advance(rng)
    if not config.typed:
        s_bat.t = math.inf  # batch stream switched off; its init draw was still consumed

    n = int(config.n_jobs)
    submit = [0] * n
    runtime = [0] * n
    nodes = [0] * n
    jtype = [0] * n
    cap = config.max_nodes
    for j in range(n):
        typ = BATCH if s_bat.t < s_int.t else INTERACTIVE
        s = streams[typ]
        submit[j] = s.t
        s.advance(rng)
        p = prm[typ]
        size = _size(rng, p)
        runtime[j] = _runtime(rng, p, size)  # uses the uncapped size, like the original
        if cap is not None and size > cap:
            size = cap
        nodes[j] = size
        jtype[j] = typ
    return LublinJobs(
        job_id=np.arange(1, n + 1, dtype=np.int64),
        submit=np.array(submit, dtype=np.int64),
        runtime=np.array(runtime, dtype=np.int64),
        nodes=np.array(nodes, dtype=np.int64),
        job_type=np.array(jtype, dtype=np.int64),
        seed=seed,
    )


# --------------------------------------------------------------------------------------
# SWF output (spec §7)
# --------------------------------------------------------------------------------------


def to_swf_text(jobs: LublinJobs, config: LublinConfig, command: str | None = None) -> str:
    """The program's SWF output: the 7 standard header lines, then (only if ``command`` is
    given) ``; Generator...`` lines saying how the file was produced, then one line of 18
    integer fields per job (fields 8 and 9 are -1, field 15 is the job type)."""
    n = len(jobs)
    lines = [
        "; Version: 2",
        "; Acknowledge: Uri Lublin, Hebrew University",
        "; Information: http://www.cs.huji.ac.il/labs/parallel/workload",
        f"; MaxJobs: {n}",
        f"; MaxRecords: {n}",
        f"; MaxNodes: {config.header_max_nodes}",
        f"; MaxRuntime: {MAX_RUNTIME}",
    ]
    if command is not None:
        mode = "typed" if config.typed else "typeless"
        lines += [
            f"; Generator: {' '.join(command.splitlines())}",
            "; GeneratorModel: Lublin-Feitelson 1999 rigid-job model,"
            " m_lublin99.c-compatible (jaxsched.workload.lublin)",
            f"; GeneratorSettings: mode={mode} seed={jobs.seed} start_hour={config.start_hour}"
            f" jobs={n} load_factor={config.load_factor:g}",
        ]
    fmt = "%5d %7d -1 %7d %3d -1 -1 -1 -1 -1 1 -1 -1 -1 %d -1 -1 -1"
    rows = zip(
        jobs.job_id.tolist(),
        jobs.submit.tolist(),
        jobs.runtime.tolist(),
        jobs.nodes.tolist(),
        jobs.job_type.tolist(),
    )
    lines += [fmt % r for r in rows]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# CLI entry (wired by ``jaxsched trace generate lublin``)
# --------------------------------------------------------------------------------------


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def generate_cli(
    preset: str | None,
    nodes: int | None,
    typed: bool,
    jobs: int,
    seed: int | None,
    start_hour: int,
    out: str,
) -> str:
    """Generate a Lublin workload and write it as SWF; returns the path written.

    Either ``preset`` ("lublin-1" / "lublin-2": the exact RLScheduler configurations; their
    mode is fixed, so ``typed`` is ignored, and ``seed`` None means the preset's own seed) or
    ``nodes`` (default parameters adapted to a machine of that size, ``typed`` picks the mode,
    ``seed`` None means the current time).  ``jobs`` and ``start_hour`` apply in both cases
    (with a preset, fewer jobs give a prefix of the preset's trace).  The header records the
    equivalent command line, with the seed actually used.  Raises ValueError on bad input.
    """
    if preset is not None and nodes is not None:
        raise ValueError("give either --preset or --nodes, not both")
    if preset is None and nodes is None:
        raise ValueError("give either --preset lublin-1|lublin-2 or --nodes P")
    if not _is_int(jobs) or jobs < 1:
        raise ValueError(f"--jobs must be an integer >= 1, got {jobs!r}")
    if not _is_int(start_hour) or not 0 <= start_hour <= 23:
        raise ValueError(f"--start-hour must be an integer in 0..23, got {start_hour!r}")
    if seed is not None and (not _is_int(seed) or not 0 <= seed < 2**32):
        raise ValueError(f"--seed must be an integer in 0..4294967295, got {seed!r}")
    if not isinstance(out, (str, os.PathLike)) or not str(out):
        raise ValueError("--out must be a file path")
    out = os.fspath(out)
    if os.path.isdir(out):
        raise ValueError(f"--out {out!r} is a directory, expected a file path")

    if preset is not None:
        key = str(preset).strip().lower()
        if key not in PRESETS:
            raise ValueError(
                f"unknown preset {preset!r}; choose one of: {', '.join(sorted(PRESETS))}"
            )
        base = PRESETS[key]
        config = dataclasses.replace(
            base,
            n_jobs=int(jobs),
            seed=base.seed if seed is None else int(seed),
            start_hour=int(start_hour),
        )
        cmd = ["jaxsched trace generate lublin", f"--preset {key}"]
        if config.n_jobs != base.n_jobs:
            cmd.append(f"--jobs {config.n_jobs}")
        if config.seed != base.seed:
            cmd.append(f"--seed {config.seed}")
    else:
        if not _is_int(nodes) or not 2 <= nodes <= MAX_NODES:
            raise ValueError(f"--nodes must be an integer in 2..{MAX_NODES}, got {nodes!r}")
        used_seed = int(time.time()) & 0xFFFFFFFF if seed is None else int(seed)
        config = machine_config(
            int(nodes), typed=bool(typed), n_jobs=int(jobs), seed=used_seed,
            start_hour=int(start_hour),
        )  # fmt: skip
        cmd = [
            "jaxsched trace generate lublin",
            f"--nodes {int(nodes)}",
            "--typed" if typed else "--typeless",
            f"--jobs {config.n_jobs}",
            f"--seed {used_seed}",
        ]
    if config.start_hour != 0:
        cmd.append(f"--start-hour {config.start_hour}")
    cmd.append(f"--out {shlex.quote(out)}")

    result = generate(config)
    text = to_swf_text(result, config, command=" ".join(cmd))
    parent = os.path.dirname(out)
    if parent:
        os.makedirs(parent, exist_ok=True)
    from jaxsched.fileio import atomic_write

    atomic_write(out, text.encode("ascii"))  # whole or not at all
    return out
