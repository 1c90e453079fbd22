"""The cluster area on IBM MQ: the queue manager under test and the members of a cluster set up for the kit.

A cluster is many queue managers, their cluster-receiver channels and full
repositories; the kit does not build one.  The user names a cluster that the
kit may use alone (``cluster``) and the members it may connect to
(``cluster_members``, each with a cluster-receiver channel in that cluster).
The language's queue managers are mapped onto them: the one an operation calls
local is the queue manager under test; the others are the members, in the order
the case first names them.  Each member's cluster-receiver channel in the
cluster is the one channel the language may name for it.

A run starts by resuming any member and starting any channel a killed run left
suspended or stopped.  What the kit changes, it puts back when the case ends: the case's cluster queue
instances (prefixed, deleted), the channels' workload attributes (CLWLRANK,
CLWLPRTY, CLWLWGHT, NETPRTY, read first), channels it stopped (started again),
members it suspended (resumed), and with ``alter_qmgr=yes`` the queue manager's
CLWLUSEQ and CLWLMRUC.  A change made on a member reaches the queue manager
under test through the full repositories some time later: every change waits
until the queue manager's own view shows it, and every put until no channel of
the cluster is between states (a channel starting is in another group of the
algorithm's step 7 than one running), within ``cluster_wait`` seconds, or the
case ends with an error, never a verdict.

Where a put went is read from where the message is: on the queue manager's own
instance, on a member's instance (got by its MsgId), or, for a stopped channel,
on SYSTEM.CLUSTER.TRANSMIT.QUEUE (browsed by its MsgId, the MQXQH naming the
member).
"""

from __future__ import annotations

import itertools

from adapters.base import AdapterError, carry_out
from adapters.ibmmq.fields import text as _text
from reference_model import language as L
from reference_model import mqconst as C

SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
#: Channel states an operation may ask for: not stopped (INACTIVE or RUNNING, as the queue manager has
#: it), or STOPPED; the others (binding, starting, retrying, ...) happen to a channel, no command sets them.
NOT_STOPPED, STOPPED, RUNNING = (0, 3), 6, 3
#: Channel states a put waits out: the algorithm groups them apart from INACTIVE and RUNNING (step 7).
BETWEEN = (1, 2, 4, 13)
#: Reason codes of a put that found no destination the algorithm allows.
NO_DESTINATION = (2268, 2189, 2085, 2051)   # CLUSTER_PUT_INHIBITED, CLUSTER_RESOLUTION_ERROR, ..., PUT_INHIBITED
USEQ = {"LOCAL": "MQCLWL_USEQ_LOCAL", "ANY": "MQCLWL_USEQ_ANY", "QMGR": "MQCLWL_USEQ_AS_Q_MGR"}
#: The queue manager's attributes the algorithm reads, and their selectors.
QMGR_ATTRS = {"clwluseq": "MQIA_CLWL_USEQ", "clwlmruc": "MQIA_CLWL_MRU_CHANNELS"}
#: A channel's workload attributes (the language's names) and their PCF parameters.
CHANNEL_ATTRS = {"clwlrank": "MQIACH_CLWL_CHANNEL_RANK", "clwlprty": "MQIACH_CLWL_CHANNEL_PRIORITY",
                 "clwlwght": "MQIACH_CLWL_CHANNEL_WEIGHT", "netprty": "MQIACH_NETWORK_PRIORITY"}

#: Why rules of the area are not applicable on IBM MQ even with a cluster.
NOT_EXPRESSIBLE = {
    "CLWL-02": "a put naming a queue manager travels on to it, and the queue-manager aliases it may use would be "
               "named like real queue managers: not run against a shared cluster",
    "CLWL-04": "cluster PCF messages are the queue managers' own: a program cannot send one",
    "CLWL-07": "binding, initializing, starting and stopping are states a channel passes through, not ones a "
               "command sets",
    "CLWL-08": "a channel retries when its partner cannot be reached, which the kit does not cause",
    "CLWL-10": "cluster PCF messages are the queue managers' own, and the kit defines no cluster-sender channels",
    "CLWL-11a": "a put naming a queue manager is not run (see CLWL-02)",
}
#: Why the area is not offered without the options it needs.
NEEDS = ("the cluster area needs a cluster the kit may use alone and its members, and may change the queue manager's "
         "CLWLUSEQ and CLWLMRUC: the adapter options cluster, cluster_members and alter_qmgr=yes "
         "(docs/adapters/ibmmq.md)")


class ClusterLink:
    """The cluster operations of :class:`~adapters.ibmmq.IbmMqAdapter`, on the queue manager and the members."""

    def __init__(self, adapter, cluster: str, members: list[tuple[str, str]], wait: float) -> None:
        self.a = adapter
        self.cluster = cluster
        self.wait = wait
        self.order = [name for name, _ in members]
        for name, conn in members:
            if name not in adapter.member_admin:
                adapter.member_admin[name] = adapter._connect(name, conn)
                adapter.member_pcf[name] = adapter.client.PCFExecute(adapter.member_admin[name])
        #: Each member's cluster-receiver channel in the cluster: its name and workload attributes as found.
        self.receivers = {name: self._receiver(name) for name in self.order}
        #: The language's names -> the queue managers' (the local one, then members in order of use).
        self.names: dict[str, str] = {}
        self.channel_names: dict[str, str] = {}   # the language's channel name -> member
        self.cluster_names: dict[str, str] = {}   # the language's cluster name -> the cluster (one)
        self.ids = itertools.count(1)
        self._reset_case()
        # A run killed mid-case can leave a member suspended or a channel stopped: the cluster is the kit's,
        # and each run starts with every member resumed and every channel startable.
        for member in self.order:
            if self._seen_suspended(member):
                self.suspended.add(member)
            if self._status(member) == STOPPED:
                self.stopped.add(member)
        self.end_case()

    # ------------------------------------------------------------ names
    def _reset_case(self) -> None:
        self.instances: dict[tuple[str, str], dict] = {}   # (queue manager, queue) -> fields as set
        self.altered: set[str] = set()       # members whose channel attributes the case changed
        self.stopped: set[str] = set()       # members whose channel the case stopped
        self.suspended: set[str] = set()     # members the case suspended
        self.handles: dict[tuple[str, str], object] = {}

    def const(self, name: str):
        for module in ("CMQC", "CMQCFC", "CMQXC"):
            value = getattr(getattr(self.a.client, module, None), name, None)
            if value is not None:
                return value
        raise AdapterError(f"ibmmq: the client has no constant {name}")

    def _member(self, qmgr: str, assign: bool) -> str | None:
        """The queue manager the language's ``qmgr`` stands for: the local one, or a member (None: none left)."""
        if qmgr in self.names:
            return self.names[qmgr]
        free = [m for m in self.order if m not in self.names.values()]
        if not free:
            return None
        if assign:
            self.names[qmgr] = free[0]
        return free[0]

    def _language(self, real: str) -> str:
        return next(k for k, v in self.names.items() if v == real)

    # ------------------------------------------------------------ express
    def express(self, op: L.Op) -> bool:
        if isinstance(op, (L.SetClusterQueueManager, L.SetClusterInstance, L.SetClusterChannel)):
            # One cluster: the one the kit may use, which the first the case names stands for.
            if len(op.clusters) != 1:
                return False
            if not self.cluster_names:
                self.cluster_names[op.clusters[0]] = self.cluster
            if op.clusters[0] not in self.cluster_names:
                return False
        if isinstance(op, L.SetClusterQueueManager):
            if op.local:
                return not op.suspended   # the area is offered only with alter_qmgr=yes
            return self._member(op.name, False) is not None
        if isinstance(op, L.SetClusterChannel):
            member = self._member(op.qmgr, False)
            known = self.channel_names.get(op.name)
            return (member in self.receivers and not op.local_sender and op.state in NOT_STOPPED + (STOPPED,)
                    and known in (None, member) and (known or member not in self.channel_names.values()))
        if isinstance(op, (L.SetClusterInstance, L.RemoveClusterInstance)):
            return self._member(op.qmgr, False) is not None
        if isinstance(op, L.ClusterPut):
            return op.put_locally and not op.pcf and not op.qmgr
        return False

    def _qmgr_values(self) -> dict:
        useq = self.a.admin.inquire(self.const("MQIA_CLWL_USEQ"))
        return {"clwluseq": "ANY" if useq == self.const("MQCLWL_USEQ_ANY") else "LOCAL",
                "clwlmruc": self.a.admin.inquire(self.const("MQIA_CLWL_MRU_CHANNELS"))}

    # ------------------------------------------------------------ execute
    def execute(self, op: L.Op) -> L.Observation:
        """Run a cluster operation.  A command the queue managers refuse is an error of the set-up or of this
        mapping, never a verdict on MQ: the algorithm's outcome is only where a put goes."""
        try:
            return carry_out(self, op)   # its method (adapters.base.handler_for)
        except self.a.client.MQMIError as exc:
            raise AdapterError(f"ibmmq: cluster: {type(op).__name__} refused by the queue manager: "
                               f"completion {exc.comp}, reason {exc.reason}") from None

    def _op_SetClusterQueueManager(self, op: L.SetClusterQueueManager) -> L.Observation:
        if op.local:
            self.names[op.name] = self.a.qmgr_name
            wanted = {"clwluseq": op.clwluseq, "clwlmruc": op.clwlmruc}
            if wanted != self._qmgr_values():
                args = {}
                for field, selector in QMGR_ATTRS.items():
                    key = ("", field.upper())   # put back when the case ends, with the other attributes
                    if key not in self.a.altered:
                        self.a.altered[key] = self.a.admin.inquire(self.const(selector))
                    value = wanted[field]
                    args[self.const(selector)] = self.const(USEQ[value]) if field == "clwluseq" else value
                self.a._pcf("MQCMD_CHANGE_Q_MGR", args)
            return L.OK
        member = self._member(op.name, True)
        if op.suspended != (member in self.suspended):
            command = "MQCMD_SUSPEND_Q_MGR_CLUSTER" if op.suspended else "MQCMD_RESUME_Q_MGR_CLUSTER"
            self.a._pcf(command, {self.const("MQCA_CLUSTER_NAME"): self.cluster}, member=member)
            (self.suspended.add if op.suspended else self.suspended.discard)(member)
            self._until(lambda: self._seen_suspended(member) == op.suspended,
                        f"{member} {'suspended' if op.suspended else 'resumed'}")
        return L.OK

    def _op_SetClusterChannel(self, op: L.SetClusterChannel) -> L.Observation:
        member = self._member(op.qmgr, True)
        self.channel_names[op.name] = member
        receiver = self.receivers[member]
        wanted = {field: getattr(op, field) for field in CHANNEL_ATTRS}
        if wanted != {field: receiver[field] for field in CHANNEL_ATTRS} or member in self.altered:
            self._change_channel(member, wanted)
            self.altered.add(member)
        if op.state == STOPPED and member not in self.stopped:
            self._stop(member)
        elif op.state != STOPPED and member in self.stopped:
            self._start(member)
        return L.OK

    def _change_channel(self, member: str, values: dict) -> None:
        receiver = self.receivers[member]
        args = {self.const("MQCACH_CHANNEL_NAME"): receiver["name"],
                self.const("MQIACH_CHANNEL_TYPE"): self.const("MQCHT_CLUSRCVR")}
        args.update({self.const(CHANNEL_ATTRS[field]): value for field, value in values.items()})
        self.a._pcf("MQCMD_CHANGE_CHANNEL", args, member=member)
        self._until(lambda: self._seen_channel(member) == values, f"channel {receiver['name']}'s new attributes")

    def _stop(self, member: str) -> None:
        """STOP CHANNEL on the queue manager's cluster-sender channel to ``member``.  A channel with no
        status yet (inactive) may be refused as not active: it is started, and stopped once running."""
        name = self.receivers[member]["name"]
        args = {self.const("MQCACH_CHANNEL_NAME"): name}
        try:
            self.a._pcf("MQCMD_STOP_CHANNEL", args)
        except self.a.client.MQMIError as exc:
            if exc.reason != self.const("MQRCCF_CHANNEL_NOT_ACTIVE"):
                raise
            self.a._pcf("MQCMD_START_CHANNEL", args)
            self._until(lambda: self._status(member) == RUNNING, f"channel {name} running, to stop it")
            self.a._pcf("MQCMD_STOP_CHANNEL", args)
        self.stopped.add(member)
        self._until(lambda: self._status(member) == STOPPED, f"channel {name} stopped")

    def _start(self, member: str) -> None:
        name = self.receivers[member]["name"]
        self.a._pcf("MQCMD_START_CHANNEL", {self.const("MQCACH_CHANNEL_NAME"): name})
        self.stopped.discard(member)
        self._until(lambda: self._status(member) in NOT_STOPPED, f"channel {name} started")

    def _op_SetClusterInstance(self, op: L.SetClusterInstance) -> L.Observation:
        real = self._member(op.qmgr, True)
        name = self.a._name(op.queue)
        args = {self.const("MQCA_Q_NAME"): name, self.const("MQIA_Q_TYPE"): self.const("MQQT_LOCAL"),
                self.const("MQCA_CLUSTER_NAME"): self.cluster,
                self.const("MQIA_INHIBIT_PUT"): C.MQQA_PUT_ALLOWED if op.put_enabled else C.MQQA_PUT_INHIBITED,
                self.const("MQIA_CLWL_Q_RANK"): op.clwlrank, self.const("MQIA_CLWL_Q_PRIORITY"): op.clwlprty,
                self.const("MQIA_CLWL_USEQ"): self.const(USEQ[op.clwluseq])}
        member = "" if real == self.a.qmgr_name else real
        command = "MQCMD_CHANGE_Q" if (real, name) in self.instances else "MQCMD_CREATE_Q"
        self.a._pcf(command, args, member=member)
        fields = {"put_enabled": op.put_enabled, "clwlrank": op.clwlrank, "clwlprty": op.clwlprty}
        self.instances[(real, name)] = fields
        self._until(lambda: self._seen_instances(name).get(real) == fields, f"instance of {name} on {real}")
        return L.OK

    def _op_RemoveClusterInstance(self, op: L.RemoveClusterInstance) -> L.Observation:
        real = self._member(op.qmgr, True)
        name = self.a._name(op.queue)
        if self.instances.pop((real, name), None) is not None:
            self._delete(real, name)
            self._until(lambda real=real, name=name: real not in self._seen_instances(name),
                        f"instance of {name} on {real} gone")
        return L.OK

    def _delete(self, real: str, name: str) -> None:
        handle = self.handles.pop((real, name), None)
        if handle is not None:
            try:
                handle.close()
            except self.a.client.MQMIError:
                pass
        self.a._delete(name, self.a.CMQC.MQQT_LOCAL, member="" if real == self.a.qmgr_name else real)

    # ------------------------------------------------------------ a put, and where it went
    def _op_ClusterPut(self, op: L.ClusterPut) -> L.Observation:
        name = self.a._name(op.queue)
        self._until(lambda: not any(self._status(m) in BETWEEN for m in self.order if m in self.names.values()),
                    "the cluster's channels settled")
        msg_id = f"{self.a.case}.{next(self.ids)}"[-24:]
        md = self.a.client.MD(MsgId=msg_id.encode().ljust(24, b"\0"))
        od = self.a.client.OD(ObjectName=name)
        try:
            self.a.admin.put1(od, b"cluster", md, self.a.client.PMO(Options=C.MQPMO_NO_SYNCPOINT))
        except self.a.client.MQMIError as exc:
            if exc.reason in NO_DESTINATION:
                return L.Observation(attrs={"DESTINATION": ""})
            raise
        where = self._until(lambda: self._where(name, msg_id), f"message {msg_id} put to {name} found")
        return L.Observation(attrs={"DESTINATION": where})

    def _where(self, name: str, msg_id: str) -> str | None:
        """The language's key of where message ``msg_id`` is: an instance of queue ``name``, or the transmission
        queue on its way to a member whose channel is stopped; None: not found yet."""
        for real, queue in list(self.instances):
            if queue == name and self._take(real, name, msg_id):
                if real == self.a.qmgr_name:
                    return self._language(real)
                return self._remote_key(real)
        data = self._browse_sctq(msg_id)
        if data is not None:
            header = self.a.client.XQH().unpack(bytes(data[:self.a.CMQC.MQXQH_CURRENT_LENGTH
                                                         - self.a.CMQC.MQMD_LENGTH_1]))
            return self._remote_key(_text(header.RemoteQMgrName))
        return None

    def _remote_key(self, real: str) -> str:
        channel = next(k for k, v in self.channel_names.items() if v == real)
        return f"{self._language(real)}/{channel}"

    def _take(self, real: str, name: str, msg_id: str) -> bool:
        """Get message ``msg_id`` from the instance of ``name`` on ``real`` (True: it was there)."""
        handle = self.handles.get((real, name))
        if handle is None:
            qm = self.a.admin if real == self.a.qmgr_name else self.a.member_admin[real]
            handle = self.handles[(real, name)] = self.a.client.Queue(qm, name, C.MQOO_INPUT_SHARED)
        try:
            handle.get(None, *self._matching(msg_id, C.MQGMO_NO_SYNCPOINT))
            return True
        except self.a.client.MQMIError as exc:
            if exc.reason == C.MQRC_NO_MSG_AVAILABLE:
                return False
            raise

    def _browse_sctq(self, msg_id: str):
        handle = self.handles.get(("", SCTQ))
        if handle is None:
            handle = self.handles[("", SCTQ)] = self.a.client.Queue(self.a.admin, SCTQ, C.MQOO_BROWSE)
        try:
            return handle.get(None, *self._matching(msg_id, C.MQGMO_BROWSE_FIRST))
        except self.a.client.MQMIError as exc:
            if exc.reason == C.MQRC_NO_MSG_AVAILABLE:
                return None
            raise

    def _matching(self, msg_id: str, options: int):
        md = self.a.client.MD(MsgId=msg_id.encode().ljust(24, b"\0"))
        gmo = self.a.client.GMO(Options=options, MatchOptions=self.const("MQMO_MATCH_MSG_ID"),
                                Version=self.const("MQGMO_VERSION_2"))
        return md, gmo

    # ------------------------------------------------------------ what the queue manager sees
    def _receiver(self, member: str) -> dict:
        """The member's cluster-receiver channel in the cluster, with its workload attributes."""
        replies = self.a._pcf("MQCMD_INQUIRE_CHANNEL", {
            self.const("MQCACH_CHANNEL_NAME"): "*", self.const("MQIACH_CHANNEL_TYPE"): self.const("MQCHT_CLUSRCVR")},
            member=member) or []
        for reply in replies:
            if _text(reply.get(self.const("MQCA_CLUSTER_NAME"), "")) == self.cluster:
                out = {field: reply.get(self.const(param)) for field, param in CHANNEL_ATTRS.items()}
                out["name"] = _text(reply[self.const("MQCACH_CHANNEL_NAME")])
                return out
        raise AdapterError(f"ibmmq: {member} has no cluster-receiver channel in cluster {self.cluster}")

    def _cluster_qmgr(self, member: str) -> dict:
        replies = self.a._pcf("MQCMD_INQUIRE_CLUSTER_Q_MGR", {
            self.const("MQCA_CLUSTER_Q_MGR_NAME"): member, self.const("MQCA_CLUSTER_NAME"): self.cluster}) or []
        return replies[0] if replies else {}

    def _seen_suspended(self, member: str) -> bool:
        return self._cluster_qmgr(member).get(self.const("MQIACF_SUSPEND")) == self.const("MQSUS_YES")

    def _seen_channel(self, member: str) -> dict:
        reply = self._cluster_qmgr(member)
        return {field: reply.get(self.const(param)) for field, param in CHANNEL_ATTRS.items()}

    def _status(self, member: str) -> int:
        """The state of the queue manager's cluster-sender channel to ``member`` (INACTIVE: no status)."""
        try:
            replies = self.a._pcf("MQCMD_INQUIRE_CHANNEL_STATUS", {
                self.const("MQCACH_CHANNEL_NAME"): self.receivers[member]["name"]}) or []
        except self.a.client.MQMIError:
            return 0   # no status: the channel is inactive
        return replies[0].get(self.const("MQIACH_CHANNEL_STATUS"), 0) if replies else 0

    def _seen_instances(self, name: str) -> dict:
        """The instances of cluster queue ``name`` the queue manager knows: host -> fields."""
        try:
            replies = self.a._pcf("MQCMD_INQUIRE_Q", {self.const("MQCA_Q_NAME"): name,
                                                      self.const("MQIA_Q_TYPE"): self.const("MQQT_CLUSTER")}) or []
        except self.a.client.MQMIError:
            return {}
        return {_text(r[self.const("MQCA_CLUSTER_Q_MGR_NAME")]): {
            "put_enabled": r.get(self.const("MQIA_INHIBIT_PUT")) == C.MQQA_PUT_ALLOWED,
            "clwlrank": r.get(self.const("MQIA_CLWL_Q_RANK")), "clwlprty": r.get(self.const("MQIA_CLWL_Q_PRIORITY"))}
            for r in replies}

    def _until(self, done, what: str):
        """Wait until ``done()`` is true, up to :attr:`wait` seconds, and return it (an error otherwise: never
        a verdict)."""
        clock = _clock()
        ends = clock.monotonic() + self.wait
        while True:
            result = done()
            if result:
                return result
            if clock.monotonic() > ends:
                raise AdapterError(f"ibmmq: {what}: not seen by {self.a.qmgr_name} within {self.wait:g} s "
                                   "(the adapter option cluster_wait sets how long to wait)")
            clock.sleep(0.2)

    # ------------------------------------------------------------ the end of a case
    def end_case(self) -> None:
        """Everything the case changed in the cluster put back, and seen so by the queue manager."""
        for real, name in list(self.instances):
            self._delete(real, name)
        for handle in self.handles.values():   # the cluster transmission queue's
            try:
                handle.close()
            except self.a.client.MQMIError:
                pass
        self.handles.clear()
        for member in sorted(self.altered):
            self._change_channel(member, {field: self.receivers[member][field] for field in CHANNEL_ATTRS})
        for member in sorted(self.stopped):
            self._start(member)
        for member in sorted(self.suspended):
            self.a._pcf("MQCMD_RESUME_Q_MGR_CLUSTER", {self.const("MQCA_CLUSTER_NAME"): self.cluster}, member=member)
            self._until(lambda member=member: not self._seen_suspended(member), f"{member} resumed")
        for real, name in list(self.instances):
            self._until(lambda real=real, name=name: real not in self._seen_instances(name),
                        f"instance of {name} on {real} gone")
        self._reset_case()


def _clock():
    """The adapter's clock (its tests give it the stand-in's)."""
    from adapters import ibmmq

    return ibmmq.time

