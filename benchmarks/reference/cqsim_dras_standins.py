"""Stand-ins that let CQSim's DRAS branch (SPEAR-UIC/CQSim-DRAS, commit 273f903, ``PG/``) run
here with the reference README's fixed policies in place of its neural network (issue 46).

The branch imports TensorFlow 1.x and Keras at the top of ``CqSim/Cqsim_sim.py`` and
``CqSim/Reinforcement_learning.py``; neither is installed (nor installable) here, and with a
fixed policy neither is used. This module, written for jaxsched (no CQSim code in it), is
imported by the child process that ``benchmarks/reference/cqsim_reference.py`` starts in a temporary copy
of ``PG/``:

* :func:`install_standins` puts empty modules ``tensorflow``, ``keras`` and ``keras.backend``
  in ``sys.modules`` (the real ones are used if they import);
* :func:`patch` replaces the branch's ``Reinforcement_learning.ValueModel`` (the network) by
  :class:`FixedModel` (no network: the window size, no-op ``learn`` and weight loading and
  saving, which the branch calls even with training off) and
  ``Basic_algorithm.compute_score_probabilities`` (the branch's only query of the network, at
  level 1 and level 2 of its DRAS-PG loop) by a one-hot vector of length W at
  :func:`fixed_pick`'s window slot. The branch then draws ``np.random.choice`` from that
  vector, which returns the slot itself (a one-hot cumulative distribution), so the run is
  deterministic.

The policies (reference README, ``../shared/reference/cqsim/README.md``): ``fcfs`` slot 0;
``smallest`` / ``largest`` the window slot with the fewest / most requested nodes, the lowest
slot on ties; the window is the first W waiting jobs (level 1) or candidates (level 2).
"""

from __future__ import annotations

import importlib
import sys
import types

POLICIES = ("fcfs", "smallest", "largest")


def fixed_pick(policy: str, nodes) -> int:
    """The window slot ``policy`` picks among window rows requesting ``nodes`` (non-empty)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown fixed policy {policy!r}; expected one of {', '.join(POLICIES)}")
    nodes = [int(n) for n in nodes]
    if not nodes:
        raise ValueError("fixed_pick: empty window")
    if policy == "fcfs":
        return 0
    key = min(nodes) if policy == "smallest" else max(nodes)
    return nodes.index(key)


def one_hot(policy: str, window_jobs, W: int) -> list:
    """Probabilities of length W (as the network returns them): 1.0 at ``policy``'s slot among
    the first W of ``window_jobs`` (the branch's job dicts, ``reqProc`` = requested nodes)."""
    k = fixed_pick(policy, [j["reqProc"] for j in list(window_jobs)[:W]])
    p = [0.0] * W
    p[k] = 1.0
    return p


def install_standins() -> list:
    """Empty ``tensorflow``, ``keras``, ``keras.backend`` modules where the real ones do not
    import; returns the names installed."""
    installed = []
    for name in ("tensorflow", "keras", "keras.backend"):
        try:
            importlib.import_module(name)
            continue
        except ImportError:
            pass
        mod = types.ModuleType(name)
        mod.__doc__ = (
            "jaxsched stand-in (benchmarks/reference/cqsim_dras_standins.py): nothing in it"
        )
        sys.modules[name] = mod
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, mod)
        installed.append(name)
    return installed


class FixedModel:
    """In place of the branch's ``ValueModel``: what the simulator reads of it (``window_size``,
    ``job_cols``, ``get_window_size``) and no-op training and weight files. Asking it for
    probabilities is an error: :func:`patch` answers those queries."""

    myInfo = "ValueModel"

    def __init__(self, mode=0, debug=None, input_dim_str="2", job_cols=1, window_size=5,
                 hidden_dim_str="", node_module=None, GAMMA=0.99, ALPHA=0.01, fname=""):  # fmt: skip
        self.debug, self.job_cols, self.window_size = debug, job_cols, int(window_size)
        self.n_actions = self.window_size
        self.learn_calls = 0

    def get_window_size(self) -> int:
        return self.window_size

    def learn(self, *args):
        self.learn_calls += 1
        return 0.0

    def load_weights(self, *args):
        return None

    load_weights_complete_filename = save_weights = load_weights

    def get_probabilities(self, state):
        raise RuntimeError("FixedModel: the network was asked; the fixed policy should answer")

    choose_action = get_probabilities


def patch(policy: str, rl_module, alg_module) -> None:
    """Replace ``rl_module.ValueModel`` by :class:`FixedModel` and the query of
    ``alg_module.Basic_algorithm`` by ``policy``'s one-hot choice (see the module docstring)."""
    fixed_pick(policy, [1])  # the name is checked now, not at the first query
    rl_module.ValueModel = FixedModel

    def compute_score_probabilities(self, wait_job, node_struc, currentTime, para_list=None,
                                    epsilon=0.25, backfill=False):  # fmt: skip
        if len(wait_job) <= 0:
            return -1
        if backfill:  # the branch returns no probabilities then
            return [], [None]
        # the second value stands for the feature vector, which only training reads
        return one_hot(policy, wait_job, self.model.window_size), [None]

    alg_module.Basic_algorithm.compute_score_probabilities = compute_score_probabilities
