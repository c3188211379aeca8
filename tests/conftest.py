"""Shared pytest fixtures."""

from __future__ import annotations

import contextlib
import os

import pytest
from shared_data import REPO

FULL_OPT = "xla_full_opt"

#: the extended tier: ``make test`` (the suite, ``-m "not extended"``, which CI runs and which
#: has a 10-minute goal on the 2-core CI machine) leaves these out; ``make test-all`` runs
#: every test.  The suite is compile-bound (docs/notebook/25-test-suite-time.md), so the tier
#: holds expensive tests whose code is also run by a cheaper test of the suite: the benchmark
#: and experiment scripts end to end at realistic sizes, shipped models' published figures,
#: the two-device subprocesses, and the second and third settings of a parametrised equality
#: whose first setting stays in the suite.  Each marked test names its cheaper sibling.
EXTENDED = "extended"
EXTENDED_RULE = (
    "expensive, its code also run by a cheaper test of the suite: left out of `make test` "
    "(the suite CI runs), run by `make test-all`"
)


def _x64_for_the_suite() -> None:
    """The suite runs with JAX's 64-bit mode on for the whole process, as every jaxsched
    process did before importing jaxsched stopped turning it on (jaxsched/precision.py): the
    oracle and conformance tests compare the engine's int64/float64 values directly.
    tests/ecosystem/ checks the 32-bit side in fresh processes."""
    import jax

    jax.config.update("jax_enable_x64", True)


def _optimisations_off() -> bool:
    return os.environ.get("JAXSCHED_TEST_XLA_OPT", "").lower() != "full"


def pytest_configure(config):
    """XLA compiles the tests' programs with most optimisations off (about a third less compile
    time, which is most of the suite's time; the results are the same programs' results, and
    benchmarks and the ``jaxsched`` commands keep full optimisation), except in tests marked
    ``xla_full_opt`` (those that mostly *run* long simulations: there the optimised program is
    3-4x faster, which outweighs its longer compile); ``JAXSCHED_TEST_XLA_OPT=full`` runs the
    whole suite fully optimised.  XLA:CPU's fusion emitters are off, then the compile cache."""
    config.addinivalue_line(
        "markers", f"{FULL_OPT}: compile this test's programs with XLA's full optimisation"
    )
    config.addinivalue_line("markers", f"{EXTENDED}: {EXTENDED_RULE}")
    _x64_for_the_suite()
    _no_fusion_emitters()
    if _optimisations_off():
        _set_optimisations(off=True)
    _enable_compile_cache()


#: XLA:CPU's newer fusion emitters, off for the whole suite (XLA_FLAGS, which XLA reads once
#: per process; the commands the tests start inherit it): measured on the 2-core machine with
#: cold caches, a compile-bound unoptimised test took 18.7 -> 12.5 s, the fully optimised
#: conformance replay 23 -> 15 s (the programs run up to 30 % slower, which the suite's short
#: runs do not notice: benchmarks/experiments/fusion_emitters.py, RESULTS.md §5). A value the caller set
#: in XLA_FLAGS is kept.
NO_FUSION_EMITTERS = "--xla_cpu_use_fusion_emitters=false"


def _no_fusion_emitters() -> None:
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_use_fusion_emitters" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {NO_FUSION_EMITTERS}".strip()


def _set_optimisations(off: bool) -> None:
    """JAX's switch, read at each compile; the environment variable for the commands a test
    starts in a subprocess."""
    os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1" if off else "0"
    import jax

    jax.config.update("jax_disable_most_optimizations", off)


@contextlib.contextmanager
def _full_opt_if_marked(item):
    marked = _optimisations_off() and item.get_closest_marker(FULL_OPT) is not None
    if marked:
        _set_optimisations(off=False)
    try:
        yield
    finally:
        if marked:
            _set_optimisations(off=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):  # module fixtures are built in the first test's setup
    with _full_opt_if_marked(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with _full_opt_if_marked(item):
        yield


def _enable_compile_cache():
    """Keep XLA's compiled programs of the test run in ``.cache/xla-tests`` (JAX's persistent
    compilation cache): tests that rebuild the same program (new closures, new processes, the
    other pytest-xdist worker) and a second run of the suite skip the compile; the ``jaxsched``
    commands the tests run use the same folder. With ``filelock`` installed (a dependency) the
    workers share one folder under JAX's file lock, else each has its own.
    ``JAXSCHED_TEST_CACHE=off`` disables it (for the commands the tests run too)."""
    where = os.environ.get("JAXSCHED_TEST_CACHE", str(REPO / ".cache" / "xla-tests"))
    if where.lower() in ("off", "0", "none", ""):
        os.environ["JAXSCHED_CACHE"] = "off"  # nor the commands' own cache in ~/.cache
        return
    try:
        import filelock  # noqa: F401
    except ImportError:  # no lock: no two processes may write the same cache files
        where = os.path.join(where, os.environ.get("PYTEST_XDIST_WORKER", "main"))
    os.environ["JAXSCHED_CACHE"] = where  # the commands the tests run use it too
    from jaxsched.compile_cache import use_cache_dir

    use_cache_dir(where, 0.2)


#: the longest test files (each 30-60 s of the 2-core CI machine's worker time, measured by
#: ``--durations=0`` in notebook §25.10), run first, longest first: ``make test`` hands whole
#: files to the two pytest-xdist workers in collection order (``--dist loadfile
#: --no-loadscope-reorder``), so these alternate between the workers at the start instead of
#: one of them being left alone with a long file at the end
LONGEST_FILES = (
    "tests/systems/rlscheduler/test_filter.py",
    "tests/systems/rlscheduler/test_train_run.py",
    "tests/systems/splitwindow/test_train_splitwindow.py",
    "tests/systems/a2cscheduler/test_a2c_system.py",
    "tests/envs/test_rlscheduler_fast.py",
    "tests/train/test_async_rollout.py",
    "tests/sim/test_engine.py",
    "tests/conformance/test_conformance.py",
    "tests/benchmarks/test_benchmarks_smoke.py",
    "tests/systems/rlscheduler/test_train_split.py",
    "tests/cli/test_cli_trace.py",
    "tests/sim/test_cqsim_engine.py",
    "tests/envs/test_rlscheduler.py",
    "tests/envs/test_schedinspector.py",
    "tests/envs/test_dras_env.py",
    "tests/envs/test_splitwindow.py",
    "tests/train/test_ppo.py",
    "tests/test_wheel.py",
)


def pytest_collection_modifyitems(config, items):
    """Collection order, except that the files of :data:`LONGEST_FILES` come first, longest
    first (a stable sort: the tests inside a file keep their order)."""
    rank = {f: k for k, f in enumerate(LONGEST_FILES)}
    items.sort(key=lambda i: rank.get(i.nodeid.split("::")[0], len(rank)))


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
