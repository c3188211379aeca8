"""A plain-Python oracle of the data-centre cluster (no JAX, no numpy state): the rules of
:mod:`jaxsched.sim.datacenter.cluster` written as straight loops over Python lists, for
property tests and for reference-format files the tests generate (:func:`episode`).

Agents are functions ``agent(oracle) -> action``; :func:`greedy` builds the baselines.
"""

from __future__ import annotations

from jaxsched.sim.datacenter.types import DCParams

__all__ = ["Oracle", "greedy", "episode"]


class Oracle:
    """One cluster; ``lens`` [S] and ``dems`` [S][d] lists of ints (see ``DCParams``)."""

    def __init__(self, p: DCParams, lens, dems):
        self.p, self.lens, self.dems = p, [int(x) for x in lens], [list(map(int, d)) for d in dems]
        self.t, self.steps, self.stale, self.end = 0, 0, 0, "running"
        self.avail = [[p.res_slot] * p.num_res for _ in range(p.horizon)]
        self.slots, self.backlog, self.run = [None] * p.num_slots, [], []
        self.start, self.finish, self.decided = {}, {}, {}
        self.recorded, self.dropped, self.since_new = [], 0, 0
        if not p.deeprm:
            self._arrive()

    def _fits(self, e, tau):
        ln, dm = self.lens[e], self.dems[e]
        rows = self.avail[tau : tau + ln]
        return all(all(a >= d for a, d in zip(row, dm)) for row in rows)

    def fits_now(self, i) -> bool:
        return self.slots[i] is not None and self._fits(self.slots[i], 0)

    def _allocate(self, i) -> bool:
        e = self.slots[i]
        if e is None:
            return False
        taus = range(self.p.horizon - self.lens[e]) if self.p.future else [0]
        tau = next(
            (t for t in taus if t < self.p.horizon - self.lens[e] and self._fits(e, t)), None
        )
        if tau is None:
            return False
        for row in self.avail[tau : tau + self.lens[e]]:
            for r in range(self.p.num_res):
                row[r] -= self.dems[e][r]
        self.start[e], self.finish[e] = self.t + tau, self.t + tau + self.lens[e]
        self.decided[e] = self.t
        self.run.append(e)
        self.slots[i] = self.backlog.pop(0) if self.backlog else None
        return True

    def _arrive(self):
        e = self.t
        if e >= self.p.simu_len or self.lens[e] <= 0:
            return
        self.since_new = 0
        if None in self.slots:
            self.slots[self.slots.index(None)] = e
        elif len(self.backlog) < self.p.backlog_size:
            self.backlog.append(e)
        else:
            self.dropped += 1
            return
        self.recorded.append(e)

    def _advance(self) -> float:
        p = self.p
        self.t += 1
        self.avail = self.avail[1:] + [[p.res_slot] * p.num_res]
        self.since_new = min(self.since_new + 1, p.max_track_since_new)
        kept, skip = [], False
        for e in self.run:  # the reference prunes while iterating: it skips after a removal
            done = self.finish[e] <= self.t
            if done and not skip:
                skip = p.deeprm
                continue
            skip = False
            kept.append(e)
            self.stale += done
        self.run = kept
        empty = not self.run and all(s is None for s in self.slots) and not self.backlog
        if p.end == "no_new_job" and self.t >= p.simu_len:
            self.end = "no_new_job"
        elif p.end == "all_done" and self.t >= p.simu_len and empty:
            self.end = "all_done"
        elif p.end == "all_done" and p.time_cap and self.t > p.time_cap:
            self.end = "time_cap"
        else:
            self._arrive()
        slot_jobs = [e for e in self.slots if e is not None]
        return (
            sum(p.delay_penalty / self.lens[e] for e in self.run)
            + sum(p.hold_penalty / self.lens[e] for e in slot_jobs)
            + sum(p.dismiss_penalty / self.lens[e] for e in self.backlog)
        )

    def step(self, a) -> tuple[float, bool]:
        """One action: ``(reward, allocated)``."""
        placed = 0 <= a < self.p.num_slots and self._allocate(a)
        reward = 0.0 if placed else self._advance()
        self.steps += 1
        if self.end == "running" and self.p.step_cap and self.steps >= self.p.step_cap:
            self.end = "step_cap"
        return reward, placed


def greedy(score):
    """A baseline: the fitting slot with the largest ``score(oracle, entry)`` (first on ties),
    else void."""

    def agent(o: Oracle) -> int:
        best, act = None, o.p.num_slots
        for i, e in enumerate(o.slots):
            if o.fits_now(i) and (best is None or score(o, e) > best):
                best, act = score(o, e), i
        return act

    return agent


def episode(p: DCParams, lens, dems, agent, max_steps: int = 10_000) -> dict:
    """One episode as a run of a ``deeprm-reference`` file (actions, kinds, rewards, jobs,
    steps, final_time, terminated, counts; see shared/reference/deeprm/README.md)."""
    o = Oracle(p, lens, dems)
    actions, kinds, rewards = [], "", []
    while o.end == "running" and len(actions) < max_steps:
        a = int(agent(o))
        r, placed = o.step(a)
        actions.append(a)
        kinds += "A" if placed else "M"
        rewards += [] if placed else [r]
    jobs = [[e, o.start.get(e, -1), o.finish.get(e, -1), o.lens[e], o.decided.get(e, -1)]
            for e in o.recorded]  # fmt: skip
    return dict(actions=actions, kinds=kinds, rewards=rewards, jobs=jobs, steps=o.steps,
                final_time=o.t, terminated=o.end, num_arrivals=len(jobs) + o.dropped,
                num_dropped=o.dropped, num_jobs=len(jobs), stale_job_steps=o.stale)  # fmt: skip
