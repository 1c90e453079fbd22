"""The ``core`` machine: several connections putting, getting and browsing two queues.

It interleaves puts (priorities, persistence, in and out of syncpoint), gets
(every syncpoint choice), browses (first, next, under cursor, with locks),
commits, backouts, normal and abnormal ends, re-opens with other open options,
inhibit and attribute changes, inquiries, restarts and clock advances.
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from conformance.generator.base import ConformanceMachine
from conformance.generator.draws import Record, drawn_rule
from reference_model import language as L
from reference_model import mqconst as C

QUEUES = ("Q1", "Q2")
#: A connection's handle on a queue it has not used since it connected: opened at first use.
LATER = "<opened at first use>"


def _is_open(name: str | None) -> bool:
    """Whether a handle entry names a handle the queue manager has open (not a failed or a deferred open)."""
    return bool(name) and name is not LATER


#: The queue the nemesis's restart scenario uses, empty at the start of each (defined at its first).
FAULT_QUEUE = "QF"
CONNS = ("c1", "c2", "c3")
STANDARD_OPEN = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
OPEN_CHOICES = (
    STANDARD_OPEN,
    C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE | C.MQOO_OUTPUT,
    C.MQOO_INPUT_EXCLUSIVE | C.MQOO_BROWSE | C.MQOO_OUTPUT,
    C.MQOO_BROWSE | C.MQOO_OUTPUT,
    C.MQOO_OUTPUT,
    C.MQOO_INPUT_SHARED,
)
PRIORITIES = (C.MQPRI_PRIORITY_AS_Q_DEF, 0, 1, 4, 5, 9, 10, 12)
PERSISTENCE = (C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT, C.MQPER_PERSISTENCE_AS_Q_DEF)
PUT_SYNC = (C.MQPMO_SYNCPOINT, C.MQPMO_NO_SYNCPOINT, C.MQPMO_NONE)
GET_SYNC = (C.MQGMO_SYNCPOINT, C.MQGMO_NO_SYNCPOINT, C.MQGMO_SYNCPOINT_IF_PERSISTENT, 0)
# BROWSE_NEXT twice: walking a queue is what browsing is for.
BROWSE_MODES = (C.MQGMO_BROWSE_FIRST, C.MQGMO_BROWSE_NEXT, C.MQGMO_BROWSE_NEXT, C.MQGMO_BROWSE_MSG_UNDER_CURSOR)
INQUIRED = ("CURDEPTH", "IPPROCS", "OPPROCS", "DEFPRTY", "MSGDLVSQ", "GET", "PUT", "MAXDEPTH", "BOTHRESH")

queue_attributes = st.fixed_dictionaries({
    "MSGDLVSQ": st.sampled_from((C.MQMDS_PRIORITY, C.MQMDS_FIFO)),
    "DEFPRTY": st.sampled_from((0, 4, 9)),
    "DEFPSIST": st.sampled_from((C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT)),
    "MAXDEPTH": st.sampled_from((3, 5000, 5000)),
    "BOTHRESH": st.sampled_from((0, 1)),
})
conns = st.sampled_from(CONNS)
queues = st.sampled_from(QUEUES)

#: Identifiers the programs give their messages ("": MQMI_NONE / MQCI_NONE, the queue manager's or none),
#: and one no message carries.
MSG_IDS = ("", "id-1", "id-2")
CORREL_IDS = ("", "corr-1", "corr-2")
#: MatchOptions a selecting get uses: by MsgId, CorrelId, both, neither, and an undefined option.
MATCHES = (C.MQMO_MATCH_CORREL_ID, C.MQMO_MATCH_MSG_ID, C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID,
           C.MQMO_NONE, C.MQMO_MATCH_CORREL_ID | 256)
#: How it gets: destructively (in and out of syncpoint) or browsing, walking, under the cursor.
MATCH_GETS = (C.MQGMO_NO_SYNCPOINT, C.MQGMO_SYNCPOINT, C.MQGMO_SYNCPOINT_IF_PERSISTENT,
              C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT,
              C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT, C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT,
              C.MQGMO_BROWSE_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT)
#: How a get that selects acts on the message under the browse cursor: browsing it, or getting it.
UNDER_CURSOR_GETS = (C.MQGMO_BROWSE_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT,
                     C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT)
identified = Record(lambda msg_id, correl_id, priority, persistence: (msg_id, correl_id, priority, persistence),
                    msg_id=MSG_IDS, correl_id=CORREL_IDS, priority=(4, 0, 9),
                    persistence=(C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT))


class CoreMachine(ConformanceMachine):
    area = "core"

    @initialize(q1=queue_attributes, q2=queue_attributes)
    def set_up(self, q1, q2):
        self.bodies = itertools.count(1)
        self.handle_numbers = itertools.count(1)
        self.handles: dict[tuple[str, str], str | None] = {}
        self.stale: list[str] = []
        for name, attrs_ in zip(QUEUES, (q1, q2)):
            self.execute(L.DefineQueue(queue=name, attrs=attrs_))
        for conn in CONNS:
            self._connect(conn)
        self.fault_handles: dict[str, str] = {}
        self.fault_queue = False
        # The faults this system can suffer from outside the program (its nemesis).
        self.restarts = tuple(op for op in (L.Restart(abrupt=True), L.Restart()) if self.can_run(op))
        self.cuts = tuple(kind for kind, op in (
            ("in-flight", L.CutConnection(conn=CONNS[0], in_flight=True)),
            ("pause", L.PauseQueueManager(conn=CONNS[0], tenths=1)),
            ("between-calls", L.CutConnection(conn=CONNS[0])),
        ) if self.can_run(op))

    # ------------------------------------------------------------ helpers
    def _connect(self, conn: str) -> None:
        """Connect; each queue is opened (:data:`STANDARD_OPEN`) when the connection first uses it, so
        that a restart, after which every program connects again, does not cost an open of every
        queue by every connection."""
        self.execute(L.Connect(conn=conn))
        for q in QUEUES:
            self.handles[(conn, q)] = LATER

    def _open(self, conn: str, queue: str, options: int) -> None:
        name = f"{conn}.{queue}.{next(self.handle_numbers)}"
        obs = self.execute(L.Open(conn=conn, handle=name, queue=queue, options=options))
        self.handles[(conn, queue)] = name if obs.rc == C.MQRC_NONE else None

    def _forget(self, conn: str) -> None:
        for q in QUEUES:
            name = self.handles.pop((conn, q), None)
            if _is_open(name):
                self.stale.append(name)
        self.fault_handles.pop(conn, None)

    def _reconnect_all(self) -> None:
        """After a restart, which ended every connection: the start-up script defines the queues again
        (refused: they exist, and keep their attributes and messages), and each program connects and
        opens again."""
        for q in QUEUES:
            self.execute(L.DefineQueue(queue=q, attrs={"MSGDLVSQ": C.MQMDS_FIFO, "MAXDEPTH": 1}))
        for c in CONNS:
            self._forget(c)
            self._connect(c)

    def _handle(self, conn: str, queue: str) -> str:
        if self.handles.get((conn, queue)) is LATER:
            self._open(conn, queue, STANDARD_OPEN)
        name = self.handles.get((conn, queue))
        return name or (self.stale[-1] if self.stale else f"{conn}.{queue}.closed")

    def _cut_unit_of_work(self, conn: str, in_flight: bool, pause: bool, tenths: int, forward: bool) -> None:
        """A cut in the middle of a unit of work that put to one queue and got from the other:
        between calls, with the commit in flight, or (``pause``) while the queue manager is paused."""
        put_q, get_q = QUEUES if forward else QUEUES[::-1]
        # a committed message for the unit of work to get, so that a cut that keeps only part of it shows
        self.execute(L.Put(conn=conn, handle=self._handle(conn, get_q), body=self._body(),
                           md=L.MessageDescriptor(persistence=C.MQPER_PERSISTENT), options=C.MQPMO_NO_SYNCPOINT))
        self.execute(L.Put(conn=conn, handle=self._handle(conn, put_q), body=self._body(),
                           md=L.MessageDescriptor(persistence=C.MQPER_PERSISTENT), options=C.MQPMO_SYNCPOINT))
        self.execute(L.Get(conn=conn, handle=self._handle(conn, get_q), options=C.MQGMO_SYNCPOINT))
        halt = L.PauseQueueManager(conn=conn, tenths=tenths)
        if pause and self.can_run(halt):
            self.execute(halt)   # the queue manager stops answering: the commit waits and gives up
        else:
            self.execute(L.CutConnection(conn=conn, in_flight=in_flight))
        # One in-flight cut in five takes the program's abnormal end itself, not a commit, with it:
        # the unit of work is backed out either way (``tenths`` picks it: no extra draw).
        if not (in_flight and not pause and tenths % 5 == 0):
            self.execute(L.Commit(conn=conn))
            # ... and a call after that: on a broken connection every call fails (CORE-47), whether
            # the break came between calls or with the commit in flight
            self.execute(L.Get(conn=conn, handle=self._handle(conn, get_q), options=C.MQGMO_NO_SYNCPOINT))
        self.execute(L.Disconnect(conn=conn, abnormal=True))
        self._forget(conn)
        self._connect(conn)
        for q in QUEUES:   # what the cut kept of the unit of work shows in the depths
            self.execute(L.InquireQueue(queue=q, names=("CURDEPTH",)))

    def _hold_a_unit_of_work(self, conn: str, with_get: bool) -> None:
        """A unit of work of a put to the first queue, after (``with_get``) a get under syncpoint of a committed
        message it first puts to the second."""
        if with_get:
            self.execute(L.Put(conn=conn, handle=self._handle(conn, QUEUES[1]), body=self._body(),
                               options=C.MQPMO_NO_SYNCPOINT))
            self.execute(L.Get(conn=conn, handle=self._handle(conn, QUEUES[1]), options=C.MQGMO_SYNCPOINT))
        self.execute(L.Put(conn=conn, handle=self._handle(conn, QUEUES[0]), body=self._body(),
                           options=C.MQPMO_SYNCPOINT))

    def _abend_in_a_unit_of_work(self, conn: str, with_get: bool) -> None:
        """A program ends abnormally holding a unit of work of a put (and perhaps a get): it is backed out
        (CORE-31), which the depths then show at once.  (An abnormal end drawn at random seldom holds one.)"""
        self._hold_a_unit_of_work(conn, with_get)
        self.execute(L.Disconnect(conn=conn, abnormal=True))
        self._forget(conn)
        self._connect(conn)
        for queue in QUEUES if with_get else QUEUES[:1]:
            self.execute(L.InquireQueue(queue=queue, names=("CURDEPTH",)))

    def _fault_handle(self, conn: str) -> str:
        if conn not in self.fault_handles:
            name = f"{conn}.{FAULT_QUEUE}.{next(self.handle_numbers)}"
            self.execute(L.Open(conn=conn, handle=name, queue=FAULT_QUEUE, options=STANDARD_OPEN))
            self.fault_handles[conn] = name
        return self.fault_handles[conn]

    def _body(self) -> str:
        return f"m{next(self.bodies)}"

    # ------------------------------------------------------------ rules
    @rule(conn=conns, queue=queues, priority=st.sampled_from(PRIORITIES),
          persistence=st.sampled_from(PERSISTENCE), sync=st.sampled_from(PUT_SYNC),
          put1=st.booleans(), correl=st.sampled_from(("", "corr-1")),
          context=st.sampled_from((None, None, L.MessageContext(user_id="app1", put_appl_name="orders",
                                                               put_appl_type=C.MQAT_UNIX, appl_identity_data="a1"))))
    def put(self, conn, queue, priority, persistence, sync, put1, correl, context):
        md = L.MessageDescriptor(priority=priority, persistence=persistence, correl_id=correl,
                                 format=C.MQFMT_STRING, reply_to_q="REPLY.Q", context=context)
        if put1:
            self.execute(L.Put1(conn=conn, queue=queue, body=self._body(), md=md, options=sync))
        else:
            self.execute(L.Put(conn=conn, handle=self._handle(conn, queue), body=self._body(),
                               md=md, options=sync))

    @rule(conn=conns, queue=queues, sync=st.sampled_from(GET_SYNC), wait=st.booleans(),
          interval=st.sampled_from((0, 100)))
    def get(self, conn, queue, sync, wait, interval):
        """A get with MQGMO_WAIT or without, and a WaitInterval of zero or not (without MQGMO_WAIT the
        interval is ignored; with it, zero waits no more than no MQGMO_WAIT)."""
        self.execute(L.Get(conn=conn, handle=self._handle(conn, queue),
                           options=sync | (C.MQGMO_WAIT if wait else 0), wait_interval=interval))

    @rule(conn=conns, queue=queues, browse=st.booleans(), commit=st.booleans())
    def get_own_uncommitted_put(self, conn, queue, browse, commit):
        """A program empties the queue, puts under syncpoint and, before committing, gets (or
        browses) the queue: its own uncommitted put is the only message there (CORE-02, CORE-13)."""
        handle = self._handle(conn, queue)
        for _ in range(6):
            if self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_NO_SYNCPOINT)).message is None:
                break
        self.execute(L.Put(conn=conn, handle=handle, body=self._body(), options=C.MQPMO_SYNCPOINT))
        self.execute(L.Get(conn=conn, handle=handle, options=(C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT)
                           if browse else C.MQGMO_SYNCPOINT))
        self.end_unit_of_work(conn, "commit" if commit else "backout")

    @rule(conn=conns, queue=queues, mode=st.sampled_from(BROWSE_MODES + (C.MQGMO_UNLOCK,)),
          lock=st.booleans())
    def browse(self, conn, queue, mode, lock):
        options = mode | C.MQGMO_NO_SYNCPOINT | (C.MQGMO_LOCK if lock and mode != C.MQGMO_UNLOCK else 0)
        self.execute(L.Get(conn=conn, handle=self._handle(conn, queue), options=options))

    @rule(conn=conns, queue=queues, lock=st.booleans())
    def browse_walk(self, conn, queue, lock):
        """Browse the queue from the first message to the end, as a scanning application does."""
        handle = self._handle(conn, queue)
        mode = C.MQGMO_BROWSE_FIRST
        for _ in range(8):
            options = mode | C.MQGMO_NO_SYNCPOINT | (C.MQGMO_LOCK if lock else 0)
            if self.execute(L.Get(conn=conn, handle=handle, options=options)).message is None:
                break
            mode = C.MQGMO_BROWSE_NEXT

    @rule(holder=conns, other=conns, queue=queues, shared=st.booleans())
    def exclusive_use(self, holder, other, queue, shared):
        """A server takes a queue for exclusive input (every other handle on it without input), then
        another program tries to open it for input, and everyone reopens it as before."""
        if holder == other:
            return
        for conn in CONNS:
            self.reopen(conn, queue, C.MQOO_BROWSE | C.MQOO_OUTPUT if conn != holder else
                        C.MQOO_INPUT_EXCLUSIVE | C.MQOO_BROWSE | C.MQOO_OUTPUT)
        self.reopen(other, queue, (C.MQOO_INPUT_SHARED if shared else C.MQOO_INPUT_EXCLUSIVE) | C.MQOO_OUTPUT)
        for conn in CONNS:
            self.reopen(conn, queue, STANDARD_OPEN)
        # ... then, the queue open for shared input by everyone, one program opens it for input as the queue
        # defines, under either DEFSOPT: exclusive input is refused while others have it open (CORE-23)
        self.execute(L.AlterQueue(queue=queue, attrs={
            "DEFSOPT": C.MQOO_INPUT_SHARED if shared else C.MQOO_INPUT_EXCLUSIVE}))
        self.reopen(other, queue, C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE | C.MQOO_OUTPUT)
        self.reopen(other, queue, STANDARD_OPEN)

    @rule(browser=conns, getter=conns, queue=queues)
    def browse_past_a_removed_message(self, browser, getter, queue):
        """A browser's cursor is on a message another program then gets: where does BROWSE_NEXT go on?"""
        if browser == getter:
            return
        self.execute(L.Get(conn=browser, handle=self._handle(browser, queue),
                           options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT))
        self.execute(L.Get(conn=getter, handle=self._handle(getter, queue), options=C.MQGMO_NO_SYNCPOINT))
        self.execute(L.Get(conn=browser, handle=self._handle(browser, queue),
                           options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT))

    @rule(conn=conns, queue=queues, gets=st.integers(min_value=2, max_value=3))
    def get_several_then_back_out(self, conn, queue, gets):
        for _ in range(gets):
            self.execute(L.Get(conn=conn, handle=self._handle(conn, queue), options=C.MQGMO_SYNCPOINT))
        self.execute(L.Backout(conn=conn))

    @rule(conn=conns, queue=queues, puts=st.integers(min_value=1, max_value=2), gets=st.integers(min_value=1, max_value=2))
    def back_out_then_read_the_queue(self, conn, queue, puts, gets):
        """Messages put, the first got under syncpoint and backed out, then the queue read out: each
        backed-out message is back in its place (CORE-15), ahead of those put after it."""
        handle = self._handle(conn, queue)
        for _ in range(puts):
            self.execute(L.Put(conn=conn, handle=handle, body=self._body(), options=C.MQPMO_NO_SYNCPOINT))
        for _ in range(gets):
            self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_SYNCPOINT))
        self.execute(L.Backout(conn=conn))
        for _ in range(puts + 2):
            if self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_NO_SYNCPOINT)).message is None:
                break

    @rule(first=conns, second=conns, queue=queues, second_sync=st.booleans(), backout=st.booleans())
    def units_of_work_end_in_the_other_order(self, first, second, queue, second_sync, backout):
        """One program puts under syncpoint, another puts after it (in a unit of work of its own that it
        commits first, or outside one), then the first commits (or backs out) and a third reads the
        queue: the messages come in the order they were put, not the order they were committed (CORE-05,
        CORE-06)."""
        if first == second:
            return
        reader = next(c for c in CONNS if c not in (first, second))
        self.execute(L.Put(conn=first, handle=self._handle(first, queue), body=self._body(), options=C.MQPMO_SYNCPOINT))
        self.execute(L.Put(conn=second, handle=self._handle(second, queue), body=self._body(),
                           options=C.MQPMO_SYNCPOINT if second_sync else C.MQPMO_NO_SYNCPOINT))
        if second_sync:
            self.execute(L.Commit(conn=second))
        self.execute(L.Backout(conn=first) if backout else L.Commit(conn=first))
        for _ in range(3):
            if self.execute(L.Get(conn=reader, handle=self._handle(reader, queue),
                                  options=C.MQGMO_NO_SYNCPOINT)).message is None:
                break

    @rule(first=conns, second=conns, queue=queues, commit=st.booleans())
    def fill_from_two_units_of_work(self, first, second, queue, commit):
        """A queue a few messages short of its MAXDEPTH, filled by two programs' puts under syncpoint in
        turn: the uncommitted puts of both count (CORE-27, CORE-28), so the next put of either, or of a
        third program outside syncpoint, finds it full; then the units of work end."""
        if first == second:
            return
        got = dict(self.execute(L.InquireQueue(queue=queue, names=("CURDEPTH", "MAXDEPTH"))).attrs or ())
        depth, limit = got.get("CURDEPTH"), got.get("MAXDEPTH")
        if not isinstance(depth, int) or not isinstance(limit, int) or not 0 < limit - depth <= 4:
            return
        for n in range(limit - depth + 1):
            conn = (first, second)[n % 2]
            self.execute(L.Put(conn=conn, handle=self._handle(conn, queue), body=self._body(),
                               options=C.MQPMO_SYNCPOINT))
        third = next(c for c in CONNS if c not in (first, second))
        self.execute(L.Put(conn=third, handle=self._handle(third, queue), body=self._body(),
                           options=C.MQPMO_NO_SYNCPOINT))
        self.execute(L.Commit(conn=first) if commit else L.Backout(conn=first))
        self.execute(L.InquireQueue(queue=queue, names=("CURDEPTH",)))
        self.execute(L.Backout(conn=second) if commit else L.Commit(conn=second))

    @rule(holder=conns, other=conns, queue=queues, unlocks=st.integers(0, 2))
    def get_past_a_lock(self, holder, other, queue, unlocks):
        """One handle locks the first message; another tries to get: on a queue of one message, nothing.
        Then the holder may unlock it (once, or twice: the second finds nothing locked) and the other
        tries again (CORE-21)."""
        if holder == other:
            return
        handle = self._handle(holder, queue)
        self.execute(L.Get(conn=holder, handle=handle,
                           options=C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK | C.MQGMO_NO_SYNCPOINT))
        self.execute(L.Get(conn=other, handle=self._handle(other, queue), options=C.MQGMO_NO_SYNCPOINT))
        for _ in range(unlocks):
            self.execute(L.Get(conn=holder, handle=handle, options=C.MQGMO_UNLOCK | C.MQGMO_NO_SYNCPOINT))
        if unlocks:
            self.execute(L.Get(conn=other, handle=self._handle(other, queue), options=C.MQGMO_NO_SYNCPOINT))

    @rule(conn=conns, queue=queues, priorities=st.lists(st.sampled_from(PRIORITIES), min_size=2, max_size=4),
          sync=st.sampled_from(PUT_SYNC), alike=st.booleans())
    def put_several(self, conn, queue, priorities, sync, alike):
        """Several puts in a row, of mixed priorities or (``alike``) all of the first one's."""
        for priority in priorities if not alike else [priorities[0]] * len(priorities):
            self.execute(L.Put(conn=conn, handle=self._handle(conn, queue), body=self._body(),
                               md=L.MessageDescriptor(priority=priority), options=sync))

    @rule(conn=conns, queue=queues, sync=st.sampled_from((C.MQGMO_SYNCPOINT, C.MQGMO_NO_SYNCPOINT)))
    def get_under_cursor(self, conn, queue, sync):
        self.execute(L.Get(conn=conn, handle=self._handle(conn, queue),
                           options=C.MQGMO_MSG_UNDER_CURSOR | sync))

    @rule(conn=conns, how=st.sampled_from(("commit", "backout", "disconnect", "disconnect after a get")))
    def end_unit_of_work(self, conn, how):
        if how.startswith("disconnect"):
            # MQDISC ends the unit of work too (CORE-30): one that holds a put, and perhaps a get, whose fate the
            # depths then show at once.  Never a get alone: a message back on the queue after it is as well a
            # commit that failed to delete it (CORE-14) as a disconnect that backed out.
            with_get = how == "disconnect after a get"
            self._hold_a_unit_of_work(conn, with_get)
            self.execute(L.Disconnect(conn=conn))
            self._forget(conn)
            # A call on the ended connection fails with MQRC_HCONN_ERROR and changes nothing.
            self.execute(L.Put1(conn=conn, queue=QUEUES[0], body=self._body()))
            self._connect(conn)
            for queue in QUEUES if with_get else QUEUES[:1]:
                self.execute(L.InquireQueue(queue=queue, names=INQUIRED))
        else:
            self.execute(L.Commit(conn=conn) if how == "commit" else L.Backout(conn=conn))

    # Rules are picked uniformly, so frequent actions get several rules and
    # rare, disruptive ones share one.
    @rule(conn=conns, queue=queues, priority=st.sampled_from(PRIORITIES),
          persistence=st.sampled_from((C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT)),
          sync=st.sampled_from(PUT_SYNC))
    def put_on_handle(self, conn, queue, priority, persistence, sync):
        self.execute(L.Put(conn=conn, handle=self._handle(conn, queue), body=self._body(),
                           md=L.MessageDescriptor(priority=priority, persistence=persistence),
                           options=sync))

    @rule(conn=conns, queue=queues, sync=st.sampled_from((C.MQGMO_SYNCPOINT, C.MQGMO_NO_SYNCPOINT,
                                                          C.MQGMO_SYNCPOINT_IF_PERSISTENT)))
    def get_again(self, conn, queue, sync):

        self.execute(L.Get(conn=conn, handle=self._handle(conn, queue), options=sync))

    @rule(conn=conns, commit=st.booleans())
    def end_unit_of_work_again(self, conn, commit):
        self.end_unit_of_work(conn, "commit" if commit else "backout")

    @rule(event=st.sampled_from(("restart", "disconnect", "abend", "clock")),
          conn=conns, tenths=st.integers(min_value=1, max_value=50))
    def disruption(self, event, conn, tenths):
        # ``tenths`` also picks the kind of restart or abnormal end (no extra draw, so an adapter
        # without a nemesis runs exactly what it ran before one existed).
        if event == "restart" and self.can_run(L.Restart()):
            abrupt = L.Restart(abrupt=True)
            self.execute(abrupt if tenths % 2 and self.can_run(abrupt) else L.Restart())
            self._reconnect_all()
        elif event == "abend" and tenths % 3 and self.can(L.CutConnection):
            # The network cuts the connection: between calls (the next call finds it broken) or
            # while a commit is in flight (its outcome unknown); the program then ends and starts again.
            in_flight = tenths % 3 == 2
            self._cut_unit_of_work(conn, in_flight, pause=in_flight and tenths % 4 == 0, tenths=tenths,
                                   forward=bool(tenths % 2))
        elif event == "abend" and tenths % 5:
            self._abend_in_a_unit_of_work(conn, with_get=bool(tenths % 2))
        elif event in ("disconnect", "abend"):
            self.execute(L.Disconnect(conn=conn, abnormal=event == "abend"))
            self._forget(conn)
            self._connect(conn)
        else:
            self.execute(L.AdvanceClock(tenths=tenths))

    # The nemesis: faults from outside the program, each after building the state its rules are
    # about.  Only systems with a nemesis run these two; ``disruption``'s rarer faults stay as they were.
    # (a system may allow a few restarts in a run: once they are spent, none is drawn)
    @precondition(lambda self: self.restarts and self.can_run(self.restarts[-1]))
    @rule(conn=conns, which=st.integers(min_value=0, max_value=1))
    def restart_after_a_backout(self, conn, which):
        """A restart (abrupt or not) with a committed persistent message backed out once on the
        queue (its BackoutCount survives, CORE-45), a committed non-persistent one and a unit of
        work in flight (both gone after it, CORE-32); the program then gets what is left."""
        # which restart the system can run (an abrupt one first): picked as a small integer rather
        # than from a strategy built at each step, so it is drawn with the rule's other arguments
        restart = self.restarts[which % len(self.restarts)]
        if not self.fault_queue:
            self.execute(L.DefineQueue(queue=FAULT_QUEUE))
            self.fault_queue = True
        handle = self._fault_handle(conn)
        persistent = L.MessageDescriptor(persistence=C.MQPER_PERSISTENT)
        self.execute(L.Put(conn=conn, handle=handle, body=self._body(), md=persistent,
                           options=C.MQPMO_NO_SYNCPOINT))
        self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_SYNCPOINT))
        self.execute(L.Backout(conn=conn))
        self.execute(L.Put(conn=conn, handle=handle, body=self._body(),
                           md=L.MessageDescriptor(persistence=C.MQPER_NOT_PERSISTENT),
                           options=C.MQPMO_NO_SYNCPOINT))
        self.execute(L.Put(conn=conn, handle=handle, body=self._body(), md=persistent,
                           options=C.MQPMO_SYNCPOINT))
        self.execute(restart)
        self._reconnect_all()
        handle = self._fault_handle(conn)
        for _ in range(3):   # the backed-out message, then nothing (MQRC_NO_MSG_AVAILABLE)
            if self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_NO_SYNCPOINT)).message is None:
                break

    @precondition(lambda self: self.cuts)
    @rule(conn=conns, which=st.integers(min_value=0, max_value=2), tenths=st.integers(min_value=1, max_value=50),
          forward=st.booleans())
    def cut_in_a_unit_of_work(self, conn, which, tenths, forward):
        """The connection is cut in the middle of a unit of work: between calls, with the commit in
        flight, or while the queue manager is paused (CORE-46 to CORE-48)."""
        kind = self.cuts[which % len(self.cuts)]
        self._cut_unit_of_work(conn, in_flight=kind != "between-calls", pause=kind == "pause", tenths=tenths,
                               forward=forward)

    @rule(conn=conns, queue=queues, options=st.sampled_from(OPEN_CHOICES))

    def reopen(self, conn, queue, options):
        name = self.handles.get((conn, queue))
        if _is_open(name):
            self.execute(L.Close(conn=conn, handle=name))
            self.stale.append(name)
        self._open(conn, queue, options)

    @rule(queue=queues, change=st.sampled_from((
        {"GET": C.MQQA_GET_INHIBITED}, {"GET": C.MQQA_GET_ALLOWED},
        {"PUT": C.MQQA_PUT_INHIBITED}, {"PUT": C.MQQA_PUT_ALLOWED},
        {"DEFPRTY": 2}, {"DEFPRTY": 7}, {"MAXDEPTH": 3}, {"MAXDEPTH": 5000},
        {"DEFSOPT": C.MQOO_INPUT_EXCLUSIVE}, {"DEFSOPT": C.MQOO_INPUT_SHARED},
    )))
    def alter(self, queue, change):
        self.execute(L.AlterQueue(queue=queue, attrs=change))
        if change == {"PUT": C.MQQA_PUT_INHIBITED}:
            # a program sends to it at once, by both calls that put (CORE-26)
            self.execute(L.Put1(conn=CONNS[0], queue=queue, body=self._body()))
            self.execute(L.Put(conn=CONNS[1], handle=self._handle(CONNS[1], queue), body=self._body()))

    @rule(conn=conns, queue=queues, call=st.sampled_from((
        "negative-priority", "unknown-queue-put1", "unknown-queue-open", "put-both-syncpoints",
        "get-both-syncpoints", "bad-wait-interval", "wait-interval-just-below", "unknown-queue-manager",
        "bad-persistence", "two-input-options", "put-on-input-only", "get-on-output-only", "browse-on-input-only")))
    def invalid_call(self, conn, queue, call):
        if call in self.WRONG_HANDLE:
            return self._wrong_handle(conn, queue, call)
        handle = self._handle(conn, queue)
        if call == "negative-priority":
            op = L.Put(conn=conn, handle=handle, body=self._body(), md=L.MessageDescriptor(priority=-2))
        elif call == "unknown-queue-put1":
            # (and one naming a queue manager there is no route to, CORE-43, which one call in thirteen left rare)
            self.execute(L.Put1(conn=conn, queue=queue, qmgr="NO.SUCH.QMGR", body=self._body()))
            op = L.Put1(conn=conn, queue="NO.SUCH.QUEUE", body=self._body())
        elif call == "unknown-queue-manager":
            op = L.Put1(conn=conn, queue=queue, qmgr="NO.SUCH.QMGR", body=self._body())
        elif call == "unknown-queue-open":
            op = L.Open(conn=conn, handle=f"{conn}.missing.{next(self.handle_numbers)}",
                        queue="NO.SUCH.QUEUE", options=STANDARD_OPEN)
        elif call == "put-both-syncpoints":
            op = L.Put(conn=conn, handle=handle, body=self._body(),
                       options=C.MQPMO_SYNCPOINT | C.MQPMO_NO_SYNCPOINT)
        elif call == "bad-persistence":
            op = L.Put(conn=conn, handle=handle, body=self._body(), md=L.MessageDescriptor(persistence=3))
        elif call == "wait-interval-just-below":
            op = L.Get(conn=conn, handle=handle, options=C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT,
                       wait_interval=C.MQWI_UNLIMITED - 1)
        elif call == "get-both-syncpoints":
            op = L.Get(conn=conn, handle=handle, options=C.MQGMO_SYNCPOINT | C.MQGMO_NO_SYNCPOINT)
        else:
            op = L.Get(conn=conn, handle=handle, options=C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, wait_interval=-5)
        self.execute(op)

    #: Calls on a handle opened without what the call needs (CORE-22), and an open asking for two
    #: kinds of input at once (CORE-23): each on a handle of its own, closed again at once.
    WRONG_HANDLE = {"two-input-options": C.MQOO_INPUT_SHARED | C.MQOO_INPUT_EXCLUSIVE | C.MQOO_OUTPUT,
                    "put-on-input-only": C.MQOO_INPUT_SHARED | C.MQOO_BROWSE,
                    "get-on-output-only": C.MQOO_OUTPUT | C.MQOO_BROWSE,
                    "browse-on-input-only": C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT}

    def _wrong_handle(self, conn, queue, call):
        handle = f"{conn}.wrong.{next(self.handle_numbers)}"
        if self.execute(L.Open(conn=conn, handle=handle, queue=queue, options=self.WRONG_HANDLE[call])).cc \
                == C.MQCC_FAILED:
            return
        if call == "put-on-input-only":
            self.execute(L.Put(conn=conn, handle=handle, body=self._body(), options=C.MQPMO_NO_SYNCPOINT))
        elif call == "get-on-output-only":
            self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_NO_SYNCPOINT))
        else:
            self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT))
        self.execute(L.Close(conn=conn, handle=handle))

    @rule(queue=queues)
    def inquire(self, queue):
        self.execute(L.InquireQueue(queue=queue, names=INQUIRED))

    @classmethod
    def on(cls, session) -> type["CoreMachine"]:
        """Gets that select by MsgId and CorrelId only where the system can make them (:class:`SelectingCoreMachine`)."""
        return SelectingCoreMachine if session.capabilities.can(L.GetMatching) else CoreMachine


class SelectingCoreMachine(CoreMachine):
    """The core machine with gets that select by MsgId and CorrelId (MQGMO MatchOptions), for a system
    that can make them: elsewhere Hypothesis would draw the rule and refuse it at every step."""

    @drawn_rule(conn=CONNS, queue=QUEUES, puts=(2, 1, 0), first=identified, second=identified,
                alike=(True, False), match=MATCHES, select=("second", "first", "absent", "none"), how=MATCH_GETS,
                again=(False, True))
    def get_matching(self, conn, queue, puts, first, second, alike, match, select, how, again):
        """Messages the program identifies (its own MsgId, a CorrelId, a priority), put behind whatever is
        there (``alike``: the second with the first's identifiers), then gets or browses that select by
        MsgId, CorrelId, both or neither (CORE-51, CORE-52): the identifiers of the second message put, of
        the first, of none there, or MQMI_NONE and MQCI_NONE.  ``again``: a second such call (the next
        match, or a browse walking on from the cursor).  Under the cursor, put there by a browse first,
        the selection is ignored (CORE-53); an undefined option fails (CORE-54)."""
        handle = self._handle(conn, queue)
        if alike:
            second = (first[0], first[1], *second[2:])
        for mid, cid, priority, persistence in (first, second)[:puts]:
            self.execute(L.Put(conn=conn, handle=handle, body=self._body(), options=C.MQPMO_NO_SYNCPOINT,
                               md=L.MessageDescriptor(msg_id=mid, correl_id=cid, priority=priority,
                                                      persistence=persistence)))
        mid, cid = {"second": second[:2], "first": first[:2], "absent": ("id-9", "corr-9"), "none": ("", "")}[select]
        if how & C.MQGMO_BROWSE_MSG_UNDER_CURSOR:
            self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT))
        for _ in range(2 if again else 1):
            self.execute(L.GetMatching(conn=conn, handle=handle, options=how, match_options=match, msg_id=mid,
                                       correl_id=cid))

    @drawn_rule(conn=CONNS, queue=QUEUES, first=identified, second=identified, walk=(False, True),
                match=MATCHES[:3], select=("absent", "first", "second"), how=UNDER_CURSOR_GETS)
    def get_matching_under_cursor(self, conn, queue, first, second, walk, match, select, how):
        """Two messages the program identifies put behind whatever is there, a browse to the head of the
        queue (and on to the next message: ``walk``), then a get or a browse of the message under the cursor
        that selects by MsgId, CorrelId or both: by identifiers no message carries, or by those of either
        message put.  Under the cursor the selection is ignored: the message there comes back whether it
        satisfies it or not (CORE-53).  In :meth:`get_matching` such a call is one way of getting among
        seven, and most often drawn with match options that select nothing or are undefined."""
        handle = self._handle(conn, queue)
        for mid, cid, priority, persistence in (first, second):
            self.execute(L.Put(conn=conn, handle=handle, body=self._body(), options=C.MQPMO_NO_SYNCPOINT,
                               md=L.MessageDescriptor(msg_id=mid, correl_id=cid, priority=priority,
                                                      persistence=persistence)))
        self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT))
        if walk:
            self.execute(L.Get(conn=conn, handle=handle, options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT))
        mid, cid = {"absent": ("id-9", "corr-9"), "first": first[:2], "second": second[:2]}[select]
        self.execute(L.GetMatching(conn=conn, handle=handle, options=how, match_options=match, msg_id=mid,
                                   correl_id=cid))

    @drawn_rule(conn=CONNS, queue=QUEUES, msg_id=MSG_IDS[1:], correl_id=CORREL_IDS[1:],
                priorities=Record(lambda a, b, c: (a, b, c), a=(0, 4, 9), b=(9, 0, 4), c=(4, 9, 0)), count=(3, 2),
                match=MATCHES[:3], browse=(False, True))
    def get_matching_in_order(self, conn, queue, msg_id, correl_id, priorities, count, match, browse):
        """Several messages with the same identifiers and mixed priorities, then gets (or a browse from
        the first on) that select by them, one more than were put: every match comes back, in the
        queue's delivery order, and then none (CORE-52, CORE-51); a browse walks on from its cursor."""
        handle = self._handle(conn, queue)
        for priority in priorities[:count]:
            self.execute(L.Put(conn=conn, handle=handle, body=self._body(), options=C.MQPMO_NO_SYNCPOINT,
                               md=L.MessageDescriptor(msg_id=msg_id, correl_id=correl_id, priority=priority)))
        options = C.MQGMO_BROWSE_FIRST if browse else 0
        for _ in range(count + 1):
            obs = self.execute(L.GetMatching(conn=conn, handle=handle, options=options | C.MQGMO_NO_SYNCPOINT,
                                             match_options=match, msg_id=msg_id, correl_id=correl_id))
            if obs.message is None:
                break
            options = C.MQGMO_BROWSE_NEXT if browse else 0
