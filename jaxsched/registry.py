"""Named environments: ``jaxsched.make(name, **overrides)`` and ``jaxsched.registered()``.

A name is ``"<system>/<trace>[-<setting>]"`` for the bundled trace (``lublin-1``: the
checkout's ``traces/lublin-1.swf``, regenerated bit for bit on first use where the package is
installed without a checkout, :mod:`jaxsched.workload.bundled`), or ``"<system>:<PATH>"`` for
any SWF file with that system's default setting; ``trace=PATH`` overrides a named setting's
trace. Every environment is built the way its system's ``jaxsched train`` builds it: from
the system's :class:`RunConfig` (``jaxsched/systems/<system>/config.py``) and its
``make_env``/``build_env``; the other ``overrides`` are ``RunConfig`` fields (e.g.
``length=64``, ``max_queue=16``, ``backfill="easy"``).

Which settings are static: every override shapes the compiled program (the environment's
configuration is its pytree's static part, or its arrays' shapes); there is no per-reset
parameter yet (:mod:`jaxsched.envs.interfaces.gymnax_env`'s ``EnvParams`` is empty). The episode
(the trace window) is drawn at ``reset(key)`` or named with ``reset_at(start)``.

=============================  ==========================================================
name                           setting (the paper's, on the bundled trace)
=============================  ==========================================================
rlscheduler/lublin-1           RLScheduler: 256-job sequences, 128 slots, bsld, no backfill
rlscheduler/lublin-1-bf        the same with the reference's backfilling
schedinspector/lublin-1        SchedInspector over SJF, bsld, 128-job sequences
splitwindow/lublin-1           split window, 10 head + 10 tail slots
splitwindow/lublin-1-head      split window, 20 head slots (the head-only baseline window)
a2cscheduler/synthetic         A2cScheduler's data centre on its synthetic jobsets (rate 0.7)
a2cscheduler/lublin-1          the same data centre fed from the trace
dras/lublin-1                  DRAS-PG (CQSim mode, code runtime), 256-job windows
dras-dql/lublin-1              DRAS-DQL, 256-job windows
=============================  ==========================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from jaxsched.errors import ConfigError
from jaxsched.precision import scoped

__all__ = ["make", "registered", "SETTINGS", "gym_id", "register_gymnasium"]


def _trace(path):
    if path:
        return str(path)
    from jaxsched.workload.bundled import default_trace_path

    return str(default_trace_path())


def _config(cls, trace, fields: dict, overrides: dict, extra=()):
    """``cls(trace=..., **fields, **overrides)``; an override that is no field of ``cls`` (nor
    in ``extra``) is a ConfigError naming the fields."""
    names = {f.name for f in dataclasses.fields(cls)}
    bad = sorted(set(overrides) - names - set(extra))
    if bad:
        raise ConfigError(
            f"unknown setting(s) {', '.join(bad)} for {cls.__module__}.{cls.__name__}; "
            f"known: {', '.join(sorted(names | set(extra)))}"
        )
    kw = {**fields, **{k: v for k, v in overrides.items() if k in names}}
    if "trace" in names:
        kw["trace"] = trace
    return cls(**kw)


def _rlscheduler(trace, fields, overrides):
    from jaxsched.systems.rlscheduler.config import RunConfig, make_env
    from jaxsched.workload import read_swf

    rc = _config(RunConfig, _trace(trace), fields, overrides)
    return make_env(read_swf(rc.trace).jobs(rc.rules), rc)


def _schedinspector(trace, fields, overrides):
    from jaxsched.systems.schedinspector.config import RunConfig, load_jobs, make_env

    rc = _config(RunConfig, _trace(trace), fields, overrides)
    jobs, wait = load_jobs(rc.trace, rc.mode)
    return make_env(rc, jobs, wait)


def _splitwindow(trace, fields, overrides):
    from jaxsched.systems.splitwindow.config import RunConfig, make_env
    from jaxsched.workload import read_swf

    rc = _config(RunConfig, _trace(trace), fields, overrides)
    return make_env(read_swf(rc.trace).jobs("rlscheduler"), rc)


def _a2cscheduler(trace, fields, overrides):
    from jaxsched.systems.a2cscheduler.config import RunConfig, build_env

    fields = dict(fields)
    if trace is not None or fields.pop("bundled", False):
        fields["trace"] = _trace(trace)
    return build_env(_config(RunConfig, None, fields, overrides))


def _dras(trace, fields, overrides):
    from jaxsched.systems.dras.config import RunConfig, env_jobs
    from jaxsched.systems.dras.evaluate import env_class, env_options
    from jaxsched.workload import read_swf

    overrides = dict(overrides)
    length = int(overrides.pop("length", 256))
    rc = _config(RunConfig, _trace(trace), fields, overrides)
    jobs = read_swf(rc.trace).jobs("rlscheduler")
    q = min(int(rc.queue_cap), length)
    return env_class(rc)(env_jobs(jobs, rc.priority), length=length, queue_cap=q, **env_options(rc))


#: system -> builder(trace or None, fields, overrides)
_BUILDERS: dict[str, Callable] = {
    "rlscheduler": _rlscheduler,
    "schedinspector": _schedinspector,
    "splitwindow": _splitwindow,
    "a2cscheduler": _a2cscheduler,
    "dras": _dras,
    "dras-dql": lambda t, f, o: _dras(t, {"variant": "dql", **f}, o),
}

#: name -> (system, RunConfig fields) of the registered settings
SETTINGS: dict[str, tuple[str, dict]] = {
    "rlscheduler/lublin-1": ("rlscheduler", {"backfill": "none"}),
    "rlscheduler/lublin-1-bf": ("rlscheduler", {"backfill": "rlscheduler"}),
    "schedinspector/lublin-1": ("schedinspector", {"base": "sjf", "metric": "bsld"}),
    "splitwindow/lublin-1": ("splitwindow", {"head": 10, "tail": 10}),
    "splitwindow/lublin-1-head": ("splitwindow", {"head": 20, "tail": 0}),
    "a2cscheduler/synthetic": ("a2cscheduler", {}),
    "a2cscheduler/lublin-1": ("a2cscheduler", {"bundled": True}),
    "dras/lublin-1": ("dras", {}),
    "dras-dql/lublin-1": ("dras-dql", {}),
}

#: the defaults of ``"<system>:PATH"`` names (the system's own defaults otherwise)
_PATH_DEFAULTS = {"splitwindow": {"head": 10, "tail": 10}}


def registered() -> list[str]:
    """The registered names (``"<system>:PATH"`` works for every system besides)."""
    return sorted(SETTINGS)


def systems() -> list[str]:
    """The systems a ``"<system>:PATH"`` name may start with."""
    return sorted(_BUILDERS)


@scoped
def make(name: str, **overrides):
    """The environment ``name`` (see the module docstring) with ``overrides`` applied
    (``trace=PATH`` replaces the trace; the others are the system's RunConfig fields)."""
    trace = overrides.pop("trace", None)
    if name in SETTINGS:
        system, fields = SETTINGS[name]
    elif ":" in name and name.split(":", 1)[0] in _BUILDERS:
        system, path = name.split(":", 1)
        fields, trace = dict(_PATH_DEFAULTS.get(system, {})), trace or path
    else:
        raise ConfigError(
            f"no environment {name!r}; registered: {', '.join(registered())}; or "
            f"'<system>:PATH' with a system among {', '.join(systems())}"
        )
    return _BUILDERS[system](trace, fields, overrides)


def gym_id(name: str) -> str:
    """The Gymnasium id of a registered name: ``"jaxsched/<system>-<setting>-v0"``."""
    return "jaxsched/" + name.replace("/", "-") + "-v0"


def gymnasium_env(name: str, **overrides):
    """The Gymnasium view (:class:`jaxsched.envs.interfaces.gymnasium_env.GymnasiumEnv`) of
    ``make(name, **overrides)``: the entry point :func:`register_gymnasium` registers."""
    from jaxsched.envs.interfaces.gymnasium_env import GymnasiumEnv

    return GymnasiumEnv(make(name, **overrides))


def register_gymnasium() -> list[str]:
    """Register every :func:`registered` name with ``gymnasium.register`` (again is a no-op;
    gymnasium is optional); returns the ids. ``gymnasium.make(id, **overrides)`` passes the
    overrides to :func:`make`."""
    import gymnasium

    ids = []
    for name in registered():
        i = gym_id(name)
        if i not in gymnasium.registry:
            gymnasium.register(id=i, entry_point=gymnasium_env, kwargs={"name": name})
        ids.append(i)
    return ids
