"""DRAS-PG's pieces end to end on a one-step problem: the effect of input normalisation.

    PYTHONPATH=. .venv/bin/python benchmarks/dras_bandit.py [--norm] [--mode code]
        [--gamma 0] [--lr 0.001] [--updates 801] [--hidden 64,32]

Each decision is an independent random state: 6 waiting jobs (sizes 1–8, estimates 10 min – 1 day,
waits up to 11 h) in a window of W = 8 and 16 nodes, about half busy (raw seconds, as DRAS).
The observation (:func:`jaxsched.envs.dras_features.pg_observation`) goes through
:class:`jaxsched.nets.dras.DRASPolicy`; a slot is sampled (:func:`sample_slot`) and rewarded
with the code's type-5 reward of the picked job (:func:`code_reward`); batches of 32 decisions
are one :func:`jaxsched.train.pg.make_pg` update.  Printed: the mean reward of the batch
against the best possible (the best job in each state), every 100 updates, and the policy's
mean largest slot probability at initialisation (1/6 = uniform over the six jobs).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from jaxsched.envs import dras_features as F  # noqa: E402
from jaxsched.nets.dras import DRASPolicy, sample_slot, truncated_probs  # noqa: E402
from jaxsched.train.pg import PGBatch, PGConfig, make_pg  # noqa: E402

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
    free = jnp.sum(owner < 0)
    mw = F.max_wait(jobs[3], jnp.ones(J, bool), 0.0)
    rew = jax.vmap(lambda j: F.code_reward(jobs[0][j], -jobs[3][j], free, N, mw))(jnp.arange(J))
    return obs, a, rew[a], rew.max(), truncated_probs(logits, J).max()


def main(argv=None, out=print):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--norm", action="store_true", help="input_norm=(N, 86400)")
    ap.add_argument("--mode", default="code")
    ap.add_argument("--gamma", type=float, default=0.0)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--updates", type=int, default=801)
    ap.add_argument("--hidden", default="64,32")
    a = ap.parse_args(argv)
    hidden = tuple(int(h) for h in a.hidden.split(","))
    net = DRASPolicy(
        hidden=hidden, window=W, mode=a.mode, input_norm=(N, 86400.0) if a.norm else None
    )
    params = net.init(jax.random.PRNGKey(0), jnp.zeros((2 * W + N, 2)))
    init, update, _ = make_pg(net.apply, PGConfig(a.mode, gamma=a.gamma, lr=a.lr), capacity=C)

    @jax.jit
    def step(st, key):
        obs, act, r, best, pmax = jax.vmap(lambda k: decision(net, st.params, k))(
            jax.random.split(key, C)
        )
        st, _ = update(st, PGBatch(obs, act, jnp.full(C, J), r, jnp.ones(C, bool)))
        return st, (r.mean(), best.mean(), pmax.mean())

    st, key, t0 = init(params), jax.random.PRNGKey(1), time.perf_counter()
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
    main()
