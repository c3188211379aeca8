"""The reference side of ``benchmarks/speed/cqsim_engine.py --cqsim DIR``: the public CQSim simulator
(SPEAR-UIC/CQSim, master; Python 3) run on one slice as a subprocess, timed (issue 17 §5).

No CQSim code is kept here: ``DIR`` is a local checkout (its root or its ``src/``). CQSim's paths
are relative to its ``src/`` (``Config/`` for the config files, ``../data/`` for the trace and
everything it writes: ``Fmt/``, ``Results/``, ``Debug/``), so the checkout's ``src/`` is copied
into a temporary folder and run there; the checkout itself is never written to.

Settings: the checkout's own ``Config/config_sys.set`` with these changes only: the slice's
SWF file as ``job_trace`` and ``node_struc``; ``backfill=1`` (EASY; the shipped value 2 is
conservative); ``read_num=0`` (read every job: with ``read_num=k`` CQSim's loader stops after
k − 1 jobs); ``anchor=0``, ``start=0``; ``debug_lvl`` as asked (shipped: 3, every event logged to
a file and to stdout). The shipped queue order ``alg=w,+,2`` (score w + 2, w the wait so far;
the queue sorted by falling score, a stable sort) is FCFS, and the shipped window ``win=5``
(not mode 1) keeps the queue order, so the run is the reference README's ``easy`` mode.

Timing (one child process per slice): ``wall_s``, the child's wall time (interpreter start,
imports, trace filtering and the simulation: CQSim's ``cqsim.py`` run as ``__main__``); and
``sim_s``, the part inside ``Cqsim_sim.cqsim_sim`` alone (the event loop and its logs), taken
in the child by wrapping that method. ``passes`` counts ``Cqsim_sim.start_scan`` calls (one per
submit and one per finish event).

CQSim's job output (``Results/<name>.rst``) has one line per finished job,
``id;reqProc;reqProc;reqTime;run;wait;submit;start;end`` (``Output_log.print_result``), floats
printed by ``str``.

:func:`run_cqsim_dras` does the same for CQSim's DRAS branch (a checkout's ``PG/``, commit
273f903): its DRAS-PG loop (``backfill=3``, ``bf_flag=1``, ``win=50``, ``monitor=500``,
``is_training=0``) with a fixed policy in place of its network (TensorFlow / Keras imports
satisfied by the stand-ins of ``benchmarks/reference/cqsim_dras_standins.py``, the policy query patched in
the child, ``DRAS_DRIVER``); the slice is written with a 19th field (the priority flag), and the
branch's job output has a 10th field, the job's class (0 backfilled, 1 ready, 2 reserved).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = [
    "CQSimUnavailable",
    "cqsim_src",
    "write_swf",
    "parse_rst",
    "config_sys",
    "run_cqsim",
    "compare_starts",
    "cqsim_dras_src",
    "run_cqsim_dras",
]


class CQSimUnavailable(RuntimeError):
    """The CQSim checkout cannot be used (no ``src/cqsim.py``, a failed run)."""


#: the end of every child: wraps the simulation and the pass, runs cqsim.py as __main__ with the
#: command line after ARGV0 (the child's own arguments before it), prints one JSON line
_TIMED_RUN = """import CqSim.Cqsim_sim as S
cls, info = S.Cqsim_sim, {"sim_s": 0.0, "passes": 0}
sim, scan = cls.cqsim_sim, cls.start_scan
def cqsim_sim(self):
    t0 = time.perf_counter()
    sim(self)
    info["sim_s"] = time.perf_counter() - t0
def start_scan(self):
    info["passes"] += 1
    return scan(self)
cls.cqsim_sim, cls.start_scan = cqsim_sim, start_scan
sys.argv = ["cqsim.py"] + sys.argv[ARGV0:]
runpy.run_path("cqsim.py", run_name="__main__")
print("JAXSCHED-CQSIM " + json.dumps(info))
"""

#: the child for CQSim master: the timed run alone
DRIVER = """
import json, runpy, sys, time
sys.path.insert(0, ".")
""" + _TIMED_RUN.replace("ARGV0", "1")

#: the DRAS branch's child: stand-in TensorFlow / Keras modules, the network replaced by a fixed
#: policy (``benchmarks/reference/cqsim_dras_standins.py``), then the same timed run as DRIVER
DRAS_DRIVER = """
import json, runpy, sys, time
sys.path.insert(0, ".")
bench, policy = sys.argv[1], sys.argv[2]
sys.path.insert(0, bench)
import cqsim_dras_standins as X
X.install_standins()
import CqSim.Reinforcement_learning as RL, CqSim.Basic_algorithm as BA
X.patch(policy, RL, BA)
""" + _TIMED_RUN.replace("ARGV0", "3")


def cqsim_src(path) -> Path:
    """The ``src/`` folder of a CQSim checkout given as its root or its ``src/``; raises
    :class:`CQSimUnavailable` (one line) if neither holds ``cqsim.py`` and ``Config/``."""
    p = Path(path).expanduser()
    for cand in (p / "src", p):
        if (cand / "cqsim.py").is_file() and (cand / "Config" / "config_sys.set").is_file():
            return cand.resolve()
    raise CQSimUnavailable(
        f"{path}: not a CQSim checkout (no src/cqsim.py with src/Config/config_sys.set; "
        "expected a clone of SPEAR-UIC/CQSim)"
    )


def cqsim_dras_src(path) -> Path:
    """The ``PG/`` folder of a checkout of CQSim's DRAS branch (SPEAR-UIC/CQSim-DRAS) given as
    its root or its ``PG/``; raises :class:`CQSimUnavailable` (one line) otherwise."""
    p = Path(path).expanduser()
    for cand in (p / "PG", p):
        rl = cand / "CqSim" / "Reinforcement_learning.py"
        if (cand / "cqsim.py").is_file() and rl.is_file():
            return cand.resolve()
    raise CQSimUnavailable(
        f"{path}: not a CQSim DRAS checkout (no PG/cqsim.py with PG/CqSim/Reinforcement_learning.py;"
        " expected a clone of the DRAS branch of CQSim)"
    )


def write_swf(jobs, path, priority_field: bool = False) -> Path:
    """Write a :class:`~jaxsched.workload.cqsim.CQSimJobs` slice as an SWF file CQSim reads:
    header ``; MaxNodes: N`` and ``; MaxProcs: N``, then one 18-field line per job, fields 1, 2,
    4, 8, 9 = id, submit (shifted), run (cut to the estimate), requested nodes, requested time;
    status (11) = 1, every other field −1. ``priority_field``: a 19th field, the priority flag
    the DRAS branch's loader reads (the slice's ``priority``, 0 by default). Returns ``path``."""
    n, N = len(jobs.job_id), int(jobs.num_nodes)
    cols = np.full((n, 19 if priority_field else 18), -1, np.int64)
    if priority_field:
        cols[:, 18] = getattr(jobs, "priority", 0)
    for k, a in ((0, jobs.job_id), (1, jobs.submit), (3, jobs.run), (7, jobs.nodes)):
        cols[:, k] = a
    cols[:, 8], cols[:, 10] = jobs.req_time, 1
    lines = [f"; MaxNodes: {N}", f"; MaxProcs: {N}"]
    lines += [" ".join(map(str, row)) for row in cols.tolist()]
    Path(path).write_text("\n".join(lines) + "\n")
    return Path(path)


def parse_rst(text: str, fields: int = 9) -> dict:
    """CQSim's job output → ``{job id: (start, end)}`` (ints; times are whole seconds printed
    as floats); ``fields=10``: the DRAS branch's output, whose 10th field is the job's class
    (0 backfilled, 1 ready, 2 reserved), → ``{job id: (start, end, class)}``. Raises
    :class:`CQSimUnavailable` for a line without ``fields`` ``;``-separated fields or a repeated
    id."""
    out: dict = {}
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        f = line.split(";")
        if len(f) != fields:
            raise CQSimUnavailable(f"CQSim output line {k}: {len(f)} fields, expected {fields}")
        jid = int(f[0])
        if jid in out:
            raise CQSimUnavailable(f"CQSim output line {k}: job {jid} twice")
        out[jid] = (int(float(f[7])), int(float(f[8]))) + ((int(f[9]),) if fields == 10 else ())
    return out


def config_sys(shipped: str, trace_name: str, debug_lvl: int = 0, backfill: int = 1,
               extra: dict | None = None) -> str:  # fmt: skip
    """The shipped ``config_sys.set`` text with the module docstring's changes (keys that are
    missing are appended); ``backfill``: CQSim's mode (0 none, 1 EASY, 2 conservative, 3 the
    DRAS branch's loop); ``extra``: further keys to set."""
    new = {"job_trace": trace_name, "node_struc": trace_name, "backfill": str(int(backfill)),
           "read_num": "0", "anchor": "0", "start": "0", "debug_lvl": str(int(debug_lvl))}  # fmt: skip
    new.update({k: str(v) for k, v in (extra or {}).items()})
    lines = []
    for line in shipped.splitlines():
        key = line.split("=", 1)[0]
        lines.append(f"{key}={new.pop(key)}" if key in new and "=" in line else line)
    return "\n".join(lines + [f"{k}={v}" for k, v in new.items()]) + "\n"


def run_cqsim(src, jobs, debug_lvl: int = 0, name: str = "slice", backfill: int = 1) -> dict:
    """Run CQSim FCFS + EASY (``backfill`` 1; 0 none, 2 conservative) on one slice in a
    temporary copy of ``src`` (see the module docstring). Returns ``{"wall_s", "sim_s", "passes", "schedule": {id: (start, end)}}``."""
    src = cqsim_src(src)
    with tempfile.TemporaryDirectory(prefix="jaxsched-cqsim-") as tmp:
        root = Path(tmp)
        work = root / "src"
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        data = root / "data"
        (data / "InputFiles").mkdir(parents=True, exist_ok=True)
        write_swf(jobs, data / "InputFiles" / f"{name}.swf")
        shipped = (work / "Config" / "config_sys.set").read_text()
        cfg = config_sys(shipped, f"{name}.swf", debug_lvl, backfill)
        (work / "Config" / "jaxsched_easy.set").write_text(cfg)
        cmd = [sys.executable, "-c", DRIVER, "-C", "jaxsched_easy.set"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        tag = [x for x in proc.stdout.splitlines() if x.startswith("JAXSCHED-CQSIM ")]
        if proc.returncode != 0 or not tag:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise CQSimUnavailable(f"CQSim run failed (exit {proc.returncode}): {last}")
        info = json.loads(tag[-1].split(" ", 1)[1])
        rst = (data / "Results" / f"{name}.rst").read_text()
    return {"wall_s": wall, **info, "schedule": parse_rst(rst)}


#: the DRAS branch's settings (reference README): its loop (backfill 3) with level 2 on
#: (bf_flag 1), W = 50, monitor every 500 s, training off
DRAS_SETTINGS = {"backfill": 3, "bf_flag": 1, "win": 50, "monitor": 500, "is_training": 0}


def run_cqsim_dras(src, jobs, policy: str, debug_lvl: int = 0, name: str = "slice") -> dict:
    """Run the DRAS branch's DRAS-PG loop (``src``: a checkout's root or ``PG/``) with the fixed
    ``policy`` (``fcfs``, ``smallest``, ``largest``) in place of its network on one slice, in a
    temporary copy of ``PG/`` (the checkout is never written to), with :data:`DRAS_SETTINGS`
    and the slice written with a 19th (priority) field. Returns ``{"wall_s", "sim_s", "passes",
    "schedule": {id: (start, end, class)}}``."""
    src = cqsim_dras_src(src)
    with tempfile.TemporaryDirectory(prefix="jaxsched-cqsim-dras-") as tmp:
        root = Path(tmp)
        work = root / "src"
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        data = root / "data"
        (data / "InputFiles").mkdir(parents=True, exist_ok=True)
        write_swf(jobs, data / "InputFiles" / f"{name}.swf", priority_field=True)
        shipped = (work / "Config" / "config_sys.set").read_text()
        cfg = config_sys(shipped, f"{name}.swf", debug_lvl, 3, DRAS_SETTINGS)
        (work / "Config" / "jaxsched_dras.set").write_text(cfg)
        bench = str(Path(__file__).resolve().parent)
        cmd = [sys.executable, "-c", DRAS_DRIVER, bench, policy, "-C", "jaxsched_dras.set"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        tag = [x for x in proc.stdout.splitlines() if x.startswith("JAXSCHED-CQSIM ")]
        if proc.returncode != 0 or not tag:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise CQSimUnavailable(f"CQSim DRAS run failed (exit {proc.returncode}): {last}")
        info = json.loads(tag[-1].split(" ", 1)[1])
        rst = (data / "Results" / f"{name}.rst").read_text()
    return {"wall_s": wall, **info, "schedule": parse_rst(rst, fields=10)}


def compare_starts(jobs, ours_start, schedule: dict) -> str:
    """``"same schedule: k/n jobs"`` if every job of the slice has CQSim's start time, else the
    first difference in trace order (or the first job missing from CQSim's output)."""
    ours = np.asarray(ours_start)[: len(jobs.job_id)]
    for k, (jid, s) in enumerate(zip(jobs.job_id.tolist(), ours.tolist())):
        if jid not in schedule:
            return f"DIFFERENT: job {jid} (slice index {k}) is missing from CQSim's output"
        if schedule[jid][0] != s:
            return (f"DIFFERENT: first at job {jid} (slice index {k}): "
                    f"CQSim starts it at {schedule[jid][0]}, ours at {s}")  # fmt: skip
    extra = len(schedule) - len(ours)
    tail = f" ({extra} extra jobs in CQSim's output)" if extra else ""
    return f"same schedule: {len(ours)}/{len(ours)} jobs{tail}"
