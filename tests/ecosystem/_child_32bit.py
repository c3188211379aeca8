"""The fresh process of test_scoped_x64.py: a user's float32 program that imports jaxsched.

Run as ``python tests/ecosystem/_child_32bit.py TRACE [--trace-only]`` with JAX_ENABLE_X64
unset; prints one JSON line. Warnings that JAX truncated a 64-bit dtype are errors here.
``--trace-only``: the checks that compile nothing (imports, make, specs by ``eval_shape``,
the engine's error, the scope), for the suite's cheap test.
"""

import json
import sys
import warnings

import jax
import jax.numpy as jnp

warnings.filterwarnings("error", message=".*Explicitly requested dtype.*")

before = bool(jax.config.jax_enable_x64)
import jaxsched  # noqa: E402
import jaxsched.envs  # noqa: E402
import jaxsched.sim  # noqa: E402
import jaxsched.sim.engine  # noqa: E402
from jaxsched.envs import AutoResetWrapper  # noqa: E402
from jaxsched.envs.interfaces.gymnax_env import GymnaxEnv  # noqa: E402
from jaxsched.precision import X64Required  # noqa: E402

out = {"before": before, "after_import": bool(jax.config.jax_enable_x64)}
out["zeros"] = str(jnp.zeros(3).dtype)

env = jaxsched.make(f"rlscheduler:{sys.argv[1]}", length=8, max_queue=4)
out["after_make"] = bool(jax.config.jax_enable_x64)
state, ts = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
out["ts_dtypes"] = sorted({str(x.dtype) for x in jax.tree_util.tree_leaves(ts)})
out["state_dtypes"] = sorted({str(x.dtype) for x in jax.tree_util.tree_leaves(state)})
state, ts = jax.eval_shape(env.step, state, jnp.int32(0))
out["step_dtypes"] = sorted({str(x.dtype) for x in jax.tree_util.tree_leaves(ts)})
out["obs_spec"] = str(env.observation_spec().obs.dtype)


def tail(out):
    """The checks at the end of both variants."""
    seq = env._sequence(jnp.int32(0))  # an environment method: built in jaxsched's scope
    try:
        jax.eval_shape(lambda s: jaxsched.sim.engine.reset(s, jnp.arange(8), 4, 8), seq)
        out["bare_engine"] = "ran"
    except X64Required as e:
        out["bare_engine"] = "X64Required" if "jaxsched.x64()" in str(e) else str(e)
    with jaxsched.x64():
        out["inside_x64"] = bool(jax.config.jax_enable_x64)
    out["end"] = bool(jax.config.jax_enable_x64)
    out["zeros_end"] = str(jnp.zeros(3).dtype)
    print(json.dumps(out))


if "--trace-only" in sys.argv:
    tail(out)
    sys.exit(0)
state, ts = jax.jit(env.reset)(jax.random.PRNGKey(0))
state, ts = jax.jit(env.step)(state, jnp.int32(0))
out["jit_dtypes"] = sorted({str(x.dtype) for x in jax.tree_util.tree_leaves(ts)})

# vmap + lax.scan with auto-reset: the int64 state leaves are a scan carry of a 32-bit program
auto = AutoResetWrapper(env)


@jax.jit
def rollout(key):
    st, ts = jax.vmap(auto.reset)(jax.random.split(key, 3))

    def body(c, _):
        st, ts = c
        a = jnp.argmax(ts.observation.mask, axis=-1).astype(jnp.int32)
        st, ts = jax.vmap(auto.step)(st, a)
        return (st, ts), (ts.reward, ts.last())

    return jax.lax.scan(body, (st, ts), None, length=20)[1]


rewards, dones = rollout(jax.random.PRNGKey(1))
out["rollout"] = [str(rewards.dtype), int(dones.sum())]
with jaxsched.x64():  # the same rollout computed by a 64-bit caller: the same rewards
    rewards64, _ = rollout(jax.random.PRNGKey(1))
out["rollout_exact"] = bool((rewards64.astype(jnp.float32) == rewards).all())

# a few updates of a tiny training loop (REINFORCE-like, a float32 reward normaliser in the
# carry, as PureJaxRL's NormalizeVecReward keeps one) through the gymnax view
genv = GymnaxEnv(env)
n_obs, n_act = genv.observation_space().shape[0], genv.action_space().n


@jax.jit
def update(carry, key):
    w, st, obs, ret_var = carry

    def body(c, k):
        st, obs, rv = c
        mask = genv.action_mask(st)
        logits = jnp.where(mask, obs @ w, -1e9)
        a = jax.random.categorical(k, logits).astype(jnp.int32)
        obs2, st, r, d, info = genv.step(k, st, a)
        rv = 0.99 * rv + 0.01 * r * r  # float32 carry: fails if r were float64
        return (st, obs2, rv), (obs, a, mask, r / jnp.sqrt(rv + 1e-8))

    (st, obs, ret_var), (o, a, m, r) = jax.lax.scan(
        body, (st, obs, ret_var), jax.random.split(key, 16)
    )

    def loss(w):
        lg = jnp.where(m, o @ w, -1e9)
        lp = jax.nn.log_softmax(lg)[jnp.arange(16), a]
        return -(lp * (r - r.mean())).mean()

    w = w - 0.01 * jax.grad(loss)(w)
    return (w, st, obs, ret_var), loss(w)


obs, st = genv.reset(jax.random.PRNGKey(2))
carry = (jnp.zeros((n_obs, n_act)), st, obs, jnp.float32(1.0))
losses = []
for i in range(3):
    carry, lo = update(carry, jax.random.PRNGKey(10 + i))
    losses.append(float(lo))
out["losses_finite"] = all(jnp.isfinite(jnp.asarray(losses)).tolist())
out["w_dtype"] = str(carry[0].dtype)

tail(out)
