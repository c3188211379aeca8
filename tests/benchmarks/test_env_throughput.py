"""benchmarks/speed/env_throughput.py's ``--devices``: the batch split over two (fake CPU) devices
steps every environment exactly as one device steps its block of rows with that device's key
(the engine path with backfilling, whose batching rule runs inside ``shard_map``), and the
script's own rows come out side by side; benchmarks/speed/schedinspector_env.py's throughput runs
split the same way. Two devices exist only in a process started with them, so this runs in a
subprocess."""

from __future__ import annotations

import pytest
from shared_data import SHARED, last_json_line, run_python

_CHILD = r"""
import json, sys
sys.path.insert(0, "benchmarks/speed")
import jax, numpy as np
import env_throughput as T
import schedinspector_env as SI
from jaxsched.envs import AutoResetWrapper, RLSchedulerEnv
from jaxsched.workload import read_swf

jobs = read_swf("traces/lublin-1.swf").jobs("rlscheduler")
env = AutoResetWrapper(RLSchedulerEnv(jobs, length=24, backfill="rlscheduler", compat=True))
keys = jax.random.split(jax.random.PRNGKey(5), 5)
state, ts = jax.jit(jax.vmap(env.reset))(keys[1:])
dev_keys = jax.random.split(keys[0], 2)
two, _ = T.make_sharded_rollout(env, 40, 2)
got = two(state, ts, dev_keys)
one, _ = T.make_rollout(env, 40)
half = lambda tree, i: jax.tree_util.tree_map(lambda x: x[2 * i : 2 * i + 2], tree)
parts = [one(half(state, i), half(ts, i), dev_keys[i]) for i in (0, 1)]
same = all(
    np.array_equal(np.asarray(a), np.concatenate([np.asarray(b), np.asarray(c)]))
    for a, b, c in zip(*(jax.tree_util.tree_leaves(o[:2]) for o in (got, *parts)))
)
sums = [[float(x) for x in np.asarray(got[k])] for k in (3, 4, 5)]
want = [[float(p[k]) for p in parts] for k in (3, 4, 5)]
lines = []
T.benchmark(batches=(4,), steps=8, backfills=("rlscheduler",), length=24, repeats=1,
            devices=(1, 2), out=lines.append)
si = SI.throughput(SI_TRACE, 4, 4, "none", devices=2)
print(json.dumps({"devices": jax.device_count(), "same": same, "sums": sums, "want": want,
                  "lines": lines, "si": si}))
"""


@pytest.mark.extended  # a two-device subprocess of the benchmark; tests/sim/test_evaluate_devices.py covers two devices
def test_two_devices_step_each_block_as_one_device():
    si_trace = SHARED / "traces" / "lublin_256.swf.gz"
    code = f"SI_TRACE = {str(si_trace)!r}\n" + _CHILD
    got = last_json_line(run_python(["-c", code], devices=2))
    assert got["devices"] == 2
    assert got["same"], "a device's rows differ from one device stepping that block"
    assert got["sums"] == got["want"]
    assert got["sums"][1] != [0.0, 0.0], "no episode ended: the check saw no auto-reset"
    assert got["sums"][2] == [0.0, 0.0]  # the masks stayed prefixes
    rows = [ln.split() for ln in got["lines"] if ln.startswith("rlscheduler")]
    assert [(r[2], r[3]) for r in rows] == [("4", "1"), ("4", "2")]
    assert float(rows[0][6]) == 1.0 and float(rows[1][6]) > 0
    assert got["si"]["steps_per_s"] > 0 and got["si"]["devices"] == 2
