"""DRASDQLEnv: the DRAS-DQL decision loop (spec dras.md §2.6, code mode) as an environment of
the contract, on the CQSim engine's DQL mode (:data:`~jaxsched.sim.cqsim.types.BF_DQL`).

Like :class:`~jaxsched.envs.dras.DRASEnv` a step is one decision over a window of waiting jobs
(level 1) or back-fill candidates (level 2), but: no persistent reservation (level 1 is asked at
every scheduling instance and may start any waiting job ahead of the oldest); the oldest job is
reserved whenever a level-1 pick does not fit, and level 2 then picks among the jobs that fit
around it.  Window: the first ``W = 50`` waiting jobs / candidates — the paper's W; the code
scores the whole queue (``use_window = 0``), which is the same whenever at most 50 wait (a
documented deviation, spec §12.3: a fixed width keeps one compiled network call per decision).

Observation: ``obs`` float32 ``[W, 2 + N, 2]`` — slot k's DQL input (spec §3: ``[n, t]``,
``[priority, wait]`` then the node rows), zero for empty slots; ``mask`` bool ``[W]``;
``phase`` int32 (1, 2; 0 when done).

``loop="paper"``: the paper's loop instead (spec §2.4; the engine's
:data:`~jaxsched.sim.cqsim.types.BF_DRAS_PAPER`): the level-1 pick that does not fit, not the
oldest job, is reserved for the pass. ``loop="persistent"``: the PG code loop (§2.5, the
engine's ``BF_DRAS``): the oldest job keeps its reservation until it starts.

Reward (the code's type 5 with the code's timing, §6.2): recorded *after the start* — a
level-1 pick that fits gets :func:`type5_after` with the free nodes after it starts and the
longest wait before the pick; a level-1 pick that does not fit is not recorded (reward 0,
``extras["recorded"]`` 0); a level-2 pick is scored with the free nodes after *all* the pass's
chosen jobs start, which only the end of level 2 knows: the step returns the value with the
free nodes after this pick alone (exact for the pass's last pick) and a learner that needs the
exact values patches the pass's level-2 rewards when it ends
(:mod:`jaxsched.systems.dras.trainer_dql`, from :meth:`DRASDQLEnv.reward_parts`).

``reward_fn`` other than :func:`~jaxsched.envs.dras.reward_type5` (the paper's Eq. 1 or Eq. 2,
:data:`~jaxsched.envs.dras.REWARDS`; the paper's reward for both variants, spec §6.1): the
reward of every decision is ``reward_fn`` at the decision, as for DRAS-PG, and every decision
is recorded (:attr:`DRASDQLEnv.code_timing` False; nothing to patch).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxsched.envs.dras import (
    DRASEnv,
    DRASObservation,
    DRASState,
    W,
    queue_max_wait,
    reward_type5,
)
from jaxsched.envs.dras_features import code_reward, dql_observations
from jaxsched.sim.cqsim import engine as CE
from jaxsched.sim.cqsim.types import BF_DQL, BF_DRAS, BF_DRAS_PAPER, LEVEL2

__all__ = ["DRASDQLEnv", "type5_after"]


def type5_after(n, wait, free_after, n_nodes, mwait) -> jax.Array:
    """The code's type-5 reward recorded after the start: ``free_after`` idle nodes once the
    pick (and for level 2 the pass's other chosen jobs) started (float32)."""
    return code_reward(n, wait, free_after, n_nodes, mwait)


class DRASDQLEnv(DRASEnv):
    """See the module docstring; arguments as :class:`~jaxsched.envs.dras.DRASEnv` (its
    ``reward_fn`` the default :func:`~jaxsched.envs.dras.reward_type5` is the code's type 5
    with the DQL timing, any other is taken at each decision as by DRAS-PG); ``loop``
    ``"code"`` is the code's DQL loop (§2.6), ``"paper"`` the paper's loop (§2.4, the same for
    both variants: the non-fitting pick reserved for one pass), ``"persistent"`` the PG code
    loop's persistent reservation of the oldest job (§2.5; in neither DQL source)."""

    LOOPS = {"code": BF_DQL, "persistent": BF_DRAS, "paper": BF_DRAS_PAPER}

    def reward_parts(self, s: DRASState, action):
        """For the job at window slot ``action``: float32 ``(n, wait, max_wait)`` and int32 free
        nodes now (max_wait over the queue now, the reward's t_max before any start)."""
        seq, _ = self._seq(s.start)
        st = s.sim
        win, cnt = CE.window(st, W)
        slot = jnp.clip(jnp.asarray(action, jnp.int32), 0, jnp.maximum(cnt - 1, 0))
        job = jnp.maximum(win[slot], 0)
        f = jnp.float32
        n = seq.nodes[job]
        return n.astype(f), (st.t - seq.submit[job]).astype(f), queue_max_wait(seq, st), st.free

    @property
    def code_timing(self) -> bool:
        """True for the code's type-5 reward recorded after the start (level-2 rewards patched
        when the pass ends); False for a paper reward taken at every decision."""
        return self._config.reward_fn is reward_type5

    def transition(self, s: DRASState, action):
        if not self.code_timing:
            s2, r, term, trunc, extras = super().transition(s, action)
            rec = (~s.sim.done).astype(jnp.float32)
            return s2, r, term, trunc, dict(extras, recorded=rec)
        n, wait, mwait, free = self.reward_parts(s, action)
        fits = free >= n.astype(free.dtype)
        lvl2 = s.sim.phase == LEVEL2
        rec = ~s.sim.done & (lvl2 | fits)
        r = type5_after(n, wait, free - n.astype(free.dtype), self._config.num_nodes, mwait)
        s2, _, term, trunc, extras = super().transition(s, action)
        extras = dict(extras, recorded=rec.astype(jnp.float32))
        return s2, jnp.where(rec, r, 0.0).astype(jnp.float32), term, trunc, extras

    def reset_extras(self, s: DRASState) -> dict:
        return dict(super().reset_extras(s), recorded=jnp.float32(0))

    def observe(self, s: DRASState) -> DRASObservation:
        seq, _ = self._seq(s.start)
        st = s.sim
        win, cnt = CE.window(st, W)
        jobs = (seq.nodes, seq.req, st.priority, seq.submit)
        x = dql_observations(jnp.maximum(win, 0), jobs, st.node_owner, st.node_end, st.t)
        valid = jnp.arange(W) < cnt
        x = jnp.where(valid[:, None, None], x, 0.0)
        mask = valid.at[0].set(True)  # a finished episode still offers one (ignored) action
        phase = jnp.where(st.done, 0, st.phase).astype(jnp.int32)
        return DRASObservation(mask=mask, obs=x, phase=phase)
