"""The schedule validator's speed (``jaxsched.workload.validate``, the check ``jaxsched simulate``
runs before it writes): seconds to validate the engine's FCFS schedule of a whole trace, best of
``--repeat``, in the jobs' order and keyed by job number in a shuffled order.

    PYTHONPATH=. .venv/bin/python benchmarks/speed/validate_schedule.py [--trace FILE ...]
        [--lublin N] [--backfill none|easy] [--repeat 5] [--json FILE]

Default: SDSC-SP2 (59,705 jobs) from the shared folder (``--shared DIR``) and 500,000 jobs of
the Lublin-1 preset's generator (``--lublin 0`` leaves it out). Each schedule is the engine's
(one compiled loop, not timed); only the validation is timed.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import add_common_args, best_of, load_line, shared_dir, write_json  # noqa: E402


def _lublin_trace(n: int, folder: Path) -> Path:
    from jaxsched.workload.lublin import PRESETS, generate, to_swf_text

    config = dataclasses.replace(PRESETS["lublin-1"], n_jobs=n)
    path = folder / f"lublin-1-{n}.swf"
    path.write_text(to_swf_text(generate(config), config))
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", action="append", default=None, metavar="FILE")
    ap.add_argument("--lublin", type=int, default=500_000, metavar="N")
    ap.add_argument("--backfill", default="none", choices=("none", "easy"))
    ap.add_argument("--repeat", type=int, default=5)
    add_common_args(ap)
    a = ap.parse_args(argv)

    import jax
    import numpy as np

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    from jaxsched.sim.evaluate import evaluate
    from jaxsched.workload import read_swf
    from jaxsched.workload.validate import validate_schedule

    traces = [Path(t) for t in a.trace] if a.trace else []
    if not a.trace:
        traces.append(shared_dir(a.shared) / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz")
    tmp = tempfile.TemporaryDirectory()
    if a.lublin:
        traces.append(_lublin_trace(a.lublin, Path(tmp.name)))
    print(load_line())
    rows = []
    for path in traces:
        jobs = read_swf(path).jobs("rlscheduler")
        res = evaluate(jobs, [0], jobs.n_jobs, ["fcfs"], [a.backfill], compat=False)
        start = res.start_times[0, 0, 0]
        perm = np.random.default_rng(0).permutation(jobs.n_jobs)
        rows_ids, rows_start = jobs.job_id[perm], start[perm]
        ordered, _ = best_of(functools.partial(validate_schedule, jobs, start), a.repeat)
        by_id = functools.partial(validate_schedule, jobs, rows_start, scheduled_ids=rows_ids)
        keyed, _ = best_of(by_id, a.repeat)
        rows.append(dict(trace=path.name, jobs=jobs.n_jobs, ordered_s=ordered, keyed_s=keyed))
        print(f"{path.name}: {jobs.n_jobs:,} jobs (fcfs + {a.backfill}): validated in "
              f"{ordered * 1e3:.1f} ms, keyed by job number and shuffled {keyed * 1e3:.1f} ms")  # fmt: skip
    print(load_line())
    write_json(a.json, {"backfill": a.backfill, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
