"""The reference model's state: plain values, copied (never shared) between branches."""

from __future__ import annotations

import copy

import attrs

from reference_model import language as L
from reference_model import mqconst as C


@attrs.define(eq=True, slots=True)
class ModelMessage:
    """A message on a queue as the model sees it."""

    seq: int                      # arrival stamp, unique within the queue manager
    body: str
    md: L.MessageDescriptor       # descriptor as resolved at put time
    order_priority: int           # the priority that places it (MaxPriority cap, or DEFPRTY under FIFO)
    put_time: int                 # virtual clock at put, in tenths of a second
    backout_count: int = 0
    put_by: str | None = None     # connection whose unit of work put it (uncommitted)
    got_by: str | None = None     # connection whose unit of work got it (pending)
    locked_by: str | None = None  # handle holding a browse lock
    #: Rules that explain why the message is where it is (for diagnosing failures).
    provenance: tuple[str, ...] = ()
    #: Rules that decided particular fields of it, as ((field, rules), ...) (a message a DLQ handler put).
    decided: tuple = ()
    #: The Expiry embedded in an MQXQH at the start of the data (MQFMT_XMIT_Q_HEADER), if any.
    xmit_expiry: int | None = None
    #: The MQTM of a trigger message.
    tm: L.TriggerMessage | None = None
    #: The MQDLH at the start of a dead-letter message.
    dlh: L.DeadLetterHeader | None = None

    @property
    def order_key(self) -> tuple[int, int]:
        return (-self.order_priority, self.seq)


@attrs.define(eq=True)
class ModelQueue:
    name: str
    attrs: dict
    messages: list[ModelMessage] = attrs.Factory(list)
    #: Rules by which messages most recently left the queue (newest first, a few).
    departures: tuple[str, ...] = ()
    #: Expired messages that must already have been removed in the background (a lower bound).
    background_removed: int = 0
    #: Clock when the last trigger message for this queue was written (None: never, or reset).
    last_trigger: int | None = None
    #: True after a restart reset the TriggerInterval timer.
    interval_reset: bool = False
    #: Rules behind the last decision not to trigger this queue (for diagnosing extra trigger messages).
    trigger_notes: tuple[str, ...] = ()

    def attr(self, name: str):
        return self.attrs[name]

    def clone(self) -> "ModelQueue":
        return ModelQueue(
            name=self.name, attrs=dict(self.attrs),
            messages=[
                ModelMessage(seq=m.seq, body=m.body, md=m.md, order_priority=m.order_priority,
                             put_time=m.put_time, backout_count=m.backout_count, put_by=m.put_by,
                             got_by=m.got_by, locked_by=m.locked_by, provenance=m.provenance,
                             decided=m.decided, xmit_expiry=m.xmit_expiry, tm=m.tm, dlh=m.dlh)
                for m in self.messages
            ],
            departures=self.departures,
            background_removed=self.background_removed,
            last_trigger=self.last_trigger,
            interval_reset=self.interval_reset,
            trigger_notes=self.trigger_notes,
        )


@attrs.define(eq=True)
class ModelHandle:
    name: str
    conn: str
    queue: str
    options: int
    input_mode: int = 0           # MQOO_INPUT_SHARED / _EXCLUSIVE resolved at open, or 0
    cursor: tuple[int, int] | None = None   # order key of the message under the browse cursor
    cursor_seq: int | None = None

    @property
    def can_input(self) -> bool:
        return bool(self.input_mode)

    @property
    def can_browse(self) -> bool:
        return bool(self.options & C.MQOO_BROWSE)

    @property
    def can_output(self) -> bool:
        return bool(self.options & C.MQOO_OUTPUT)


@attrs.frozen
class UowEntry:
    kind: str      # "put" or "get"
    queue: str
    seq: int


@attrs.define(eq=True)
class ModelConnection:
    name: str
    environment: str = "normal"
    uow: list[UowEntry] = attrs.Factory(list)
    #: seq of the message whose get in this unit of work is marked to skip backout.
    marked: int | None = None
    #: seq of a marked message that skipped a backout into this (new) unit of work.
    skipped: int | None = None
    #: Trigger messages waiting for this unit of work to end: (initiation queue, MQTM, trigger type).
    pending_triggers: list = attrs.Factory(list)


@attrs.define(eq=True)
class ModelState:
    platform: str = C.PLATFORM_DISTRIBUTED
    #: How far (tenths of a second) the system's idea of remaining expiry may be from the exact value.
    expiry_tolerance: int = 0
    clock: int = 0
    next_seq: int = 1
    queues: dict[str, ModelQueue] = attrs.Factory(dict)
    conns: dict[str, ModelConnection] = attrs.Factory(dict)
    handles: dict[str, ModelHandle] = attrs.Factory(dict)
    #: body -> rules that removed the message for good (for diagnosing failures).
    removed: dict[str, tuple[str, ...]] = attrs.Factory(dict)
    qmgr: dict = attrs.Factory(lambda: {"EXPRYINT": 0, "TRIGINT": C.DEFAULT_TRIGGER_INTERVAL, "DEADQ": ""})
    #: Process definitions by name (DefineProcess ops, never mutated).
    processes: dict = attrs.Factory(dict)
    #: What the local queue manager knows of its clusters (tables of plain field dicts).
    cluster: dict = attrs.Factory(lambda: {"qmgrs": {}, "instances": {}, "channels": {}})
    #: Step 12's workload history per cluster queue (immutable values).
    workload: dict = attrs.Factory(dict)
    #: DLQ handler instances by name (immutable values, replaced on change).
    dlq_handlers: dict = attrs.Factory(dict)

    def clone(self) -> "ModelState":
        """An independent copy (descriptors and log entries are never mutated, so they are shared)."""
        return ModelState(
            platform=self.platform,
            expiry_tolerance=self.expiry_tolerance,
            clock=self.clock,
            next_seq=self.next_seq,
            queues={n: q.clone() for n, q in self.queues.items()},
            conns={n: ModelConnection(name=c.name, environment=c.environment, uow=list(c.uow),
                                      marked=c.marked, skipped=c.skipped,
                                      pending_triggers=list(c.pending_triggers))
                   for n, c in self.conns.items()},
            handles={n: copy.copy(h) for n, h in self.handles.items()},
            removed=dict(self.removed),
            qmgr=dict(self.qmgr),
            processes=dict(self.processes),
            cluster=self.cluster,
            workload=self.workload,
            dlq_handlers=dict(self.dlq_handlers),
        )

    def discard(self, queue: str, m: ModelMessage, rules: tuple[str, ...]) -> None:
        """Remove ``m`` for good, remembering which rules removed it."""
        q = self.queues[queue]
        q.messages.remove(m)
        rules = tuple(dict.fromkeys(rules + m.provenance))  # how it got here explains its leaving too
        self.removed[m.body] = rules
        q.departures = tuple(dict.fromkeys(rules + q.departures))[:6]

    def find(self, queue: str, seq: int) -> ModelMessage | None:
        for m in self.queues[queue].messages:
            if m.seq == seq:
                return m
        return None
