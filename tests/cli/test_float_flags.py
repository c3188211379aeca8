"""Every real-valued flag of ``jaxsched train <system>`` refuses a value that is not a finite
number in its range at the command line: exit status 2 and one line naming the flag, before
any trace is read or anything is trained (a NaN learning rate used to train a NaN policy
silently; an infinite one trained a run)."""

from __future__ import annotations

import pytest

from jaxsched.cli import main as cli
from jaxsched.cli.args import finite_float, nonneg_float, positive_float
from jaxsched.errors import ConfigError
from jaxsched.train.a2c import A2CConfig
from jaxsched.train.ppo_config import PPOConfig

TRACE = "no-such-trace.swf"  # never read: the flags are refused first

BAD = [
    ("rlscheduler", [TRACE], "--pi-lr", ["nan", "inf", "-1e-3", "x"]),
    ("rlscheduler", [TRACE], "--vf-lr", ["nan", "-1"]),
    ("rlscheduler", [TRACE], "--lr-end-fraction", ["nan"]),
    ("rlscheduler", [TRACE], "--lr-anneal-epochs", ["-3"]),
    ("schedinspector", [TRACE], "--pi-lr", ["nan", "-inf"]),
    ("schedinspector", [TRACE], "--vf-lr", ["inf"]),
    ("schedinspector", [TRACE], "--max-util-loss", ["nan", "-1"]),
    ("splitwindow", [TRACE], "--lr", ["nan", "-0.1"]),
    ("splitwindow", [TRACE], "--target-kl", ["0", "nan"]),
    ("dras", [TRACE], "--lr", ["nan", "-1"]),
    ("dras", [TRACE], "--load", ["0", "inf"]),
    ("a2c", [], "--lr", ["nan", "-1"]),
    ("a2c", [], "--entropy-coef", ["nan"]),
    ("a2c", [], "--value-coef", ["-0.5"]),
    ("a2c", [], "--gamma", ["nan"]),
    ("a2c", [], "--rate", ["inf"]),
]


@pytest.mark.parametrize(
    "system,pos,flag,value",
    [(s, p, f, v) for s, p, f, vals in BAD for v in vals],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_bad_value_is_one_line_naming_the_flag(system, pos, flag, value, tmp_path, capsys):
    argv = ["train", system, *pos, f"{flag}={value}", "--epochs", "1", "--out", str(tmp_path / "r")]
    assert cli(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"jaxsched: error: argument {flag}: expected a"), line
    assert not (tmp_path / "r").exists()


def test_float_types():
    assert finite_float("-2.5") == -2.5 and nonneg_float("0") == 0.0 and positive_float("1e-4")
    for f, text in [(finite_float, "nan"), (nonneg_float, "-1"), (positive_float, "0")]:
        with pytest.raises(Exception, match=repr(text)):
            f(text)


@pytest.mark.parametrize("kw", [{"pi_lr": float("nan")}, {"vf_lr": float("inf")}])
def test_ppo_config_refuses_a_non_finite_learning_rate(kw):
    with pytest.raises(ConfigError, match="learning rates must be finite"):
        PPOConfig(**kw)


@pytest.mark.parametrize("name", ["lr", "entropy_coef", "value_coef"])
def test_a2c_config_refuses_nan(name):
    with pytest.raises(ConfigError, match=name):
        A2CConfig(**{name: float("nan")})
