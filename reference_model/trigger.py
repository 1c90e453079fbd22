"""Semantics of the ``trigger`` area (“Conditions for a trigger event”): when the queue manager writes a trigger message.

The core handlers call the hooks here after a put, a close, an alter, an open
and at the end of a unit of work.  Each hook takes a state (already a private
clone) and returns the allowed alternatives as ``(state, rules)`` pairs; where
the topic leaves latitude (get-inhibited queues off z/OS, the interval after a
restart) there are several.  Queues are non-shared: queue-sharing groups are not
modelled yet (TRIG-05/07/08).  A message the queue manager segments at put is one
trigger event, judged once all its segments are on the queue; afterwards each
segment counts as a message of its own (TRIG-27).
"""

from __future__ import annotations

from reference_model import expiry
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.model import Branch, HistoryError, handles
from reference_model.state import ModelMessage, ModelQueue, ModelState

Alternatives = list[tuple[ModelState, tuple[str, ...]]]


def _eligible(s: ModelState, q: ModelQueue) -> int:
    return sum(1 for m in q.messages if m.got_by is None and m.order_priority >= q.attr("TRIGMPRI"))


def _open_input(s: ModelState, queue: str) -> int:
    return sum(1 for h in s.handles.values() if h.queue == queue and h.can_input)


def _trigger_message(s: ModelState, q: ModelQueue) -> L.TriggerMessage | None:
    """Condition 6 (TRIG-10) and the MQTM's fields (TRIG-29), or None when not met."""
    pname = q.attr("PROCESS").strip()
    if pname:
        proc = s.processes.get(pname)
        if proc is None:
            return None
        return L.TriggerMessage(q_name=q.name, process_name=pname, trigger_data=q.attr("TRIGDATA"),
                                appl_type=proc.appl_type, appl_id=proc.appl_id, env_data=proc.env_data,
                                user_data=proc.user_data)
    if q.attr("USAGE") == C.MQUS_TRANSMISSION:
        return L.TriggerMessage(q_name=q.name, trigger_data=q.attr("TRIGDATA"))
    return None


def _initiation_queue(s: ModelState, q: ModelQueue) -> ModelQueue | None:
    """Condition 7 (TRIG-11)."""
    iq = s.queues.get(q.attr("INITQ").strip())
    if iq is None or iq.attr("GET") == C.MQQA_GET_INHIBITED or iq.attr("PUT") == C.MQQA_PUT_INHIBITED:
        return None
    if iq.attr("USAGE") != C.MQUS_NORMAL:
        return None
    return iq


def _conditions(s: ModelState, q: ModelQueue, skip: tuple[int, ...] = ()) -> list[bool]:
    """Conditions 4-10 (less ``skip``): the possible answers to 'are they met?'."""
    ttype = q.attr("TRIGTYPE")
    if 9 not in skip and q.attr("TRIGGER") != C.MQTC_ON:
        return [False]
    if ttype == C.MQTT_NONE:
        return [False]
    if 4 not in skip and ttype in (C.MQTT_FIRST, C.MQTT_DEPTH) and _open_input(s, q.name):
        return [False]
    if _trigger_message(s, q) is None:
        return [False]
    iq = _initiation_queue(s, q)
    if iq is None:
        return [False]
    if 8 not in skip and not _open_input(s, iq.name):
        return [False]
    if 5 not in skip and q.attr("GET") == C.MQQA_GET_INHIBITED:
        # TRIG-09: stated for z/OS; elsewhere undocumented, so both.
        return [False] if s.platform == C.PLATFORM_ZOS else [False, True]
    return [True]


def _enough(s: ModelState, q: ModelQueue) -> bool:
    need = q.attr("TRIGDPTH") if q.attr("TRIGTYPE") == C.MQTT_DEPTH else 1
    return _eligible(s, q) >= need


def _write(s: ModelState, q: ModelQueue, conn: str | None = None, rules: tuple[str, ...] = ()) -> None:
    """Write (or, in a unit of work, hold) the trigger message for ``q``."""
    if conn is not None:
        _note(q, ("TRIG-15",))
    tm = _trigger_message(s, q)
    iq = _initiation_queue(s, q)
    q.last_trigger = s.clock
    q.interval_reset = False
    if q.attr("TRIGTYPE") == C.MQTT_DEPTH:
        q.attrs["TRIGGER"] = C.MQTC_OFF  # TRIG-28
    if conn is not None:
        s.conns[conn].pending_triggers.append((iq.name, tm, q.attr("TRIGTYPE"), rules))
    else:
        deliver(s, iq.name, tm, rules)


def deliver(s: ModelState, initq: str, tm: L.TriggerMessage, rules: tuple[str, ...] = ()) -> None:
    iq = s.queues.get(initq)
    if iq is None:
        return
    md = L.MessageDescriptor(priority=iq.attr("DEFPRTY"), persistence=C.MQPER_NOT_PERSISTENT,
                             expiry=C.MQEI_UNLIMITED, format=C.MQFMT_TRIGGER)
    iq.append(ModelMessage(seq=s.next_seq, body="", md=md, order_priority=iq.attr("DEFPRTY"),
                                    put_time=s.clock, tm=tm,
                                    provenance=tuple(dict.fromkeys(rules[:3] + ("TRIG-29", "TRIG-30")))))
    s.next_seq += 1


def _note(q: ModelQueue, rules: tuple[str, ...]) -> None:
    """Remember why the queue was not triggered (newest first, bounded)."""
    q.trigger_notes = tuple(dict.fromkeys(rules + q.trigger_notes))[:16]


def _alternatives(s: ModelState, outcomes: list[bool], rules: tuple[str, ...], conn: str | None,
                  q_name: str) -> Alternatives:
    out: Alternatives = []
    for fire in outcomes:
        t = s.clone() if len(outcomes) > 1 else s
        if fire:
            _write(t, t.queues[q_name], conn, rules)
            if "TRIG-26" in rules:
                _note(t.queues[q_name], ("TRIG-26",))  # one trigger message for the event, even for EVERY
            if "TRIG-27" in rules:
                _note(t.queues[q_name], ("TRIG-27",))  # one trigger message for all the segments of a put
        else:
            _note(t.queues[q_name], rules)
        out.append((t, rules + (("TRIG-09",) if len(outcomes) > 1 else ())))
    return out


BASE = ("TRIG-06", "TRIG-10", "TRIG-11", "TRIG-12", "TRIG-13", "TRIG-14", "TRIG-29", "TRIG-30")


def after_put(s: ModelState, queue: str, m: ModelMessage, conn: str, sync: bool, added: int = 1) -> Alternatives:
    """Conditions 1-11 and 14 after a successful put of ``m``: ``added`` messages when the queue manager
    segmented it (``m`` the first segment), which make one trigger event (TRIG-27)."""
    q = s.queues[queue]
    if q.attr("TRIGGER") != C.MQTC_ON or q.attr("TRIGTYPE") == C.MQTT_NONE:
        return [(s, ())]
    rules = ("TRIG-01", "TRIG-02", "TRIG-03", "TRIG-04") + BASE
    if added > 1:
        rules += ("TRIG-27",)
    if q.attr("MSGDLVSQ") == C.MQMDS_FIFO:
        rules += ("TRIG-24",)
    if m.order_priority < q.attr("TRIGMPRI"):
        if "TRIG-24" in rules and m.md.priority >= q.attr("TRIGMPRI"):
            # its own priority would do: the queue's DefPriority, which FIFO compares, decides
            _note(q, ("TRIG-24", "TRIG-02", "TRIG-25"))
        else:
            _note(q, ("TRIG-02", "TRIG-25") + (("TRIG-24",) if "TRIG-24" in rules else ()))
        return [(s, rules + ("TRIG-25",))]
    ways = _eligible_counts(s, q, added)
    if len(ways) == 1:
        (count, _gone), = ways
        return _after_put_counted(s, queue, count, rules, conn, sync, added)
    out: Alternatives = []
    for count, gone in ways:
        t = s.clone()
        t.queues[queue].background_removed = gone
        out += _after_put_counted(t, queue, count, rules + ("EXP-26",), conn, sync, added)
    return out


def _eligible_counts(s: ModelState, q: ModelQueue, added: int = 1) -> list[tuple[int, int]]:
    """The messages that count for triggering, each way the branch leaves open, as (count, removed).

    Expired messages removed in the background (EXP-26) no longer count.  ``background_removed``
    says how many have gone so far; more may have gone by now, and where that does not say whether
    they were of a priority that counts, each count is possible.  Only counts that could decide
    the trigger differently are kept apart, each with the fewest removals that give it."""
    count = _eligible(s, q)
    if not q.expiring or not expiry.background_removal(s):
        return [(count, q.background_removed)]
    removable = [m for m in q.messages if expiry.removable(s, m) and not expiry.reports(s, m)]
    if not removable:
        return [(count, q.background_removed)]
    eligible = sum(1 for m in removable if m.order_priority >= q.attr("TRIGMPRI"))
    ttype, depth = q.attr("TRIGTYPE"), q.attr("TRIGDPTH")
    ways: dict = {}
    for gone in range(min(q.background_removed, len(removable)), len(removable) + 1):
        low, high = max(0, gone - (len(removable) - eligible)), min(gone, eligible)
        for k in range(low, high + 1):
            c = count - k
            decides = (c == added, c - added < depth <= c, c - added >= depth) if ttype != C.MQTT_EVERY else ()
            ways.setdefault(decides, (c, gone))
    return sorted(ways.values(), key=lambda w: w[1])


def _after_put_counted(s: ModelState, queue: str, count: int, rules: tuple[str, ...], conn: str,
                       sync: bool, added: int = 1) -> Alternatives:
    q = s.queues[queue]
    ttype, depth = q.attr("TRIGTYPE"), q.attr("TRIGDPTH")
    before = count - added   # the segments of one put are one event (TRIG-27)
    # a segmented put: how its segments count leads what its trigger message (or its absence) depends on
    lead = ("TRIG-27",) if added > 1 else ()
    first = {C.MQTT_FIRST: before == 0, C.MQTT_EVERY: True, C.MQTT_DEPTH: before < depth <= count}[ttype]
    if first:
        return _alternatives(s, _conditions(s, q), tuple(dict.fromkeys(
            lead + ("TRIG-03",) + rules + (("TRIG-15",) if sync else ()))), conn if sync else None, queue)
    # condition 11: FIRST not previously empty, DEPTH already at TriggerDepth or more
    if ttype == C.MQTT_FIRST or (ttype == C.MQTT_DEPTH and before >= depth):
        rules = tuple(dict.fromkeys(lead + ("TRIG-16", "TRIG-03") + rules))
        interval = [True]
        if ttype == C.MQTT_FIRST:
            interval = _interval_elapsed(s, q)
        outcomes = sorted({c and i for c in _conditions(s, q) for i in interval})
        return _alternatives(s, outcomes, rules + (("TRIG-17",) if q.interval_reset else ()),
                             conn if sync else None, queue)
    _note(q, tuple(dict.fromkeys(lead + ("TRIG-03",) + rules)))
    return [(s, rules)]


def _interval_elapsed(s: ModelState, q: ModelQueue) -> list[bool]:
    if q.last_trigger is None and not q.interval_reset:
        return [True]
    if q.interval_reset:
        return [False, True]  # TRIG-17: what 'reset' means is not said
    return [(s.clock - q.last_trigger) * 100 >= s.qmgr["TRIGINT"]]


def end_of_unit_of_work(s: ModelState, conn: str, commit: bool) -> tuple[str, ...]:
    """TRIG-15: held trigger messages become available at commit, and for FIRST/DEPTH at backout."""
    c = s.conns[conn]
    for initq, tm, ttype, why in c.pending_triggers:
        if commit or ttype in (C.MQTT_FIRST, C.MQTT_DEPTH):
            deliver(s, initq, tm, ("TRIG-15",) + why)   # held for the unit of work, caused by the put
    rules = ("TRIG-15",) if c.pending_triggers else ()
    c.pending_triggers = []
    return rules


def after_close(s: ModelState, queue: str, had_input: bool) -> Alternatives:
    """Condition 12: the only server closed the queue with enough messages left."""
    q = s.queues.get(queue)
    if q is None or not had_input or _open_input(s, queue) or q.attr("TRIGTYPE") not in (C.MQTT_FIRST, C.MQTT_DEPTH):
        return [(s, ())]
    if q.attr("TRIGGER") != C.MQTC_ON:
        return [(s, ())]
    rules = ("TRIG-18", "TRIG-19", "TRIG-26") + BASE
    if not _enough(s, q):
        _note(q, rules)
        return [(s, rules)]
    return _alternatives(s, _conditions(s, q, skip=(4, 5)), rules, None, queue)


def after_alter(s: ModelState, queue: str, before: dict) -> Alternatives:
    """Condition 13 and its first two cases, after ALTER / MQSET of ``queue``."""
    q = s.queues[queue]
    alts: Alternatives = [(s, ())]
    now = q.attrs
    on_now = now["TRIGGER"] == C.MQTC_ON
    turned_on = on_now and before["TRIGGER"] != C.MQTC_ON
    changed = on_now and before["TRIGGER"] == C.MQTC_ON and (
        now["TRIGTYPE"] != before["TRIGTYPE"] or now["TRIGMPRI"] != before["TRIGMPRI"]
        or (now["TRIGTYPE"] == C.MQTT_DEPTH and now["TRIGDPTH"] != before["TRIGDPTH"]))
    if turned_on or changed:
        alts = _each(alts, queue, ("TRIG-20", "TRIG-26"), skip=(8,))
    if before["GET"] == C.MQQA_GET_INHIBITED and now["GET"] == C.MQQA_GET_ALLOWED:
        alts = _each(alts, queue, ("TRIG-22", "TRIG-26"), skip=(5,))
    if before["PUT"] == C.MQQA_PUT_INHIBITED and now["PUT"] == C.MQQA_PUT_ALLOWED:
        for app in _served_by(s, queue):
            alts = _each(alts, app, ("TRIG-21", "TRIG-26"), skip=())
    return alts


def after_open(s: ModelState, queue: str, others_had_input: bool) -> Alternatives:
    """Condition 13, case 3: a trigger monitor opens an initiation queue for input."""
    alts: Alternatives = [(s, ())]
    if others_had_input:
        return alts
    for app in _served_by(s, queue):
        alts = _each(alts, app, ("TRIG-23", "TRIG-26"), skip=(8,))
    return alts


def _served_by(s: ModelState, initq: str) -> list[str]:
    return sorted(n for n, q in s.queues.items() if q.attr("INITQ").strip() == initq and n != initq)


def _each(alts: Alternatives, queue: str, rules: tuple[str, ...], skip: tuple[int, ...]) -> Alternatives:
    out: Alternatives = []
    for state, done in alts:
        q = state.queues[queue]
        if not _enough(state, q):
            out.append((state, done + rules))
            continue
        for t, r in _alternatives(state, _conditions(state, q, skip), rules + BASE, None, queue):
            out.append((t, done + r))
    return out


def on_restart(s: ModelState) -> None:
    """TRIG-17: a restart resets the TriggerInterval timer (and trigger messages, non-persistent, are lost)."""
    for q in s.queues.values():
        if q.last_trigger is not None:
            q.interval_reset = True
            q.last_trigger = None


def missing_trigger_rules(s: ModelState, initq: str) -> tuple[str, ...]:
    """Why no (further) trigger message is due on ``initq``: for diagnosing extra ones."""
    rules: list[str] = []
    for name in _served_by(s, initq):
        rules += s.queues[name].trigger_notes
    if any(p[0] == initq for c in s.conns.values() for p in c.pending_triggers):
        rules.append("TRIG-15")
    return tuple(dict.fromkeys(rules))


def trigger_fields(m: ModelMessage) -> dict:
    """Fields of an expected trigger message MQ does not pin down (any value allowed)."""
    return {"msg_type": None} if m.tm is not None else {}


@handles(L.DefineProcess)
def define_process(state: ModelState, op: L.DefineProcess) -> list[Branch]:
    if op.process in state.processes:
        raise HistoryError(f"process {op.process!r} is already defined")
    s = state.clone()
    s.processes[op.process] = op
    return [Branch(observation=L.OK, state=s, rules=("TRIG-10",))]
