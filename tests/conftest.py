"""Shared pytest fixtures."""

from __future__ import annotations

import contextlib
import os

import pytest
from shared_data import REPO


def pytest_configure(config):
    """XLA compiles the tests' programs with most optimisations off (about a third less compile
    time, which is most of the suite's time; the results are the same programs' results, and
    benchmarks and the ``jaxsched`` commands keep full optimisation);
    ``JAXSCHED_TEST_XLA_OPT=full`` runs the suite fully optimised.  Then the compile cache."""
    if os.environ.get("JAXSCHED_TEST_XLA_OPT", "").lower() != "full":
        os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"  # also for the commands tests start
        import jax

        jax.config.update("jax_disable_most_optimizations", True)
    _enable_compile_cache()


def _enable_compile_cache():
    """Keep XLA's compiled programs of the test run in ``.cache/xla-tests`` (JAX's persistent
    compilation cache): tests that rebuild the same program (new closures, new processes, the
    other pytest-xdist worker) and a second run of the suite skip the compile; the ``jaxsched``
    commands the tests run use the same folder. With ``filelock`` installed (a dependency) the
    workers share one folder under JAX's file lock, else each has its own.
    ``JAXSCHED_TEST_CACHE=off`` disables it."""
    where = os.environ.get("JAXSCHED_TEST_CACHE", str(REPO / ".cache" / "xla-tests"))
    if where.lower() in ("off", "0", "none", ""):
        return
    try:
        import filelock  # noqa: F401
    except ImportError:  # no lock: no two processes may write the same cache files
        where = os.path.join(where, os.environ.get("PYTEST_XDIST_WORKER", "main"))
    os.environ["JAXSCHED_CACHE"] = where  # the commands the tests run use it too
    from jaxsched.compile_cache import use_cache_dir

    use_cache_dir(where, 0.2)


class _CompileCount:
    """Number of XLA backend compilations seen inside a :func:`count_compilations` block."""

    def __init__(self) -> None:
        self.n = 0
        self.names: list = []


@pytest.fixture
def count_compilations():
    """Context-manager factory counting XLA compilations (any jitted function, AOT
    ``lower().compile()`` included) through JAX's public monitoring hook::

        def test_x(count_compilations):
            with count_compilations() as c:
                f(x)
            assert c.n == 0

    JAX is imported lazily, so modules that do not use the fixture do not import it."""
    import jax.monitoring

    event = "/jax/core/compile/backend_compile_duration"
    active: list = []

    def listener(name, duration, **kwargs):
        if name == event:
            for c in active:
                c.n += 1
                c.names.append(kwargs.get("fun_name"))

    unregister = jax.monitoring.unregister_event_duration_listener
    jax.monitoring.register_event_duration_secs_listener(listener)

    @contextlib.contextmanager
    def counting():
        c = _CompileCount()
        active.append(c)
        try:
            yield c
        finally:
            active.remove(c)

    try:
        yield counting
    finally:
        unregister(listener)
