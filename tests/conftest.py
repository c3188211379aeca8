"""Shared pytest fixtures."""
from __future__ import annotations

import contextlib

import pytest


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
