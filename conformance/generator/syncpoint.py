"""The ``syncpoint`` machine: units of work mixing marked and unmarked gets (“Skipping backout”).

Several connections (one in the RRS / Db2 stored-procedure environment) get
work messages under syncpoint, marking some to skip backout, put exception
reports to a second queue (the figure's step 8), commit, back out, end
abnormally and restart; other connections observe the queues after each step.
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from conformance.generator.base import ConformanceMachine
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.syncpoint import RRS_STORED_PROCEDURE

WORK, EXCEPTIONS = "WORK.Q", "EXCEPTION.Q"
WORKERS = ("w1", "w2")
ENVIRONMENTS = {"w1": "normal", "w2": "normal", "rrs": RRS_STORED_PROCEDURE, "watcher": "normal"}
OPEN = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
GET_CHOICES = (
    C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT,
    C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT,
    C.MQGMO_SYNCPOINT,
    C.MQGMO_NO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT,
    C.MQGMO_MARK_SKIP_BACKOUT,                          # neither syncpoint option
    C.MQGMO_BROWSE_FIRST | C.MQGMO_MARK_SKIP_BACKOUT,
)
workers = st.sampled_from(WORKERS + ("rrs",))


class SyncpointMachine(ConformanceMachine):
    area = "syncpoint"

    @initialize(messages=st.integers(min_value=1, max_value=4), hardened=st.booleans())
    def set_up(self, messages, hardened):
        self.bodies = itertools.count(1)
        self.generation = itertools.count(1)
        self.handles: dict[tuple[str, str], str] = {}
        for q in (WORK, EXCEPTIONS):
            attrs_ = {"DEFPSIST": C.MQPER_PERSISTENT}
            if q == WORK and hardened:   # BackoutCount kept exactly across a z/OS restart (CORE-45)
                attrs_["HARDENBO"] = C.MQQA_BACKOUT_HARDENED
            self.execute(L.DefineQueue(queue=q, attrs=attrs_))
        for conn in ENVIRONMENTS:
            self._connect(conn)
        self.feed(messages)

    def _connect(self, conn: str) -> None:
        self.execute(L.Connect(conn=conn, environment=ENVIRONMENTS[conn]))
        n = next(self.generation)
        for q in (WORK, EXCEPTIONS):
            name = f"{conn}.{q}.{n}"
            self.execute(L.Open(conn=conn, handle=name, queue=q, options=OPEN))
            self.handles[(conn, q)] = name

    def _get(self, conn: str, queue: str, options: int) -> L.Observation:
        return self.execute(L.Get(conn=conn, handle=self.handles[(conn, queue)], options=options))

    @rule(messages=st.integers(min_value=1, max_value=3))
    def feed(self, messages):
        for _ in range(messages):
            self.execute(L.Put(conn="watcher", handle=self.handles[("watcher", WORK)],
                               body=f"work{next(self.bodies)}", options=C.MQPMO_NO_SYNCPOINT))

    @rule(conn=workers, options=st.sampled_from(GET_CHOICES), queue=st.sampled_from((WORK, WORK, EXCEPTIONS)))
    def get_work(self, conn, options, queue):
        self._get(conn, queue, options)

    @rule(conn=workers, commit=st.booleans())
    def mark_on_two_queues(self, conn, commit):
        """A marked get from the work queue, then another from the exception queue in the same unit of work."""
        self.execute(L.Put(conn="watcher", handle=self.handles[("watcher", EXCEPTIONS)],
                           body=f"problem{next(self.bodies)}", options=C.MQPMO_NO_SYNCPOINT))
        self._get(conn, WORK, C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT)
        self._get(conn, EXCEPTIONS, C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT)
        self.end_unit_of_work(conn, commit)

    @rule(conn=workers)
    def report_problem(self, conn):
        self.execute(L.Put(conn=conn, handle=self.handles[(conn, EXCEPTIONS)],
                           body=f"problem{next(self.bodies)}", options=C.MQPMO_SYNCPOINT))

    @rule(conn=workers, commit=st.booleans())
    def end_unit_of_work(self, conn, commit):
        self.execute(L.Commit(conn=conn) if commit else L.Backout(conn=conn))

    @rule(conn=workers, commit=st.booleans())
    def end_unit_of_work_again(self, conn, commit):
        self.end_unit_of_work(conn, commit)

    @rule(conn=workers, commit_new=st.booleans(), other_gets=st.integers(min_value=0, max_value=2),
          processed=st.sampled_from((False, False, True)))
    def poison_message_flow(self, conn, commit_new, other_gets, processed):
        """The figure's sequence: marked get, other work, backout, exception report, end of the new UOW;
        or, when the work succeeds, the first unit of work committed (step 4)."""
        self._get(conn, WORK, C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT)
        for _ in range(other_gets):
            self._get(conn, WORK, C.MQGMO_SYNCPOINT)
        if processed:
            self.execute(L.Commit(conn=conn))
            return

        self.execute(L.Backout(conn=conn))
        self.report_problem(conn)
        self.execute(L.Commit(conn=conn) if commit_new else L.Backout(conn=conn))

    @rule(conn=workers, event=st.sampled_from(("abend", "abend", "abend", "restart")))
    def failure(self, conn, event):
        if event == "restart" and self.can_run(L.Restart()):
            self.execute(L.Restart())
            for c in ENVIRONMENTS:
                self._connect(c)
        else:
            self.execute(L.Disconnect(conn=conn, abnormal=True))
            self._connect(conn)

    @invariant()
    def depths_agree(self):
        """After every step: both queues' depths (committed, uncommitted and skipped work)."""
        if getattr(self, "handles", None):
            for q in (WORK, EXCEPTIONS):
                self.execute(L.InquireQueue(queue=q, names=["CURDEPTH"]))

    @rule()
    def watch(self):
        """Another application looks at both queues (browse and depth)."""
        for q in (WORK, EXCEPTIONS):
            self.execute(L.InquireQueue(queue=q, names=["CURDEPTH"]))
        mode = C.MQGMO_BROWSE_FIRST
        for _ in range(6):
            if self._get("watcher", WORK, mode | C.MQGMO_NO_SYNCPOINT).message is None:
                break
            mode = C.MQGMO_BROWSE_NEXT

    @rule()
    def drain_exceptions(self):
        self._get("watcher", EXCEPTIONS, C.MQGMO_NO_SYNCPOINT)
