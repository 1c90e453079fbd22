"""Semantics of the ``core`` area: queues, connections, handles, put, get, browse, units of work.

Each handler takes a state and an operation and returns the allowed branches;
it works on a clone, so the caller's state is never changed.  Rule IDs are those
of :mod:`reference_model.rules.core`.
"""

from __future__ import annotations

import itertools

import attrs

from reference_model import expiry, trigger
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.model import Branch, HistoryError, Lazy, handles, require_member
from reference_model.state import (
    ModelConnection,
    ModelHandle,
    ModelMessage,
    ModelQueue,
    ModelState,
    UowEntry,
)

MESSAGE_FIELDS = ("report", "msg_type", "feedback", "format", "reply_to_q", "correl_id")


def _fail(state: ModelState, rc: int, *rules: str) -> Branch:
    return Branch(observation=L.Observation.of(rc), state=state, rules=rules)


def _failures(state: ModelState, errors: list[tuple[int, str]]) -> list[Branch]:
    """One branch per applicable error: MQ does not document the order of its checks."""
    return [_fail(state, rc, rule) for rc, rule in errors]


def _conn_or_error(state: ModelState, conn: str) -> Branch | None:
    if conn not in state.conns:
        return _fail(state, C.MQRC_HCONN_ERROR, "CORE-40")
    return None


def _handle_or_error(state: ModelState, conn: str, handle: str) -> Branch | None:
    err = _conn_or_error(state, conn)
    if err:
        return err
    h = state.handles.get(handle)
    if h is None or h.conn != conn:
        return _fail(state, C.MQRC_HOBJ_ERROR, "CORE-40")
    return None


def _curdepth(q: ModelQueue) -> int:
    # CORE-28: uncommitted puts count; messages got under syncpoint do not.
    return q.depth


# ---------------------------------------------------------------- administration


@handles(L.DefineQueueSharingGroup)
def define_queue_sharing_group(state: ModelState, op: L.DefineQueueSharingGroup) -> list[Branch]:
    if state.platform != C.PLATFORM_ZOS:
        raise HistoryError("queue-sharing groups exist on z/OS only")
    if state.group or state.conns:
        raise HistoryError("a queue-sharing group is defined once, before any connection")
    if not op.qmgrs or "" in op.qmgrs or len(set(op.qmgrs)) != len(op.qmgrs):
        raise HistoryError(f"a queue-sharing group needs distinct queue-manager names, not {op.qmgrs!r}")
    s = state.clone()
    s.group = op.qmgrs
    return [Branch(observation=L.OK, state=s)]


@handles(L.DefineQueue)
def define_queue(state: ModelState, op: L.DefineQueue) -> list[Branch]:
    require_member(state, op.qmgr)
    values = {name: default for name, (_, default) in L.QUEUE_ATTRIBUTES.items()}
    values.update(dict(op.attrs))
    sharing = values["QSGDISP"] == C.MQQSGD_SHARED
    if sharing and not state.group:
        raise HistoryError("a shared queue (QSGDISP(SHARED)) needs a queue-sharing group")
    key = op.queue if sharing else state.where(op.qmgr, op.queue)
    if key in state.queues or op.queue in state.remotes or (sharing and op.queue in state.queues):
        return [_fail(state, C.MQRCCF_OBJECT_ALREADY_EXISTS, "CORE-41")]
    s = state.clone()
    s.add_queue(ModelQueue(name=key, attrs=values))
    return [Branch(observation=L.OK, state=s, rules=("CORE-41",))]


@handles(L.AlterQueue)
def alter_queue(state: ModelState, op: L.AlterQueue) -> list[Branch]:
    if op.queue not in state.queues:
        return [_fail(state, C.MQRC_UNKNOWN_OBJECT_NAME, "CORE-33")]
    s = state.clone()
    before = dict(s.queues[op.queue].attrs)
    s.queue(op.queue).attrs.update(dict(op.attrs))
    return [Branch(observation=L.OK, state=t, rules=("CORE-41",) + extra)
            for t, extra in trigger.after_alter(s, op.queue, before)]


@handles(L.InquireQueue)
def inquire_queue(state: ModelState, op: L.InquireQueue) -> list[Branch]:
    if op.qmgr:
        require_member(state, op.qmgr)
        op = attrs.evolve(op, queue=state.where(op.qmgr, op.queue))
    if "CURDEPTH" not in op.names or op.queue not in state.queues:
        return _inquire_queue(state, op)
    return _after_report_removals(state, op.queue, True, lambda s: _inquire_queue(s, op))


def _after_report_removals(state: ModelState, queue: str, source: bool, then) -> list[Branch]:
    """``then`` in each state background removals with reports may have left (EXP-26, EXP-08)."""
    ways = expiry.report_removals(state, queue, source)
    if len(ways) == 1:
        return then(state)
    return [attrs.evolve(b, rules=tuple(dict.fromkeys(b.rules + rules))) if rules else b
            for s, rules in ways for b in then(s)]


def _inquire_queue(state: ModelState, op: L.InquireQueue) -> list[Branch]:
    q = state.queues.get(op.queue)
    if q is None:
        return [_fail(state, C.MQRC_UNKNOWN_OBJECT_NAME, "CORE-33")]
    values, field_rules = {}, {}
    exercised: tuple[str, ...] = ()
    depth_choices = expiry.depth_range(state, q, _curdepth(q))
    for name in op.names:
        if name == "CURDEPTH":
            values[name] = _curdepth(q)
            # The rules that explain a wrong depth are worked out only if it is wrong (_depth_rules).
            exercised += ("CORE-28", "CORE-02") + (("CORE-14",) if q.held else ()) + q.departures
            if expiry.lingering(state, q) and not expiry.background_removal(state, q):
                exercised += ("EXP-11",)
        elif name in ("IPPROCS", "OPPROCS"):
            want = "can_input" if name == "IPPROCS" else "can_output"
            # of a shared queue, the handles of the queue manager asked (TRIG-08: counts are per queue manager)
            per_qmgr = q.shared
            values[name] = sum(
                1 for h in state.handles.values() if h.queue == q.name and getattr(h, want)
                and not (per_qmgr and state.qmgr_of(h.conn) != op.qmgr)
            )
            field_rules[f"attrs.{name}"] = ("CORE-24", "TRIG-08") if per_qmgr else ("CORE-24",)
        else:
            values[name] = q.attr(name)
            if name != "TRIGGER":
                field_rules[f"attrs.{name}"] = ("CORE-41",)
            elif q.attr("TRIGTYPE") == C.MQTT_DEPTH:
                # a DEPTH trigger message turns it off: when the depth condition held (TRIG-03) decides it too
                field_rules[f"attrs.{name}"] = ("TRIG-28", "TRIG-03", "TRIG-20", "CORE-41")
            else:
                field_rules[f"attrs.{name}"] = ("TRIG-28", "TRIG-20", "CORE-41")
    rules = tuple(sorted({r for rs in field_rules.values() for r in rs} | set(exercised)))
    if "CURDEPTH" in values:
        field_rules = Lazy(lambda eager=field_rules, before=state, q=q: {**eager, **_depth_rules(before, q)})
        if q.departures:
            # the depth seen now witnesses the departures so far: a later depth they would explain is not
            # theirs (a message they removed shown gone here, and back later, is what removed it again)
            state = state.clone()
            state.queue(q.name).departures = ()
    if "CURDEPTH" not in values or len(depth_choices) == 1:
        if "CURDEPTH" in values:
            values["CURDEPTH"] = depth_choices[0][0]
            # an initiation queue's depth as MQ gives it: no trigger event before wrote one MQ did not
            state = trigger.depth_seen(state, q.name) or state
        return [Branch(observation=L.Observation(attrs=values), state=state, rules=rules,
                       field_rules=field_rules)]
    # EXP-26: expired messages may have been removed in the background; each count is allowed,
    # and the one observed fixes how many have gone.
    out = []
    for depth, removed in depth_choices:
        s = state.clone()
        s.queue(q.name).background_removed = removed
        out.append(Branch(observation=L.Observation(attrs={**values, "CURDEPTH": depth}), state=s,
                          rules=rules + ("EXP-11", "EXP-26"), field_rules=field_rules))
    return out


def _depth_rules(state: ModelState, q: ModelQueue) -> dict:
    """The rules a CURDEPTH observed too high (">") or too low ("<") breaks.

    Too high: messages that should be gone or hidden; too low: ones that should count.
    The rules of what happened to the queue's messages lead: the general depth rule
    (CORE-28) only counts what they left.
    """
    pending = tuple(r for m in q.messages if m.got_by is not None
                    for r in (("SYNC-14", "SYNC-03") if state.conns[m.got_by].skipped == m.seq
                              else ("CORE-14",)))
    # Expired messages this history says were already removed (a put accepted at MAXDEPTH, a lower
    # depth seen before) and that still count: they counted when that happened too (EXP-11).
    removed = ("EXP-11", "EXP-26") if q.background_removed else ()
    high = tuple(dict.fromkeys(
        q.departures + pending + trigger.missing_trigger_rules(state, q.name)
        + expiry.pending_report_rules(state, q.name) + removed + ("CORE-28",)))
    # Expired messages still on the queue count (EXP-11), and only a get that walks past them
    # discards them (EXP-04/05): a depth too low may be one discarded too soon.
    walked = ("EXP-05", "EXP-04") if q.attr("MSGDLVSQ") == C.MQMDS_PRIORITY else ("EXP-04",)
    expired = bool(expiry.lingering(state, q))
    lingering = expired and not expiry.background_removal(state, q)
    # Expired messages another member's scans may not reach (its own private queues and the shared ones
    # are its to scan, not these: EXP-25) lead.
    others_scan = lingering and state.group and any(a.get("EXPRYINT") for a in state.peers.values())
    # Where they may also have gone in the background (EXP-26), a reading that has them still there and the depth
    # too low without them is EXP-11's as well: they count until they are discarded.
    low = tuple(dict.fromkeys(
        (("EXP-25",) if others_scan else ())
        + _depth_history_rules(state, q)
        + (("EXP-11",) + walked if lingering else ("EXP-11",) if expired else ())
        + ("CORE-28",)))
    # How far CORE-28 alone can move the depth: down by the uncommitted puts, up by the held gets.
    got = sum(1 for m in q.messages if m.got_by is not None)
    uncommitted = sum(1 for m in q.messages if m.put_by is not None and m.got_by is None)
    depths = [d for d, _ in expiry.depth_range(state, q, _curdepth(q))]
    lowest, highest = min(depths), max(depths)
    # Too high by more than the held gets: CORE-28 alone does not explain it, nor does what hid them.
    beyond = tuple(r for r in high if r != "CORE-28" and r not in pending)
    out = {"attrs.CURDEPTH>": beyond or high, "attrs.CURDEPTH<": low, "attrs.CURDEPTH": tuple(dict.fromkeys(high + low)),
           "attrs.CURDEPTH:CORE-28": (-uncommitted, got)}
    for value in range(highest + 1, highest + got + 1):
        out[f"attrs.CURDEPTH=={value}"] = high
    # A depth short by no more than the uncommitted puts: leaving them out (CORE-28) explains it all,
    # and the history of the committed messages is not blamed ("==": these rules alone).
    # (an uncommitted put that has expired: leaving it out as expired, EXP-11, explains it as well)
    expired_uncommitted = ("EXP-11",) if any(m.put_by is not None for m in expiry.lingering(state, q)) else ()
    for value in range(max(0, lowest - uncommitted), lowest):
        out[f"attrs.CURDEPTH=={value}"] = ("CORE-28",) + expired_uncommitted
    return out


def _depth_history_rules(state: ModelState, q: ModelQueue) -> tuple[str, ...]:
    """Why the messages that must count in CURDEPTH are there (a depth observed too low).

    Uncommitted puts first (CORE-28 counts them), then the others, newest first; messages that may
    already have expired and gone in the background (EXP-26) need not count, so
    their history is not blamed.
    """
    removable = expiry.background_removal(state, q)
    counted = [m for m in q.messages if m.got_by is None
               and not (removable and expiry.status(state, m) != expiry.LIVE)]
    # An uncommitted put counts by CORE-28 itself; its history (CORE-02: hidden from other
    # connections) says nothing of the depth.
    uncommitted = ("CORE-28",) if any(m.put_by is not None for m in counted) else ()
    # Newest first: the messages that arrived since the queue was last seen right are the likelier missing.  A rule
    # of fewer of their histories before one of more (stable, so newest first among equals): a departure from a rule
    # every message came by would most likely have lost more than the one a short count is missing.
    histories = [tuple(dict.fromkeys(r for r in m.provenance if r not in _timeless(state, m)))
                 for m in reversed(counted) if m.put_by is None]
    order = list(dict.fromkeys(r for h in histories for r in h))
    carried = {r: sum(r in h for h in histories) for r in order}
    return uncommitted + tuple(sorted(order, key=carried.__getitem__))


def _since(m: ModelMessage, rules: tuple[str, ...]) -> tuple[str, ...] | None:
    """``m.count_since`` once ``rules`` changed or kept its BackoutCount (newest first)."""
    return None if m.count_since is None else tuple(dict.fromkeys(rules + m.count_since))


def _count_rules(m: ModelMessage) -> tuple[str, ...]:
    """The rules that decide the BackoutCount a get or browse returns of ``m``.

    A count above 0 comes from backouts (CORE-15, CORE-17), kept across a restart (CORE-45; SYNC-19 on
    z/OS); 0 is what a first delivery shows (CORE-12), listed in the order its history gives them (a count
    kept from before a restart leads with its survival).  Once a call has returned the message, only what
    changed or kept its count since then decides it (the count shown then was right, or that call was
    the departure): a count lost at a restart after a browse showed the backout's count is not the
    backout's; one that changed with nothing to change it breaks CORE-17 (only backouts change it)."""
    if m.count_since is not None:
        return m.count_since or ("CORE-17",)
    return tuple(dict.fromkeys(
        tuple(r for r in ("SYNC-19", "CORE-45", "CORE-46", "CORE-15") if r in m.provenance)
        + (("CORE-15", "CORE-17") if m.backout_count else ("CORE-12", "CORE-17"))))


def _timeless(state: ModelState, m: ModelMessage) -> tuple[str, ...]:
    """Of a message's provenance, the rules no time on the queue can yet have made a difference to: that a
    trigger message never expires (TRIG-30) cannot be why one written no time ago is missing."""
    return ("TRIG-30",) if m.tm is not None and state.clock == m.put_time else ()


@handles(L.AdvanceClock)
def advance_clock(state: ModelState, op: L.AdvanceClock) -> list[Branch]:
    s = state.clone()
    s.clock += op.tenths
    return [Branch(observation=L.OK, state=s)]


# ---------------------------------------------------------------- connections


@handles(L.Connect)
def connect(state: ModelState, op: L.Connect) -> list[Branch]:
    if op.conn in state.conns:
        raise HistoryError(f"connection {op.conn!r} is already connected")
    s = state.clone()
    s.broken = s.broken - {op.conn}   # a program connecting again after its connection broke
    require_member(state, op.qmgr)
    s.conns[op.conn] = ModelConnection(name=op.conn, environment=op.environment, qmgr=op.qmgr)
    # The environment matters to the syncpoint area (“Skipping backout” note 2) only.
    return [Branch(observation=L.OK, state=s)]


#: Connections the network broke: the break is the reason their units of work end (CORE-46, CORE-48).
_BROKEN_RULES = ("CORE-46", "CORE-48")
#: Backouts the application did not ask for: they reinstate a marked get too (SYNC-07).
_UNREQUESTED_BACKOUTS = ("CORE-31", "CORE-32", *_BROKEN_RULES)


def _end_uow(s: ModelState, conn: str, commit: bool, rule: str, gets_commit: bool | None = None,
             relaxed: str | None = None) -> list[str]:
    """Commit or back out ``conn``'s unit of work in ``s``; returns the rules applied.  ``gets_commit``: how its
    gets end where that differs from its puts, in a reading that relaxes ``relaxed``, one of the rules of a
    backout: what that reading left otherwise than MQ does is there (or gone) by that rule alone."""
    gets_commit = commit if gets_commit is None else gets_commit
    c = s.conn(conn)
    applied: list[str] = []
    marked_rules: tuple[str, ...] = ()
    if not commit and (c.marked is not None or c.skipped is not None) and rule in _UNREQUESTED_BACKOUTS:
        # SYNC-07: only an application-requested backout skips; SYNC-05: a new UOW backed out for any reason.
        marked_rules = ("SYNC-07",) + (("SYNC-05",) if c.skipped is not None else ())
        applied += list(marked_rules)
    special = {c.marked, c.skipped} - {None}
    stamp = (s.next_seq, s.clock)   # when the commit made its puts available, among arrivals
    for entry in c.uow:
        m = s.find(entry.queue, entry.seq)
        if m is None:
            continue
        if entry.kind == "put":
            if commit:
                s.queue(entry.queue).update(m, put_by=None, provenance=(relaxed or rule,), committed=stamp)
                applied.append(rule)
                s.next_seq = stamp[0] + 1   # a later commit, or a later put, comes after this one
            else:
                s.discard(entry.queue, m, _put_deleted_by(rule))
                applied.append("CORE-03")
        else:  # get
            if m.put_by is not None and not gets_commit:
                continue  # its put is being backed out too
            if gets_commit:
                s.discard(entry.queue, m, (relaxed,) if relaxed else _most_specific_first("CORE-14", rule))
                applied.append("CORE-14")
            else:
                # A restart's or a broken connection's backout is a backout: CORE-15 explains what it restores first.
                ended = ("CORE-15", rule) if rule in ("CORE-32", *_BROKEN_RULES) else (rule, "CORE-15")
                s.queue(entry.queue).update(
                    m, got_by=None, backout_count=m.backout_count + 1,
                    provenance=(marked_rules if m.seq in special else ()) + ended + entry.why + ("CORE-17",),
                    count_since=_since(m, ("CORE-15", "CORE-17") + ((rule,) if rule == "CORE-46" else ())))

                applied += ["CORE-15", "CORE-17"]
    if not commit:
        # expired messages its gets discarded stay discarded, their reports put (EXP-13): one back, or a second
        # report, is that rule's departure
        for name in c.discarded:
            if name in s.queues:
                s.queue(name).departed(("EXP-13",))
    if not commit and c.loose_mark in s.queues:
        # a get marked outside syncpoint that a system made in this unit of work after all (SYNC-10) comes back now
        s.queue(c.loose_mark).departed(("SYNC-10",))
    c.discarded = ()
    c.uow.clear()
    c.marked = c.skipped = None
    if c.loose_mark and not commit and rule not in _UNREQUESTED_BACKOUTS and not c.loose_skipped:
        # a system that kept the loose mark skips an application's backout with it (SYNC-10, SYNC-03): the next
        # mark in the new unit of work may still be refused as a second one
        c.loose_skipped = True
    else:
        c.loose_mark, c.loose_skipped = "", False
    applied += trigger.end_of_unit_of_work(s, conn, commit)
    return applied


def _put_deleted_by(rule: str) -> tuple[str, ...]:
    """The rules by which a backout for ``rule`` deletes a put of its unit of work: a plain backout's by CORE-03 alone
    (CORE-15 is how it reinstates its gets); a skipping backout's by its own rule alone (SYNC-13, the special case
    of CORE-03); any other (an abnormal end, a restart, a broken connection) by both."""
    if rule == "CORE-15":
        return ("CORE-03",)
    if rule.startswith("SYNC-"):
        return (rule,)
    return _most_specific_first("CORE-03", rule)


def _most_specific_first(core_rule: str, rule: str) -> tuple[str, ...]:
    """A removal's rules: another area's rule (the reason for ending the UOW) before the core one."""
    # A broken connection is the reason its puts go, as another area's rule would be.
    return (rule, core_rule) if not rule.startswith("CORE-") or rule in _BROKEN_RULES else (core_rule, rule)


def _release_handle(s: ModelState, name: str) -> list[tuple[ModelState, tuple[str, ...]]]:
    """Close handle ``name`` in ``s``; returns the alternatives condition 12 allows."""
    h = s.handles.pop(name)
    if s.queues[h.queue].locked:
        s.queue(h.queue).unlock(name)
    return trigger.after_close(s, h.queue, h.can_input, s.qmgr_of(h.conn))


#: Input handles on different queues whose closing orders a disconnect's alternatives run through:
#: beyond it they are closed in one order only (a case seldom holds more).
MAX_ORDERED_CLOSES = 4


def _close_all(s: ModelState, conn: str) -> list[tuple[ModelState, tuple[str, ...]]]:
    """Every handle of ``conn`` closed, as at MQDISC or an abnormal end.

    MQ does not say in which order a connection's handles are closed then, so where closing
    input handles on different queues may each create a trigger message (condition 12) every order
    is an alternative: the trigger messages may reach the initiation queue in any order.
    """
    names = sorted(n for n, h in s.handles.items() if h.conn == conn)
    inputs = [n for n in names if s.handles[n].can_input]
    first = [n for n in names if n not in inputs]
    by_queue: dict[str, list[str]] = {}
    for n in inputs:
        by_queue.setdefault(s.handles[n].queue, []).append(n)
    if len(by_queue) < 2 or len(by_queue) > MAX_ORDERED_CLOSES:
        orders = [first + inputs]
    else:
        orders = [first + [n for q in queues for n in by_queue[q]]
                  for queues in itertools.permutations(sorted(by_queue))]
    alts = []
    for index, order in enumerate(orders):
        start = s if index == len(orders) - 1 else s.clone()
        branch = [(start, ())]
        for name in order:
            branch = [(t2, r + r2) for t, r in branch for t2, r2 in _release_handle(t, name)]
        alts += branch
    return alts


@handles(L.Disconnect)
def disconnect(state: ModelState, op: L.Disconnect) -> list[Branch]:
    err = _conn_or_error(state, op.conn)
    if err:
        return [err]
    outcomes = []
    if op.abnormal:
        choices = [(False, "CORE-31")]
    elif state.platform == C.PLATFORM_DISTRIBUTED:
        choices = [(True, "CORE-30")]
    else:
        # MQ documents the implicit commit on MQDISC for distributed platforms and
        # z/OS clients; for other z/OS environments both dispositions are allowed.
        choices = [(True, "CORE-30"), (False, "CORE-31")]
    for commit, rule in choices:
        s = state.clone()
        applied = _end_uow(s, op.conn, commit, rule)
        for t, extra in _close_all(s, op.conn):
            del t.conns[op.conn]
            outcomes.append(Branch(observation=L.OK, state=t,
                                   rules=tuple(dict.fromkeys([rule, *applied, *extra]))))
    return outcomes


@handles(L.Commit, L.Backout)
def end_unit_of_work(state: ModelState, op) -> list[Branch]:
    err = _conn_or_error(state, op.conn)
    if err:
        return [err]
    commit = isinstance(op, L.Commit)
    c = state.conns[op.conn]
    if c.marked is not None or c.skipped is not None:
        from reference_model import syncpoint

        return syncpoint.end_unit_of_work(state, op.conn, commit)
    s = state.clone()
    applied = _end_uow(s, op.conn, commit, "CORE-29" if commit else "CORE-15")
    rules = tuple(dict.fromkeys(["CORE-29" if commit else "CORE-15", *applied]))
    return [Branch(observation=L.OK, state=s, rules=rules)]


def backout_keeping(state: ModelState, conn: str, kept: str, why: str = "CORE-15") -> ModelState | None:
    """``conn``'s unit of work backed out but for its ``kept`` ("puts": they stay, committed; "gets": their
    messages stay gone): what a system that breaks one rule of a backout (CORE-03, CORE-15) alone leaves, backing
    it out for ``why`` (the application's MQBACK, CORE-15; an abnormal end, a broken connection, a restart).  None
    where ``conn`` has none, or where the application backs out a marked get (skipping backout has rules of its
    own; a backout it did not ask for, or one of the unit of work a skipped get went on in, is a plain one)."""
    c = state.conns.get(conn)
    if c is None or c.marked is not None and why not in _UNREQUESTED_BACKOUTS:
        return None
    s = state.clone()
    _end_uow(s, conn, kept == "puts", why, gets_commit=kept == "gets",
             relaxed="CORE-03" if kept == "puts" else "CORE-15")
    return s


@handles(L.Restart)
def restart(state: ModelState, op: L.Restart) -> list[Branch]:
    if state.group:
        raise HistoryError("the restart of one queue manager of a queue-sharing group is not modelled")
    s = state.clone()
    applied: list[str] = []
    # Counts a backout gave before the restart (CORE-45 is about those surviving it).
    before = {(q.name, m.seq): m.backout_count for q in s.queues.values() for m in q.messages if m.backout_count}
    for conn in list(s.conns):
        # In-flight units of work are backed out: a get's message is restored with its count raised (CORE-15).
        applied += _end_uow(s, conn, False, "CORE-32")
    s.handles.clear()  # the queue manager stops: no MQCLOSE, so no trigger (condition 12)
    s.conns.clear()
    s.armed = frozenset()
    trigger.on_restart(s)
    unhardened = s.platform == C.PLATFORM_ZOS
    for name in list(s.queues):
        if not s.queues[name].messages:
            continue
        q = s.queue(name)
        for m in list(q.messages):
            if m.locked_by is not None:
                m = q.update(m, locked_by=None)
            if m.md.persistence != C.MQPER_PERSISTENT:
                s.discard(q.name, m, ("CORE-32",))
            elif m.backout_count:
                # The count survives (CORE-45); on z/OS one not hardened may come back lower, to nothing (SYNC-19).
                # A count the restart's own backout gave is explained by that backout first (CORE-15).
                rule = "SYNC-19" if unhardened else "CORE-45"
                uncertain = m.backout_count if unhardened and q.attr("HARDENBO") != C.MQQA_BACKOUT_HARDENED else 0
                if before.get((q.name, m.seq)):
                    provenance = (rule, "CORE-32") + m.provenance   # a count from before: its survival first
                else:
                    provenance = m.provenance + ("CORE-32", rule)   # the restart's own backout made it (CORE-15 first)
                q.update(m, backout_uncertain=uncertain, provenance=tuple(dict.fromkeys(provenance)),
                         count_since=_since(m, (rule,)))
                applied.append(rule)
    return [Branch(observation=L.OK, state=s, rules=tuple(dict.fromkeys(["CORE-32", *applied])))]


# ---------------------------------------------------------------- open / close


@handles(L.Open)
def open_queue(state: ModelState, op: L.Open) -> list[Branch]:
    err = _conn_or_error(state, op.conn)
    if err:
        return [err]
    if op.handle in state.handles:
        raise HistoryError(f"handle name {op.handle!r} is already in use")
    op = attrs.evolve(op, queue=state.where(state.qmgr_of(op.conn), op.queue))
    q = state.queues.get(op.queue)
    if q is None:
        return [_fail(state, C.MQRC_UNKNOWN_OBJECT_NAME, "CORE-33")]
    known = C.MQOO_INPUT_ANY | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_SET
    inputs = op.options & C.MQOO_INPUT_ANY
    if op.options & ~known or op.options & known == 0 or bin(inputs).count("1") > 1:
        return [_fail(state, C.MQRC_OPTIONS_ERROR, "CORE-23")]
    mode = 0
    if inputs:
        mode = q.attr("DEFSOPT") if inputs == C.MQOO_INPUT_AS_Q_DEF else inputs
        others = [h for h in state.handles.values() if h.queue == op.queue and h.can_input]
        if others and (
            mode == C.MQOO_INPUT_EXCLUSIVE
            or any(h.input_mode == C.MQOO_INPUT_EXCLUSIVE for h in others)
        ):
            return [_fail(state, C.MQRC_OBJECT_IN_USE, "CORE-23")]
    s = state.clone()
    s.handles[op.handle] = ModelHandle(
        name=op.handle, conn=op.conn, queue=op.queue, options=op.options, input_mode=mode
    )
    if not inputs:
        return [Branch(observation=L.OK, state=s)]
    others = any(h.queue == op.queue and h.can_input for h in state.handles.values())
    return [Branch(observation=L.OK, state=t, rules=("CORE-23",) + extra)
            for t, extra in trigger.after_open(s, op.queue, others)]


@handles(L.Close)
def close(state: ModelState, op: L.Close) -> list[Branch]:
    err = _handle_or_error(state, op.conn, op.handle)
    if err:
        return [err]
    s = state.clone()
    return [Branch(observation=L.OK, state=t, rules=("CORE-39",) + extra)
            for t, extra in _release_handle(s, op.handle)]


# ---------------------------------------------------------------- put


def _put_syncpoint(state: ModelState, options: int) -> bool:
    if options & C.MQPMO_SYNCPOINT:
        return True
    if options & C.MQPMO_NO_SYNCPOINT:
        return False
    return state.platform == C.PLATFORM_ZOS  # CORE-35


def _put_errors(state: ModelState, q: ModelQueue, md: L.MessageDescriptor, options: int,
                xmit: L.XmitHeader | None = None) -> tuple[list[tuple[int, str]], list[tuple[int, str]], tuple]:
    """(certain errors, errors MQ may or may not give, rules of an accepted put)."""
    errors = []
    maybe = []
    accept: tuple[str, ...] = ()
    for rc, rule in expiry.put_outcomes(md, xmit):
        if rc == C.MQRC_NONE:
            accept += (rule,)
        elif rule in accept:
            maybe.append((rc, rule))
        else:
            errors.append((rc, rule))
    if options & C.MQPMO_SYNCPOINT and options & C.MQPMO_NO_SYNCPOINT:
        errors.append((C.MQRC_OPTIONS_ERROR, "CORE-34"))
    if md.priority < C.MQPRI_PRIORITY_AS_Q_DEF:
        errors.append((C.MQRC_PRIORITY_ERROR, "CORE-09"))
    if md.persistence not in (C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT, C.MQPER_PERSISTENCE_AS_Q_DEF):
        errors.append((C.MQRC_PERSISTENCE_ERROR, "CORE-10"))
    if q.attr("PUT") == C.MQQA_PUT_INHIBITED:
        errors.append((C.MQRC_PUT_INHIBITED, "CORE-26"))
    depths = {d for d, _ in expiry.depth_range(state, q, _curdepth(q))}
    if min(depths) >= q.attr("MAXDEPTH"):
        errors.append((C.MQRC_Q_FULL, "CORE-27"))
    elif max(depths) >= q.attr("MAXDEPTH"):
        maybe.append((C.MQRC_Q_FULL, "CORE-27"))  # expired messages may have gone in the background
    return errors, maybe, accept


#: Rules of a message's past that leave it counted in CURDEPTH as a plain put would: a full queue is never
#: theirs to explain.
_COUNTED_ALIKE = ("CORE-01", "CORE-02", "CORE-28", "CORE-29", "CORE-30", "CORE-17")


def _full_rules(state: ModelState, q: ModelQueue) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Why the queue is full besides MAXDEPTH itself, as (lead, rest): uncommitted puts count (CORE-28),
    expired messages not yet discarded count (EXP-11) where the queue holds any, and what kept or put
    each counted message there beyond a plain put (a disconnect's commit, a backout, a restart): a
    system that has room lost one of them.  Such a rule without which the queue would not be full
    leads, before MAXDEPTH: a system that mishandles MAXDEPTH itself fails with plain puts alone, so
    a minimal history that still needs the disconnect, the backout or the restart points at it.
    (Uncommitted puts do not lead: a put's syncpoint option is not dropped by minimising, so a
    minimal history of a MAXDEPTH fault may well count uncommitted puts.)"""
    counted = [m for m in q.messages if m.got_by is None]
    expired = q.expiring and any(expiry.status(state, m) != expiry.LIVE for m in counted)
    # each counted message's rules beyond a plain put; a commit of its put is not one (committed or
    # not, a put counts alike), nor the count of its backouts
    special = [[r for r in m.provenance if r not in _COUNTED_ALIKE] for m in counted]
    kept = tuple(dict.fromkeys(r for rules in special for r in rules))[:4]
    maxdepth = q.attr("MAXDEPTH")
    needed = [r for r in kept if sum(r not in rules for rules in special) < maxdepth]
    # uncommitted puts count (CORE-28) only where some are counted
    uncommitted = ("CORE-28",) if any(m.put_by is not None for m in counted) else ()
    rest = uncommitted + (("EXP-11",) if expired else ()) + kept
    return tuple(needed), tuple(r for r in rest if r not in needed)


#: How many ways of splitting one message into segments the model follows; more is refused as a history
#: the model cannot check (a machine keeps MAXMSGL at or near 16 bytes, where there is one way).
MAX_SEGMENTATIONS = 64


def segmentations(length: int, maxl: int) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """The ways a queue manager may split ``length`` bytes into segments of at most ``maxl`` (CORE-50).

    Returns (splits whose every segment has at least 16 bytes, splits only the last segment of which is
    shorter).  MQ says the smallest segment it creates is 16 bytes: the second list is followed only where
    the first is empty (whether a last, remaining piece may be shorter is not said)."""
    low = C.MIN_SEGMENT
    if maxl < low:
        return [], []
    # whole[n]: in how many ways n bytes split into pieces of low..maxl (capped), so that the walk below
    # only takes pieces after which the rest still splits
    cap = MAX_SEGMENTATIONS + 1
    whole = [1] + [0] * length
    for n in range(low, length + 1):
        whole[n] = min(cap, sum(whole[n - k] for k in range(low, min(maxl, n) + 1)))

    def splits(last_min: int) -> list[tuple[int, ...]]:
        lasts = [r for r in range(max(last_min, 1), min(maxl, length) + 1) if whole[length - r]]
        if sum(whole[length - r] for r in lasts) > MAX_SEGMENTATIONS:
            raise HistoryError(f"a message of {length} bytes splits into segments of at most {maxl} in more "
                               f"than {MAX_SEGMENTATIONS} ways: too many for the model to follow")
        found: list[tuple[int, ...]] = []
        for last in lasts:
            stack: list[tuple[int, tuple[int, ...]]] = [(length - last, ())]
            while stack:
                left, taken = stack.pop()
                if left == 0:
                    found.append(taken + (last,))
                    continue
                for k in range(min(maxl, left), low - 1, -1):
                    if whole[left - k]:
                        stack.append((left - k, taken + (k,)))
        return sorted(found)

    sure = splits(low)
    if sure:
        return sure, []
    return [], [p for p in splits(1) if p[-1] < low]


def _length_outcomes(state: ModelState, q: ModelQueue, body: str, md: L.MessageDescriptor
                     ) -> tuple[list[tuple[int, ...] | None], list[tuple[int, str]], list[tuple[int, str]]]:
    """(ways the message goes on the queue, certain errors, possible errors) by its length (CORE-49/50).

    A way is ``None`` for one message, or the sizes of its segments."""
    maxl = q.attr("MAXMSGL")
    if len(body) <= maxl:
        return [None], [], []
    if not md.msg_flags & C.MQMF_SEGMENTATION_ALLOWED or state.platform == C.PLATFORM_ZOS:
        return [], [(C.MQRC_MSG_TOO_BIG_FOR_Q, "CORE-49")], []
    sure, short = segmentations(len(body), maxl)
    if sure:
        return sure, [], []
    if short:
        return list(short), [], [(C.MQRC_MSG_TOO_BIG_FOR_Q, "CORE-50")]
    return [], [(C.MQRC_MSG_TOO_BIG_FOR_Q, "CORE-50")], []


def _do_put(state: ModelState, conn: str, queue: str, body: str, md: L.MessageDescriptor,
            options: int, extra_rules: tuple[str, ...], xmit: L.XmitHeader | None = None,
            dlh: L.DeadLetterHeader | None = None, provenance: tuple[str, ...] = (),
            decided: tuple = (), embedded: int | None = None) -> list[Branch]:
    q = state.queues[queue]
    errors, maybe, accept = _put_errors(state, q, md, options, xmit)
    ways, too_big, too_big_maybe = _length_outcomes(state, q, body, md)
    errors += too_big
    maybe += too_big_maybe
    failures = [
        # the rule that refuses the put is what a system that accepts it breaks; MQPUT1's "same rules
        # as a put" (CORE-37) is exercised but not broken when a put would have been accepted too
        Branch(observation=L.Observation.of(rc), state=state, rules=lead + (rule,) + extra_rules + rest,
               field_rules={"rc": lead + (rule,) + rest})
        for rc, rule in errors + maybe
        for lead, rest in [_full_rules(state, q) if rc == C.MQRC_Q_FULL else ((), ())]
    ]
    if errors:
        return failures
    out = failures
    for sizes in ways:
        if sizes is not None and _curdepth(q) + len(sizes) > q.attr("MAXDEPTH"):
            # no room for every segment
            out.append(Branch(observation=L.Observation.of(C.MQRC_Q_FULL), state=state,
                              rules=("CORE-27", "CORE-50") + extra_rules, field_rules={"rc": ("CORE-27", "CORE-50")}))
            continue
        out += _placed(state, conn, queue, body, md, options, extra_rules, accept, maybe, sizes, xmit, dlh,
                       provenance, decided, embedded)
    return out


def _placed(state: ModelState, conn: str, queue: str, body: str, md: L.MessageDescriptor, options: int,
            extra_rules: tuple[str, ...], accept: tuple[str, ...], maybe: list, sizes: tuple[int, ...] | None,
            xmit: L.XmitHeader | None, dlh: L.DeadLetterHeader | None, provenance: tuple[str, ...],
            decided: tuple, embedded: int | None) -> list[Branch]:
    """The put accepted, the message placed whole (``sizes`` None) or as segments of those sizes."""
    s = state.clone()
    q = s.queue(queue)
    if any(rc == C.MQRC_Q_FULL for rc, _ in maybe):
        # accepted: enough expired messages must already have gone for the depth to be below MAXDEPTH
        q.background_removed = max(q.background_removed, _curdepth(q) - q.attr("MAXDEPTH") + 1)
    rules = list(extra_rules) + list(accept)
    if md.expiry != C.MQEI_UNLIMITED:
        rules.append("EXP-01")
    priority = md.priority
    # which rule resolved the message's Priority and Persistence, for a get that returns them otherwise (none:
    # they are the values put, CORE-11's)
    resolved_by: list[tuple[str, tuple[str, ...]]] = []
    if priority == C.MQPRI_PRIORITY_AS_Q_DEF:
        priority = q.attr("DEFPRTY")
        rules.append("CORE-07")
        resolved_by.append(("priority", ("CORE-07",)))
    persistence = md.persistence
    if persistence == C.MQPER_PERSISTENCE_AS_Q_DEF:
        persistence = q.attr("DEFPSIST")
        rules.append("CORE-10")
        resolved_by.append(("persistence", ("CORE-10",)))
    rc = C.MQRC_NONE
    if priority > C.MAX_PRIORITY:
        rc = C.MQRC_PRIORITY_EXCEEDS_MAXIMUM
        rules.append("CORE-08")
        resolved_by.append(("priority", ("CORE-08",)))
    decided = tuple(resolved_by) + tuple(decided)
    if q.attr("MSGDLVSQ") == C.MQMDS_FIFO:
        order_priority = q.attr("DEFPRTY")
    else:
        order_priority = min(priority, C.MAX_PRIORITY)
    sync = _put_syncpoint(state, options)
    rules.append("CORE-02" if sync else "CORE-01")
    if not options & (C.MQPMO_SYNCPOINT | C.MQPMO_NO_SYNCPOINT):
        rules.append("CORE-35")
    resolved = L.MessageDescriptor(
        priority=priority, persistence=persistence, expiry=md.expiry, report=md.report,
        msg_type=md.msg_type, feedback=md.feedback, format=md.format, reply_to_q=md.reply_to_q,
        msg_id=md.msg_id, correl_id=md.correl_id, backout_count=0,
        reply_to_qmgr=md.reply_to_qmgr, context=md.context, msg_flags=md.msg_flags,
    )
    if md.context is not None:
        rules.append("CORE-44")
    pieces: list[tuple[str, str, int]] = [(body, C.MQSS_NOT_A_SEGMENT, 0)]
    if sizes is not None:
        rules += ["CORE-49", "CORE-50"]
        pieces, at = [], 0
        for i, size in enumerate(sizes):
            pieces.append((body[at:at + size], C.MQSS_LAST_SEGMENT if i == len(sizes) - 1 else C.MQSS_SEGMENT, at))
            at += size
    placed = []
    for piece, segment, offset in pieces:
        m = ModelMessage(
            seq=s.next_seq, body=piece, md=resolved, order_priority=order_priority,
            put_time=s.clock, put_by=conn if sync else None,
            provenance=provenance + (("CORE-02",) if sync else ("CORE-01",))
            + (("CORE-50",) if sizes is not None else ()),
            decided=decided, dlh=dlh, segment=segment, offset=offset,
            xmit_expiry=embedded if embedded is not None
            else xmit.expiry if xmit is not None and md.format == C.MQFMT_XMIT_Q_HEADER else None,
        )
        s.next_seq += 1
        q.append(m)
        placed.append(m)
        if sync:
            s.conn(conn).uow.append(UowEntry(kind="put", queue=queue, seq=m.seq))
    # The reason code of an accepted put is decided by the priority rule alone (a warning or none):
    # a system that gets it wrong breaks CORE-08, not the syncpoint or context rules of the same put,
    # nor MQPUT1's "same rules as a put" when a put would have done the same.
    decides_rc = {"rc": ("CORE-08",)} if rc == C.MQRC_PRIORITY_EXCEEDS_MAXIMUM else {}
    if sizes is not None:
        # refused where MQ would segment it: the segmentation rule (CORE-49's refusal holds only where the queue
        # manager may not segment the message)
        decides_rc.setdefault("rc", ("CORE-50",))
    if q.departures:
        # A system refusing this put as full holds messages that had left the queue (unless the put
        # filled it exactly: then MAXDEPTH itself leads).
        filled = _curdepth(q) >= q.attr("MAXDEPTH")
        decides_rc["rc:full"] = ("CORE-27", *q.departures) if filled else (*q.departures, "CORE-27")
    else:
        # Refused as full with room: MAXDEPTH, or messages got under syncpoint counted (CORE-28 leaves them out).
        decides_rc["rc:full"] = ("CORE-27",) + (("CORE-28",) if any(m.got_by is not None for m in q.messages) else ())
    return [
        Branch(observation=L.Observation.of(rc), state=t, rules=tuple(dict.fromkeys(rules + list(extra))),
               field_rules=decides_rc)
        for t, extra in trigger.after_put(s, queue, placed[0], conn, sync, added=len(placed))
    ]


@handles(L.Put)
def put(state: ModelState, op: L.Put) -> list[Branch]:
    err = _handle_or_error(state, op.conn, op.handle)
    if err:
        return [err]
    h = state.handles[op.handle]
    if not h.can_output:
        return [_fail(state, C.MQRC_NOT_OPEN_FOR_OUTPUT, "CORE-22")]
    return _do_put(state, op.conn, h.queue, op.body, op.md, op.options, (), op.xmit_header, op.dlh)


@handles(L.Put1)
def put1(state: ModelState, op: L.Put1) -> list[Branch]:
    err = _conn_or_error(state, op.conn)
    if err:
        return [err]
    if op.qmgr:
        xmitq = state.queues.get(op.qmgr)
        if xmitq is None or xmitq.attr("USAGE") != C.MQUS_TRANSMISSION:
            return [_fail(state, C.MQRC_UNKNOWN_REMOTE_Q_MGR, "CORE-43", "CORE-37")]
        return _remote_put(state, op, op.qmgr)
    remote = state.remotes.get(op.queue)
    if remote is not None:
        xmitq = remote.xmitq or remote.rqmname
        if state.queues.get(xmitq) is None or state.queues[xmitq].attr("USAGE") != C.MQUS_TRANSMISSION:
            return [_fail(state, C.MQRC_UNKNOWN_REMOTE_Q_MGR, "CORE-43", "CORE-37")]
        return _remote_put(state, op, xmitq)
    queue = state.where(state.qmgr_of(op.conn), op.queue)
    if queue not in state.queues:
        return [_fail(state, C.MQRC_UNKNOWN_OBJECT_NAME, "CORE-33", "CORE-37")]
    return _do_put(state, op.conn, queue, op.body, op.md, op.options, ("CORE-37",), op.xmit_header, op.dlh)


def _remote_put(state: ModelState, op: L.Put1, xmitq: str) -> list[Branch]:
    """A put to a remote queue: an MQXMIT message on transmission queue ``xmitq`` whose two Expiry
    fields (its MQMD's and the MQXQH's embedded one) both hold the value the application set (EXP-18)."""
    md = attrs.evolve(op.md, format=C.MQFMT_XMIT_Q_HEADER)
    return _do_put(state, op.conn, xmitq, op.body, md, op.options, ("CORE-37", "EXP-18"), None, op.dlh,
                   provenance=("EXP-18",), embedded=op.md.expiry,
                   decided=(("expiry", ("EXP-18", "EXP-03", "EXP-02")), ("xmit_header", ("EXP-18", "EXP-20"))))


@handles(L.DefineRemoteQueue)
def define_remote_queue(state: ModelState, op: L.DefineRemoteQueue) -> list[Branch]:
    if op.queue in state.queues or op.queue in state.remotes:
        return [_fail(state, C.MQRCCF_OBJECT_ALREADY_EXISTS, "CORE-41")]
    s = state.clone()
    s.remotes = {**s.remotes, op.queue: op}
    return [Branch(observation=L.OK, state=s, rules=("CORE-41",))]


# ---------------------------------------------------------------- get and browse


def _returned(state: ModelState, m: ModelMessage) -> L.ReturnedMessage:
    md = m.md
    returned = L.ReturnedMessage(
        body=m.body, priority=md.priority, persistence=md.persistence,
        expiry=expiry.returned_expiry(state, m), report=md.report, msg_type=md.msg_type,
        feedback=md.feedback, format=md.format, reply_to_q=md.reply_to_q, msg_id=md.msg_id or None,
        correl_id=md.correl_id,
        backout_count=L.IntRange(lo=m.backout_count - m.backout_uncertain, hi=m.backout_count)
        if m.backout_uncertain else m.backout_count,
        xmit_header=expiry.returned_xmit_header(state, m),
        reply_to_qmgr=md.reply_to_qmgr, context=md.context, dlh=m.dlh,
        segment_status=m.segment, offset=m.offset,
    )
    open_fields = {**expiry.report_fields(m), **trigger.trigger_fields(m)}
    if m.tm is not None:
        open_fields["trigger"] = m.tm
    return attrs.evolve(returned, **open_fields) if open_fields else returned


def _get_option_errors(op: L.Get) -> list[tuple[int, str]]:
    o = op.options
    errors = []
    browse = o & C.MQGMO_BROWSE_ANY
    if o & C.MQGMO_SYNCPOINT and o & C.MQGMO_NO_SYNCPOINT:
        errors.append((C.MQRC_OPTIONS_ERROR, "CORE-34"))
    if bin(browse).count("1") > 1 or (browse and o & C.MQGMO_MSG_UNDER_CURSOR):
        errors.append((C.MQRC_OPTIONS_ERROR, "CORE-20"))
    if o & C.MQGMO_LOCK and not browse:
        errors.append((C.MQRC_OPTIONS_ERROR, "CORE-21"))
    if o & C.MQGMO_UNLOCK and o & ~(C.MQGMO_UNLOCK | C.MQGMO_NO_SYNCPOINT | C.MQGMO_WAIT):
        errors.append((C.MQRC_OPTIONS_ERROR, "CORE-21"))
    if o & C.MQGMO_WAIT and op.wait_interval < C.MQWI_UNLIMITED:
        errors.append((C.MQRC_WAIT_INTERVAL_ERROR, "CORE-38"))
    if getattr(op, "match_options", 0) & ~C.MQMO_DEFINED:
        errors.append((C.MQRC_MATCH_OPTIONS_ERROR, "CORE-54"))
    return errors


#: The get options that get or browse the message under the cursor.
UNDER_CURSOR = C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR


def selects(op: L.Op) -> bool:
    """A get with match options the language carries (MsgId, CorrelId), even ones given MQMI_NONE or
    MQCI_NONE: a get that selects, unless it is under the cursor, which ignores them (CORE-53)."""
    return isinstance(op, L.GetMatching) and bool(op.match_options & C.MQMO_MODELLED)


def selection(op: L.Op) -> tuple[str, str]:
    """The (MsgId, CorrelId) a get selects by, "" for any (CORE-51); none under the cursor (CORE-53)."""
    if not selects(op) or op.options & UNDER_CURSOR:
        return "", ""
    return criteria(op)


def criteria(op: L.GetMatching) -> tuple[str, str]:
    """The (MsgId, CorrelId) ``op``'s match options name, "" for any, whether or not the get applies them."""
    mo = op.match_options
    return (op.msg_id if mo & C.MQMO_MATCH_MSG_ID else "", op.correl_id if mo & C.MQMO_MATCH_CORREL_ID else "")


def satisfies(criteria: tuple[str, str], m: ModelMessage) -> bool:
    """Does ``m`` satisfy a get's selection ``criteria``?  MQMI_NONE and MQCI_NONE ("") match any value."""
    msg_id, correl_id = criteria
    return (not msg_id or m.md.msg_id == msg_id) and (not correl_id or m.md.correl_id == correl_id)


def _visibility(state: ModelState, m: ModelMessage, h: ModelHandle,
                own_uncommitted: bool) -> tuple[str, ...] | None:
    """``None`` when ``m`` is available to handle ``h``; otherwise the rules that hide it."""
    if m.got_by is not None:
        if state.conns[m.got_by].skipped == m.seq:
            return ("SYNC-14", "SYNC-03")
        return ("CORE-14",)
    if m.put_by is not None and (m.put_by != h.conn or not own_uncommitted):
        return ("CORE-02",)
    if m.locked_by is not None and m.locked_by != h.name:
        return ("CORE-21",)
    return None


def _order_rules(state: ModelState, q: ModelQueue, h: ModelHandle, own_uncommitted: bool,
                 chosen: ModelMessage) -> tuple[str, ...]:
    """The order rules a get returning ``chosen`` exercised: CORE-04 when a message of another
    priority was also available behind it, CORE-05 when one of the same priority was."""
    if q.attr("MSGDLVSQ") == C.MQMDS_FIFO:
        return ("CORE-06",)
    p = chosen.order_priority
    after = q.position(chosen.order_key) + 1
    lower = q.position((-p + 1, 0))        # the first message of a lower priority
    rules = []
    if next(_visible_from(state, q, h, own_uncommitted, lower), None) is not None:
        rules.append("CORE-04")
    same = q.ordered[after:lower]
    if any(_visibility(state, m, h, own_uncommitted) is None for m in same):
        rules.append("CORE-05")
    return tuple(rules)


@handles(L.Get, L.GetMatching)
def get(state: ModelState, op: L.Get) -> list[Branch]:
    err = _handle_or_error(state, op.conn, op.handle)
    if err:
        return [err]
    h = state.handles[op.handle]
    q = state.queues[h.queue]
    o = op.options
    errors = _get_option_errors(op)
    if errors:
        return _failures(state, errors)
    if o & C.MQGMO_UNLOCK:
        return _unlock(state, h)
    browse = o & C.MQGMO_BROWSE_ANY
    if browse and not h.can_browse:
        return [_fail(state, C.MQRC_NOT_OPEN_FOR_BROWSE, "CORE-22")]
    if not browse and not h.can_input:
        return [_fail(state, C.MQRC_NOT_OPEN_FOR_INPUT, "CORE-22")]
    if q.attr("GET") == C.MQQA_GET_INHIBITED:
        return [_fail(state, C.MQRC_GET_INHIBITED, "CORE-25")]
    if o & C.MQGMO_MARK_SKIP_BACKOUT:
        from reference_model import syncpoint

        return syncpoint.marked_get(state, op, h)
    # reports of messages removed in the background may have arrived on this queue (EXP-26, EXP-08)
    branches = _after_report_removals(state, h.queue, False, lambda s: plain_get(s, op, s.handles[op.handle]))
    if state.platform == C.PLATFORM_ZOS and any(selection(op)):
        # z/OS: the criteria that can be used "might be restricted by the type of index" (CORE-51's note)
        branches.append(_fail(state, C.MQRC_MATCH_OPTIONS_ERROR, "CORE-51"))
    return branches


def plain_get(state: ModelState, op: L.Get, h: ModelHandle, mark: bool = False) -> list[Branch]:
    """The outcomes of a get that passed the option, handle and inhibit checks."""
    q = state.queues[h.queue]
    o = op.options
    browse = o & C.MQGMO_BROWSE_ANY
    own = bool(q.uncommitted) and any(m.put_by == h.conn and m.got_by is None for m in q.messages)
    # CORE-02 note: whether a connection sees its own uncommitted puts is undocumented.
    # Whether a browse without LOCK releases this handle's lock is not documented.
    holds_lock = browse and not o & C.MQGMO_LOCK and bool(q.locked) \
        and any(m.locked_by == h.name for m in q.messages)
    branches = []
    for own_uncommitted in ((False, True) if own else (False,)):
        for keep_lock in ((True, False) if holds_lock else (True,)):
            branches += _get_from(state, op, h, own_uncommitted, keep_lock, mark)
    return branches


def _unlock(state: ModelState, h: ModelHandle) -> list[Branch]:
    locked = [m for m in state.queues[h.queue].messages if m.locked_by == h.name]
    if not locked:
        return [_fail(state, C.MQRC_NO_MSG_LOCKED, "CORE-21")]
    s = state.clone()
    s.queue(h.queue).unlock(h.name)
    return [Branch(observation=L.OK, state=s, rules=("CORE-21",))]


def _excluded(state: ModelState, q: ModelQueue, h: ModelHandle, own_uncommitted: bool,
              criteria: tuple[str, str] = ("", "")) -> dict:
    """Messages (by body) a get does not return to ``h``, and the rules why, over the whole queue."""
    table = {}
    for m in q.ordered:
        hidden = _visibility(state, m, h, own_uncommitted)
        if hidden is not None:
            table[m.body] = hidden
        elif not satisfies(criteria, m):
            table[m.body] = ("CORE-51", "CORE-52")
        elif q.expiring and expiry.status(state, m) != expiry.LIVE:
            # if returned anyway; one backed out kept its original expiry and may have expired since (EXP-14)
            table[m.body] = ("EXP-06", "EXP-04") + (("EXP-14",) if m.backout_count else ()) + (
                ("EXP-07",) if q.attr("USAGE") == C.MQUS_TRANSMISSION else ())

    return table


def _visible_from(state: ModelState, q: ModelQueue, h: ModelHandle, own_uncommitted: bool, start: int,
                  criteria: tuple[str, str] = ("", "")):
    """Messages available to ``h`` in delivery order, from index ``start`` of the queue's order, that
    satisfy the get's selection ``criteria`` (CORE-52: the others are passed over)."""
    ordered = q.ordered
    selecting = any(criteria)
    for i in range(start, len(ordered)):
        m = ordered[i]
        if _visibility(state, m, h, own_uncommitted) is None and (not selecting or satisfies(criteria, m)):
            yield m


def _get_from(state: ModelState, op: L.Get, h: ModelHandle, own_uncommitted: bool,
              keep_lock: bool = True, mark: bool = False) -> list[Branch]:
    o = op.options
    q = state.queues[h.queue]
    under_cursor = o & UNDER_CURSOR
    criteria = selection(op)
    # a get that selects: even by MQMI_NONE / MQCI_NONE, which match any message (CORE-51)
    selecting = ("CORE-51", "CORE-52") if selects(op) and not under_cursor else ()
    # A get looks only as far down the queue as it must; what it passed over is worked out
    # when a failure (or a get that found nothing) needs it.
    excluded = Lazy(lambda: _excluded(state, q, h, own_uncommitted, criteria))
    if under_cursor:
        # a get that would select, here ignoring its selection: the message under the cursor it is
        ignored = ("CORE-53",) if selects(op) else ()
        target = q.find(h.cursor_seq) if h.cursor_seq is not None else None
        if target is None or _visibility(state, target, h, own_uncommitted) is not None:
            return [Branch(observation=L.Observation.of(C.MQRC_NO_MSG_UNDER_CURSOR), state=state,
                           rules=("CORE-20",) + ignored, excluded=excluded)]
        out = []
        if expiry.status(state, target) != expiry.LIVE:
            # EXP-15: it expired under the cursor; whether this call also discards it is not said.
            gone = state.clone()
            expiry.discard(gone, h.queue, gone.find(h.queue, target.seq), ("EXP-15", "EXP-04"))
            # returned anyway: the rule about the message under the cursor expiring is the one broken
            under = {**excluded, target.body: ("EXP-15",) + excluded.get(target.body, ())}
            for st_ in (state, gone):
                out.append(Branch(observation=L.Observation.of(C.MQRC_NO_MSG_UNDER_CURSOR), state=st_,
                                  rules=("EXP-15", "CORE-20"), excluded=under))
        if expiry.status(state, target) != expiry.EXPIRED:
            out.append(_deliver(state, op, h, [], target, ignored + ("CORE-20",), excluded, keep_lock, mark))
        return out
    if o & C.MQGMO_BROWSE_NEXT and h.cursor is not None:
        # past the cursor: the first position after it (order keys are unique)
        start = q.position((h.cursor[0], h.cursor[1] + 1))
        order_base = ("CORE-19",)
    else:
        start = 0
        order_base = ("CORE-18",) if o & C.MQGMO_BROWSE_FIRST else ()
        if o & C.MQGMO_BROWSE_NEXT:
            order_base = ("CORE-19",)
    # The get walks down the queue only as far as its first unexpired message (EXP-04/05).
    walked: list[ModelMessage] = []
    for m in _visible_from(state, q, h, own_uncommitted, start, criteria):
        walked.append(m)
        if not q.expiring or expiry.status(state, m) == expiry.LIVE:
            break
    out = []
    for discarded, chosen in expiry.walk(state, walked):
        if chosen is not None:
            # BROWSE_FIRST returns what delivery order puts first: the order rule leads.
            rules = _order_rules(state, q, h, own_uncommitted, chosen)
            order = rules + order_base if order_base == ("CORE-18",) else order_base + rules
            # among the messages selected, delivery order decides (CORE-52: the rule of a get that selects leads
            # the order rules, as one whose plain get departs too is shown with a plain get; a BROWSE_NEXT's cursor
            # before it); MQMI_NONE and MQCI_NONE select all
            among = ("CORE-52",) if any(criteria) else ()
            order = order_base + among + rules if order_base == ("CORE-19",) else among + order
            out.append(_deliver(state, op, h, discarded, chosen, order, excluded, keep_lock, mark, lead=selecting))
            continue
        s = state.clone()
        rules = ("CORE-13",) + selecting + order_base + _discard_all(s, q, h, o, discarded)
        if o & C.MQGMO_WAIT and op.wait_interval > 0:
            s.clock += op.wait_interval // 100
        if start == 0 and not any(criteria):
            trigger.drained(s, h.queue)   # the whole queue seen from its head, and nothing there
        rules += tuple(sorted({r for rs in excluded.values() for r in rs}))

        def why(rules=rules, discarded=discarded) -> dict:   # evaluated later: this walk's discards
            reports = expiry.pending_report_rules(state, h.queue) + trigger.missing_trigger_rules(state, h.queue)
            because = tuple(dict.fromkeys(reports + rules))
            return {"rc": because, "message": because, **expiry.expired_shown(state, discarded)}

        out.append(Branch(observation=L.Observation.of(C.MQRC_NO_MSG_AVAILABLE), state=s,
                          rules=tuple(dict.fromkeys(rules)), excluded=excluded, field_rules=Lazy(why)))
    return out


def _discard_all(s: ModelState, q: ModelQueue, h: ModelHandle, options: int,
                 discarded: list[ModelMessage]) -> tuple[str, ...]:
    """Discard the expired messages a get through ``h`` with ``options`` walked past (EXP-04/05); returns the
    rules applied.  A get under syncpoint notes their queues on its connection (ModelConnection.discarded)."""
    if not discarded:
        return ()
    queue = h.queue
    in_unit_of_work = _get_syncpoint(s, options) is not False
    if _get_syncpoint(s, options) is True:   # in a unit of work whatever it returns
        c = s.conn(h.conn)
        c.discarded = tuple(dict.fromkeys(c.discarded + (queue,) + tuple(
            m.md.reply_to_q for m in discarded if expiry.reports(s, m))))
    rules = ("EXP-04", "EXP-13") if q.attr("MSGDLVSQ") == C.MQMDS_FIFO else ("EXP-05", "EXP-04", "EXP-13")
    if q.attr("USAGE") == C.MQUS_TRANSMISSION:
        rules += ("EXP-07",)   # expired in transit, on a transmission queue
    for m in discarded:
        expiry.discard(s, queue, s.find(queue, m.seq), rules + (("EXP-14",) if m.backout_count else ()),
                       in_unit_of_work=in_unit_of_work)
    reports = ("EXP-08", "EXP-12") if any(m.md.report & C.MQRO_EXPIRATION for m in discarded) else ()
    # A message got in a unit of work that was backed out, expired since: note 5.
    backed_out = ("EXP-14",) if any(m.backout_count for m in discarded) else ()
    return rules + ("EXP-13", "EXP-11") + reports + backed_out


def _deliver(state: ModelState, op: L.Get, h: ModelHandle, discarded: list[ModelMessage],
             chosen: ModelMessage, order: tuple[str, ...], excluded: dict,
             keep_lock: bool, mark: bool, lead: tuple[str, ...] = ()) -> Branch:
    """The branch in which the get returns ``chosen`` after discarding ``discarded``; ``lead``: the rules
    that say a get returns a message at all here (a selection that matches it, CORE-51)."""
    o = op.options
    q = state.queues[h.queue]
    s = state.clone()
    sq = s.queues[h.queue]
    sh = s.handles[h.name]
    rules = list(lead) + list(order) + list(_discard_all(s, sq, h, o, discarded))
    m = s.find(h.queue, chosen.seq)
    rules += list(m.provenance)
    browse = o & C.MQGMO_BROWSE_ANY
    m = s.queue(h.queue).update(m, count_since=())   # its BackoutCount, shown: what changes it from here on
    if browse:
        s.handles[h.name] = attrs.evolve(sh, cursor=m.order_key, cursor_seq=m.seq)
        if o & C.MQGMO_LOCK or not keep_lock:
            sq = s.queue(h.queue)
            sq.unlock(h.name)
            m = sq.find(m.seq)
        if o & C.MQGMO_LOCK:
            m = s.queue(h.queue).update(m, locked_by=h.name)
            rules.append("CORE-21")
        rules.append("CORE-17")
    else:
        sync = _get_syncpoint(state, o)
        why: tuple[str, ...] = ()
        if sync is None:
            rules.append("CORE-36")
            sync = m.md.persistence == C.MQPER_PERSISTENT
            why = ("CORE-36",)
        m = s.queue(h.queue).update(m, locked_by=None, got_by=h.conn if sync else m.got_by)
        if sync:
            conn = s.conn(h.conn)
            if any(e.kind == "get" for e in conn.uow) and (mark or conn.marked is not None):
                rules.append("SYNC-11")
            conn.uow.append(UowEntry(kind="get", queue=h.queue, seq=m.seq, why=why))
            rules.append("CORE-14")
            if mark:
                conn.marked = m.seq
                rules += ["SYNC-09", "SYNC-10"]
        else:
            s.discard(h.queue, m, ("CORE-16",))
            rules.append("CORE-16")
        if not o & (C.MQGMO_SYNCPOINT | C.MQGMO_NO_SYNCPOINT | C.MQGMO_SYNCPOINT_IF_PERSISTENT):
            rules.append("CORE-35")
    returned = _returned(state, chosen)
    if chosen.md.expiry != C.MQEI_UNLIMITED or chosen.xmit_expiry is not None:
        rules += ["EXP-01", "EXP-02", "EXP-03", "EXP-06"]
        if chosen.backout_count:
            rules.append("EXP-14")   # backed out: still ageing from its original put
        if chosen.xmit_expiry is not None:
            rules += ["EXP-20", "EXP-21", "EXP-22"]
    if chosen.tm is not None:
        rules.append("EXP-17")   # a trigger message: its Expiry is checked to be unlimited
    if q.attr("BOTHRESH") and chosen.backout_count >= q.attr("BOTHRESH"):
        rules.append("CORE-42")
    core42 = "CORE-42" in rules
    rules += ["CORE-11", "CORE-12"]

    def why() -> dict:
        """Which rules decide each field of the message returned: read only to explain a departure."""
        provenance = chosen.provenance
        # a trigger message written no time ago: that it never expires (TRIG-30) cannot be why it is missing
        provenance = tuple(r for r in provenance if r not in _timeless(state, chosen))
        identity = tuple(dict.fromkeys(list(order) + list(provenance) + ["CORE-42"] * core42))
        # No message at all where MQ returns this one: what put it there (its provenance) is what the
        # system broke; the order and browse rules only say which message comes first.
        # (A message an application simply put has nothing more specific than CORE-01/CORE-02 to show.)
        # When such a rule exists, the order rules are left out: with nothing returned, which message
        # comes first was not what went wrong (and naming them would make a verdict on them depend on
        # what else the counterexample happened to hold).
        special = [r for r in provenance if r not in ("CORE-01", "CORE-02")]
        presence = tuple(dict.fromkeys(special + [r for r in identity if r not in order])) if special else identity
        presence = tuple(dict.fromkeys(lead + presence))
        field_rules = {
            "rc": presence,
            "message": presence,
            "message.body": identity,
            # The system returned another message that is there and available, only later in delivery
            # order: the order rules alone decide which comes first (the checker uses this then).
            "message.body:later": order,
            "message.body:queue": (h.queue,),
            # A count above 0 comes from backouts (CORE-15), kept across a restart (CORE-45); 0 is what a
            # first delivery shows.
            # (in the order its history gives them: a count kept from before a restart leads with its survival)
            "message.backout_count": _count_rules(chosen),

            # the rule that resolved the value at the put (DEFPRTY, DEFPSIST, MaxPriority), where one did (added
            # from the message's own ``decided`` below); else the value put, returned as such (CORE-11); and on
            # a FIFO queue, that a priority the put named is kept as put though it places nothing (one asked as
            # the queue's default is DEFPRTY's, CORE-07's alone)
            "message.priority": (("CORE-06",) if q.attr("MSGDLVSQ") == C.MQMDS_FIFO
                                 and ("priority", ("CORE-07",)) not in chosen.decided else ()) + (
                () if _decides(chosen, "priority") else ("CORE-11",)),
            "message.persistence": () if _decides(chosen, "persistence") else ("CORE-11",),
        }
        for f in MESSAGE_FIELDS + ("msg_id",):
            field_rules[f"message.{f}"] = ("CORE-11",)
        # whether it is a segment, which one, and where it starts: how the queue manager split what was put
        field_rules["message.segment_status"] = field_rules["message.offset"] = ("CORE-50",)
        field_rules["message.expiry"] = (("TRIG-30", "EXP-17") if chosen.tm else ()) + (
            "EXP-03", "EXP-02", "EXP-06") + (("EXP-14",) if chosen.backout_count else ())
        # how long the message has been on the queue: no time, nothing to decrement (EXP-02)
        field_rules["message.expiry:age"] = state.clock - chosen.put_time
        # (EXP-21, which Expiry decides a discard, says whether the message comes back, not what its header holds)
        field_rules["message.xmit_header"] = ("EXP-20", "EXP-22")
        field_rules.update(expiry.expired_shown(state, discarded))
        for name, deciders in chosen.decided:
            # a field whoever put the message decided (a DLQ handler's context, a remote put's expiry): those
            # rules, and the field's own where it has any; which message it is (identity) decides nothing in it
            field = f"message.{name}"
            field_rules[field] = tuple(dict.fromkeys(deciders + field_rules.get(field, ())))
        return field_rules

    return Branch(observation=L.Observation(message=returned), state=s,
                  rules=tuple(dict.fromkeys(rules)), field_rules=Lazy(why), excluded=excluded)


def _decides(m: ModelMessage, name: str) -> bool:
    """Whether a rule of how the message was put decided its field ``name`` (see ``ModelMessage.decided``)."""
    return any(field == name for field, _ in m.decided)


def _get_syncpoint(state: ModelState, options: int) -> bool | None:
    """In a unit of work (True), not (False), or as the message's persistence says (None)."""
    if options & C.MQGMO_SYNCPOINT:
        return True
    if options & C.MQGMO_NO_SYNCPOINT:
        return False
    if options & C.MQGMO_SYNCPOINT_IF_PERSISTENT:
        return None
    return state.platform == C.PLATFORM_ZOS  # CORE-35


# ---------------------------------------------------------------- connections the network cuts

BROKEN = L.Observation.of(C.MQRC_CONNECTION_BROKEN)


def _break(state: ModelState, conn: str, reason: str = "CORE-46") -> list[Branch]:
    """``conn``'s connection breaks: an abnormal end (CORE-46), after which its calls fail (CORE-47).

    ``reason`` leads what the backout explains (CORE-48 for a call cut in flight).  The
    branches say OK; callers give them the observation the program sees.
    """
    s = state.clone()
    out = []
    if conn in s.conns:
        applied = _end_uow(s, conn, False, reason)
        for t, extra in _close_all(s, conn):
            del t.conns[conn]
            t.broken = t.broken | {conn}
            out.append(Branch(observation=L.OK, state=t,
                              rules=tuple(dict.fromkeys([reason, "CORE-46", *applied, *extra]))))
        return out
    s.broken = s.broken | {conn}   # ended by the call itself (an MQDISC carried out)
    return [Branch(observation=L.OK, state=s, rules=tuple(dict.fromkeys((reason, "CORE-46"))))]


@handles(L.CutConnection)
def cut_connection(state: ModelState, op: L.CutConnection) -> list[Branch]:
    if op.conn not in state.conns:
        return [Branch(observation=L.OK, state=state)]   # nothing there to cut
    if op.in_flight:
        s = state.clone()
        s.armed = s.armed | {op.conn}
        return [Branch(observation=L.OK, state=s)]
    return _break(state, op.conn)


def lost_call(state: ModelState, op: L.Op, step) -> list[Branch]:
    """A call on a connection the network cut (CORE-47), or one cut while in flight (CORE-48)."""
    conn = op.conn
    if conn in state.armed and isinstance(op, L.Disconnect) and op.abnormal:
        s = state.clone()   # the program ends without a call: nothing is in flight
        s.armed = s.armed - {conn}
        return step(s, op)
    if conn in state.armed:
        # The request left: the queue manager may have carried the call out or not (CORE-48);
        # either way the connection then breaks (CORE-46) and the program sees MQRC_CONNECTION_BROKEN.
        base = state.clone()
        base.armed = base.armed - {conn}
        out = [attrs.evolve(b, observation=BROKEN) for b in _break(base, conn, "CORE-48")]
        for done in step(base, op):
            out += [attrs.evolve(b, observation=BROKEN, rules=tuple(dict.fromkeys((*b.rules, *done.rules))))
                    for b in _break(done.state, conn, "CORE-48")]
        return out
    s = state.clone()
    if isinstance(op, L.Disconnect):
        s.broken = s.broken - {conn}   # the program is done with it
        if op.abnormal:   # ending without MQDISC makes no call
            return [Branch(observation=L.OK, state=s, rules=("CORE-31",))]
    else:
        s = state
    return [Branch(observation=L.Observation.of(rc), state=s, rules=("CORE-47",))
            for rc in (C.MQRC_CONNECTION_BROKEN, C.MQRC_HCONN_ERROR)]


@handles(L.PauseQueueManager)
def pause(state: ModelState, op: L.PauseQueueManager) -> list[Branch]:
    """Time goes on while the queue manager is paused; the call made then is cut in flight (CORE-48)."""
    from reference_model import model

    out = []
    for waited in model.step(state, L.AdvanceClock(tenths=op.tenths)):
        for b in cut_connection(waited.state, L.CutConnection(conn=op.conn, in_flight=True)):
            out.append(attrs.evolve(b, rules=tuple(dict.fromkeys(waited.rules + b.rules))))
    return out
