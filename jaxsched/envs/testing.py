"""Checks every environment of the contract (:mod:`jaxsched.envs.core`) must pass; each
environment's tests call :func:`check_env_contract`.

The checks, on a small batch of episodes with random valid actions:

1. types: the reset and step timesteps have the documented dtypes and shapes (``mask`` bool
   ``[num_actions]``, ``step_type`` int8, ``reward``/``discount`` float32, ``terminated`` /
   ``truncated`` bool); FIRST after a reset; ``discount`` 0 exactly on termination; ``last()``
   = terminated or truncated;
2. compiled once: ``jit(vmap(reset))``, ``jit(vmap(reset_at))`` and ``jit(vmap(step))`` (the
   env an argument) are traced once however often they are called (a state after a step has
   the types of a state after a reset);
3. ``vmap`` equals a Python loop: each row of a batched reset and step equals that environment
   run alone, bit for bit — "alone" being the same compiled program on a batch of copies of
   that one environment, so rows that run different numbers of loop iterations in the mixed
   batch are compared with runs where every row does what they do (one program per function
   instead of two: the contract checks are a large share of the test suite's compile time);
4. the :class:`~jaxsched.envs.wrappers.AutoResetWrapper` ``lax.scan`` (vmapped): each row
   equals that environment's episodes run alone through the same scan (the same trick as in
   3: episodes that end at different steps in the mixed batch must not disturb each other's
   auto-reset), bit for bit;
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
    """Row ``i`` (an index or a tuple of slices/indices) of every leaf, as numpy (host-side
    indexing: an eager JAX op would compile a small program per shape)."""
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[i], tree)


def _stack(trees):
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *trees)


def _tile(tree, batch: int):
    """``batch`` copies of every leaf along a new leading axis (numpy)."""
    return jax.tree_util.tree_map(
        lambda x: np.broadcast_to(np.asarray(x), (batch,) + np.shape(x)), tree
    )


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

    v_reset = jax.jit(jax.vmap(reset, in_axes=(None, 0)))
    v_reset_at = jax.jit(jax.vmap(reset_at, in_axes=(None, 0, 0)))
    v_step = jax.jit(jax.vmap(step, in_axes=(None, 0, 0)))
    b_states, b_ts = _check_resets(env, v_reset, keys, batch)
    if starts is not None:
        _check_reset_at(env, v_reset_at, [int(s) for s in list(starts)[:batch]], keys[0], batch)
    _check_vmapped_steps(env, v_step, b_states, b_ts, k_act, batch)
    assert traces["step"] == 1, f"step traced {traces['step']} times (state types change?)"
    assert traces["reset"] == 1, f"reset traced {traces['reset']} times"
    assert traces["reset_at"] <= 1, f"reset_at traced {traces['reset_at']} times"
    return _check_auto_reset(env, b_states, b_ts, k_scan, batch, num_steps)


def _alone(fn, batch, *args):
    """Row 0 of ``fn`` on a batch of ``batch`` copies of one environment's arguments (the env
    itself, the first argument, is shared): the same compiled program as the mixed batch."""
    return _row(fn(args[0], *_tile(args[1:], batch)), 0)


def _check_resets(env, v_reset, keys, batch):
    """1, 3, 5, 6: batched resets: deterministic, typed, FIRST, a valid action, each row the
    environment reset alone. Returns the batch ``(states, timesteps)``."""
    b_states, b_ts = v_reset(env, keys)
    _assert_trees_equal((b_states, b_ts), v_reset(env, keys), "reset is not deterministic")
    _check_timestep(env, b_ts, batch, "vmap(reset)")
    for i in range(batch):
        alone = _alone(v_reset, batch, env, keys[i])
        _assert_trees_equal(_row((b_states, b_ts), i), alone, f"vmap(reset) row {i} != alone")
        ts = alone[1]
        assert int(ts.step_type) == FIRST, f"reset[{i}]: step_type {int(ts.step_type)}"
        assert np.asarray(ts.observation.mask).any(), f"reset[{i}]: no valid action"
    return b_states, b_ts


def _check_reset_at(env, v_reset_at, starts, key, batch):
    """1, 3, 5, 6 for ``reset_at``: deterministic, typed, each row = that start alone."""
    starts = (starts * batch)[:batch]
    s = jnp.asarray(starts, jnp.int32)
    ks = _tile(key, batch)
    at = v_reset_at(env, s, ks)
    _assert_trees_equal(at, v_reset_at(env, s, ks), "reset_at is not deterministic")
    _check_timestep(env, at[1], batch, "vmap(reset_at)")
    for i, st in enumerate(starts):
        alone = _alone(v_reset_at, batch, env, s[i], key)
        _assert_trees_equal(_row(at, i), alone, f"vmap(reset_at) row {i} != reset_at({st})")
        assert np.asarray(alone[1].observation.mask).any(), f"reset_at({st}): no valid action"


def _check_vmapped_steps(env, v_step, b_states, b_ts, k_act, batch):
    """3: two batched steps, each row == that environment stepped alone."""
    states, ts = b_states, b_ts
    for t in range(2):
        acts = jax.vmap(random_valid_action)(
            jax.random.split(jax.random.fold_in(k_act, t), batch), ts.observation.mask
        )
        loop = [_alone(v_step, batch, env, _row(states, i), _row(acts, i)) for i in range(batch)]
        states, ts = v_step(env, states, acts)
        _assert_trees_equal((states, ts), _stack(loop), f"vmap(step) != a loop of step ({t})")
        _check_timestep(env, ts, batch, f"step {t}")


def _check_auto_reset(env, b_states, b_ts, k_scan, batch, num_steps) -> dict:
    """4, 5: each row of the vmapped auto-reset ``lax.scan`` == that environment alone through
    the same compiled scan; every observation acted on has a valid action; no NaN."""
    wrapped = AutoResetWrapper(env)
    step_keys = jax.random.split(k_scan, num_steps * batch).reshape(num_steps, batch, -1)

    def rollout(e, s0, ts0, ks):
        def body(c, k):
            s, ts = c
            a = jax.vmap(random_valid_action)(k, ts.observation.mask)
            s, ts = jax.vmap(e.step)(s, a)
            return (s, ts), (a, ts)

        return jax.lax.scan(body, (s0, ts0), ks)

    run = jax.jit(rollout)
    (s_end, _), (acts, tss) = run(wrapped, b_states, b_ts, step_keys)
    ks = np.asarray(step_keys)
    for i in range(batch):
        tile = _tile((_row(b_states, i), _row(b_ts, i)), batch)
        (s_i, _), (a_i, ts_i) = run(wrapped, *tile, np.repeat(ks[:, i : i + 1], batch, axis=1))
        where = f"auto-reset scan, env {i} alone"
        _assert_trees_equal(_row(a_i, (slice(None), 0)), _row(acts, (slice(None), i)), where)
        _assert_trees_equal(_row(ts_i, (slice(None), 0)), _row(tss, (slice(None), i)), where)
        _assert_trees_equal(_row(s_i, 0), _row(s_end, i), f"{where}: final state")
    _check_timestep(env, _row(tss, 0), batch, "auto-reset step")
    masks = np.asarray(tss.observation.mask)
    assert masks.any(axis=-1).all(), "an auto-reset observation has no valid action"
    _no_nan((tss.observation, tss.reward), "auto-reset scan")
    ended = np.asarray(tss.step_type) == LAST
    return {"episodes_ended": int(ended.sum()), "steps": num_steps * batch}
