"""benchmarks/paper/rlscheduler_networks.py (Table IV's network study) on hand-made run logs: the
curves, the per-network summary over seeds, the training command and the plot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from shared_data import load_benchmark

NW = load_benchmark("rlscheduler_networks")


def _run(out: Path, vals: dict, seconds: float = 10.0, heur=None):
    """A run directory whose log has ``seconds`` per epoch (the first 3x: compilation) and
    ``val_bsld`` at the epochs of ``vals``."""
    out.mkdir(parents=True)
    last = max(vals)
    rows = []
    for e in range(1, last + 1):
        r = {"epoch": e, "seconds": seconds * (3 if e == 1 else 1), "bsld": 100.0}
        if e in vals:
            r["val_bsld"] = vals[e]
        rows.append(json.dumps(r))
    (out / "log.jsonl").write_text("\n".join(rows) + "\n")
    if heur:
        (out / "validation.json").write_text(json.dumps(heur))


def test_curve_and_summary_over_seeds(tmp_path):
    trace = Path("traces/lublin-1.swf")
    d = lambda net, s: NW.run_dir(tmp_path, trace, net, s)  # noqa: E731
    assert d("kernel", 2) == tmp_path / "lublin-1" / "kernel" / "seed-2"
    assert NW.run_dir(tmp_path, Path("x/SDSC-SP2.swf.gz"), "lenet", 1).parts[-3] == "SDSC-SP2"
    _run(d("kernel", 1), {2: 300.0, 10: 200.0, 12: 210.0}, heur={"sjf": 250.0, "f1": 230.0})
    _run(d("kernel", 2), {2: 320.0, 10: 220.0, 12: 190.0})
    _run(d("lenet", 1), {2: 900.0, 4: 800.0})
    c = NW.curve(d("kernel", 1))
    assert c["epoch"] == [2, 10, 12] and c["val"] == [300.0, 200.0, 210.0]
    # minutes: 30 s for epoch 1 (compilation) + 10 s per later epoch
    assert c["minutes"] == pytest.approx([40 / 60, 120 / 60, 140 / 60])
    assert c["sec_per_epoch"] == 10.0 and c["sjf"] == 250.0
    assert NW.at_epoch(c, 11) == 200.0 and NW.at_epoch(c, 1) is None
    assert NW.epochs_done(d("lenet", 1)) == 4 and NW.epochs_done(tmp_path / "none") == 0

    curves = {"kernel": {1: c, 2: NW.curve(d("kernel", 2))}, "lenet": {1: NW.curve(d("lenet", 1))}}
    rows = {r["net"]: r for r in NW.summarize(curves)}
    k = rows["kernel"]
    assert k["seeds"] == 2 and k["epochs"] == 12
    assert k["epoch10"][0] == pytest.approx(210.0) and k["epoch10"][1] == pytest.approx(10.0)
    assert k["best"][0] == pytest.approx(195.0) and k["last"][0] == pytest.approx(200.0)
    assert rows["lenet"]["epoch10"][0] == 800.0  # its last validation before epoch 10
    png = NW.plot(curves, {"sjf": 250.0}, "t", tmp_path / "p.png")
    assert png.stat().st_size > 0


def test_train_command_resumes_an_existing_run(tmp_path):
    class A:
        trace, backfill, trajectories, epochs = Path("traces/lublin-1.swf"), "none", 20, 5
        job_slice = 0

    out = tmp_path / "kernel" / "seed-1"
    cmd = NW.train_command(A, "mlp_v2", 1, out)
    assert cmd[:5] == [sys.executable, "-m", "jaxsched.cli", "train", "rlscheduler"]
    assert cmd[cmd.index("--policy-net") + 1] == "mlp_v2" and "--resume" not in cmd
    assert "--job-slice" not in cmd
    _run(out, {2: 1.0})
    assert NW.train_command(A, "mlp_v2", 1, out)[-1] == "--resume"
    A.job_slice = 10000  # SDSC-SP2 in the paper's protocol
    cmd = NW.train_command(A, "mlp_v2", 1, out)
    assert cmd[cmd.index("--job-slice") + 1] == "10000"


def test_batched_runs_train_the_short_seeds_of_a_network_as_one_sweep(tmp_path):
    class A:
        trace, backfill, trajectories, epochs = Path("traces/lublin-1.swf"), "none", 20, 5
        root, batched, job_slice = tmp_path, True, 0

    d = lambda net, s: NW.run_dir(tmp_path, A.trace, net, s)  # noqa: E731
    _run(d("kernel", 1), {5: 1.0})  # done
    _run(d("kernel", 2), {2: 1.0})  # short
    todo = NW.runs_to_train(A, ["kernel", "mlp_v1"], [1, 2, 3])
    assert todo == [
        ("kernel", [2, 3], tmp_path / "lublin-1" / "kernel"),
        ("mlp_v1", [1, 2, 3], tmp_path / "lublin-1" / "mlp_v1"),
    ]
    cmd = NW.train_command(A, "kernel", [2, 3], todo[0][2])
    assert cmd[cmd.index("--seeds") + 1] == "2,3" and "--seed" not in cmd
    assert cmd[cmd.index("--out") + 1] == str(tmp_path / "lublin-1" / "kernel")
    assert cmd[-1] == "--resume"  # seed 2 has epochs
    assert "--resume" not in NW.train_command(A, "mlp_v1", [1, 2, 3], todo[1][2])
    A.batched = False  # one run per seed
    assert [(n, s) for n, s, _ in NW.runs_to_train(A, ["kernel"], [1, 2, 3])] == [
        ("kernel", 2),
        ("kernel", 3),
    ]


def test_unknown_network_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        NW.main(["--nets", "kernel,resnet"])
    assert "unknown resnet" in capsys.readouterr().err


def test_committed_h200_study_gives_the_results_table():
    """RESULTS.md §17.2 is drawn from the committed logs of the H200 runs: the kernel
    network's best epochs on Lublin-1, LeNet's six epochs, three seeds each."""
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "networks-h200"
    trace = Path("traces/lublin-1.swf")
    curves = {
        net: {s: NW.curve(NW.run_dir(root, trace, net, s)) for s in (1, 2, 3)}
        for net in ("kernel", "lenet")
    }
    rows = {r["net"]: r for r in NW.summarize(curves)}
    assert rows["kernel"]["seeds"] == 3 and rows["kernel"]["epochs"] == 20
    assert rows["kernel"]["best"] == pytest.approx((215.2, 4.6), abs=0.05)
    assert rows["lenet"]["epochs"] == 6
    assert rows["lenet"]["best"][0] > 9 * rows["kernel"]["best"][0]
    cpu = root.parent / "networks-cpu-lenet"  # LeNet's twenty CPU epochs
    lenet = NW.summarize(
        {"lenet": {s: NW.curve(NW.run_dir(cpu, trace, "lenet", s)) for s in (1, 2, 3)}}
    )
    assert lenet[0]["epochs"] == 20 and lenet[0]["best"] == pytest.approx((2260.7, 218.9), abs=0.05)
