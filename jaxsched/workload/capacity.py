"""Static capacities that no run can exceed, computed from a trace on the host.

An environment simulates windows of ``length`` consecutive jobs of one trace. The running list
of its engine needs one slot per job that runs at once, and the jobs that run at once are some
of the window's jobs whose node demands sum to at most the machine's nodes. The most such jobs
are the window's smallest ones, so :func:`running_capacity` (the largest count over every
window) is a capacity that a running list can never outgrow, whatever the policy.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["running_capacity"]

#: windows sorted per numpy call (int64 temporaries of about 16 MiB each at length 256)
_CHUNK = 8192
#: the most window elements sorted (3.0 s on the 2-core development CPU when no window reaches
#: ``min(length, nodes)`` early: 100,000 jobs of 2-39 nodes in 2,000-job windows); beyond it
#: the bound is taken over the whole trace at once, which no window exceeds either
_BUDGET = 2 * 10**8


def running_capacity(nodes, num_nodes: int, length: int) -> int:
    """The most jobs that can run at once in any window of ``length`` consecutive jobs.

    Args:
      nodes: int ``[n]`` node demand per job, in trace order (``n >= length``).
      num_nodes: the machine's nodes. length: jobs per window.
    Returns:
      int in ``[1, length]``: the largest, over the ``n - length + 1`` windows, number of the
      window's smallest jobs whose demands sum to at most ``num_nodes``; ``length`` when a
      job demands no node (any number of those could run). When the windows hold more than
      ``_BUDGET`` elements in all, the same count over the whole trace (capped at
      ``length``), a looser bound that is still never exceeded.
    """
    nodes = np.asarray(nodes, np.int64)
    if length < 1 or nodes.shape[0] < length:
        raise ValueError(f"need windows of 1 to {nodes.shape[0]} jobs, got {length}")
    if (nodes < 1).any():
        return int(length)
    most = min(length, int(num_nodes))  # every job needs a node: no window can do better
    if (nodes.shape[0] - length + 1) * length > _BUDGET:
        whole = np.cumsum(np.sort(nodes)) <= num_nodes
        return max(min(int(whole.sum()), most), 1)
    windows = sliding_window_view(np.minimum(nodes, num_nodes + 1), length)
    best = 0
    for lo in range(0, windows.shape[0], _CHUNK):
        part = np.sort(windows[lo : lo + _CHUNK], axis=1)
        fits = np.cumsum(part, axis=1) <= num_nodes
        best = max(best, int(fits.sum(axis=1).max()))
        if best >= most:
            break
    return max(best, 1)
