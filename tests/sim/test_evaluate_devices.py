"""evaluate() with one JAX device per CPU core (``use_all_cpu_cores``; the batch is split over
the devices with ``shard_map``) schedules every run exactly as with one device (as the plain-Python oracle does).

The device count is fixed when JAX starts, so the two-device run happens in a subprocess.
"""

from __future__ import annotations

import numpy as np
from shared_data import REPO, last_json_line, run_python

SCRIPT = r"""
import json, sys
from jaxsched.sim.evaluate import use_all_cpu_cores
use_all_cpu_cores()
import jax
from jaxsched.sim.evaluate import evaluate
from jaxsched.workload import read_swf
jobs = read_swf(sys.argv[1]).jobs("rlscheduler")
res = evaluate(jobs, [11, 500, 1234], 200, ["fcfs", "sjf", "wfp3"], ["none", "rlscheduler"],
               compat=True, metrics=("bsld",), queue_cap=8, run_cap=8)
print(json.dumps({"devices": len(jax.devices()), "start": res.start_times.tolist(),
                  "passes": len(res.timing["capacities"])}))
"""


def _oracle_start_times(jobs, starts, length):
    """``[S, P, B, L]`` start times of the plain-Python oracle (what one device computes: the
    engine equals it in tests/sim/test_engine.py)."""
    from jaxsched.sim import oracle

    cols = [c.tolist() for c in (jobs.submit, jobs.run, jobs.req_time, jobs.procs)]
    out = [
        [
            [
                oracle.simulate(
                    *(c[a : a + length] for c in cols),
                    num_nodes=int(jobs.num_nodes),
                    procs_per_node=float(jobs.procs_per_node),
                    policy=policy,
                    backfill=bf,
                    compat=True,
                )
                for bf in ("none", "rlscheduler")
            ]
            for policy in ("fcfs", "sjf", "wfp3")
        ]
        for a in starts
    ]
    return np.asarray(out)


def test_two_devices_same_schedules():
    from jaxsched.workload import read_swf

    trace = REPO / "traces" / "lublin-1.swf"
    got = last_json_line(run_python(["-c", SCRIPT, trace], devices=2, timeout=300))
    assert got["devices"] == 2
    assert got["passes"] > 2  # small first-try capacities: the re-runs are sharded too
    want = _oracle_start_times(read_swf(trace).jobs("rlscheduler"), [11, 500, 1234], 200)
    np.testing.assert_array_equal(np.asarray(got["start"]), want)
    assert (want >= 0).all()
