"""benchmarks/splitwindow_runs.py on hand-written run logs: the lowest wait, the lowest within
the utilisation bound against FCFS + EASY, and the best over runs of the same episodes."""

from __future__ import annotations

import json

from shared_data import load_benchmark

SW = load_benchmark("splitwindow_runs")


def _run(tmp_path, name, rows):
    d = tmp_path / name
    d.mkdir()
    (d / "log.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return d


def _val(epoch, wait, util, ref=0.84):
    row = {"epoch": epoch, "val_avg_wait": wait, "val_util": util}
    return row if ref is None else {**row, "val_util_fcfs_easy": ref}


def test_lowest_wait_and_lowest_within_the_bound(tmp_path):
    a = _run(tmp_path, "a", [{"epoch": 1}, _val(2, 9_000.0, 0.78), _val(3, 12_000.0, 0.832),
                             _val(4, 11_000.0, 0.826)])  # fmt: skip
    b = _run(tmp_path, "b", [_val(5, 11_500.0, 0.835), _val(5, 11_900.0, 0.835)])
    lines = []
    sa, sb = SW.main([str(a), str(b), "--max-util-loss", "1"], out=lines.append)
    assert sa["best"]["epoch"] == 2 and sa["best_within"]["epoch"] == 3
    assert sb["best_within"]["val_avg_wait"] == 11_900.0  # a resumed epoch: its last line
    assert lines[-1].startswith(f"best within 1 point(s) over all runs: {b} epoch 5: wait 11,900")
    assert "+0.80 points below FCFS + EASY" in "\n".join(lines)
    # a looser bound admits a's epoch 4
    sa, _ = SW.main([str(a), str(b), "--max-util-loss", "1.5"], out=lines.append)
    assert sa["best_within"]["epoch"] == 4 and f"{a} epoch 4" in lines[-1]


def test_runs_without_the_reference_or_on_other_episodes(tmp_path):
    plain = _run(tmp_path, "p", [_val(1, 9_000.0, 0.99, ref=None)])
    s = SW.summarise(plain)
    assert s["best"]["epoch"] == 1 and s["best_within"] is None
    lines = []
    SW.main([str(plain)], out=lines.append)
    assert lines[-1].startswith("no validated epoch of any run within 1 point(s)")
    x = _run(tmp_path, "x", [_val(1, 10_000.0, 0.84)])
    y = _run(tmp_path, "y", [_val(1, 9_000.0, 0.80, ref=0.80)])
    SW.main([str(x), str(y)], out=lines.append)
    assert lines[-1].startswith("not ranked over runs")
