"""A plain-Python oracle of the split-window environment (reference README rules), written
independently of :mod:`jaxsched.envs.splitwindow`: lists, dicts and Python ints/floats.

``play(jobs, head, tail, policy, start, ...)`` plays one episode and returns the row of the
reference schema (plus ``job_load``) and the decision log; ``document(...)`` writes a whole
file in that schema, so the conformance checker can be run on episodes it has never seen.
"""

from __future__ import annotations


def _window(L, head, tail, overlap):
    slots = [k if k < L else None for k in range(head)]
    for k in range(1, tail + 1):
        p = L - k
        ok = p >= 0 and (p >= head or overlap == "repeat")
        slots.append(p if ok else None)
    return slots


def _policy(obs, policy, head, tail, n):
    m = head + tail
    free = sum(1 for x in obs[:n] if x == 0.0)
    feats = [obs[n + 3 * i : n + 3 * i + 3] for i in range(m)]
    fits = [f[0] > 0 and round(f[0] * n) <= free for f in feats]
    heads = [i for i in range(m) if fits[i] and (i < head or head == 0)]
    if policy == "P1":
        return heads[0] if heads else m
    if policy == "P2":
        ok = [i for i in range(m) if fits[i]]
        return min(ok, key=lambda i: (feats[i][1], i)) if ok else m
    if policy == "P3":
        tails = [i for i in range(head, m) if fits[i]]
        hs = [i for i in range(head) if fits[i]]
        return tails[-1] if tails else (hs[0] if hs else m)
    return 0


class _Sim:
    def __init__(self, jobs, start, n, completions, placements):
        self.sub, self.run, self.c = jobs
        self.n, self.each = n, completions == "each"
        self.t = self.t0 = self.sub[start]
        # the arrival span: until the submit time of the episode's placements-th job
        self.t_win = self.sub[min(start + placements, len(self.sub)) - 1]
        self.win_busy = self.win_q = 0
        self.next, self.start = start, start
        self.cores = [None] * n  # (end, start, tag) or None
        self.queue = []  # trace indices, oldest first
        self.placed = 0
        self.lmax = self.wmax = 0
        self.area_busy = self.area_q = 0
        self.waits, self.bslds, self.loads = [], [], []
        self.event()

    def busy(self):
        return sum(1 for x in self.cores if x is not None)

    def W(self):
        return sum(self.t - self.sub[j] for j in self.queue)

    def maxima(self):
        self.lmax = max(self.lmax, len(self.queue))
        self.wmax = max(self.wmax, self.W())

    def event(self):
        ends = [x[0] for x in self.cores if x is not None]
        fmin = min(ends) if ends else None
        s = self.sub[self.next] if self.next < len(self.sub) else None
        if fmin is None and s is None:
            return False
        arrive = s is not None and (fmin is None or s < fmin)
        te = s if arrive else fmin
        self.area_busy += (te - self.t) * self.busy()
        self.area_q += (te - self.t) * len(self.queue)
        inside = max(0, min(te, self.t_win) - self.t)  # the part of [t, te] before t_win
        self.win_busy += inside * self.busy()
        self.win_q += inside * len(self.queue)
        self.t = te
        if arrive:
            self.queue.append(self.next)
            self.next += 1
        else:
            tags = [x[2] for x in self.cores if x is not None and x[0] == te]
            for i, x in enumerate(self.cores):
                if x is not None and x[0] == te and (not self.each or x[2] == min(tags)):
                    self.cores[i] = None
        self.maxima()
        return True

    def place(self, pos):
        j = self.queue.pop(pos)
        taken = 0
        for i in range(self.n):
            if self.cores[i] is None and taken < self.c[j]:
                self.cores[i] = (self.t + self.run[j], self.t, self.placed)
                taken += 1
        w, r = self.t - self.sub[j], self.run[j]
        self.waits.append(w)
        self.bslds.append(max((w + r) / max(r, 10), 1.0))
        self.loads.append(w * self.c[j] * r)
        self.placed += 1

    def observe(self, head, tail, r_max, overlap):
        sig = [0.0 if x is None else (x[0] - self.t) / r_max for x in self.cores]
        wq = max((self.t - self.sub[j] for j in self.queue), default=0)
        out = list(sig)
        for p in _window(len(self.queue), head, tail, overlap):
            if p is None:
                out += [0.0, 0.0, 0.0]
                continue
            j = self.queue[p]
            wr = (self.t - self.sub[j]) / wq if wq > 0 else 0.0
            out += [self.c[j] / self.n, self.run[j] / r_max, wr]
        return out


def play(jobs, head, tail, policy, start, *, n, placements, weights=(1 / 3,) * 3,
         overlap="distinct", completions="all"):  # fmt: skip
    """One episode: ``(row, log)``; ``jobs`` = (submit, run, cores) lists of ints."""
    r_max = max(jobs[1])
    sim, m = _Sim(jobs, start, n, completions, placements), head + tail
    st = dict(steps=0, fwd=0, invalid=0, inv=0, partial=0, mismatch=0, rsum=0.0)
    log, done = [], False
    while not done:
        t_dec = sim.t
        obs = sim.observe(head, tail, r_max, overlap)
        a = _policy(obs, policy, head, tail, n)
        L = len(sim.queue)
        slots = _window(L, head, tail, overlap)
        zeros = sum(1 for x in obs[:n] if x == 0.0)
        st["mismatch"] += zeros > n - sim.busy()
        st["inv"] += max(0, L - m)
        st["partial"] += L > m
        p = slots[a] if a < m else None
        if p is not None and sim.c[sim.queue[p]] <= n - sim.busy():
            sim.place(p)
            r = 0.0
            done = sim.placed >= placements
        else:
            st["fwd" if a == m else "invalid"] += 1
            lr = L / sim.lmax if sim.lmax > 0 else 0.0
            wr = sim.W() / sim.wmax if sim.wmax > 0 else 0.0
            r = -(weights[0] * (1 - sim.busy() / n) + weights[1] * lr + weights[2] * wr)
            done = not sim.event()
        log.append(dict(k=st["steps"], t=t_dec, queue_len=L, obs=obs,
                        action=a, reward=r, done=done))  # fmt: skip
        st["steps"] += 1
        st["rsum"] += r
    span = sim.t - sim.t0
    arrived = sim.next - sim.start
    qw = [sim.t - sim.sub[j] for j in sim.queue]
    ql = [(sim.t - sim.sub[j]) * sim.c[j] * sim.run[j] for j in sim.queue]
    row = dict(
        config=f"{head}-{tail}", m_head=head, m_tail=tail, policy=policy, start=start,
        steps=st["steps"], fwd=st["fwd"], invalid=st["invalid"], placements=sim.placed,
        reward_sum=st["rsum"], t0=sim.t0, final_clock=sim.t, span=span, arrived=arrived,
        util=sim.area_busy / (n * span), avg_queue_len=sim.area_q / span,
        util_arrival_span=sim.win_busy / (n * (sim.t_win - sim.t0)),
        avg_queue_len_arrival_span=sim.win_q / (sim.t_win - sim.t0),
        avg_wait=(sum(sim.waits) + sum(qw)) / arrived, avg_bsld=sum(sim.bslds) / sim.placed,
        job_load=(sum(sim.loads) + sum(ql)) / span,
        mean_invisible=st["inv"] / st["steps"], partial_fraction=st["partial"] / st["steps"],
        L_max=sim.lmax, W_max=sim.wmax, queue_at_end=len(sim.queue),
        obs_free_mismatch=st["mismatch"], truncated=sim.placed < placements,
    )  # fmt: skip
    return row, log


def _prio_key(sim, pos, prio):
    j = sim.queue[pos]
    return {"fcfs": pos, "sjf": (sim.c[j], pos), "lcfs": -pos, "sjf-run": (sim.run[j], pos)}[prio]


def _heuristic_cycle(sim, prio, bf, placements):
    while sim.queue and sim.placed < placements:
        p = min(range(len(sim.queue)), key=lambda i: _prio_key(sim, i, prio))
        free = sim.n - sim.busy()
        need = sim.c[sim.queue[p]]
        if need <= free:
            sim.place(p)
            continue
        if bf == "none":
            return
        ends = sorted(x[0] for x in sim.cores if x is not None)
        shadow = ends[need - free - 1]
        extra = free + sum(1 for e in ends if e <= shadow) - need
        cand = None
        for i, j in enumerate(sim.queue):  # arrival order
            short = sim.t + sim.run[j] <= shadow
            if i != p and sim.c[j] <= free and (short or (bf == "easy" and sim.c[j] <= extra)):
                cand = i
                break
        if cand is None:
            return
        sim.place(cand)


def play_heuristic(jobs, prio, bf, start, *, n, placements, m):
    """One heuristic episode (spec §7 baselines): ``(steps, avg_wait, util, final_clock,
    mean invisible, util over the arrival span)``."""
    sim = _Sim(jobs, start, n, "all", placements)
    steps = inv = 0
    while True:
        inv += max(0, len(sim.queue) - m)
        steps += 1
        _heuristic_cycle(sim, prio, bf, placements)
        if sim.placed >= placements or not sim.event():
            break
    arrived = sim.next - sim.start
    wait = (sum(sim.waits) + sum(sim.t - sim.sub[j] for j in sim.queue)) / arrived
    util_win = sim.win_busy / (n * (sim.t_win - sim.t0))
    return steps, wait, sim.area_busy / (n * (sim.t - sim.t0)), sim.t, inv / steps, util_win
