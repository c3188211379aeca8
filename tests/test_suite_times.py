"""benchmarks/speed/suite_times.py: the records of a run summed, per file and the slowest tests."""

import json

from shared_data import load_benchmark

ST = load_benchmark("suite_times")


def test_summary_of_records(tmp_path, capsys):
    rows = [
        {"id": "tests/a.py::t1", "wall_s": 3.0, "cpu_s": 2.0, "child_cpu_s": 0.0, "compile_s": 1.5,
         "compiles": 2, "worker": "gw0", "programs": {"jit(update)": [1, 1.25],
                                                       "jit(add)": [1, 0.25]}},
        {"id": "tests/a.py::t2", "wall_s": 1.0, "cpu_s": 0.5, "child_cpu_s": 4.0, "worker": "gw0"},
        {"id": "tests/b.py::t", "wall_s": 2.0, "cpu_s": 3.0, "child_cpu_s": 0.0, "cache_hits": 1,
         "worker": "gw1", "programs": {"jit(update)": [1, 0.5]}},
    ]  # fmt: skip
    for w in ("gw0", "gw1"):
        lines = [json.dumps(r) for r in rows if r["worker"] == w]
        (tmp_path / f"{w}.jsonl").write_text("\n".join(lines) + "\n")
    s = ST.summarise(ST.read_records(tmp_path), top=2)
    assert s["tests"] == 3 and s["total"]["cpu_s"] == 5.5 and s["total"]["compiles"] == 2
    assert s["files"] == [("tests/a.py", 6.5), ("tests/b.py", 3.0)]
    assert [r["id"] for r in s["slowest"]] == ["tests/a.py::t2", "tests/b.py::t"]
    assert s["programs"] == [("jit(update)", 2, 1.75), ("jit(add)", 1, 0.25)]
    assert ST.main([str(tmp_path), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 tests: CPU 9.5 s (children 4.0)" in out and "1 cache hits" in out
    assert "1.8     2  jit(update)" in out and "jit(add)" not in out
    assert "6.5  tests/a.py" in out and "tests/b.py" not in out.split("slowest")[0]
