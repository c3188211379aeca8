"""Greedy baselines of spec §8, the schedule metrics of §10 and a batched rollout driver.

Baselines look only at slot jobs that fit *now* (:func:`~jaxsched.sim.datacenter.cluster.fits_now`)
and take the void action ``N`` when none does; ties go to the lowest slot index (strict ``>``,
as DeepRM's ``other_agents``):

* ``sjf`` — largest ``1/len``;
* ``packer`` — largest ``dot(free resources at offset 0, demand)`` (DeepRM's Packer, which its
  evaluation labels "Tetris");
* ``tetris`` — ``knob · packer + (1 − knob) / len`` (DeepRM's combined agent; ``knob = 1`` is
  the pure packer, the default);
* ``first_fit`` — the lowest fitting slot;
* ``greedy_random`` — uniform among fitting slots (the spec's Random);
* ``random_uniform`` — DeepRM's Random: uniform over all ``N + 1`` actions, invalid ones
  included;
* ``replay`` — the given action sequence.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxsched.sim.datacenter import cluster
from jaxsched.sim.datacenter.types import DCParams, DCState, i32

__all__ = ["POLICIES", "policy_code", "heuristic_action", "rollout", "job_metrics"]

#: policy names; the index is the code :func:`heuristic_action` takes
POLICIES = ("replay", "sjf", "packer", "tetris", "first_fit", "greedy_random", "random_uniform")


def policy_code(name: str) -> int:
    """The code of a policy name (:data:`POLICIES`); ValueError if unknown."""
    return POLICIES.index(name)


def _scores(p: DCParams, s: DCState, knob) -> jax.Array:
    """float64 [4, N]: the sjf, packer, tetris and first-fit scores of each slot."""
    ln = jnp.maximum(cluster.take(s.lens, s.slots), 1).astype(jnp.float64)
    dm = cluster.take(s.dems, s.slots).astype(jnp.float64)
    sjf = 1.0 / ln
    pack = dm @ s.avail[0].astype(jnp.float64)
    tetris = knob * pack + (1.0 - knob) * sjf
    first = jnp.ones_like(sjf)
    return jnp.stack([sjf, pack, tetris, first])


def heuristic_action(p: DCParams, s: DCState, code, knob, u) -> jax.Array:
    """int32: the action of policy ``code`` (≥ 1, see :data:`POLICIES`; ``knob`` float for
    ``tetris``; ``u`` a uniform float in [0, 1) for the random ones)."""
    N = p.num_slots
    fit = cluster.fits_now(p, s)
    sc = jnp.where(fit[None, :], _scores(p, s, knob), -jnp.inf)
    greedy = jnp.where(jnp.any(fit), jax.lax.argmax(sc, 1, jnp.int32), N).astype(jnp.int32)
    nfit = jnp.sum(fit)
    pick = jnp.minimum(jnp.floor(u * nfit).astype(jnp.int32), jnp.maximum(nfit - 1, 0))
    rnd_fit = jnp.where(nfit > 0, jax.lax.argmax(jnp.cumsum(fit) > pick, 0, jnp.int32), N).astype(
        jnp.int32
    )
    rnd_all = jnp.minimum(jnp.floor(u * (N + 1)), N).astype(jnp.int32)
    table = jnp.concatenate([greedy, jnp.stack([rnd_fit, rnd_all])])
    return table[jnp.clip(code - 1, 0, 5)]


def rollout(p: DCParams, lens, dems, code, knob, actions, n_actions, key, num_steps: int):
    """Run one episode for ``num_steps`` step calls at most (stops when it ends).

    Args: ``lens`` int [S], ``dems`` int [S, d] (the jobset); ``code`` int policy code;
    ``knob`` float; ``actions`` int [num_steps] (``replay``; others ignore it); ``n_actions``
    int: steps a replay takes; ``key`` PRNG key (the random policies).

    Returns ``(final state, per-step dict)`` with ``action`` int32, ``placed`` bool,
    ``reward`` float64, ``live`` bool (the step was taken), each [num_steps]."""
    s0 = cluster.reset(p, lens, dems)

    def body(s, xs):
        i, a_rec, u = xs
        a = jnp.where(code == 0, a_rec, heuristic_action(p, s, code, knob, u))
        go = ~s.done & ((code != 0) | (i < n_actions))
        new, r, placed, _, _ = cluster.step(p, s, a)
        new = jax.tree_util.tree_map(lambda x, y: jnp.where(go, x, y), new, s)
        out = dict(action=a, placed=placed & go, reward=jnp.where(go, r, 0.0), live=go)
        return new, out

    idx = jnp.arange(num_steps, dtype=jnp.int32)
    us = jax.random.uniform(key, (num_steps,))
    return jax.lax.scan(body, s0, (idx, i32(actions), us))


def job_metrics(s: DCState) -> dict:
    """float64 metrics over finished jobs (allocated: ``finish ≥ 0``; spec §10): mean
    ``slowdown`` ((finish − arrival)/len), ``slowdown_floor`` (floor-divided, DeepRM under
    Python 2), ``completion`` (finish − arrival), ``waiting`` (start − arrival); ``finished``
    int32. NaN when no job finished. Also over all recorded jobs: ``unfinished`` (float64, the
    jobs never allocated) and ``slowdown_all``, the mean slowdown with each unfinished job
    counted as if it started at the state's time ``t`` (a lower bound of its slowdown), so
    that a policy cannot gain by never allocating a job."""
    arrival = jnp.arange(s.lens.shape[-1])
    done = s.recorded & (s.finish >= 0)
    n = jnp.sum(done)
    c = (s.finish - arrival).astype(jnp.float64)
    ln = jnp.maximum(s.lens, 1)
    w = (s.start - arrival).astype(jnp.float64)
    left = s.recorded & (s.finish < 0)
    c_all = (jnp.where(left, s.t + ln, s.finish) - arrival).astype(jnp.float64)

    def mean(x):
        return jnp.sum(jnp.where(done, x, 0.0)) / n

    return dict(
        slowdown=mean(c / ln),
        slowdown_floor=mean(((s.finish - arrival) // ln).astype(jnp.float64)),
        completion=mean(c),
        waiting=mean(w),
        finished=n.astype(jnp.int32),
        unfinished=jnp.sum(left).astype(jnp.float64),
        slowdown_all=jnp.sum(jnp.where(s.recorded, c_all / ln, 0.0)) / jnp.sum(s.recorded),
    )
