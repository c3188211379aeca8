"""jaxsched: HPC batch-job scheduling research in JAX.

Host-side workload tools live in :mod:`jaxsched.workload`; the device-side simulator in
:mod:`jaxsched.sim`; heuristic priority functions in :mod:`jaxsched.policies`.

``jaxsched.make(name, **overrides)`` / ``jaxsched.registered()``: the named environments
(:mod:`jaxsched.registry`); ``jaxsched.x64()``: JAX's 64-bit mode for a block
(:mod:`jaxsched.precision`; importing jaxsched leaves the process's mode as it is). These load
lazily: ``import jaxsched`` imports no JAX.
"""

__version__ = "0.1.0"

_LAZY = {
    "make": "jaxsched.registry",
    "registered": "jaxsched.registry",
    "x64": "jaxsched.precision",
    "X64Required": "jaxsched.precision",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'jaxsched' has no attribute {name!r}")
