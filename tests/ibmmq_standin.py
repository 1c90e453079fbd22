"""A stand-in for IBM's ``ibmmq`` package, for the kit's tests only.

No IBM MQ client library can be installed on the machines the kit is built on,
so the ``ibmmq`` adapter is tested through this module: the subset of the
``ibmmq`` API the adapter uses (the same names, structures with the same field
names, completion and reason codes raised as ``MQMIError``, PCF commands through
``PCFExecute``), answered by the kit's simulated queue manager running on real
time.  It is never used outside the tests; the adapter's verdicts against a
live queue manager are not produced by it.

Each test takes a fresh queue manager with :func:`reset` (its platform and
faults as the simulated adapter has them).
"""

from __future__ import annotations

import itertools
import struct
import time
from types import SimpleNamespace

from adapters.simulated.faults import parse_faults
from adapters.simulated.queue_manager import SimulatedQueueManager
from reference_model import language as L
from reference_model import mqconst as MQ

#: MQI constants the adapter names (the values of IBM's CMQC where the kit's mqconst has none).
CMQC = SimpleNamespace(**{n: getattr(MQ, n) for n in dir(MQ) if n.startswith("MQ")})
for _name, _value in dict(
        MQCA_Q_NAME=2016, MQCA_Q_MGR_NAME=2015, MQIA_Q_TYPE=20, MQQT_LOCAL=1, MQIA_PLATFORM=32,
        MQIA_COMMAND_LEVEL=31, MQPL_ZOS=1, MQPL_UNIX=3, MQOO_INQUIRE=0x20, MQOO_SET_ALL_CONTEXT=0x800,
        MQPMO_SET_ALL_CONTEXT=0x800, MQIA_DEF_PRIORITY=6, MQIA_DEF_PERSISTENCE=5, MQIA_DEF_INPUT_OPEN_OPTION=4,
        MQIA_MSG_DELIVERY_SEQUENCE=16, MQIA_INHIBIT_GET=9, MQIA_INHIBIT_PUT=10, MQIA_MAX_Q_DEPTH=15,
        MQIA_MAX_MSG_LENGTH=13, MQIA_USAGE=12,
        MQIA_BACKOUT_THRESHOLD=22, MQCA_BACKOUT_REQ_Q_NAME=2019, MQIA_HARDEN_GET_BACKOUT=8,
        MQIA_TRIGGER_CONTROL=24, MQIA_TRIGGER_TYPE=28, MQIA_TRIGGER_DEPTH=29, MQIA_TRIGGER_MSG_PRIORITY=26,
        MQCA_TRIGGER_DATA=2023, MQCA_PROCESS_NAME=2012, MQCA_INITIATION_Q_NAME=2008, MQIA_CURRENT_Q_DEPTH=3,
        MQIA_OPEN_INPUT_COUNT=17, MQIA_OPEN_OUTPUT_COUNT=18, MQQT_REMOTE=6, MQCA_REMOTE_Q_NAME=2018,
        MQCA_REMOTE_Q_MGR_NAME=2017, MQCA_XMIT_Q_NAME=2024, MQIA_EXPIRY_INTERVAL=39, MQIA_TRIGGER_INTERVAL=25,
        MQCA_DEAD_LETTER_Q_NAME=2006, MQXQH_STRUC_ID=b"XQH ", MQXQH_CURRENT_LENGTH=428, MQMD_LENGTH_1=324,
        MQMD_LENGTH_2=364, MQTM_STRUC_ID=b"TM  ", MQTM_CURRENT_LENGTH=684, MQIA_APPL_TYPE=1, MQCA_APPL_ID=2001,
        MQCA_ENV_DATA=2007, MQCA_USER_DATA=2021, MQDLH_STRUC_ID=b"DLH ", MQDLH_LENGTH_1=172, MQIA_QSG_DISP=63,
        MQCA_CF_STRUC_NAME=2039, MQCA_CLUSTER_NAME=2029, MQIA_CLWL_Q_RANK=95, MQIA_CLWL_Q_PRIORITY=96,
        MQIA_CLWL_USEQ=98, MQIA_CLWL_MRU_CHANNELS=97, MQCA_CLUSTER_Q_MGR_NAME=2031, MQQT_CLUSTER=7,
        MQCLWL_USEQ_LOCAL=0, MQCLWL_USEQ_ANY=1, MQCLWL_USEQ_AS_Q_MGR=-3, MQMO_MATCH_MSG_ID=1,
        MQGMO_VERSION_2=2).items():
    setattr(CMQC, _name, _value)
CMQCFC = SimpleNamespace(MQIACF_PURGE=1007, MQPO_YES=1, MQCACF_Q_NAMES=3011, MQIACF_REFRESH_TYPE=1078, MQRT_EXPIRY=2,
                        MQCACF_OBJECT_NAME=3046, MQCACF_PROCESS_NAMES=3012, MQCACH_CHANNEL_NAME=3501,
                        MQIACH_CHANNEL_TYPE=1511, MQIACH_CLWL_CHANNEL_RANK=1578, MQIACH_CLWL_CHANNEL_PRIORITY=1579,
                        MQIACH_CLWL_CHANNEL_WEIGHT=1580, MQIACH_NETWORK_PRIORITY=1577, MQIACH_CHANNEL_STATUS=1527,
                        MQIACF_SUSPEND=1087, MQSUS_YES=1, MQSUS_NO=0, MQRCCF_CHANNEL_NOT_ACTIVE=4064)
CMQXC = SimpleNamespace(MQCHT_CLUSRCVR=8, MQCHT_CLUSSDR=9)
#: Queue-manager attribute selectors back to their MQSC names, and their values on a new queue manager.
_QMGR = {CMQC.MQIA_EXPIRY_INTERVAL: "EXPRYINT", CMQC.MQIA_TRIGGER_INTERVAL: "TRIGINT",
         CMQC.MQCA_DEAD_LETTER_Q_NAME: "DEADQ", CMQC.MQIA_CLWL_USEQ: "CLWLUSEQ",
         CMQC.MQIA_CLWL_MRU_CHANNELS: "CLWLMRUC"}
_QMGR_DEFAULTS = {"EXPRYINT": 0, "TRIGINT": 999999999, "DEADQ": "", "CLWLUSEQ": 0, "CLWLMRUC": 999999999}
#: The stand-in queue manager's own name, and its cluster transmission queue.
NAME, SCTQ = "QM1", "SYSTEM.CLUSTER.TRANSMIT.QUEUE"
_USEQ = {CMQC.MQCLWL_USEQ_LOCAL: "LOCAL", CMQC.MQCLWL_USEQ_ANY: "ANY", CMQC.MQCLWL_USEQ_AS_Q_MGR: "QMGR"}

#: Attribute selectors back to the language's MQSC names.
_MQSC = {CMQC.MQIA_DEF_PRIORITY: "DEFPRTY", CMQC.MQIA_DEF_PERSISTENCE: "DEFPSIST",
         CMQC.MQIA_DEF_INPUT_OPEN_OPTION: "DEFSOPT", CMQC.MQIA_MSG_DELIVERY_SEQUENCE: "MSGDLVSQ",
         CMQC.MQIA_INHIBIT_GET: "GET", CMQC.MQIA_INHIBIT_PUT: "PUT", CMQC.MQIA_MAX_Q_DEPTH: "MAXDEPTH",
         CMQC.MQIA_MAX_MSG_LENGTH: "MAXMSGL", CMQC.MQIA_USAGE: "USAGE", CMQC.MQIA_BACKOUT_THRESHOLD: "BOTHRESH",
         CMQC.MQCA_BACKOUT_REQ_Q_NAME: "BOQNAME", CMQC.MQIA_HARDEN_GET_BACKOUT: "HARDENBO",
         CMQC.MQIA_TRIGGER_CONTROL: "TRIGGER", CMQC.MQIA_TRIGGER_TYPE: "TRIGTYPE",
         CMQC.MQIA_TRIGGER_DEPTH: "TRIGDPTH", CMQC.MQIA_TRIGGER_MSG_PRIORITY: "TRIGMPRI",
         CMQC.MQCA_TRIGGER_DATA: "TRIGDATA", CMQC.MQCA_PROCESS_NAME: "PROCESS",
         CMQC.MQCA_INITIATION_Q_NAME: "INITQ", CMQC.MQIA_CURRENT_Q_DEPTH: "CURDEPTH",
         CMQC.MQIA_OPEN_INPUT_COUNT: "IPPROCS", CMQC.MQIA_OPEN_OUTPUT_COUNT: "OPPROCS", CMQC.MQIA_QSG_DISP: "QSGDISP"}


class MQMIError(Exception):
    def __init__(self, comp: int, reason: int, **kw) -> None:
        super().__init__(f"MQI Error. Comp {comp}, Reason {reason}")
        self.comp, self.reason = comp, reason
        for k, v in kw.items():
            setattr(self, k, v)


class _Opts:
    DEFAULTS: dict = {}
    #: For structures that go into message data: (field, struct code) in the C layout, native byte order.
    LAYOUT: tuple = ()

    def __init__(self, **kw) -> None:
        for k, v in {**self.DEFAULTS, **kw}.items():
            setattr(self, k, v)

    def _format(self) -> str:
        return "=" + "".join(code for _, code in self.LAYOUT)

    def pack(self) -> bytes:
        values = [getattr(self, name) for name, _ in self.LAYOUT]
        return struct.pack(self._format(), *(v.encode() if isinstance(v, str) else v for v in values))

    def unpack(self, buffer: bytes):
        for (name, _), value in zip(self.LAYOUT, struct.unpack(self._format(), buffer)):
            setattr(self, name, value)
        return self


class MD(_Opts):
    DEFAULTS = dict(StrucId=b"MD  ", Report=0, MsgType=MQ.MQMT_DATAGRAM, Expiry=MQ.MQEI_UNLIMITED, Feedback=0,
                    Encoding=546, CodedCharSetId=0, Format=b" " * 8,
                    Priority=MQ.MQPRI_PRIORITY_AS_Q_DEF, Persistence=MQ.MQPER_PERSISTENCE_AS_Q_DEF,
                    MsgId=b"\0" * 24, CorrelId=b"\0" * 24, BackoutCount=0, ReplyToQ=b" " * 48,
                    ReplyToQMgr=b" " * 48, UserIdentifier=b" " * 12, AccountingToken=b"\0" * 32,
                    ApplIdentityData=b" " * 32, PutApplType=0, PutApplName=b" " * 28, PutDate=b" " * 8,
                    PutTime=b" " * 8, ApplOriginData=b" " * 4, GroupId=b"\0" * 24, MsgSeqNumber=1,
                    MsgFlags=0, Offset=0, OriginalLength=-1, Version=2)
    # The MQMD version 2 (IBM's ``MD`` always packs all of it; version 1 is its first 324 bytes).
    LAYOUT = (("StrucId", "4s"), ("Version", "i"), ("Report", "i"), ("MsgType", "i"), ("Expiry", "i"),
              ("Feedback", "i"), ("Encoding", "i"), ("CodedCharSetId", "i"), ("Format", "8s"), ("Priority", "i"),
              ("Persistence", "i"), ("MsgId", "24s"), ("CorrelId", "24s"), ("BackoutCount", "i"),
              ("ReplyToQ", "48s"), ("ReplyToQMgr", "48s"), ("UserIdentifier", "12s"), ("AccountingToken", "32s"),
              ("ApplIdentityData", "32s"), ("PutApplType", "i"), ("PutApplName", "28s"), ("PutDate", "8s"),
              ("PutTime", "8s"), ("ApplOriginData", "4s"), ("GroupId", "24s"), ("MsgSeqNumber", "i"),
              ("Offset", "i"), ("MsgFlags", "i"), ("OriginalLength", "i"))


class XQH(_Opts):
    """The MQXQH without its embedded MQMD (as IBM's ``XQH`` has it)."""

    DEFAULTS = dict(StrucId=b"XQH ", Version=1, RemoteQName=b" " * 48, RemoteQMgrName=b" " * 48)
    LAYOUT = (("StrucId", "4s"), ("Version", "i"), ("RemoteQName", "48s"), ("RemoteQMgrName", "48s"))


class TM(_Opts):
    """The MQTM at the start of a trigger message's data."""

    DEFAULTS = dict(StrucId=b"TM  ", Version=1, QName=b" " * 48, ProcessName=b" " * 48, TriggerData=b" " * 64,
                    ApplType=0, ApplId=b" " * 256, EnvData=b" " * 128, UserData=b" " * 128)
    LAYOUT = (("StrucId", "4s"), ("Version", "i"), ("QName", "48s"), ("ProcessName", "48s"), ("TriggerData", "64s"),
              ("ApplType", "i"), ("ApplId", "256s"), ("EnvData", "128s"), ("UserData", "128s"))


class DLH(_Opts):
    """The MQDLH at the start of a dead letter's data."""

    DEFAULTS = dict(StrucId=b"DLH ", Version=1, Reason=0, DestQName=b" " * 48, DestQMgrName=b" " * 48, Encoding=546,
                    CodedCharSetId=0, Format=b" " * 8, PutApplType=0, PutApplName=b" " * 28, PutDate=b" " * 8,
                    PutTime=b" " * 8)
    LAYOUT = (("StrucId", "4s"), ("Version", "i"), ("Reason", "i"), ("DestQName", "48s"), ("DestQMgrName", "48s"),
              ("Encoding", "i"), ("CodedCharSetId", "i"), ("Format", "8s"), ("PutApplType", "i"),
              ("PutApplName", "28s"), ("PutDate", "8s"), ("PutTime", "8s"))


def _dead_letter_data(dlh: L.DeadLetterHeader, body: str) -> bytes:
    """A dead letter's data as a queue manager returns it: the MQDLH, then the original data."""
    return DLH(Reason=dlh.reason, DestQName=dlh.dest_q.encode().ljust(48),
               DestQMgrName=dlh.dest_qmgr.encode().ljust(48), Format=dlh.format.encode().ljust(8),
               PutApplType=dlh.put_appl_type,
               PutApplName=dlh.put_appl_name.encode().ljust(28)).pack() + body.encode()


def _from_dead_letter_data(data: bytes) -> tuple[L.DeadLetterHeader | None, str]:
    """The MQDLH a program put at the start of the data, and the rest (None: the data has no MQDLH)."""
    if len(data) < CMQC.MQDLH_LENGTH_1 or data[:4] != CMQC.MQDLH_STRUC_ID:
        return None, data.decode()
    h = DLH().unpack(data[:CMQC.MQDLH_LENGTH_1])
    return L.DeadLetterHeader(reason=h.Reason, dest_q=_text(h.DestQName), dest_qmgr=_text(h.DestQMgrName),
                              format=_text(h.Format), put_appl_type=h.PutApplType,
                              put_appl_name=_text(h.PutApplName)), data[CMQC.MQDLH_LENGTH_1:].decode()


def _trigger_data(tm: L.TriggerMessage, body: str) -> bytes:
    """A trigger message's data as a queue manager writes it: the MQTM (names blank-padded), then nothing."""
    fields = dict(QName=tm.q_name, ProcessName=tm.process_name, TriggerData=tm.trigger_data, ApplId=tm.appl_id,
                  EnvData=tm.env_data, UserData=tm.user_data)
    return TM(ApplType=tm.appl_type, **{k: v.encode().ljust(len(TM.DEFAULTS[k])) for k, v in fields.items()}).pack() \
        + body.encode()


def _xmit_data(header: L.XmitHeader, body: str) -> bytes:
    """A transmission-queue message's data as a queue manager returns it: MQXQH, MQMD version 1, body."""
    embedded = MD(Version=1, Expiry=header.expiry).pack()[:CMQC.MQMD_LENGTH_1]
    return XQH().pack() + embedded + body.encode()


def _from_xmit_data(data: bytes) -> tuple[L.XmitHeader | None, str]:
    """The MQXQH a program put at the start of the data (checked like a queue manager would), and the rest."""
    if len(data) < CMQC.MQXQH_CURRENT_LENGTH or data[:4] != CMQC.MQXQH_STRUC_ID:
        return None, data.decode()
    xqh = XQH().unpack(data[:CMQC.MQXQH_CURRENT_LENGTH - CMQC.MQMD_LENGTH_1])
    md = MD().unpack(data[CMQC.MQXQH_CURRENT_LENGTH - CMQC.MQMD_LENGTH_1:CMQC.MQXQH_CURRENT_LENGTH]
                     + bytes(CMQC.MQMD_LENGTH_2 - CMQC.MQMD_LENGTH_1))
    if xqh.Version != 1 or md.StrucId != b"MD  " or md.Version != 1:
        raise MQMIError(MQ.MQCC_FAILED, 2141)   # MQRC_XQH_ERROR (a malformed header from the adapter)
    return L.XmitHeader(expiry=md.Expiry), data[CMQC.MQXQH_CURRENT_LENGTH:].decode()


class GMO(_Opts):
    DEFAULTS = dict(Options=MQ.MQGMO_NO_WAIT, WaitInterval=0, SegmentStatus=b" ", MatchOptions=0, Version=1)


class PMO(_Opts):
    DEFAULTS = dict(Options=MQ.MQPMO_NONE)


class OD(_Opts):
    DEFAULTS = dict(ObjectName="", ObjectQMgrName="")


def _text(value) -> str:
    return (value.decode() if isinstance(value, bytes) else str(value)).rstrip(" \0")


def _identifier(value: bytes) -> str:
    return bytes(value).rstrip(b"\0").decode("ascii", "replace")


class _Clock:
    """The stand-in's time: real time, or (``fast``) real time with every wait skipped and added on.

    The dlq area waits for rescan intervals and expiry in earnest (tens of seconds a case on a real
    queue manager); its tests give the adapter this clock for its ``time`` as well, so that a wait
    moves both clocks on at once without taking the time.  Never set back: it stays monotonic.
    """

    def __init__(self) -> None:
        self.fast = False
        self.skipped = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.skipped

    def sleep(self, seconds: float) -> None:
        if self.fast:
            self.skipped += max(0.0, seconds)
        else:
            time.sleep(seconds)


CLOCK = _Clock()


class _Server:
    """The queue manager behind every connection: the simulated one, its clock following real time."""

    def __init__(self, platform: str, faults: tuple[str, ...], group: tuple[str, ...] = (),
                 cluster: tuple = ()) -> None:
        self.qm = SimulatedQueueManager(platform, faults)
        #: The other members of the queue manager's queue-sharing group (z/OS), each reached by its name.
        self.group = tuple(group)
        if group:
            self.qm.execute(L.DefineQueueSharingGroup(qmgrs=group))
        #: Each queue's disposition by where it is kept: NAME (this queue manager's, or shared), NAME@MEMBER.
        self.placement: dict[str, int] = {}
        self.process_placement: dict[str, int] = {}
        self.platform = platform
        self.started = CLOCK.monotonic()
        self.names = itertools.count(1)
        self.defined: list[str] = []
        self.deleted: list[str] = []
        self.types: dict[str, int] = {}
        self.processes: list[str] = []
        self.processes_deleted: list[str] = []
        self.qmgr_attrs = dict(_QMGR_DEFAULTS)
        self.member_attrs = {member: dict(_QMGR_DEFAULTS) for member in group + tuple(cluster[1] if cluster else ())}
        self.calls: list[str] = []
        #: The cluster set up for the kit: (name, members, lag), see :class:`_Cluster`.
        self.cluster = _Cluster(self, *cluster) if cluster else None

    def leave(self, name: str, member: str = "", disposition: int = MQ.MQQSGD_Q_MGR, process: bool = False) -> None:
        """An object that is there without this run's calls: another application's, or a killed run's."""
        if process:
            self.processes.append(name)
            self.process_placement[name] = disposition
            return
        key = f"{name}@{member}" if member else name
        self.defined.append(key)
        self.types[key] = CMQC.MQQT_LOCAL
        self.placement[key] = disposition

    def run(self, op: L.Op) -> L.Observation:
        behind = int((CLOCK.monotonic() - self.started) * 10) - self.qm.clock
        if behind > 0:
            self.qm.execute(L.AdvanceClock(tenths=behind))
        self.calls.append(type(op).__name__)
        return self.qm.execute(op)

    def call(self, op: L.Op) -> L.Observation:
        obs = self.run(op)
        if obs.rc != MQ.MQRC_NONE and obs.message is None:
            raise MQMIError(obs.cc, obs.rc)
        return obs


class _Cluster:
    """A cluster set up for the kit around the queue manager: members with a cluster-receiver channel each.

    What a member's command changes reaches the queue manager's repository only after ``lag`` of the
    queue manager's inquiries about the cluster (the full repositories' propagation, in small): until
    then its puts choose by what it knew before, and its inquiries show that.
    """

    def __init__(self, server: "_Server", name: str, members: tuple[str, ...], lag: int) -> None:
        self.server, self.name, self.members, self.lag = server, name, tuple(members), lag
        self.receivers = {m: dict(name=f"TO.{m}", clwlrank=0, clwlprty=0, clwlwght=50, netprty=0) for m in members}
        self.status = dict.fromkeys(members, 0)   # the queue manager's cluster-sender channel to each member
        self.suspended: set[str] = set()
        self.instances: dict[tuple[str, str], dict] = {}
        self.messages: dict[tuple[str, str], list[bytes]] = {}
        self.sctq: list[tuple[bytes, str, str]] = []   # (MsgId, member, queue) waiting for a stopped channel
        self.pending: list[L.Op] = []   # changes on their way to the queue manager's repository
        self.applied: set[str] = set()   # the kinds of cluster change that reached the queue manager
        self.commands: set[str] = set()   # the PCF commands the cluster answered
        self.countdown = 0
        self.seen = self._snapshot()
        server.qm.execute(L.SetClusterQueueManager(name=NAME, clusters=(name,), local=True))
        for m in members:
            server.qm.execute(self._channel_op(m))

    def _snapshot(self) -> dict:
        return {"receivers": {m: dict(r) for m, r in self.receivers.items()}, "suspended": set(self.suspended),
                "instances": {k: dict(v) for k, v in self.instances.items()}}

    def _channel_op(self, m: str) -> L.SetClusterChannel:
        r = self.receivers[m]
        return L.SetClusterChannel(name=r["name"], qmgr=m, clusters=(self.name,), state=self.status[m],
                                   clwlrank=r["clwlrank"], clwlprty=r["clwlprty"], clwlwght=r["clwlwght"],
                                   netprty=r["netprty"])

    def _apply(self, op: L.Op) -> None:
        self.applied.add(type(op).__name__)
        self.server.qm.execute(op)

    def _changed(self, op: L.Op) -> None:
        """``op`` reaches the queue manager's repository later (a channel's with its state as it is then)."""
        self.pending.append(op)
        self.countdown = self.lag
        if not self.lag:
            self._view()

    def _view(self) -> dict:
        """What the queue manager knows of the cluster: changes arrive after ``lag`` inquiries."""
        if self.countdown > 0:
            self.countdown -= 1
            return self.seen
        for op in self.pending:
            if isinstance(op, L.SetClusterChannel):
                op = self._channel_op(op.qmgr)
            self._apply(op)
        self.pending.clear()
        self.seen = self._snapshot()
        return self.seen

    def command(self, command: str, args: dict, member: str, queue: str):
        qm = member or NAME
        self.commands.add(command)
        if command in ("MQCMD_CREATE_Q", "MQCMD_CHANGE_Q"):
            if _text(args.get(CMQC.MQCA_CLUSTER_NAME, "")) != self.name:
                raise MQMIError(MQ.MQCC_FAILED, 2189)
            fields = dict(put_enabled=args[CMQC.MQIA_INHIBIT_PUT] == MQ.MQQA_PUT_ALLOWED,
                          clwlrank=args[CMQC.MQIA_CLWL_Q_RANK], clwlprty=args[CMQC.MQIA_CLWL_Q_PRIORITY],
                          clwluseq=_USEQ[args[CMQC.MQIA_CLWL_USEQ]])
            if (command == "MQCMD_CREATE_Q") == ((qm, queue) in self.instances):
                raise MQMIError(MQ.MQCC_FAILED, 4001 if command == "MQCMD_CREATE_Q" else MQ.MQRC_UNKNOWN_OBJECT_NAME)
            self.instances[(qm, queue)] = fields
            self.messages.setdefault((qm, queue), [])
            op = L.SetClusterInstance(qmgr=qm, queue=queue, clusters=(self.name,), **fields)
            if member:
                self._changed(op)
            else:   # the queue manager's own queue: no repository between
                self._apply(op)
        elif command == "MQCMD_DELETE_Q":
            self.instances.pop((qm, queue))
            self.messages.pop((qm, queue), None)
            op = L.RemoveClusterInstance(qmgr=qm, queue=queue)
            self._changed(op) if member else self._apply(op)
        elif command == "MQCMD_INQUIRE_CHANNEL":
            r = self.receivers[member]
            return [{CMQCFC.MQCACH_CHANNEL_NAME: f"OTHER.{member}".ljust(20), CMQC.MQCA_CLUSTER_NAME: "ELSEWHERE"},
                    {CMQCFC.MQCACH_CHANNEL_NAME: r["name"].ljust(20), CMQC.MQCA_CLUSTER_NAME: self.name.ljust(48),
                     **{CMQCFC.__dict__[p]: r[f] for f, p in _CHANNEL.items()}}]
        elif command == "MQCMD_CHANGE_CHANNEL":
            r = self.receivers[member]
            if _text(args[CMQCFC.MQCACH_CHANNEL_NAME]) != r["name"] \
                    or args[CMQCFC.MQIACH_CHANNEL_TYPE] != CMQXC.MQCHT_CLUSRCVR:
                raise MQMIError(MQ.MQCC_FAILED, 3007)
            r.update({f: args[CMQCFC.__dict__[p]] for f, p in _CHANNEL.items() if CMQCFC.__dict__[p] in args})
            self._changed(self._channel_op(member))
        elif command in ("MQCMD_STOP_CHANNEL", "MQCMD_START_CHANNEL"):
            m = next(m for m, r in self.receivers.items() if r["name"] == _text(args[CMQCFC.MQCACH_CHANNEL_NAME]))
            if command == "MQCMD_STOP_CHANNEL" and not self.status[m]:
                # a channel with no status (inactive) is not stopped (as the adapter must expect of MQ)
                raise MQMIError(MQ.MQCC_FAILED, CMQCFC.MQRCCF_CHANNEL_NOT_ACTIVE)
            self.status[m] = 6 if command == "MQCMD_STOP_CHANNEL" else 3
            self._apply(self._channel_op(m))
            if self.status[m] == 3:   # what waited for the channel goes on to the member
                for msg_id, member_, q in [w for w in self.sctq if w[1] == m]:
                    self.sctq.remove((msg_id, member_, q))
                    self.messages.setdefault((m, q), []).append(msg_id)
        elif command == "MQCMD_INQUIRE_CHANNEL_STATUS":
            m = next(m for m, r in self.receivers.items() if r["name"] == _text(args[CMQCFC.MQCACH_CHANNEL_NAME]))
            if not self.status[m]:
                raise MQMIError(MQ.MQCC_FAILED, 3065)   # MQRCCF_CHL_STATUS_NOT_FOUND: inactive
            return [{CMQCFC.MQIACH_CHANNEL_STATUS: self.status[m]}]
        elif command in ("MQCMD_SUSPEND_Q_MGR_CLUSTER", "MQCMD_RESUME_Q_MGR_CLUSTER"):
            if _text(args[CMQC.MQCA_CLUSTER_NAME]) != self.name:
                raise MQMIError(MQ.MQCC_FAILED, 3007)
            (self.suspended.add if command == "MQCMD_SUSPEND_Q_MGR_CLUSTER" else self.suspended.discard)(member)
            self._changed(L.SetClusterQueueManager(name=member, clusters=(self.name,),
                                                   suspended=member in self.suspended))
        elif command == "MQCMD_INQUIRE_CLUSTER_Q_MGR":
            view, m = self._view(), _text(args[CMQC.MQCA_CLUSTER_Q_MGR_NAME])
            r = view["receivers"][m]
            return [{CMQC.MQCA_CLUSTER_Q_MGR_NAME: m,
                     CMQCFC.MQIACF_SUSPEND: CMQCFC.MQSUS_YES if m in view["suspended"] else CMQCFC.MQSUS_NO,
                     **{CMQCFC.__dict__[p]: r[f] for f, p in _CHANNEL.items()}}]
        elif command == "MQCMD_INQUIRE_Q":
            view = self._view()
            found = [{CMQC.MQCA_CLUSTER_Q_MGR_NAME: host.ljust(48),
                      CMQC.MQIA_INHIBIT_PUT: MQ.MQQA_PUT_ALLOWED if f["put_enabled"] else MQ.MQQA_PUT_INHIBITED,
                      CMQC.MQIA_CLWL_Q_RANK: f["clwlrank"], CMQC.MQIA_CLWL_Q_PRIORITY: f["clwlprty"]}
                     for (host, q), f in view["instances"].items() if q == queue]
            if not found:
                raise MQMIError(MQ.MQCC_FAILED, MQ.MQRC_UNKNOWN_OBJECT_NAME)
            return found
        return []

    def put(self, queue: str, msg_id: bytes) -> None:
        """A put to cluster queue ``queue``: the queue manager chooses by what it knows, the message goes there."""
        where = dict(self.server.run(L.ClusterPut(queue=queue)).attrs)["DESTINATION"]
        if not where:
            raise MQMIError(MQ.MQCC_FAILED, 2189)   # MQRC_CLUSTER_RESOLUTION_ERROR
        host = where.split("/")[0]
        if host != NAME and self.status[host] == 6:
            self.sctq.append((msg_id, host, queue))
        else:
            self.messages.setdefault((host, queue), []).append(msg_id)


#: A channel's workload attributes and their PCF parameters.
_CHANNEL = {"clwlrank": "MQIACH_CLWL_CHANNEL_RANK", "clwlprty": "MQIACH_CLWL_CHANNEL_PRIORITY",
            "clwlwght": "MQIACH_CLWL_CHANNEL_WEIGHT", "netprty": "MQIACH_NETWORK_PRIORITY"}
#: The PCF commands only the cluster answers.
_CLUSTER_COMMANDS = ("MQCMD_INQUIRE_CHANNEL", "MQCMD_CHANGE_CHANNEL", "MQCMD_STOP_CHANNEL", "MQCMD_START_CHANNEL",
                     "MQCMD_INQUIRE_CHANNEL_STATUS", "MQCMD_SUSPEND_Q_MGR_CLUSTER", "MQCMD_RESUME_Q_MGR_CLUSTER",
                     "MQCMD_INQUIRE_CLUSTER_Q_MGR", "MQCMD_INQUIRE_Q")


class _ClusterQueue:
    """An instance of a cluster queue on a queue manager of the cluster, or the cluster transmission queue."""

    def __init__(self, cluster: _Cluster, host: str, name: str) -> None:
        self.cluster, self.host, self.name = cluster, host, name

    def get(self, max_length, md: MD, gmo: GMO) -> bytes:
        wanted = md.MsgId if gmo.Version >= 2 and gmo.MatchOptions & CMQC.MQMO_MATCH_MSG_ID else None
        if self.name == SCTQ:
            for msg_id, member, queue in self.cluster.sctq:
                if wanted in (None, msg_id):
                    md.MsgId = msg_id
                    header = XQH(RemoteQName=queue.encode().ljust(48), RemoteQMgrName=member.encode().ljust(48))
                    return header.pack() + MD(Version=1, MsgId=msg_id).pack()[:CMQC.MQMD_LENGTH_1] + b"cluster"
        else:
            waiting = self.cluster.messages.get((self.host, self.name), [])
            for msg_id in waiting:
                if wanted in (None, msg_id):
                    waiting.remove(msg_id)
                    md.MsgId = msg_id
                    return b"cluster"
        raise MQMIError(MQ.MQCC_FAILED, MQ.MQRC_NO_MSG_AVAILABLE)

    def close(self) -> None:
        pass


SERVER: _Server | None = None


def reset(platform: str = MQ.PLATFORM_DISTRIBUTED, faults: str = "", fast: bool = False,
          group: tuple[str, ...] = (), cluster: tuple = ()) -> _Server:
    """A fresh queue manager for the connections made from now on (``fast``: waits skipped, see :class:`_Clock`),
    in a queue-sharing group with the queue managers ``group`` (z/OS), in cluster ``cluster`` = (name, members,
    lag) with those members (:class:`_Cluster`)."""
    global SERVER
    CLOCK.fast = fast
    SERVER = _Server(platform, parse_faults(faults or None), group, cluster)
    return SERVER


class QueueManager:
    def __init__(self, server: _Server, member: str = "") -> None:
        self.server, self.member = server, member
        self.conn = f"s{next(server.names)}"
        server.call(L.Connect(conn=self.conn, qmgr=member))

    def inquire(self, selector: int):
        if selector in _QMGR:
            return (self.server.member_attrs[self.member] if self.member else self.server.qmgr_attrs)[_QMGR[selector]]
        return {CMQC.MQIA_PLATFORM: CMQC.MQPL_ZOS if self.server.platform == MQ.PLATFORM_ZOS else CMQC.MQPL_UNIX,
                CMQC.MQIA_COMMAND_LEVEL: 940, CMQC.MQCA_Q_MGR_NAME: (self.member or "QM1").encode().ljust(48)}[selector]

    def commit(self) -> None:
        self.server.call(L.Commit(conn=self.conn))

    def backout(self) -> None:
        self.server.call(L.Backout(conn=self.conn))

    def disconnect(self) -> None:
        self.server.call(L.Disconnect(conn=self.conn))

    def put1(self, od: OD, msg: bytes, md: MD, pmo: PMO) -> None:
        cluster, queue = self.server.cluster, _text(od.ObjectName)
        if cluster and not _text(od.ObjectQMgrName) and any(q == queue for _, q in cluster.instances):
            cluster.put(queue, md.MsgId)
            return
        options, desc, header, dlh, body = _put_options(md, pmo, msg)
        self.server.call(L.Put1(conn=self.conn, queue=_text(od.ObjectName), qmgr=_text(od.ObjectQMgrName),
                                body=body, md=desc, options=options, xmit_header=header, dlh=dlh))


def connect(queue_manager, channel=None, conn_info=None, user=None, password=None) -> QueueManager:
    if SERVER is None:
        raise MQMIError(MQ.MQCC_FAILED, 2059)   # MQRC_Q_MGR_NOT_AVAILABLE
    members = SERVER.group + (SERVER.cluster.members if SERVER.cluster else ())
    return QueueManager(SERVER, queue_manager if queue_manager in members else "")


def _put_options(md: MD, pmo: PMO, msg: bytes):
    """A put's options, descriptor, MQXQH (an MQXMIT message's), MQDLH (an MQDEAD message's) and body, as
    the queue manager takes them."""
    context = None
    if pmo.Options & CMQC.MQPMO_SET_ALL_CONTEXT:
        context = L.MessageContext(user_id=_text(md.UserIdentifier), appl_identity_data=_text(md.ApplIdentityData),
                                   put_appl_type=md.PutApplType, put_appl_name=_text(md.PutApplName))
    desc = L.MessageDescriptor(priority=md.Priority, persistence=md.Persistence, expiry=md.Expiry, report=md.Report,
                               msg_type=md.MsgType, feedback=md.Feedback, format=_text(md.Format),
                               reply_to_q=_text(md.ReplyToQ), reply_to_qmgr=_text(md.ReplyToQMgr),
                               msg_id=_identifier(md.MsgId), correl_id=_identifier(md.CorrelId),
                               backout_count=md.BackoutCount, context=context, msg_flags=md.MsgFlags)
    header = dlh = None
    if desc.format == MQ.MQFMT_XMIT_Q_HEADER:
        header, body = _from_xmit_data(msg)
    elif desc.format == MQ.MQFMT_DEAD_LETTER_HEADER:
        dlh, body = _from_dead_letter_data(msg)
    else:
        body = msg.decode()
    if pmo.Options & CMQC.MQPMO_PASS_ALL_CONTEXT:
        raise MQMIError(MQ.MQCC_FAILED, 2097)   # MQRC_CONTEXT_HANDLE_ERROR: the adapter names no input handle
    return pmo.Options & ~CMQC.MQPMO_SET_ALL_CONTEXT, desc, header, dlh, body


class Queue:
    def __new__(cls, qmgr: QueueManager, name: str, options: int):
        cluster, name = qmgr.server.cluster, _text(name)
        if cluster and (name == SCTQ or (qmgr.member or NAME, name) in cluster.instances):
            return _ClusterQueue(cluster, qmgr.member or NAME, name)
        return super().__new__(cls)

    def __init__(self, qmgr: QueueManager, name: str, options: int) -> None:
        self.qmgr, self.name = qmgr, _text(name)
        self.handle = f"{qmgr.conn}.{next(qmgr.server.names)}"
        qmgr.server.call(L.Open(conn=qmgr.conn, handle=self.handle, queue=self.name,
                                options=options & ~CMQC.MQOO_SET_ALL_CONTEXT))

    def put(self, msg: bytes, md: MD, pmo: PMO) -> None:
        options, desc, header, dlh, body = _put_options(md, pmo, msg)
        self.qmgr.server.call(L.Put(conn=self.qmgr.conn, handle=self.handle, body=body, md=desc,
                                    options=options, xmit_header=header, dlh=dlh))

    def get(self, max_length, md: MD, gmo: GMO) -> bytes:
        if gmo.Version >= 2 and gmo.MatchOptions:
            # MQGMO version 2 or later: MatchOptions select by the MQMD's MsgId and CorrelId on input
            op = L.GetMatching(conn=self.qmgr.conn, handle=self.handle, options=gmo.Options,
                               wait_interval=gmo.WaitInterval, match_options=gmo.MatchOptions,
                               msg_id=bytes(md.MsgId).rstrip(b"\0").decode("ascii", "replace"),
                               correl_id=bytes(md.CorrelId).rstrip(b"\0").decode("ascii", "replace"))
        else:
            op = L.Get(conn=self.qmgr.conn, handle=self.handle, options=gmo.Options, wait_interval=gmo.WaitInterval)
        obs = self.qmgr.server.run(op)
        m = obs.message
        if m is None:
            if obs.rc == MQ.MQRC_NO_MSG_AVAILABLE and gmo.Options & MQ.MQGMO_WAIT and gmo.WaitInterval > 0:
                CLOCK.sleep(gmo.WaitInterval / 1000)   # a real queue manager waits the interval out
            raise MQMIError(obs.cc, obs.rc)
        md.Priority, md.Persistence, md.Expiry, md.Report = m.priority, m.persistence, m.expiry, m.report
        md.MsgType, md.Feedback, md.BackoutCount = m.msg_type, m.feedback, m.backout_count
        md.Offset, gmo.SegmentStatus = m.offset, m.segment_status.encode()
        md.Format, md.ReplyToQ, md.ReplyToQMgr = m.format.encode(), m.reply_to_q.encode(), m.reply_to_qmgr.encode()
        md.MsgId = (m.msg_id or "").encode()[:24].ljust(24, b"\0")
        md.CorrelId = (m.correl_id or "").encode()[:24].ljust(24, b"\0")
        if m.context is not None:
            md.UserIdentifier, md.ApplIdentityData = m.context.user_id.encode(), m.context.appl_identity_data.encode()
            md.PutApplType, md.PutApplName = m.context.put_appl_type, m.context.put_appl_name.encode()
        data = (_xmit_data(m.xmit_header, m.body) if m.xmit_header is not None
                else _trigger_data(m.trigger, m.body) if m.trigger is not None
                else _dead_letter_data(m.dlh, m.body) if m.dlh is not None else m.body.encode())
        if obs.rc != MQ.MQRC_NONE:
            raise MQMIError(obs.cc, obs.rc, message=data)
        return data

    def close(self) -> None:
        self.qmgr.server.call(L.Close(conn=self.qmgr.conn, handle=self.handle))

    def inquire(self, selector: int):
        name = _MQSC[selector]
        value = dict(self.qmgr.server.call(L.InquireQueue(queue=self.name, names=(name,),
                                                         qmgr=self.qmgr.member)).attrs or ())[name]
        return value.encode().ljust(48) if isinstance(value, str) else value


class _Command:
    def __init__(self, qmgr: QueueManager, command: str) -> None:
        self.qmgr, self.command = qmgr, command

    def __call__(self, args: dict):
        server, member = self.qmgr.server, self.qmgr.member
        queue = _text(args.get(CMQC.MQCA_Q_NAME, ""))
        cluster = server.cluster
        if cluster and (self.command in _CLUSTER_COMMANDS or CMQC.MQCA_CLUSTER_NAME in args
                        or (self.command == "MQCMD_DELETE_Q" and (member or NAME, queue) in cluster.instances)):
            if self.command == "MQCMD_INQUIRE_Q" and args.get(CMQC.MQIA_Q_TYPE) != CMQC.MQQT_CLUSTER:
                raise MQMIError(MQ.MQCC_FAILED, 3007)
            answer = cluster.command(self.command, args, member, queue)
            key = f"{queue}@{member}" if member else queue
            if self.command == "MQCMD_CREATE_Q":
                server.defined.append(key)
                server.types[key] = CMQC.MQQT_LOCAL
                server.placement[key] = MQ.MQQSGD_Q_MGR
            elif self.command == "MQCMD_DELETE_Q":
                server.deleted.append(key)
                del server.placement[key]
            return answer
        attrs_ = {_MQSC[k]: (_text(v) if isinstance(v, (bytes, str)) else v)
                  for k, v in args.items() if k in _MQSC}
        qtype = args.get(CMQC.MQIA_Q_TYPE, CMQC.MQQT_LOCAL)
        # As z/OS has it: a command names the disposition of the object it means (default: this queue
        # manager's own), and finds no object of another disposition by that name.
        disposition = args.get(CMQC.MQIA_QSG_DISP, MQ.MQQSGD_Q_MGR)
        if disposition != MQ.MQQSGD_Q_MGR and not server.group:
            raise MQMIError(MQ.MQCC_FAILED, 3211)   # MQRCCF_DISPOSITION_CONFLICT: no queue-sharing group
        shared = disposition == MQ.MQQSGD_SHARED
        key = f"{queue}@{member}" if member and not shared else queue
        if self.command in ("MQCMD_CHANGE_Q", "MQCMD_DELETE_Q") and server.placement.get(key) != disposition:
            raise MQMIError(MQ.MQCC_FAILED, MQ.MQRC_UNKNOWN_OBJECT_NAME)
        if self.command == "MQCMD_CREATE_Q":
            if qtype == CMQC.MQQT_REMOTE:
                server.call(L.DefineRemoteQueue(queue=queue, rname=_text(args[CMQC.MQCA_REMOTE_Q_NAME]),
                                                rqmname=_text(args[CMQC.MQCA_REMOTE_Q_MGR_NAME]),
                                                xmitq=_text(args.get(CMQC.MQCA_XMIT_Q_NAME, ""))))
            else:
                if shared and not _text(args.get(CMQC.MQCA_CF_STRUC_NAME, "")):
                    raise MQMIError(MQ.MQCC_FAILED, 3211)   # a shared queue needs its CF structure
                server.call(L.DefineQueue(queue=queue, attrs=attrs_, qmgr="" if shared else member))
            server.defined.append(key)
            server.types[key] = qtype
            server.placement[key] = disposition
        elif self.command == "MQCMD_CHANGE_Q":
            if member:
                raise MQMIError(MQ.MQCC_FAILED, 3007)   # the kit changes only its queue manager's queues
            attrs_.pop("QSGDISP", None)
            server.call(L.AlterQueue(queue=queue, attrs=attrs_))
        elif self.command == "MQCMD_DELETE_Q":
            if server.types.get(key, CMQC.MQQT_LOCAL) != qtype \
                    or (CMQCFC.MQIACF_PURGE in args) != (qtype == CMQC.MQQT_LOCAL):
                raise MQMIError(MQ.MQCC_FAILED, 3015)   # MQRCCF_PARM_CONFLICT: PURGE is for local queues
            server.deleted.append(key)
            del server.placement[key]
        elif self.command == "MQCMD_INQUIRE_Q_NAMES":
            prefix = queue.rstrip("*")
            return [{CMQCFC.MQCACF_Q_NAMES: [
                k.split("@")[0] for k, where in server.placement.items()
                if k.startswith(prefix) and where == disposition and (shared or k.partition("@")[2] == member)
                and server.types.get(k, CMQC.MQQT_LOCAL) == qtype]}]
        elif self.command == "MQCMD_CREATE_PROCESS":
            name = _text(args[CMQC.MQCA_PROCESS_NAME])
            server.call(L.DefineProcess(process=name, appl_type=args[CMQC.MQIA_APPL_TYPE],
                                        appl_id=_text(args[CMQC.MQCA_APPL_ID]),
                                        env_data=_text(args[CMQC.MQCA_ENV_DATA]),
                                        user_data=_text(args[CMQC.MQCA_USER_DATA])))
            server.processes.append(name)
            server.process_placement[name] = disposition
        elif self.command == "MQCMD_DELETE_PROCESS":
            name = _text(args[CMQC.MQCA_PROCESS_NAME])
            if server.process_placement.get(name) != disposition:
                raise MQMIError(MQ.MQCC_FAILED, MQ.MQRC_UNKNOWN_OBJECT_NAME)
            server.processes_deleted.append(name)
            del server.process_placement[name]
        elif self.command == "MQCMD_INQUIRE_PROCESS_NAMES":
            prefix = _text(args[CMQC.MQCA_PROCESS_NAME]).rstrip("*")
            return [{CMQCFC.MQCACF_PROCESS_NAMES: [n for n, where in server.process_placement.items()
                                                   if n.startswith(prefix) and where == disposition]}]
        elif self.command == "MQCMD_CHANGE_Q_MGR":
            values = {_QMGR[k]: (_text(v) if isinstance(v, (bytes, str)) else v) for k, v in args.items()}
            (server.member_attrs[member] if member else server.qmgr_attrs).update(values)
            workload = {k: values.pop(k) for k in ("CLWLUSEQ", "CLWLMRUC") if k in values}
            if workload and server.cluster and not member:
                attrs_ = server.qmgr_attrs
                server.cluster._apply(L.SetClusterQueueManager(
                    name=NAME, clusters=(server.cluster.name,), local=True,
                    clwluseq=_USEQ[attrs_["CLWLUSEQ"]], clwlmruc=attrs_["CLWLMRUC"]))
            if values:
                server.call(L.AlterQueueManager(attrs=values, qmgr=member))
        elif self.command == "MQCMD_REFRESH_Q_MGR" and args.get(CMQCFC.MQIACF_REFRESH_TYPE) == CMQCFC.MQRT_EXPIRY:
            server.call(L.RefreshExpiry(queues=_text(args[CMQCFC.MQCACF_OBJECT_NAME])))
        else:
            raise MQMIError(MQ.MQCC_FAILED, 3007)   # MQRCCF_COMMAND_FAILED
        return []


class PCFExecute:
    def __init__(self, qmgr: QueueManager) -> None:
        self.qmgr = qmgr

    def __getattr__(self, command: str) -> _Command:
        if not command.startswith("MQCMD_"):
            raise AttributeError(command)
        return _Command(self.qmgr, command)
