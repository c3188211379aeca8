"""Checks every environment of the contract (:mod:`jaxsched.envs.core`) must pass; each
environment's tests call :func:`check_env_contract`.

The checks, on a small batch of episodes with random valid actions:

1. types: the reset and step timesteps have the documented dtypes and shapes (``mask`` bool
   ``[num_actions]``, ``step_type`` int8, ``reward``/``discount`` float32, ``terminated`` /
   ``truncated`` bool); FIRST after a reset; ``discount`` 0 exactly on termination; ``last()``
   = terminated or truncated;
2. compiled once: ``jit(reset)``, ``jit(reset_at)`` and ``jit(step)`` (the env an argument) are
   traced once however often they are called (a state after a step has the types of a state
   after a reset);
3. ``vmap`` equals a Python loop: batched reset and step == one environment at a time, bit for
   bit;
4. the :class:`~jaxsched.envs.wrappers.AutoResetWrapper` ``lax.scan`` (vmapped) equals stepping
   one environment at a time with the jitted wrapper step, bit for bit;
5. every observation an agent acts on (after a reset or an auto-reset step) has at least one
   valid action; no observation or reward is NaN;
6. ``reset`` and ``reset_at`` are deterministic in their arguments.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxsched.envs.core import FIRST, LAST
from jaxsched.envs.wrappers import AutoResetWrapper

__all__ = ["check_env_contract", "random_valid_action"]


def random_valid_action(key, mask) -> jax.Array:
    """An int32 action drawn uniformly among the True entries of ``mask`` (bool ``[A]``)."""
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


def _assert_trees_equal(a, b, what: str):
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert ta == tb, f"{what}: tree structures differ ({ta} vs {tb})"
    for i, (x, y) in enumerate(zip(la, lb)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, (
            f"{what}: leaf {i} is {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
        )
        assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), f"{what}: leaf {i} differs"


def _row(tree, i):
    return jax.tree_util.tree_map(lambda x: x[i], tree)


def _stack(trees):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)


def _no_nan(tree, what: str):
    for x in jax.tree_util.tree_leaves(tree):
        x = np.asarray(x)
        if x.dtype.kind in "fc":
            assert not np.isnan(x).any(), f"{what}: NaN"


def _check_timestep(env, ts, batch: int | None, what: str):
    """Dtypes and shapes of a timestep (with a leading batch axis when ``batch``)."""
    lead = () if batch is None else (batch,)
    mask = np.asarray(ts.observation.mask)
    assert mask.dtype == np.bool_ and mask.shape == lead + (env.num_actions,), (
        f"{what}: mask is {mask.dtype}{mask.shape}, want bool{lead + (env.num_actions,)}"
    )
    for name, dt in (
        ("step_type", np.int8),
        ("reward", np.float32),
        ("discount", np.float32),
        ("terminated", np.bool_),
        ("truncated", np.bool_),
    ):
        x = np.asarray(getattr(ts, name))
        assert x.dtype == dt and x.shape == lead, f"{what}: {name} is {x.dtype}{x.shape}"
    term, trunc = np.asarray(ts.terminated), np.asarray(ts.truncated)
    np.testing.assert_array_equal(np.asarray(ts.last()), term | trunc, err_msg=what)
    np.testing.assert_array_equal(np.asarray(ts.done), term | trunc, err_msg=what)
    np.testing.assert_array_equal(np.asarray(ts.discount), np.where(term, 0.0, 1.0), what)
    _no_nan((ts.observation, ts.reward), what)


def check_env_contract(env, *, key=None, starts=None, batch: int = 3, num_steps: int = 12) -> dict:
    """Run the checks of the module docstring on ``env`` (raises ``AssertionError``).

    Args:
      env: an environment of the contract (a pytree; it is passed to the jitted functions
        as an argument).
      key: PRNG key of the episodes and actions (default ``PRNGKey(0)``).
      starts: optional int sequence of ``reset_at`` arguments to check as well (at most
        ``batch`` are used).
      batch: environments in the vmapped batch; num_steps: steps of the scans.
    Returns:
      ``{"episodes_ended": int, "steps": int}`` of the auto-reset scan (so a test can require
      that episodes did end within ``num_steps``).
    """
    if key is None:
        key = jax.random.PRNGKey(0)
    k_env, k_act, k_scan = jax.random.split(key, 3)
    keys = jax.random.split(k_env, batch)
    traces = {"reset": 0, "reset_at": 0, "step": 0}

    def reset(e, k):
        traces["reset"] += 1
        return e.reset(k)

    def reset_at(e, s, k):
        traces["reset_at"] += 1
        return e.reset_at(s, k)

    def step(e, s, a):
        traces["step"] += 1
        return e.step(s, a)

    j_reset, j_reset_at, j_step = jax.jit(reset), jax.jit(reset_at), jax.jit(step)
    outs = _check_resets(env, j_reset, keys)
    if starts is not None:
        _check_reset_at(env, j_reset_at, [int(s) for s in list(starts)[:batch]], keys[0])
    b_states, b_ts = _check_vmapped_steps(env, j_step, keys, outs, k_act, batch)
    assert traces["step"] == 1, f"step traced {traces['step']} times (state types change?)"
    assert traces["reset"] == 1, f"reset traced {traces['reset']} times"
    assert traces["reset_at"] <= 1, f"reset_at traced {traces['reset_at']} times"
    return _check_auto_reset(env, b_states, b_ts, k_scan, batch, num_steps)


def _check_resets(env, j_reset, keys):
    """1, 5, 6: jitted resets: deterministic, typed, FIRST, a valid action. Returns them."""
    outs = [j_reset(env, k) for k in keys]
    _assert_trees_equal(outs[0], j_reset(env, keys[0]), "reset is not deterministic in its key")
    for i, (_, ts) in enumerate(outs):
        _check_timestep(env, ts, None, f"reset[{i}]")
        assert int(ts.step_type) == FIRST, f"reset[{i}]: step_type {int(ts.step_type)}"
        assert np.asarray(ts.observation.mask).any(), f"reset[{i}]: no valid action"
    return outs


def _check_reset_at(env, j_reset_at, starts, key):
    """1, 3, 5, 6 for ``reset_at``: deterministic, typed, vmap == loop."""
    at = [j_reset_at(env, jnp.int32(s), key) for s in starts]
    again = j_reset_at(env, jnp.int32(starts[0]), key)
    _assert_trees_equal(at[0], again, "reset_at is not deterministic")
    for s, (_, ts) in zip(starts, at):
        _check_timestep(env, ts, None, f"reset_at({s})")
        assert np.asarray(ts.observation.mask).any(), f"reset_at({s}): no valid action"
    b_at = jax.jit(jax.vmap(lambda s: env.reset_at(s, key)))(jnp.asarray(starts, jnp.int32))
    _assert_trees_equal(b_at, _stack(at), "vmap(reset_at) != a loop of reset_at")


def _check_vmapped_steps(env, j_step, keys, outs, k_act, batch):
    """3: vmapped reset (``outs``: the jitted resets of ``keys``) and two vmapped steps == one
    environment at a time (jitted, the env an argument). Returns the batched reset's
    ``(states, timesteps)``."""
    b_states, b_ts = jax.jit(jax.vmap(env.reset))(keys)
    _assert_trees_equal((b_states, b_ts), _stack(outs), "vmap(reset) != a loop of reset")
    _check_timestep(env, b_ts, batch, "vmap(reset)")
    states, ts = b_states, b_ts
    for t in range(2):
        acts = jax.vmap(random_valid_action)(
            jax.random.split(jax.random.fold_in(k_act, t), batch), ts.observation.mask
        )
        loop = [j_step(env, _row(states, i), acts[i]) for i in range(batch)]
        states, ts = jax.jit(jax.vmap(env.step))(states, acts)
        _assert_trees_equal((states, ts), _stack(loop), f"vmap(step) != a loop of step ({t})")
        _check_timestep(env, ts, batch, f"step {t}")
    return b_states, b_ts


def _check_auto_reset(env, b_states, b_ts, k_scan, batch, num_steps) -> dict:
    """4, 5: the auto-reset ``lax.scan`` (vmapped) == the jitted wrapper step one environment
    at a time; every observation acted on has a valid action; no NaN."""
    wrapped = AutoResetWrapper(env)
    step_keys = jax.random.split(k_scan, num_steps * batch).reshape(num_steps, batch, -1)

    def rollout(e, s0, ts0, ks):
        def body(c, k):
            s, ts = c
            a = jax.vmap(random_valid_action)(k, ts.observation.mask)
            s, ts = jax.vmap(e.step)(s, a)
            return (s, ts), (a, ts)

        return jax.lax.scan(body, (s0, ts0), ks)

    (s_end, _), (acts, tss) = jax.jit(rollout)(wrapped, b_states, b_ts, step_keys)
    w_step = jax.jit(lambda e, s, a: e.step(s, a))
    for i in range(batch):
        s = _row(b_states, i)
        for t in range(num_steps):
            s, ts_i = w_step(wrapped, s, acts[t, i])
            _assert_trees_equal(
                ts_i, _row(_row(tss, t), i), f"auto-reset scan != step by step (env {i}, t {t})"
            )
        _assert_trees_equal(s, _row(s_end, i), f"auto-reset final state (env {i})")
    _check_timestep(env, _row(tss, 0), batch, "auto-reset step")
    masks = np.asarray(tss.observation.mask)
    assert masks.any(axis=-1).all(), "an auto-reset observation has no valid action"
    _no_nan((tss.observation, tss.reward), "auto-reset scan")
    ended = np.asarray(tss.step_type) == LAST
    return {"episodes_ended": int(ended.sum()), "steps": num_steps * batch}
