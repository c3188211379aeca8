"""``jaxsched evaluate TRACE --model DIR`` for SchedInspector runs (``System.compare``): base
alone and base + inspector on the same sequences, the paired difference ± standard error and
the rejection ratio, ``--json`` rows; on a tiny trace with two untrained inspectors (one that
always accepts: it must equal its base exactly, and a randomly initialised one)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_traces import schedinspector_tiny

from jaxsched.cli import main
from jaxsched.systems.schedinspector.evaluate import test_starts as draw_starts

L, K = 16, 2  # jobs per sequence, sequences (the shapes of test_si_train.py: one compile)


def _inspector(out, trace, accept_bias=None):
    """A run directory with an untrained inspector: random weights (numpy, seed 0) in the
    layout of :class:`~jaxsched.nets.schedinspector.InspectorPolicy` (7 -> 32 -> 16 -> 8 ->
    2); ``accept_bias``: zero output kernel and bias (b, -b), so it always accepts."""
    from jaxsched.systems.schedinspector.config import RunConfig
    from jaxsched.train.checkpoint import save_checkpoint

    rng = np.random.default_rng(0)

    def dense(a, b):
        return {"kernel": rng.normal(0, a**-0.5, (a, b)).astype(np.float32),
                "bias": np.zeros(b, np.float32)}  # fmt: skip

    last = dense(8, 2)
    if accept_bias is not None:
        last = {"kernel": np.zeros((8, 2), np.float32),
                "bias": np.array([accept_bias, -accept_bias], np.float32)}  # fmt: skip
    trunk = {f"Dense_{i}": dense(a, b) for i, (a, b) in enumerate([(7, 32), (32, 16), (16, 8)])}
    params = {"params": {"_Trunk_0": trunk, "Dense_0": last}}
    out.mkdir()
    rc = RunConfig(trace=str(trace), length=8, eval_length=L)
    (out / "run.json").write_text(json.dumps(rc.to_dict()))
    save_checkpoint(out, {"policy_params": params}, epoch=3)
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("si_eval")
    trace = schedinspector_tiny(tmp / "tiny.swf")
    acc = _inspector(tmp / "acc", trace, accept_bias=10.0)
    rnd = _inspector(tmp / "rnd", trace)
    return trace, acc, rnd


def test_starts_as_the_reference():
    # spec schedinspector.md §8.2: Lublin (10000 jobs), seed 1, 256 jobs
    assert draw_starts(10000, 256, 3, 1) == [9149, 8144, 1732]


def test_evaluate_inspectors(setup, capsys):
    trace, acc, rnd = setup
    argv = ["evaluate", str(trace), "--model", str(acc), "--model", str(rnd)]
    assert main(argv + ["--sequences", str(K), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    starts = draw_starts(80, L, K, 1)
    assert sorted({r["start"] for r in rows}) == sorted(set(starts))
    val = {(r["policy"], r["metric"], r["start"]): r["value"] for r in rows}
    for m in ("bsld", "wait", "util", "mbsld"):
        for s in starts:  # always-accept = the base scheduler, exactly
            assert val[("inspector:acc", m, s)] == val[("sjf", m, s)]
    assert all(val[("inspector:acc", "rejection_ratio", s)] == 0 for s in starts)
    ratio = [val[("inspector:rnd", "rejection_ratio", s)] for s in starts]
    assert max(ratio) > 0  # the random inspector does reject
    # the printed table: paired difference and standard error, by hand from the rows
    assert main(argv + ["--sequences", str(K)]) == 0
    out = capsys.readouterr().out
    base = np.array([val[("sjf", "bsld", s)] for s in starts])
    ins = np.array([val[("inspector:rnd", "bsld", s)] for s in starts])
    d = ins - base
    se = np.std(d, ddof=1) / np.sqrt(K)
    assert f"{d.mean():+14.4f} ± {se:<8.4f}" in out, out
    assert out.count("rejection ratio") == 2 and "greedy actions" in out
    assert f"{K} sequences x {L} jobs (seed 1" in out
