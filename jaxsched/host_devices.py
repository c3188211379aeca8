"""One JAX device per CPU core: XLA:CPU runs a device's program largely on one thread, so a
batch split over several host devices (``shard_map``) keeps every core busy. The split is XLA's
flag ``--xla_force_host_platform_device_count=N`` in ``XLA_FLAGS``, read once, when JAX first
uses a device; :func:`split_host` sets it before that. Accelerators are unaffected (the flag
only adds host devices). Used by the evaluation driver (``jaxsched.sim.evaluate.
use_all_cpu_cores``) and by the training commands' ``--devices N``
(``jaxsched.train.parallel.expose_host_devices``)."""

from __future__ import annotations

import os

__all__ = ["HOST_DEVICES_FLAG", "split_host"]

#: XLA's flag that splits the host CPU into several devices
HOST_DEVICES_FLAG = "--xla_force_host_platform_device_count"


def split_host(n: int, environ=None) -> int | None:
    """Add ``HOST_DEVICES_FLAG=n`` to ``XLA_FLAGS`` in ``environ`` (default ``os.environ``)
    unless ``n`` <= 1 or the flags name a count already. Returns ``n`` if it set the flag, else
    None. Without effect once JAX has used a device."""
    env = os.environ if environ is None else environ
    flags = env.get("XLA_FLAGS", "")
    if n <= 1 or HOST_DEVICES_FLAG in flags:
        return None
    env["XLA_FLAGS"] = f"{flags} {HOST_DEVICES_FLAG}={int(n)}".strip()
    return int(n)
