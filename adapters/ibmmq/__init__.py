"""The ``ibmmq`` adapter: a real IBM MQ queue manager, driven through the MQI by IBM's ``ibmmq`` package.

Every operation of the language becomes the MQI call a program would make
(MQCONNX, MQOPEN, MQPUT, MQPUT1, MQGET, MQCMIT, MQBACK, MQCLOSE, MQDISC, MQINQ)
on a client connection; queue definitions and changes go to the command server
as PCF commands.  The queue manager's answer (completion and reason code,
returned descriptor fields) is the observation, unchanged: there is nothing to
emulate.  The mapping, call by call, is in docs/adapters/ibmmq.md.

Isolation: every queue a case defines is named ``PREFIX.CASE.NAME`` (the run's
prefix, ``MQC.`` and four hex digits unless the ``prefix`` option says
otherwise), and is deleted, with its messages, when the case ends; the kit never
touches an object without its prefix.  The platform (z/OS or distributed) and
the command level are read with MQINQ when the adapter connects, and decide
which rules apply.  A remote client cannot restart the queue manager, end a
program abnormally or cut its own connection: those rules are not applicable.
Time is the queue manager's own: a clock advance is a real wait.

Queue-manager attributes (EXPRYINT, TRIGINT, DEADQ) belong to every application
of the queue manager: the kit alters them only with ``alter_qmgr=yes`` (each
value it changes is read first and put back when the case ends); otherwise the
rules that need them are not applicable.

Options (each also from the environment, ``MQCONFORM_IBMMQ_<NAME>``):
``qmgr``, ``channel``, ``conn`` (``host(port)``), ``user``, ``password``,
``prefix``, ``alter_qmgr``; ``group`` (z/OS: the other members of the queue manager's
queue-sharing group the kit may use, ``NAME@host(port)`` separated by commas, reached through the
same channel and credentials) with ``cfstruct`` (the coupling-facility structure of the kit's shared
queues); ``client`` names the module providing the ``ibmmq`` API (default
``ibmmq``; the kit's tests give a stand-in); ``dlq_handler``, a command speaking the DLQ handler
protocol (:mod:`adapters.dlq_handler.external`) to run as the dead-letter queue handler instead of the
kit's own.

The dlq area (with ``alter_qmgr=yes``) runs a DLQ handler as an MQ client of the queue manager: the
kit's own handler, which follows the rules table as MQ documents it, or the ``dlq_handler`` program.
Its calls go through this adapter like any program's; each message's fate is read by browsing the
queues.  IBM's runmqdlq is not what is checked: it makes its MQI calls itself.
"""

from __future__ import annotations

import importlib
import os
import secrets
import shlex
import string
import time

from adapters.base import (AdapterOptionError, AdapterUnavailable, Capabilities, Refused, carry_out,
                           check_options)
from adapters.dlq_handler.external import ExternalHandler
from adapters.dlq_handler.host import DlqHost
from adapters.ibmmq.cluster import NEEDS as CLUSTER_NEEDS
from adapters.ibmmq.cluster import NOT_EXPRESSIBLE as CLUSTER_NOT_EXPRESSIBLE
from adapters.ibmmq.cluster import ClusterLink
from adapters.ibmmq.fields import text as _text
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import RULES

OPTIONS = ("qmgr", "channel", "conn", "user", "password", "prefix", "client", "alter_qmgr", "dlq_handler", "group",
           "cfstruct", "cluster", "cluster_members", "cluster_wait")

#: The message when IBM's client is not installed (one line; the CLI exits 2 with it).
NO_CLIENT = ("the ibmmq adapter needs IBM's MQ client library (the Python package ibmmq and libmqm_r.so "
             "from the IBM MQ redistributable client): see docs/adapters/ibmmq.md, \"Installing the client\"")

#: Queue attributes (MQSC names, as the language has them) and their MQI selectors, by name.
SELECTORS = {
    "DEFPRTY": "MQIA_DEF_PRIORITY", "DEFPSIST": "MQIA_DEF_PERSISTENCE", "DEFSOPT": "MQIA_DEF_INPUT_OPEN_OPTION",
    "MSGDLVSQ": "MQIA_MSG_DELIVERY_SEQUENCE", "GET": "MQIA_INHIBIT_GET", "PUT": "MQIA_INHIBIT_PUT",
    "MAXDEPTH": "MQIA_MAX_Q_DEPTH", "MAXMSGL": "MQIA_MAX_MSG_LENGTH",
    "USAGE": "MQIA_USAGE", "BOTHRESH": "MQIA_BACKOUT_THRESHOLD",
    "BOQNAME": "MQCA_BACKOUT_REQ_Q_NAME", "HARDENBO": "MQIA_HARDEN_GET_BACKOUT",
    "TRIGGER": "MQIA_TRIGGER_CONTROL", "TRIGTYPE": "MQIA_TRIGGER_TYPE", "TRIGDPTH": "MQIA_TRIGGER_DEPTH",
    "TRIGMPRI": "MQIA_TRIGGER_MSG_PRIORITY", "TRIGDATA": "MQCA_TRIGGER_DATA", "PROCESS": "MQCA_PROCESS_NAME",
    "INITQ": "MQCA_INITIATION_Q_NAME",
    "CURDEPTH": "MQIA_CURRENT_Q_DEPTH", "IPPROCS": "MQIA_OPEN_INPUT_COUNT", "OPPROCS": "MQIA_OPEN_OUTPUT_COUNT",
    # a queue's disposition in a queue-sharing group (z/OS): set at definition, named again by every change
    "QSGDISP": "MQIA_QSG_DISP",
}
#: Attributes whose value names another object of the case (prefixed like the queues).
OBJECT_NAMES = ("BOQNAME", "PROCESS", "INITQ", "DEADQ")
#: Queue-manager attributes and their selectors (ALTER QMGR only with the ``alter_qmgr`` option).
QMGR_SELECTORS = {"EXPRYINT": "MQIA_EXPIRY_INTERVAL", "TRIGINT": "MQIA_TRIGGER_INTERVAL",
                  "DEADQ": "MQCA_DEAD_LETTER_Q_NAME", "CLWLUSEQ": "MQIA_CLWL_USEQ",
                  "CLWLMRUC": "MQIA_CLWL_MRU_CHANNELS"}

#: What the adapter runs (the cluster's operations only with the cluster options, below); restarts and
#: faults from outside the program cannot be made from a client.
#: The DLQ handler's operations: a handler instance runs as an MQ client of the queue manager (the
#: kit's own, or the program the ``dlq_handler`` option names), its calls made through this adapter.
HANDLER_OPERATIONS = ("StartDlqHandler", "ChangeDlqTable", "RestartDlqHandler", "RunDlqHandler")
OPERATIONS = ("DefineQueue", "DefineRemoteQueue", "DefineProcess", "AlterQueue", "InquireQueue", "Connect",
              "Disconnect", "Open", "Close", "Put", "Put1", "Get", "GetMatching", "Commit", "Backout", "AdvanceClock",
              "AlterQueueManager", "RefreshExpiry") + HANDLER_OPERATIONS

#: The cluster operations (with the cluster options: adapters/ibmmq/cluster.py).
CLUSTER_OPERATIONS = ("SetClusterQueueManager", "SetClusterChannel", "SetClusterInstance", "RemoveClusterInstance",
                      "ClusterPut")
#: Why the dlq area needs ``alter_qmgr=yes``.
DLQ_NEEDS_DEADQ = ("each dlq case makes its own queue the queue manager's dead-letter queue (DEADQ): "
                   "ALTER QMGR changes the queue manager for every application (run with the adapter option "
                   "alter_qmgr=yes to allow it)")

#: Rules that need ALTER QMGR, and what for (not applicable without the ``alter_qmgr`` option).
NEEDS_ALTER_QMGR = {
    "EXP-23": "the periodic expiry scans need EXPRYINT set",
    "EXP-25": "the scans of another member of the queue-sharing group need its EXPRYINT set",
}
#: Queue-manager attributes as the rules assume them at the start of a case, and the area that
#: depends on each: a queue manager set otherwise is set back for each case (``alter_qmgr=yes``),
#: or the area is not offered.
ASSUMED = {"EXPRYINT": (0, "expiry", "scans for expired messages every {} s"),
           "TRIGINT": (C.DEFAULT_TRIGGER_INTERVAL, "trigger", "has a trigger interval of {} ms")}

_RESTART = "a client cannot restart the queue manager (an administrator's command: docs/adapters/ibmmq.md)"
_GROUP = ("the other queue managers of the queue-sharing group are reached only where the adapter option group "
          "names them (with cfstruct, the coupling-facility structure for the kit's shared queues)")
#: The operations that may name another member of the queue-sharing group (``qmgr``).
MEMBER_OPS = (L.Connect, L.DefineQueue, L.InquireQueue, L.AlterQueueManager)
#: The rules that need another member of a queue-sharing group.
GROUP_RULES = ("EXP-25", "TRIG-05", "TRIG-07", "TRIG-08")
_NEMESIS = "no nemesis for client connections to IBM MQ yet"

NOT_APPLICABLE = {
    "CORE-31": "a client connection ends abnormally only when its program dies, which the kit's own process "
               "cannot: the adapter backs out and disconnects instead",
    **dict.fromkeys(("CORE-32", "CORE-45", "TRIG-17"), _RESTART),
    **dict.fromkeys(("CORE-46", "CORE-47", "CORE-48"), _NEMESIS),
}

_PRINTABLE = set(string.printable.encode()) - set(b"\t\n\r\x0b\x0c")


_MQ_NAME = set(string.ascii_uppercase + string.digits + "._%/")


def _members(text: str, option: str = "group", longest: int = 4) -> list[tuple[str, str]]:
    """A list of queue managers, ``NAME@CONN, ...``, as [(NAME, CONN)] (an empty CONN: the ``conn`` option's)."""
    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, conn = item.partition("@")
        if not name or len(name) > longest or set(name) - _MQ_NAME:
            where = "a z/OS queue manager name" if longest == 4 else "a queue manager name"
            raise AdapterOptionError(f"ibmmq: {option}: {item!r} is not NAME@host(port) with {where} of at most "
                                     f"{longest} characters")
        out.append((name, conn))
    return out


def load_client(module: str = "ibmmq"):
    """The module with the ``ibmmq`` API, or :class:`AdapterUnavailable` with :data:`NO_CLIENT`."""
    try:
        return importlib.import_module(module)
    except ImportError:   # the package, or the client library its extension loads (libmqm_r.so)
        raise AdapterUnavailable(NO_CLIENT) from None


def _chars(value: str, length: int) -> bytes:
    return value.encode("ascii", "replace")[:length].ljust(length)


def _identifier(value: str) -> bytes:
    """A MsgId or CorrelId: the text the kit chose, padded to 24 bytes with nulls, or one the queue
    manager made, given back in the hex :func:`_identifier_text` showed it in."""
    if len(value) == 48 and set(value) <= set(string.hexdigits):
        return bytes.fromhex(value)
    return value.encode("ascii", "replace")[:24].ljust(24, b"\0")


def _identifier_text(value: bytes) -> str:
    """A MsgId or CorrelId as the kit shows it: the text it was given, or the bytes in hex."""
    value = bytes(value)
    kept = value.rstrip(b"\0")
    if not kept:
        return ""
    return kept.decode("ascii") if set(kept) <= _PRINTABLE else value.hex()


class IbmMqAdapter:
    """IBM MQ through the MQI, ibmmq package (options: qmgr, channel, conn, user, password, prefix, client, alter_qmgr,
    dlq_handler, group, cfstruct, cluster, cluster_members, cluster_wait)."""

    name = "ibmmq"

    def __init__(self, **options: str) -> None:
        check_options(self.name, options, set(OPTIONS) | {"dlq-handler"})
        if "dlq-handler" in options:   # as the simulated adapter spells it
            options["dlq_handler"] = options.pop("dlq-handler")
        self.options = {k: options.get(k) or os.environ.get(f"MQCONFORM_IBMMQ_{k.upper()}", "") for k in OPTIONS}
        self.prefix = (self.options["prefix"] or f"MQC.{secrets.token_hex(2).upper()}").rstrip(".")
        if len(self.prefix) > 20 or set(self.prefix) - set(string.ascii_uppercase + string.digits + "._"):
            raise AdapterOptionError("ibmmq: prefix: at most 20 of A-Z, 0-9, '.' and '_'")
        flag = self.options["alter_qmgr"].lower()
        if flag not in ("", "yes", "no"):
            raise AdapterOptionError("ibmmq: alter_qmgr: yes or no")
        self.alter_qmgr = flag == "yes"
        self.dlq_handler = shlex.split(self.options["dlq_handler"]) if self.options["dlq_handler"] else None
        #: The other members of the queue-sharing group the kit may use: (name, connection name).
        self.group = _members(self.options["group"])
        self.cfstruct = self.options["cfstruct"]
        if self.group and not self.cfstruct:
            raise AdapterOptionError("ibmmq: group needs cfstruct, the coupling-facility structure (CFSTRUCT) that "
                                     "the kit's shared queues are defined in")
        self.cluster_members = _members(self.options["cluster_members"], "cluster_members", 48)
        if bool(self.cluster_members) != bool(self.options["cluster"]):
            raise AdapterOptionError("ibmmq: cluster and cluster_members go together: a cluster the kit may use "
                                     "alone, and the members it may connect to")
        try:
            cluster_wait = float(self.options["cluster_wait"] or 30)
        except ValueError:
            raise AdapterOptionError("ibmmq: cluster_wait: seconds, a number") from None
        self.client = load_client(self.options["client"] or "ibmmq")
        self.CMQC = self.client.CMQC
        self.CMQCFC = self.client.CMQCFC
        self.admin = self._connect()   # the kit's own connection: definitions, inquiries, clean-up
        self.pcf = self.client.PCFExecute(self.admin)   # one command-server session (its reply queue) for the run
        platform = self._inquire_qmgr("MQIA_PLATFORM")
        self.platform = C.PLATFORM_ZOS if platform == self.CMQC.MQPL_ZOS else C.PLATFORM_DISTRIBUTED
        self.command_level = self._inquire_qmgr("MQIA_COMMAND_LEVEL")
        self.qmgr_name = _text(self._inquire_qmgr("MQCA_Q_MGR_NAME"))
        # The attributes the rules assume (EXPRYINT exists on z/OS only), as the queue manager has them.
        self.qmgr_attrs = {name: self._inquire_qmgr(QMGR_SELECTORS[name])
                           for name in ASSUMED if name != "EXPRYINT" or self.platform == C.PLATFORM_ZOS}
        if self.group and self.platform != C.PLATFORM_ZOS:
            self.admin.disconnect()
            raise AdapterOptionError(f"ibmmq: group: queue-sharing groups are z/OS's, and {self.qmgr_name} is not "
                                     "on z/OS")
        #: Each member's own connection (definitions, inquiries, clean-up) and command-server session.
        self.member_admin = {name: self._connect(name, conn) for name, conn in self.group}
        self.member_pcf = {name: self.client.PCFExecute(qm) for name, qm in self.member_admin.items()}
        #: The case's names for the group's members (DefineQueueSharingGroup) -> theirs.
        self.members: dict[str, str] = {}
        self.cluster = ClusterLink(self, self.options["cluster"], self.cluster_members, cluster_wait) \
            if self.cluster_members else None
        self.cases = 0
        self.case = ""
        self.conns: dict[str, object] = {}
        self.handles: dict[str, tuple[str, object]] = {}
        #: The case's queues: (group member or "", name, QSGDISP) -> type (MQQT_LOCAL, MQQT_REMOTE).
        self.defined: dict[tuple[str, str, int], int] = {}
        self.processes: list[tuple[str, int]] = []   # (name, QSGDISP)
        self.altered: dict[tuple[str, str], object] = {}   # (member or "", attribute) -> the value it had
        self.inquirers: dict[tuple[str, str], object] = {}
        self.started = time.monotonic()
        self.dead_q = ""   # the case's dead-letter queue (its name without the prefix), once it set DEADQ
        self.dlq = self._dlq_host()

    # -------------------------------------------------------------- the contract
    def capabilities(self) -> Capabilities:
        areas, not_applicable = ["core", "syncpoint", "expiry", "trigger", "dlq"], dict(NOT_APPLICABLE)
        if not self.group:
            not_applicable.update(dict.fromkeys(GROUP_RULES, _GROUP))
        if self.cluster is not None and self.alter_qmgr:
            areas.append("cluster")
            not_applicable.update(CLUSTER_NOT_EXPRESSIBLE)
        else:
            not_applicable.update({rule.id: CLUSTER_NEEDS for rule in RULES.all("cluster")})
        if not self.alter_qmgr:
            areas.remove("dlq")
            not_applicable.update({rule.id: DLQ_NEEDS_DEADQ for rule in RULES.all("dlq")})
            not_applicable.update({rule: f"{why}: ALTER QMGR changes the queue manager for every application "
                                         "(run with the adapter option alter_qmgr=yes to allow it)"
                                   for rule, why in NEEDS_ALTER_QMGR.items()})
            for name, value in self.qmgr_attrs.items():
                assumed, area, what = ASSUMED[name]
                if value != assumed:
                    # e.g. scans the kit cannot turn off would discard expired messages when no rule can say.
                    areas.remove(area)
                    why = (f"the queue manager {what.format(value)} ({name}) and alter_qmgr=yes was not given "
                           f"to set it to {assumed} for each case")
                    not_applicable.update({rule.id: why for rule in RULES.all(area)})
        operations = OPERATIONS + (("DefineQueueSharingGroup",) if self.group else ()) \
            + (CLUSTER_OPERATIONS if "cluster" in areas else ())
        return Capabilities(areas=tuple(areas), platforms=(self.platform,), operations=operations,
                            realtime=True, expiry_tolerance=10, not_applicable=not_applicable)

    def describe(self) -> dict:
        return {"system": f"IBM MQ queue manager {self.qmgr_name}", "version": f"command level {self.command_level}",
                "platforms": [self.platform], "prefix": self.prefix, "connection": self.options["conn"] or "bindings",
                "dlq_handler": " ".join(self.dlq_handler) if self.dlq_handler else "mqconform (built in)",
                **({"group": [name for name, _ in self.group], "cfstruct": self.cfstruct} if self.group else {}),
                **({"cluster": self.cluster.cluster, "cluster_members": self.cluster.order} if self.cluster else {})}

    def express(self, op: L.Op) -> L.Op | None:
        if isinstance(op, L.DefineQueueSharingGroup):
            # the group's members are the queue managers the group option names, in its order
            return op if len(op.qmgrs) <= len(self.group) else None
        if type(op).__name__ in CLUSTER_OPERATIONS:
            return op if self.cluster is not None and self.alter_qmgr and self.cluster.express(op) else None
        if type(op).__name__ not in OPERATIONS:
            return None
        if isinstance(op, L.Connect) and op.environment != "normal":
            return None   # a client connection is an ordinary application's (no CICS, IMS or RRS)
        if isinstance(op, MEMBER_OPS) and op.qmgr and not self.group:
            return None   # the other queue managers of a queue-sharing group: only those the group option names
        if isinstance(op, L.DefineQueue) and dict(op.attrs).get("QSGDISP", C.MQQSGD_Q_MGR) != C.MQQSGD_Q_MGR \
                and not self.group:
            return None
        if isinstance(op, L.AlterQueueManager) and not self.alter_qmgr:
            return None   # every application's attributes: only where the user allows it
        if isinstance(op, L.DefineRemoteQueue) and not op.xmitq:
            return None   # the transmission queue would be one named like the remote queue manager: not the kit's
        if type(op).__name__ in HANDLER_OPERATIONS and not self.alter_qmgr:
            return None   # the handler's input queue is the case's DEADQ
        return op

    def start_case(self, case_id: str, platform: str | None = None) -> None:
        self.cases += 1
        self.case = f"{self.prefix}.{self.cases}"
        if self.alter_qmgr:
            # Each case starts as the rules assume a queue manager does (no periodic expiry scans, ...).
            differing = {name: ASSUMED[name][0] for name, value in self.qmgr_attrs.items()
                         if value != ASSUMED[name][0]}
            if differing:
                self._execute(L.AlterQueueManager(attrs=differing))
        self.dead_q = ""
        self.dlq = self._dlq_host()
        self.members = {}
        self.started = time.monotonic()

    def elapsed_tenths(self) -> int:
        return int((time.monotonic() - self.started) * 10)

    def end_case(self) -> None:
        """Every handler of the case stopped, every connection backed out and ended, every queue it
        defined deleted."""
        self.dlq.close()
        try:
            if self.cluster is not None:
                self.cluster.end_case()
        finally:
            self._end_case()

    def _end_case(self) -> None:
        for name in list(self.conns):
            qm = self.conns.pop(name)
            for call in (qm.backout, qm.disconnect):
                try:
                    call()
                except self.client.MQMIError:
                    pass
        self.handles.clear()
        for q in self.inquirers.values():
            try:
                q.close()
            except self.client.MQMIError:
                pass
        self.inquirers.clear()
        for (member, queue, disposition), qtype in self.defined.items():
            self._delete(queue, qtype, member, disposition)
        self.defined.clear()
        for process, disposition in self.processes:
            self._delete_process(process, disposition)
        self.processes.clear()
        for member in dict.fromkeys(member for member, _ in self.altered):
            self._pcf("MQCMD_CHANGE_Q_MGR", {getattr(self.CMQC, QMGR_SELECTORS[name]): value
                                             for (where, name), value in self.altered.items() if where == member},
                      quiet=True, member=member)
        self.altered.clear()

    def close(self) -> None:
        self.end_case()
        for qm in (self.admin, *self.member_admin.values()):
            try:
                qm.disconnect()
            except self.client.MQMIError:
                pass

    def cleanup(self, prefix: str) -> list[str]:
        """Delete every queue and process whose name starts with ``prefix`` (left by a run that was killed):
        the queue manager's, and with the group option each member's own, the group's shared queues and
        its group processes."""
        names = []
        for member in ("", *self.member_admin):
            for qtype in (self.CMQC.MQQT_REMOTE, self.CMQC.MQQT_LOCAL):
                for name in self._names("MQCMD_INQUIRE_Q_NAMES", {self.CMQC.MQCA_Q_NAME: f"{prefix}*",
                                                                  self.CMQC.MQIA_Q_TYPE: qtype},
                                        self.CMQCFC.MQCACF_Q_NAMES, member):
                    self._delete(name, qtype, member=member)
                    names.append(name)
        if self.group:
            for name in self._names("MQCMD_INQUIRE_Q_NAMES", self._disposed({
                    self.CMQC.MQCA_Q_NAME: f"{prefix}*", self.CMQC.MQIA_Q_TYPE: self.CMQC.MQQT_LOCAL},
                    C.MQQSGD_SHARED), self.CMQCFC.MQCACF_Q_NAMES):
                self._delete(name, self.CMQC.MQQT_LOCAL, disposition=C.MQQSGD_SHARED)
                names.append(name)
        for disposition in (C.MQQSGD_Q_MGR, C.MQQSGD_GROUP) if self.group else (C.MQQSGD_Q_MGR,):
            args = self._disposed({self.CMQC.MQCA_PROCESS_NAME: f"{prefix}*"}, disposition)
            for name in self._names("MQCMD_INQUIRE_PROCESS_NAMES", args, self.CMQCFC.MQCACF_PROCESS_NAMES):
                self._delete_process(name, disposition)
                names.append(name)
        return names

    def execute(self, op: L.Op) -> L.Observation:
        try:
            return self._execute(op)
        except self.client.MQMIError as exc:
            return L.Observation(cc=exc.comp, rc=exc.reason)

    # -------------------------------------------------------------- operations
    def _execute(self, op: L.Op) -> L.Observation:
        if self.dlq.handles(op):
            return self.dlq.execute_op(op)
        if type(op).__name__ in CLUSTER_OPERATIONS:
            return self.cluster.execute(op)
        return carry_out(self, op)

    # Each operation's method (adapters.base.handler_for: ``_op_`` and its type's name).  A member of the group, a
    # connection or a handle the program does not have is refused as MQ refuses it (_member, _connection, _queue).

    def _member(self, op: L.Op) -> str:
        """The member of the case's queue-sharing group ``op`` names ("": this queue manager); a name not in
        the group is refused with MQRC_Q_MGR_NAME_ERROR."""
        member = self.members.get(op.qmgr, "")
        if op.qmgr and not member:
            raise Refused(C.MQRC_Q_MGR_NAME_ERROR)
        return member

    def _connection(self, op: L.Op):
        """The queue manager connection of the program's connection ``op`` is made on (refused: MQRC_HCONN_ERROR)."""
        qm = self.conns.get(op.conn)
        if qm is None:
            raise Refused(C.MQRC_HCONN_ERROR)
        return qm

    def _queue(self, op: L.Op):
        """The open queue of the handle ``op`` uses (refused: MQRC_HCONN_ERROR, then MQRC_HOBJ_ERROR for a handle
        its connection did not open)."""
        self._connection(op)
        owner, q = self.handles.get(op.handle, (None, None))
        if q is None or owner != op.conn:
            raise Refused(C.MQRC_HOBJ_ERROR)
        return q

    def _op_AdvanceClock(self, op: L.AdvanceClock) -> None:
        time.sleep(op.tenths / 10)

    def _op_DefineQueueSharingGroup(self, op: L.DefineQueueSharingGroup) -> None:
        # The group is the one the queue manager is in: its members stand for the case's names.
        self.members = dict(zip(op.qmgrs, (name for name, _ in self.group)))

    def _op_DefineQueue(self, op: L.DefineQueue) -> None:
        member = self._member(op)
        name, args, shared = self._queue_args(op)
        if shared:
            args[self.CMQC.MQCA_CF_STRUC_NAME] = self.cfstruct
        self._pcf("MQCMD_CREATE_Q", args, member=member)
        key = ("", name, C.MQQSGD_SHARED) if shared else (member, name, C.MQQSGD_Q_MGR)
        self.defined[key] = self.CMQC.MQQT_LOCAL

    def _op_AlterQueue(self, op: L.AlterQueue) -> None:
        self._pcf("MQCMD_CHANGE_Q", self._queue_args(op)[1])

    def _queue_args(self, op: L.DefineQueue | L.AlterQueue) -> tuple[str, dict, bool]:
        """A local queue's name, the PCF arguments that define or change it as ``op`` says, and whether it is
        the group's shared queue."""
        name = self._name(op.queue)
        args = {self.CMQC.MQCA_Q_NAME: name, self.CMQC.MQIA_Q_TYPE: self.CMQC.MQQT_LOCAL}
        for attr, value in op.attrs:
            value = self._name(value) if attr in OBJECT_NAMES and value else value
            args[getattr(self.CMQC, SELECTORS[attr])] = value
        shared = dict(op.attrs).get("QSGDISP") == C.MQQSGD_SHARED or (
            isinstance(op, L.AlterQueue) and ("", name, C.MQQSGD_SHARED) in self.defined)
        if shared:
            # Held in the coupling facility, its definition in the group's shared repository; every
            # change names that disposition again (a change without it looks for a private queue).
            args[self.CMQC.MQIA_QSG_DISP] = C.MQQSGD_SHARED
        return name, args, shared

    def _op_DefineRemoteQueue(self, op: L.DefineRemoteQueue) -> None:
        self._pcf("MQCMD_CREATE_Q", {
            self.CMQC.MQCA_Q_NAME: self._name(op.queue), self.CMQC.MQIA_Q_TYPE: self.CMQC.MQQT_REMOTE,
            self.CMQC.MQCA_REMOTE_Q_NAME: op.rname, self.CMQC.MQCA_REMOTE_Q_MGR_NAME: op.rqmname,
            self.CMQC.MQCA_XMIT_Q_NAME: self._name(op.xmitq)})
        self.defined[("", self._name(op.queue), C.MQQSGD_Q_MGR)] = self.CMQC.MQQT_REMOTE

    def _op_DefineProcess(self, op: L.DefineProcess) -> None:
        args = {self.CMQC.MQCA_PROCESS_NAME: self._name(op.process), self.CMQC.MQIA_APPL_TYPE: op.appl_type,
                self.CMQC.MQCA_APPL_ID: op.appl_id, self.CMQC.MQCA_ENV_DATA: op.env_data,
                self.CMQC.MQCA_USER_DATA: op.user_data}
        # In a case in a queue-sharing group every member starts the application of a shared queue: the
        # process is the group's (each member gets its copy).
        disposition = C.MQQSGD_GROUP if self.members else C.MQQSGD_Q_MGR
        self._pcf("MQCMD_CREATE_PROCESS", self._disposed(args, disposition))
        self.processes.append((self._name(op.process), disposition))

    def _op_AlterQueueManager(self, op: L.AlterQueueManager) -> None:
        member = self._member(op)
        args = {}
        qm = self.member_admin[member] if member else self.admin
        for name, value in op.attrs:
            selector = getattr(self.CMQC, QMGR_SELECTORS[name])
            if (member, name) not in self.altered:
                self.altered[(member, name)] = qm.inquire(selector)
            args[selector] = self._name(value) if name in OBJECT_NAMES and value else value
        self._pcf("MQCMD_CHANGE_Q_MGR", args, member=member)
        if not member:
            self.dead_q = dict(op.attrs).get("DEADQ", self.dead_q)

    def _op_RefreshExpiry(self, op: L.RefreshExpiry) -> None:
        self._pcf("MQCMD_REFRESH_Q_MGR", {self.CMQCFC.MQIACF_REFRESH_TYPE: self.CMQCFC.MQRT_EXPIRY,
                                          self.CMQCFC.MQCACF_OBJECT_NAME: self._name(op.queues)})

    def _op_InquireQueue(self, op: L.InquireQueue) -> L.Observation:
        member = self._member(op)
        q = self.inquirers.get((member, op.queue))
        if q is None:
            q = self.client.Queue(self.member_admin[member] if member else self.admin, self._name(op.queue),
                                  self.CMQC.MQOO_INQUIRE)
            self.inquirers[(member, op.queue)] = q
        values = {}
        for name in op.names:
            value = q.inquire(getattr(self.CMQC, SELECTORS[name]))
            values[name] = self._unprefixed(_text(value)) if isinstance(value, (bytes, str)) else value
        return L.Observation(attrs=values)

    def _op_Connect(self, op: L.Connect) -> None:
        member = self._member(op)
        if op.conn in self.conns:
            raise Refused(C.MQRC_HCONN_ERROR)
        self.conns[op.conn] = self._connect(member, dict(self.group)[member]) if member else self._connect()

    def _op_Disconnect(self, op: L.Disconnect) -> None:
        qm = self._connection(op)
        del self.conns[op.conn]
        for name in [n for n, (conn, _) in self.handles.items() if conn == op.conn]:
            del self.handles[name]
        if op.abnormal:
            # A client program cannot end abnormally and go on running: it backs its unit of
            # work out and disconnects, which is what the queue manager does for a program that
            # ends without MQDISC (CORE-31 is not applicable: this checks the mapping, not MQ).
            qm.backout()
        qm.disconnect()

    def _op_Commit(self, op: L.Commit) -> None:
        self._connection(op).commit()

    def _op_Backout(self, op: L.Backout) -> None:
        self._connection(op).backout()

    def _op_Open(self, op: L.Open) -> None:
        qm = self._connection(op)
        options = op.options | (self.CMQC.MQOO_SET_ALL_CONTEXT if op.options & C.MQOO_OUTPUT else 0)
        self.handles[op.handle] = (op.conn, self.client.Queue(qm, self._name(op.queue), options))

    def _op_Put1(self, op: L.Put1) -> None:
        qm = self._connection(op)
        md, pmo = self._md(op.md), self._pmo(op)
        od = self.client.OD(ObjectName=self._name(op.queue), ObjectQMgrName=op.qmgr)
        qm.put1(od, self._data(op), md, pmo)

    def _op_Close(self, op: L.Close) -> None:
        q = self._queue(op)
        del self.handles[op.handle]
        q.close()

    def _op_Put(self, op: L.Put) -> None:
        self._queue(op).put(self._data(op), self._md(op.md), self._pmo(op))

    def _op_Get(self, op: L.Get) -> L.Observation:
        q = self._queue(op)
        md = self.client.MD()
        gmo = self.client.GMO(Options=op.options, WaitInterval=op.wait_interval)
        if isinstance(op, L.GetMatching):
            # MatchOptions need MQGMO version 2; the MQMD's MsgId and CorrelId are the criteria
            gmo.Version, gmo.MatchOptions = 2, op.match_options
            md.MsgId, md.CorrelId = _identifier(op.msg_id), _identifier(op.correl_id)
        try:
            body = q.get(None, md, gmo)
        except self.client.MQMIError as exc:
            if exc.comp != C.MQCC_WARNING:
                raise
            # A warning that still returns a message (its data truncated or not converted).
            body = getattr(exc, "message", None) or b""
            return L.Observation(cc=exc.comp, rc=exc.reason, message=self._returned(body, md, gmo))
        return L.Observation(message=self._returned(body, md, gmo))

    _op_GetMatching = _op_Get

    # -------------------------------------------------------------- helpers
    def _connect(self, qmgr: str = "", conn: str = ""):
        """A connection to the queue manager, or to ``qmgr`` of its group at ``conn`` (blank: ``conn``'s)."""
        o = self.options
        qmgr, conn = qmgr or o["qmgr"], conn or o["conn"]
        try:
            return self.client.connect(qmgr, o["channel"] or None, conn or None,
                                       o["user"] or None, o["password"] or None)
        except self.client.MQMIError as exc:
            raise AdapterUnavailable(f"ibmmq: cannot connect to queue manager {qmgr or '(default)'} "
                                     f"at {conn or 'local bindings'}: reason {exc.reason}") from None

    def _dlq_host(self) -> DlqHost:
        """The case's DLQ handler instances: the kit's handler (or the ``dlq_handler`` program) making its
        calls through this adapter, on the queue manager's clock (the case's real time)."""
        make = None
        if self.dlq_handler:
            command = self.dlq_handler

            def make(name, text, execute, dead_q):
                return ExternalHandler(command, name, text, execute, dead_q)
        return DlqHost(self.execute, self.elapsed_tenths, lambda: self.dead_q, frozenset(), make)

    def _inquire_qmgr(self, selector: str):
        return self.admin.inquire(getattr(self.CMQC, selector))

    def _pcf(self, command: str, args: dict, quiet: bool = False, member: str = ""):
        """Run PCF ``command`` on the queue manager's command server, or on group member ``member``'s."""
        try:
            return getattr(self.member_pcf[member] if member else self.pcf, command)(args)
        except self.client.MQMIError:
            if quiet:
                return None
            raise

    def _delete(self, queue: str, qtype: int, member: str = "", disposition: int = C.MQQSGD_Q_MGR) -> None:
        """Delete ``queue`` (a local one with its messages) of the queue manager, of group member ``member``,
        or the group's shared one; one already gone is no error."""
        args = {self.CMQC.MQCA_Q_NAME: queue, self.CMQC.MQIA_Q_TYPE: qtype}
        if qtype == self.CMQC.MQQT_LOCAL:
            args[self.CMQCFC.MQIACF_PURGE] = self.CMQCFC.MQPO_YES
        self._pcf("MQCMD_DELETE_Q", self._disposed(args, disposition), quiet=True, member=member)

    def _delete_process(self, process: str, disposition: int = C.MQQSGD_Q_MGR) -> None:
        self._pcf("MQCMD_DELETE_PROCESS", self._disposed({self.CMQC.MQCA_PROCESS_NAME: process}, disposition),
                  quiet=True)

    def _disposed(self, args: dict, disposition: int) -> dict:
        """``args`` naming ``disposition`` (QSGDISP) where it is not the default, the queue manager's own."""
        return args if disposition == C.MQQSGD_Q_MGR else {**args, self.CMQC.MQIA_QSG_DISP: disposition}

    def _names(self, command: str, args: dict, key: int, member: str = "") -> list[str]:
        """The object names an inquire-names PCF command answers with."""
        return [_text(n) for r in self._pcf(command, args, member=member) or () for n in (r.get(key) or ())]

    def _name(self, queue: str) -> str:
        return f"{self.case}.{queue}"

    def _unprefixed(self, name: str) -> str:
        return name[len(self.case) + 1:] if name.startswith(self.case + ".") else name

    def _data(self, op: L.Put | L.Put1) -> bytes:
        """The message data: the body, after an MQXQH (with its embedded MQMD version 1) where the op has one.

        The MQXQH's remote queue and queue manager names are blank: the kit puts such a message
        directly on a transmission queue, where only the embedded Expiry matters (EXP-19..22).
        """
        body = op.body.encode()
        if op.dlh is not None:
            h = op.dlh
            dest_q = self._name(h.dest_q) if h.dest_q and not h.dest_qmgr else h.dest_q
            return self.client.DLH(Reason=h.reason, DestQName=_chars(dest_q, 48), DestQMgrName=_chars(h.dest_qmgr, 48),
                                   Format=_chars(h.format, 8), PutApplType=h.put_appl_type,
                                   PutApplName=_chars(h.put_appl_name, 28)).pack() + body
        if op.xmit_header is None:
            return body
        embedded = self.client.MD(Version=1, Expiry=op.xmit_header.expiry).pack()[:self.CMQC.MQMD_LENGTH_1]
        return self.client.XQH().pack() + embedded + body

    def _xmit_header(self, data: bytes) -> tuple[L.XmitHeader | None, bytes]:
        """An MQXMIT message's MQXQH (its embedded Expiry) and the data after it, if the data begins with one."""
        length = self.CMQC.MQXQH_CURRENT_LENGTH
        if len(data) < length or data[:4] != self.CMQC.MQXQH_STRUC_ID:
            return None, data
        start, pad = length - self.CMQC.MQMD_LENGTH_1, self.CMQC.MQMD_LENGTH_2 - self.CMQC.MQMD_LENGTH_1
        md = self.client.MD().unpack(bytes(data[start:length]) + bytes(pad))
        return L.XmitHeader(expiry=md.Expiry), bytes(data[length:])

    def _dead_letter_header(self, data: bytes) -> tuple[L.DeadLetterHeader | None, bytes]:
        """A dead letter's MQDLH (the destination without the case's prefix) and the data after it."""
        length = self.CMQC.MQDLH_LENGTH_1
        if len(data) < length or data[:4] != self.CMQC.MQDLH_STRUC_ID:
            return None, data
        h = self.client.DLH().unpack(data[:length])
        dest_q, dest_qmgr = _text(h.DestQName), _text(h.DestQMgrName)
        if dest_qmgr == self.qmgr_name:
            dest_qmgr = ""   # this queue manager (as the language names it) writes its own name there
        return L.DeadLetterHeader(
            reason=h.Reason, dest_q=dest_q if dest_qmgr else self._unprefixed(dest_q), dest_qmgr=dest_qmgr,
            format=_text(h.Format), put_appl_type=h.PutApplType, put_appl_name=_text(h.PutApplName)), data[length:]

    def _trigger_message(self, data: bytes) -> tuple[L.TriggerMessage | None, bytes]:
        """A trigger message's MQTM (names of the case's objects without the prefix) and any data after it."""
        length = self.CMQC.MQTM_CURRENT_LENGTH
        if len(data) < length or data[:4] != self.CMQC.MQTM_STRUC_ID:
            return None, data
        tm = self.client.TM().unpack(data[:length])
        return L.TriggerMessage(
            q_name=self._unprefixed(_text(tm.QName)), process_name=self._unprefixed(_text(tm.ProcessName)),
            trigger_data=_text(tm.TriggerData), appl_type=tm.ApplType, appl_id=_text(tm.ApplId),
            env_data=_text(tm.EnvData), user_data=_text(tm.UserData)), data[length:]

    def _md(self, md: L.MessageDescriptor):
        out = self.client.MD(Priority=md.priority, Persistence=md.persistence, Expiry=md.expiry, Report=md.report,
                             MsgType=md.msg_type, Feedback=md.feedback, BackoutCount=md.backout_count)
        out.Format = _chars(md.format, 8)
        # A reply-to queue of this queue manager is one of the case's queues (reports go there).
        local = md.reply_to_q and not md.reply_to_qmgr
        out.ReplyToQ = _chars(self._name(md.reply_to_q) if local else md.reply_to_q, 48)
        out.ReplyToQMgr = _chars(md.reply_to_qmgr, 48)
        out.MsgId = _identifier(md.msg_id)
        out.CorrelId = _identifier(md.correl_id)
        if md.msg_flags:
            out.Version = max(getattr(out, "Version", 1), 2)   # MsgFlags is a version-2 field
            out.MsgFlags = md.msg_flags
        if md.context is not None:
            out.UserIdentifier = _chars(md.context.user_id, 12)
            out.ApplIdentityData = _chars(md.context.appl_identity_data, 32)
            out.PutApplType = md.context.put_appl_type
            out.PutApplName = _chars(md.context.put_appl_name, 28)
        return out

    def _pmo(self, op: L.Put | L.Put1):
        """The put's options; a context the op gives is set with MQPMO_SET_ALL_CONTEXT, also where the op
        passes a context it read (MQPMO_PASS_ALL_CONTEXT, which the MQI takes from an input handle the
        language does not name: the fields are the same)."""
        options = op.options
        if op.md.context is not None:
            options = (options & ~self.CMQC.MQPMO_PASS_ALL_CONTEXT) | self.CMQC.MQPMO_SET_ALL_CONTEXT
        return self.client.PMO(Options=options)

    def _returned(self, body: bytes, md, gmo) -> L.ReturnedMessage:
        xmit_header = trigger = dlh = None
        fmt = _text(md.Format)
        if fmt == C.MQFMT_XMIT_Q_HEADER:
            xmit_header, body = self._xmit_header(bytes(body))
        elif fmt == C.MQFMT_TRIGGER:
            trigger, body = self._trigger_message(bytes(body))
        elif fmt == C.MQFMT_DEAD_LETTER_HEADER:
            dlh, body = self._dead_letter_header(bytes(body))
        status = getattr(gmo, "SegmentStatus", C.MQSS_NOT_A_SEGMENT)
        return L.ReturnedMessage(
            segment_status=status.decode() if isinstance(status, bytes) else str(status),
            offset=getattr(md, "Offset", 0),
            body=bytes(body).decode("utf-8", "replace"), priority=md.Priority, persistence=md.Persistence,
            expiry=md.Expiry, report=md.Report, msg_type=md.MsgType, feedback=md.Feedback, format=fmt,
            reply_to_q=self._unprefixed(_text(md.ReplyToQ)), reply_to_qmgr=_text(md.ReplyToQMgr),
            msg_id=_identifier_text(md.MsgId),
            correl_id=_identifier_text(md.CorrelId), backout_count=md.BackoutCount, xmit_header=xmit_header,
            trigger=trigger, dlh=dlh,
            context=L.MessageContext(user_id=_text(md.UserIdentifier), appl_identity_data=_text(md.ApplIdentityData),
                                     put_appl_type=md.PutApplType, put_appl_name=_text(md.PutApplName)))
