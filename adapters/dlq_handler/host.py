"""Hosting DLQ handlers for an adapter: the four handler operations, and each message's fate.

An adapter with the ``dlq`` capability hands the handler operations
(``StartDlqHandler``, ``ChangeDlqTable``, ``RestartDlqHandler``,
``RunDlqHandler``) to a :class:`DlqHost`.  The host runs a handler instance per
name: the kit's own (:class:`~adapters.dlq_handler.handler.DlqHandler`) or an
external program speaking the handler protocol
(:mod:`adapters.dlq_handler.external`), a site's own handler for instance.

The host does not take a handler's word for what it did: it browses the queue
before and after a run and watches the handler's puts and commits, and reports
each message's fate from that (``kept``, ``discarded`` or ``put:QUEUE``).  An
adapter whose queue manager can walk a queue as such a browse would without the
calls around it (connect, open, a get per message, close, disconnect) gives the
host that walk instead (``read``): the simulated queue manager does.
"""

from __future__ import annotations

from typing import Callable

from adapters.base import carry_out, handler_for
from adapters.dlq_handler.handler import DlqHandler
from reference_model import language as L
from reference_model import mqconst as C

Execute = Callable[[L.Op], L.Observation]


class _Watch:
    """Wraps a handler's ``execute``: remembers which messages its committed puts carried where."""

    def __init__(self, execute: Execute) -> None:
        self.inner = execute
        self.pending: dict[str, dict[str, str]] = {}
        self.committed: dict[str, str] = {}

    def __call__(self, op: L.Op) -> L.Observation:
        obs = self.inner(op)
        if isinstance(op, L.Put1) and obs.cc != C.MQCC_FAILED:
            if op.options & C.MQPMO_SYNCPOINT:
                self.pending.setdefault(op.conn, {})[op.md.msg_id] = op.queue
            else:
                self.committed[op.md.msg_id] = op.queue
        elif isinstance(op, L.Commit):
            self.committed.update(self.pending.pop(op.conn, {}))
        elif isinstance(op, (L.Backout, L.Disconnect)):
            self.pending.pop(op.conn, None)
        return obs


class DlqHost:
    """The handler instances of one test case on one queue manager.

    ``execute`` runs an op on the queue manager; ``clock`` and ``dead_q`` read its
    virtual clock and DEADQ; ``make_handler`` builds a handler instance (the kit's,
    with the adapter's faults, by default); ``read``, where given, finds what the
    host's browse of a queue would (MsgId: BackoutCount), with the same effects on
    the queue manager, in place of the browse's calls.
    """

    def __init__(self, execute: Execute, clock: Callable[[], int], dead_q: Callable[[], str],
                 faults: frozenset[str] = frozenset(), make_handler=None,
                 read: Callable[[str], dict[str, int]] | None = None) -> None:
        self.execute = execute
        self.read = read or self._browse
        self.clock = clock
        self.dead_q = dead_q
        self.faults = faults
        self.make_handler = make_handler or (lambda name, text, execute, dead_q: DlqHandler(
            name, text, execute, dead_q, faults))
        self.files: dict[str, str] = {}
        self.handlers: dict[str, object] = {}
        self.watches: dict[str, _Watch] = {}

    def handles(self, op: L.Op) -> bool:
        return handler_for(type(self), type(op)) is not None

    def execute_op(self, op: L.Op) -> L.Observation:
        """Carry out one of the DLQ handler's operations (its method, adapters.base.handler_for)."""
        return carry_out(self, op)

    def _started(self, op: L.Op) -> str:
        """The table of the handler ``op`` names, which must have been started."""
        if op.handler not in self.files:
            raise KeyError(f"no DLQ handler {op.handler!r} was started")
        return self.files[op.handler]

    def _op_StartDlqHandler(self, op: L.StartDlqHandler) -> L.Observation:
        self.files[op.handler] = op.table
        return self._start(op.handler, op.table)

    def _op_ChangeDlqTable(self, op: L.ChangeDlqTable) -> None:
        self._started(op)
        self.files[op.handler] = op.table
        if "dlq-table-change-applied" in self.faults:
            from adapters.dlq_handler import rules_table
            table = rules_table.read(op.table)
            handler = self.handlers[op.handler]
            if table is not None and getattr(handler, "running", False):
                handler.table = table

    def _op_RestartDlqHandler(self, op: L.RestartDlqHandler) -> L.Observation:
        text = self._started(op)
        old = self.handlers.pop(op.handler)
        old.stop()
        obs = self._start(op.handler, text)
        if "dlq-restart-keeps-tries" in self.faults:
            new = self.handlers[op.handler]
            new.tries, new.ignored = old.tries, old.ignored
        return obs

    def _op_RunDlqHandler(self, op: L.RunDlqHandler) -> L.Observation:
        self._started(op)
        return self._run(op.handler)

    def _start(self, name: str, text: str) -> L.Observation:
        watch = _Watch(self.execute)
        handler = self.make_handler(name, text, watch, self.dead_q())
        self.handlers[name] = handler
        self.watches[name] = watch
        return handler.start(self.clock())

    def _run(self, name: str) -> L.Observation:
        handler, watch = self.handlers[name], self.watches[name]
        queue = getattr(handler, "queue", "")
        before = self.read(queue) if queue else {}
        watch.committed.clear()
        status = handler.run(self.clock())
        after = self.read(queue) if queue else {}
        fates: dict[str, str] = {}
        for mid in before:
            if mid in after:
                fates[mid] = "backed-out" if after[mid] > before[mid] else "kept"
            elif mid in watch.committed:
                fates[mid] = "put:" + watch.committed[mid]
            else:
                fates[mid] = "discarded"
        return L.Observation(attrs={**fates, "HANDLER": status})

    def _browse(self, queue: str) -> dict[str, int]:
        """MsgId and BackoutCount of each message available on ``queue``, by the queue manager's own browse."""
        conn, handle = "dlq.host", "dlq.host.browse"
        self.execute(L.Connect(conn=conn))
        ids: dict[str, int] = {}
        if self.execute(L.Open(conn=conn, handle=handle, queue=queue, options=C.MQOO_BROWSE)).cc != C.MQCC_FAILED:
            option = C.MQGMO_BROWSE_FIRST
            while True:
                obs = self.execute(L.Get(conn=conn, handle=handle, options=option | C.MQGMO_NO_SYNCPOINT))
                if obs.message is None:
                    break
                option = C.MQGMO_BROWSE_NEXT
                if obs.message.msg_id:
                    ids[obs.message.msg_id] = obs.message.backout_count
            self.execute(L.Close(conn=conn, handle=handle))
        self.execute(L.Disconnect(conn=conn))
        return ids

    def close(self) -> None:
        for handler in self.handlers.values():
            handler.stop()
        self.handlers.clear()
