"""The DRAS-PG trainer (spec ``dras.md`` §7.1–§7.2, §13): E jobsets vectorised as a stacked
:class:`~jaxsched.envs.dras.DRASEnv` (vmap), decisions sampled from the truncated policy and
collected per environment over 10 scheduling instances (the engine's ``passes`` counter) into
fixed-capacity :class:`~jaxsched.systems.dras.pg.PGBatch` rows, then the PG update — averaged over
the environments (``update="mean"``, :func:`make_pg`'s ``update_mean``) or each environment's
batch in turn (``"sequential"``) — until every jobset is scheduled.  One epoch (= E episodes)
is one compiled function of (state, envs); a new epoch's jobsets are a new ``envs`` argument of
the same shapes, so nothing recompiles.

The state (checkpointed): ``{"params", "opt_state", "base_sum", "base_n", "key"}``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxsched.nets.dras import sample_slot, truncated_probs
from jaxsched.systems.dras.pg import PGBatch, PGState

__all__ = ["INSTANCES", "make_epoch", "to_pg", "from_pg", "rollout", "online_rollout"]

INSTANCES = 10
"""Scheduling instances per batch (spec §7.1)."""


def to_pg(state: dict) -> PGState:
    return PGState(state["params"], state["opt_state"], state["base_sum"], state["base_n"])


def from_pg(pg: PGState, key) -> dict:
    return {"params": pg.params, "opt_state": pg.opt_state, "base_sum": pg.base_sum,
            "base_n": pg.base_n, "key": key}  # fmt: skip


def _empty_batch(C: int, rows: int) -> PGBatch:
    z = jnp.zeros((C,), jnp.int32)
    return PGBatch(jnp.zeros((C, rows, 2), jnp.float32), z, z, jnp.zeros((C,), jnp.float32),
                   jnp.zeros((C,), bool))  # fmt: skip


def _collect(env, apply_fn, C: int, es, params, key):
    """One environment's batch: sampled decisions until 10 instances have passed, the
    episode ends or C decisions are stored.  Returns ``(es, batch, full, key)``."""
    ob0 = env.observe(es)
    p0 = es.sim.passes

    def cond(c):
        es, _, n, _, _ = c
        return (~es.sim.done) & (es.sim.passes - p0 < INSTANCES) & (n < C)

    def body(c):
        es, b, n, key, _ = c
        last = es.sim.passes
        key, k = jax.random.split(key)
        ob = env.observe(es)
        cnt = jnp.sum(ob.mask, dtype=jnp.int32)
        a = sample_slot(k, apply_fn(params, ob.obs), cnt)
        es, r, *_ = env.transition(es, a)
        b = PGBatch(b.obs.at[n].set(ob.obs), b.action.at[n].set(a), b.count.at[n].set(cnt),
                    b.reward.at[n].set(r), b.valid.at[n].set(True))  # fmt: skip
        return es, b, n + 1, key, last

    b = _empty_batch(C, ob0.obs.shape[0])
    es, b, n, key, last = jax.lax.while_loop(cond, body, (es, b, jnp.int32(0), key, p0))
    full = (n >= C) & ~es.sim.done & (es.sim.passes - p0 < INSTANCES)
    return es, b, full, key, last - p0


def _waits(env, es) -> jax.Array:
    """float32: the mean wait (s) of the episode's jobs (started ones)."""
    d = env._data
    sub = d.submit - d.submit[0]
    ok = es.sim.start >= 0
    w = jnp.where(ok, es.sim.start - sub, 0)
    return (jnp.sum(w) / jnp.maximum(jnp.sum(ok), 1)).astype(jnp.float32)


def make_epoch(apply_fn, pg_fns, *, C: int, update: str):
    """``epoch(state, envs) -> (state, metrics)``: one episode on each of the stacked envs
    (leading axis E), PG updates every 10 instances per environment.  ``pg_fns`` = the
    ``(init, update, update_mean)`` of :func:`jaxsched.systems.dras.pg.make_pg`."""
    _, upd_one, upd_mean = pg_fns

    def apply_update(pg, batches):
        if update == "mean":
            return upd_mean(pg, batches)
        pg, ms = jax.lax.scan(lambda s, b: upd_one(s, b), pg, batches)
        return pg, jax.tree_util.tree_map(jnp.mean, ms)

    def epoch(state, envs):
        pg, key = to_pg(state), state["key"]
        E = jax.tree_util.tree_leaves(envs)[0].shape[0]
        key, k0 = jax.random.split(key)
        keys = jax.random.split(k0, E)
        es = jax.vmap(lambda env: env.init_state_at(0))(envs)
        coll = jax.vmap(lambda env, s, p, k: _collect(env, apply_fn, C, s, p, k),
                        in_axes=(0, 0, None, 0))  # fmt: skip
        zero = jnp.zeros((E,), jnp.float32)
        acc0 = {
            "reward": zero,
            "decisions": zero,
            "flushes": zero,
            "updates": jnp.float32(0),
            "span": jnp.int32(0),
        }

        def cond(c):
            return ~jnp.all(c[1].sim.done)

        def body(c):
            pg, es, keys, acc = c
            es, b, full, keys, span = coll(envs, es, pg.params, keys)
            pg, _ = apply_update(pg, b)
            acc = {"reward": acc["reward"] + jnp.sum(jnp.where(b.valid, b.reward, 0.0), -1),
                   "decisions": acc["decisions"] + jnp.sum(b.valid, -1),
                   "flushes": acc["flushes"] + full, "updates": acc["updates"] + 1,
                   "span": jnp.maximum(acc["span"], jnp.max(span))}  # fmt: skip
            return pg, es, keys, acc

        pg, es, _, acc = jax.lax.while_loop(cond, body, (pg, es, keys, acc0))
        waits = jax.vmap(_waits)(envs, es)
        m = {"episode_reward": jnp.mean(acc["reward"]), "decisions": jnp.mean(acc["decisions"]),
             "early_flushes": jnp.sum(acc["flushes"]), "rounds": acc["updates"],
             "avg_wait": jnp.mean(waits), "overflow": jnp.any(es.sim.overflow != 0),
             "max_batch_span": acc["span"], "passes": jnp.max(es.sim.passes)}  # fmt: skip
        return from_pg(pg, key), m

    return epoch


def rollout(env, apply_fn, params, key, *, sample: bool = False):
    """One episode of ``env`` (from job 0) under the policy: greedy (the largest truncated
    probability) or ``sample``d.  Returns ``(sim state at the end, total reward float32,
    decisions int32)``; jit it with ``env`` as an argument."""

    def cond(c):
        return ~c[0].sim.done

    def body(c):
        es, tot, n, key = c
        key, k = jax.random.split(key)
        ob = env.observe(es)
        cnt = jnp.sum(ob.mask, dtype=jnp.int32)
        logits = apply_fn(params, ob.obs)
        greedy = jnp.argmax(truncated_probs(logits, cnt)).astype(jnp.int32)
        a = jnp.where(sample, sample_slot(k, logits, cnt), greedy)
        es, r, *_ = env.transition(es, a)
        return es, tot + r, n + 1, key

    es = env.init_state_at(0)
    es, tot, n, _ = jax.lax.while_loop(cond, body, (es, jnp.float32(0), jnp.int32(0), key))
    return es.sim, tot, n


def online_rollout(env, apply_fn, pg_fns, params, key, *, sample: bool = False, C: int = 256,
                   learn=True):  # fmt: skip
    """One episode of ``env`` (from job 0) under the policy (greedy unless ``sample``) with
    PG's online adaptation of the code's test runs (spec §2.5, §12.9): the level-1 decisions
    of every 10 scheduling instances (at most ``C``; more end the batch early) are one PG
    update (``pg_fns`` = :func:`jaxsched.systems.dras.pg.make_pg`'s, from a fresh optimiser state);
    level-2 decisions are not recorded.  ``learn`` (bool, may be traced) False skips the
    updates (the fixed policy's schedule).  Returns ``(sim state at the end, total reward
    float32, decisions int32, updates int32)``; jit it with ``env`` as an argument."""
    init, upd_one, _ = pg_fns

    def cond(c):
        es, _, p0, n, *_ = c
        return ~es.sim.done & (es.sim.passes - p0 < INSTANCES) & (n < C)

    def body(c):
        es, b, p0, n, key, tot, params = c
        key, k = jax.random.split(key)
        ob = env.observe(es)
        cnt = jnp.sum(ob.mask, dtype=jnp.int32)
        logits = apply_fn(params, ob.obs)
        greedy = jnp.argmax(truncated_probs(logits, cnt)).astype(jnp.int32)
        a = sample_slot(k, logits, cnt) if sample else greedy
        es, r, *_ = env.transition(es, a)
        rec = ob.phase == 1
        b = PGBatch(b.obs.at[n].set(ob.obs), b.action.at[n].set(a), b.count.at[n].set(cnt),
                    b.reward.at[n].set(r), b.valid.at[n].set(rec))  # fmt: skip
        return es, b, p0, n + rec.astype(jnp.int32), key, tot + r, params

    def outer(c):
        es, pg, key, tot, ups = c
        rows = env.observe(es).obs.shape[0]
        c0 = (es, _empty_batch(C, rows), es.sim.passes, jnp.int32(0), key, tot, pg.params)
        es, b, _, _, key, tot, _ = jax.lax.while_loop(cond, body, c0)
        do = learn & jnp.any(b.valid)
        new, _ = upd_one(pg, b)
        pg = jax.tree_util.tree_map(lambda x, y: jnp.where(do, x, y), new, pg)
        return es, pg, key, tot, ups + do.astype(jnp.int32)

    c0 = (env.init_state_at(0), init(params), key, jnp.float32(0), jnp.int32(0))
    es, _, _, tot, ups = jax.lax.while_loop(lambda c: ~c[0].sim.done, outer, c0)
    return es.sim, tot, es.sim.decisions, ups  # decisions: the engine's count (both levels)
