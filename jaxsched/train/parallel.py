"""Data-parallel training over the devices of one or several hosts (``shard_map`` over a 1-D
device mesh); nothing here knows an environment.

How an update runs on ``D`` devices (:func:`data_parallel`): the train state is replicated;
each device rolls out its ``num_envs / D`` environments (the same environments, keys and
sampled actions as those rows of the one-device rollout: :func:`local_rows`,
:func:`gumbel_argmax_rows`), and every quantity of the update that is a sum or mean over the
batch — the advantage normalisation, the loss totals and gradients, the approx-KL of the early
stop, the logged statistics — is summed over the devices with ``psum`` (per-episode summaries
are gathered with ``all_gather``).  Every device therefore takes the same optimiser steps and
holds the same parameters; the result equals the one-device update up to the order in which
float sums are added (not bit-equal). ``D = 1`` never goes through here: the trainer is built
without a data axis and runs exactly the one-device program.

The trainer opts in with ``make_train(..., data_axis=DATA_AXIS)``; the functions below that
take ``axis_name`` do nothing when it is None.

Several hosts (:func:`initialize_distributed`): ``jax.distributed.initialize()`` (which reads
SLURM's and Open MPI's environment) before anything else uses JAX; then ``jax.devices()`` are
all hosts' devices, the mesh spans them, and only process 0 writes files
(:func:`is_main_process`).
"""

from __future__ import annotations

import dataclasses
import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jaxsched.errors import ConfigError
from jaxsched.host_devices import HOST_DEVICES_FLAG, split_host

__all__ = [
    "DATA_AXIS",
    "DEVICES_ENV",
    "parse_devices",
    "resolve_devices",
    "expose_host_devices",
    "psum",
    "masked_mean",
    "batch_mean",
    "local_minibatch",
    "local_rows",
    "gather_rows",
    "gumbel_argmax_rows",
    "check_divisible",
    "data_parallel",
    "distributed_requested",
    "initialize_distributed",
    "is_main_process",
]

#: the mesh axis the batch of environments is split over
DATA_AXIS = "data"
#: environment variable read when ``--devices`` is not given
DEVICES_ENV = "JAXSCHED_DEVICES"

_F32 = jnp.float32


# ----------------------------------------------------------------------------------------------
# collectives that are the identity without an axis
# ----------------------------------------------------------------------------------------------
def psum(tree, axis_name: str | None):
    """``lax.psum`` of every leaf over ``axis_name`` (``tree`` itself when None)."""
    return tree if axis_name is None else jax.lax.psum(tree, axis_name)


def masked_mean(x, w, axis_name: str | None = None):
    """Mean of ``x`` where the bool ``w`` is True, over the whole data axis (float32 scalar; 0
    when nothing is weighted): the sum and the count are summed over the devices."""
    w = jnp.asarray(w)
    n = jnp.maximum(psum(jnp.sum(w.astype(_F32)), axis_name), 1.0)
    return psum(jnp.sum(jnp.where(w, x, 0.0)), axis_name) / n


def batch_mean(axis_name: str | None, one_device):
    """The masked mean ``(x, w) -> float32`` of a trainer: ``one_device`` itself without an
    axis (the one-device program unchanged), else :func:`masked_mean` over the axis."""
    if axis_name is None:
        return one_device
    return lambda x, w: masked_mean(x, w, axis_name)


def local_minibatch(cfg, axis_name: str | None):
    """A trainer config (dataclass with ``minibatch_size``) with this device's share of the
    minibatch, ``minibatch_size / D`` (``cfg`` itself without an axis)."""
    if axis_name is None:
        return cfg
    mb = cfg.minibatch_size // jax.lax.axis_size(axis_name)
    return dataclasses.replace(cfg, minibatch_size=mb)


def local_rows(a, axis_name: str | None):
    """This device's block of the leading axis of ``a`` (``[D * B, ...] -> [B, ...]``, device
    ``i`` gets rows ``i*B .. i*B+B-1``); ``a`` when ``axis_name`` is None."""
    if axis_name is None:
        return a
    d = jax.lax.axis_size(axis_name)
    b = a.shape[0] // d
    return jax.lax.dynamic_slice_in_dim(a, jax.lax.axis_index(axis_name) * b, b, axis=0)


def gather_rows(tree, axis_name: str | None):
    """The inverse of :func:`local_rows` on every leaf: the devices' blocks concatenated in
    device order (``[B, ...] -> [D * B, ...]``, the same on every device)."""
    if axis_name is None:
        return tree
    return jax.tree_util.tree_map(
        lambda a: jax.lax.all_gather(a, axis_name, axis=0, tiled=True), tree
    )


def gumbel_argmax_rows(key, masked_logits, axis_name: str | None):
    """:func:`jaxsched.nets.categorical.gumbel_argmax` of this device's rows (float32 ``[B,
    N]`` -> int32 ``[B]``) with the noise those rows get in the one-device draw of all ``D *
    B`` rows from ``key`` (the draw is cut, not re-keyed: the same actions as one device)."""
    from jaxsched.nets.categorical import gumbel_argmax

    if axis_name is None:
        return gumbel_argmax(key, masked_logits)
    z = masked_logits
    d = jax.lax.axis_size(axis_name)
    u = jax.random.uniform(key, (d * z.size,), _F32, minval=jnp.finfo(_F32).tiny, maxval=1.0)
    u = jax.lax.dynamic_slice_in_dim(u, jax.lax.axis_index(axis_name) * z.size, z.size)
    gumbel = -jnp.log(-jnp.log(jnp.reshape(u, z.shape)))
    return jnp.argmax(z + gumbel, axis=-1).astype(jnp.int32)


# ----------------------------------------------------------------------------------------------
# the device count and the sharded trainer
# ----------------------------------------------------------------------------------------------
def parse_devices(text) -> int | None:
    """``"all"`` -> None (every device), ``"N"`` (N >= 1) -> N; ConfigError otherwise."""
    t = str(text).strip().lower()
    if t == "all":
        return None
    try:
        n = int(t)
    except ValueError:
        n = 0
    if n < 1:
        raise ConfigError(f"--devices: expected 'all' or an integer >= 1, got {text!r}")
    return n


def resolve_devices(requested=None) -> int:
    """The number of devices to train on: ``requested`` (``"all"``, an int or a string; None:
    the environment variable ``JAXSCHED_DEVICES``, else 1), checked against ``jax.devices()``
    (all hosts' devices after :func:`initialize_distributed`)."""
    if requested is None:
        requested = os.environ.get(DEVICES_ENV, "").strip() or 1
    n = parse_devices(requested)
    have = jax.device_count()
    if n is None:
        return have
    if jax.process_count() > 1 and n != have:
        raise ConfigError(
            f"--devices {n}: a run on {jax.process_count()} processes trains on all "
            f"{have} devices (--devices all)"
        )
    if n > have:
        raise ConfigError(
            f"--devices {n}: only {have} device(s) visible (on CPU, expose more with "
            f"XLA_FLAGS={HOST_DEVICES_FLAG}={n} before JAX starts)"
        )
    return n


def expose_host_devices(requested=None, environ=None) -> int | None:
    """Let XLA:CPU show ``requested`` devices (an int or a string; None: the environment
    variable ``JAXSCHED_DEVICES``), so that ``--devices N`` works on a CPU-only machine without
    setting ``XLA_FLAGS`` by hand (:func:`jaxsched.host_devices.split_host`: one device per
    core asked for; rollouts with backfilling 2.3x faster on two cores,
    ``benchmarks/speed/env_throughput.py --devices 1,2``). ``"all"`` and 1 set nothing (every
    visible device is all). Call it before JAX uses a device; later it changes nothing and
    :func:`resolve_devices` reports the missing devices. Returns the count set, or None."""
    env = os.environ if environ is None else environ
    if requested is None:
        requested = env.get(DEVICES_ENV, "").strip() or "1"
    n = parse_devices(requested)
    return None if n is None else split_host(n, env)


def check_divisible(cfg, n_devices: int) -> None:
    """ConfigError unless the PPO config ``cfg``'s ``num_envs`` (trajectories per epoch) and
    ``minibatch_size`` split evenly over ``n_devices``."""
    if cfg.num_envs % n_devices:
        raise ConfigError(
            f"--devices {n_devices}: the {cfg.num_envs} trajectories per epoch "
            f"(--trajectories) must be divisible by the number of devices"
        )
    if cfg.minibatch_size % n_devices:
        raise ConfigError(
            f"--devices {n_devices}: minibatch_size {cfg.minibatch_size} must be divisible "
            f"by the number of devices"
        )


def data_parallel(trainer, n_devices: int, *, axis_name: str = DATA_AXIS):
    """The trainer's ``update`` and ``train`` run data-parallel on the first ``n_devices`` of
    ``jax.devices()`` (one mesh axis ``axis_name``).

    ``trainer`` must come from ``make_train(..., data_axis=axis_name)`` and have ``num_envs``
    divisible by ``n_devices`` (ConfigError otherwise). Returns a copy of it whose ``update(ts)``
    / ``train(ts, n)`` take and return a replicated train state (placed on the mesh here);
    ``collect``, the loss functions and ``sweep_update`` are dropped (set to None), as they
    are only defined under the axis. ``init`` is unchanged (no collectives)."""
    check_divisible(trainer.config, n_devices)
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:n_devices]), (axis_name,))
    rep = NamedSharding(mesh, P())

    def sharded(fn):
        return jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=P(), out_specs=P(), check_vma=False))

    upd = sharded(trainer.update)

    @functools.cache
    def trn(num_updates: int):
        return sharded(lambda ts: trainer.train(ts, num_updates))

    def on_mesh(ts):
        # numpy in: on several hosts each process puts its copy on its own devices
        if all(getattr(a, "sharding", None) == rep for a in jax.tree_util.tree_leaves(ts)):
            return ts
        return jax.device_put(jax.device_get(ts), rep)

    def update(ts):
        return upd(on_mesh(ts))

    def train(ts, num_updates: int):
        return trn(int(num_updates))(on_mesh(ts))

    return dataclasses.replace(
        trainer,
        update=update,
        train=train,
        collect=None,
        policy_loss_and_grad=None,
        value_loss_and_grad=None,
        sweep_update=None,
    )


# ----------------------------------------------------------------------------------------------
# several hosts
# ----------------------------------------------------------------------------------------------
#: environment variables that mark a process started by a cluster launcher
_LAUNCHER_VARS = ("SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE")


def distributed_requested(flag: bool = False, environ=None) -> bool:
    """Whether to call :func:`initialize_distributed`: ``flag`` (``--distributed``), or a
    launcher started several processes (``SLURM_NTASKS`` or ``OMPI_COMM_WORLD_SIZE`` > 1)."""
    env = os.environ if environ is None else environ
    if flag:
        return True
    for var in _LAUNCHER_VARS:
        try:
            if int(env.get(var, "1")) > 1:
                return True
        except ValueError:
            pass
    return False


def initialize_distributed(**kwargs) -> None:
    """``jax.distributed.initialize(**kwargs)``: without arguments JAX takes the coordinator,
    the number of processes and this process's id from SLURM's or Open MPI's environment (or
    pass them, e.g. ``coordinator_address="host:port", num_processes=2, process_id=0``). Must
    run before anything else uses JAX. One-line ConfigError if it fails."""
    try:
        jax.distributed.initialize(**kwargs)
    except (RuntimeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"--distributed: jax.distributed.initialize failed: {first}") from None


def is_main_process() -> bool:
    """True on process 0 (the only one that writes the run directory and the log)."""
    return jax.process_index() == 0
