"""benchmarks/schedinspector_runs.py on hand-written run logs: the best epoch, the best within
the utilisation limit, the dropped trajectories, and the best over runs of the same base."""

from __future__ import annotations

import json

from shared_data import load_benchmark

SR = load_benchmark("schedinspector_runs")


def _run(tmp_path, name, rows, metric="bsld"):
    d = tmp_path / name
    d.mkdir()
    (d / "run.json").write_text(json.dumps({"system": "schedinspector", "metric": metric}))
    (d / "log.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return d


def _val(epoch, insp, util, base=300.0, dropped=0):
    return {"epoch": epoch, "dropped": dropped, "val_base": base, "val_inspected": insp,
            "val_rejection": 0.5, "val_util_base": 0.60, "val_util": util}  # fmt: skip


def test_best_and_best_within_the_utilisation_limit(tmp_path):
    a = _run(tmp_path, "a", [
        {"epoch": 1, "dropped": 3}, _val(2, 100.0, 0.40, dropped=5), _val(3, 150.0, 0.595),
        _val(4, 140.0, 0.586),
    ])  # fmt: skip
    b = _run(tmp_path, "b", [_val(5, 145.0, 0.599)])
    lines = []
    res = SR.main([str(a), str(b), "--max-util-loss", "1"], out=lines.append)
    sa, sb = res
    assert sa["best"]["epoch"] == 2 and sa["best_within"]["epoch"] == 3 and sa["dropped"] == 8
    assert sa["last"]["epoch"] == 4 and sb["best_within"]["epoch"] == 5
    assert lines[-1].startswith(f"best within 1 point(s) over all runs: {b} epoch 5 145.00")
    # a looser limit admits a's epoch 4, which beats b
    res = SR.main([str(a), str(b), "--max-util-loss", "1.5"], out=lines.append)
    assert res[0]["best_within"]["epoch"] == 4 and "epoch 4 140.00" in lines[-1]


def test_utilisation_runs_keep_the_highest_and_other_bases_are_not_ranked(tmp_path):
    u = _run(tmp_path, "u", [_val(1, 0.61, 0.61), _val(2, 0.63, 0.63)], metric="util")
    assert SR.summarise(u)["best"]["epoch"] == 2
    other = _run(tmp_path, "o", [_val(1, 10.0, 0.60, base=20.0)])
    lines = []
    SR.main([str(u), str(other)], out=lines.append)
    assert not any("over all runs" in x for x in lines)


def test_an_epoch_logged_twice_counts_once(tmp_path):
    # a run resumed from epoch 2's checkpoint logs epoch 3 again: its last line counts, and its
    # dropped trajectories once
    r = _run(tmp_path, "r", [_val(2, 120.0, 0.60), _val(3, 90.0, 0.60, dropped=4),
                             _val(3, 110.0, 0.60, dropped=1)])  # fmt: skip
    s = SR.summarise(r)
    assert s["best"]["epoch"] == 3 and s["best"]["val_inspected"] == 110.0
    assert s["dropped"] == 1
