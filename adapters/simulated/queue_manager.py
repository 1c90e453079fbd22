"""An in-process queue manager, written independently of the reference model.

It keeps each queue as ten priority buckets of arrival-ordered messages, a log
of undo / redo records per unit of work, and browse cursors as positions in the
bucket order.  Its behaviour can be broken on purpose with named faults
(:mod:`adapters.simulated.faults`); without faults it follows MQ's documented
behaviour for a distributed queue manager (or z/OS, by option).
"""

from __future__ import annotations

import bisect
import itertools
import random
import threading
import time
from dataclasses import dataclass, field

import attrs


from adapters.base import handler_for
from adapters.dlq_handler.external import ExternalHandler
from adapters.dlq_handler.host import DlqHost
from adapters.simulated.cluster import SimulatedCluster
from adapters.simulated.triggering import Triggering
from reference_model import language as L
from reference_model import mqconst as C

SETTABLE_DEFAULTS = {name: default for name, (_, default) in L.QUEUE_ATTRIBUTES.items()}
#: No segment the queue manager makes of user data is shorter than this (bytes), but the last may be.
SMALLEST_SEGMENT = 16


class MQError(Exception):
    def __init__(self, rc: int) -> None:
        super().__init__(rc)
        self.rc = rc


@dataclass(eq=False)   # a message is itself: membership and removal go by identity
class SimMessage:
    seq: int
    body: str
    md: L.MessageDescriptor
    level: int                      # bucket (0..9) that places it
    backout_count: int = 0
    #: The count as last written to the log: what a z/OS restart brings back for a queue without HARDENBO.
    logged_backouts: int = 0
    pending_put: str | None = None  # connection that put it under syncpoint
    pending_get: str | None = None  # connection that got it under syncpoint
    lock: str | None = None         # handle that locked it
    put_time: int = 0               # clock at put, tenths of a second
    xmit_expiry: int | None = None  # Expiry embedded in the MQXQH of an MQXMIT message
    tm: L.TriggerMessage | None = None  # the MQTM of a trigger message
    dlh: L.DeadLetterHeader | None = None  # the MQDLH of a dead-letter message
    #: Under the transmission-queue-never-expires fault: put on a transmission queue, so never expires.
    immortal: bool = False
    #: A segment of a message split at put: its MQGMO SegmentStatus and MQMD Offset.
    segment: str = C.MQSS_NOT_A_SEGMENT
    offset: int = 0


@dataclass
class SimQueue:
    name: str
    attrs: dict
    buckets: list[list[SimMessage]] = field(default_factory=lambda: [[] for _ in range(C.MAX_PRIORITY + 1)])
    #: Messages got under syncpoint and not yet committed or backed out (not in CURDEPTH).
    held: set = field(default_factory=set)
    #: The group member whose private queue this is ("": this queue manager's, or a shared queue).
    owner: str = ""
    #: How far the CURDEPTH shown is from the messages there: the updates overlapping gets lost (a race fault,
    #: depth-not-atomic; always 0 without it).
    drift: int = 0

    @property
    def mq_name(self) -> str:
        return self.name.partition("@")[0]

    @property
    def shared(self) -> bool:
        return self.attrs.get("QSGDISP") == C.MQQSGD_SHARED

    def all_messages(self):
        for bucket in self.buckets:
            yield from bucket

    def depth(self, counts=None) -> int:
        if counts is None:
            return sum(map(len, self.buckets)) - len(self.held)
        return sum(1 for m in self.all_messages() if m.pending_get is None and counts(m))

    def hold(self, msg: SimMessage, conn: str | None) -> None:
        msg.pending_get = conn
        (self.held.add if conn is not None else self.held.discard)(msg)

    def remove(self, msg: SimMessage) -> None:
        self.buckets[msg.level].remove(msg)
        self.held.discard(msg)

    def at(self, position: tuple[int, int]) -> SimMessage | None:
        """The message at (bucket, seq), if it is still on the queue (buckets are in seq order)."""
        bucket = self.buckets[position[0]]
        i = bisect.bisect_left(bucket, position[1], key=_seq)
        return bucket[i] if i < len(bucket) and bucket[i].seq == position[1] else None


@dataclass
class SimHandle:
    name: str
    conn: str
    queue: str
    options: int
    exclusive: bool = False
    cursor: tuple[int, int] | None = None   # (level, seq) of the browsed message
    locked: SimMessage | None = None        # the message this handle holds a browse lock on

    def release(self) -> None:
        if self.locked is not None and self.locked.lock == self.name:
            self.locked.lock = None
        self.locked = None

    @property
    def input(self) -> bool:
        return bool(self.options & C.MQOO_INPUT_ANY)


@dataclass
class LogRecord:
    action: str           # "put" | "get"
    queue: str
    message: SimMessage


@dataclass
class SimConnection:
    name: str
    environment: str = "normal"
    log: list[LogRecord] = field(default_factory=list)
    marked: LogRecord | None = None    # the get of this unit of work marked to skip backout
    skipped: LogRecord | None = None   # a marked get carried into this new unit of work
    held_triggers: list = field(default_factory=list)  # trigger messages waiting for the UOW to end
    qmgr: str = ""   # the member of the queue-sharing group connected to ("": this queue manager)



class SimulatedQueueManager:
    #: The DLQ handler host reads the dead-letter queue with :meth:`host_browse` (False: by the calls of
    #: a browse, as on any other adapter).
    HOST_READS_DIRECTLY = True

    def __init__(self, platform: str = C.PLATFORM_DISTRIBUTED, faults: tuple[str, ...] = (),
                 dlq_handler: list[str] | None = None, chance_seed: int = 0) -> None:
        self.platform = platform
        self.faults = frozenset(faults)
        #: The dice of the faults that show at some calls only (seeded by the case: a case replays the same).
        self.chance = random.Random(chance_seed)
        #: Each call runs whole under this lock, as a queue manager's calls are atomic: programs on several
        #: threads (a concurrent case) see one call's effects entirely or not at all.
        self._locking()
        self.queues: dict[str, SimQueue] = {}
        self.conns: dict[str, SimConnection] = {}
        self.handles: dict[str, SimHandle] = {}
        self.clock = 0
        self.expiry_interval = 0  # EXPRYINT, seconds (z/OS)
        self.trigger_interval = C.DEFAULT_TRIGGER_INTERVAL  # TRIGINT, milliseconds
        self.dead_q = ""  # DEADQ
        self.processes: dict[str, L.DefineProcess] = {}
        self.remote_defs: dict[str, L.DefineRemoteQueue] = {}
        #: The other queue managers of this one's queue-sharing group (z/OS); their private queues are
        #: kept here too, as NAME@QMGR.
        self.group: tuple[str, ...] = ()
        self.member_expiry: dict[str, int] = {}   # the other members' EXPRYINT, seconds
        self.scanner: str | None = None           # the member that scans shared queues: the first with EXPRYINT
        self.lost: set[str] = set()       # connections the network cut, until the program ends them
        self.cut_next: set[str] = set()   # connections whose next call the network cuts in flight
        self.triggering = Triggering(self)
        self.cluster = SimulatedCluster(self.faults)
        self._seq = itertools.count(1)
        make = None
        if dlq_handler:
            make = lambda name, text, execute, dead_q: ExternalHandler(dlq_handler, name, text, execute, dead_q)  # noqa: E731
        self.dlq = DlqHost(self.execute, lambda: self.clock, lambda: self.dead_q, self.faults, make,
                           self.host_browse if self.HOST_READS_DIRECTLY else None)

    def close(self) -> None:
        """Stop the DLQ handlers and let go of the parts that refer back to this queue manager (the
        DLQ handler host and the trigger monitor's view hold its methods): without those cycles, a
        case's queue manager, its queues and messages are freed as soon as the next one replaces it,
        rather than by the cyclic collector.  The queue manager runs nothing after this."""
        if self.dlq is not None:
            self.dlq.close()
        self.dlq = self.triggering = None

    # ------------------------------------------------------------ dispatch
    _LOCKING = ("lock", "_turn", "_count", "_waiting", "_calls_done")

    def _locking(self) -> None:
        self.lock = threading.RLock()
        #: Told at the end of every call (a call not atomic waits on it for another's to run).
        self._turn = threading.Condition(self.lock)
        self._count = threading.Lock()
        #: Calls waiting for the lock (counted under ``_count``) and calls run (under the lock).
        self._waiting = 0
        self._calls_done = 0

    def __getstate__(self) -> dict:   # a copy (a test's deepcopy) gets a lock of its own
        return {k: v for k, v in self.__dict__.items() if k not in self._LOCKING}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._locking()

    def execute(self, op: L.Op, hold: float = 0.0) -> L.Observation:
        """Run ``op`` whole under the lock, first holding the queue manager ``hold`` seconds (a slow call)."""
        with self._count:
            self._waiting += 1
        with self._turn:
            with self._count:
                self._waiting -= 1
            try:
                if hold:
                    time.sleep(hold)
                return self._execute(op)
            finally:
                self._calls_done += 1
                self._turn.notify_all()

    #: Seconds a call not atomic gives way: at most this long waiting for another's call to run where one is
    #: waiting for the lock, then a pause in which more may run.
    GIVE_WAY_WAIT = 0.5
    GIVE_WAY_PAUSE = 0.002

    def _let_others_run(self) -> None:
        """Let other threads' calls run now, in the middle of this one (a race fault: a call not atomic).  Where
        another call is waiting for the lock this one first waits until a call has run, however long the machine
        takes to schedule it (so a race shows as often on a loaded machine as on an idle one); then it pauses a
        moment, the lock free, for more to run or come."""
        done = self._calls_done
        if self._waiting:
            self._turn.wait_for(lambda: self._calls_done > done, timeout=self.GIVE_WAY_WAIT)
        self.lock.release()
        try:
            time.sleep(self.GIVE_WAY_PAUSE)
        finally:
            self.lock.acquire()

    def _execute(self, op: L.Op) -> L.Observation:
        if self.dlq.handles(op):
            return self.dlq.execute_op(op)
        name = getattr(op, "conn", None)
        if name is not None and not isinstance(op, (L.Connect, L.CutConnection)):
            if name in self.cut_next:
                return self._call_cut_in_flight(op)
            if name in self.lost and not self._fault("cut-reconnects-silently"):
                if isinstance(op, L.Disconnect):
                    self.lost.discard(name)
                    if op.abnormal:
                        return L.OK
                return L.Observation.of(C.MQRC_CONNECTION_BROKEN)
        return self._dispatch(op)

    def _dispatch(self, op: L.Op) -> L.Observation:
        method = handler_for(type(self), type(op))
        if method is None:
            raise NotImplementedError(type(op).__name__)
        try:
            result = method(self, op)
        except MQError as e:
            return L.Observation.of(e.rc)
        return result if isinstance(result, L.Observation) else L.OK

    def _fault(self, name: str) -> bool:
        return name in self.faults

    # ------------------------------------------------------------ admin
    def _op_DefineQueueSharingGroup(self, op: L.DefineQueueSharingGroup):
        self.group = tuple(op.qmgrs)

    def _local_name(self, qmgr: str, queue: str) -> str:
        """How queue ``queue`` is kept when group member ``qmgr`` names it."""
        if qmgr and not (queue in self.queues and self.queues[queue].shared):
            return f"{queue}@{qmgr}"
        return queue

    def _op_DefineQueue(self, op: L.DefineQueue):
        attrs = dict(SETTABLE_DEFAULTS)
        attrs.update(dict(op.attrs))
        shared = attrs["QSGDISP"] == C.MQQSGD_SHARED
        name = op.queue if shared else self._local_name(op.qmgr, op.queue)
        if name in self.queues and self._fault("define-replaces-queue"):
            self.queues[name].attrs = attrs   # as DEFINE ... REPLACE would, though REPLACE was not asked for
            return
        if name in self.queues or op.queue in self.remote_defs:
            raise MQError(C.MQRCCF_OBJECT_ALREADY_EXISTS)
        self.queues[name] = SimQueue(name, attrs, owner="" if shared else op.qmgr)

    def _queue(self, name: str) -> SimQueue:
        if name not in self.queues:
            raise MQError(C.MQRC_UNKNOWN_OBJECT_NAME)
        return self.queues[name]

    def _op_AlterQueue(self, op: L.AlterQueue):
        q = self._queue(op.queue)
        before = dict(q.attrs)
        q.attrs.update(dict(op.attrs))
        self.triggering.on_alter(op.queue, before)

    def _op_DefineProcess(self, op: L.DefineProcess):
        self.processes[op.process] = op

    def _op_SetClusterQueueManager(self, op):
        self.cluster.qmgrs[op.name] = op

    def _op_SetClusterInstance(self, op):
        self.cluster.instances[(op.qmgr, op.queue)] = op

    def _op_SetClusterAlias(self, op):
        self.cluster.aliases[(op.name, op.qmgr)] = op

    def _op_RemoveClusterInstance(self, op):
        self.cluster.instances.pop((op.qmgr, op.queue), None)

    def _op_SetClusterChannel(self, op):
        self.cluster.channels[op.name] = op

    def _op_ClusterPut(self, op):
        return self.cluster.put(op)

    def put_trigger_message(self, initq: str, tm: L.TriggerMessage) -> None:
        q = self.queues.get(initq)
        if q is None:
            return
        expiry = 600 if self._fault("trigger-message-expires") else C.MQEI_UNLIMITED
        md = L.MessageDescriptor(priority=q.attrs["DEFPRTY"], persistence=C.MQPER_NOT_PERSISTENT,
                                 expiry=expiry, format=C.MQFMT_TRIGGER, msg_id=f"SIM{next(self._seq):021d}")
        level = q.attrs["DEFPRTY"]
        q.buckets[level].append(SimMessage(seq=next(self._seq), body="", md=md, level=level,
                                           put_time=self.clock, tm=tm))

    def _op_InquireQueue(self, op: L.InquireQueue):
        q = self._queue(self._local_name(op.qmgr, op.queue))
        out = {}
        # a shared queue's open counts are the asking queue manager's own
        mine = [h for h in self.handles.values() if h.queue == q.name
                and (not q.shared or self.triggering.member(h) == op.qmgr)] \
            if "IPPROCS" in op.names or "OPPROCS" in op.names else []
        for name in op.names:
            if name == "CURDEPTH":
                out[name] = q.depth(self._depth_counter()) + q.drift
            elif name == "IPPROCS":
                out[name] = sum(1 for h in mine if h.input)
            elif name == "OPPROCS":
                out[name] = sum(1 for h in mine if h.options & C.MQOO_OUTPUT)
            else:
                out[name] = q.attrs[name]
        return L.Observation(attrs=out)

    def _op_AdvanceClock(self, op: L.AdvanceClock):
        before = self.clock
        self.clock += op.tenths
        if self._fault("report-at-eligibility"):
            for q in self.queues.values():
                for m in q.all_messages():
                    left = self._left(m, before)
                    if left is not None and left > 0 and self._left(m) <= 0:
                        self._report(m)
        if self.platform != C.PLATFORM_ZOS:
            return
        for member in ("",) + self.group:
            period = (self.member_expiry.get(member, 0) if member else self.expiry_interval) * 10
            if period and before // period != self.clock // period:
                # each member scans its own queues; the shared ones are the scanner's to scan
                everything = bool(member) and self._fault("member-scans-all-queues")
                self._scan([n for n, q in self.queues.items() if everything or
                            (q.owner == member and not q.shared) or (q.shared and self.scanner == member)])

    def _op_AlterQueueManager(self, op: L.AlterQueueManager):
        attrs = dict(op.attrs)
        if attrs.get("EXPRYINT") and self.scanner is None:
            self.scanner = op.qmgr
        if op.qmgr:
            self.member_expiry[op.qmgr] = attrs.get("EXPRYINT", self.member_expiry.get(op.qmgr, 0))
            return
        self.expiry_interval = attrs.get("EXPRYINT", self.expiry_interval)
        self.trigger_interval = attrs.get("TRIGINT", self.trigger_interval)
        self.dead_q = attrs.get("DEADQ", self.dead_q)

    def _op_RefreshExpiry(self, op: L.RefreshExpiry):
        import fnmatch

        self._scan([n for n in self.queues if fnmatch.fnmatchcase(n, op.queues)])

    def _scan(self, names) -> None:
        for name in names:
            q = self.queues[name]
            for m in list(q.all_messages()):
                if m.pending_get is None and self._expired(m):
                    self._discard(q, m)

    # ------------------------------------------------------------ expiry
    def _left(self, m: SimMessage, clock: int | None = None) -> int | None:
        if m.md.expiry == C.MQEI_UNLIMITED:
            return None
        return m.md.expiry - ((self.clock if clock is None else clock) - m.put_time)

    def _expired(self, m: SimMessage) -> bool:
        left = self._left(m)
        return left is not None and left <= 0 and not self._fault("expired-message-returned") and not m.immortal

    def _discard(self, q: SimQueue, m: SimMessage, conn: SimConnection | None = None) -> None:
        q.remove(m)
        if conn is not None and self._fault("discard-rolled-back"):
            conn.log.append(LogRecord("discard", q.name, m))
        if self._fault("dead-letter-expired-no-report") and q.name == self.dead_q:
            return
        if not self._fault("report-at-eligibility"):
            self._report(m)

    def _report(self, m: SimMessage) -> None:
        # the three expiration-report options, by the bits of the widest one, and how much data each keeps
        kind = m.md.report & C.MQRO_EXPIRATION_WITH_FULL_DATA
        if not kind & C.MQRO_EXPIRATION or m.md.reply_to_q not in self.queues:
            return
        keep = {C.MQRO_EXPIRATION_WITH_FULL_DATA: len(m.body),
                C.MQRO_EXPIRATION_WITH_DATA: C.REPORT_DATA_LENGTH}.get(kind, 0)
        body = m.body[:keep]
        q = self.queues[m.md.reply_to_q]
        md = L.MessageDescriptor(
            priority=m.md.priority, persistence=m.md.persistence, msg_type=C.MQMT_REPORT,
            feedback=C.MQFB_EXPIRATION, format=m.md.format if body else "",
            msg_id=f"SIM{next(self._seq):021d}", correl_id=m.md.msg_id,
        )
        level = q.attrs["DEFPRTY"] if q.attrs["MSGDLVSQ"] == C.MQMDS_FIFO else min(md.priority, C.MAX_PRIORITY)
        q.buckets[level].append(SimMessage(seq=next(self._seq), body=body, md=md, level=level,
                                           put_time=self.clock))

    def _depth_counter(self):
        """What CURDEPTH counts beyond the messages not got under syncpoint (None: nothing more)."""
        if self._fault("uncommitted-put-not-counted"):
            return lambda m: m.pending_put is None
        return (lambda m: not self._expired(m)) if self._fault("expired-not-counted") else None

    # ------------------------------------------------------------ connections
    def _conn(self, name: str) -> SimConnection:
        if name not in self.conns:
            raise MQError(C.MQRC_HCONN_ERROR)
        return self.conns[name]

    def _handle(self, conn: str, name: str) -> SimHandle:
        self._conn(conn)
        h = self.handles.get(name)
        if h is None or h.conn != conn:
            raise MQError(C.MQRC_HOBJ_ERROR)
        return h

    def _op_Connect(self, op: L.Connect):
        if op.conn in self.conns and op.conn in self.lost:   # the silently re-made connection of a fault
            del self.conns[op.conn]
        self.lost.discard(op.conn)
        self.conns[op.conn] = SimConnection(op.conn, op.environment, qmgr=op.qmgr)

    # ------------------------------------------------------------ the network cutting connections
    def _op_CutConnection(self, op: L.CutConnection):
        if op.conn not in self.conns:
            return
        if op.in_flight:
            self.cut_next.add(op.conn)
        else:
            self._lose(op.conn)

    def _op_PauseQueueManager(self, op: L.PauseQueueManager):
        self._op_AdvanceClock(L.AdvanceClock(tenths=op.tenths))
        self._op_CutConnection(L.CutConnection(conn=op.conn, in_flight=True))

    def _lose(self, name: str) -> None:
        """The connection is gone: the queue manager ends it as an abnormal end."""
        self.lost.add(name)
        c = self.conns.get(name)
        if c is None:
            return
        commit = self._fault("cut-commits-uow")
        self._finish(c, commit, abnormal=not commit)
        if self._fault("cut-reconnects-silently"):
            return   # the handles and connection stay usable, as if a client had reconnected unseen
        for handle in [n for n, h in self.handles.items() if h.conn == name]:
            self._drop_handle(handle)
        del self.conns[name]

    def _call_cut_in_flight(self, op: L.Op) -> L.Observation:
        """The request reaches the queue manager, which carries it out; the reply is lost with the connection."""
        self.cut_next.discard(op.conn)
        if isinstance(op, L.Disconnect) and op.abnormal:
            return self._dispatch(op)
        c = self.conns.get(op.conn)
        if isinstance(op, L.Commit) and c is not None and self._fault("in-flight-commit-half-done"):
            for rec in [r for r in c.log if r.action == "put"]:
                rec.message.pending_put = None
                c.log.remove(rec)
            self._finish(c, False)
        else:
            self._dispatch(op)
        self._lose(op.conn)
        return L.Observation.of(C.MQRC_CONNECTION_BROKEN)

    def _op_Disconnect(self, op: L.Disconnect):
        c = self._conn(op.conn)
        commit = not op.abnormal
        if self._fault("disconnect-backs-out"):
            commit = False
        self._finish(c, commit, abnormal=not commit)
        for name in [n for n, h in self.handles.items() if h.conn == op.conn]:
            self._drop_handle(name)
        if self._fault("disconnected-connection-works"):
            self.conns[op.conn] = SimConnection(op.conn, c.environment)   # the handle stays good
            return
        del self.conns[op.conn]

    def _op_Commit(self, op: L.Commit):
        self._finish(self._conn(op.conn), True)

    def _op_Backout(self, op: L.Backout):
        c = self._conn(op.conn)
        mark = c.marked
        if mark is None or self.platform != C.PLATFORM_ZOS or self._fault("mark-reinstated-on-backout"):
            skipped = c.skipped
            self._finish(c, False)
            if skipped is not None and self._fault("skipped-lost-on-backout"):
                q = self.queues[skipped.queue]
                if skipped.message in q.buckets[skipped.message.level]:
                    q.remove(skipped.message)
            return
        # Skip backout: everything but the marked get is backed out; it forms a new unit of work.
        c.log.remove(mark)
        if self._fault("backout-keeps-puts-with-mark"):
            for rec in [r for r in c.log if r.action == "put"]:
                rec.message.pending_put = None
                c.log.remove(rec)
        self._finish(c, False)
        c.log = [mark]
        c.skipped = mark

    def _finish(self, c: SimConnection, commit: bool, abnormal: bool = False) -> None:
        if abnormal and self._fault("abend-skips-mark") and (c.marked or c.skipped):
            rec = c.marked or c.skipped
            c.log.remove(rec)
            q = self.queues[rec.queue]
            if rec.message in q.buckets[rec.message.level]:
                q.remove(rec.message)
        c.marked = c.skipped = None
        made_available = False
        for rec in c.log:
            q = self.queues[rec.queue]
            m = rec.message
            if rec.action == "discard":
                if not commit:
                    q.buckets[m.level].append(m)
                    q.buckets[m.level].sort(key=lambda x: x.seq)
                continue
            if rec.action == "put":
                if commit:
                    if made_available and self._fault("commit-not-atomic"):
                        self._let_others_run()   # the unit of work's earlier puts available, this one not yet
                    m.pending_put = None
                    made_available = True
                    if self._fault("expiry-counts-from-commit"):
                        m.put_time = self.clock
                    if self._fault("syncpoint-puts-queued-at-commit") and m in q.buckets[m.level]:
                        q.buckets[m.level].remove(m)
                        m.seq = next(self._seq)
                        q.buckets[m.level].append(m)
                elif m in q.buckets[m.level]:
                    q.remove(m)
            else:
                if m not in q.buckets[m.level]:
                    continue
                if commit and self._fault("commit-keeps-gets"):
                    q.hold(m, None)   # available again, its count as it was
                elif commit:
                    q.remove(m)
                elif m.pending_put is not None:
                    continue  # removed with its put
                elif self._fault("backout-loses-get"):
                    q.remove(m)
                else:
                    q.hold(m, None)
                    if self._fault("backout-requeues-at-tail"):
                        q.buckets[m.level].remove(m)
                        m.seq = next(self._seq)
                        q.buckets[m.level].append(m)
                    if not self._fault("backout-count-not-incremented"):
                        m.backout_count += 1
                    if self.platform != C.PLATFORM_ZOS or (
                            q.attrs.get("HARDENBO") == C.MQQA_BACKOUT_HARDENED and not self._fault("hardenbo-ignored")):
                        m.logged_backouts = m.backout_count
                    if self._fault("backout-resets-expiry") and m.md.expiry != C.MQEI_UNLIMITED:
                        m.put_time = self.clock
        c.log = []
        self.triggering.on_uow_end(c, commit)

    def _op_Restart(self, op: L.Restart):
        self.cut_next.clear()
        for c in list(self.conns.values()):
            self._finish(c, False, abnormal=True)
        self.conns.clear()
        self.handles.clear()
        self.triggering.on_restart()
        for q in self.queues.values():
            for i, bucket in enumerate(q.buckets):
                kept = [
                    m for m in bucket
                    if m.md.persistence == C.MQPER_PERSISTENT or self._fault("restart-keeps-nonpersistent")
                ]
                for m in kept:
                    m.lock = None
                    # Only a logged count comes back: on z/OS that is a HARDENBO queue's.
                    if self._fault("backout-count-lost-at-restart"):
                        m.backout_count = m.logged_backouts = 0
                    elif self.platform == C.PLATFORM_ZOS:
                        m.backout_count = m.logged_backouts
                q.buckets[i] = kept
            q.held = {m for m in q.all_messages() if m.pending_get is not None}
        if self._fault("restart-sometimes-loses-persistent") and self.chance.random() < 0.25:
            for q in self.queues.values():
                lost = next((m for m in q.all_messages() if m.md.persistence == C.MQPER_PERSISTENT
                             and m.pending_get is None), None)
                if lost is not None:
                    q.remove(lost)
                    break

    # ------------------------------------------------------------ open / close
    def _op_Open(self, op: L.Open):
        q = self._queue(self._local_name(self._conn(op.conn).qmgr, op.queue))
        opts = op.options
        inputs = opts & C.MQOO_INPUT_ANY
        valid = C.MQOO_INPUT_ANY | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_SET
        if opts & ~valid or not opts & valid or (inputs not in (0, 1, 2, 4)
                                                 and not self._fault("open-options-unchecked")):
            raise MQError(C.MQRC_OPTIONS_ERROR)
        exclusive = inputs == C.MQOO_INPUT_EXCLUSIVE or (
            inputs == C.MQOO_INPUT_AS_Q_DEF and q.attrs["DEFSOPT"] == C.MQOO_INPUT_EXCLUSIVE
        )
        if inputs:
            readers = [h for h in self.handles.values() if h.queue == q.name and h.input]
            if readers and (exclusive or any(h.exclusive for h in readers)):
                raise MQError(C.MQRC_OBJECT_IN_USE)
            if self._fault("exclusive-open-not-atomic"):
                self._let_others_run()   # checked, not yet open: an overlapping open checks the same
        first_reader = bool(inputs) and not any(h.queue == q.name and h.input for h in self.handles.values())
        self.handles[op.handle] = SimHandle(op.handle, op.conn, q.name, opts, exclusive)
        if inputs:
            self.triggering.on_open_for_input(q.name, first_reader)

    def _op_Close(self, op: L.Close):
        self._handle(op.conn, op.handle)
        self._drop_handle(op.handle)

    def _drop_handle(self, name: str) -> None:
        h = self.handles.pop(name)
        if not self._fault("lock-kept-after-close"):
            h.release()
        self.triggering.on_close(h.queue, h.input, self.triggering.member(h))

    # ------------------------------------------------------------ put
    def _op_Put(self, op: L.Put):
        h = self._handle(op.conn, op.handle)
        if not h.options & C.MQOO_OUTPUT and not self._fault("put-without-output-open"):
            raise MQError(C.MQRC_NOT_OPEN_FOR_OUTPUT)
        return self._put(op.conn, self.queues[h.queue], op.body, op.md, op.options, op.xmit_header, op.dlh)

    def _op_Put1(self, op: L.Put1):
        self._conn(op.conn)
        if op.qmgr or op.queue in self.remote_defs:
            # Queue-manager name resolution: a named queue manager is reached through the
            # transmission queue of that name; a remote definition through its XMITQ, else RQMNAME's.
            rdef = self.remote_defs.get(op.queue) if not op.qmgr else None
            via = op.qmgr if rdef is None else (rdef.xmitq or rdef.rqmname)
            xq = self.queues.get(via)
            if xq is None or xq.attrs["USAGE"] != C.MQUS_TRANSMISSION:
                raise MQError(C.MQRC_UNKNOWN_REMOTE_Q_MGR)
            md = attrs.evolve(op.md, format=C.MQFMT_XMIT_Q_HEADER)
            inner = op.md.expiry
            if self._fault("remote-put-inner-expiry-unlimited"):
                inner = C.MQEI_UNLIMITED
            return self._put(op.conn, xq, op.body, md, op.options, L.XmitHeader(expiry=inner), op.dlh)
        q = self._queue(self._local_name(self.conns[op.conn].qmgr, op.queue))
        return self._put(op.conn, q, op.body, op.md, op.options, op.xmit_header, op.dlh)

    def _op_DefineRemoteQueue(self, op: L.DefineRemoteQueue):
        if op.queue in self.queues or op.queue in self.remote_defs:
            raise MQError(C.MQRCCF_OBJECT_ALREADY_EXISTS)
        self.remote_defs[op.queue] = op

    def _put(self, conn: str, q: SimQueue, body: str, md: L.MessageDescriptor, options: int,
             xmit: L.XmitHeader | None = None, dlh: L.DeadLetterHeader | None = None):
        if options & C.MQPMO_SYNCPOINT and options & C.MQPMO_NO_SYNCPOINT:
            raise MQError(C.MQRC_OPTIONS_ERROR)
        if md.priority < -1:
            raise MQError(C.MQRC_PRIORITY_ERROR)
        if md.persistence not in (0, 1, 2):
            raise MQError(C.MQRC_PERSISTENCE_ERROR)
        if (md.expiry == 0 and not self._fault("expiry-zero-accepted")) or md.expiry < -1:
            raise MQError(C.MQRC_EXPIRY_ERROR)
        xmit_expiry = None
        if md.format == C.MQFMT_XMIT_Q_HEADER and xmit is not None:
            xmit_expiry = xmit.expiry
            if (xmit_expiry == 0 or xmit_expiry < -1) and not self._fault("xmit-inner-expiry-unchecked"):
                raise MQError(C.MQRC_EXPIRY_ERROR)
        if q.attrs["PUT"] == C.MQQA_PUT_INHIBITED:
            raise MQError(C.MQRC_PUT_INHIBITED)
        pieces = self._pieces(q, body, md)
        counter = (lambda m: not self._expired(m)) if self._fault("expired-room-at-put") else self._depth_counter()
        if self._fault("full-counts-own-uncommitted-only"):
            counter = (lambda m: m.pending_put in (None, conn))
        if q.depth(counter) + len(pieces) > q.attrs["MAXDEPTH"] and not self._fault("q-full-ignored"):
            raise MQError(C.MQRC_Q_FULL)
        seen = None
        if self._fault("first-trigger-not-atomic") and q.attrs["TRIGTYPE"] == C.MQTT_FIRST:
            seen = self.triggering.depth(q)   # the count before the put, read first
            self._let_others_run()   # an overlapping put reads the same count
        priority = q.attrs["DEFPRTY"] if md.priority == -1 else md.priority
        if md.priority == -1 and self._fault("defprty-ignored"):
            priority = 4
        persistence = q.attrs["DEFPSIST"] if md.persistence == 2 else md.persistence
        if md.persistence == 2 and self._fault("defpsist-ignored"):
            persistence = C.MQPER_PERSISTENT
        if q.attrs["MSGDLVSQ"] == C.MQMDS_FIFO:
            level = q.attrs["DEFPRTY"]
        else:
            level = min(priority, C.MAX_PRIORITY)
        if self._fault("priority-ignored") and q.attrs["MSGDLVSQ"] == C.MQMDS_PRIORITY:
            level = 0
        syncpoint = bool(options & C.MQPMO_SYNCPOINT) or (
            not options & C.MQPMO_NO_SYNCPOINT and self.platform == C.PLATFORM_ZOS
        )
        stored = L.MessageDescriptor(
            priority=priority, persistence=persistence, expiry=md.expiry, report=md.report,
            msg_type=md.msg_type, feedback=md.feedback, format=md.format, reply_to_q=md.reply_to_q,
            msg_id=md.msg_id or ("" if self._fault("msgid-not-generated") else
                                 f"SIM{0 if self._fault('msgid-generated-once') else next(self._seq):021d}"),
            correl_id=md.correl_id,
            reply_to_qmgr=md.reply_to_qmgr, context=md.context, msg_flags=md.msg_flags,
        )
        placed = []
        each = len(pieces) > 1 and self._fault("segment-triggers-each")
        at_first = len(pieces) > 1 and self._fault("segment-trigger-at-first")
        for piece, segment, offset in pieces:
            m = SimMessage(seq=next(self._seq), body=piece, md=stored, level=level,
                           pending_put=conn if syncpoint else None, put_time=self.clock,
                           xmit_expiry=xmit_expiry, dlh=dlh, segment=segment, offset=offset,
                           immortal=q.attrs["USAGE"] == C.MQUS_TRANSMISSION
                           and self._fault("transmission-queue-never-expires"))
            q.buckets[level].append(m)
            placed.append(m)
            if syncpoint:
                self.conns[conn].log.append(LogRecord("put", q.name, m))
            if each or (at_first and not offset):
                self.triggering.on_put(q, m, self.conns[conn], syncpoint)
        if not (each or at_first):
            # one trigger event for the put, judged with all its segments on the queue
            self.triggering.on_put(q, placed[0], self.conns[conn], syncpoint, added=len(placed), had=seen)
        if priority > C.MAX_PRIORITY:
            return L.Observation.of(C.MQRC_PRIORITY_EXCEEDS_MAXIMUM)
        return L.OK

    def _pieces(self, q: SimQueue, body: str, md: L.MessageDescriptor) -> list[tuple[str, str, int]]:
        """What the put places: the body whole, or its segments (data, SegmentStatus, Offset)."""
        limit = q.attrs["MAXMSGL"]
        whole = [(body, C.MQSS_NOT_A_SEGMENT, 0)]
        if len(body) <= limit or self._fault("msg-too-big-accepted"):
            return whole
        if not md.msg_flags & C.MQMF_SEGMENTATION_ALLOWED or self.platform == C.PLATFORM_ZOS \
                or limit < SMALLEST_SEGMENT or self._fault("segmentation-ignored"):
            raise MQError(C.MQRC_MSG_TOO_BIG_FOR_Q)
        count = -(-len(body) // limit)
        if count * SMALLEST_SEGMENT <= len(body):
            # as even as they come: each piece within a byte of the others, so none is below the smallest
            share, longer = divmod(len(body), count)
            sizes = [share + 1] * longer + [share] * (count - longer)
        else:
            # nothing splits without a short remainder: full pieces, the rest last
            sizes = [limit] * (count - 1) + [len(body) - limit * (count - 1)]
        out, at = [], 0
        for i, size in enumerate(sizes):
            out.append((body[at:at + size], C.MQSS_LAST_SEGMENT if i == count - 1 else C.MQSS_SEGMENT, at))
            at += size
        return out

    # ------------------------------------------------------------ get / browse
    def _visible(self, h: SimHandle, m: SimMessage) -> bool:
        if m.pending_get is not None:
            return False
        if m.pending_put is not None and not self._fault("uncommitted-put-visible"):
            return False
        return m.lock is None or m.lock == h.name

    def _ordered(self, q: SimQueue, after: tuple[int, int] | None = None):
        """Messages in delivery order: highest bucket first, arrival order within it.

        With ``after`` (a browse cursor), buckets above the cursor's are skipped and the
        cursor's own bucket starts past it; callers still check each position.  Each
        bucket is a snapshot, so the caller may remove messages as it goes.
        """
        reverse = self._fault("fifo-within-priority-broken")   # newest first within a bucket
        # the buckets above the cursor's give nothing
        top = after[0] if after is not None else C.MAX_PRIORITY
        for level in range(top, -1, -1):
            bucket = q.buckets[level]
            if not bucket:
                continue
            if after is None or level < after[0]:
                yield from reversed(tuple(bucket)) if reverse else tuple(bucket)
            elif reverse:   # the cursor's own bucket: past the cursor, the older messages
                yield from reversed(bucket[:bisect.bisect_left(bucket, after[1], key=_seq)])
            else:
                yield from bucket[bisect.bisect_right(bucket, after[1], key=_seq):]

    def _op_GetMatching(self, op: L.GetMatching):
        return self._op_Get(op)

    def _op_Get(self, op: L.Get):
        h = self._handle(op.conn, op.handle)
        q = self.queues[h.queue]
        o = op.options
        browse = o & C.MQGMO_BROWSE_ANY
        if (o & C.MQGMO_SYNCPOINT and o & C.MQGMO_NO_SYNCPOINT) or bin(browse).count("1") > 1 \
                or (browse and o & C.MQGMO_MSG_UNDER_CURSOR) or (o & C.MQGMO_LOCK and not browse):
            raise MQError(C.MQRC_OPTIONS_ERROR)
        if o & C.MQGMO_WAIT and op.wait_interval < -1:
            raise MQError(C.MQRC_WAIT_INTERVAL_ERROR)
        wanted = self._wanted(op)
        if o & C.MQGMO_UNLOCK:
            if o & ~(C.MQGMO_UNLOCK | C.MQGMO_NO_SYNCPOINT | C.MQGMO_WAIT):
                raise MQError(C.MQRC_OPTIONS_ERROR)
            m = h.locked
            if m is None or m.lock != h.name or m not in q.buckets[m.level]:
                raise MQError(C.MQRC_NO_MSG_LOCKED)
            h.release()
            return L.OK
        if browse and not h.options & C.MQOO_BROWSE:
            raise MQError(C.MQRC_NOT_OPEN_FOR_BROWSE)
        if not browse and not h.input:
            raise MQError(C.MQRC_NOT_OPEN_FOR_INPUT)
        if q.attrs["GET"] == C.MQQA_GET_INHIBITED and not self._fault("get-inhibit-ignored"):
            raise MQError(C.MQRC_GET_INHIBITED)
        mark = bool(o & C.MQGMO_MARK_SKIP_BACKOUT)
        conn = self.conns[h.conn]
        if mark:
            if self.platform != C.PLATFORM_ZOS or browse:
                raise MQError(C.MQRC_OPTIONS_ERROR)
            if conn.environment != "normal" and not self._fault("rrs-mark-allowed"):
                raise MQError(C.MQRC_OPTION_ENVIRONMENT_ERROR)
            if not o & C.MQGMO_SYNCPOINT:
                if not self._fault("mark-honoured-without-syncpoint"):
                    raise MQError(C.MQRC_OPTIONS_ERROR)
                o |= C.MQGMO_SYNCPOINT
                o &= ~C.MQGMO_NO_SYNCPOINT
            if conn.skipped is not None or (conn.marked is not None and not self._fault("second-mark-accepted")):
                raise MQError(C.MQRC_SECOND_MARK_NOT_ALLOWED)
        shown = None
        if self._fault("depth-not-atomic") and not browse and o & C.MQGMO_NO_SYNCPOINT:
            shown = q.depth(self._depth_counter()) + q.drift   # the count read, to be written back less one
            self._let_others_run()
        m = self._select(h, q, o, conn, wanted)
        if m is None:
            if o & C.MQGMO_WAIT and op.wait_interval > 0:
                self.clock += op.wait_interval // 100
            raise MQError(C.MQRC_NO_MSG_AVAILABLE)
        if browse:
            if o & C.MQGMO_LOCK and self._fault("browse-lock-not-atomic"):
                self._let_others_run()   # picked, not yet locked: an overlapping get may take it
            h.cursor = (m.level, m.seq)
            h.release()   # any browse gives up the lock this handle held
            if o & C.MQGMO_LOCK:
                m.lock, h.locked = h.name, m
        else:
            if h.locked is m:
                h.locked = None
            m.lock = None
            if o & C.MQGMO_SYNCPOINT:
                sync = True
            elif o & C.MQGMO_NO_SYNCPOINT:
                sync = False
            elif o & C.MQGMO_SYNCPOINT_IF_PERSISTENT:
                sync = m.md.persistence == C.MQPER_PERSISTENT
            else:
                sync = self.platform == C.PLATFORM_ZOS
            if sync:
                q.hold(m, h.conn)
                rec = LogRecord("get", q.name, m)
                conn.log.append(rec)
                if mark:
                    conn.marked = rec
            elif self._fault("get-not-atomic"):
                self._let_others_run()   # picked, not yet taken: an overlapping get may pick it too
                if m in q.buckets[m.level]:
                    q.remove(m)
            else:
                q.remove(m)
            if shown is not None:   # the count written back: an overlapping get's update is lost
                q.drift = shown - 1 - q.depth(self._depth_counter())
        md = m.md
        left = self._left(m)
        if left is not None and not self._fault("expiry-not-decremented"):
            expiry = max(left, 1) if self._fault("expired-message-returned") else left
        else:
            expiry = md.expiry
        xmit_header = None
        if m.xmit_expiry is not None:
            inner = m.xmit_expiry
            if inner != C.MQEI_UNLIMITED:
                inner -= self.clock - m.put_time
                if inner <= 0 and not self._fault("xmit-inner-not-zeroed"):
                    inner = 0
            xmit_header = L.XmitHeader(expiry=inner)
        return L.Observation(message=L.ReturnedMessage(
            body=m.body, priority=md.priority, persistence=md.persistence, expiry=expiry,
            xmit_header=xmit_header, trigger=m.tm,
            report=md.report, msg_type=md.msg_type, feedback=md.feedback, format=md.format,
            reply_to_q=md.reply_to_q, msg_id=md.msg_id, correl_id=md.correl_id,
            backout_count=m.backout_count, reply_to_qmgr=md.reply_to_qmgr, context=md.context, dlh=m.dlh,
            segment_status=C.MQSS_SEGMENT if m.segment != C.MQSS_NOT_A_SEGMENT
            and self._fault("last-segment-unmarked") else m.segment, offset=m.offset,
        ))

    def _wanted(self, op: L.Get):
        """The selection test of a get's MatchOptions (None: every message will do)."""
        if not isinstance(op, L.GetMatching):
            return None
        if op.match_options not in range(C.MQMO_DEFINED + 1):
            raise MQError(C.MQRC_MATCH_OPTIONS_ERROR)
        by_id = op.msg_id if op.match_options & C.MQMO_MATCH_MSG_ID else None
        by_correl = op.correl_id if op.match_options & C.MQMO_MATCH_CORREL_ID else None
        if self._fault("match-correl-ignored"):
            by_correl = None
        if not self._fault("match-none-is-literal"):
            by_id, by_correl = by_id or None, by_correl or None   # MQMI_NONE, MQCI_NONE: any value
        if by_id is None and by_correl is None:
            return None
        return lambda m: (by_id is None or m.md.msg_id == by_id) and (by_correl is None or m.md.correl_id == by_correl)

    def _select(self, h: SimHandle, q: SimQueue, o: int, conn: SimConnection, wanted=None) -> SimMessage | None:
        if o & (C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR):
            m = q.at(h.cursor) if h.cursor is not None else None
            if m is not None and wanted is not None and self._fault("match-under-cursor-honoured") and not wanted(m):
                m = None
            if m is not None and self._visible(h, m):
                if not (self._expired(m) and not self._fault("lock-expired-returned")):
                    return m
                self._discard(q, m, conn)
            raise MQError(C.MQRC_NO_MSG_UNDER_CURSOR)
        after = h.cursor if o & C.MQGMO_BROWSE_NEXT and not (wanted and self._fault("match-browse-next-restarts")) \
            else None
        skipped = 0
        present = None   # until something is discarded, every message walked is still on the queue
        walk = self._ordered(q, after)
        if wanted is not None and self._fault("match-in-arrival-order"):
            walk = sorted(walk, key=_seq)
        for m in walk:
            if (present is not None and id(m) not in present) or not self._visible(h, m):
                continue
            if wanted is not None and not wanted(m):
                continue
            if after is not None and not _after((m.level, m.seq), after, self._fault("fifo-within-priority-broken")):
                continue
            if self._expired(m):
                self._discard(q, m, conn if o & C.MQGMO_SYNCPOINT else None)
                if self._fault("priority-discards-lower"):
                    self._scan([q.name])
                present = {id(x) for x in q.all_messages()}
                continue
            if after is not None and self._fault("browse-next-skips") and skipped == 0 \
                    and self._remaining(h, q, m) >= 2:
                skipped = 1
                continue
            return m
        return None

    def host_browse(self, queue: str) -> dict[str, int]:
        """MsgId and BackoutCount of each message a browse of ``queue`` by a connection of its own finds,
        as the DLQ handler host's browse (connect, open for browse, browse first and next until none is
        left, close, disconnect) would: the same walk through :meth:`_select`, so with the same faults
        and the same expired messages discarded on the way, without the calls around it."""
        q = self.queues.get(queue)
        if q is None or (q.attrs["GET"] == C.MQQA_GET_INHIBITED and not self._fault("get-inhibit-ignored")):
            return {}
        h = SimHandle("dlq.host.browse", "dlq.host", q.name, C.MQOO_BROWSE)
        if not self.faults:
            found = self._walk_once(h, q)
            if found is not None:
                return found
        ids: dict[str, int] = {}
        option = C.MQGMO_BROWSE_FIRST
        while (m := self._select(h, q, option | C.MQGMO_NO_SYNCPOINT, None)) is not None:
            h.cursor = (m.level, m.seq)
            option = C.MQGMO_BROWSE_NEXT
            if m.md.msg_id:
                ids[m.md.msg_id] = m.backout_count
        return ids

    def _walk_once(self, h: SimHandle, q: SimQueue) -> dict[str, int] | None:
        """What :meth:`host_browse` finds, in one walk: without faults, browse first and next visit the
        messages ``h`` sees in delivery order, each once.  None where the walk meets an expired message
        (the browse discards it, with its report, and goes on from there: that is for the calls)."""
        ids: dict[str, int] = {}
        for m in self._ordered(q):
            if not self._visible(h, m):
                continue
            if self._expired(m):
                return None
            if m.md.msg_id:
                ids[m.md.msg_id] = m.backout_count
        return ids

    def _remaining(self, h: SimHandle, q: SimQueue, start: SimMessage) -> int:
        seen = False
        n = 0
        for m in self._ordered(q):
            seen = seen or m is start
            if seen and self._visible(h, m):
                n += 1
        return n


def _seq(m: SimMessage) -> int:
    return m.seq


def _after(pos: tuple[int, int], cursor: tuple[int, int], newest_first: bool = False) -> bool:
    """Whether position ``pos`` comes after ``cursor`` in delivery order (``newest_first``: within a
    priority, the later arrival comes first)."""
    if newest_first:
        return (-pos[0], -pos[1]) > (-cursor[0], -cursor[1])
    return (-pos[0], pos[1]) > (-cursor[0], cursor[1])
