"""jaxsched: HPC batch-job scheduling research in JAX.

Host-side workload tools live in :mod:`jaxsched.workload`; the device-side simulator in
:mod:`jaxsched.sim`; heuristic priority functions in :mod:`jaxsched.policies`.
"""

__version__ = "0.1.0"
