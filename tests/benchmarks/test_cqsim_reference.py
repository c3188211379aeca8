"""benchmarks/reference/cqsim_reference.py (the CQSim side of ``cqsim_engine.py --cqsim``) without CQSim:
the SWF writer, the job-output parser, the config edit and the schedule check on hand-made
cases, the subprocess plumbing on a fake checkout, and ``--cqsim`` with a missing folder."""

from __future__ import annotations

import numpy as np
import pytest
from shared_data import load_benchmark

from jaxsched.workload.cqsim import CQSimJobs, cqsim_slice, load_cqsim

CR = load_benchmark("cqsim_reference")

#: three jobs on a 4-node machine: ids 11, 12, 15
JOBS = CQSimJobs(
    job_id=np.array([11, 12, 15]), submit=np.array([0, 5, 5]), run=np.array([100, 30, 7]),
    req_time=np.array([120, 30, 60]), nodes=np.array([4, 2, 1]),
    priority=np.zeros(3, np.int32), num_nodes=4,
)  # fmt: skip

SWF = """; MaxNodes: 4
; MaxProcs: 4
11 0 -1 100 -1 -1 -1 4 120 -1 1 -1 -1 -1 -1 -1 -1 -1
12 5 -1 30 -1 -1 -1 2 30 -1 1 -1 -1 -1 -1 -1 -1 -1
15 5 -1 7 -1 -1 -1 1 60 -1 1 -1 -1 -1 -1 -1 -1 -1
"""

#: CQSim's Output_log.print_result lines (id;reqProc;reqProc;reqTime;run;wait;submit;start;end),
#: in finishing order: FCFS on 4 nodes, job 11 holds the machine until 100
RST = """11;4;4;120.0;100.0;0.0;0.0;0.0;100.0
15;1;1;60.0;7.0;95.0;5.0;100.0;107.0
12;2;2;30.0;30.0;95.0;5.0;100.0;130.0
"""


def test_swf_writer_text_and_round_trip(tmp_path):
    path = CR.write_swf(JOBS, tmp_path / "s.swf")
    assert path.read_text() == SWF
    back = cqsim_slice(load_cqsim(path), 0, 3)  # our loader reads it back unchanged
    for f in ("job_id", "submit", "run", "req_time", "nodes"):
        np.testing.assert_array_equal(getattr(back, f), getattr(JOBS, f))
    assert back.num_nodes == 4


def test_output_parser_and_schedule_check():
    sched = CR.parse_rst(RST + "\n")
    assert sched == {11: (0, 100), 15: (100, 107), 12: (100, 130)}
    assert CR.compare_starts(JOBS, [0, 100, 100], sched) == "same schedule: 3/3 jobs"
    diff = CR.compare_starts(JOBS, [0, 100, 101], sched)
    assert diff == "DIFFERENT: first at job 15 (slice index 2): CQSim starts it at 100, ours at 101"
    del sched[12]
    assert "job 12 (slice index 1) is missing" in CR.compare_starts(JOBS, [0, 100, 100], sched)
    with pytest.raises(CR.CQSimUnavailable, match="line 2: 3 fields"):
        CR.parse_rst("11;4;4;120.0;100.0;0.0;0.0;0.0;100.0\n1;2;3\n")
    with pytest.raises(CR.CQSimUnavailable, match="job 11 twice"):
        CR.parse_rst(RST + RST)


def test_config_edit():
    shipped = ";c\nread_num=8000\nalg=w,+,2\nbackfill=2\ndebug_lvl=3\njob_trace=x.swf\n"
    got = CR.config_sys(shipped, "a0.swf", debug_lvl=0).splitlines()
    assert got[:6] == [";c", "read_num=0", "alg=w,+,2", "backfill=1", "debug_lvl=0",
                       "job_trace=a0.swf"]  # fmt: skip
    assert sorted(got[6:]) == ["anchor=0", "node_struc=a0.swf", "start=0"]


#: a stand-in checkout: cqsim.py reads the config named by -C and the trace, and its
#: Cqsim_sim starts every job at its submit time, one start_scan per submit and finish
FAKE = {
    "Config/config_sys.set": "backfill=2\njob_trace=x.swf\nnode_struc=x.swf\n",
    "CqSim/__init__.py": "",
    "CqSim/Cqsim_sim.py": """import os
class Cqsim_sim:
    def __init__(self, jobs, out):
        self.jobs, self.out = jobs, out
    def start_scan(self):
        pass
    def cqsim_sim(self):
        lines = []
        for j in self.jobs:
            self.start_scan(); self.start_scan()
            s, r = float(j[1]), float(j[3])
            lines.append(f"{j[0]};{j[7]};{j[7]};{j[8]}.0;{r};0.0;{s};{s};{s + r}")
        os.makedirs(os.path.dirname(self.out), exist_ok=True)
        open(self.out, "w").write("\\n".join(lines) + "\\n")
""",
    "cqsim.py": """import sys
import CqSim.Cqsim_sim as S
cfg = dict(l.split("=", 1) for l in open("Config/" + sys.argv[2]).read().split())
assert cfg["backfill"] == "1" and cfg["read_num"] == "0", cfg
name = cfg["job_trace"]
jobs = [l.split() for l in open("../data/InputFiles/" + name) if not l.startswith(";")]
S.Cqsim_sim(jobs, "../data/Results/" + name.split(".")[0] + ".rst").cqsim_sim()
""",
}


def test_run_on_a_fake_checkout(tmp_path):
    for rel, text in FAKE.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    r = CR.run_cqsim(tmp_path, JOBS, name="a0")
    assert r["passes"] == 6 and r["wall_s"] >= r["sim_s"] >= 0
    assert r["schedule"] == {11: (0, 100), 12: (5, 35), 15: (5, 12)}
    assert CR.compare_starts(JOBS, [0, 5, 5], r["schedule"]) == "same schedule: 3/3 jobs"
    assert not (tmp_path / "data").exists()  # the checkout is not written to
    with pytest.raises(CR.CQSimUnavailable, match="CQSim run failed"):
        (tmp_path / "src" / "CqSim" / "Cqsim_sim.py").write_text("raise ValueError('boom')\n")
        CR.run_cqsim(tmp_path / "src", JOBS)


def test_missing_checkout_is_one_line_error(tmp_path, capsys):
    engine = load_benchmark("cqsim_engine")
    assert engine.main(["--cqsim", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere: not a CQSim checkout" in err
