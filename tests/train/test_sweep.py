"""jaxsched.train.sweep: seed lists, stacking, and the sweep host loop with a fake trainer
(no environment): one vmapped update per epoch, one run directory per seed."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.errors import ConfigError
from jaxsched.train.checkpoint import list_checkpoints, load_checkpoint
from jaxsched.train.loop import EpochSpec, read_log, start_or_resume
from jaxsched.train.sweep import (
    SeedSweep,
    common_epoch,
    parse_seeds,
    run_sweep_epochs,
    stack_trees,
    sweep_dirs,
    tree_index,
)


class ScaleTrainer:
    """``update`` multiplies ``x`` by ``a`` (per seed) and counts calls of the Python body."""

    def __init__(self):
        self.traced = 0

        def update(s):
            self.traced += 1
            x = s["x"] * s["a"]
            return {"x": x, "a": s["a"]}, {"x": x, "episode_info_v": jnp.arange(2)}

        self.update = jax.jit(update)

    def run_config(self):
        return {"scale": 1}


def test_parse_seeds():
    assert parse_seeds("0-3,8") == [0, 1, 2, 3, 8]
    assert parse_seeds("5") == [5] and parse_seeds("2,0") == [2, 0]
    for bad, msg in [("1,1", "repeated"), ("4-2", "empty range"), ("x", "expected")]:
        with pytest.raises(ConfigError, match=msg):
            parse_seeds(bad)


def test_stack_index_and_vmapped_update():
    tr = ScaleTrainer()
    states = [{"x": jnp.float32(1.0), "a": jnp.float32(a)} for a in (2.0, 3.0, 5.0)]
    st = stack_trees(states)
    assert st["x"].shape == (3,)
    sw = SeedSweep(tr)
    st, m = sw.update(st)
    st, m = sw.update(st)
    np.testing.assert_array_equal(m["x"], [4.0, 9.0, 25.0])
    assert m["episode_info_v"].shape == (3, 2)
    assert float(tree_index(st, 2)["x"]) == 25.0 and sw.run_config() == {"scale": 1}
    assert tr.traced == 1  # one compiled program for all seeds and epochs


def test_run_sweep_epochs_dirs_rows_checkpoints_and_resume(tmp_path):
    tr = ScaleTrainer()
    outs = sweep_dirs(tmp_path, [0, 7])
    assert [o.name for o in outs] == ["seed-0", "seed-7"]
    for bad in ([], [3, 3]):
        with pytest.raises(ConfigError, match="distinct seeds"):
            sweep_dirs(tmp_path, bad)
    spec = EpochSpec(
        trainer_at=lambda e: tr,
        row=lambda e, m, t: {"x": float(m["x"]), "n": int(len(m["episode_info_v"]))},
        message=lambda r: f"x {r['x']}",
        validate=lambda st, e, ck: {"val": float(st["x"]) + 0.5},
        validate_every=2,
        keep=0,
    )

    def run(epochs, resume):
        states, hists, done = [], [], []
        for o, a in zip(outs, (2.0, 3.0)):
            st = {"x": jnp.float32(1.0), "a": jnp.float32(a)}
            st, h, d = start_or_resume(o, st, tr, resume=resume, run_json={"a": a}, log=print)
            states.append(st), hists.append(h), done.append(d)
        d = common_epoch(outs, done)
        return run_sweep_epochs(outs, stack_trees(states), hists, [spec, spec], done_epochs=d,
                                epochs=epochs, t0=0.0, progress=False, log=lambda m: None)  # fmt: skip

    run(2, False)
    _, hists = run(3, True)
    for o, a in zip(outs, (2.0, 3.0)):
        rows = read_log(o)
        assert [r["x"] for r in rows] == [a, a**2, a**3] and all(r["n"] == 2 for r in rows)
        assert [r.get("val") for r in rows] == [None, a**2 + 0.5, a**3 + 0.5]
        assert rows[0]["first_epoch_s_incl_compile"] > 0 and rows[0]["sweep_seeds"] == 2
        assert [load_checkpoint(p).epoch for p in list_checkpoints(o)] == [1, 2, 3]
        ck = load_checkpoint(o)
        assert float(ck.state["x"]) == a**3 and len(ck.metrics_history) == 3
    assert [len(h) for h in hists] == [3, 3]
    with pytest.raises(ConfigError, match=r"different epochs \(seed-0: 3, seed-7: 2\)"):
        common_epoch(outs, [3, 2])
