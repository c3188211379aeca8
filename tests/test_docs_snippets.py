"""The "Try it" snippet of every system page runs as printed (from the top of the checkout).

Extended tier: each snippet compiles an environment step. The cheaper tests of the suite that
run the same code are the environment contract tests (tests/envs/test_rlscheduler.py,
test_schedinspector*.py, test_splitwindow.py, test_dras_env.py, test_datacenter_env.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from shared_data import REPO

PAGES = sorted((REPO / "docs" / "systems").glob("*.md"))
SNIPPET = re.compile(r"## Try it\n.*?```python\n(.*?)```", re.S)


def snippet(page) -> str:
    m = SNIPPET.search(page.read_text())
    assert m, f"{page.name}: no '## Try it' python block"
    return m.group(1)


def test_every_system_page_has_a_short_snippet():
    for page in PAGES:
        code = snippet(page)
        assert len(code.splitlines()) <= 16, page.name


@pytest.mark.extended
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_snippet_runs(page):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", snippet(page)], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip(), "the snippet prints its result"
