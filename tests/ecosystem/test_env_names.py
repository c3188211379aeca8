"""jaxsched.make / jaxsched.registered (jaxsched/registry.py) and the environments' specs.

The suite builds one tiny environment ("rlscheduler:PATH" on tests/tiny_traces.py's 80-job
trace) and checks its specs against a traced reset (nothing compiled); the extended tier
builds every registered name on the bundled trace at the smallest sizes and steps each once.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tiny_traces import schedinspector_tiny

import jaxsched
from jaxsched.envs import specs
from jaxsched.errors import ConfigError

#: the smallest settings of each system (the sizes tests/envs/ uses)
SMALL = {
    "rlscheduler": dict(length=24, max_queue=8),
    "schedinspector": dict(length=16),
    "splitwindow": dict(head=2, tail=2, placements=6, queue_cap=64),
    "a2cscheduler": dict(
        num_slots=3, horizon=10, res_slot=6, max_job_len=6, backlog_size=4, simu_len=12, step_cap=60
    ),  # fmt: skip
    "dras": dict(length=16),
    "dras-dql": dict(length=16),
}


def test_registered_names_cover_the_five_systems():
    names = jaxsched.registered()
    systems = {n.split("/")[0] for n in names}
    assert {"rlscheduler", "schedinspector", "splitwindow", "a2cscheduler", "dras"} <= systems
    assert "rlscheduler/lublin-1-bf" in names


def test_make_a_path_with_overrides_and_its_specs(tmp_path):
    trace = schedinspector_tiny(tmp_path / "tiny.swf")
    env = jaxsched.make(f"rlscheduler:{trace}", length=8, max_queue=4, backfill="rlscheduler")
    assert env.length == 8 and env.max_queue == 4
    same = jaxsched.make("rlscheduler/lublin-1-bf", trace=trace, length=8, max_queue=4)
    assert jax.tree_util.tree_structure(same) == jax.tree_util.tree_structure(env)
    obs_spec, act = env.observation_spec(), env.action_spec()
    assert isinstance(act, specs.DiscreteArray) and act.num_values == 4
    assert isinstance(obs_spec.mask, specs.BoolArray) and obs_spec.mask.shape == (4,)
    assert obs_spec.obs.shape == env.obs_shape and obs_spec.obs.dtype == np.float32
    obs = jax.eval_shape(env.reset, jax.random.PRNGKey(0))[1].observation
    obs_spec.obs.validate(obs.obs)
    with pytest.raises(ValueError):
        obs_spec.mask.validate(obs.obs)
    with pytest.raises(ConfigError, match="unknown setting"):
        jaxsched.make(f"rlscheduler:{trace}", lenght=8)
    with pytest.raises(ConfigError, match="registered"):
        jaxsched.make("nope/lublin-1")


@pytest.mark.extended  # every system on the bundled trace (9 names, 7 s cold); test_make_a_path_with_overrides_and_its_specs builds one
@pytest.mark.parametrize("name", jaxsched.registered())
def test_every_registered_name_builds_and_steps(name):
    env = jaxsched.make(name, **SMALL[name.split("/")[0]])
    state, ts = jax.jit(env.reset)(jax.random.PRNGKey(0))
    spec = env.observation_spec()
    jax.tree_util.tree_map(lambda s, x: s.validate(x), spec, ts.observation)
    a = jnp.argmax(ts.observation.mask).astype(jnp.int32)
    state, ts = jax.jit(env.step)(state, a)
    assert ts.reward.dtype == jnp.float32 and env.action_spec().num_values == env.num_actions
