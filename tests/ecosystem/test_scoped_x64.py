"""Importing jaxsched leaves JAX's 64-bit mode as the process set it (jaxsched/precision.py):
in a fresh process with the mode off, jaxsched and its environments import, build, reset and
step under jit, vmap and lax.scan (the state's packed 64-bit leaves in the carry, the rewards
equal to a 64-bit caller's), train a few updates
through the gymnax view with a float32 reward normaliser in the carry, hand out 32-bit
timesteps, and the engine called outside jaxsched's scope raises X64Required naming the fix.

The suite's own process keeps the mode on (tests/conftest.py); this file's child drops it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from shared_data import REPO, subprocess_env
from tiny_traces import schedinspector_tiny

THIRTY_TWO = {"bool", "float32", "int32", "int8"}


def _child(tmp_path, *flags) -> dict:
    trace = schedinspector_tiny(tmp_path / "tiny.swf")
    env = subprocess_env()
    env.pop("JAX_ENABLE_X64")
    child = REPO / "tests" / "ecosystem" / "_child_32bit.py"
    run = subprocess.run(
        [sys.executable, str(child), str(trace), *flags],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert not got["before"] and not got["after_import"] and not got["after_make"]
    assert got["zeros"] == got["zeros_end"] == "float32"
    assert not got["end"] and got["inside_x64"]
    assert set(got["ts_dtypes"]) <= THIRTY_TWO and set(got["step_dtypes"]) <= THIRTY_TWO
    assert set(got["state_dtypes"]) <= THIRTY_TWO | {"uint32"}  # 64-bit times come packed
    assert got["obs_spec"] == "float32"
    assert got["bare_engine"] == "X64Required"
    return got


def test_importing_jaxsched_leaves_the_mode_off(tmp_path):
    """Traced only (eval_shape, nothing compiled): about 5 s, most of it imports."""
    _child(tmp_path, "--trace-only")


@pytest.mark.extended  # compiles 4 programs (8 s cold); test_importing_jaxsched_leaves_the_mode_off traces the same calls
def test_a_32bit_program_runs_and_trains(tmp_path):
    got = _child(tmp_path)
    assert set(got["jit_dtypes"]) <= THIRTY_TWO
    assert got["rollout_exact"]
    assert got["rollout"][0] == "float32" and got["rollout"][1] > 0  # episodes ended
    assert got["losses_finite"] and got["w_dtype"] == "float32"
