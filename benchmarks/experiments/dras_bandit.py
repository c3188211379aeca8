"""DRAS-PG's and DRAS-DQL's pieces end to end on a one-step problem: the effect of input
normalisation and of the DQL update's sign.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/dras_bandit.py [--variant pg|dql] [--norm]
        [--mode code] [--gamma 0] [--lr 0.001] [--sign code|descent] [--updates 801]
        [--hidden 64,32]

Each decision is an independent random state: 6 waiting jobs (sizes 1–8, estimates 10 min – 1 day,
waits up to 11 h) in a window of W = 8 and 16 nodes, about half busy (raw seconds, as DRAS).
The observation (:func:`jaxsched.envs.dras_features.pg_observation`) goes through
:class:`jaxsched.nets.dras.DRASPolicy`; a slot is sampled (:func:`sample_slot`) and rewarded
with the code's type-5 reward of the picked job (:func:`code_reward`); batches of 32 decisions
are one :func:`jaxsched.systems.dras.pg.make_pg` update.  Printed: the mean reward of the batch
against the best possible (the best job in each state), every 100 updates, and the policy's
mean largest slot probability at initialisation (1/6 = uniform over the six jobs).

``--variant dql``: each of the six jobs is scored by :class:`DRASValue` on its
``[2 + N, 2]`` input (:func:`dql_observations`), picked ε-greedily (ε from 1.0, × 0.99 per
update, floor 0.01), and :func:`jaxsched.systems.dras.dql.make_dql` updates with ``--sign`` (lr 0.001;
``--gamma`` / ``--lr`` are PG's).  Printed: mean reward, mean V of the picks and mean |Δ|.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from jaxsched.envs import dras_features as F  # noqa: E402
from jaxsched.nets.dras import DRASPolicy, DRASValue, sample_slot, truncated_probs  # noqa: E402
from jaxsched.systems.dras.dql import DQLBatch, DQLConfig, eps_greedy, make_dql  # noqa: E402
from jaxsched.systems.dras.pg import PGBatch, PGConfig, make_pg  # noqa: E402

W, N, C, J = 8, 16, 32, 6


def random_state(key):
    """``(jobs, owner, est_end)`` of one random state at now = 0."""
    k1, k2, k3, k4 = jax.random.split(key, 4)
    size = jax.random.randint(k1, (J,), 1, 9)
    est = jax.random.uniform(k2, (J,), minval=600, maxval=86400)
    submit = -jax.random.uniform(k3, (J,), minval=0, maxval=40000)
    owner = jnp.where(jax.random.uniform(k4, (N,)) < 0.5, 1, -1)
    est_end = jax.random.uniform(k4, (N,), minval=0, maxval=80000)
    return (size, est, jnp.zeros(J, jnp.int32), submit), owner, est_end


def decision(net, params, key):
    """One decision: observation, sampled slot, its reward and the best reward possible."""
    ks, ka = jax.random.split(key)
    jobs, owner, est_end = random_state(ks)
    obs = F.pg_observation(jnp.arange(W) % J, J, jobs, owner, est_end, 0.0)
    logits = net.apply(params, obs)
    a = sample_slot(ka, logits, J)
    rew = _rewards(jobs, owner)
    return obs, a, rew[a], rew.max(), truncated_probs(logits, J).max()


def _rewards(jobs, owner):
    free = jnp.sum(owner < 0)
    mw = F.max_wait(jobs[3], jnp.ones(J, bool), 0.0)
    return jax.vmap(lambda j: F.code_reward(jobs[0][j], -jobs[3][j], free, N, mw))(jnp.arange(J))


def dql_decision(net, params, key, eps):
    """One ε-greedy DQL decision: the pick's input, its reward, the best reward, its value."""
    ks, ka = jax.random.split(key)
    jobs, owner, est_end = random_state(ks)
    obs = F.dql_observations(jnp.arange(J), jobs, owner, est_end, 0.0)
    v = net.apply(params, obs)
    a = eps_greedy(ka, v, jnp.ones(J, bool), eps)
    rew = _rewards(jobs, owner)
    return obs[a], rew[a], rew.max(), v[a]


def run_dql(a, hidden, norm, out):
    net = DRASValue(hidden=hidden, mode=a.mode, input_norm=norm)
    params = net.init(jax.random.PRNGKey(0), jnp.zeros((2 + N, 2)))
    init, update = make_dql(net.apply, DQLConfig(mode=a.mode, sign=a.sign))

    @jax.jit
    def step(st, key, eps):
        keys = jax.random.split(key, C)
        o, r, best, v = jax.vmap(lambda k: dql_decision(net, st.params, k, eps))(keys)
        st, m = update(st, DQLBatch(o, r, jnp.ones(C, bool)))
        return st, (r.mean(), best.mean(), v.mean(), m["mean_abs_delta"])

    st, key, eps = init(params), jax.random.PRNGKey(1), 1.0
    label = f"dql {'normalised' if norm else 'raw'} {a.mode} sign={a.sign}"
    for i in range(a.updates):
        key, k = jax.random.split(key)
        st, (r, best, v, d) = step(st, k, eps)
        eps = max(eps * 0.99, 0.01)
        if i % 100 == 0:
            out(f"{label}: update {i:4d} ε {eps:.3f} mean reward {float(r):.4f} "
                f"(best {float(best):.4f}) mean V {float(v):.4f} |Δ| {float(d):.4f}")  # fmt: skip


def main(argv=None, out=print):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", choices=("pg", "dql"), default="pg")
    ap.add_argument("--sign", choices=("code", "descent"), default="code")
    ap.add_argument("--norm", action="store_true", help="input_norm=(N, 86400)")
    ap.add_argument("--mode", default="code")
    ap.add_argument("--gamma", type=float, default=0.0)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--updates", type=int, default=801)
    ap.add_argument("--hidden", default="64,32")
    a = ap.parse_args(argv)
    hidden = tuple(int(h) for h in a.hidden.split(","))
    norm = (float(N), 86400.0) if a.norm else None
    t0 = time.perf_counter()
    if a.variant == "dql":
        run_dql(a, hidden, norm, out)
        out(f"{time.perf_counter() - t0:.1f} s")
        return
    net = DRASPolicy(hidden=hidden, window=W, mode=a.mode, input_norm=norm)
    params = net.init(jax.random.PRNGKey(0), jnp.zeros((2 * W + N, 2)))
    init, update, _ = make_pg(net.apply, PGConfig(a.mode, gamma=a.gamma, lr=a.lr), capacity=C)

    @jax.jit
    def step(st, key):
        obs, act, r, best, pmax = jax.vmap(lambda k: decision(net, st.params, k))(
            jax.random.split(key, C)
        )
        st, _ = update(st, PGBatch(obs, act, jnp.full(C, J), r, jnp.ones(C, bool)))
        return st, (r.mean(), best.mean(), pmax.mean())

    st, key = init(params), jax.random.PRNGKey(1)
    label = f"{'normalised' if a.norm else 'raw'} {a.mode} γ={a.gamma} lr={a.lr}"
    for i in range(a.updates):
        key, k = jax.random.split(key)
        st, (r, best, pmax) = step(st, k)
        if i == 0:
            out(f"{label}: mean largest slot probability at init {float(pmax):.3f}")
        if i % 100 == 0:
            out(f"{label}: update {i:4d} mean reward {float(r):.4f} (best {float(best):.4f})")
    out(f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    main()
