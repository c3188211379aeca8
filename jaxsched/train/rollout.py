"""Rollouts over an auto-resetting environment, in lockstep with the valid-step mask.

Environment interface (jumanji-like; nothing here imports :mod:`jaxsched.envs`):

* ``env.reset(key) -> (env_state, timestep)`` and ``env.step(env_state, action) -> (env_state,
  timestep)`` for ONE environment (the rollout ``vmap``-s them); ``action`` is an int32 scalar.
* ``timestep.observation`` carries ``obs`` (float ``[N, F]``) and ``mask`` (bool ``[N]``, True =
  valid action; ``action_mask`` is accepted too).  Other fields (a critic observation, ...) are
  ignored unless ``obs_fn`` picks them.
* ``timestep.reward`` is the reward of the transition that produced the timestep;
  ``timestep.last()`` (or a ``done`` field, or else ``discount == 0``) marks the end of an
  episode.  ``done_fn`` overrides this.
* The environment resets itself when an episode ends (auto-reset): the timestep returned by the
  final step carries the final reward and ``last() == True`` while its observation may already
  belong to the next episode.  Episodes must terminate; a truncated episode is not bootstrapped.

Episode collection (how a fixed-size scan yields exactly ``num_envs * episodes_per_env``
complete episodes of variable length): :func:`make_collect` resets ``num_envs`` environments
with fresh keys and scans ``T = episodes_per_env * max_episode_steps`` steps of all of them in
lockstep.  Step ``t`` of environment ``e`` is *valid* when fewer than ``episodes_per_env``
episodes of that environment had ended before it (:func:`valid_step_mask`).  Steps after that
(the auto-reset has already started another episode) are computed but carry zero weight in
every loss, normalisation and statistic.  If an environment does not finish its episodes inside
the scan (``max_episode_steps`` set too small), the unfinished episode is dropped (its steps
become invalid) and counted as incomplete — the batch never contains a cut episode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import flax.struct
import jax
import jax.numpy as jnp

from jaxsched.train.parallel import local_rows

__all__ = [
    "NetInput",
    "Transition",
    "make_collect",
    "make_collect_seeds",
    "valid_step_mask",
    "episode_summaries",
    "default_obs_fn",
    "default_done_fn",
    "to_f32",
    "row_key",
    "row_act",
    "END_PREFIX",
]

#: the ``info`` keys (and ``episode_info_<key>`` metrics) read on the timestep that ENDS an
#: episode (``episode_end_fn``), where the others are read on its first decision
END_PREFIX = "end_"

_F32 = jnp.float32


class NetInput(NamedTuple):
    """What the default ``obs_fn`` keeps of an observation: float32 ``obs`` [N, F] and bool
    ``mask`` [N]."""

    obs: jax.Array
    mask: jax.Array


@flax.struct.dataclass
class Transition:
    """Rollout data, time-major ``[T, num_envs, ...]``.

    ``x``: the stored network input (``obs_fn`` of the observation the action was chosen on);
    ``mask`` bool: valid actions at that step; ``action`` int32; ``logp``/``value``/``entropy``
    float32: of the acting policy and value net at that step (None where the acting function
    does not give them); ``reward`` float32 / ``done`` bool: of the transition; ``valid`` bool:
    the step belongs to a collected (complete, accepted) episode; ``info``: dict of
    ``episode_info_fn`` values read at that step (empty without one)."""

    x: Any
    mask: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    entropy: jax.Array
    reward: jax.Array
    done: jax.Array
    valid: jax.Array
    info: Any = flax.struct.field(default_factory=dict)


def default_obs_fn(observation) -> NetInput:
    """``NetInput(obs float32, mask bool)`` from an observation with ``obs`` and ``mask`` (or
    ``action_mask``) fields."""
    mask = getattr(observation, "mask", None)
    if mask is None:
        mask = observation.action_mask
    return NetInput(jnp.asarray(observation.obs).astype(_F32), jnp.asarray(mask).astype(bool))


def default_done_fn(timestep):
    """End of episode: ``timestep.last()`` if it exists, else ``timestep.done``, else
    ``timestep.discount == 0``."""
    last = getattr(timestep, "last", None)
    if callable(last):
        return jnp.asarray(last()).astype(bool)
    done = getattr(timestep, "done", None)
    if done is not None:
        return jnp.asarray(done).astype(bool)
    return jnp.asarray(timestep.discount) == 0


def to_f32(tree):
    """Cast floating leaves to float32 (64-bit mode must not leak into params/observations)."""

    def cast(a):
        a = jnp.asarray(a)
        return a.astype(_F32) if jnp.issubdtype(a.dtype, jnp.floating) else a

    return jax.tree_util.tree_map(cast, tree)


def row_key(base, row, t):
    """The key of row ``row``'s decision ``t`` (int32 scalars): ``fold_in(fold_in(base, row), t)``."""
    return jax.random.fold_in(jax.random.fold_in(base, row), t)


def row_act(act: Callable, params, x, keys):
    """``act`` applied to each row of ``x`` alone, with its own key (``keys`` ``[K]``):
    ``(action int32 [K], fields dict of [K])``."""

    def one(xr, k):
        a, f = act(params, jax.tree_util.tree_map(lambda v: v[None], xr), k)
        return a[0], {n: v[0] for n, v in dict(f).items()}

    return jax.vmap(one)(x, keys)


def valid_step_mask(dones, episodes_per_env: int):
    """Which steps of a time-major ``[T, E]`` rollout belong to the first ``episodes_per_env``
    *complete* episodes of each environment.

    Returns ``(valid bool [T, E], completed int32 [E])``; ``completed`` is the number of
    collected episodes per environment (``episodes_per_env`` unless the scan was too short)."""
    d = jnp.asarray(dones).astype(jnp.int32)
    ended_before = jnp.cumsum(d, axis=0) - d
    completed = jnp.minimum(jnp.sum(d, axis=0), episodes_per_env).astype(jnp.int32)
    return ended_before < completed[None], completed


def episode_summaries(tr: Transition, episodes_per_env: int) -> dict:
    """Per-episode values of a rollout, one entry per episode slot.

    Slot ``e * episodes_per_env + j`` is the ``j``-th episode of environment ``e``.  Returns
    ``episode_info_valid`` (bool: the slot holds a collected episode — complete and accepted by
    the filter), ``episode_info_return`` (float32, sum of its rewards),
    ``episode_info_length`` (int32, its steps) and ``episode_info_<key>`` for every key of
    ``tr.info`` (the value at the episode's first step; for a key starting with
    :data:`END_PREFIX`, at its last step, the one whose transition ended it), each
    ``[E * episodes_per_env, ...]``. Entries of invalid slots are meaningless."""
    done = tr.done.astype(jnp.int32)
    ended_before = jnp.cumsum(done, axis=0) - done  # [T, E]
    j = jnp.arange(episodes_per_env, dtype=ended_before.dtype)
    in_ep = ended_before[None] == j[:, None, None]  # [k, T, E]
    first = jnp.argmax(in_ep, axis=1)  # [k, E]
    started = jnp.any(in_ep, axis=1)
    take = lambda a: jnp.take_along_axis(
        a, first.reshape(first.shape + (1,) * (a.ndim - 2)), axis=0
    )  # [k, E, ...]
    valid = started & take(tr.valid)
    steps = in_ep & tr.valid[None]
    out = {
        "episode_info_valid": valid,
        "episode_info_return": jnp.sum(jnp.where(steps, tr.reward[None], 0.0), axis=1),
        "episode_info_length": jnp.sum(steps, axis=1).astype(jnp.int32),
    }
    if any(name.startswith(END_PREFIX) for name in tr.info):
        last = jnp.argmax(in_ep & tr.done.astype(bool)[None], axis=1)  # [k, E]
        take_last = lambda a: jnp.take_along_axis(
            a, last.reshape(last.shape + (1,) * (a.ndim - 2)), axis=0
        )  # noqa: E731
    for name, a in tr.info.items():
        pick = take_last if name.startswith(END_PREFIX) else take
        out[f"episode_info_{name}"] = pick(jnp.asarray(a))
    # [k, E, ...] -> [E * k, ...], environment-major
    return {k: jnp.reshape(jnp.swapaxes(v, 0, 1), (-1,) + v.shape[2:]) for k, v in out.items()}


def make_collect(
    env,
    act: Callable,
    *,
    num_envs: int,
    episodes_per_env: int,
    rollout_steps: int,
    obs_fn: Callable = default_obs_fn,
    done_fn: Callable = default_done_fn,
    accept_fn: Callable | None = None,
    episode_info_fn: Callable | None = None,
    data_axis: str | None = None,
    row_keys: bool = False,
    episode_end_fn: Callable | None = None,
) -> Callable:
    """The rollout of one update, ``collect(params, key, step) -> (Transition, completed)``.

    Args:
        env: one auto-resetting environment (module docstring); reset and stepped under
            ``vmap`` over ``num_envs`` copies.
        act: ``act(params, x, key) -> (action int32 [E], fields)`` for the batched network
            input ``x`` (``obs_fn`` of the observations, float leaves float32, leading axis E);
            ``fields`` is a dict with any of ``logp``, ``value``, ``entropy`` (float32 ``[E]``),
            stored in the :class:`Transition` (None where absent).
        num_envs, episodes_per_env, rollout_steps: ``E``, episodes kept per environment and the
            scan length ``T`` (``episodes_per_env * max_episode_steps``).
        obs_fn, done_fn: observation -> stored input; timestep -> bool end of episode.
        accept_fn: optional ``(timesteps, step) -> bool [E]``, whether the episode each
            environment is in is trained on (a trajectory filter); read on the timestep an
            action is chosen on; rejected episodes carry no weight.
        episode_info_fn: optional ``timestep -> dict`` of per-episode values (see
            :func:`episode_summaries`), read on the timestep an action is chosen on.
        episode_end_fn: optional ``timestep -> dict`` of per-episode values read on the
            timestep a step returns (for an episode's last step, the ending transition's:
            e.g. whether a capacity overflowed), stored under ``END_PREFIX + key``.

    ``collect`` returns the time-major :class:`Transition` ``[T, E, ...]`` and ``completed``
    (int32 ``[E]``, episodes collected per environment).  ``step`` (int32, the update index) is
    passed to ``accept_fn``.  The keys: one split of ``key`` into ``E + T`` keys (``E`` resets,
    then one per step; each threefry call site costs compile time).

    ``data_axis``: under ``shard_map`` over a mesh axis of this name (data-parallel
    training, :mod:`jaxsched.train.parallel`), each device resets and steps its block of
    ``num_envs / D`` environments with those environments' keys (``act`` must then sample the
    device's rows of the whole batch's draw, as :func:`jaxsched.train.parallel.
    gumbel_argmax_rows` does); the outputs are the device's block ``[T, E / D, ...]``.

    ``row_keys``: the action of environment ``e`` at step ``t`` is drawn by ``act`` applied to
    that row alone with the key :func:`row_key` ``(base, e, t)``,
    ``base = keys[E]`` (the schedule of the asynchronous rollout,
    :func:`jaxsched.train.async_rollout.make_collect_async`, which gives the same transitions).
    """
    E, T = num_envs, rollout_steps
    if row_keys and data_axis is not None:
        raise ValueError("row_keys is not available with data_axis")

    def collect(params, key, step):
        keys = jax.random.split(key, E + T)
        env_keys = keys[:E] if data_axis is None else local_rows(keys[:E], data_axis)
        env_state, ts = jax.vmap(env.reset)(env_keys)

        def body(carry, k):
            env_state, ts = carry
            x = to_f32(obs_fn(ts.observation))
            if row_keys:
                ks = jax.vmap(lambda e: row_key(keys[E], e, k))(jnp.arange(E, dtype=jnp.int32))
                action, fields = row_act(act, params, x, ks)
            else:
                action, fields = act(params, x, k)
            if accept_fn is not None:
                accept = accept_fn(ts, step)
            else:
                accept = jnp.ones(action.shape, bool)
            info = {} if episode_info_fn is None else dict(jax.vmap(episode_info_fn)(ts))
            env_state, ts_next = jax.vmap(env.step)(env_state, action)
            info = _with_end_info(info, episode_end_fn, ts_next)
            out = dict(
                x=x,
                action=action,
                fields=dict(fields),
                reward=jnp.asarray(ts_next.reward).astype(_F32),
                done=jax.vmap(done_fn)(ts_next),
                accept=accept,
                info=info,
            )
            return (env_state, ts_next), out

        xs = jnp.arange(T, dtype=jnp.int32) if row_keys else keys[E:]
        _, traj = jax.lax.scan(body, (env_state, ts), xs)
        return transitions_of(traj, traj["reward"], traj["done"], episodes_per_env)

    return collect


def _with_end_info(info: dict, episode_end_fn, ts_next) -> dict:
    if episode_end_fn is None:
        return info
    end = dict(jax.vmap(episode_end_fn)(ts_next))
    return {**info, **{END_PREFIX + k: v for k, v in end.items()}}


def transitions_of(record: dict, reward, done, episodes_per_env: int):
    """``(Transition, completed [E])`` of a collected record ``[T, E, ...]`` (``x``,
    ``action``, ``fields`` with logp/value/entropy, ``accept``, ``info``) with its ``reward``
    and ``done`` ``[T, E]``: the synchronous and the asynchronous rollouts end here alike."""
    valid, completed = valid_step_mask(done, episodes_per_env)
    f = record["fields"]
    tr = Transition(
        x=record["x"],
        mask=record["x"].mask,
        action=record["action"],
        logp=f.get("logp"),
        value=f.get("value"),
        entropy=f.get("entropy"),
        reward=reward,
        done=done,
        valid=valid & record["accept"],
        info=record["info"],
    )
    return tr, completed


def make_collect_seeds(
    env,
    act: Callable,
    *,
    num_envs: int,
    episodes_per_env: int,
    rollout_steps: int,
    obs_fn: Callable = default_obs_fn,
    done_fn: Callable = default_done_fn,
    accept_fn: Callable | None = None,
    episode_info_fn: Callable | None = None,
    episode_end_fn: Callable | None = None,
) -> Callable:
    """:func:`make_collect` for ``S`` independent runs at once (a sweep over seeds):
    ``collect(params [S], key [S], step [S]) -> (Transition [S, T, E, ...], completed [S, E])``
    where run ``s`` gets exactly what ``make_collect(...)(params[s], key[s], step[s])`` gives
    (the same keys, actions and episodes, up to float rounding of the networks).

    The ``S * E`` environments are reset and stepped as ONE flat batch (``vmap`` over
    ``S * E``), while ``act``, ``accept_fn`` and the masks are vmapped over the runs: an
    environment whose step has its own batching rule (``jax.custom_batching``, e.g. the
    simulator's sparse conditionals) keeps it, where a ``vmap`` of :func:`make_collect` over
    the runs would turn its branches into selects of every branch."""
    E, T = num_envs, rollout_steps

    def collect(params, key, step):
        S = jax.tree_util.tree_leaves(key)[0].shape[0]
        flat = lambda a: jnp.reshape(a, (S * E,) + a.shape[2:])  # noqa: E731
        runs = lambda a: jnp.reshape(a, (S, E) + a.shape[1:])  # noqa: E731
        keys = jax.vmap(lambda k: jax.random.split(k, E + T))(key)  # [S, E + T]
        env_state, ts = jax.vmap(env.reset)(flat(keys[:, :E]))

        def body(carry, k):  # k: [S] keys of this step
            env_state, ts = carry
            x = to_f32(obs_fn(ts.observation))  # [S * E, ...]
            xs = jax.tree_util.tree_map(runs, x)
            action, fields = jax.vmap(act)(params, xs, k)  # [S, E]
            if accept_fn is not None:
                accept = jax.vmap(accept_fn)(jax.tree_util.tree_map(runs, ts), step)
            else:
                accept = jnp.ones((S, E), bool)
            info = {} if episode_info_fn is None else dict(jax.vmap(episode_info_fn)(ts))
            env_state, ts_next = jax.vmap(env.step)(env_state, flat(action))
            info = _with_end_info(info, episode_end_fn, ts_next)
            out = dict(
                x=xs,
                action=action,
                fields=dict(fields),
                reward=runs(jnp.asarray(ts_next.reward).astype(_F32)),
                done=runs(jax.vmap(done_fn)(ts_next)),
                accept=accept,
                info=jax.tree_util.tree_map(runs, info),
            )
            return (env_state, ts_next), out

        _, traj = jax.lax.scan(body, (env_state, ts), jnp.swapaxes(keys[:, E:], 0, 1))
        traj = jax.tree_util.tree_map(lambda a: jnp.swapaxes(a, 0, 1), traj)  # [S, T, E, ...]
        per_run = jax.vmap(transitions_of, in_axes=(0, 0, 0, None))
        return per_run(traj, traj["reward"], traj["done"], episodes_per_env)

    return collect
