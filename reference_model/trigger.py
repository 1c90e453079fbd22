"""Semantics of the ``trigger`` area (“Conditions for a trigger event”): when the queue manager writes a trigger message.

The core handlers call the hooks here after a put, a close, an alter, an open
and at the end of a unit of work.  Each hook takes a state (already a private
clone) and returns the allowed alternatives as ``(state, rules)`` pairs; where
the topic leaves latitude (get-inhibited queues off z/OS, the interval after a
restart) there are several.  A shared queue of a queue-sharing group (z/OS) is
judged by each queue manager of the group for its own initiation queue, with the
group's rules for counting and for open handles (TRIG-05/07/08).  A message the queue manager segments at put is one
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


def _qmgrs(s: ModelState, q: ModelQueue) -> tuple[str, ...]:
    """The queue managers that judge trigger conditions for ``q``: every member of the group for a
    shared queue (each writes to its own initiation queue), the owner for a private one."""
    return ("",) + tuple(s.group) if q.shared else (q.owner,)


def _overridden(s: ModelState, q: ModelQueue, qm: str) -> bool:
    """TRIG-07: another queue manager of the group has the shared queue open for shared input."""
    return q.shared and any(h.queue == q.name and h.input_mode == C.MQOO_INPUT_SHARED
                             and s.qmgr_of(h.conn) != qm for h in s.handles.values())


def _exclusive_anywhere(s: ModelState, q: ModelQueue) -> bool:
    """TRIG-08: a shared queue open for exclusive input on any queue manager is triggered by none."""
    return q.shared and any(h.queue == q.name and h.input_mode == C.MQOO_INPUT_EXCLUSIVE
                             for h in s.handles.values())


def _ttype(s: ModelState, q: ModelQueue, qm: str = "") -> int:
    return C.MQTT_FIRST if _overridden(s, q, qm) and q.attr("TRIGTYPE") != C.MQTT_NONE else q.attr("TRIGTYPE")


def _threshold(s: ModelState, q: ModelQueue, qm: str = "") -> int:
    return 0 if _overridden(s, q, qm) else q.attr("TRIGMPRI")


def _eligible(s: ModelState, q: ModelQueue, qm: str = "", any_priority: bool = False) -> int:
    """Messages that count: uncommitted ones too, except on a shared queue (TRIG-04, TRIG-05); with
    ``any_priority``, whatever their priority (as they would with TRIG-02 relaxed)."""
    threshold, committed = 0 if any_priority else _threshold(s, q, qm), q.shared
    return sum(1 for m in q.messages if m.got_by is None and m.order_priority >= threshold
               and not (committed and m.put_by is not None))


def _open_input(s: ModelState, queue: str, qm: str | None = None) -> int:
    """OpenInputCount: of every handle, or (a shared queue, TRIG-08) of queue manager ``qm``'s."""
    return sum(1 for h in s.handles.values() if h.queue == queue and h.can_input
               and (qm is None or s.qmgr_of(h.conn) == qm))


def _trigger_message(s: ModelState, q: ModelQueue) -> L.TriggerMessage | None:
    """Condition 6 (TRIG-10) and the MQTM's fields (TRIG-29), or None when not met."""
    pname = q.attr("PROCESS").strip()
    name = q.name.split(":", 1)[-1]
    if pname:
        proc = s.processes.get(pname)
        if proc is None:
            return None
        return L.TriggerMessage(q_name=name, process_name=pname, trigger_data=q.attr("TRIGDATA"),
                                appl_type=proc.appl_type, appl_id=proc.appl_id, env_data=proc.env_data,
                                user_data=proc.user_data)
    if q.attr("USAGE") == C.MQUS_TRANSMISSION:
        return L.TriggerMessage(q_name=name, trigger_data=q.attr("TRIGDATA"))
    return None


def _initiation_queue(s: ModelState, q: ModelQueue, qm: str = "") -> ModelQueue | None:
    """Condition 7 (TRIG-11), the initiation queue as queue manager ``qm`` names it."""
    iq = s.queues.get(s.where(qm, q.attr("INITQ").strip()))
    if iq is None or iq.attr("GET") == C.MQQA_GET_INHIBITED or iq.attr("PUT") == C.MQQA_PUT_INHIBITED:
        return None
    if iq.attr("USAGE") != C.MQUS_NORMAL:
        return None
    return iq


def _blockers(s: ModelState, q: ModelQueue, skip: tuple[int, ...] = (), qm: str = "") -> tuple[str, ...]:
    """Conditions 4-10 (less ``skip``) as queue manager ``qm`` judges them: every one that stops a trigger
    message for ``q``, by rule (none: they hold).  Relaxed together, they would have let the event write one."""
    ttype = _ttype(s, q, qm)
    out: list[str] = []
    if 9 not in skip and q.attr("TRIGGER") != C.MQTC_ON:
        out.append("TRIG-13")
    if ttype == C.MQTT_NONE:
        out.append("TRIG-14")
    if _exclusive_anywhere(s, q):
        out.append("TRIG-08")
    if 4 not in skip and ttype in (C.MQTT_FIRST, C.MQTT_DEPTH) and _open_input(s, q.name, qm if q.shared else None):
        out.append("TRIG-06")
    if _trigger_message(s, q) is None:
        out.append("TRIG-10")
    iq = _initiation_queue(s, q, qm)
    if iq is None:
        out.append("TRIG-11")
    elif 8 not in skip and not _open_input(s, iq.name):
        out.append("TRIG-12")
    if 5 not in skip and q.attr("GET") == C.MQQA_GET_INHIBITED:
        out.append("TRIG-09")
    return tuple(dict.fromkeys(out))


def _outcomes(s: ModelState, blocked: tuple[str, ...]) -> list[bool]:
    """Whether conditions 4-10 hold, the possible answers, given what blocks them (:func:`_blockers`)."""
    if not blocked:
        return [True]
    if blocked == ("TRIG-09",):
        # TRIG-09 (a get-inhibited queue): stated for z/OS; elsewhere undocumented, so both.
        return [False] if s.platform == C.PLATFORM_ZOS else [False, True]
    return [False]


def _enough(s: ModelState, q: ModelQueue, qm: str = "", any_priority: bool = False) -> bool:
    need = q.attr("TRIGDPTH") if _ttype(s, q, qm) == C.MQTT_DEPTH else 1
    return _eligible(s, q, qm, any_priority) >= need


def _too_few(s: ModelState, q: ModelQueue, qm: str = "") -> tuple[str, ...]:
    """The rules by which ``q`` had too few messages for an event: of TriggerMsgPriority or above
    (TRIG-02), and for DEPTH fewer than TriggerDepth (TRIG-03)."""
    return (("TRIG-03",) if _ttype(s, q, qm) == C.MQTT_DEPTH else ()) + ("TRIG-02",)


def _write(s: ModelState, queue: str, conn: str | None = None, rules: tuple[str, ...] = (), qm: str = "") -> None:
    """Write (or, in a unit of work, hold) the trigger message for ``queue`` on ``qm``'s initiation queue;
    ``rules``: the event's own rules, those that make MQ write it (a message missing breaks them)."""
    q = s.queue(queue)
    if conn is not None:
        _note(s, queue, ("TRIG-15",))
    tm = _trigger_message(s, q)
    iq = _initiation_queue(s, q, qm)
    ttype = _ttype(s, q, qm)
    if qm:
        q.peer_triggers = tuple(sorted({**dict(q.peer_triggers), qm: s.clock}.items()))
    else:
        q.last_trigger = s.clock
        q.interval_reset = False
    if ttype == C.MQTT_DEPTH:
        q.attrs["TRIGGER"] = C.MQTC_OFF  # TRIG-28
    if conn is not None:
        s.conn(conn).pending_triggers.append((iq.name, tm, ttype, rules))
    else:
        deliver(s, iq.name, tm, rules)


def deliver(s: ModelState, initq: str, tm: L.TriggerMessage, rules: tuple[str, ...] = ()) -> None:
    """Put trigger message ``tm`` on ``initq``; ``rules``: the event's, and TRIG-15 for one held until a
    unit of work ended (with TRIG-30, a trigger message stays until a restart, they are why it is there)."""
    if initq not in s.queues:
        return
    iq = s.queue(initq)
    md = L.MessageDescriptor(priority=iq.attr("DEFPRTY"), persistence=C.MQPER_NOT_PERSISTENT,
                             expiry=C.MQEI_UNLIMITED, format=C.MQFMT_TRIGGER)
    iq.append(ModelMessage(seq=s.next_seq, body="", md=md, order_priority=iq.attr("DEFPRTY"),
                                    put_time=s.clock, tm=tm,
                                    provenance=tuple(dict.fromkeys(rules + ("TRIG-30",)))))
    s.next_seq += 1


def _note(s: ModelState, queue: str, rules: tuple[str, ...]) -> None:
    """Remember why an event on ``queue`` wrote no trigger message: the rules that, relaxed together, would
    have let it (one entry per event, newest first, bounded)."""
    q = s.queue(queue)
    if rules:
        entry = tuple(dict.fromkeys(rules))
        q.trigger_notes = tuple(dict.fromkeys((entry,) + q.trigger_notes))[:16]


def _alternatives(s: ModelState, outcomes: list[bool], rules: tuple[str, ...], conn: str | None,
                  q_name: str, qm: str = "", event: tuple[str, ...] = (), blocked: tuple[str, ...] = (),
                  overridden: bool = False) -> Alternatives:
    """Each outcome of an event: ``rules`` exercised, ``event`` the rules by which it writes a trigger message,
    ``blocked`` those by which it does not (where it does not; with ``overridden``, TRIG-07's override of the
    queue's own trigger type after them, leading: :func:`_overridden_note`)."""
    out: Alternatives = []
    for fire in outcomes:
        t = s.clone() if len(outcomes) > 1 else s
        if fire:
            _write(t, q_name, conn, event or rules[:1], qm)
            if "TRIG-26" in rules:
                _note(t, q_name, ("TRIG-26",))  # one trigger message for the event, even for EVERY
            if "TRIG-27" in rules:
                _note(t, q_name, ("TRIG-27",))  # one trigger message for all the segments of a put
        else:
            _note(t, q_name, blocked)
            if overridden:
                _overridden_note(t, q_name, qm)
        out.append((t, rules + (("TRIG-09",) if len(outcomes) > 1 else ())))
    return out


def _per_qmgr(alts: Alternatives, qms, judge, queue: str) -> Alternatives:
    """``judge(state, qm)`` for each queue manager in turn, each outcome carried into the next.

    Each judges the event as it stood: TriggerControl turned off by one's DEPTH trigger message
    (TRIG-28) is off for the others only once all have judged it."""
    tracked = [(state, done, state.queues[queue].attrs["TRIGGER"]) for state, done in alts]
    for qm in qms:
        out = []
        for state, done, was in tracked:
            off = state.queues[queue].attrs["TRIGGER"] != was
            if off:
                state.queue(queue).attrs["TRIGGER"] = was
            for t, r in judge(state, qm):
                if off:
                    t.queue(queue).attrs["TRIGGER"] = C.MQTC_OFF
                out.append((t, tuple(dict.fromkeys(done + r)), was))
        tracked = out
    return [(state, done) for state, done, _ in tracked]


BASE = ("TRIG-06", "TRIG-10", "TRIG-11", "TRIG-12", "TRIG-13", "TRIG-14", "TRIG-29", "TRIG-30")


def after_put(s: ModelState, queue: str, m: ModelMessage, conn: str, sync: bool, added: int = 1) -> Alternatives:
    """Conditions 1-11 and 14 after a successful put of ``m``: ``added`` messages when the queue manager
    segmented it (``m`` the first segment), which make one trigger event (TRIG-27)."""
    q = s.queues[queue]
    if q.attr("TRIGGER") != C.MQTC_ON or q.attr("TRIGTYPE") == C.MQTT_NONE:
        return [(s, ())]
    if q.shared:
        return _per_qmgr([(s, ())], _qmgrs(s, q), lambda t, qm: _shared_put(t, queue, m, conn, sync, added, qm),
                         queue)
    rules = ("TRIG-01", "TRIG-02", "TRIG-03", "TRIG-04") + BASE
    if added > 1:
        rules += ("TRIG-27",)
    if q.attr("MSGDLVSQ") == C.MQMDS_FIFO:
        rules += ("TRIG-24",)
    if m.order_priority < q.attr("TRIGMPRI"):
        _note(s, queue, ("TRIG-02",))
        if "TRIG-24" in rules and m.md.priority >= q.attr("TRIGMPRI"):
            # its own priority would do: the queue's DefPriority, which FIFO compares, decides, first (noted last:
            # the newest note leads); no comparison with TriggerMsgPriority at all would do as well
            _note(s, queue, ("TRIG-24",))
        return [(s, rules + ("TRIG-25",))]
    qm = q.owner
    # a FIFO queue's DefPriority let in a message whose own priority would not have: that decides first
    decisive = ("TRIG-24",) if "TRIG-24" in rules and m.md.priority < q.attr("TRIGMPRI") else ()
    ways = _eligible_counts(s, q, added)
    if len(ways) == 1:
        (count, _gone), = ways
        return _after_put_counted(s, queue, count, rules, conn, sync, added, qm, decisive)
    out: Alternatives = []
    for count, gone in ways:
        t = s.clone()
        t.queue(queue).background_removed = gone
        out += _after_put_counted(t, queue, count, rules + ("EXP-26",), conn, sync, added, qm, decisive)
    return out


def _shared_put(s: ModelState, queue: str, m: ModelMessage, conn: str, sync: bool, added: int,
                qm: str) -> Alternatives:
    """A put to a shared queue as queue manager ``qm`` of the group judges it, for its own initiation
    queue (one trigger message per queue manager whose conditions hold): committed messages alone count
    (TRIG-05), its own OpenInputCount decides condition 4 and an exclusive open anywhere stops every
    trigger (TRIG-08), and while another has the queue open for shared input it is FIRST with
    TriggerMsgPriority 0 (TRIG-07)."""
    q = s.queues[queue]
    rules = ("TRIG-05", "TRIG-08", "TRIG-01", "TRIG-02", "TRIG-03") + BASE
    if _open_input(s, queue) > _open_input(s, queue, qm):
        # another member's input handles do not count here: what follows rests on that first
        rules = tuple(dict.fromkeys(("TRIG-08",) + rules))
    if _overridden(s, q, qm):
        rules = ("TRIG-07",) + rules
    # What decided how the event was judged, by the group's rules: TRIG-07's override where it changes the queue's
    # own trigger type or TriggerMsgPriority (FIRST at 0 judged as FIRST at 0 is the same), the counting of
    # committed messages alone where an uncommitted one is there to count (TRIG-05), each queue manager's own
    # judging for its own initiation queue (TRIG-08: one trigger message per queue manager whose conditions hold)
    judged = ("TRIG-07",) if _override_changes(s, q, qm) else ()
    counting = ("TRIG-05",) if sync or any(x.put_by is not None for x in q.messages) else ()
    shared = judged + counting + ("TRIG-08",)
    if added > 1:
        rules += ("TRIG-27",)
    if _exclusive_anywhere(s, q):
        _note(s, queue, ("TRIG-08",))
        return [(s, rules)]
    if m.order_priority < _threshold(s, q, qm):
        _note(s, queue, ("TRIG-02",))
        return [(s, rules + ("TRIG-25",))]
    count = _eligible(s, q, qm)
    if not sync:
        return _after_put_counted(s, queue, count, rules, conn, False, added, qm, shared=shared)
    # Not yet committed, the message does not count (TRIG-05); whether its put is a trigger event now,
    # its trigger message held until the unit of work ends, or none, the topic does not say: both.
    t = s.clone()
    _note(s, queue, ("TRIG-05",))
    return [(s, rules)] + _after_put_counted(t, queue, count + added, rules, conn, True, added, qm, shared=shared)


def _eligible_counts(s: ModelState, q: ModelQueue, added: int = 1) -> list[tuple[int, int]]:
    """The messages that count for triggering, each way the branch leaves open, as (count, removed).

    Expired messages removed in the background (EXP-26) no longer count.  ``background_removed``
    says how many have gone so far; more may have gone by now, and where that does not say whether
    they were of a priority that counts, each count is possible.  Only counts that could decide
    the trigger differently are kept apart, each with the fewest removals that give it."""
    count = _eligible(s, q)
    if not q.expiring or not expiry.background_removal(s, q):
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
                       sync: bool, added: int = 1, qm: str = "", decisive: tuple[str, ...] = (),
                       shared: tuple[str, ...] = ()) -> Alternatives:
    """``decisive``: rules that lead what the put's trigger message (or its absence) depends on; ``shared`` (a
    shared queue), the group's rules that decided how it was judged (:func:`_shared_put`)."""
    q = s.queues[queue]
    ttype, depth = _ttype(s, q, qm), q.attr("TRIGDPTH")
    before = count - added   # the segments of one put are one event (TRIG-27)
    # a segmented put: how its segments count leads what its trigger message (or its absence) depends on
    lead = decisive + (("TRIG-27",) if added > 1 else ())
    first = {C.MQTT_FIRST: before == 0, C.MQTT_EVERY: True, C.MQTT_DEPTH: before < depth <= count}[ttype]
    if first:
        blocked = _blockers(s, q, qm=qm)
        # The count before the put (TRIG-03) decides the event unless no count could have gone otherwise: EVERY
        # counts nothing, and a queue that held no other message at all has nothing to miscount.  There, what
        # leads (a FIFO queue's DefPriority, a segmented put) or how the group judged a shared queue is what the
        # event depends on.
        counted = ("TRIG-03",) if not lead + shared or (ttype != C.MQTT_EVERY and len(q.messages) > added) else ()
        return _alternatives(s, _outcomes(s, blocked), tuple(dict.fromkeys(
            lead + ("TRIG-03",) + rules + (("TRIG-15",) if sync else ()))), conn if sync else None, queue, qm,
            event=lead + shared + counted, blocked=blocked)
    # condition 11: FIRST not previously empty, DEPTH already at TriggerDepth or more
    if ttype == C.MQTT_FIRST or (ttype == C.MQTT_DEPTH and before >= depth):
        rules = tuple(dict.fromkeys(lead + ("TRIG-16", "TRIG-03") + rules))
        interval = [True]
        if ttype == C.MQTT_FIRST:
            interval = _interval_elapsed(s, q, qm)
        blocked = _blockers(s, q, qm=qm)
        outcomes = sorted({c and i for c in _outcomes(s, blocked) for i in interval})
        reset = ("TRIG-17",) if q.interval_reset and not qm else ()
        # not written: conditions 4-10, else the interval (TRIG-16; after a restart TRIG-17 says how it counts)
        blocked = blocked or ("TRIG-16",) + reset
        # (judged by the queue's own trigger type, where TRIG-07 made it FIRST, it might have: that leads, as what
        # the history's shared queue is there for; a FIRST queue of its own shows a trigger again alone)
        return _alternatives(s, outcomes, rules + reset, conn if sync else None, queue, qm,
                             event=lead + shared + ("TRIG-16",), blocked=blocked, overridden=True)
    _note(s, queue, lead + ("TRIG-03",))
    _overridden_note(s, queue, qm)
    return [(s, rules)]


def _overridden_note(s: ModelState, queue: str, qm: str) -> None:
    """An event that FIRST with TriggerMsgPriority 0 did not trigger, where that was TRIG-07's override of the
    queue's own trigger type: judged by those, it might have (another way, TRIG-07 alone, to a trigger)."""
    if _override_changes(s, s.queues[queue], qm):
        _note(s, queue, ("TRIG-07",))


def _override_changes(s: ModelState, q: ModelQueue, qm: str) -> bool:
    """TRIG-07's override holds for ``q`` at ``qm`` and judges it otherwise than its own trigger type and
    TriggerMsgPriority would (FIRST at 0 judged as FIRST at 0 is the same)."""
    return _overridden(s, q, qm) and (q.attr("TRIGTYPE") != C.MQTT_FIRST or bool(q.attr("TRIGMPRI")))


def _interval_elapsed(s: ModelState, q: ModelQueue, qm: str = "") -> list[bool]:
    if qm:
        # another queue manager of the group: its own interval (TRIGINT at its default), never restarted here
        last = dict(q.peer_triggers).get(qm)
        return [True] if last is None else s.passed(last, C.DEFAULT_TRIGGER_INTERVAL / 100)
    if q.last_trigger is None and not q.interval_reset:
        return [True]
    if q.interval_reset:
        return [False, True]  # TRIG-17: what 'reset' means is not said
    return s.passed(q.last_trigger, s.qmgr["TRIGINT"] / 100)


def end_of_unit_of_work(s: ModelState, conn: str, commit: bool) -> tuple[str, ...]:
    """TRIG-15: held trigger messages become available at commit, and for FIRST/DEPTH at backout."""
    c = s.conn(conn)
    for initq, tm, ttype, why in c.pending_triggers:
        if commit or ttype in (C.MQTT_FIRST, C.MQTT_DEPTH):
            deliver(s, initq, tm, why + ("TRIG-15",))   # caused by the put, held for the unit of work
    rules = ("TRIG-15",) if c.pending_triggers else ()
    for _initq, tm, ttype, _why in c.pending_triggers:
        q = s.queues.get(tm.q_name)
        if (commit or ttype in (C.MQTT_FIRST, C.MQTT_DEPTH)) and q is not None and ("TRIG-15",) in q.trigger_notes:
            # delivered: a trigger message seen from now on is not one shown before its unit of work ended
            # (one the backout discarded is still TRIG-15's to explain)
            s.queue(tm.q_name).trigger_notes = tuple(n for n in q.trigger_notes if n != ("TRIG-15",))
    c.pending_triggers = []
    return rules


def after_close(s: ModelState, queue: str, had_input: bool, qm: str = "") -> Alternatives:
    """Condition 12: the only server closed the queue with enough messages left (on a shared queue: the
    only one of its queue manager ``qm``, TRIG-08)."""
    q = s.queues.get(queue)
    if q is None or not had_input:
        return [(s, ())]
    qm = qm if q.shared else q.owner
    if _open_input(s, queue, qm if q.shared else None) or _ttype(s, q, qm) not in (C.MQTT_FIRST, C.MQTT_DEPTH):
        return [(s, ())]
    if q.attr("TRIGGER") != C.MQTC_ON:
        return [(s, ())]
    rules = ("TRIG-18", "TRIG-19", "TRIG-26") + BASE + (("TRIG-08", "TRIG-05") if q.shared else ())
    if not _enough(s, q, qm):
        _note(s, queue, ("TRIG-18",))
        if _enough(s, q, qm, any_priority=True):
            # enough messages but below TriggerMsgPriority: condition 12 counts those of sufficient priority by
            # condition 2, so a system that compares no priority here breaks TRIG-02 (it leads: the newer note)
            _note(s, queue, ("TRIG-02",) + _blockers(s, q, skip=(4, 5), qm=qm))
        return [(s, rules)]
    blocked = _blockers(s, q, skip=(4, 5), qm=qm)
    return _alternatives(s, _outcomes(s, blocked), rules, None, queue, qm, event=("TRIG-18", "TRIG-19"),
                         blocked=blocked)


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
        alts = _each(alts, queue, ("TRIG-20", "TRIG-26"), skip=(8,), qms=_qmgrs(s, q))
    if before["GET"] == C.MQQA_GET_INHIBITED and now["GET"] == C.MQQA_GET_ALLOWED:
        alts = _each(alts, queue, ("TRIG-22", "TRIG-26"), skip=(5,), qms=_qmgrs(s, q))
    if before["PUT"] == C.MQQA_PUT_INHIBITED and now["PUT"] == C.MQQA_PUT_ALLOWED:
        for app, qm in _served_by(s, queue):
            alts = _each(alts, app, ("TRIG-21", "TRIG-26"), skip=(), qms=(qm,))
    return alts


def after_open(s: ModelState, queue: str, others_had_input: bool) -> Alternatives:
    """Condition 13, case 3: a trigger monitor opens an initiation queue for input."""
    alts: Alternatives = [(s, ())]
    if others_had_input:
        return alts
    for app, qm in _served_by(s, queue):
        alts = _each(alts, app, ("TRIG-23", "TRIG-26"), skip=(8,), qms=(qm,))
    return alts


def _served_by(s: ModelState, initq: str) -> list[tuple[str, str]]:
    """The application queues whose initiation queue is ``initq``, each with the queue manager that
    names it so (each of a group's for a shared queue)."""
    out = []
    for n, q in sorted(s.queues.items()):
        name = q.attr("INITQ").strip()
        if n == initq or not name:
            continue
        out += [(n, qm) for qm in _qmgrs(s, q) if s.where(qm, name) == initq]
    return out


def _each(alts: Alternatives, queue: str, rules: tuple[str, ...], skip: tuple[int, ...],
          qms: tuple[str, ...] = ("",)) -> Alternatives:
    def judge(state: ModelState, qm: str) -> Alternatives:
        q = state.queues[queue]
        extra = ("TRIG-08", "TRIG-05") + (("TRIG-07",) if _overridden(state, q, qm) else ()) if q.shared else ()
        if not _enough(state, q, qm):
            few = rules + _too_few(state, q, qm) + extra
            # these events (TRIG-20 to 23) say when they write a trigger message, not that a queue with too few
            # messages never gives one: no rule of theirs relaxed writes one here.  Where the messages below
            # TriggerMsgPriority would be enough, no comparison with it (TRIG-02 relaxed) would, with the
            # conditions that stop it besides
            if _enough(state, q, qm, any_priority=True):
                _note(state, queue, ("TRIG-02",) + _blockers(state, q, skip, qm))
            return [(state, few)]
        # a shared queue's trigger message comes of this queue manager's own judging (TRIG-08): it leads
        blocked = _blockers(state, q, skip, qm)
        return _alternatives(state, _outcomes(state, blocked), rules + extra + BASE, None, queue, qm,
                             event=rules[:1] + extra[:1], blocked=blocked)

    return _per_qmgr(alts, qms, judge, queue)


def on_restart(s: ModelState) -> None:
    """TRIG-17: a restart resets the TriggerInterval timer (and trigger messages, non-persistent, are lost)."""
    for name, q in list(s.queues.items()):
        if q.last_trigger is not None:
            q = s.queue(name)
            q.interval_reset = True
            q.last_trigger = None


def missing_trigger_rules(s: ModelState, initq: str) -> tuple[str, ...]:
    """Why no (further) trigger message is due on ``initq``: for diagnosing extra ones.  Each rule alone
    would have let an event write one: the single rule that blocked an event (newest first), and TRIG-15
    for one held in a unit of work; an event several rules blocked together is named only when no event
    was blocked by one alone (relaxing one of them would not write it)."""
    alone: list[str] = []
    together: list[str] = []
    for name, _qm in _served_by(s, initq):
        for entry in s.queues[name].trigger_notes:
            (alone if len(entry) == 1 else together).extend(entry)
    if any(p[0] == initq for c in s.conns.values() for p in c.pending_triggers):
        alone.append("TRIG-15")
    return tuple(dict.fromkeys(alone or together))


def drained(s: ModelState, initq: str) -> None:
    """A get found ``initq`` empty: no event before it wrote a trigger message there that is still to come,
    so none of them explains one seen later (the notes of the queues it serves are forgotten)."""
    for name, _qm in _served_by(s, initq):
        if s.queues[name].trigger_notes:
            s.queue(name).trigger_notes = ()


def depth_seen(s: ModelState, initq: str) -> ModelState | None:
    """CURDEPTH of ``initq`` inquired, and as MQ gives it: no event before it wrote a trigger message there that
    MQ did not, so none of them explains one seen later (the notes of the queues it serves are forgotten), as
    with a get that finds it empty (:func:`drained`).  Not the notes of a queue with puts still in a unit of
    work: a trigger message such a put's event wrote is held until the unit of work ends (TRIG-15), and no depth
    shows it before; nor those of a shared queue, whose notes are of every queue manager's events, each for its
    own initiation queue (one queue manager's initiation queue seen empty says nothing of another's).  The state
    with them forgotten (None: none to forget)."""
    names = [name for name, _qm in _served_by(s, initq) if s.queues[name].trigger_notes
             and not s.queues[name].shared and not any(m.put_by is not None for m in s.queues[name].messages)]
    if not names:
        return None
    t = s.clone()
    for name in names:
        t.queue(name).trigger_notes = ()
    return t


def trigger_fields(m: ModelMessage) -> dict:
    """Fields of an expected trigger message MQ does not pin down (any value allowed)."""
    return {"msg_type": None} if m.tm is not None else {}


@handles(L.DefineProcess)
def define_process(state: ModelState, op: L.DefineProcess) -> list[Branch]:
    if op.process in state.processes:
        raise HistoryError(f"process {op.process!r} is already defined")
    s = state.clone()
    s.processes = {**s.processes, op.process: op}
    return [Branch(observation=L.OK, state=s, rules=("TRIG-10",))]
