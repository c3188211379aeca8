"""benchmarks/speed/datacenter_env.py's reference adapter on a fake Python 2 checkout (no JAX)."""

import sys

import pytest
from shared_data import load_benchmark

bench = load_benchmark("datacenter_env")

FAKE = {
    "job_distribution.py": "class Dist:\n    def __init__(self, job_len):\n"
    "        self.lo = job_len * 2 / 3\n",
    "parameters.py": "import job_distribution\nclass Parameters:\n    def __init__(self):\n"
    "        self.num_nw = 5\n        self.new_job_rate = 0.1\n"
    "        self.dist = job_distribution.Dist(15)\n",
    "environment.py": "import theano\nimport matplotlib.pyplot as plt\nSTEPS = []\n"
    "class Env:\n    def __init__(self, pa, seed=42, render=False, repre='image', end='x'):\n"
    "        self.pa = pa\n        self.curr_size, backlog_width = 7, 3\n"
    "        self.rows = self.curr_size / backlog_width\n"
    "    def step(self, a):\n        for _ in xrange(1):\n            STEPS.append(a)\n"
    'def test():\n    print "py2 print"\n',
}


def test_reference_adapter_on_a_fake_checkout(tmp_path):
    for name, text in FAKE.items():
        (tmp_path / name).write_text(text)
    before = set(sys.modules)
    params, env_mod = bench.load_reference(tmp_path)
    assert set(sys.modules) == before  # no stand-in is left behind
    pa = params.Parameters()
    assert pa.dist.lo == 10 and isinstance(pa.dist.lo, int)  # Python 2 integer division
    assert env_mod.Env(pa).rows == 2
    assert bench.reference_steps_per_s(tmp_path, 0.7, 50, modules=(params, env_mod)) > 0
    assert len(env_mod.STEPS) == 50 and set(env_mod.STEPS) <= set(range(6))


@pytest.mark.extended  # a timing benchmark's restore step
def test_a2c_update_timing_restores_the_convolution():
    import jaxsched.nets.a2cscheduler as nets

    ours = nets.Conv3x3
    for conv in ("flax", "im2col"):
        sec, comp = bench.a2c_update_seconds(2, conv, updates=1)
        assert sec > 0 and comp >= 0
    assert nets.Conv3x3 is ours
