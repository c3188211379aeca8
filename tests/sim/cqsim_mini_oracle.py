"""A minimal plain-Python CQSim scheduler for tiny test cases (FCFS with none / EASY /
conservative backfilling and the DRAS-PG loop with fixed policies), written from the reference
README's rules independently of the JAX engine. Not the project's oracle (that is
jaxsched/sim/oracle_cqsim); just enough to check the engine on small random traces."""

W = 50


def _pick(policy, window, nodes):
    if policy == "smallest":
        return min(range(len(window)), key=lambda k: (nodes[window[k]], k))
    if policy == "largest":
        return min(range(len(window)), key=lambda k: (-nodes[window[k]], k))
    return 0


class _Profile:
    def __init__(self, t, free, running):
        self.p = [[t, free]]
        acc = free
        for r in sorted(running, key=lambda r: (r["est"], r["order"])):
            acc += r["nodes"]
            if len(self.p) > 1 and self.p[-1][0] == r["est"]:
                self.p[-1][1] = acc
            else:
                self.p.append([r["est"], acc])

    def reserve(self, n, d):
        i = 0
        while i < len(self.p):
            if self.p[i][1] < n:
                i += 1
                continue
            bad = [k for k in range(i + 1, len(self.p)) if self.p[k][0] < self.p[i][0] + d
                   and self.p[k][1] < n]  # fmt: skip
            if not bad:
                return self.p[i][0]
            i = bad[0] + 1
        raise RuntimeError("job wider than the machine")

    def place(self, s, e, n):
        times = [q[0] for q in self.p]
        if e not in times[1:]:
            k = max(i for i, q in enumerate(self.p) if q[0] < e)
            self.p.insert(k + 1, [e, self.p[k][1]])
        for q in self.p:
            if s <= q[0] < e:
                q[1] -= n

    def fits(self, t, n, d):
        return all(a >= n for tm, a in self.p if tm < t + d)


def mini_cqsim(submit, run, req, nodes, N, backfill, policy="fcfs", paper=False):
    """Start times and classes (0 backfilled, 1 ready, 2 reserved); ``backfill`` is
    ``none``, ``easy``, ``cons`` or ``dras``; ``paper``: waiting jobs enter the profile with
    their estimates instead of their run times."""
    L = len(submit)
    dur = req if paper else run
    st = {"t": 0, "free": N, "order": 0, "reserved": None}
    start, cls, waiting, running = [-1] * L, [-1] * L, [], []
    nxt = 0

    def go(j, c):
        running.append({"job": j, "fin": st["t"] + run[j], "est": st["t"] + req[j],
                        "nodes": nodes[j], "order": st["order"]})  # fmt: skip
        st["order"] += 1
        st["free"] -= nodes[j]
        start[j], cls[j] = st["t"], 2 if j == st["reserved"] else c
        if j == st["reserved"]:
            st["reserved"] = None
        waiting.remove(j)

    def backfill_pass(R):
        prof = _Profile(st["t"], st["free"], running)
        chosen = []
        if backfill == "cons":
            for j in list(waiting):
                s = prof.reserve(nodes[j], dur[j])
                prof.place(s, s + dur[j], nodes[j])
                if s == st["t"]:
                    chosen.append(j)
        else:
            s = prof.reserve(nodes[R], dur[R])
            prof.place(s, s + dur[R], nodes[R])
            rest = [j for j in waiting if j != R]
            while True:
                C = [j for j in rest if prof.fits(st["t"], nodes[j], dur[j])]
                if not C:
                    break
                j = C[_pick(policy, C[:W], nodes)]
                prof.place(st["t"], st["t"] + dur[j], nodes[j])
                rest.remove(j)
                chosen.append(j)
        for j in chosen:
            go(j, 0)

    def one_pass():
        while waiting:
            auto = st["reserved"] is not None and waiting[0] == st["reserved"]
            j = waiting[0 if auto else _pick(policy, waiting[:W], nodes)]
            if st["free"] >= nodes[j]:
                go(j, 1)
                continue
            st["reserved"] = waiting[0]
            if len(waiting) > 1 and backfill != "none":
                backfill_pass(waiting[0])
            return

    while True:
        fin = min(running, key=lambda r: (r["fin"], r["order"])) if running else None
        if fin is not None and (nxt >= L or fin["fin"] <= submit[nxt]):
            st["t"] = fin["fin"]
            st["free"] += fin["nodes"]
            running.remove(fin)
        elif nxt < L:
            st["t"] = max(st["t"], submit[nxt])
            waiting.append(nxt)
            nxt += 1
        else:
            break
        one_pass()
    return start, cls
