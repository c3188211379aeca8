"""The DRAS-DQL trainer (spec ``dras.md`` §7.1, §7.3): E jobsets vectorised as a stacked
:class:`~jaxsched.envs.dras_dql.DRASDQLEnv` (vmap), ε-greedy decisions over the window's
candidate values, the executed decisions of 10 scheduling instances collected per environment
into a fixed-capacity record, then :func:`jaxsched.systems.dras.dql.make_dql`'s per-decision updates
— each environment's batch in turn from one shared network (``update="sequential"``; DQL's
sequential Adam steps have no averaged form).

ε (§7.3, code): 1.0 at the start of every episode, multiplied by the decay (0.99 code, 0.995
paper) after every level-1 *ready* start (a recorded level-1 decision), floor 0.01; level-2
picks use ε without decaying it.

Rewards: the code's type 5 recorded after the start (:mod:`jaxsched.envs.dras_dql`); the
level-2 picks of one pass are re-scored when the pass's level 2 ends (the free nodes after all
its chosen jobs start), from the ``n``/``wait``/``max_wait`` kept per record.  A batch cut by
the capacity C in the middle of a level-2 pass keeps the values known then (counted as an early
flush in the log).

The state (checkpointed): ``{"params", "opt_state", "key"}``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxsched.envs.dras import W
from jaxsched.envs.dras_dql import type5_after
from jaxsched.sim.cqsim import engine as CE
from jaxsched.sim.cqsim.types import LEVEL2
from jaxsched.systems.dras.dql import DQLBatch, DQLConfig, DQLState, decay_epsilon, eps_greedy
from jaxsched.systems.dras.trainer import INSTANCES, _waits

__all__ = ["DQLRecord", "empty_record", "dql_step", "make_epoch_dql", "dql_rollout"]


class DQLRecord(NamedTuple):
    """Recorded decisions at capacity C (written at ``index % C``): ``obs`` float32
    ``[C, R, 2]`` (the chosen candidate's input; R = 0 when not kept), ``reward`` float32,
    ``valid`` bool, ``job`` int32 (episode job index), ``level`` int32 (1, 2), ``n``, ``wait``,
    ``maxw`` float32 (the reward's parts), ``pend`` bool (a level-2 reward not final yet);
    all ``[C]``."""

    obs: jax.Array
    reward: jax.Array
    valid: jax.Array
    job: jax.Array
    level: jax.Array
    n: jax.Array
    wait: jax.Array
    maxw: jax.Array
    pend: jax.Array


def empty_record(C: int, rows: int) -> DQLRecord:
    f = jnp.zeros((C,), jnp.float32)
    i = jnp.zeros((C,), jnp.int32)
    b = jnp.zeros((C,), bool)
    return DQLRecord(jnp.zeros((C, rows, 2), jnp.float32), f, b, i, i, f, f, f, b)


def dql_step(env, apply_fn, cfg: DQLConfig, params, c):
    """One ε-greedy decision of one environment.  ``c`` = ``(es, rec, i, key, eps, used,
    total)``: env state, :class:`DQLRecord`, records so far (int32), PRNG key, ε, nodes chosen
    by the current level-2 pass (float32), total final reward (float32).  Returns the new
    ``c``."""
    es, rec, i, key, eps, used, total = c
    code = env.code_timing  # type 5 after the start: level-2 rewards patched at the pass end
    key, k = jax.random.split(key)
    ob = env.observe(es)
    a = eps_greedy(k, apply_fn(params, ob.obs), ob.mask, eps)
    n, wait, mw, free = env.reward_parts(es, a)
    win, _ = CE.window(es.sim, W)
    lvl = ob.phase
    es2, r, *_, ex = env.transition(es, a)
    ok = ex["recorded"] > 0
    C, keep = rec.reward.shape[0], rec.obs.shape[1] > 0
    j = i % C
    rec = DQLRecord(
        rec.obs.at[j].set(ob.obs[a]) if keep else rec.obs, rec.reward.at[j].set(r),
        rec.valid.at[j].set(ok), rec.job.at[j].set(win[a]), rec.level.at[j].set(lvl),
        rec.n.at[j].set(n), rec.wait.at[j].set(wait), rec.maxw.at[j].set(mw),
        rec.pend.at[j].set(ok & (lvl == 2) & code),
    )  # fmt: skip
    used = used + jnp.where(ok & (lvl == 2), n, 0.0)
    ended = (lvl == 2) & (es2.sim.done | (es2.sim.phase != LEVEL2))
    ff = free.astype(jnp.float32) - used
    fix = ended & rec.pend
    new_r = type5_after(rec.n, rec.wait, ff, env._config.num_nodes, rec.maxw)
    final_now = ok & ((lvl == 1) | (not code))  # a paper reward is final at its decision
    total = total + jnp.where(final_now, r, 0.0) + jnp.sum(jnp.where(fix, new_r, 0.0))
    rec = rec._replace(reward=jnp.where(fix, new_r, rec.reward), pend=rec.pend & ~ended)
    eps = decay_epsilon(eps, (lvl == 1) & ok, cfg)
    return es2, rec, i + ok.astype(jnp.int32), key, eps, jnp.where(ended, 0.0, used), total


def _collect(env, apply_fn, cfg, C: int, es, params, key, eps, used):
    """One environment's batch: decisions until 10 instances have passed, the episode ends or
    C decisions are recorded.  Returns ``(es, batch, full, key, eps, used, span, total)``."""
    p0 = es.sim.passes
    rows = env.observe(es).obs.shape[-2]

    def cond(c):
        (es, _, i, *_), _ = c
        return (~es.sim.done) & (es.sim.passes - p0 < INSTANCES) & (i < C)

    def body(c):
        inner, _ = c  # also the pass of the latest decision (the batch's span)
        return dql_step(env, apply_fn, cfg, params, inner), inner[0].sim.passes

    c0 = (es, empty_record(C, rows), jnp.int32(0), key, eps, used, jnp.float32(0))
    (es, rec, i, key, eps, used, total), last = jax.lax.while_loop(cond, body, (c0, p0))
    full = (i >= C) & ~es.sim.done & (es.sim.passes - p0 < INSTANCES)
    total = total + jnp.sum(jnp.where(rec.pend, rec.reward, 0.0))  # cut passes: as known
    batch = DQLBatch(rec.obs, rec.reward, rec.valid)
    return es, batch, full, key, eps, used, last - p0, total


def make_epoch_dql(apply_fn, dql_fns, cfg: DQLConfig, *, C: int):
    """``epoch(state, envs) -> (state, metrics)``: one episode on each of the stacked envs
    (leading axis E), the DQL updates of every environment's batch in turn every 10 instances.
    ``dql_fns`` = :func:`jaxsched.systems.dras.dql.make_dql`'s ``(init, update)``."""
    _, upd = dql_fns
    cfg = cfg.resolved()

    def epoch(state, envs):
        dq, key = DQLState(state["params"], state["opt_state"]), state["key"]
        E = jax.tree_util.tree_leaves(envs)[0].shape[0]
        key, k0 = jax.random.split(key)
        es = jax.vmap(lambda env: env.init_state_at(0))(envs)
        coll = jax.vmap(lambda env, s, p, k, e, u: _collect(env, apply_fn, cfg, C, s, p, k, e, u),
                        in_axes=(0, 0, None, 0, 0, 0))  # fmt: skip
        zero = jnp.zeros((E,), jnp.float32)
        eps0 = jnp.full((E,), cfg.eps_start, jnp.float32)
        acc0 = {"reward": zero, "decisions": zero, "flushes": zero, "updates": jnp.float32(0),
                "span": jnp.int32(0), "delta": jnp.float32(0)}  # fmt: skip

        def body(c):
            dq, es, keys, eps, used, acc = c
            es, b, full, keys, eps, used, span, tot = coll(envs, es, dq.params, keys, eps, used)
            dq, ms = jax.lax.scan(upd, dq, b)
            acc = {"reward": acc["reward"] + tot,
                   "decisions": acc["decisions"] + jnp.sum(b.valid, -1),
                   "flushes": acc["flushes"] + full, "updates": acc["updates"] + 1,
                   "span": jnp.maximum(acc["span"], jnp.max(span)),
                   "delta": acc["delta"] + jnp.mean(ms["mean_abs_delta"])}  # fmt: skip
            return dq, es, keys, eps, used, acc

        c0 = (dq, es, jax.random.split(k0, E), eps0, zero, acc0)
        dq, es, _, eps, _, acc = jax.lax.while_loop(lambda c: ~jnp.all(c[1].sim.done), body, c0)
        waits = jax.vmap(_waits)(envs, es)
        m = {"episode_reward": jnp.mean(acc["reward"]), "decisions": jnp.mean(acc["decisions"]),
             "early_flushes": jnp.sum(acc["flushes"]), "rounds": acc["updates"],
             "avg_wait": jnp.mean(waits), "overflow": jnp.any(es.sim.overflow != 0),
             "max_batch_span": acc["span"], "passes": jnp.max(es.sim.passes),
             "epsilon": jnp.mean(eps),
             "mean_abs_delta": acc["delta"] / jnp.maximum(acc["updates"], 1.0)}  # fmt: skip
        return {"params": dq.params, "opt_state": dq.opt_state, "key": key}, m

    return epoch


def dql_rollout(env, apply_fn, cfg: DQLConfig, params, key, eps0, *, record: int = 0):
    """One episode of ``env`` (from job 0), ε-greedy from ``eps0`` (0 = greedy; the code's
    test runs start at 1.0) with the decay of ``cfg``.  Returns ``(sim state at the end, total
    reward float32, recorded decisions int32, DQLRecord)``; the record is a ring of ``record``
    entries (at least the episode's decisions keeps them all; 0 = the queue's size + 1, enough
    for the level-2 re-scoring).  Jit it with ``env`` as an argument."""
    cfg = cfg.resolved()
    C = record or env._config.queue_cap + 1
    c0 = (env.init_state_at(0), empty_record(C, 0), jnp.int32(0), key,
          jnp.asarray(eps0, jnp.float32), jnp.float32(0), jnp.float32(0))  # fmt: skip

    def body(c):
        return dql_step(env, apply_fn, cfg, params, c)

    es, rec, i, _, _, _, total = jax.lax.while_loop(lambda c: ~c[0].sim.done, body, c0)
    return es.sim, total, i, rec
