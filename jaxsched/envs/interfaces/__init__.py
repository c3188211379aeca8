"""Views of a jaxsched environment for RL libraries (thin adapters, no library imported here):

* :mod:`~jaxsched.envs.interfaces.gymnax_env`: gymnax's ``reset(key, params) -> (obs, state)`` and
  ``step(key, state, action, params) -> (obs, state, reward, done, info)`` with auto-reset,
  ``observation_space``/``action_space``, ``default_params`` (PureJaxRL, rejax, ...);
* :mod:`~jaxsched.envs.interfaces.planner`: a model for search (mctx): ``step`` without
  auto-reset, the mask and the discount as arrays.

The environments themselves are jumanji-style (:mod:`jaxsched.envs.core`).
"""
