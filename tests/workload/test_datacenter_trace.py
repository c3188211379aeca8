"""Real-trace jobsets for the data-centre cluster (jaxsched.workload.datacenter_trace): a
hand-computed tiny trace, and the environment drawing from and evaluating on its slices."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.errors import ConfigError
from jaxsched.workload.datacenter_trace import trace_slices
from jaxsched.workload.swf import read_swf

#: (submit, run, procs, used memory per processor, requested memory per processor); job 3 has
#: no run time (not usable)
JOBS = [
    (0, 25, 10, 500, -1),
    (5, 100, 55, 1000, -1),
    (8, 0, 4, 100, -1),
    (30, 1, 100, -1, 800),
    (100, 10, 1, 100, -1),
    (200, 10, 20, 2000, -1),
    (245, 11, 1, 1, -1),
]


def _trace(tmp_path):
    lines = ["; MaxProcs: 100"]
    for i, (sub, run, p, used, req) in enumerate(JOBS, 1):
        f = [i, sub, 0, run, p, -1, used, p, run, req, 1, 1, 1, 1, 1, 1, -1, -1]
        lines.append(" ".join(str(x) for x in f))
    path = tmp_path / "tiny.swf"
    path.write_text("\n".join(lines) + "\n")
    return read_swf(path)


def test_slices_by_hand(tmp_path):
    """Usable jobs 1, 2, 4, 5, 6, 7 in slices of 2, 10 s per step, R = 10, L = 5, 6 steps:
    * slice (1, 2): job 1 at step 0, length ceil(25/10) = 3, CPU ceil(10·10/100) = 1, memory
      ceil(10·10·500/(100·1000)) = 1; job 2 wants step 0 too, moved to 1 (delayed), length
      10 cut to 5 (capped), CPU ceil(5.5) = 6, memory ceil(10·55·1000/1e5) = 6;
    * slice (4, 5): job 5 arrives at step 7, beyond 6 steps: dropped;
    * slice (6, 7): job 6 at step 0, length 1, CPU 2, memory ceil(10·20·2000/1e5) = 4; job 7
      at step floor(45/10) = 4, length 2, CPU 1, memory 1."""
    s = trace_slices(_trace(tmp_path), jobs=2, unit=10, max_len=5, steps=6, mem_per_proc=1000)
    assert (s.num_slices, s.steps, s.capped, s.delayed, s.delay_steps, s.dropped) == (
        2,
        6,
        1,
        1,
        1,
        1,
    )
    np.testing.assert_array_equal(s.lens, [[3, 5, 0, 0, 0, 0], [1, 0, 0, 0, 2, 0]])
    np.testing.assert_array_equal(s.dems[0, :2], [[1, 1], [6, 6]])
    np.testing.assert_array_equal(s.dems[1, [0, 4]], [[2, 4], [1, 1]])
    assert not np.any(s.dems[s.lens == 0])
    np.testing.assert_array_equal(s.first_line, [2, 7])  # SWF lines (line 1 is the header)
    assert s.summary() == (
        "2 slices of 2 jobs in 6 steps (1 longer slices dropped); 1 of 4 jobs cut to the length "
        "bound, 1 moved to a later step (by 1.0 steps on average); CPU demand 1 slot for 50 % "
        "of the jobs, memory 1 slot for 50 %"
    )
    # the default memory per processor is the largest request (800): job 4's memory 10 slots
    d = trace_slices(_trace(tmp_path), jobs=2, unit=10, max_len=5, steps=8)
    assert d.dropped == 0 and d.dems[1, 0].tolist() == [10, 10]


def test_slice_errors(tmp_path):
    tr = _trace(tmp_path)
    with pytest.raises(ConfigError, match="fewer than one slice of 7"):
        trace_slices(tr, jobs=7)
    with pytest.raises(ConfigError, match="no slice of 2 jobs arrives within 2 steps"):
        trace_slices(tr, jobs=2, unit=1, steps=2)


def test_environment_draws_and_evaluates_on_the_slices(tmp_path):
    """Training episodes start from one of the given jobsets, ``init_state_at(k)`` is jobset
    k of the evaluation bank (modulo its size)."""
    from jaxsched.envs import DataCenterEnv
    from jaxsched.envs.datacenter import JobBank
    from jaxsched.sim.datacenter import DCParams

    s = trace_slices(_trace(tmp_path), jobs=2, unit=10, max_len=5, steps=6, mem_per_proc=1000)
    p = DCParams(simu_len=6, max_job_len=5, horizon=10, step_cap=100)
    env = DataCenterEnv(params=p, jobsets=JobBank(s.lens[:1], s.dems[:1]),
                        eval_jobsets=JobBank(s.lens, s.dems))  # fmt: skip
    drawn = jax.vmap(env.init_state)(jax.random.split(jax.random.PRNGKey(0), 8))
    np.testing.assert_array_equal(drawn.lens, np.repeat(s.lens[:1], 8, axis=0))
    at = jax.vmap(env.init_state_at)(jnp.arange(3))
    np.testing.assert_array_equal(at.lens, s.lens[[0, 1, 0]])
    np.testing.assert_array_equal(at.dems, s.dems[[0, 1, 0]])
