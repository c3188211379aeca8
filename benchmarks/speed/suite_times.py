"""Where the test suite's time goes: a pytest plugin that writes, per test, its wall and CPU
seconds and JAX's trace / lowering / XLA compile seconds (the compile seconds also by program
name), and a summary of such records.

    # record (any pytest command; with pytest-xdist one file per worker):
    PYTHONPATH=.:benchmarks/speed SUITE_TIMES=runs/suite-times .venv/bin/python -m pytest \\
        -p suite_times -n 2 --dist loadfile --no-loadscope-reorder tests
    # summarise: totals, per file and the slowest tests by CPU seconds
    .venv/bin/python benchmarks/speed/suite_times.py runs/suite-times [--top 40]

CPU seconds (the process's user + system time, and its finished children's) are what a test
costs when the machine is shared; the JAX figures are wall seconds summed over JAX's
monitoring events (``/jax/core/compile/...``; nested traces count once per jitted function,
so the trace column can exceed the test's share), with the number of backend compilations
and of persistent-cache hits. Notebook §25.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import sys
import time
from pathlib import Path

OUT_ENV = "SUITE_TIMES"
_EVENTS = {
    "jaxpr_trace_duration": "trace_s",
    "jaxpr_to_mlir_module_duration": "lower_s",
    "backend_compile_duration": "compile_s",
}
_acc: dict = {}


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def pytest_configure(config):
    """Listen to JAX's compile events (JAX is imported here: the suite imports it anyway)."""
    import jax.monitoring as mon

    def duration(name, secs, **kwargs):
        key = _EVENTS.get(name.rsplit("/", 1)[-1])
        if key:
            _acc[key] = _acc.get(key, 0.0) + secs
            if key == "compile_s":
                _acc["compiles"] = _acc.get("compiles", 0) + 1
                prog = _acc.setdefault("programs", {}).setdefault(
                    kwargs.get("fun_name", "?"), [0, 0.0]
                )
                prog[0] += 1
                prog[1] += secs

    def event(name, **kwargs):
        if name.endswith("/cache_hits"):
            _acc["cache_hits"] = _acc.get("cache_hits", 0) + 1

    mon.register_event_duration_secs_listener(duration)
    mon.register_event_listener(event)


def _record(nodeid: str, wall: float, cpu: float, child: float) -> dict:
    rec = {"id": nodeid, "wall_s": wall, "cpu_s": cpu, "child_cpu_s": child}
    rec["worker"] = os.environ.get("PYTEST_XDIST_WORKER", "main")
    rec.update(_acc)
    return rec


try:
    import pytest
except ImportError:  # pragma: no cover - no pytest: the summary still works
    pytest = None

if pytest is not None:

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        """One JSON line per test (setup, call and teardown together) in ``$SUITE_TIMES``."""
        _acc.clear()
        w0, (c0, k0) = time.time(), _cpu()
        yield
        w1, (c1, k1) = time.time(), _cpu()
        rec = _record(item.nodeid, w1 - w0, c1 - c0, k1 - k0)
        out = Path(os.environ.get(OUT_ENV, "runs/suite-times"))
        out.mkdir(parents=True, exist_ok=True)
        with open(out / f"{rec['worker']}.jsonl", "a") as f:
            f.write(json.dumps(rec) + "\n")


def read_records(folder) -> list[dict]:
    """Every record of the ``*.jsonl`` files in ``folder``."""
    rows = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def summarise(rows: list[dict], top: int = 25) -> dict:
    """Totals, CPU seconds per file (largest first) and the ``top`` tests by CPU seconds
    (own + children's)."""
    keys = ("wall_s", "cpu_s", "child_cpu_s", "trace_s", "lower_s", "compile_s", "compiles",
            "cache_hits")  # fmt: skip
    total = {k: sum(r.get(k, 0) for r in rows) for k in keys}
    per_file: dict = collections.Counter()
    for r in rows:
        per_file[r["id"].split("::")[0]] += r["cpu_s"] + r["child_cpu_s"]
    slow = sorted(rows, key=lambda r: -(r["cpu_s"] + r["child_cpu_s"]))[:top]
    programs: dict = {}
    for r in rows:
        for name, (n, secs) in r.get("programs", {}).items():
            acc = programs.setdefault(name, [0, 0.0])
            acc[0] += n
            acc[1] += secs
    by_program = sorted(((name, n, secs) for name, (n, secs) in programs.items()),
                        key=lambda x: -x[2])  # fmt: skip
    return {"tests": len(rows), "total": total, "files": per_file.most_common(), "slowest": slow,
            "programs": by_program}  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="the SUITE_TIMES folder of a recorded run")
    ap.add_argument("--top", type=int, default=25, help="slowest tests listed (default 25)")
    args = ap.parse_args(argv)
    s = summarise(read_records(args.folder), args.top)
    t = s["total"]
    print(f"{s['tests']} tests: CPU {t['cpu_s'] + t['child_cpu_s']:.1f} s (children "
          f"{t['child_cpu_s']:.1f}), wall {t['wall_s']:.1f} s summed over workers; JAX trace "
          f"{t['trace_s']:.1f} s, lower {t['lower_s']:.1f} s, compile {t['compile_s']:.1f} s "
          f"({t['compiles']} compiles, {t['cache_hits']} cache hits)")  # fmt: skip
    print("CPU s per file:")
    for name, cpu in s["files"][: args.top]:
        print(f"  {cpu:8.1f}  {name}")
    print("XLA compile s by program (a persistent-cache hit counts its retrieval):")
    for name, n, secs in s["programs"][: args.top]:
        print(f"  {secs:8.1f} {n:5d}  {name}")
    print("slowest tests (CPU s, children's CPU s, wall s, compile s, compiles):")
    for r in s["slowest"]:
        print(f"  {r['cpu_s']:7.1f} {r['child_cpu_s']:6.1f} {r['wall_s']:7.1f} "
              f"{r.get('compile_s', 0):6.1f} {r.get('compiles', 0):4d}  {r['id']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
