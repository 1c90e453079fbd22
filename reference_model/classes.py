"""Input classes: the kinds of input each rule distinguishes.

A rule is only as well tested as the variety of cases that reached it.  TRIG-02
(priority at or above TriggerMsgPriority) checked a thousand times with messages
above the threshold says nothing about a message *at* it.  So a rule may declare
its input classes: the values, option combinations and states its text tells
apart.  Each step that exercises the rule is classified from the model's state
before the step and the operation; a run records the classes its cases reached,
and shows per rule those never reached (a rule with such a class is not fully
exercised, whatever its verdict).

Classifiers are pure functions of (state before the step, operation): cheap, run
only for the rules a step exercised.  They return the names of the classes the
step belongs to (a step may be in several, one per dimension), or nothing.
"""

from __future__ import annotations

from typing import Callable, Iterable

import attrs

from reference_model import language as L
from reference_model import dlq_table as T
from reference_model import cluster, core, expiry
from reference_model import mqconst as C
from reference_model.state import ModelHandle, ModelQueue, ModelState

Classifier = Callable[[ModelState, L.Op], Iterable[str]]


@attrs.frozen
class InputClasses:
    rule: str
    #: The classes, in the order a reader meets them.
    names: tuple[str, ...]
    classify: Classifier = attrs.field(eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"{self.rule}: a class named twice")


CLASSES: dict[str, InputClasses] = {}


def declare(rule: str, *names: str):
    def register(classify: Classifier) -> Classifier:
        if rule in CLASSES:
            raise ValueError(f"{rule}: input classes declared twice")
        CLASSES[rule] = InputClasses(rule, names, classify)
        return classify
    return register


#: What kind of earlier call each class that only such a call can lead to needs (``RULE:class`` -> the kind): a
#: run on a system that made none of the calls of that kind it asked for, and left out at least one, cannot have
#: reached the class, though the call classed there is one the system makes (a get that finds only messages
#: another handle locked, on a system without browse locks).
NEEDS: dict[str, str] = {
    "CORE-13:only messages locked by another handle": "a browse that locks",
    "CORE-23:queue open for exclusive input": "an open for exclusive input or as the queue defines",
}

#: Each kind of call :data:`NEEDS` names: whether an operation is one.
CALLS: dict[str, Callable[[L.Op], bool]] = {
    "a browse that locks": lambda op: isinstance(op, L.Get) and bool(op.options & C.MQGMO_LOCK),
    # (MQ opens a queue for exclusive input by MQOO_INPUT_EXCLUSIVE, or by MQOO_INPUT_AS_Q_DEF where DEFSOPT says so)
    "an open for exclusive input or as the queue defines":
        lambda op: isinstance(op, L.Open) and bool(op.options & (C.MQOO_INPUT_EXCLUSIVE | C.MQOO_INPUT_AS_Q_DEF)),
}


def calls_of(op: L.Op) -> frozenset[str]:
    """The kinds of call of :data:`CALLS` that ``op`` is."""
    return frozenset(kind for kind, is_one in CALLS.items() if is_one(op))


def names_of(rule: str) -> tuple[str, ...]:
    """The input classes ``rule`` declares (none: the rule names no distinctions of its input)."""
    entry = CLASSES.get(rule)
    return entry.names if entry else ()


def label(rule: str, name: str) -> str:
    return f"{rule}:{name}"


def classify(state: ModelState, op: L.Op, rules: Iterable[str]) -> tuple[str, ...]:
    """``RULE:class`` for each declared class of ``rules`` that this step of ``op`` from ``state`` is in."""
    out = []
    for rule in rules:
        entry = CLASSES.get(rule)
        if entry is None:
            continue
        try:
            found = entry.classify(state, op)
        except (KeyError, AttributeError, TypeError):  # an operation the classifier does not describe
            continue
        out.extend(label(rule, name) for name in found if name in entry.names)
    return tuple(out)


# --------------------------------------------------------------------------
# what a classifier looks at


def _handle(state: ModelState, op: L.Op) -> ModelHandle | None:
    name = getattr(op, "handle", None)
    return state.handles.get(name) if name else None


def _queue(state: ModelState, op: L.Op) -> ModelQueue | None:
    h = _handle(state, op)
    if h is not None:
        return state.queues.get(h.queue)
    name = getattr(op, "queue", None)
    return state.queues.get(name) if name else None


#: Classifiers look at no more than this many messages of a queue, first in delivery order, so that a
#: step costs the same on a deep queue as on a shallow one (classes are about the head of a queue).
SCAN = 32


def _head(q: ModelQueue) -> list:
    return q.ordered[:SCAN]


def _available(state: ModelState, op: L.Op, selected: bool = True) -> list:
    """Messages a get on ``op``'s handle could return (not got in a unit of work, not another's
    uncommitted put, not locked by another handle, and, unless ``selected`` is False, satisfying
    the get's selection criteria), among the first :data:`SCAN` in delivery order."""
    h, q = _handle(state, op), _queue(state, op)
    if h is None or q is None:
        return []
    criteria = core.selection(op) if selected else ("", "")
    return [m for m in _head(q) if m.got_by is None and m.put_by in (None, h.conn)
            and m.locked_by in (None, h.name) and core.satisfies(criteria, m)]


def _selecting(op: L.Op) -> bool:
    """A get whose match options apply (not one under the cursor, which ignores them)."""
    return core.selects(op) and not op.options & core.UNDER_CURSOR


def _priority(q: ModelQueue, md: L.MessageDescriptor) -> int:
    return q.attr("DEFPRTY") if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority


def _how_many(n: int) -> str:
    return "empty" if n == 0 else "one message" if n == 1 else "several messages"


def _is_get(op: L.Op) -> bool:
    return isinstance(op, L.Get)


def _browse(op: L.Get) -> bool:
    return bool(op.options & C.MQGMO_BROWSE_ANY)


# --------------------------------------------------------------------------
# core


def _top(state, op):
    """The available messages of a get's queue, and those of the highest priority among them."""
    msgs = _available(state, op) if _is_get(op) else []
    if not msgs:
        return [], []
    top = max(m.order_priority for m in msgs)
    return msgs, [m for m in msgs if m.order_priority == top]


@declare("CORE-04", "the higher priority put first", "the higher priority put after a lower one")
def _core04(state, op):
    msgs, top = _top(state, op)
    if top and len(top) < len(msgs):
        first = min(m.seq for m in top)
        yield "the higher priority put after a lower one" if any(m.seq < first for m in msgs if m not in top) \
            else "the higher priority put first"


#: Shapes of the messages a get chooses among, beyond their number and priorities: where a system that
#: orders by something else than arrival (the commit, a requeue) departs.
COMMITTED_LATER = "one put earlier, committed after one put later"
BACKED_OUT_AMONG = "a backed-out message among them"


def _arrival_shapes(msgs: list) -> Iterable[str]:
    """The shapes of ``msgs`` (two or more a get chooses among, in arrival order or not)."""
    if len(msgs) < 2:
        return
    latest = -1
    for m in sorted(msgs, key=lambda m: m.seq):
        if m.available_from < latest:
            yield COMMITTED_LATER
            break
        latest = max(latest, m.available_from)
    if any(m.backout_count for m in msgs):
        yield BACKED_OUT_AMONG


@declare("CORE-05", "two of the highest priority", "three or more of the highest priority",
         COMMITTED_LATER, BACKED_OUT_AMONG)
def _core05(state, op):
    _msgs, top = _top(state, op)
    if len(top) > 1:
        yield "two of the highest priority" if len(top) == 2 else "three or more of the highest priority"
        yield from _arrival_shapes(top)


@declare("CORE-06", "messages of one priority", "messages of several priorities", COMMITTED_LATER,
         BACKED_OUT_AMONG)
def _core06(state, op):
    if _is_get(op):
        msgs = _available(state, op)
        if msgs:
            yield "messages of several priorities" if len({m.md.priority for m in msgs}) > 1 \
                else "messages of one priority"
            yield from _arrival_shapes(msgs)


@declare("CORE-07", "DEFPRTY 0", "DEFPRTY between 0 and MaxPriority", "DEFPRTY MaxPriority")
def _core07(state, op):
    q = _queue(state, op)
    if q is not None and isinstance(op, (L.Put, L.Put1)) and op.md.priority == C.MQPRI_PRIORITY_AS_Q_DEF:
        p = q.attr("DEFPRTY")
        yield "DEFPRTY 0" if p == 0 else "DEFPRTY MaxPriority" if p >= C.MAX_PRIORITY \
            else "DEFPRTY between 0 and MaxPriority"


@declare("CORE-08", "MaxPriority + 1", "far above MaxPriority")
def _core08(state, op):
    if isinstance(op, (L.Put, L.Put1)) and op.md.priority > C.MAX_PRIORITY:
        yield "MaxPriority + 1" if op.md.priority == C.MAX_PRIORITY + 1 else "far above MaxPriority"


@declare("CORE-10", "as queue default, DEFPSIST(NO)", "as queue default, DEFPSIST(YES)", "not a persistence value")
def _core10(state, op):
    q = _queue(state, op)
    if q is None or not isinstance(op, (L.Put, L.Put1)):
        return
    p = op.md.persistence
    if p == C.MQPER_PERSISTENCE_AS_Q_DEF:
        yield "as queue default, DEFPSIST(YES)" if q.attr("DEFPSIST") == C.MQPER_PERSISTENT \
            else "as queue default, DEFPSIST(NO)"
    elif p not in (C.MQPER_PERSISTENT, C.MQPER_NOT_PERSISTENT):
        yield "not a persistence value"


@declare("CORE-13", "queue empty", "only another's uncommitted puts", "only its own uncommitted puts",
         "only messages got in a unit of work", "only messages locked by another handle", "no wait",
         "MQGMO_WAIT with a zero interval", "a wait interval")
def _core13(state, op):
    if not _is_get(op) or op.options & (C.MQGMO_UNLOCK | C.MQGMO_MSG_UNDER_CURSOR
                                        | C.MQGMO_BROWSE_MSG_UNDER_CURSOR):
        return
    h, q = _handle(state, op), _queue(state, op)
    if q is None or h is None:
        return
    if not op.options & C.MQGMO_WAIT:
        yield "no wait"
    else:
        yield "MQGMO_WAIT with a zero interval" if op.wait_interval == 0 else "a wait interval"
    available = _available(state, op)
    if any(m.put_by is None for m in available):
        return
    head = _head(q)
    if available:   # whether a connection may get its own uncommitted puts is not documented
        yield "only its own uncommitted puts"
    elif not head:
        yield "queue empty"
    elif any(m.put_by not in (None, h.conn) for m in head):
        yield "only another's uncommitted puts"
    elif any(m.got_by is not None for m in head):
        yield "only messages got in a unit of work"
    elif any(m.locked_by not in (None, h.name) for m in head):
        yield "only messages locked by another handle"


@declare("CORE-15", "one get backed out", "several gets backed out", "gets and puts backed out")
def _core15(state, op):
    conn = state.conns.get(getattr(op, "conn", None) or "")
    if conn is None or not isinstance(op, (L.Backout, L.Disconnect, L.CutConnection)):
        return
    gets = sum(e.kind == "get" for e in conn.uow)
    puts = sum(e.kind == "put" for e in conn.uow)
    if gets and puts:
        yield "gets and puts backed out"
    elif gets:
        yield "one get backed out" if gets == 1 else "several gets backed out"


@declare("CORE-30", "no unit of work", "a unit of work of puts alone", "a unit of work with gets")
def _core30(state, op):
    if isinstance(op, L.Disconnect) and not op.abnormal:
        yield from _ended_unit_of_work(state, op)


def _ended_unit_of_work(state, op):
    """What the unit of work an MQDISC (normal or abnormal) ends holds."""
    conn = state.conns.get(op.conn)
    if conn is None:
        return
    if any(e.kind == "get" for e in conn.uow):
        yield "a unit of work with gets"
    else:
        yield "a unit of work of puts alone" if conn.uow else "no unit of work"


@declare("CORE-31", "a unit of work of puts alone", "a unit of work with gets")
def _core31(state, op):
    # what an abnormal end (or a z/OS MQDISC that may back out) has to back out: with none, the rule says nothing
    if isinstance(op, L.Disconnect):
        yield from (c for c in _ended_unit_of_work(state, op) if c != "no unit of work")


@declare("CORE-18", "one message", "several messages")
def _core18(state, op):
    if _is_get(op) and op.options & C.MQGMO_BROWSE_FIRST:
        n = len(_available(state, op))
        if n:
            yield _how_many(n)


@declare("CORE-19", "cursor before the first message", "cursor on a message with more after it",
         "cursor on the last message", "cursor on a message since removed")
def _core19(state, op):
    h, q = _handle(state, op), _queue(state, op)
    if not _is_get(op) or not op.options & C.MQGMO_BROWSE_NEXT or h is None or q is None:
        return
    if h.cursor is None:
        yield "cursor before the first message"
        return
    if h.cursor_seq is not None and q.find(h.cursor_seq) is None:
        yield "cursor on a message since removed"
        return
    later = [m for m in _available(state, op) if m.order_key > h.cursor]
    yield "cursor on a message with more after it" if later else "cursor on the last message"


@declare("CORE-23", "queue not open for input", "queue open for shared input", "queue open for exclusive input",
         "as the queue defines, DEFSOPT(SHARED), on a queue open for shared input",
         "as the queue defines, DEFSOPT(EXCLUSIVE), on a queue open for shared input")
def _core23(state, op):
    if isinstance(op, L.Open) and op.options & C.MQOO_INPUT_ANY:
        modes = {h.input_mode for h in state.handles.values() if h.queue == op.queue and h.input_mode}
        if C.MQOO_INPUT_EXCLUSIVE in modes:
            yield "queue open for exclusive input"
        elif modes:
            yield "queue open for shared input"
            # MQOO_INPUT_AS_Q_DEF: the queue's DEFSOPT decides, and only here does it change the outcome
            q = state.queues.get(op.queue)
            if op.options & C.MQOO_INPUT_ANY == C.MQOO_INPUT_AS_Q_DEF and q is not None:
                exclusive = q.attr("DEFSOPT") == C.MQOO_INPUT_EXCLUSIVE
                yield f"as the queue defines, DEFSOPT({'EXCLUSIVE' if exclusive else 'SHARED'}), on a queue open for shared input"
        else:
            yield "queue not open for input"


@declare("CORE-25", "get", "browse")
@declare("EXP-06", "get", "browse")
def _get_or_browse(state, op):
    if _is_get(op):
        yield "browse" if _browse(op) else "get"


@declare("CORE-26", "MQPUT", "MQPUT1")
def _core26(state, op):
    # the put a PUT(DISABLED) queue refuses, by the call that makes it: MQPUT1 opens, puts and closes in one call
    q = _queue(state, op)
    if q is not None and isinstance(op, (L.Put, L.Put1)) and q.attr("PUT") == C.MQQA_PUT_INHIBITED:
        yield "MQPUT1" if isinstance(op, L.Put1) else "MQPUT"


@declare("CORE-27", "full of committed messages", "full counting one program's uncommitted puts",
         "full counting uncommitted puts of several programs")
def _core27(state, op):
    q = _queue(state, op)
    if q is not None and isinstance(op, (L.Put, L.Put1)) and q.depth >= q.attr("MAXDEPTH"):
        putters = {m.put_by for m in q.messages if m.put_by is not None}
        yield "full of committed messages" if not putters else "full counting one program's uncommitted puts" \
            if len(putters) == 1 else "full counting uncommitted puts of several programs"


@declare("CORE-36", "persistent message", "non-persistent message")
def _core36(state, op):
    if _is_get(op) and op.options & C.MQGMO_SYNCPOINT_IF_PERSISTENT:
        msgs = sorted(_available(state, op), key=lambda m: m.order_key)
        if msgs:
            yield "persistent message" if msgs[0].md.persistence == C.MQPER_PERSISTENT else "non-persistent message"


@declare("CORE-51", "by MsgId", "by CorrelId", "by MsgId and CorrelId", "MQMI_NONE or MQCI_NONE given")
def _core51(state, op):
    if not _selecting(op):
        return
    msg_id, correl_id = core.selection(op)
    if msg_id or correl_id:
        yield "by MsgId and CorrelId" if msg_id and correl_id else "by MsgId" if msg_id else "by CorrelId"
    if (op.match_options & C.MQMO_MATCH_MSG_ID and not op.msg_id) \
            or (op.match_options & C.MQMO_MATCH_CORREL_ID and not op.correl_id):
        yield "MQMI_NONE or MQCI_NONE given"


@declare("CORE-52", "the first message selected", "a message behind others selected", "several selected",
         "none selected")
def _core52(state, op):
    if not any(core.selection(op)):
        return
    every, chosen = _available(state, op, selected=False), _available(state, op)
    if not chosen:
        yield "none selected"
        return
    yield "the first message selected" if every[0] is chosen[0] else "a message behind others selected"
    if len(chosen) > 1:
        yield "several selected"


@declare("CORE-53", "browse, the message under the cursor selected", "browse, the message under the cursor not selected",
         "get, the message under the cursor selected", "get, the message under the cursor not selected")
def _core53(state, op):
    h, q = _handle(state, op), _queue(state, op)
    if not core.selects(op) or not op.options & core.UNDER_CURSOR or h is None or q is None \
            or h.cursor_seq is None:
        return
    under = q.find(h.cursor_seq)
    if under is None:
        return   # no message under the cursor: CORE-20 decides
    how = "browse" if op.options & C.MQGMO_BROWSE_MSG_UNDER_CURSOR else "get"
    yield f"{how}, the message under the cursor {'selected' if core.satisfies(core.criteria(op), under) else 'not selected'}"


@declare("CORE-38", "just below MQWI_UNLIMITED", "far below MQWI_UNLIMITED")
def _core38(state, op):
    if _is_get(op) and op.wait_interval < C.MQWI_UNLIMITED:
        yield "just below MQWI_UNLIMITED" if op.wait_interval == C.MQWI_UNLIMITED - 1 else "far below MQWI_UNLIMITED"


@declare("CORE-40", "handle not open", "connection not open")
def _core40(state, op):
    conn = getattr(op, "conn", None)
    if conn is None or isinstance(op, L.Connect):
        return
    if conn not in state.conns:
        yield "connection not open"
    elif getattr(op, "handle", None) is not None:
        h = state.handles.get(op.handle)
        if h is None or h.conn != conn:
            yield "handle not open"


@declare("CORE-41", "queue defined", "queue altered", "existing queue defined again")
def _core41(state, op):
    if isinstance(op, L.DefineQueue):
        yield "existing queue defined again" if op.queue in state.queues else "queue defined"
    elif isinstance(op, L.AlterQueue) and op.queue in state.queues:
        yield "queue altered"


# --------------------------------------------------------------------------
# triggering


def _trigger_put(state, op):
    q = _queue(state, op)
    if q is not None and isinstance(op, (L.Put, L.Put1)):
        return q
    return None


@declare("TRIG-02", "TriggerMsgPriority 0", "below TriggerMsgPriority", "at TriggerMsgPriority",
         "above TriggerMsgPriority")
def _trig02(state, op):
    q = _trigger_put(state, op)
    if q is None:
        return
    threshold = q.attr("TRIGMPRI")
    if threshold == 0:
        yield "TriggerMsgPriority 0"
        return
    p = q.attr("DEFPRTY") if q.attr("MSGDLVSQ") == C.MQMDS_FIFO else _priority(q, op.md)
    yield "below TriggerMsgPriority" if p < threshold else "at TriggerMsgPriority" if p == threshold \
        else "above TriggerMsgPriority"


@declare("TRIG-03", "FIRST", "EVERY", "DEPTH")
def _trig03(state, op):
    q = _trigger_put(state, op)
    if q is not None:
        kind = {C.MQTT_FIRST: "FIRST", C.MQTT_EVERY: "EVERY", C.MQTT_DEPTH: "DEPTH"}.get(q.attr("TRIGTYPE"))
        if kind:
            yield kind


@declare("TRIG-04", "no uncommitted puts on the queue", "uncommitted puts on the queue")
def _trig04(state, op):
    q = _trigger_put(state, op)
    if q is not None:
        yield "uncommitted puts on the queue" if q.uncommitted else "no uncommitted puts on the queue"


@declare("TRIG-06", "queue not open for input", "queue open for input")
def _trig06(state, op):
    q = _trigger_put(state, op)
    if q is not None:
        open_input = any(h.queue == q.name and h.input_mode for h in state.handles.values())
        yield "queue open for input" if open_input else "queue not open for input"


@declare("TRIG-16", "FIRST, no trigger message before", "FIRST, within TriggerInterval",
         "FIRST, TriggerInterval passed", "DEPTH")
def _trig16(state, op):
    q = _queue(state, op)
    if q is None or not isinstance(op, (L.Put, L.Put1)):
        return
    if q.attr("TRIGTYPE") == C.MQTT_DEPTH:
        yield "DEPTH"
    elif q.attr("TRIGTYPE") == C.MQTT_FIRST:
        if q.last_trigger is None:
            yield "FIRST, no trigger message before"
        elif (state.clock - q.last_trigger) * 100 >= state.qmgr["TRIGINT"]:
            yield "FIRST, TriggerInterval passed"
        else:
            yield "FIRST, within TriggerInterval"


@declare("TRIG-24", "DefPriority below TriggerMsgPriority", "DefPriority at or above TriggerMsgPriority")
def _trig24(state, op):
    q = _trigger_put(state, op)
    if q is not None and q.attr("MSGDLVSQ") == C.MQMDS_FIFO:
        yield "DefPriority below TriggerMsgPriority" if q.attr("DEFPRTY") < q.attr("TRIGMPRI") \
            else "DefPriority at or above TriggerMsgPriority"


@declare("TRIG-28", "DEPTH queue set off by its trigger message", "DEPTH queue not triggered",
         "FIRST or EVERY queue")
def _trig28(state, op):
    q = _queue(state, op)
    if q is not None and isinstance(op, L.InquireQueue) and "TRIGGER" in op.names:
        if q.attr("TRIGTYPE") != C.MQTT_DEPTH:
            yield "FIRST or EVERY queue"
        elif q.last_trigger is not None and q.attr("TRIGGER") == C.MQTC_OFF:
            yield "DEPTH queue set off by its trigger message"
        else:
            yield "DEPTH queue not triggered"


# --------------------------------------------------------------------------
# expiry


@declare("EXP-08", "MQRO_EXPIRATION", "MQRO_EXPIRATION_WITH_DATA", "MQRO_EXPIRATION_WITH_FULL_DATA")
def _exp08(state, op):
    msgs = sorted(_available(state, op), key=lambda m: m.order_key) if _is_get(op) else []
    for m in msgs:
        kind = m.md.report & C.MQRO_EXPIRATION_WITH_FULL_DATA
        if kind == C.MQRO_EXPIRATION_WITH_FULL_DATA:
            yield "MQRO_EXPIRATION_WITH_FULL_DATA"
        elif kind == C.MQRO_EXPIRATION_WITH_DATA:
            yield "MQRO_EXPIRATION_WITH_DATA"
        elif kind == C.MQRO_EXPIRATION:
            yield "MQRO_EXPIRATION"


def _expired(state: ModelState, m) -> bool:
    """Past its expiry beyond the system's tolerance (what a get must discard, EXP-04)."""
    return expiry.status(state, m) == expiry.EXPIRED


def _walk(state: ModelState, op: L.Op):
    """What a get walks past before the message it returns: (expired messages ahead, first unexpired or None)."""
    h = _handle(state, op)
    msgs = _available(state, op)   # in delivery order
    if h is not None and op.options & C.MQGMO_BROWSE_NEXT and h.cursor is not None:
        msgs = [m for m in msgs if m.order_key > h.cursor]
    ahead = []
    for m in msgs:
        if not _expired(state, m):
            return ahead, m
        ahead.append(m)
    return ahead, None


@declare("EXP-04", "by a get", "by a browse", "one expired message ahead", "several expired messages ahead",
         "no unexpired message after them", "put in a unit of work that committed after it expired")
def _exp04(state, op):
    if not _is_get(op):
        return
    ahead, found = _walk(state, op)
    if not ahead:
        return
    yield "by a browse" if _browse(op) else "by a get"
    yield "one expired message ahead" if len(ahead) == 1 else "several expired messages ahead"
    if found is None:
        yield "no unexpired message after them"
    if any(m.committed is not None and m.md.expiry != C.MQEI_UNLIMITED
           and m.committed[1] - m.put_time >= m.md.expiry for m in ahead):
        yield "put in a unit of work that committed after it expired"


@declare("EXP-05", "expired of higher priority ahead", "expired of the same priority ahead")
def _exp05(state, op):
    q = _queue(state, op)
    if not _is_get(op) or q is None or q.attr("MSGDLVSQ") != C.MQMDS_PRIORITY:
        return
    ahead, found = _walk(state, op)
    if found is not None:
        for m in ahead:
            yield "expired of higher priority ahead" if m.order_priority > found.order_priority \
                else "expired of the same priority ahead"


@declare("EXP-11", "CURDEPTH", "MAXDEPTH")
def _exp11(state, op):
    q = _queue(state, op)
    if q is None or not q.expiring or not any(m.got_by is None and _expired(state, m) for m in _head(q)):
        return
    if isinstance(op, L.InquireQueue) and "CURDEPTH" in op.names:
        yield "CURDEPTH"
    if isinstance(op, (L.Put, L.Put1)) and q.depth >= q.attr("MAXDEPTH"):
        yield "MAXDEPTH"


@declare("EXP-13", "a get under syncpoint", "a get outside syncpoint")
def _exp13(state, op):
    if _is_get(op) and _walk(state, op)[0]:
        yield "a get under syncpoint" if op.options & C.MQGMO_SYNCPOINT and not _browse(op) \
            else "a get outside syncpoint"


@declare("EXP-10", "zero", "negative")
def _exp10(state, op):
    if isinstance(op, (L.Put, L.Put1)) and op.md.expiry != C.MQEI_UNLIMITED and op.md.expiry <= 0:
        yield "zero" if op.md.expiry == 0 else "negative"


@declare("EXP-19", "embedded Expiry equal", "embedded Expiry different", "embedded Expiry zero or negative")
def _exp19(state, op):
    if isinstance(op, (L.Put, L.Put1)) and op.xmit_header is not None and op.md.format == C.MQFMT_XMIT_Q_HEADER:
        inner = op.xmit_header.expiry
        if isinstance(inner, int) and (inner == 0 or inner < C.MQEI_UNLIMITED):
            yield "embedded Expiry zero or negative"
        else:
            yield "embedded Expiry equal" if inner == op.md.expiry else "embedded Expiry different"


# --------------------------------------------------------------------------
# units of work and skip backout


def _marked_queue(state: ModelState, conn) -> str | None:
    return next((e.queue for e in conn.uow if e.kind == "get" and e.seq == conn.marked), None)


@declare("SYNC-03", "the marked get alone", "with other gets", "with puts")
def _sync03(state, op):
    conn = state.conns.get(getattr(op, "conn", "") or "")
    if isinstance(op, L.Backout) and conn is not None and conn.marked is not None:
        others = [e for e in conn.uow if not (e.kind == "get" and e.seq == conn.marked)]
        if any(e.kind == "put" for e in others):
            yield "with puts"
        if any(e.kind == "get" for e in others):
            yield "with other gets"
        if not others:
            yield "the marked get alone"


@declare("SYNC-18", "the application's backout, the marked message skipped",
         "the new unit of work backed out, the marked message reinstated")
def _sync18(state, op):
    conn = state.conns.get(getattr(op, "conn", "") or "")
    if isinstance(op, L.Backout) and conn is not None:
        if conn.marked is not None:
            yield "the application's backout, the marked message skipped"
        elif conn.skipped is not None:
            yield "the new unit of work backed out, the marked message reinstated"


@declare("SYNC-06", "second mark on the same queue", "second mark on another queue")
def _sync06(state, op):
    conn = state.conns.get(getattr(op, "conn", "") or "")
    h = _handle(state, op)
    if _is_get(op) and op.options & C.MQGMO_MARK_SKIP_BACKOUT and conn is not None and h is not None:
        where = _marked_queue(state, conn)
        if where is not None:
            yield "second mark on the same queue" if where == h.queue else "second mark on another queue"


@declare("SYNC-10", "with MQGMO_NO_SYNCPOINT", "with neither syncpoint option", "on a browse", "with MQGMO_SYNCPOINT")
def _sync10(state, op):
    if _is_get(op) and op.options & C.MQGMO_MARK_SKIP_BACKOUT:
        o = op.options
        if o & C.MQGMO_BROWSE_ANY:
            yield "on a browse"
        elif o & C.MQGMO_SYNCPOINT:
            yield "with MQGMO_SYNCPOINT"
        elif o & C.MQGMO_NO_SYNCPOINT:
            yield "with MQGMO_NO_SYNCPOINT"
        else:
            yield "with neither syncpoint option"


# --------------------------------------------------------------------------
# cluster workload management


def _hosts(state: ModelState, queue: str) -> list[dict]:
    return [i for i in state.cluster["instances"].values() if i["name"] == queue]


def _clwl03(state, op):
    if not isinstance(op, L.ClusterPut):
        return
    local = {q["name"]: q for q in state.cluster["qmgrs"].values() if q["local"]}
    mine = [i for i in _hosts(state, op.queue) if i["qmgr"] in local]
    if not mine:
        return
    if not op.put_locally:
        yield "a message from the cluster"
    elif mine[0]["clwluseq"] == "QMGR":
        yield f"queue CLWLUSEQ(QMGR), queue manager {local[mine[0]['qmgr']]['clwluseq']}"
    else:
        yield f"queue CLWLUSEQ({mine[0]['clwluseq']})"


#: The steps of the workload management algorithm that keep some of the destinations they are given.  (Not step
#: 9: it admits every channel state steps 6 to 8 leave, so ignoring it keeps what it keeps.)
CLWL_STEPS = ("CLWL-01", "CLWL-02", "CLWL-03", "CLWL-04", "CLWL-04a", "CLWL-04b", "CLWL-05", "CLWL-06", "CLWL-07",
              "CLWL-08", "CLWL-10", "CLWL-11", "CLWL-11a", "CLWL-11b", "CLWL-11c")
#: A put where ignoring a step changes where it may go (only such a put tells a queue manager that ignores the
#: step apart from MQ), and one where it does not.
DECISIVE, IDLE = "ignoring it changes the destination", "ignoring it changes nothing"


def _choice(state, op) -> tuple:
    """MQ's choice for the cluster put ``op`` and the destinations allowed with each step that eliminated one
    ignored (the model's own, :func:`reference_model.cluster.worked_out`); (None, {}) for a bad history."""
    try:
        _, _, choice, skips = cluster.worked_out(state, op)
    except (StopIteration, KeyError):
        return None, {}
    return choice, skips


def _declare_decisive(rule: str, *more: str):
    """Declare ``rule``'s classes: whether ignoring its step changes the destination (a dimension of its own),
    with the classes ``more`` its own classifier (the function decorated, if any) yields."""
    def register(own=None):
        def classify(state, op):
            if not isinstance(op, L.ClusterPut):
                return
            choice, skips = _choice(state, op)
            if choice is not None and any(step == rule for step, _ in choice.trace):
                yield DECISIVE if skips.get(rule, choice.allowed) != choice.allowed else IDLE
            if own is not None:
                yield from own(state, op)
        declare(rule, *more, DECISIVE, IDLE)(classify)
        return own
    return register


def _clwl11a(state, op):
    """A put naming a queue manager that reaches step 11a with more than one route: whether their channels' and
    aliases' CLWLPRTY tell them apart (the step then eliminates some)."""
    if not op.qmgr:
        return
    choice, _ = _choice(state, op)
    steps = [step for step, _ in choice.trace] if choice is not None else []
    if "CLWL-11a" not in steps:
        return
    at = steps.index("CLWL-11a")
    before, after = choice.trace[at - 1][1], choice.trace[at][1]
    if len(before) > 1:
        yield "routes of different CLWLPRTY" if len(after) < len(before) else "routes of one CLWLPRTY"


for _rule in CLWL_STEPS:
    if _rule == "CLWL-03":
        _declare_decisive(_rule, "queue CLWLUSEQ(LOCAL)", "queue CLWLUSEQ(QMGR), queue manager LOCAL",
                          "a message from the cluster")(_clwl03)
    elif _rule == "CLWL-11a":
        _declare_decisive(_rule, "routes of one CLWLPRTY", "routes of different CLWLPRTY")(_clwl11a)
    else:
        _declare_decisive(_rule)()


@declare("CLWL-12", "equal weights", "different weights")
def _clwl12(state, op):
    if not isinstance(op, L.ClusterPut):
        return
    hosts = {i["qmgr"] for i in _hosts(state, op.queue) if i["put_enabled"]}
    weights = {c["clwlwght"] for c in state.cluster["channels"].values() if c["qmgr"] in hosts}
    if weights:
        yield "different weights" if len(weights) > 1 else "equal weights"


# --------------------------------------------------------------------------
# the DLQ handler's rules table


def _table_text(state: ModelState, op: L.Op) -> str | None:
    """The rules table a handler reads at this step (started or restarted), or None."""
    if isinstance(op, L.StartDlqHandler):
        return op.table
    if isinstance(op, L.RestartDlqHandler):
        return state.dlq_handlers[op.handler].table_file
    return None


@declare("DLQ-09", "a valid table", *T.ERROR_KINDS)
def _dlq09(state, op):
    text = _table_text(state, op)
    if text is not None:
        _table, errors = T.parse(text)
        yield from {e.kind for e in errors} if errors else ("a valid table",)


def _table(state: ModelState, op: L.Op) -> T.RulesTable | None:
    """The valid rules table a handler reads at this step, or None."""
    text = _table_text(state, op)
    return T.parse(text)[0] if text is not None else None


@declare("DLQ-41", *T.PATTERN_KEYWORDS)
def _dlq41(state, op):
    """The pattern keywords (other than '*') of the tables of the handlers this step may run."""
    name = getattr(op, "handler", None)
    handlers = [state.dlq_handlers[name]] if name in state.dlq_handlers else \
        [h for h in state.dlq_handlers.values() if h.running]
    for h in handlers:
        for r in h.table.rules if h.table is not None else ():
            for keyword, pattern in r.patterns:
                if pattern is not None:
                    yield keyword


@declare("DLQ-23", *T.FWDQ_VARIABLES, *T.FWDQM_VARIABLES)
def _dlq23(state, op):
    table = _table(state, op)
    for r in table.rules if table is not None else ():
        yield r.fwdq
        yield r.fwdqm


@declare("DLQ-33", "'+' continuation", "'-' continuation")
def _dlq33(state, op):
    table = _table(state, op)
    for cont in table.continuations if table is not None else ():
        yield f"'{cont}' continuation"
