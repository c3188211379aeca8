"""DeepRM's bimodal jobset generator on the device (spec §2.2; ``vmap`` over keys for many).

Same distribution as :mod:`jaxsched.workload.deeprm` (which is bit-exact with the reference's
numpy stream) but drawn with JAX's PRNG: each entry holds a job with probability ``rate``;
a job is small (length uniform in ``[1, L // 5]``) with probability 0.8, else big (length
uniform in ``[L * 2 // 3, L]``); one resource, uniform, is dominant (demand uniform in
``[S // 2, S]``), the others take ``[1, S // 5]`` (``S`` the maximum job size).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxsched.sim.datacenter.types import DCParams

__all__ = ["sample_jobset"]


def sample_jobset(p: DCParams, key, rate, small_chance: float = 0.8):
    """One jobset: ``(lens int32 [S], dems int32 [S, d])`` (length 0 = no job).

    ``rate`` is a float (scalar, traced or not); ``S`` = ``p.simu_len``."""
    S, d, L, M = p.simu_len, p.num_res, p.max_job_len, p.max_job_size
    # one flat draw, reshaped: XLA:CPU compiles threefry on 2-D shapes with a short last axis
    # many times slower
    u = jax.random.uniform(key, (S * (4 + d),), jnp.float32).reshape(S, 4 + d)

    def uint(col, lo, hi):  # uniform integers in [lo, hi]
        return lo + jnp.minimum(jnp.floor(col * (hi - lo + 1)), hi - lo).astype(jnp.int32)

    comes = u[:, 0] < rate
    small = u[:, 1] < small_chance
    short = uint(u[:, 2], 1, max(L // 5, 1))
    long = uint(u[:, 2], L * 2 // 3, L)
    lens = jnp.where(comes, jnp.where(small, short, long), 0).astype(jnp.int32)
    dom = uint(u[:, 3], 0, d - 1)
    big = uint(u[:, 4:], M // 2, M)
    other = uint(u[:, 4:], 1, max(M // 5, 1))
    is_dom = jnp.arange(d, dtype=jnp.int32)[None, :] == dom[:, None]
    dems = jnp.where(is_dom, big, other) * comes[:, None]
    return lens, dems.astype(jnp.int32)
