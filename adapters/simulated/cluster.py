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
    instance: L.SetClusterInstance
    channel: L.SetClusterChannel | None


class SimulatedCluster:
    def __init__(self, faults) -> None:
        self.faults = faults
        self.qmgrs: dict[str, L.SetClusterQueueManager] = {}
        self.instances: dict[tuple[str, str], L.SetClusterInstance] = {}
        self.channels: dict[str, L.SetClusterChannel] = {}
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
        remote = [c for c in cands if c.channel]
        if len(remote) > 1 and not self.on("channel-state-ignored"):
            keep: list[Candidate] = []
            allowed: set[int] = set()
            for group in (RUNNING_LIKE, STARTING_LIKE, RETRYING_LIKE, IDLE_LIKE):
                allowed |= group
                keep = [c for c in remote if c.channel.state in allowed]
                if keep:
                    break
            cands = [c for c in cands if c.channel is None] + keep
        if op.pcf and len([c for c in cands if c.channel]) > 1:
            senders = [c for c in cands if c.channel is None or c.channel.local_sender]
            if any(c.channel for c in senders):
                cands = senders
        if not self.on("netprty-ignored"):
            top: dict[str, int] = {}
            for c in cands:
                if c.channel:
                    top[c.qmgr] = max(top.get(c.qmgr, -1), c.channel.netprty)
            cands = [c for c in cands if c.channel is None or c.channel.netprty == top[c.qmgr]]
        if cands and not self.on("clwlprty-ignored"):
            best = max(c.instance.clwlprty for c in cands)
            cands = [c for c in cands if c.instance.clwlprty == best]
        if not cands:
            return L.Observation(attrs={"DESTINATION": ""})
        numbers = self.number.setdefault(op.queue, {})
        if len(cands) > me.clwlmruc and not self.on("mruc-ignored"):
            order = sorted(cands, key=lambda c: -numbers.get(c.key, 0))
            cut = numbers.get(order[me.clwlmruc - 1].key, 0)
            cands = [c for c in cands if numbers.get(c.key, 0) >= cut]
        return self._chosen(op.queue, None, cands)

    def _chosen(self, queue: str, forced: Candidate | None, cands: list[Candidate]) -> L.Observation:
        factors = self.factor.setdefault(queue, {})
        numbers = self.number.setdefault(queue, {})
        shape = tuple(sorted((c.key, c.instance.clwlrank, c.instance.clwlprty,
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
