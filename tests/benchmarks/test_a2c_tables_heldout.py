"""benchmarks/paper/a2c_tables.py --held-out's pieces on a tiny cluster: the Tuned baseline's knob
grid (knob 0 is SJF, 1 the packer, scored as the existing baselines score them), the knob's
choice on training jobsets and the paired lines against the best baseline."""

from __future__ import annotations

import numpy as np
from shared_data import load_benchmark

TB = load_benchmark("a2c_tables")
TINY = dict(simu_len=6, horizon=8, max_job_len=6, res_slot=4, num_slots=2, backlog_size=3,
            step_cap=40, rate=0.7, eval_sequences=4)  # fmt: skip


def test_knob_grid_matches_sjf_and_packer():
    from jaxsched.systems.a2cscheduler import evaluate as ev
    from jaxsched.systems.a2cscheduler.config import RunConfig, build_env

    env = build_env(RunConfig(**TINY))
    g = TB.tetris_grid(env, [0.0, 1.0], 4)
    sjf, pack = ev.baseline_metrics(env, ["sjf", "packer"], 4)
    np.testing.assert_allclose(g["slowdown"][0], sjf["slowdown"])
    np.testing.assert_allclose(g["slowdown"][1], pack["slowdown"])
    knob, means = TB.tune_knob(RunConfig(**TINY), [0.0, 1.0], 4)
    assert knob == [0.0, 1.0][int(np.argmin(means))] and len(means) == 2
    assert TB.held_out_seed() == 271828


def test_held_out_lines_name_the_best_baseline():
    rows = {b: {m: [v, v] for m in TB.METRICS} for b, v in
            (("Random", 5.0), ("Tetris", 4.0), ("SJF", 3.0), ("Tuned", 2.5))}  # fmt: skip
    run = {"run": "r", "epoch": 3, "tuned": {"knob": 0.01, "train_means": [2.0, 1.0]},
           "rows": {**rows, "A2C": {m: [2.0, 3.0] for m in TB.METRICS}}}  # fmt: skip
    out = TB.held_out_lines([run], run["rows"])
    assert "best baseline by mean slowdown: Tuned" in [x.strip() for x in out]
    assert any("− Tuned +0.000 ± 0.500" in x for x in out)
    assert out[0].lstrip().startswith("Tuned (knob 0.01)")
