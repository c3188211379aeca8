"""Split-window deep back-filling (DBF) environment: schedule cycling with a head-and-tail
window of the queue (spec ``split_window.md``; reference rules in
``shared/reference/splitwindow/README.md``).

API (the contract of :mod:`jaxsched.envs.core`; pure, ``jit``/``vmap``-able)::

    env = SplitWindowEnv(jobs, head=16, tail=4)
    state, ts = env.reset(key)          # random trace offset (spec §2.2)
    state, ts = env.reset_at(start)     # the episode starting at trace index ``start``
    state, ts = env.step(state, a)      # a in 0..M-1 picks window slot a, a = M is Fwd
    env.metrics(state)                  # §8 metrics of a finished episode (dict)

Cycles (§2.1, built on :mod:`jaxsched.sim.cores`): a *valid* pick (slot holds a job that fits
the free cores) starts it now on its lowest-indexed free cores, reward 0, same clock; Fwd or an
invalid pick gets ℜ(t) = −(w1(1 − η) + w2 L/L_max + w3 W/W_max) at the current clock, then
exactly one event is processed (an action outside 0..M counts as an invalid pick). The episode terminates on the step of the ``placements``-th
placement; it is truncated if the trace runs out or the queue outgrows ``queue_cap`` (flag
``state.sim.overflow``; :func:`jaxsched.sim.cores.check_overflow` raises on the host).

Observation (§3; ``obs`` of dtype ``dtype``, length ``N + 3M``): σ_i/r_max per core — the
remaining busy time (``sigma="remaining"``, default) or the elapsed run time
(``sigma="elapsed"``, the printed formula) — then ⟨c/N, r/r_max, W/Wq⟩ for each window slot,
head slots oldest first, then tail slots newest first. Wq is the largest current wait in the
queue (``wait_norm="queue"``, default; 0 when Wq = 0) or 12 h (``wait_norm="12h"``,
RLScheduler's constant). Overlap (§3.2): with ``overlap="distinct"`` (default) a tail slot
shows position L − k + 1 only when it is > M_h; ``overlap="repeat"`` shows it whenever it
exists (a short queue then appears twice). ``mask=False`` (default, the paper) allows every
action; ``mask=True`` allows only occupied fitting slots and Fwd. ``completions`` is the
event rule of :mod:`jaxsched.sim.cores` (``"all"`` default, ``"each"``).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

import jaxsched.sim  # noqa: F401  (the engine; 64-bit mode: jaxsched/precision.py)
from jaxsched.envs import core
from jaxsched.envs.core import Environment
from jaxsched.errors import ConfigError, as_int
from jaxsched.sim import cores as C

__all__ = [
    "SplitWindowEnv",
    "SWState",
    "SWObservation",
    "window_positions",
    "obs_policy",
    "POLICIES",
    "SIGMAS",
    "WAIT_NORMS",
    "OVERLAPS",
]

SIGMAS = ("remaining", "elapsed")
WAIT_NORMS = ("queue", "12h")
OVERLAPS = ("distinct", "repeat")
#: the observation policies of the reference README (functions of the observation)
POLICIES = ("P1", "P2", "P3", "P4")


@struct.dataclass
class SWObservation(core.Observation):
    """``mask`` bool ``[M + 1]``; ``obs`` ``[N + 3M]`` (σ then slot features);
    ``queue_len`` int32 L(t) of this observation."""

    obs: jax.Array
    queue_len: jax.Array

    @property
    def critic_obs(self) -> jax.Array:
        """The critic sees the same vector as the actor."""
        return self.obs


@struct.dataclass
class SWState:
    """One episode: ``sim`` (:class:`~jaxsched.sim.cores.CoreState`); int32 ``steps``,
    ``fwd``, ``invalid`` decisions; int64 ``sum_invisible`` Σ max(0, L − M); int32
    ``partial`` decisions with L > M and ``mismatch`` decisions whose σ = 0 count exceeded the
    free cores; float64 ``reward_sum``; bool ``done``; ``key`` for the next episode."""

    sim: C.CoreState
    steps: jax.Array
    fwd: jax.Array
    invalid: jax.Array
    sum_invisible: jax.Array
    partial: jax.Array
    mismatch: jax.Array
    reward_sum: jax.Array
    done: jax.Array
    key: jax.Array


@dataclasses.dataclass(frozen=True)
class _Config:
    head: int
    tail: int
    n_cores: int
    r_max: float
    placements: int
    queue_cap: int
    weights: tuple
    sigma: str
    wait_norm: str
    overlap: str
    completions: str
    mask: bool
    dtype: str
    sample_high: int


def _mix(x):
    """murmur3 finaliser of uint32 ``x``."""
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    return x ^ (x >> 16)


def window_positions(q_len, head: int, tail: int, overlap: str = "distinct") -> jax.Array:
    """int32 ``[head + tail]`` queue position (0 = oldest) shown in each slot, −1 = empty
    (spec §3.2 with the overlap rule above)."""
    h = jnp.arange(head, dtype=jnp.int32)
    p = q_len - jnp.arange(1, tail + 1, dtype=jnp.int32)
    ok = (p >= 0) & ((p >= head) if overlap == "distinct" else True)
    return jnp.concatenate([jnp.where(h < q_len, h, -1), jnp.where(ok, p, -1)])


def _check(name, value, allowed):
    if value not in allowed:
        raise ConfigError(f"unknown {name} {value!r}; choose from {', '.join(allowed)}")


class SplitWindowEnv(Environment):
    """See the module docstring.

    Args:
      jobs: a :class:`jaxsched.workload.jobs.Jobs` (submit times non-decreasing), e.g.
        ``read_swf(path).jobs("rlscheduler")``; r_j is the run time, c_j the node demand.
      head, tail: M_h, M_t (M = M_h + M_t ≥ 1).
      placements: placements per episode (1,000). weights: (w1, w2, w3) of ℜ(t).
      queue_cap: queue capacity (4,096). margin: ``reset`` draws starts from
        ``[0, n_jobs − placements − margin]`` (default ``2 * placements``).
      sigma, wait_norm, overlap, completions, mask: the options of the module docstring.
      dtype: observation dtype (``"float32"``; ``"float64"`` for conformance).
    """

    def __init__(
        self,
        jobs,
        head: int = 20,
        tail: int = 0,
        *,
        placements: int = 1000,
        weights=(1 / 3, 1 / 3, 1 / 3),
        queue_cap: int = 4096,
        margin: int | None = None,
        sigma: str = "remaining",
        wait_norm: str = "queue",
        overlap: str = "distinct",
        completions: str = "all",
        mask: bool = False,
        dtype: str = "float32",
    ):
        head, tail = as_int(head, "head", 0), as_int(tail, "tail", 0)
        if head + tail < 1:
            raise ConfigError("the window needs at least one slot (head + tail >= 1)")
        placements = as_int(placements, "placements", 1)
        queue_cap = as_int(queue_cap, "queue_cap", 1)
        margin = 2 * placements if margin is None else as_int(margin, "margin", 0)
        for name, v, allowed in (
            ("sigma", sigma, SIGMAS),
            ("wait_norm", wait_norm, WAIT_NORMS),
            ("overlap", overlap, OVERLAPS),
            ("completions", completions, C.COMPLETIONS),
            ("dtype", dtype, ("float32", "float64")),
        ):
            _check(name, v, allowed)
        w = tuple(float(x) for x in weights)
        if len(w) != 3 or not all(0.0 <= x <= 1.0 for x in w):
            raise ConfigError(f"weights must be three numbers in [0, 1], got {weights!r}")
        cores = np.asarray(jobs.node_demand, np.int64)
        n_cores, n = int(jobs.num_nodes), jobs.n_jobs
        if n < placements:
            raise ConfigError(f"the trace has {n} jobs, fewer than placements ({placements})")
        if (cores > n_cores).any() or (cores < 1).any():
            j = int(np.argmax((cores > n_cores) | (cores < 1)))
            raise ConfigError(f"job {int(jobs.job_id[j])} needs {int(cores[j])} cores of {n_cores}")
        if n - placements - margin < 0:
            raise ConfigError(
                f"the trace has {n} jobs: too few for random starts with placements {placements} "
                f"and margin {margin} (lower margin)"
            )
        if (np.diff(jobs.submit) < 0).any():
            raise ConfigError("submit times must not decrease in trace order")
        self.data = C.make_trace(jobs.submit, jobs.run, cores)
        self.cfg = _Config(
            head, tail, n_cores, float(np.max(jobs.run)), placements, queue_cap, w, sigma,
            wait_norm, overlap, completions, bool(mask), dtype, n - placements - margin,
        )  # fmt: skip

    # -- pytree: the trace is a leaf, the configuration static --------------------------------
    def tree_flatten(self):
        return (self.data,), self.cfg

    @classmethod
    def tree_unflatten(cls, aux, children):
        env = object.__new__(cls)
        env.data, env.cfg = children[0], aux
        return env

    @property
    def window(self) -> int:
        return self.cfg.head + self.cfg.tail

    @property
    def num_actions(self) -> int:
        return self.window + 1

    @property
    def obs_size(self) -> int:
        return self.cfg.n_cores + 3 * self.window

    # -- contract hooks ----------------------------------------------------------------------
    def init_state(self, key) -> SWState:
        """A uniform start in ``[0, sample_high]`` from an integer hash of the key (threefry
        compiles slowly on XLA:CPU and this runs inside every auto-reset step); the state keeps
        a hashed key for the next episode."""
        kd = jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key
        kd = jnp.asarray(kd, jnp.uint32)
        h = _mix(kd[0] ^ _mix(kd[1] + jnp.uint32(0x9E3779B9)))
        start = (h % jnp.uint32(self.cfg.sample_high + 1)).astype(jnp.int32)
        k_next = jnp.stack([_mix(h ^ jnp.uint32(0x85EBCA6B)), _mix(h + kd[1])])
        if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
            return self._first(start, jax.random.wrap_key_data(k_next))
        return self._first(start, k_next.astype(key.dtype))

    def init_state_at(self, start, key=None) -> SWState:
        key = jax.random.PRNGKey(0) if key is None else key
        return self._first(jnp.asarray(start, jnp.int32), key)

    def _first(self, start, key) -> SWState:
        cfg = self.cfg
        sim = C.init_state(self.data, start, cfg.n_cores, cfg.queue_cap, cfg.placements)
        sim = C.advance_one(self.data, sim, cfg.completions)
        z = jnp.zeros((), jnp.int32)
        return SWState(
            sim, z, z, z, jnp.zeros((), jnp.int64), z, z, jnp.zeros((), jnp.float64),
            jnp.zeros((), bool), key,
        )  # fmt: skip

    def reset_extras(self, s: SWState) -> dict:
        return {"start": s.sim.start, "placed": s.sim.placed, "overflow": s.sim.overflow}

    def transition(self, s: SWState, action):
        cfg, sim = self.cfg, s.sim
        m = self.window
        a = jnp.asarray(action, jnp.int32)
        pos = window_positions(sim.q_len, cfg.head, cfg.tail, cfg.overlap)[jnp.clip(a, 0, m - 1)]
        live = ~s.done
        pick = live & (a >= 0) & (a < m) & (pos >= 0)
        sim2, ok = C.start_job(self.data, sim, pos, pick)
        fwd_like = live & ~ok
        t1, t2, t3 = C.reward_terms(sim, cfg.n_cores)
        w1, w2, w3 = cfg.weights
        r64 = jnp.where(fwd_like, -(w1 * t1 + w2 * t2 + w3 * t3), 0.0)
        sim3 = C.advance_one(self.data, sim2, cfg.completions, enabled=fwd_like)
        term = live & (sim3.placed >= cfg.placements)
        trunc = live & ~term & (sim3.exhausted | sim3.overflow)
        L = sim.q_len
        sigma0 = jnp.sum((sim.core_tag < 0) | (sim.core_end == sim.t))
        i32 = jnp.int32
        new = s.replace(
            sim=sim3,
            steps=s.steps + live.astype(i32),
            fwd=s.fwd + (live & (a == m)).astype(i32),
            invalid=s.invalid + (fwd_like & (a != m)).astype(i32),
            sum_invisible=s.sum_invisible + jnp.where(live, jnp.maximum(L - m, 0), 0),
            partial=s.partial + (live & (L > m)).astype(i32),
            mismatch=s.mismatch + (live & (sigma0 > jnp.sum(sim.core_tag < 0))).astype(i32),
            reward_sum=s.reward_sum + r64,
            done=s.done | term | trunc,
        )
        extras = {"start": sim3.start, "placed": sim3.placed, "overflow": sim3.overflow}
        return new, r64.astype(jnp.float32), term, trunc, extras

    def observe(self, s: SWState) -> SWObservation:
        cfg, sim, d = self.cfg, s.sim, self.data
        f64 = jnp.float64
        busy = sim.core_tag >= 0
        span = sim.core_end - sim.t if cfg.sigma == "remaining" else sim.t - sim.core_start
        sigma = jnp.where(busy, span.astype(f64) / cfg.r_max, 0.0)
        pos = window_positions(sim.q_len, cfg.head, cfg.tail, cfg.overlap)
        j = jnp.maximum(sim.q_job[jnp.maximum(pos, 0)], 0)
        wait = (sim.t - d.submit[j]).astype(f64)
        if cfg.wait_norm == "queue":
            wq = (sim.t - d.submit[jnp.maximum(sim.q_job[0], 0)]).astype(f64)
            wq = jnp.where(sim.q_len > 0, wq, 0.0)
        else:
            wq = jnp.asarray(43200.0, f64)
        feat = jnp.stack(
            [
                d.cores[j].astype(f64) / cfg.n_cores,
                d.run[j].astype(f64) / cfg.r_max,
                jnp.where(wq > 0, wait / jnp.where(wq > 0, wq, 1.0), 0.0),
            ],
            axis=-1,
        )
        feat = jnp.where((pos >= 0)[:, None], feat, 0.0)
        obs = jnp.concatenate([sigma, feat.reshape(-1)]).astype(cfg.dtype)
        if cfg.mask:
            fits = (pos >= 0) & (d.cores[j] <= jnp.sum(~busy))
            mask = jnp.concatenate([fits, jnp.ones((1,), bool)])
        else:
            mask = jnp.ones((self.num_actions,), bool)
        return SWObservation(mask=mask, obs=obs, queue_len=sim.q_len)

    # -- metrics -----------------------------------------------------------------------------
    def metrics(self, s: SWState) -> dict:
        """§8 metrics of an episode at its current clock (float64 / int scalars; vmaps).

        ``util``, ``avg_queue_len``: time averages over [t0, t] (spec §8's default: the
        episode's own span, which ends at its last placement and so differs between
        policies); ``util_arrival_span``, ``avg_queue_len_arrival_span``: the same over the
        arrival span [t0, submit time of the episode's ``placements``-th job], one window for
        every policy on the same start (no policy places that job before it arrives, so every
        finished episode covers it); ``avg_wait``: mean over the
        arrived jobs (placed: start − submit, queued: t − submit); ``avg_bsld`` over placed
        jobs; ``job_load``: Σ W_j c_j r_j / span over arrived jobs; ``mean_invisible``,
        ``partial_fraction`` over decisions; ``type_wait`` ``[T]`` mean wait and
        ``type_count`` ``[T]`` placements per job type (:func:`jaxsched.sim.cores.job_types`).
        """
        return episode_metrics(self, s)


def episode_metrics(env: SplitWindowEnv, s: SWState) -> dict:
    """See :meth:`SplitWindowEnv.metrics`."""
    sim, d, f64 = s.sim, env.data, jnp.float64
    span = sim.t - sim.t0
    spanf = jnp.maximum(span, 1).astype(f64)
    wspan = sim.t_win - sim.t0
    wspanf = jnp.maximum(wspan, 1).astype(f64)
    arrived = sim.next - sim.start
    qi = jnp.arange(sim.q_job.shape[0]) < sim.q_len
    qj = jnp.maximum(sim.q_job, 0)
    qwait = jnp.where(qi, (sim.t - d.submit[qj]).astype(f64), 0.0)
    qload = jnp.sum(qwait * d.cores[qj].astype(f64) * d.run[qj].astype(f64))
    steps = jnp.maximum(s.steps, 1).astype(f64)
    total_wait = sim.wait_sum + C.queue_wait(sim)
    return {
        "steps": s.steps,
        "fwd": s.fwd,
        "invalid": s.invalid,
        "placements": sim.placed,
        "reward_sum": s.reward_sum,
        "t0": sim.t0,
        "final_clock": sim.t,
        "span": span,
        "arrived": arrived,
        "util": jnp.where(span > 0, sim.area_busy.astype(f64) / (env.cfg.n_cores * spanf), 0.0),
        "avg_queue_len": jnp.where(span > 0, sim.area_queue.astype(f64) / spanf, 0.0),
        "util_arrival_span": jnp.where(
            wspan > 0, sim.area_busy_win.astype(f64) / (env.cfg.n_cores * wspanf), 0.0
        ),
        "avg_queue_len_arrival_span": jnp.where(
            wspan > 0, sim.area_queue_win.astype(f64) / wspanf, 0.0
        ),
        "avg_wait": total_wait.astype(f64) / jnp.maximum(arrived, 1).astype(f64),
        "avg_bsld": sim.bsld_sum / jnp.maximum(sim.placed, 1).astype(f64),
        "job_load": (sim.load_sum + qload) / spanf,
        "mean_invisible": s.sum_invisible.astype(f64) / steps,
        "partial_fraction": s.partial.astype(f64) / steps,
        "L_max": sim.l_max,
        "W_max": sim.w_max,
        "queue_at_end": sim.q_len,
        "obs_free_mismatch": s.mismatch,
        "truncated": sim.exhausted | sim.overflow,
        "overflow": sim.overflow,
        "type_wait": sim.type_wait / jnp.maximum(sim.type_count, 1).astype(f64),
        "type_count": sim.type_count,
    }


def obs_policy(obs, policy, head: int, tail: int, n_cores: int = 256) -> jax.Array:
    """The reference README's observation policies (int32 action; Fwd = M): ``policy`` is a
    name of :data:`POLICIES` or a (traced) int32 index into it, so one compiled function
    serves all four. Slot i is occupied when its c feature > 0 and fits when c·N ≤ the
    number of σ entries equal to 0.

    * P1: the first fitting head slot (with no head slots: the first fitting slot), else Fwd;
    * P2: the fitting slot with the smallest r feature (ties: lowest index), else Fwd;
    * P3: the fitting tail slot with the highest index, else the first fitting head slot;
    * P4: always slot 0.
    """
    if isinstance(policy, str):
        if policy not in POLICIES:
            raise ConfigError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
        policy = POLICIES.index(policy)
    m = head + tail
    feat = obs[n_cores:].reshape(m, 3)
    free = jnp.sum(obs[:n_cores] == 0)
    fits = (feat[:, 0] > 0) & (jnp.round(feat[:, 0] * n_cores) <= free)
    idx = jnp.arange(m, dtype=jnp.int32)
    fwd = jnp.int32(m)

    def first(ok):
        return jnp.where(ok.any(), jnp.argmax(ok).astype(jnp.int32), fwd)

    in_head = idx < head
    p1 = first(fits & in_head) if head > 0 else first(fits)
    r = jnp.where(fits, feat[:, 1], jnp.inf)
    p2 = jnp.where(fits.any(), jnp.argmin(r).astype(jnp.int32), fwd)
    tail_ok = fits & ~in_head
    last = (m - 1 - jnp.argmax(tail_ok[::-1])).astype(jnp.int32)
    p3 = jnp.where(tail_ok.any(), last, first(fits & in_head))
    return jnp.stack([p1, p2, p3, jnp.int32(0)])[jnp.asarray(policy, jnp.int32)]


# ----------------------------------------------------------------------------------------------
# Running whole episodes (evaluation, conformance, baselines)
# ----------------------------------------------------------------------------------------------
def run_episodes(env: SplitWindowEnv, starts, act, args=None, max_steps: int = 1 << 30) -> dict:
    """Play the episodes ``starts`` (int32 ``[B]``) to their end with ``act(state, obs, arg)
    -> int32 action`` (pure; ``arg`` is the episode's entry of ``args``, int32 ``[B]``,
    default 0 — e.g. a policy index) under ``vmap``; returns :meth:`SplitWindowEnv.metrics`
    with a leading ``[B]`` axis (device arrays). Call under ``jit``."""
    starts = jnp.asarray(starts, jnp.int32)
    args = jnp.zeros_like(starts) if args is None else jnp.asarray(args, jnp.int32)

    def one(start, arg):
        s = env.init_state_at(start)
        s = jax.lax.while_loop(
            lambda s: ~s.done & (s.steps < max_steps),
            lambda s: env.transition(s, act(s, env.observe(s), arg))[0],
            s,
        )
        return env.metrics(s)

    return jax.vmap(one)(starts, args)


def record_steps(env: SplitWindowEnv, start, act, skip, n: int) -> dict:
    """Decisions ``skip .. skip+n−1`` of episode ``start`` under ``act(state, obs)`` (``skip``
    may be traced, ``n`` is static): dict of ``[n]`` arrays ``k``, ``t``, ``queue_len``,
    ``obs`` ``[n, N+3M]``, ``action``, ``reward`` (float64), ``done`` (steps past the end
    repeat the final state with reward 0)."""
    s = env.init_state_at(start)
    s = jax.lax.while_loop(
        lambda s: ~s.done & (s.steps < skip),
        lambda s: env.transition(s, act(s, env.observe(s)))[0],
        s,
    )

    def body(s, _):
        o = env.observe(s)
        a = act(s, o)
        r0 = s.reward_sum
        s2, _, term, trunc, _ = env.transition(s, a)
        row = dict(k=s.steps, t=s.sim.t, queue_len=s.sim.q_len, obs=o.obs, action=a)
        return s2, dict(row, reward=s2.reward_sum - r0, done=term | trunc)

    return jax.lax.scan(body, s, None, length=n)[1]
