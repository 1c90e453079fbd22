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
        MQCA_CF_STRUC_NAME=2039).items():
    setattr(CMQC, _name, _value)
CMQCFC = SimpleNamespace(MQIACF_PURGE=1007, MQPO_YES=1, MQCACF_Q_NAMES=3011, MQIACF_REFRESH_TYPE=1078, MQRT_EXPIRY=2,
                        MQCACF_OBJECT_NAME=3046, MQCACF_PROCESS_NAMES=3012)
#: Queue-manager attribute selectors back to their MQSC names, and their values on a new queue manager.
_QMGR = {CMQC.MQIA_EXPIRY_INTERVAL: "EXPRYINT", CMQC.MQIA_TRIGGER_INTERVAL: "TRIGINT",
         CMQC.MQCA_DEAD_LETTER_Q_NAME: "DEADQ"}
_QMGR_DEFAULTS = {"EXPRYINT": 0, "TRIGINT": 999999999, "DEADQ": ""}

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
    DEFAULTS = dict(Options=MQ.MQGMO_NO_WAIT, WaitInterval=0, SegmentStatus=b" ")


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

    def __init__(self, platform: str, faults: tuple[str, ...], group: tuple[str, ...] = ()) -> None:
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
        self.member_attrs = {member: dict(_QMGR_DEFAULTS) for member in group}
        self.calls: list[str] = []

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


SERVER: _Server | None = None


def reset(platform: str = MQ.PLATFORM_DISTRIBUTED, faults: str = "", fast: bool = False,
          group: tuple[str, ...] = ()) -> _Server:
    """A fresh queue manager for the connections made from now on (``fast``: waits skipped, see :class:`_Clock`),
    in a queue-sharing group with the queue managers ``group`` (z/OS)."""
    global SERVER
    CLOCK.fast = fast
    SERVER = _Server(platform, parse_faults(faults or None), group)
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
        options, desc, header, dlh, body = _put_options(md, pmo, msg)
        self.server.call(L.Put1(conn=self.conn, queue=_text(od.ObjectName), qmgr=_text(od.ObjectQMgrName),
                                body=body, md=desc, options=options, xmit_header=header, dlh=dlh))


def connect(queue_manager, channel=None, conn_info=None, user=None, password=None) -> QueueManager:
    if SERVER is None:
        raise MQMIError(MQ.MQCC_FAILED, 2059)   # MQRC_Q_MGR_NOT_AVAILABLE
    return QueueManager(SERVER, queue_manager if queue_manager in SERVER.group else "")


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
        obs = self.qmgr.server.run(L.Get(conn=self.qmgr.conn, handle=self.handle, options=gmo.Options,
                                         wait_interval=gmo.WaitInterval))
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
            server.call(L.AlterQueueManager(attrs=values, qmgr=member))
            (server.member_attrs[member] if member else server.qmgr_attrs).update(values)
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
