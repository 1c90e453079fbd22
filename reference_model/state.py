"""The reference model's state: plain values, copied between branches.

Messages are immutable and shared between a state and its copies: a copy copies the
list of a queue's messages (pointers, not messages), and a change to a message
replaces it in that one list (:meth:`ModelQueue.update`).  A branch costs time in
what it changes, not in how many messages the queues hold.
"""

from __future__ import annotations

import bisect

import attrs
from attrs import Factory
from attrs import field as attrs_field

from reference_model import language as L
from reference_model import mqconst as C


@attrs.frozen(eq=True, slots=True, cache_hash=True)
class ModelMessage:
    """A message on a queue as the model sees it (immutable: states share it)."""

    seq: int                      # arrival stamp, unique within the queue manager
    body: str
    md: L.MessageDescriptor       # descriptor as resolved at put time
    order_priority: int           # the priority that places it (MaxPriority cap, or DEFPRTY under FIFO)
    put_time: int                 # virtual clock at put, in tenths of a second
    backout_count: int = 0
    #: How much lower than ``backout_count`` a get may report it: what a z/OS restart may have lost
    #: of a count not hardened (HARDENBO); later backouts add to both alike.
    backout_uncertain: int = 0
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
    #: A segment of a message the queue manager split (CORE-50): its SegmentStatus and Offset.
    segment: str = C.MQSS_NOT_A_SEGMENT
    offset: int = 0
    #: The rules that changed or kept its BackoutCount since a get or browse last returned it (None: none
    #: has yet): a count a call showed right is not what a later wrong one breaks (diagnosis only).
    count_since: tuple[str, ...] | None = None
    #: A message put under syncpoint, once its unit of work committed: (stamp, clock) of the commit, the stamp
    #: ordering it among arrivals (``seq``): when it became available, against when it was put (input
    #: classes only: delivery order goes by ``seq``).
    committed: tuple[int, int] | None = None

    @property
    def available_from(self) -> int:
        """The arrival stamp from which the message was available to every program: its put's, or its commit's."""
        return self.committed[0] if self.committed is not None else self.seq

    @property
    def order_key(self) -> tuple[int, int]:
        return (-self.order_priority, self.seq)


#: The rule that a browse lock lasts until the message is unlocked, got, or its handle closed: what a message whose
#: lock was released owes its being available to other handles again.
LOCK_RELEASED = "CORE-21"

#: Rules a queue keeps of how its messages most recently left it.
DEPARTURES_KEPT = 6


@attrs.define(eq=True)
class ModelQueue:
    name: str
    attrs: dict
    messages: list[ModelMessage] = Factory(list)   # (not attrs.Factory: the field ``attrs`` hides the module here)
    #: Rules by which messages most recently left the queue (newest first, the latest DEPARTURES_KEPT).
    departures: tuple[str, ...] = ()
    #: Expired messages that must already have been removed in the background (a lower bound).
    background_removed: int = 0
    #: Clock when the last trigger message for this queue was written (None: never, or reset).
    last_trigger: int | None = None
    #: The same for the other queue managers of a queue-sharing group, of a shared queue: ((qmgr, clock), ...).
    peer_triggers: tuple = ()
    #: True after a restart reset the TriggerInterval timer.
    interval_reset: bool = False
    #: Why events wrote no trigger message: per event, newest first, the rules that blocked it.
    trigger_notes: tuple[tuple[str, ...], ...] = ()
    #: Kept up to date by append/update/remove: messages got under syncpoint (not in CURDEPTH),
    #: and messages with an expiry (the only ones expiry can remove).
    held: int = 0
    expiring: int = 0
    #: ... messages put in a unit of work not yet committed, and messages under a browse lock.
    uncommitted: int = 0
    locked: int = 0
    #: The same messages in delivery order (``order_key``), kept beside ``messages``.
    ordered: list[ModelMessage] = attrs_field(factory=list, eq=False)

    def attr(self, name: str):
        return self.attrs[name]

    def departed(self, rules: tuple[str, ...]) -> None:
        """Messages left the queue by ``rules``: they come first among its departures (a queue of the state's own)."""
        self.departures = tuple(dict.fromkeys(rules + self.departures))[:DEPARTURES_KEPT]

    @property
    def shared(self) -> bool:
        """A queue of a queue-sharing group (QSGDISP(SHARED), z/OS)."""
        return self.attrs.get("QSGDISP") == C.MQQSGD_SHARED

    @property
    def owner(self) -> str:
        """The group member whose private queue this is ("": the queue manager under test's, or shared)."""
        return self.name.split(":", 1)[0] if ":" in self.name else ""

    def clone(self) -> "ModelQueue":
        return ModelQueue(
            name=self.name, attrs=dict(self.attrs),
            messages=list(self.messages),   # the messages themselves are immutable and shared
            departures=self.departures,
            background_removed=self.background_removed,
            last_trigger=self.last_trigger,
            peer_triggers=self.peer_triggers,
            interval_reset=self.interval_reset,
            trigger_notes=self.trigger_notes,
            held=self.held,
            expiring=self.expiring,
            uncommitted=self.uncommitted,
            locked=self.locked,
            ordered=list(self.ordered),
        )

    @property
    def depth(self) -> int:
        """CURDEPTH as MQ counts it (CORE-28): uncommitted puts count; messages got under syncpoint do not."""
        return len(self.messages) - self.held

    def _count(self, m: ModelMessage, sign: int) -> None:
        self.held += sign * (m.got_by is not None)
        self.expiring += sign * (m.md.expiry != C.MQEI_UNLIMITED)
        self.uncommitted += sign * (m.put_by is not None)
        self.locked += sign * (m.locked_by is not None)

    def position(self, key: tuple[int, int]) -> int:
        """Index in :attr:`ordered` of the first message at or after delivery position ``key``."""
        return bisect.bisect_left(self.ordered, key, key=_order_key)

    # Messages are kept in arrival order (seq ascending): every put appends the next seq.

    def index(self, seq: int) -> int | None:
        i = bisect.bisect_left(self.messages, seq, key=_seq)
        return i if i < len(self.messages) and self.messages[i].seq == seq else None

    def find(self, seq: int) -> ModelMessage | None:
        i = self.index(seq)
        return None if i is None else self.messages[i]

    def update(self, m: ModelMessage, **changes) -> ModelMessage:
        """Replace ``m`` with a copy carrying ``changes``; returns the copy."""
        if "seq" in changes or "order_priority" in changes:
            raise ValueError("a message keeps its place")
        new = shared(attrs.evolve(m, **changes))
        i = self.index(m.seq)
        assert i is not None, f"message {m.seq} is not on {self.name}"
        self.messages[i] = new
        self.ordered[self.position(m.order_key)] = new
        self._count(m, -1)
        self._count(new, +1)
        return new

    def remove(self, m: ModelMessage) -> None:
        i = self.index(m.seq)
        assert i is not None, f"message {m.seq} is not on {self.name}"
        del self.messages[i]
        del self.ordered[self.position(m.order_key)]
        self._count(m, -1)

    def append(self, m: ModelMessage) -> None:
        if self.messages and self.messages[-1].seq >= m.seq:
            raise ValueError("messages must arrive in seq order")
        m = shared(m)
        self.messages.append(m)
        self.ordered.insert(self.position(m.order_key), m)
        self._count(m, +1)

    def unlock(self, handle: str) -> None:
        """Release the browse lock ``handle`` holds on any message of this queue.  The message is available to
        other handles again because the lock was released (CORE-21), no longer because of its put (the browse that
        locked it showed the put's work done): missing later, the release is what was broken."""
        if self.locked:
            for m in [m for m in self.messages if m.locked_by == handle]:
                kept = tuple(r for r in m.provenance if r not in (LOCK_RELEASED, "CORE-01", "CORE-02"))
                self.update(m, locked_by=None, provenance=(LOCK_RELEASED,) + kept)


#: Every message a queue holds, by value: branches that put or change a message alike in different
#: candidate states hold one object, so comparing those states finds it identical at once instead
#: of comparing it field by field.  Values only: dropping it changes nothing but speed.
_SHARED: dict[ModelMessage, ModelMessage] = {}
SHARED_LIMIT = 200_000


def shared(m: ModelMessage) -> ModelMessage:
    """The one object of ``m``'s value that queues hold."""
    found = _SHARED.get(m)
    if found is not None:
        return found
    if len(_SHARED) >= SHARED_LIMIT:
        _SHARED.clear()
    _SHARED[m] = m
    return m


def _seq(m: ModelMessage) -> int:
    return m.seq


def _order_key(m: ModelMessage) -> tuple[int, int]:
    return (-m.order_priority, m.seq)


@attrs.frozen(eq=True, slots=True)
class ModelHandle:
    """An open handle (immutable: states share it; a change replaces it)."""

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
    #: Rules that made the call part of the unit of work besides its own options: CORE-36 for a persistent message
    #: got with MQGMO_SYNCPOINT_IF_PERSISTENT (a backout that reinstates it owes that to the rule too).
    why: tuple[str, ...] = ()


@attrs.define(eq=True)
class ModelConnection:
    name: str
    environment: str = "normal"
    uow: list[UowEntry] = attrs.Factory(list)
    #: seq of the message whose get in this unit of work is marked to skip backout.
    marked: int | None = None
    #: seq of a marked message that skipped a backout into this (new) unit of work.
    skipped: int | None = None
    #: The queue of a get marked outside syncpoint since the connection's last unit of work ended ("": none;
    #: SYNC-10: the mark is not in effect there); a system that kept it refuses the next mark, and one that made
    #: the get in a unit of work after all gives the message back when that unit of work is backed out.
    loose_mark: str = ""
    #: The loose mark has skipped an application's backout (MQBACK) into the unit of work after it, as a system
    #: that kept the mark would have it: the next end of a unit of work ends it.
    loose_skipped: bool = False
    #: Trigger messages waiting for this unit of work to end: (initiation queue, MQTM, trigger type).
    pending_triggers: list = attrs.Factory(list)
    #: The queue manager of a queue-sharing group the connection is to ("": the one under test).
    qmgr: str = ""
    #: Queues that gets of this unit of work discarded expired messages from, and those their expiration reports
    #: went to: the discards and reports are never part of it (EXP-13), so a backout that brought the messages
    #: back (and discarded them again, with a second report) would show there.
    discarded: tuple[str, ...] = ()


@attrs.define(eq=False)
class ModelState:
    platform: str = C.PLATFORM_DISTRIBUTED
    #: How far (tenths of a second) the system's clock may be from the model's: its idea of remaining
    #: expiry, and of the intervals it waits out (trigger intervals, a DLQ handler's RETRYINT and WAIT).
    expiry_tolerance: int = 0
    clock: int = 0
    next_seq: int = 1
    queues: dict[str, ModelQueue] = attrs.Factory(dict)
    conns: dict[str, ModelConnection] = attrs.Factory(dict)
    handles: dict[str, ModelHandle] = attrs.Factory(dict)
    #: body -> rules that removed the message for good (for diagnosing failures).  This map, ``qmgr``
    #: and ``processes`` are replaced on change, never changed in place: a clone shares them.
    removed: dict[str, tuple[str, ...]] = attrs.Factory(dict)
    #: body -> of those, the rules of the removal itself, without how the message had come to be there (what
    #: a message that comes back breaks; diagnosis only, not compared: ``removed`` holds them too).
    left_by: dict[str, tuple[str, ...]] = attrs.field(factory=dict, eq=False)
    qmgr: dict = attrs.Factory(lambda: {"EXPRYINT": 0, "TRIGINT": C.DEFAULT_TRIGGER_INTERVAL, "DEADQ": ""})
    #: Process definitions by name (DefineProcess ops, never mutated).
    processes: dict = attrs.Factory(dict)
    #: Remote queue definitions by name (DefineRemoteQueue ops, never mutated).
    remotes: dict = attrs.Factory(dict)
    #: What the local queue manager knows of its clusters (tables of plain field dicts).
    cluster: dict = attrs.Factory(lambda: {"qmgrs": {}, "instances": {}, "channels": {}, "aliases": {}})
    #: Step 12's workload history per cluster queue (immutable values).
    workload: dict = attrs.Factory(dict)
    #: DLQ handler instances by name (immutable values, replaced on change).
    dlq_handlers: dict = attrs.Factory(dict)
    #: Connections the network cut: the program's calls on them fail until it ends (CORE-47).
    broken: frozenset = frozenset()
    #: Connections whose next call the network cuts while it is in flight (CORE-48).
    armed: frozenset = frozenset()
    #: The other queue managers of the queue-sharing group the one under test is in (z/OS).
    group: tuple = ()
    #: Their queue-manager attributes as altered (EXPRYINT): {qmgr: {name: value}}, replaced on change.
    peers: dict = attrs.Factory(dict)
    #: MsgId -> body: the identifiers the system generated for messages put without one, as a checker saw them
    #: returned (the model leaves them open; MQ makes each unique, CORE-11).  Replaced on change.
    generated: dict = attrs.Factory(dict)
    #: Connections this state has its own copy of (bookkeeping, not state): a clone shares its
    #: connections with the state it copies until :meth:`conn` gives it its own to change.
    _own: set = attrs.field(factory=set, init=False, eq=False, repr=False)
    #: The same for queues: a clone shares each queue with the state it copies until :meth:`queue`
    #: gives it its own to change.
    _ownq: set = attrs.field(factory=set, init=False, eq=False, repr=False)

    def where(self, qmgr: str, queue: str) -> str:
        """The key in :attr:`queues` of queue ``queue`` as queue manager ``qmgr`` sees it: a shared queue
        and the private queues of the queue manager under test by their names, another group member's
        private queues as ``QMGR:NAME`` (':' cannot be part of an MQ name)."""
        if not qmgr:
            return queue
        q = self.queues.get(queue)
        if q is not None and q.shared:
            return queue
        return f"{qmgr}:{queue}"

    def qmgr_of(self, conn: str) -> str:
        c = self.conns.get(conn)
        return c.qmgr if c is not None else ""

    def __eq__(self, other) -> bool:
        """Every field compared, those that most often tell states with the same :meth:`digest` apart
        and cost least first (the queue manager's attributes, the handles, the DLQ handlers' memory),
        the queues and their messages after them."""
        if other is self:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.clock == other.clock and self.next_seq == other.next_seq and self.qmgr == other.qmgr
                and self.broken == other.broken and self.armed == other.armed and self.handles == other.handles
                and self.dlq_handlers == other.dlq_handlers and self.conns == other.conns
                and self.platform == other.platform and self.expiry_tolerance == other.expiry_tolerance
                and self.queues == other.queues and self.removed == other.removed
                and self.processes == other.processes and self.remotes == other.remotes
                and self.cluster == other.cluster and self.workload == other.workload
                and self.group == other.group and self.peers == other.peers and self.generated == other.generated)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def digest(self) -> tuple:
        """A cheap summary of what equality compares: equal states have equal digests, so only
        states with the same digest need comparing in full (deduplicating branches and candidates)."""
        return (self.clock, self.next_seq, self.broken, self.armed, len(self.conns), len(self.handles),
                len(self.removed), frozenset((name, q.held, q.uncommitted, q.locked, q.expiring, q.background_removed,
                                              len(q.messages), (q.messages[0].seq, q.messages[-1].seq) if q.messages else ())
                                             for name, q in self.queues.items()),
                # the DLQ handlers' memory (reference_model.dlq.HandlerState): which message each is at
                frozenset((name, h.running, h.attempts, h.cursor, h.busy_at, h.last_rescan)
                          for name, h in self.dlq_handlers.items()),
                # what the queue manager knows of its clusters, and step 12's round-robin numbers
                tuple(len(table) for table in self.cluster.values()),
                frozenset((name, w.last_number, frozenset(w.numbers.items())) for name, w in self.workload.items()))

    def clone(self) -> "ModelState":
        """An independent copy (descriptors and log entries are never mutated, so they are shared;
        connections and queues are shared until one of the two states is to change them)."""
        # what this state owned it now shares with the copy: from here on it copies before changing too
        if self._own:
            self._own = set()
        if self._ownq:
            self._ownq = set()
        # built field by field: the generated __init__ costs twice as much (a state is cloned at
        # nearly every step); every field is set (tests/test_model_state.py checks)
        new = object.__new__(ModelState)
        new.platform = self.platform
        new.expiry_tolerance = self.expiry_tolerance
        new.clock = self.clock
        new.next_seq = self.next_seq
        new.queues = dict(self.queues)   # shared until changed: see queue()
        new.conns = dict(self.conns)     # shared until changed: see conn()
        new.handles = dict(self.handles)
        new.removed = self.removed       # these three are replaced on change, never changed in place
        new.left_by = self.left_by
        new.qmgr = self.qmgr
        new.processes = self.processes
        new.remotes = self.remotes
        new.cluster = self.cluster
        new.workload = self.workload
        new.dlq_handlers = dict(self.dlq_handlers)
        new.broken = self.broken
        new.armed = self.armed
        new.group = self.group
        new.peers = self.peers
        new.generated = self.generated
        new._own = set()
        new._ownq = set()
        return new

    def passed(self, since: int, interval: float) -> list[bool]:
        """Whether ``interval`` tenths of a second have passed since the clock read ``since``: on a
        system whose clock is real (a tolerance above zero), near the boundary either way."""
        gone = self.clock - since
        if gone >= interval + self.expiry_tolerance:
            return [True]
        if gone < interval - self.expiry_tolerance:
            return [False]
        return [False, True]

    def conn(self, name: str) -> ModelConnection:
        """Connection ``name``, to change: this state's own copy (connections are shared between a
        state and its clones until one of them is to change; every change goes through here)."""
        c = self.conns[name]
        if name not in self._own:
            # (every field carried over: its lists copied, the rest immutable)
            c = self.conns[name] = attrs.evolve(c, uow=list(c.uow), pending_triggers=list(c.pending_triggers))
            self._own.add(name)
        return c

    def queue(self, name: str) -> ModelQueue:
        """Queue ``name``, to change: this state's own copy (as :meth:`conn` for connections; every
        change to a queue, its messages or its attributes goes through here)."""
        q = self.queues[name]
        if name not in self._ownq:
            q = self.queues[name] = q.clone()
            self._ownq.add(name)
        return q

    def add_queue(self, q: ModelQueue) -> None:
        """Define ``q`` (a new queue, this state's own)."""
        self.queues[q.name] = q
        self._ownq.add(q.name)

    def with_handler(self, name: str, handler) -> "ModelState":
        """This state with DLQ handler ``name``'s memory replaced: a new state sharing everything else
        with this one (for a state no one changes any more: the model changes only a state it cloned)."""
        new = object.__new__(ModelState)
        for field in _STATE_FIELDS:
            setattr(new, field, getattr(self, field))
        new.left_by = self.left_by
        # its own dicts: conn() and queue() copy into them, not into this one's; and what this one
        # owned is shared now
        new.conns, new._own, new.queues, new._ownq = dict(self.conns), set(), dict(self.queues), set()
        self._own, self._ownq = set(), set()
        new.dlq_handlers = {**self.dlq_handlers, name: handler}
        return new

    def discard(self, queue: str, m: ModelMessage, rules: tuple[str, ...]) -> None:
        """Remove ``m`` for good, remembering which rules removed it."""
        q = self.queue(queue)
        q.remove(m)
        self.left_by = {**self.left_by, m.body: tuple(dict.fromkeys(rules))}
        rules = tuple(dict.fromkeys(rules + m.provenance))  # how it got here explains its leaving too
        self.removed = {**self.removed, m.body: rules}
        q.departed(rules)

    def take_off(self, queue: str, m: ModelMessage, rules: tuple[str, ...]) -> None:
        """Take ``m`` off ``queue`` by ``rules`` to put it elsewhere (a DLQ handler's forward or retry): it leaves
        the queue as a discarded message does, but is not removed for good (it lives on where it goes, under the
        same body)."""
        q = self.queue(queue)
        q.remove(m)
        q.departed(tuple(dict.fromkeys(rules + m.provenance)))

    def find(self, queue: str, seq: int) -> ModelMessage | None:
        return self.queues[queue].find(seq)


_STATE_FIELDS = tuple(f.name for f in attrs.fields(ModelState) if f.eq)
