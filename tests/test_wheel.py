"""What is shipped works outside the checkout: build the wheel, unpack it into a folder away from
the checkout, and run the ``jaxsched`` command from there (the dependencies are this test
environment's; the jaxsched code, the default trace and the shipped models come only from the
wheel)."""

import os
import subprocess
import sys
import zipfile
from importlib import metadata

import pytest
from shared_data import REPO

#: pyproject.toml's build-system: setuptools>=77
SETUPTOOLS_MAJOR = 77


def _has_build_backend() -> bool:
    """Whether this environment has the build backend pyproject.toml asks for (the test extra
    installs it): then the wheel is built here, in about 2 s, instead of in an isolated
    environment that pip first fills with a fresh setuptools (about 9 s, and the network)."""
    try:
        return int(metadata.version("setuptools").split(".")[0]) >= SETUPTOOLS_MAJOR
    except metadata.PackageNotFoundError:
        return False


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(environment, folder): the wheel's files unpacked into ``site``, first on PYTHONPATH."""
    tmp = tmp_path_factory.mktemp("wheel")
    here = ["--no-build-isolation"] if _has_build_backend() else []
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *here,
         "-q", "-w", str(tmp), str(REPO)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert build.returncode == 0, f"cannot build the wheel: {build.stderr.strip()[-300:]}"
    (wheel,) = tmp.glob("jaxsched-*.whl")
    site = tmp / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site), JAXSCHED_DATA=str(tmp / "data"))
    env["JAXSCHED_CACHE"] = "off"
    return env, tmp


def _jaxsched(installed, *args):
    env, cwd = installed
    code = "import sys; from jaxsched.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_wheel_holds_the_models_and_no_checkout_files(installed):
    env, tmp = installed
    site = tmp / "site" / "jaxsched"
    assert (site / "models" / "lublin1-none" / "run.json").is_file()
    assert list((site / "models" / "lublin1-bf-fast").glob("*.ckpt"))
    assert not (tmp / "site" / "traces").exists() and not (tmp / "site" / "tests").exists()


def test_runs_outside_the_checkout(installed):
    env, tmp = installed
    where = subprocess.run(
        [sys.executable, "-c", "import jaxsched; print(jaxsched.__file__)"],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(tmp / "site")), where.stdout + where.stderr
    r = _jaxsched(installed, "demo", "--help")
    assert r.returncode == 0 and "usage: jaxsched demo" in r.stdout
    trace = subprocess.run(
        [sys.executable, "-c", "from jaxsched.workload import *; print(default_trace_path())"],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert trace == str(tmp / "data" / "traces" / "lublin-1.swf")
    r = _jaxsched(
        installed,
        "evaluate", trace, "--compat", "rlscheduler", "--policy", "sjf", "--backfill", "none",
        "--sequences", "1", "--jobs", "128", "--model", "lublin1-none",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = [ln.split()[0] for ln in r.stdout.splitlines() if ln.strip()]
    assert "sjf" in rows and "rl" in rows, r.stdout  # the model row is named rl
