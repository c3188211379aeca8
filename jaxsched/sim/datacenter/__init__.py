"""The discrete-time data-centre cluster of A2cScheduler / DeepRM (spec §2; a room of its own,
independent of the event engine; pure JAX, jit/vmap-able).

* :mod:`~jaxsched.sim.datacenter.types`: :class:`DCParams` (static), :class:`DCState`,
  :func:`deeprm_params` (the reference's compatibility mode);
* :mod:`~jaxsched.sim.datacenter.cluster`: ``reset``, ``step`` (allocate / advance);
* :mod:`~jaxsched.sim.datacenter.generator`: DeepRM's bimodal jobsets drawn on the device;
* :mod:`~jaxsched.sim.datacenter.baselines`: the greedy baselines, metrics, batched rollouts;
* :mod:`~jaxsched.sim.datacenter.image`: the image state of spec §3.

The host-side, bit-exact twin of the reference's numpy generator is
:mod:`jaxsched.workload.deeprm`.
"""

from jaxsched.sim.datacenter.types import (
    END_NAMES,
    DCParams,
    DCState,
    deeprm_params,
)

__all__ = ["DCParams", "DCState", "END_NAMES", "deeprm_params"]
