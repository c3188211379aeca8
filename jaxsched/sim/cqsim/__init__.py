"""The CQSim engine mode (``compat="cqsim"``, spec dras.md §2): types, availability profile,
the micro-step with the DRAS loop, and the host driver.

* :mod:`~jaxsched.sim.cqsim.types`: ``CQParams``, ``CQState``, the mode/phase/class codes;
* :mod:`~jaxsched.sim.cqsim.profile`: the availability profile (build, reserve, place, fits);
* :mod:`~jaxsched.sim.cqsim.engine`: ``reset``, ``micro_step``, ``at_decision``, ``window``,
  ``decide``, ``advance_to_decision``, ``run_fixed``;
* :mod:`~jaxsched.sim.cqsim.run`: the host driver (``simulate_cqsim``: capacities grown on
  overflow, batches of slices and modes) and the reference metrics.
"""
