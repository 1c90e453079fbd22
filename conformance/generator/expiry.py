"""The ``expiry`` machine: messages with short expiry times on a virtual (or real) clock.

A producer puts messages with priorities, expiry times and expiration-report
options to an application queue (FIFO or priority ordered) and MQXMIT messages
with two Expiry fields to a transmission queue; a consumer gets, browses, locks
and gets under the cursor, in and out of units of work; time passes; depth and
the reply queue (where reports arrive) are inspected.  On z/OS cases also ask
for expiry scans, either explicitly or, in cases without reports, periodically.
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from conformance.generator.base import ConformanceMachine
from reference_model import language as L
from reference_model import mqconst as C

APP, REPLY, XMIT = "APP.Q", "REPLY.Q", "XMIT.Q"
#: A remote queue definition: queue ORDERS on queue manager FAR, through XMIT.
REMOTE = "FAR.ORDERS"
OPEN = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
EXPIRIES = (C.MQEI_UNLIMITED, 3, 8, 15, 30, 60)
REPORTS = (C.MQRO_NONE, C.MQRO_EXPIRATION, C.MQRO_EXPIRATION_WITH_DATA, C.MQRO_EXPIRATION_WITH_FULL_DATA)
LONG_BODY = "x" * 130  # longer than the 100 bytes of a report WITH_DATA


def _on_zos(self) -> bool:
    return self.session.platform == C.PLATFORM_ZOS


class ExpiryMachine(ConformanceMachine):
    area = "expiry"

    @initialize(fifo=st.booleans(), scans=st.sampled_from((True, True, False)))
    def set_up(self, fifo, scans):
        self.numbers = itertools.count(1)
        # Periodic scans (z/OS) are tried only in cases without expiration reports: two cases in three,
        # as the scans are most of what z/OS adds to expiry, and the rest was run on Multiplatforms.
        self.scans = scans and _on_zos(self)
        # ... and where the system has queue-sharing groups, in a group with QM2 and APP shared: the scans
        # are then QM2's in the cases with a priority-ordered APP (they reach APP, not REPLY or XMIT: EXP-25)
        # and those of the queue manager under test in the FIFO cases.
        group = self.scans and self.can_run(L.DefineQueueSharingGroup(qmgrs=("QM2",))) \
            and self.can_run(L.AlterQueueManager(attrs={"EXPRYINT": 1}, qmgr="QM2"))
        if group:
            self.execute(L.DefineQueueSharingGroup(qmgrs=("QM2",)))
        self.execute(L.DefineQueue(queue=APP, attrs={"MSGDLVSQ": C.MQMDS_FIFO if fifo else C.MQMDS_PRIORITY,
                                                     **({"QSGDISP": C.MQQSGD_SHARED} if group else {})}))
        # The reply queue is ordered as APP is: on a FIFO one, reports are queued at its DefPriority (EXP-08).
        self.execute(L.DefineQueue(queue=REPLY, attrs={"MSGDLVSQ": C.MQMDS_FIFO} if fifo else {}))
        self.execute(L.DefineQueue(queue=XMIT, attrs={"USAGE": C.MQUS_TRANSMISSION}))
        self.remote = self.can(L.DefineRemoteQueue)
        if self.remote:
            self.execute(L.DefineRemoteQueue(queue=REMOTE, rname="ORDERS", rqmname="FAR", xmitq=XMIT))
        for conn in ("producer", "consumer", "reader"):
            self.execute(L.Connect(conn=conn))
            for q in (APP, REPLY, XMIT):
                self.execute(L.Open(conn=conn, handle=f"{conn}.{q}", queue=q, options=OPEN))
        if self.scans:
            self.execute(L.AlterQueueManager(attrs={"EXPRYINT": 1}, qmgr="QM2" if group and not fifo else ""))
        if group and not fifo:
            # a message soon expired on the reply queue, private to the queue manager under test, whose scans are
            # off: QM2's scans never reach it (EXP-25), so it is in the depth the cases inquire until a get
            # meets it (in cases with scans no report comes to the reply queue)
            md, n = self._md(0, 3, C.MQRO_NONE)
            self.execute(L.Put(conn="producer", handle=f"producer.{REPLY}", body=f"m{n}", md=md))

    def _md(self, priority: int, expiry: int, report: int, **kw) -> L.MessageDescriptor:
        n = next(self.numbers)
        return L.MessageDescriptor(priority=priority, expiry=expiry, report=C.MQRO_NONE if self.scans else report,
                                   reply_to_q=REPLY, msg_id=f"ID{n:04d}", format=C.MQFMT_STRING, **kw), n

    @rule(priority=st.sampled_from((0, 3, 7)), expiry=st.sampled_from(EXPIRIES),
          report=st.sampled_from(REPORTS), long=st.booleans(), sync=st.booleans())
    def put(self, priority, expiry, report, long, sync):
        md, n = self._md(priority, expiry, report)
        body = f"m{n}" + (LONG_BODY if long else "")
        self.execute(L.Put(conn="producer", handle=f"producer.{APP}", body=body, md=md,
                           options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT))

    @rule(expiry=st.sampled_from((3, 8)), wait=st.integers(min_value=0, max_value=15), commit=st.booleans(),
          report=st.sampled_from(REPORTS))
    def put_in_a_unit_of_work_then_end_it(self, expiry, wait, commit, report):
        """The producer puts under syncpoint a message that expires soon, time passes (past its expiry or
        not) and the unit of work ends: committed, the message's expiry counts from its put, not from the
        commit (an expired one is discarded by the next get, with its report); backed out, it never was."""
        md, n = self._md(0, expiry, report)
        self.execute(L.Put(conn="producer", handle=f"producer.{APP}", body=f"m{n}", md=md,
                           options=C.MQPMO_SYNCPOINT))
        if wait:
            self.execute(L.AdvanceClock(tenths=wait))
        self.execute(L.Commit(conn="producer") if commit else L.Backout(conn="producer"))
        self.execute(L.Get(conn="consumer", handle=f"consumer.{APP}", options=C.MQGMO_NO_SYNCPOINT))

    @rule(priorities=st.lists(st.sampled_from((0, 3, 7)), min_size=2, max_size=4),
          expiry=st.sampled_from((3, 8, 15)), report=st.sampled_from(REPORTS))
    def put_batch(self, priorities, expiry, report):
        """Several messages, most expiring soon: the walk of a later get discards them."""
        for i, priority in enumerate(priorities):
            md, n = self._md(priority, expiry if i % 2 == 0 else C.MQEI_UNLIMITED, report)
            self.execute(L.Put(conn="producer", handle=f"producer.{APP}", body=f"m{n}", md=md))

    @rule(expiry=st.sampled_from((0, -2, -5)))
    def put_bad_expiry(self, expiry):
        md, n = self._md(0, expiry, C.MQRO_EXPIRATION)
        self.execute(L.Put1(conn="producer", queue=APP, body=f"bad{n}", md=md))
        # The same value as the Expiry embedded in an MQXMIT message, the outer one valid: refused too.
        outer = L.MessageDescriptor(expiry=40, format=C.MQFMT_XMIT_Q_HEADER, msg_id=f"XB{n:04d}")
        self.execute(L.Put(conn="producer", handle=f"producer.{XMIT}", body=f"xbad{n}", md=outer,
                           xmit_header=L.XmitHeader(expiry=expiry)))

    @rule(outer=st.sampled_from((C.MQEI_UNLIMITED, 10, 40)), inner=st.sampled_from((C.MQEI_UNLIMITED, 5, 10, 40)),
          same=st.booleans())
    def put_xmit(self, outer, inner, same):
        md, n = self._md(0, outer, C.MQRO_NONE)
        md = L.MessageDescriptor(expiry=outer, format=C.MQFMT_XMIT_Q_HEADER, msg_id=md.msg_id)
        self.execute(L.Put(conn="producer", handle=f"producer.{XMIT}", body=f"x{n}", md=md,
                           xmit_header=L.XmitHeader(expiry=outer if same else inner)))

    @precondition(lambda self: self.remote)
    @rule(priority=st.sampled_from((0, 3, 7)), expiry=st.sampled_from(EXPIRIES), report=st.sampled_from(REPORTS),
          wait=st.integers(min_value=0, max_value=40))
    def put_remote(self, priority, expiry, report, wait):
        """A put to a remote queue: it waits on the transmission queue (both Expiry fields set, EXP-18)
        and may expire there (EXP-07) before the channel, here a get, takes it."""
        md, n = self._md(priority, expiry, report)
        self.execute(L.Put1(conn="producer", queue=REMOTE, body=f"r{n}", md=md))
        if wait:
            self.execute(L.AdvanceClock(tenths=wait))
        self.get_xmit()

    @rule(tenths=st.integers(min_value=1, max_value=25))
    def time_passes(self, tenths):

        self.execute(L.AdvanceClock(tenths=tenths))

    @rule(options=st.sampled_from((C.MQGMO_NO_SYNCPOINT, C.MQGMO_SYNCPOINT, C.MQGMO_BROWSE_FIRST,
                                   C.MQGMO_BROWSE_NEXT)), wait=st.sampled_from((0, 0, 300, 1500)))
    def consume(self, options, wait):
        """A get or browse; with a wait interval (milliseconds), time passes while it waits on a queue
        with nothing it can return, and the messages left age meanwhile."""
        self.execute(L.Get(conn="consumer", handle=f"consumer.{APP}",
                           options=options | (C.MQGMO_WAIT if wait else 0), wait_interval=wait))

    @rule(commit=st.booleans())
    def end_unit_of_work(self, commit):
        self.execute(L.Commit(conn="consumer") if commit else L.Backout(conn="consumer"))

    @rule(wait=st.integers(min_value=0, max_value=30))
    def lock_then_get_under_cursor(self, wait):
        handle = f"consumer.{APP}"
        self.execute(L.Get(conn="consumer", handle=handle, options=C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK))
        if wait:
            self.execute(L.AdvanceClock(tenths=wait))
        self.execute(L.Get(conn="consumer", handle=handle, options=C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT))

    @rule(before=st.integers(min_value=0, max_value=10), after=st.integers(min_value=1, max_value=20))
    def get_backout_get(self, before, after):
        """A message got in a unit of work that is backed out keeps ageing (note 5)."""
        handle = f"consumer.{APP}"
        self.execute(L.Get(conn="consumer", handle=handle, options=C.MQGMO_SYNCPOINT))
        if before:
            self.execute(L.AdvanceClock(tenths=before))
        self.execute(L.Backout(conn="consumer"))
        self.execute(L.AdvanceClock(tenths=after))
        self.execute(L.Get(conn="consumer", handle=handle, options=C.MQGMO_BROWSE_FIRST))

    @rule()
    def get_xmit(self):
        self.execute(L.Get(conn="consumer", handle=f"consumer.{XMIT}", options=C.MQGMO_NO_SYNCPOINT))

    @rule(expiry=st.sampled_from((3, 8)))
    def put_to_a_queue_its_expired_messages_fill(self, expiry):
        """MAXDEPTH set to what the queue holds once a message on it has expired (no get touches it):
        the expired message still counts, so the next put finds the queue full (EXP-11)."""
        md, n = self._md(0, expiry, C.MQRO_NONE)
        self.execute(L.Put(conn="producer", handle=f"producer.{APP}", body=f"m{n}", md=md))
        self.execute(L.AdvanceClock(tenths=expiry + 2))
        depth = dict(self.execute(L.InquireQueue(queue=APP, names=["CURDEPTH"])).attrs or ()).get("CURDEPTH")
        if not isinstance(depth, int) or depth < 1:
            return
        self.execute(L.AlterQueue(queue=APP, attrs={"MAXDEPTH": depth}))
        md, n = self._md(0, C.MQEI_UNLIMITED, C.MQRO_NONE)
        self.execute(L.Put(conn="producer", handle=f"producer.{APP}", body=f"m{n}", md=md))
        self.execute(L.AlterQueue(queue=APP, attrs={"MAXDEPTH": 5000}))

    @rule()
    def inspect(self):
        self.execute(L.InquireQueue(queue=APP, names=["CURDEPTH"]))
        self.execute(L.InquireQueue(queue=REPLY, names=["CURDEPTH"]))
        self.execute(L.InquireQueue(queue=XMIT, names=["CURDEPTH"]))

    @rule()
    def read_report(self):
        self.execute(L.Get(conn="reader", handle=f"reader.{REPLY}", options=C.MQGMO_NO_SYNCPOINT))

    @precondition(_on_zos)
    @rule()
    def refresh_expiry(self):
        self.execute(L.RefreshExpiry(queues="APP.*"))
