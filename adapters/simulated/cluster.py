"""Cluster workload balancing for the simulated queue manager (written apart from the reference model).

Destinations are scored and filtered in passes over a list of candidate
records; faults switch individual passes off or bend them.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference_model import language as L

RUNNING_LIKE = {0, 3}                 # INACTIVE, RUNNING
STARTING_LIKE = {1, 13, 2, 4}          # BINDING, INITIALIZING, STARTING, STOPPING
RETRYING_LIKE = {5}
IDLE_LIKE = {7, 8, 6}                  # REQUESTING, PAUSED, STOPPED


@dataclass
class Candidate:
    key: str
    qmgr: str
    instance: L.SetClusterInstance | None
    channel: L.SetClusterChannel | None
    alias: L.SetClusterAlias | None = None

    def rank(self) -> int:
        """CLWLRANK as step 4a compares it: an alias carries its own."""
        return self.alias.clwlrank if self.alias else self.channel.clwlrank

    def priority(self) -> int:
        """CLWLPRTY as step 11a compares it when a queue manager is chosen."""
        return self.alias.clwlprty if self.alias else self.channel.clwlprty


class SimulatedCluster:
    def __init__(self, faults) -> None:
        self.faults = faults
        self.qmgrs: dict[str, L.SetClusterQueueManager] = {}
        self.instances: dict[tuple[str, str], L.SetClusterInstance] = {}
        self.channels: dict[str, L.SetClusterChannel] = {}
        self.aliases: dict[tuple[str, str], L.SetClusterAlias] = {}
        self.factor: dict[str, dict[str, int]] = {}   # queue -> key -> DestSeqFactor
        self.number: dict[str, dict[str, int]] = {}   # queue -> key -> DestSeqNumber
        self.last: dict[str, int] = {}
        self.shape: dict[str, tuple] = {}

    def on(self, fault: str) -> bool:
        return fault in self.faults

    def suspended(self, qmgr: str) -> bool:
        # Known only through its channel: a queue manager nobody suspended.
        known = self.qmgrs.get(qmgr)
        return bool(known and known.suspended)

    def local(self) -> L.SetClusterQueueManager:
        return next(q for q in self.qmgrs.values() if q.local)

    def put(self, op: L.ClusterPut) -> L.Observation:
        if op.qmgr:
            return self.put_to_qmgr(op)
        me = self.local()
        cands = []
        for (qm, name), inst in sorted(self.instances.items()):
            if name != op.queue:
                continue
            if qm == me.name:
                cands.append(Candidate(qm, qm, inst, None))
            else:
                for ch in sorted(self.channels.values(), key=lambda c: c.name):
                    if ch.qmgr == qm:
                        cands.append(Candidate(f"{qm}/{ch.name}", qm, inst, ch))
        shared = set(me.clusters)
        cands = [c for c in cands if (c.instance.put_enabled or self.on("put-disabled-chosen"))
                 and (c.channel is None or (set(c.instance.clusters) & shared
                                            and set(c.channel.clusters) & set(c.instance.clusters)))]
        local = [c for c in cands if c.channel is None]
        if local:
            useq = local[0].instance.clwluseq
            if useq == "QMGR":
                useq = me.clwluseq
            if (useq == "LOCAL" and not self.on("local-not-preferred")) or not op.put_locally:
                return self._chosen(op.queue, local[0], [local[0]])
        if op.pcf:
            cands = [c for c in cands if c.qmgr not in op.already_sent]
        if not self.on("rank-ignored"):
            ranks = [c.channel.clwlrank for c in cands if c.channel]
            if ranks:
                cands = [c for c in cands if c.channel is None or c.channel.clwlrank == max(ranks)]
            qranks = [c.instance.clwlrank for c in cands]
            if qranks:
                cands = [c for c in cands if c.instance.clwlrank == max(qranks)]
        if cands and all(c.channel for c in cands):
            resumed = [c for c in cands if not self.suspended(c.qmgr)]
            if self.on("suspended-preferred"):
                resumed = [c for c in cands if self.suspended(c.qmgr)] or resumed
            cands = resumed or cands
        cands = self._by_channel_state(cands)
        if op.pcf and len([c for c in cands if c.channel]) > 1:
            senders = [c for c in cands if c.channel is None or c.channel.local_sender]
            if any(c.channel for c in senders):
                cands = senders
        cands = self._by_netprty(cands)
        if cands and not self.on("clwlprty-ignored"):
            best = max(c.instance.clwlprty for c in cands)
            cands = [c for c in cands if c.instance.clwlprty == best]
        return self._finish(op.queue, cands)

    def _by_channel_state(self, cands: list[Candidate]) -> list[Candidate]:
        """Running channels first; while none is left, the next group of states."""
        remote = [c for c in cands if c.channel]
        if len(remote) <= 1 or self.on("channel-state-ignored"):
            return cands
        keep: list[Candidate] = []
        allowed: set[int] = set()
        for group in (RUNNING_LIKE, STARTING_LIKE, RETRYING_LIKE, IDLE_LIKE):
            allowed |= group
            keep = [c for c in remote if c.channel.state in allowed]
            if keep:
                break
        return [c for c in cands if c.channel is None] + keep

    def _by_netprty(self, cands: list[Candidate]) -> list[Candidate]:
        """Per queue manager, only its channels of the highest NETPRTY."""
        if self.on("netprty-ignored"):
            return cands
        top: dict[str, int] = {}
        for c in cands:
            if c.channel:
                top[c.qmgr] = max(top.get(c.qmgr, -1), c.channel.netprty)
        return [c for c in cands if c.channel is None or c.channel.netprty == top[c.qmgr]]

    def _finish(self, queue: str, cands: list[Candidate]) -> L.Observation:
        """CLWLMRUC's cut, then the least recently used of what is left (or no destination)."""
        if not cands:
            return L.Observation(attrs={"DESTINATION": ""})
        numbers = self.number.setdefault(queue, {})
        mruc = self.local().clwlmruc
        if len(cands) > mruc and not self.on("mruc-ignored"):
            order = sorted(cands, key=lambda c: -numbers.get(c.key, 0))
            cut = numbers.get(order[mruc - 1].key, 0)
            cands = [c for c in cands if numbers.get(c.key, 0) >= cut]
        return self._chosen(queue, None, cands)

    def put_to_qmgr(self, op: L.ClusterPut) -> L.Observation:
        """A put naming a queue manager: channels to it, and to the hosts of its aliases."""
        me = self.local()
        routes: list[Candidate] = []
        if op.qmgr != me.name:
            by_qmgr: dict[str, list[L.SetClusterChannel]] = {}
            for ch in sorted(self.channels.values(), key=lambda c: c.name):
                by_qmgr.setdefault(ch.qmgr, []).append(ch)
            routes = [Candidate(f"{op.qmgr}/{ch.name}", op.qmgr, None, ch) for ch in by_qmgr.get(op.qmgr, [])]
            for (name, host), al in sorted(self.aliases.items()):
                if name == op.qmgr and host not in (me.name, op.qmgr):
                    routes += [Candidate(f"{host}/{ch.name}", host, None, ch, al) for ch in by_qmgr.get(host, [])]
        mine = set(me.clusters)
        routes = [r for r in routes
                  if (r.alias is None or r.alias.put_enabled or self.on("alias-put-disabled-chosen"))
                  and (set(r.channel.clusters) & mine or self.on("foreign-channel-to-qmgr"))]
        if routes and not self.on("rank-ignored"):
            top = max(r.rank() for r in routes)
            routes = [r for r in routes if r.rank() == top]
        resumed = [r for r in routes if not self.suspended(r.qmgr)]
        routes = self._by_netprty(self._by_channel_state(resumed or routes))
        if routes and not self.on("qmgr-clwlprty-ignored"):
            top = max(r.priority() for r in routes)
            routes = [r for r in routes if r.priority() == top]
        return self._finish(op.queue, routes)


    def _chosen(self, queue: str, forced: Candidate | None, cands: list[Candidate]) -> L.Observation:
        factors = self.factor.setdefault(queue, {})
        numbers = self.number.setdefault(queue, {})
        shape = tuple(sorted((c.key, *((c.instance.clwlrank, c.instance.clwlprty) if c.instance else
                                       (c.alias.clwlrank, c.alias.clwlprty) if c.alias else (None, None)),
                              None if c.channel is None else (c.channel.clwlrank, c.channel.clwlprty,
                                                              c.channel.clwlwght, c.channel.netprty))
                             for c in cands))
        if forced is None and len(cands) > 1:
            before = dict((k, rest) for k, *rest in self.shape.get(queue, ()))
            now = dict((k, rest) for k, *rest in shape)
            changed = set(now) - set(before) or any(before[k] != now[k] for k in set(before) & set(now))
            if self.shape.get(queue) and changed and not self.on("no-reset-on-change"):
                factors.clear()
            pick = min(cands, key=lambda c: (factors.get(c.key, 0), numbers.get(c.key, 0), c.key))
            weight = 50 if self.on("weights-ignored") or pick.channel is None else pick.channel.clwlwght
            factors[pick.key] = factors.get(pick.key, 0) + 1000 // weight
            self.shape[queue] = shape
        else:
            pick = forced or cands[0]
        self.last[queue] = self.last.get(queue, 0) + 1
        numbers[pick.key] = self.last[queue]
        return L.Observation(attrs={"DESTINATION": pick.key})
