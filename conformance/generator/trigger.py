"""The ``trigger`` machine: application queues, an initiation queue, a trigger monitor and a server.

A putter puts messages (priorities, in and out of units of work) to a triggered
application queue and to a transmission queue, and messages longer than the
application queue's MAXMSGL, which the queue manager segments when allowed; a server opens the application
queue for input, gets, backs out, abends and closes; a trigger monitor starts
(opens the initiation queue for input), reads trigger messages and stops;
attributes change (TriggerControl, type, depth, priority threshold, get and
put inhibition), time passes and the queue manager restarts.  A watcher
browses the initiation queue and inquires depths after every step.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule

from conformance.generator.base import ConformanceMachine
from reference_model import language as L
from reference_model import mqconst as C

APP, XQ, INIT, PROC = "APP.Q", "XMIT.Q", "INIT.Q", "APP.PROCESS"
#: On z/OS, a case may put the queue manager in a queue-sharing group with QM2, whose trigger monitor and
#: server serve SHARED (a shared queue) through QM2's own initiation queue of the same name.  Two cases
#: in three are: what z/OS adds to triggering is shared queues, and the rest was run on Multiplatforms.
QM2, SHARED = "QM2", "SHARED.Q"
OUT = C.MQOO_OUTPUT | C.MQOO_INQUIRE
TRIGGER_TYPES = (C.MQTT_FIRST, C.MQTT_EVERY, C.MQTT_DEPTH)
#: The application queue's MAXMSGL: the smallest segment, so that a message splits one way only.
MAXMSGL = 16
LETTERS = "abcdefghijklmnopqrstuvwxyz" * 2


#: The watch's inquiries, made once: the same operation object at every step is found at once in the
#: step memo (its hash kept, equal by identity).
_INIT_DEPTH = L.InquireQueue(queue=INIT, names=("CURDEPTH",))
_INIT_DEPTH_QM2 = L.InquireQueue(queue=INIT, names=("CURDEPTH",), qmgr=QM2)
_APP_TRIGGER = L.InquireQueue(queue=APP, names=("TRIGGER",))


class TriggerMachine(ConformanceMachine):
    area = "trigger"

    @initialize(ttype=st.sampled_from(TRIGGER_TYPES), depth=st.sampled_from((1, 2, 3)),
                threshold=st.sampled_from((0, 4)), fifo=st.booleans(), defprty=st.sampled_from((0, 5)),
                trigint=st.sampled_from((0, 500, C.DEFAULT_TRIGGER_INTERVAL)),
                monitor=st.sampled_from((True, True, False)), group=st.sampled_from((True, True, False)))
    def set_up(self, ttype, depth, threshold, fifo, defprty, trigint, monitor, group):
        self.n = 0
        self.generation = 0
        self.group = group and self.can_group(self.session)
        if self.group:
            self.execute(L.DefineQueueSharingGroup(qmgrs=(QM2,)))
            self.execute(L.DefineQueue(queue=INIT, qmgr=QM2))
            self.execute(L.DefineQueue(queue=SHARED, attrs={
                "TRIGGER": C.MQTC_ON, "TRIGTYPE": ttype, "TRIGDPTH": depth, "TRIGMPRI": threshold,
                "PROCESS": PROC, "INITQ": INIT, "QSGDISP": C.MQQSGD_SHARED}))
        self.execute(L.DefineProcess(process=PROC, appl_id="/opt/app/server", env_data="env", user_data="user"))
        self.execute(L.DefineQueue(queue=INIT))
        self.execute(L.DefineQueue(queue=APP, attrs={
            "TRIGGER": C.MQTC_ON, "TRIGTYPE": ttype, "TRIGDPTH": depth, "TRIGMPRI": threshold,
            "MSGDLVSQ": C.MQMDS_FIFO if fifo else C.MQMDS_PRIORITY, "DEFPRTY": defprty,
            "PROCESS": PROC, "INITQ": INIT, "TRIGDATA": "app-data", "MAXMSGL": MAXMSGL}))
        self.execute(L.DefineQueue(queue=XQ, attrs={
            "USAGE": C.MQUS_TRANSMISSION, "TRIGGER": C.MQTC_ON, "TRIGTYPE": C.MQTT_FIRST,
            "INITQ": INIT, "TRIGDATA": "TO.REMOTE.CHANNEL"}))
        if trigint != C.DEFAULT_TRIGGER_INTERVAL:
            self.execute(L.AlterQueueManager(attrs={"TRIGINT": trigint}))
        self._connect_all()
        if monitor:
            self.start_monitor()

    #: Operations that may change the application queue's TriggerControl without a trigger message
    #: coming or going (an alter of a queue other than the initiation queue, a restart): after them
    #: the watch inquires TriggerControl whatever the depth.
    CHANGES = (L.AlterQueue, L.Restart, L.DefineQueue)
    #: The initiation queue's depth at the watch's last look; whether it must inquire TriggerControl
    #: next time whatever the depth; whether the watcher's handle has browsed nothing yet.
    _watched: int | None = None
    _look_again = True
    _fresh = True

    #: Operations run so far, and how many had run at the watch's last look (with none since, nothing
    #: can have changed: the watch after a rule that ended watching does nothing).
    _ran = 0
    _ran_at_watch = -1

    def execute(self, op: L.Op) -> L.Observation:
        if isinstance(op, self.CHANGES) and getattr(op, "queue", "") != INIT:
            self._look_again = True
        self._ran += 1
        return super().execute(op)

    def _handle(self, conn: str, queue: str) -> str:
        return f"{conn}.{queue}.{self.generation}"

    def _connect_all(self) -> None:
        self.generation += 1
        self._browses: dict[int, L.Get] = {}   # the watcher's browses on this generation's handle
        self.monitor_running = False
        self.server_open = False
        for conn in ("putter", "server", "monitor", "watcher"):
            self.execute(L.Connect(conn=conn))
        for q in (APP, XQ) + ((SHARED,) if self.group else ()):
            self.execute(L.Open(conn="putter", handle=self._handle("putter", q), queue=q, options=OUT))
        self.shared_open = {"server": False, "qm2-server": False}
        if self.group:
            for conn in ("qm2-server", "qm2-monitor"):
                self.execute(L.Connect(conn=conn, qmgr=QM2))
            self.qm2_monitor = None
            self.qm2_monitor_starts()
            self._watched_qm2 = None
        self.execute(L.Open(conn="watcher", handle=self._handle("watcher", INIT), queue=INIT,
                            options=C.MQOO_BROWSE | C.MQOO_INQUIRE))
        self._fresh = True

    # ------------------------------------------------------------ putter
    @rule(queue=st.sampled_from((APP, APP, XQ)), priority=st.sampled_from((0, 2, 4, 8)), sync=st.booleans())
    def put(self, queue, priority, sync):
        self.n += 1
        self.execute(L.Put(conn="putter", handle=self._handle("putter", queue), body=f"m{self.n}",
                           md=L.MessageDescriptor(priority=priority),
                           options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT))

    @rule(length=st.sampled_from((20, 32, 48)), allowed=st.sampled_from((True, True, False)), sync=st.booleans())
    def put_long(self, length, allowed, sync):
        """A message longer than the application queue's MAXMSGL: the queue manager segments it when the
        message allows it, one trigger event for all its segments; without it the put fails."""
        self.n += 1
        body = (f"L{self.n}-" + LETTERS)[:length]
        self.execute(L.Put(conn="putter", handle=self._handle("putter", APP), body=body,
                           md=L.MessageDescriptor(priority=4, msg_flags=C.MQMF_SEGMENTATION_ALLOWED if allowed else 0),
                           options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT))

    @rule(priorities=st.lists(st.sampled_from((0, 4, 8)), min_size=1, max_size=3), commit=st.booleans())
    def put_in_unit_of_work(self, priorities, commit):
        for priority in priorities:
            self.put(APP, priority, True)
        self.putter_ends_unit_of_work(commit)

    @rule(commit=st.booleans())
    def putter_ends_unit_of_work(self, commit):
        self.execute(L.Commit(conn="putter") if commit else L.Backout(conn="putter"))

    # ------------------------------------------------------------ server
    @precondition(lambda self: not self.server_open)
    @rule()
    def server_opens(self):
        obs = self.execute(L.Open(conn="server", handle=self._handle("server", APP), queue=APP,
                                  options=C.MQOO_INPUT_SHARED))
        self.server_open = obs.rc == C.MQRC_NONE

    @precondition(lambda self: self.server_open)
    @rule(sync=st.booleans())
    def server_gets(self, sync):
        self.execute(L.Get(conn="server", handle=self._handle("server", APP),
                           options=C.MQGMO_SYNCPOINT if sync else C.MQGMO_NO_SYNCPOINT))

    @precondition(lambda self: self.server_open)
    @rule(backout_first=st.booleans())
    def server_closes(self, backout_first):
        if backout_first:
            self.execute(L.Backout(conn="server"))
        self.execute(L.Close(conn="server", handle=self._handle("server", APP)))
        self.server_open = False

    @rule(commit=st.booleans())
    def server_ends_unit_of_work(self, commit):
        self.execute(L.Commit(conn="server") if commit else L.Backout(conn="server"))

    @rule(gets=st.integers(min_value=0, max_value=2), arrivals=st.integers(min_value=0, max_value=2),
          ending=st.sampled_from(("close", "backout-then-close", "close-then-backout", "abend")))
    def server_session(self, gets, arrivals, ending):
        """A triggered server's life: open, get (under syncpoint), messages arrive meanwhile, then it ends."""
        if not self.server_open:
            self.server_opens()
        if not self.server_open:
            return
        for _ in range(gets):
            self.server_gets(True)
        for _ in range(arrivals):
            self.put(APP, 4, False)
        if ending == "abend":
            self.server_abends()
        elif ending == "close-then-backout":
            self.server_closes(False)
            self.execute(L.Backout(conn="server"))
        else:
            self.server_closes(ending == "backout-then-close")

    @rule()
    def server_drains(self):
        """The usual triggered server: it gets until the queue is empty (segments one by one), then closes."""
        if not self.server_open:
            self.server_opens()
        if not self.server_open:
            return
        self._get_until_empty("server", APP)
        self.server_closes(False)

    def _get_until_empty(self, conn: str, queue: str) -> None:
        """Gets outside syncpoint on ``conn``'s handle for ``queue`` until none comes back (8 at most)."""
        for _ in range(8):
            if self.execute(L.Get(conn=conn, handle=self._handle(conn, queue),
                                  options=C.MQGMO_NO_SYNCPOINT)).message is None:
                break

    @precondition(lambda self: self.server_open)
    @rule()
    def server_abends(self):
        self.execute(L.Disconnect(conn="server", abnormal=True))
        self.execute(L.Connect(conn="server"))
        self.server_open = False
        self.shared_open["server"] = False

    # ------------------------------------------------------------ trigger monitor
    @precondition(lambda self: not self.monitor_running)
    @rule()
    def start_monitor(self):
        obs = self.execute(L.Open(conn="monitor", handle=self._handle("monitor", INIT), queue=INIT,
                                  options=C.MQOO_INPUT_AS_Q_DEF))
        self.monitor_running = obs.rc == C.MQRC_NONE

    @precondition(lambda self: self.monitor_running)
    @rule()
    def stop_monitor(self):
        self.execute(L.Close(conn="monitor", handle=self._handle("monitor", INIT)))
        self.monitor_running = False

    @precondition(lambda self: self.monitor_running)
    @rule()
    def monitor_reads(self):
        self.execute(L.Get(conn="monitor", handle=self._handle("monitor", INIT), options=C.MQGMO_NO_SYNCPOINT))

    # ------------------------------------------------------------ administration
    @rule(change=st.sampled_from((
        {"TRIGGER": C.MQTC_ON}, {"TRIGGER": C.MQTC_OFF}, {"TRIGTYPE": C.MQTT_FIRST},
        {"TRIGTYPE": C.MQTT_EVERY}, {"TRIGTYPE": C.MQTT_DEPTH}, {"TRIGDPTH": 2}, {"TRIGMPRI": 0},
        {"TRIGMPRI": 4}, {"GET": C.MQQA_GET_INHIBITED}, {"GET": C.MQQA_GET_ALLOWED})))
    def alter_application_queue(self, change):
        self.execute(L.AlterQueue(queue=APP, attrs=change))

    @rule(arrivals=st.integers(min_value=1, max_value=2))
    def gets_inhibited_while_messages_arrive(self, arrivals):
        """Gets are inhibited, messages arrive, gets are allowed again: the queue may now trigger (TRIG-22)."""
        self.execute(L.AlterQueue(queue=APP, attrs={"GET": C.MQQA_GET_INHIBITED}))
        for _ in range(arrivals):
            self.put(APP, 8, False)
        self.execute(L.AlterQueue(queue=APP, attrs={"GET": C.MQQA_GET_ALLOWED}))

    @rule(ttype=st.sampled_from(TRIGGER_TYPES), depth=st.sampled_from((1, 2, 3)),
          priority=st.sampled_from((0, 4, 8)), segmented=st.sampled_from((None, None, 0, -1)))
    def conditions_met(self, ttype, depth, priority, segmented):
        """Every trigger condition made to hold on the application queue (emptied, no server, gets
        allowed, TriggerControl on, the monitor waiting), then messages arrive one by one, the
        initiation queue watched after each: the trigger event comes with the message that meets
        the trigger type's condition, not one sooner or later.  The first or the last of them may be
        a message the queue manager segments: one event, judged once all its segments are there."""
        self.server_drains()
        self.execute(L.AlterQueue(queue=APP, attrs={"TRIGGER": C.MQTC_ON, "TRIGTYPE": ttype, "TRIGDPTH": depth,
                                                    "GET": C.MQQA_GET_ALLOWED}))
        if self.init_inhibited:
            self.alter_initiation_queue(False)
        if not self.monitor_running:
            self.start_monitor()
        count = depth + 1 if ttype == C.MQTT_DEPTH else 2
        at = None if segmented is None else segmented % count
        if segmented == 0 and ttype == C.MQTT_DEPTH and depth >= 2:
            # the segmented message is the one whose segments bring the depth to TRIGDPTH: judged at its first
            # segment instead of its last (TRIG-27), the event would come one message late
            at = depth - 2
        for i in range(count):
            if i == at:
                self.put_long(32, True, False)
            else:
                self.put(APP, priority, False)
            self.watch()

    #: Whether the machine last inhibited puts to the initiation queue (a restart keeps the attribute).
    init_inhibited = False

    @rule(inhibit=st.booleans())
    def alter_initiation_queue(self, inhibit):
        self.execute(L.AlterQueue(queue=INIT, attrs={
            "PUT": C.MQQA_PUT_INHIBITED if inhibit else C.MQQA_PUT_ALLOWED}))
        self.init_inhibited = inhibit

    @rule(tenths=st.integers(min_value=1, max_value=20))
    def time_passes(self, tenths):
        self.execute(L.AdvanceClock(tenths=tenths))

    # ------------------------------------------------------------ a queue-sharing group (z/OS)
    # (its rules are GroupTriggerMachine's, below)
    @staticmethod
    def can_group(session) -> bool:
        """Whether a case may define a queue-sharing group: on z/OS, through an adapter that can."""
        return session.platform == C.PLATFORM_ZOS and session.capabilities.can(L.DefineQueueSharingGroup) \
            and session.expressible(L.DefineQueueSharingGroup(qmgrs=(QM2,)))

    @classmethod
    def on(cls, session) -> type["TriggerMachine"]:
        """The group's rules only where a case may define a group (:meth:`can_group`)."""
        return GroupTriggerMachine if cls.can_group(session) else cls

    def _input_counts(self) -> None:
        """The shared queue's OpenInputCount as each member sees it: its own handles only (TRIG-08)."""
        for qmgr in ("", QM2):
            self.execute(L.InquireQueue(queue=SHARED, names=["IPPROCS"], qmgr=qmgr))

    def qm2_monitor_starts(self) -> None:
        self.n += 1
        handle = f"qm2-monitor.{INIT}.{self.generation}.{self.n}"
        obs = self.execute(L.Open(conn="qm2-monitor", handle=handle, queue=INIT,
                                  options=C.MQOO_INPUT_SHARED | C.MQOO_INQUIRE))
        self.qm2_monitor = handle if obs.rc == C.MQRC_NONE else None

    @precondition(lambda self: self.can_run(L.Restart()) and not self.group)
    @rule()
    def restart(self):
        self.execute(L.Restart())
        self._connect_all()

    # ------------------------------------------------------------ observation
    @invariant()
    def watch(self):
        """After every step: the initiation queue's contents and the application queue's trigger state."""
        if not getattr(self, "generation", 0) or self._ran == self._ran_at_watch:
            return
        # The depth first, after every step: a trigger message coming or going changes it.  When it
        # changed, the watcher browses on from where its last browse ended: the trigger messages that
        # came since (they all have the initiation queue's default priority, so each goes to the
        # back), and one more to see that none is hidden; and TriggerControl is inquired.  After a
        # step that may change TriggerControl otherwise (an alter, a restart) it is inquired whatever
        # the depth.  An unchanged depth after any other step would show nothing new.
        if self.group:
            # QM2's initiation queue: how many trigger messages the other queue manager wrote
            self.execute(_INIT_DEPTH_QM2)
        depth = dict(self.execute(_INIT_DEPTH).attrs or ()).get("CURDEPTH", 0)
        changed = depth != self._watched
        if changed or self._look_again:
            if depth and (changed or self._fresh):
                # a fresh handle has browsed nothing: everything came since
                came = depth if self._fresh else max(depth - self._watched, 0)
                mode = C.MQGMO_BROWSE_FIRST if self._fresh else C.MQGMO_BROWSE_NEXT
                self._fresh = False
                for _ in range(min(came, 3) + 1):
                    if self.execute(self._browse(mode)).message is None:
                        break
                    mode = C.MQGMO_BROWSE_NEXT
            self._watched, self._look_again = depth, False
            self.execute(_APP_TRIGGER)
        self._ran_at_watch = self._ran

    def _browse(self, mode: int) -> L.Get:
        """The watcher's browse (``mode``: first or next) on its current handle: one operation object
        for each, made once a generation (the same object each time is found at once in the memo)."""
        op = self._browses.get(mode)
        if op is None:
            op = self._browses[mode] = L.Get(conn="watcher", handle=self._handle("watcher", INIT),
                                            options=mode | C.MQGMO_NO_SYNCPOINT)
        return op


class GroupTriggerMachine(TriggerMachine):
    """The trigger machine on z/OS: the same rules, and those of a queue-sharing group's shared queue.

    A machine gets these rules only where a case may define a group (:meth:`TriggerMachine.on`):
    elsewhere they could never run, and Hypothesis would draw and refuse them at every step.
    """

    @precondition(lambda self: self.group)
    @rule(priority=st.sampled_from((0, 4, 8)), sync=st.booleans(), end=st.sampled_from(("commit", "backout", "")))
    def put_shared(self, priority, sync, end):
        """A put to the shared queue, judged by both queue managers with committed messages alone counting;
        one in a unit of work may be left uncommitted while others follow."""
        self.n += 1
        self.execute(L.Put(conn="putter", handle=self._handle("putter", SHARED), body=f"s{self.n}",
                           md=L.MessageDescriptor(priority=priority),
                           options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT))
        if sync and end:
            self.putter_ends_unit_of_work(end == "commit")
        elif sync:
            # while it is uncommitted another message arrives: the first does not count for it (TRIG-05)
            self.n += 1
            self.execute(L.Put(conn="putter", handle=self._handle("putter", SHARED), body=f"s{self.n}",
                               md=L.MessageDescriptor(priority=priority), options=C.MQPMO_NO_SYNCPOINT))

    @precondition(lambda self: self.group)
    @rule(who=st.sampled_from(("server", "qm2-server")), exclusive=st.booleans(), gets=st.integers(0, 2),
          arrivals=st.integers(0, 2), close=st.booleans())
    def serve_shared(self, who, exclusive, gets, arrivals, close):
        """A server on either queue manager opens the shared queue for input (shared or exclusive), gets,
        messages arrive meanwhile, and it closes or stays open."""
        handle = self._handle(who, SHARED)
        if not self.shared_open[who]:
            obs = self.execute(L.Open(conn=who, handle=handle, queue=SHARED,
                                      options=C.MQOO_INPUT_EXCLUSIVE if exclusive else C.MQOO_INPUT_SHARED))
            self.shared_open[who] = obs.rc == C.MQRC_NONE
            self._input_counts()
        if not self.shared_open[who]:
            return
        for _ in range(gets):
            self.execute(L.Get(conn=who, handle=handle, options=C.MQGMO_NO_SYNCPOINT))
        for _ in range(arrivals):
            self.put_shared(4, False, "")
        if close:
            self.execute(L.Close(conn=who, handle=handle))
            self.shared_open[who] = False
            self._input_counts()

    @precondition(lambda self: self.group)
    @rule(ttype=st.sampled_from(TRIGGER_TYPES), depth=st.sampled_from((1, 2)), uncommitted=st.integers(0, 2),
          commit=st.booleans(), threshold=st.sampled_from((0, 0, 4)), priority=st.sampled_from((4, 4, 0)),
          served=st.sampled_from((None, None, "server", "qm2-server")), realter=st.booleans())
    def shared_conditions_met(self, ttype, depth, uncommitted, commit, threshold, priority, served, realter):
        """Every trigger condition made to hold on the shared queue (emptied, no member holding it open
        for input, gets allowed, TriggerControl on, QM2's monitor waiting); then messages arrive in a unit
        of work left open, and others one by one, the initiation queues watched after each; then the unit
        of work ends.  Uncommitted messages count for no member (TRIG-05): the event comes with the
        committed message that meets the trigger type's condition, or with the commit.  A TriggerMsgPriority
        above the messages' priority leaves them out for every member, except where a server on another
        member holds the queue open for input (``served``): the others judge as FIRST with priority 0
        (TRIG-07), and each member counts its own servers (TRIG-08); the trigger type may change while
        it is served, which each member judges for itself (TRIG-20); the server closes at the end."""
        for who in ("server", "qm2-server"):
            if self.shared_open[who]:
                self.execute(L.Close(conn=who, handle=self._handle(who, SHARED)))
                self.shared_open[who] = False
        self.serve_shared("qm2-server", False, 0, 0, False)
        if self.shared_open["qm2-server"]:
            self._get_until_empty("qm2-server", SHARED)
            self.serve_shared("qm2-server", False, 0, 0, True)
        self.execute(L.AlterQueue(queue=SHARED, attrs={"TRIGGER": C.MQTC_ON, "TRIGTYPE": ttype, "TRIGDPTH": depth,
                                                       "TRIGMPRI": threshold, "GET": C.MQQA_GET_ALLOWED}))
        if not self.qm2_monitor:
            self.qm2_monitor_starts()
        if not self.monitor_running:
            self.start_monitor()
        if served:
            self.serve_shared(served, False, 0, 0, False)
        for _ in range(uncommitted):
            self.n += 1
            self.execute(L.Put(conn="putter", handle=self._handle("putter", SHARED), body=f"s{self.n}",
                               md=L.MessageDescriptor(priority=priority), options=C.MQPMO_SYNCPOINT))
            self.watch()
        for _ in range(depth + 1 if ttype == C.MQTT_DEPTH else 2):
            self.put_shared(priority, False, "")
            self.watch()
        self.putter_ends_unit_of_work(commit)
        if served:
            self.watch()
            if realter:
                self.alter_shared_queue({"TRIGTYPE": C.MQTT_FIRST if ttype != C.MQTT_FIRST else C.MQTT_EVERY})
                self.watch()
            self.serve_shared(served, False, 0, 0, True)

    @precondition(lambda self: self.group)
    @rule(who=st.sampled_from(("server", "qm2-server")), priority=st.sampled_from((0, 8)), close=st.booleans())
    def put_while_served(self, who, priority, close):
        """A server on one queue manager holds the shared queue open for shared input while a message
        below or above TriggerMsgPriority arrives: the other members judge it as FIRST with
        TriggerMsgPriority 0 (TRIG-07), the server's own as it is defined; then the server may close."""
        self.serve_shared(who, False, 0, 0, False)
        self.put_shared(priority, False, "")
        if close:
            self.serve_shared(who, False, 0, 0, True)

    @precondition(lambda self: self.group and self.qm2_monitor)
    @rule()
    def qm2_monitor_reads(self):
        self.execute(L.Get(conn="qm2-monitor", handle=self.qm2_monitor, options=C.MQGMO_NO_SYNCPOINT))

    @precondition(lambda self: self.group)
    @rule(arrivals=st.integers(0, 2), priority=st.sampled_from((0, 8)))
    def qm2_monitor_restarts(self, arrivals, priority):
        """QM2's trigger monitor stops, messages may arrive on the shared queue meanwhile, and it starts
        again: QM2 judges the shared queue when its initiation queue is opened for input (TRIG-23)."""
        if self.qm2_monitor:
            self.execute(L.Close(conn="qm2-monitor", handle=self.qm2_monitor))
            self.qm2_monitor = None
        for _ in range(arrivals):
            self.put_shared(priority, False, "")
        self.qm2_monitor_starts()

    @precondition(lambda self: self.group)
    @rule(change=st.sampled_from((
        {"TRIGGER": C.MQTC_ON}, {"TRIGGER": C.MQTC_OFF}, {"TRIGTYPE": C.MQTT_EVERY}, {"TRIGTYPE": C.MQTT_DEPTH},
        {"TRIGMPRI": 0}, {"TRIGMPRI": 4}, {"GET": C.MQQA_GET_INHIBITED}, {"GET": C.MQQA_GET_ALLOWED})))
    def alter_shared_queue(self, change):
        """An alter of the shared queue, which every queue manager of the group judges for itself."""
        self.execute(L.AlterQueue(queue=SHARED, attrs=change))
