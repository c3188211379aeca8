"""Device-side simulator (pure JAX).

Rooms:

* ``types.py``: the state pytrees and constants (``Sequence``, ``SimParams``, ``SimState``,
  ``NoBackfillState``, backfill codes);
* ``primitives.py``: building blocks (index reductions, reservation, running-list
  insert/drop, queue write, one event, :func:`~jaxsched.sim.primitives.advance_until`, the
  batched run loop);
* ``engine.py``: the micro-step and the engine API (``reset``, ``micro_step``,
  ``run_heuristic``, ``advance_to_decision``, ``schedule``), re-exporting the names above;
* ``nobf.py``: the no-backfilling fast paths (``run_static_nobf*``, ``schedule_nobf``);
* ``batching.py``: batching rules (``sparse_cond``, the staged ``schedule_engine``);
* ``metrics.py``: schedule metrics; ``evaluate.py``: the batched evaluation driver;
* ``oracle.py``: the plain-Python oracle the tests check the engine against.
* ``cqsim/``: the CQSim engine mode (``compat="cqsim"``, DRAS): its state, availability
  profile, micro-step with the DRAS loop, host driver.

The engine computes with JAX's 64-bit mode on: the reference's priority keys and times need
float64/int64 (spec §4). Importing this package leaves the mode as the process set it
(:mod:`jaxsched.precision`): the environments and the ``jaxsched`` command enter it around their
own work, and the engine's resets raise :class:`jaxsched.precision.X64Required` when traced
with it off. Networks pick float32 explicitly.
"""
