"""What a backfilling decision waits through, counted with the plain-Python oracle (issue 19
§5): how far skipping the events that start nothing could shorten the sequential loop of a
decision whose job does not fit.

    PYTHONPATH=. .venv/bin/python benchmarks/experiments/bf_drain_count.py [--sequences 40]
        [--length 256] [--seed 0] [--trace traces/lublin-1.swf]

Sequences of ``--length`` consecutive jobs from uniformly random starts, the reference's
greedy backfilling in compat mode, every decision a uniformly random pick among the first 128
waiting jobs (in submit order, the environment's visible slots). For each decision that
*commits* a job that does not fit, the oracle's wait is counted: the events it processes (one
backfill pass before each), the passes that start at least one job ("productive") and the jobs
they start. The micro-step engine runs one iteration per event and per start; a loop that
skipped every unproductive event in one vectorised step would still need about
``2 + 2 × productive passes`` sequential iterations per commit (the commit, one per productive
event and its starts, one per run of skipped events, the final start), which is printed beside.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout
from benchmarks.common import REPO  # noqa: E402
from jaxsched.sim import oracle as O  # noqa: E402
from jaxsched.workload import read_swf  # noqa: E402

DEFAULT_TRACE = REPO / "traces" / "lublin-1.swf"
PERCENTILES = (50, 90, 99, 100)
VISIBLE = 128


class _CountingRun(O._Run):
    """The oracle's run, its greedy-backfilling wait counted: one ``(events, productive
    passes, backfill starts)`` row per commit in ``self.commits`` (compat mode only)."""

    def wait_rlscheduler(self, j: int, n_arrived: int) -> None:
        shadow = self._rlscheduler_shadow(j)
        events = productive = starts = 0
        while self.k[j] > self.F:
            self.queue.sort(key=self.s.__getitem__)
            before = starts
            for b in list(self.queue):
                if self.t + self.q[b] < shadow and self.k[b] <= self.F:
                    self.start_job(b, backfilled=True)
                    starts += 1
            productive += starts > before
            self.advance()
            events += 1
        self.commits.append((events, productive, starts))


def count(jobs, n_seq: int, length: int, seed: int) -> tuple[int, np.ndarray]:
    """Decisions in all, and ``[commits, 3]`` int rows (events, productive passes, starts)."""
    rng = random.Random(seed)
    decisions, rows = 0, []
    for _ in range(n_seq):
        w = jobs.window(rng.randrange(0, jobs.n_jobs - length), length)
        args = O._checked_inputs(
            w.submit, w.run, w.req_time, w.procs, jobs.num_nodes, jobs.procs_per_node,
            None, "rlscheduler", True, lambda v: 0,
        )  # fmt: skip
        run = _CountingRun(
            *args, None, "rlscheduler", True, lambda v: rng.choice(v.queue[:VISIBLE]), False
        )
        run.commits = []
        decisions += run.run().decisions
        rows += run.commits
    return decisions, np.asarray(rows, np.int64).reshape(-1, 3)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sequences", type=int, default=40)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    a = ap.parse_args(argv)
    jobs = read_swf(a.trace).jobs("rlscheduler")
    decisions, rows = count(jobs, a.sequences, a.length, a.seed)
    n = len(rows)
    print(f"{a.sequences} sequences x {a.length} jobs of {a.trace.name}: {decisions} decisions, "
          f"{n} commits ({n / max(decisions, 1):.1%})")  # fmt: skip
    skip = 2 + 2 * rows[:, 1] if n else np.zeros(0)
    cols = [("events", rows[:, 0]), ("productive passes", rows[:, 1]),
            ("backfill starts", rows[:, 2]), ("iterations, idle events skipped", skip)]  # fmt: skip
    for name, x in cols:
        pct = "/".join(f"{v:g}" for v in np.percentile(x, PERCENTILES)) if n else "-"
        print(f"  {name:32s} per commit {x.mean() if n else 0:6.2f}  per decision "
              f"{x.sum() / max(decisions, 1):5.2f}  p50/p90/p99/max {pct}")  # fmt: skip
    if n:
        now = rows[:, 0] + rows[:, 2] + 2
        print(
            f"  micro-step iterations per commit now (events + starts + commit + start): "
            f"{now.mean():.2f}; skipping idle events: x{now.mean() / skip.mean():.2f} fewer"
        )
    return 0


if __name__ == "__main__":
    import jax

    # a whole program: 64-bit mode for its process (jaxsched/precision.py)
    jax.config.update("jax_enable_x64", True)
    raise SystemExit(main())
