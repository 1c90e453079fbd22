"""Semantics of the ``dlq`` area (“How the rules table is processed”): what a DLQ handler does with each message.

A handler instance starts from a rules table (:mod:`reference_model.dlq_table`),
keeps in memory a count of tries per message and the messages it ignored, and
browses the dead-letter queue: new messages as its browse cursor reaches them,
and the whole queue again every RETRYINT seconds.  ``RunDlqHandler`` lets it
work until it is idle at the current (virtual) time; the observation gives each
message's fate, which the checker compares with the fates the model allows.

Where the documents leave latitude the model returns every allowed outcome:
between rescans the handler may reach any prefix of the messages beyond its
cursor (DLQ-17).
"""

from __future__ import annotations

import functools

import attrs

from reference_model import core
from reference_model import dlq_table as T
from reference_model import expiry
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.model import Branch, HistoryError, Lazy, handles
from reference_model.state import ModelMessage, ModelState

KEPT, DISCARDED, BACKED_OUT = "kept", "discarded", "backed-out"
RUNNING, ENDED = "RUNNING", "ENDED"


@attrs.frozen(kw_only=True)
class HandlerState:
    """One handler instance: its table file, the table it runs with, and its memory."""

    table_file: str
    #: The text the running table was read from (DLQ-10: edits after the start do not count).
    started_text: str = ""
    table: T.RulesTable | None = None
    running: bool = False
    input_q: str = ""
    #: Tries so far per message (MsgId), sorted pairs.
    attempts: tuple[tuple[str, int], ...] = ()
    #: Order key of the last message browsed (None: the next pass browses from the start).
    cursor: tuple[int, int] | None = None
    last_rescan: int = 0
    #: Clock of the last pass in which an action was tried (for WAIT(n)).
    busy_at: int = 0
    #: Started by a restart and not yet through its first scan (DLQ-30 decides that scan).
    restarted: bool = False
    #: Its open of the input queue was exclusive (MQOO_INPUT_AS_Q_DEF under DEFSOPT(EXCL)).
    exclusive: bool = False
    #: (table rule index, MsgId) for the first two messages each rule has acted on since it started, in
    #: any pass: another message such a rule then leaves alone is what counting tries per rule does
    #: (DLQ-02).  Two are enough to tell whether a rule acted on a message other than any given one.
    acted: tuple[tuple[int, str], ...] = ()
    #: MsgIds whose tries the handler had counted, or that its passes had reached, when it was restarted:
    #: only for them does its fresh memory (DLQ-30) decide anything.
    forgotten: tuple[str, ...] = ()
    #: Has made a pass since it (re)started.  Before that every message is reached by the pass's
    #: first browse: neither a rescan (DLQ-18) nor the cursor (DLQ-17) decides whether it is.
    scanned: bool = False

    def tries(self, msg_id: str) -> int:
        return dict(self.attempts).get(msg_id, 0)

    def with_tries(self, msg_id: str, n: int | None) -> "HandlerState":
        d = dict(self.attempts)
        if n is None:
            d.pop(msg_id, None)
        else:
            d[msg_id] = n
        return attrs.evolve(self, attempts=tuple(sorted(d.items())))


# --------------------------------------------------------------------------- matching and selection


def message_fields(m: ModelMessage) -> dict:
    """The values each pattern keyword is compared with (DLQ-41)."""
    ctx = m.md.context or L.MessageContext()
    dlh = m.dlh
    return {
        "APPLIDAT": ctx.appl_identity_data, "APPLNAME": ctx.put_appl_name, "APPLTYPE": ctx.put_appl_type,
        "USERID": ctx.user_id, "DESTQ": dlh.dest_q, "DESTQM": dlh.dest_qmgr, "REASON": dlh.reason,
        "FORMAT": dlh.format, "FEEDBACK": m.md.feedback, "MSGTYPE": m.md.msg_type,
        "PERSIST": m.md.persistence, "REPLYQ": m.md.reply_to_q, "REPLYQM": m.md.reply_to_qmgr,
    }


def _wild(pattern) -> bool:
    return isinstance(pattern, str) and ("*" in pattern or "?" in pattern)


def _unmatched(rule: T.DlqRule, fields: dict) -> list[tuple[str, object]]:
    """The patterns of ``rule`` that ``fields`` do not match (none: the rule matches)."""
    return [(k, v) for k, v in rule.patterns if not _pattern_matches(k, v, fields)]


def _by_wildcard(unmatched: list[tuple[str, object]]) -> bool:
    """A rule missed only because of patterns with a wildcard: every other pattern matched."""
    return bool(unmatched) and all(k in T.STRING_PATTERNS and _wild(v) for k, v in unmatched)


def _pattern_matches(keyword: str, pattern, fields: dict) -> bool:
    if pattern is None:
        return True
    if keyword in T.STRING_PATTERNS:
        return T.string_matches(pattern, str(fields[keyword]))
    return fields[keyword] == pattern


def matches(rule: T.DlqRule, fields: dict) -> bool:
    return not _unmatched(rule, fields)


def select(table: T.RulesTable, fields: dict, tries: int) -> tuple[int | None, tuple[str, ...]]:
    """The index of the rule to apply at try number ``tries`` (0-based), or None for IGNORE assumed."""
    index, rules, _ = choose_rule(table, fields, tries)
    return index, rules


def choose_rule(table: T.RulesTable, fields: dict, tries: int) -> tuple[int | None, tuple[str, ...], tuple[str, ...]]:
    """:func:`select`, with the rules that decided the choice (most specific first).

    Rules are searched top-down (DLQ-01); each matching rule other than IGNORE
    owns the next RETRY tries (DLQ-03, DLQ-04); IGNORE is chosen at once (DLQ-19).
    What decides is what set this message apart: a wildcard that did not match
    (DLQ-38), another try of the same rule (DLQ-03), a rule whose tries are used up
    (DLQ-04), no rule left (DLQ-05, DLQ-06), an IGNORE (DLQ-19).
    """
    rules: tuple[str, ...] = ("DLQ-01", "DLQ-41")
    budget = 0
    matched = False
    wildcard_missed: list[str] = []   # the actions of earlier rules only a wildcard kept from matching
    for index, rule in enumerate(table.rules):
        wild = any(_wild(v) for _, v in rule.patterns)
        if any(k in T.STRING_PATTERNS and v is not None for k, v in rule.patterns):
            rules += ("DLQ-37", "DLQ-38") if wild else ("DLQ-37",)
        unmatched = _unmatched(rule, fields)
        if unmatched:
            if _by_wildcard(unmatched):
                wildcard_missed.append(rule.action)
            continue
        matched = True
        if not rule.patterns or all(v is None for _, v in rule.patterns):
            rules += ("DLQ-08",)
        # an earlier rule that would act otherwise was passed over because of a wildcard
        missed = ("DLQ-38",) if any(a != rule.action for a in wildcard_missed) else ()
        if rule.action == "IGNORE":
            return index, rules + ("DLQ-19",), _order_decides(table, index, fields) + ("DLQ-19",) + missed
        budget += rule.retry
        rules += ("DLQ-02",)  # this message's own count of tries decides
        if budget > tries:
            earlier = budget - rule.retry   # the tries earlier matching rules owned
            again = tries > earlier         # this rule was tried before
            decisive = ((("DLQ-03",) if again else ()) + (("DLQ-04",) if earlier else ())
                        + _order_decides(table, index, fields) + missed)
            return index, rules + (("DLQ-03", "DLQ-25") if tries else ()) + (("DLQ-04",) if earlier else ()), decisive
        rules += ("DLQ-04",)
    # (a rule that ignores, passed over, leaves the message as the IGNORE assumed does: its wildcard decides nothing)
    missed = ("DLQ-38",) if any(a != "IGNORE" for a in wildcard_missed) else ()
    if matched:
        return None, rules + ("DLQ-05", "DLQ-03", "DLQ-04"), ("DLQ-05", "DLQ-04") + missed
    return None, rules + ("DLQ-06",), missed + ("DLQ-06",)


def _compared(patterns: list[tuple[str, object]]) -> tuple[str, ...]:
    """The rules by which ``patterns`` (keyword, value) are compared with a message's fields: each keyword with
    its field (DLQ-41), string patterns padded with blanks (DLQ-37), wildcards (DLQ-38)."""
    strings = [v for k, v in patterns if k in T.STRING_PATTERNS]
    return ("DLQ-41",) + (("DLQ-37",) if strings else ()) + (("DLQ-38",) if any(_wild(v) for v in strings) else ())


def _not_matching(rules, fields: dict) -> tuple[str, ...]:
    """How those of ``rules`` that do not match ``fields`` fail to (:func:`_compared` of the patterns that do not
    match; a rule kept from matching only by a wildcard, the wildcard first)."""
    return tuple(dict.fromkeys(r for rule in rules if (unmatched := _unmatched(rule, fields))
                               for r in (("DLQ-38",) if _by_wildcard(unmatched) else ()) + _compared(unmatched)))


def _matching(h: HandlerState, index: int | None) -> tuple[str, ...]:
    """The rules by which table rule ``index`` matched a message (a system that left the message alone may not
    have matched it): how its patterns compare (:func:`_compared`), or, with no pattern at all, that it
    matches every message (DLQ-08)."""
    if index is None or h.table is None:
        return ()
    given = [(k, v) for k, v in h.table.rules[index].patterns if v is not None]
    return _compared(given) if given else ("DLQ-08",)


def _order_decides(table: T.RulesTable, index: int, fields: dict) -> tuple[str, ...]:
    """DLQ-01 when a later rule matches too and would act otherwise: the table's order decided."""
    rule = table.rules[index]
    later = table.rules[index + 1:]
    return ("DLQ-01",) if any(r.action != rule.action and matches(r, fields) for r in later) else ()


def target(rule: T.DlqRule, m: ModelMessage) -> tuple[str, str]:
    """(queue, queue manager) an action puts to (DLQ-21, DLQ-22, DLQ-23)."""
    dlh, md = m.dlh, m.md
    if rule.action == "RETRY":
        return dlh.dest_q.strip(), dlh.dest_qmgr.strip()
    q = {"&DESTQ": dlh.dest_q, "&REPLYQ": md.reply_to_q}.get(rule.fwdq, rule.fwdq)
    qm = {"&DESTQM": dlh.dest_qmgr, "&REPLYQM": md.reply_to_qmgr}.get(rule.fwdqm, rule.fwdqm)
    return q.strip(), qm.strip()


def forwarded(state: ModelState, rule: T.DlqRule, m: ModelMessage) -> tuple[L.MessageDescriptor, L.DeadLetterHeader | None]:
    """The descriptor and header of the message an action puts: everything passed on (DLQ-11, DLQ-12);
    the MQDLH removed and its Format restored for RETRY and HEADER(NO) (DLQ-21, DLQ-22)."""
    md = m.md
    keep = rule.action == "FWD" and rule.header
    left = expiry.remaining(state, m)
    new = attrs.evolve(md, expiry=C.MQEI_UNLIMITED if left is None else max(left, 1),
                       format=md.format if keep else m.dlh.format, backout_count=0)
    return new, (m.dlh if keep else None)


# --------------------------------------------------------------------------- operations


def _handler(state: ModelState, name: str) -> HandlerState:
    h = state.dlq_handlers.get(name)
    if h is None:
        raise HistoryError(f"no DLQ handler {name!r} was started")
    return h


def _start(state: ModelState, name: str, text: str, rules: tuple[str, ...], restart: bool = False,
           forgotten: tuple[str, ...] = ()) -> list[Branch]:
    table, errors = T.parse(text)
    # (a handler that fails to start keeps nothing, and forgets no more than it had: a restart after it owes
    # what the restart before forgot)
    kept = {"restarted": restart, "forgotten": forgotten}
    if errors:
        s = state.with_handler(name, HandlerState(table_file=text, **kept))
        obs = L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_NONE, attrs={"TABLE": "INVALID"})
        return [Branch(observation=obs, state=s, rules=rules + ("DLQ-09", "DLQ-13"))]
    rules += ("DLQ-09", "DLQ-27") + table.syntax_rules
    queue = table.control.inputq or state.qmgr.get("DEADQ", "")
    if not queue or queue not in state.queues:
        s = state.with_handler(name, HandlerState(table_file=text, **kept))
        return [Branch(observation=L.Observation.of(C.MQRC_UNKNOWN_OBJECT_NAME), state=s, rules=rules)]
    # The handler opens its input queue MQOO_INPUT_AS_Q_DEF (DLQ-14): exclusively when the queue's
    # DEFSOPT says so, and then not while anything else has it open for input (CORE-23).
    rules += ("DLQ-14",)
    holders = [h for n, h in state.dlq_handlers.items() if n != name and h.running and h.input_q == queue]
    apps = [h for h in state.handles.values() if h.queue == queue and h.can_input]
    exclusive = state.queues[queue].attr("DEFSOPT") == C.MQOO_INPUT_EXCLUSIVE
    if (exclusive and (holders or apps)) or any(h.exclusive for h in holders) \
            or any(h.input_mode == C.MQOO_INPUT_EXCLUSIVE for h in apps):
        s = state.with_handler(name, HandlerState(table_file=text, input_q=queue, **kept))
        opened = {"rc": ("DLQ-14", "CORE-23"), "cc": ("DLQ-14", "CORE-23")}
        return [Branch(observation=L.Observation.of(C.MQRC_OBJECT_IN_USE), state=s, rules=rules + ("CORE-23",),
                       field_rules=opened)]
    # Others have it open: a refusal would be about how the handler opened it.
    shared = {"rc": ("DLQ-14", "CORE-23"), "cc": ("DLQ-14", "CORE-23")} if holders or apps else {}
    s = state.with_handler(name, HandlerState(table_file=text, started_text=text, table=table, running=True,
                                              input_q=queue, last_rescan=state.clock, busy_at=state.clock,
                                              restarted=restart, exclusive=exclusive, forgotten=forgotten))
    return [Branch(observation=L.OK, state=s, rules=rules, field_rules=shared)]


@handles(L.StartDlqHandler)
def start_handler(state: ModelState, op: L.StartDlqHandler) -> list[Branch]:
    if op.handler in state.dlq_handlers:
        raise HistoryError(f"DLQ handler {op.handler!r} already started (restart it instead)")
    others = any(h.running for h in state.dlq_handlers.values())
    return _start(state, op.handler, op.table, ("DLQ-15",) if others else ())


@handles(L.ChangeDlqTable)
def change_table(state: ModelState, op: L.ChangeDlqTable) -> list[Branch]:
    h = _handler(state, op.handler)
    return [Branch(observation=L.OK, state=state.with_handler(op.handler, attrs.evolve(h, table_file=op.table)),
                   rules=("DLQ-10",))]


@handles(L.RestartDlqHandler)
def restart_handler(state: ModelState, op: L.RestartDlqHandler) -> list[Branch]:
    h = _handler(state, op.handler)
    # what its fresh memory (DLQ-30) can decide: the tries it had counted, and the messages its passes had
    # reached (one it left alone, it considers again)
    reached = tuple(m.md.msg_id for m in state.queues[h.input_q].messages) \
        if h.scanned and h.input_q in state.queues else ()
    # (restarted again before a scan: what the restart before it forgot is still forgotten)
    before = h.forgotten if h.restarted else ()
    return _start(state, op.handler, h.table_file, ("DLQ-10", "DLQ-30"), restart=True,
                  forgotten=tuple(dict.fromkeys(list(before) + [mid for mid, n in h.attempts if n] + list(reached))))


def _visible(state: ModelState, queue: str) -> list[ModelMessage]:
    q = state.queues[queue]
    return sorted((m for m in q.messages if m.put_by is None and m.got_by is None), key=lambda m: m.order_key)


@attrs.define
class _Outcome:
    state: ModelState
    handler: HandlerState
    fates: dict
    field_rules: dict
    rules: list
    busy: bool = False


def _changed_table_differs(h: HandlerState, m: ModelMessage, index: int | None) -> bool:
    """Whether the table in ``h``'s file, not yet in force, would choose another action for ``m`` than
    rule ``index`` of the table in force (None: the message left alone)."""
    pending, errors = T.parse(h.table_file)
    if pending is None or errors or h.table is None or m.dlh is None:
        return False
    chosen, _ = select(pending, message_fields(m), h.tries(m.md.msg_id))

    def action(table: T.RulesTable, i: int | None) -> tuple:
        r = table.rules[i] if i is not None else None
        return ("IGNORE",) if r is None or r.action == "IGNORE" else (r.action, r.fwdq, r.fwdqm, r.header)

    return action(pending, chosen) != action(h.table, index)


def _process(o: _Outcome, m: ModelMessage, scan: tuple[str, ...]) -> list[_Outcome]:
    """The alternatives after the handler reaches message ``m`` in a scan (whose rules are ``scan``).

    Each message's fate names first the rules that decided it (see :func:`choose_rule`,
    then the action's own rule); should a system leave alone a message the handler
    acts on, what says it must act comes first: another try, a restarted handler's
    fresh start (DLQ-30), the message's own count of tries when the same table rule
    has acted on another message since the handler started (DLQ-02), the scan that reaches
    it (DLQ-18, DLQ-17).
    """
    mid = m.md.msg_id
    key = f"attrs.{mid.upper()}"
    h = attrs.evolve(o.handler, cursor=m.order_key)

    def settle(state: ModelState, handler: HandlerState, fate: str, rules: tuple[str, ...],
               busy: bool = True, primary: tuple[str, ...] = (), index: int | None = None) -> _Outcome:
        # A table changed since the handler started is not in force (DLQ-10): when the pending one
        # would deal with this message otherwise, a system that did is most likely applying it.
        pending = ("DLQ-10",) if "DLQ-10" in scan and _changed_table_differs(o.handler, m, index) else ()
        field_rules = {**o.field_rules, key: tuple(dict.fromkeys(pending + primary + rules + scan))}
        if fate != KEPT:
            reach = tuple(r for r in scan if r in ("DLQ-18", "DLQ-17")) if o.handler.scanned else ()
            shared = ("DLQ-02",) if any(i == index and other != mid for i, other in o.handler.acted) else ()
            restarted = ("DLQ-30",) if "DLQ-30" in scan and mid in o.handler.forgotten else ()
            again = tuple(r for r in primary if r in ("DLQ-01", "DLQ-03", "DLQ-04"))
            # left where MQ acts on it: an earlier rule that ignores was matched after all (how its patterns compare)
            ignorers = [r for r in o.handler.table.rules[:index] if r.action == "IGNORE"] \
                if index is not None and o.handler.table is not None else []
            ignoring = _not_matching(ignorers, message_fields(m)) if ignorers else ()
            field_rules[f"{key}=={KEPT}"] = tuple(dict.fromkeys(pending + again + restarted + shared + reach
                                                               + _matching(o.handler, index) + ignoring + primary))
        if index is not None and (index, mid) not in handler.acted \
                and sum(i == index for i, _ in handler.acted) < 2:
            handler = attrs.evolve(handler, acted=handler.acted + ((index, mid),))
        return _Outcome(state=state, handler=handler, fates={**o.fates, mid: fate},
                        field_rules=field_rules, rules=o.rules + list(rules), busy=o.busy or busy)

    if m.dlh is None:
        out = settle(o.state, h, KEPT, ("DLQ-07",), busy=False, primary=("DLQ-07",))
        # acted on all the same: only that such a message is left alone (DLQ-07) says otherwise, not how the scan
        # reached it
        acted = _acted_fates(o.state)
        out.field_rules = {**out.field_rules, **{f"{key}=={fate}": ("DLQ-07",) for fate in acted}}   # out is new
        return [out]
    # A message the handler left (IGNORE, explicit or assumed) is left again every time it comes
    # round: the table does not change while the handler runs and its tries stay as they were, so
    # the model decides again rather than keep the handler's record (DLQ-16).
    tries = h.tries(mid)
    index, rules, decisive = _choice(h.table, m, tries)
    if index is None or h.table.rules[index].action == "IGNORE":
        out = settle(o.state, h, KEPT, rules + ("DLQ-16",), busy=False, primary=decisive)
        # Acted on where MQ leaves it: what kept it (an IGNORE reached, no rule with tries left), or a rule
        # before that the handler should not have matched (how its patterns compare: DLQ-41, 37, 38).
        # (a wildcard that kept an earlier rule from matching leads: a system that acted most likely matched it)
        pending = ("DLQ-10",) if "DLQ-10" in scan and _changed_table_differs(o.handler, m, index) else ()
        fields = message_fields(m)
        acted = _acted_fates(o.state)
        # (only a rule whose action gives the fate seen can have been matched instead: one that ignores, or that
        # does something else, explains nothing, nor does the wildcard that kept it from matching)
        giving = _giving(o.state, h.table, m, fields, index)
        out.field_rules = {**out.field_rules, **{   # out is new
            f"{key}=={fate}": tuple(dict.fromkeys(pending + (given := giving.get(fate, ())) + tuple(
                d for d in decisive if d != "DLQ-38" or "DLQ-38" in given))) for fate in acted}}
        return [out]
    rule = h.table.rules[index]
    fields = message_fields(m)
    # the table not yet in force, where it would deal with the message otherwise (DLQ-10); should a later rule be
    # applied instead, how the choice was made: tries kept across a restart (DLQ-30) or counted with another
    # message's (DLQ-02), this rule not matched after all, the table's order (DLQ-01)
    pending = ("DLQ-10",) if "DLQ-10" in scan and _changed_table_differs(o.handler, m, index) else ()
    shared = ("DLQ-02",) if any(i == index and other != mid for i, other in o.handler.acted) else ()
    restarted = ("DLQ-30",) if "DLQ-30" in scan and mid in o.handler.forgotten else ()
    chosen = restarted + shared + _matching(o.handler, index) + ("DLQ-01", "DLQ-04")
    done = h.with_tries(mid, None)   # a successful action ends the message's record
    queue = h.input_q
    s = o.state.clone()
    if rule.action == "DISCARD":
        rules += ("DLQ-20",)
        s.discard(queue, s.find(queue, m.seq), rules)
        out = settle(s, done, DISCARDED, rules, primary=decisive + ("DLQ-20",), index=index)
        # seen put on somewhere (or its put tried and backed out): another rule was chosen (tries kept across a
        # restart, or counted with another message's; this one not matched, by how its patterns compare; or another
        # first, by what decided the choice), never the discard's own rule
        other = tuple(dict.fromkeys(pending + restarted + shared + decisive + _matching(h, index)))
        out.field_rules = {**out.field_rules, f"{key}=={BACKED_OUT}": other,   # out is new
                           **{f"{key}==put:{q}": other for q in o.state.queues}}
        return [out]
    acted = ("DLQ-21",) if rule.action == "RETRY" else ("DLQ-22", "DLQ-11")
    if rule.action == "FWD" and (rule.fwdq.startswith("&") or rule.fwdqm.startswith("&")):
        acted += ("DLQ-23",)
    rules += acted + ("DLQ-12", "DLQ-24")
    tried = h.with_tries(mid, tries + 1)

    def failed(extra: tuple[str, ...] = ()) -> _Outcome:
        """The put failed: the get is backed out and the message stays with BackoutCount + 1 (DLQ-24)."""
        back = o.state.clone()
        held = back.find(queue, m.seq)
        back.queue(queue).update(held, backout_count=held.backout_count + 1)
        out = settle(back, tried, BACKED_OUT, rules + extra, primary=decisive + ("DLQ-24",), index=index)
        # Gone after its action's put failed: the get was not backed out (DLQ-24) before anything
        # else, unless this was another try of the rule and a later rule would discard it: then
        # the handler most likely gave up on the rule before its tries were used (DLQ-03) ...
        gave_up = ("DLQ-03",) if "DLQ-03" in decisive and any(
            r.action == "DISCARD" and matches(r, fields) for r in h.table.rules[index + 1:]) else ()
        # ... or an earlier rule that discards was passed over only because of a wildcard (DLQ-38)
        passed_over = ("DLQ-38",) if any(r.action == "DISCARD" and _by_wildcard(_unmatched(r, fields))
                                         for r in h.table.rules[:index]) else ()
        # (what decided the fate otherwise, the scan that reached it, its tries, how the dead letter was put, says
        # nothing of why it is gone: those alone)
        # (the table not yet in force applied, DLQ-10, first: as for every fate the rule in force does not give)
        gone = {f"{key}=={DISCARDED}": tuple(dict.fromkeys(pending + gave_up + passed_over + ("DLQ-24",)
                                                           + _discarding_instead(h.table, fields, index))),
                # Seen as left alone: a backed-out get is told by the BackoutCount it raised (CORE-15, CORE-17),
                # as well as by the handler having acted on it at all
                f"{key}=={KEPT}": tuple(dict.fromkeys(out.field_rules.get(f"{key}=={KEPT}", out.field_rules[key])
                                                      + ("CORE-15", "CORE-17")))}
        # Seen put on to another queue: another rule's action (a later one that matches, applied before this one's
        # tries were spent: tries kept across a restart (DLQ-30) or counted with another message's (DLQ-02), or the
        # table's order (DLQ-01); this one not matched after all; an earlier one, by how its patterns compare, that
        # puts there)
        own_q, _ = target(rule, m)
        giving = _giving(o.state, h.table, m, fields, index)
        later = {target(r, m)[0] for r in h.table.rules[index + 1:] if r.action in ("FWD", "RETRY")
                 and matches(r, fields)}
        for q in o.state.queues:
            earlier = giving.get(f"put:{q}", ())
            if q != own_q and (q in later or earlier):
                gone[f"{key}==put:{q}"] = tuple(dict.fromkeys(pending + (chosen if q in later else ()) + earlier))
        out.field_rules = {**out.field_rules, **gone}   # out is new
        return out


    qname, qmgr = target(rule, m)
    if qmgr or not qname or qname not in s.queues:
        return [failed()]
    md, dlh = forwarded(s, rule, m)
    s.take_off(queue, s.find(queue, m.seq), rules)   # (not removed for good: it lives on where it is put)
    # Which rule decides each field of the message put (DLQ-11, DLQ-12, DLQ-21, DLQ-22).
    decided = (("context", ("DLQ-12",)), ("format", acted), ("dlh", acted), ("body", ("DLQ-11",)))
    ageing: tuple[str, ...] = ()
    if m.md.expiry != C.MQEI_UNLIMITED:
        # What is left of its expiry goes with it: it kept ageing on the dead-letter queue (EXP-16).
        ageing = ("EXP-16",)
        decided += (("expiry", ("EXP-16", "EXP-02", "DLQ-11")),)
    outs = [settle(b.state, done, f"put:{qname}", rules + ageing + b.rules, primary=decisive + acted, index=index)
            if b.observation.rc in (C.MQRC_NONE, C.MQRC_PRIORITY_EXCEEDS_MAXIMUM) else failed(b.rules)
            for b in core._do_put(s, None, qname, m.body, md, C.MQPMO_NO_SYNCPOINT, (), None, dlh,
                                  provenance=rules, decided=decided)]
    # Seen discarded where MQ put it on: the table not yet in force applied (DLQ-10), a rule that discards chosen
    # instead (one after it that matches, as a put on by a later rule is, see failed(); one before it, by how its
    # patterns compare), or the action's put did not happen while its get was not backed out (the action's rule,
    # DLQ-24).  Never how the dead letter was put.
    later = any(r.action == "DISCARD" and matches(r, fields) for r in h.table.rules[index + 1:])
    instead = pending + (chosen if later else ()) + _discarding_instead(h.table, fields, index) + acted + ("DLQ-24",)
    for out in outs:
        if out.fates[mid].startswith("put:"):
            out.field_rules = {**out.field_rules, f"{key}=={DISCARDED}": tuple(dict.fromkeys(instead))}
    return outs


def _giving(state: ModelState, table: T.RulesTable, m: ModelMessage, fields: dict,
            upto: int | None) -> dict[str, tuple[str, ...]]:
    """For each fate (a discard, a put to a queue, a put that fails where its queue is missing, full or inhibited,
    backed out), how the rules before ``upto`` (all, for None) that do not match ``m`` but would give it that
    fate fail to match (:func:`_not_matching`)."""
    by_fate: dict[str, list[T.DlqRule]] = {}
    for rule in table.rules[:len(table.rules) if upto is None else upto]:
        if rule.action == "DISCARD":
            fates: tuple[str, ...] = (DISCARDED,)
        elif rule.action in ("FWD", "RETRY"):
            qname, qmgr = target(rule, m)
            q = state.queues.get(qname) if qname and not qmgr else None
            # (a put to a queue there is fails where it is inhibited or full, expired messages counted or not)
            refused = q is None or q.attr("PUT") == C.MQQA_PUT_INHIBITED or \
                max(d for d, _ in expiry.depth_range(state, q, core._curdepth(q))) >= q.attr("MAXDEPTH")
            fates = ((f"put:{qname}",) if q is not None else ()) + ((BACKED_OUT,) if refused else ())
        else:
            continue
        for fate in fates:
            by_fate.setdefault(fate, []).append(rule)
    return {fate: _not_matching(rules, fields) for fate, rules in by_fate.items()}


def _acted_fates(state: ModelState) -> tuple[str, ...]:
    """Every fate of a message the handler acted on: discarded, its get backed out, put on to a queue there is."""
    return (DISCARDED, BACKED_OUT, *(f"put:{q}" for q in state.queues))


def _discarding_instead(table: T.RulesTable, fields: dict, index: int) -> tuple[str, ...]:
    """How a rule that discards could have been chosen over rule ``index`` (which matched): one before it that
    does not match (how its patterns compare), one after it that matches (the table's order, DLQ-01)."""
    before = [r for r in table.rules[:index] if r.action == "DISCARD" and _unmatched(r, fields)]
    after = any(r.action == "DISCARD" and matches(r, fields) for r in table.rules[index + 1:])
    return tuple(dict.fromkeys(x for r in before for x in _compared(_unmatched(r, fields)))) + (
        ("DLQ-01",) if after else ())


@functools.lru_cache(maxsize=20_000)
def _choice(table: T.RulesTable, m: ModelMessage, tries: int) -> tuple[int | None, tuple[str, ...], tuple[str, ...]]:
    """:func:`choose_rule` for message ``m``, kept: a pass reaches the same messages with the same
    table in every candidate state, and again at every pass while they stay on the queue."""
    return choose_rule(table, message_fields(m), tries)


def _actionable(h: HandlerState, m: ModelMessage) -> tuple[bool, tuple[str, ...]]:
    """Would a later scan act on ``m``?  And the rules by which it would not (or would) instead: those a system
    that ends the handler early (or keeps it waiting) may have applied otherwise to this message."""
    if m.dlh is None:
        return False, ("DLQ-07",)
    mid = m.md.msg_id
    fields = message_fields(m)
    index, _, decisive = _choice(h.table, m, h.tries(mid))
    rules = h.table.rules
    # its count of tries: another message's counted with it (DLQ-02), a restarted handler's memory (DLQ-30)
    counted = (("DLQ-02",) if any(other != mid for _, other in h.acted) else ()) + (
        ("DLQ-30",) if h.restarted and mid in h.forgotten else ())
    if index is not None and rules[index].action != "IGNORE":
        # left alone instead: an earlier rule that ignores matched it after all (how its patterns compare), the
        # rule in force did not match, or its tries were spent (what decided the choice), and no rescan came
        instead = _not_matching([r for r in rules[:index] if r.action == "IGNORE"], fields)
        return True, tuple(dict.fromkeys(instead + decisive + _matching(h, index) + counted + ("DLQ-18",)))
    # acted on instead: an earlier rule that acts matched it after all, the IGNORE reached did not match or did
    # not leave it, its tries were counted otherwise (no rule left with tries)
    instead = _not_matching([r for r in rules[:len(rules) if index is None else index] if r.action != "IGNORE"],
                            fields)
    own = (_matching(h, index) + ("DLQ-19",)) if index is not None else ("DLQ-03",)
    return False, tuple(dict.fromkeys(decisive + instead + own + counted))


def _ends(h: HandlerState, s: ModelState, busy: bool) -> tuple[list[bool], tuple[str, ...]]:
    """Whether WAIT(NO) or WAIT(n) ends handler ``h`` in state ``s`` now (DLQ-29), after a pass that
    acted on a message or not (``busy``): the answers allowed (WAIT(n)'s seconds are waited out on the
    system's clock), and the rules that decide it: for a handler that goes on, how the messages a later
    scan acts on could have been left alone; for one that ends, how any message could have been acted on."""
    wait = h.table.control.wait
    if wait == "NO":
        readings = [_actionable(h, m) for m in _visible(s, h.input_q)]
        left = [why for actionable, why in readings if actionable]
        rules = tuple(r for why in (left or [why for _, why in readings]) for r in why)
        return [not left], rules
    return [False] if busy else s.passed(h.busy_at, wait * 10), ()


@handles(L.RunDlqHandler)
def run_handler(state: ModelState, op: L.RunDlqHandler) -> list[Branch]:
    """A pass of the handler.  A message that has expired on its input queue is never returned to it
    (EXP-06): the queue manager discards it, with its report, when the handler's browse reaches it
    (EXP-04, EXP-08), so the handler neither sees nor acts on it and it has no fate; one within the
    tolerance of its expiry may go either way."""
    queue = _handler(state, op.handler).input_q
    q = state.queues.get(queue or "")
    expired = [m for m in _visible(state, queue) if expiry.status(state, m) != expiry.LIVE] \
        if q is not None and q.expiring else []
    if not expired:
        return _run_handler(state, op)
    branches = []
    for choice in expiry.discard_choices(state, expired):
        s = state.clone()
        gone = [m for m in expired if m.seq in choice]
        for m in gone:
            # It kept ageing on the dead-letter queue (EXP-16); the program whose get reached it
            # discarded it for expiry and owes its report (EXP-09).
            expiry.discard(s, queue, s.find(queue, m.seq), ("EXP-04", "EXP-16"), report_rules=("EXP-09",))
        reports = ("EXP-09", "EXP-08") if any(m.md.report & C.MQRO_EXPIRATION for m in gone) else ()
        for b in _run_handler(s, op):
            if gone:
                field_rules = {**b.field_rules, **{f"attrs.{m.md.msg_id.upper()}": ("EXP-06", "EXP-04", "EXP-16")
                                                   for m in gone if m.md.msg_id}}
                b = attrs.evolve(b, rules=tuple(dict.fromkeys(b.rules + ("EXP-06", "EXP-04", "EXP-16") + reports)),
                                 field_rules=field_rules)
            branches.append(b)
    return branches


def _run_handler(state: ModelState, op: L.RunDlqHandler) -> list[Branch]:
    h = _handler(state, op.handler)
    ids = [m.md.msg_id for m in _visible(state, h.input_q or "")] if h.input_q in state.queues else []
    if not h.running:
        fates = {mid: KEPT for mid in ids if mid}
        obs = L.Observation(attrs={**fates, "HANDLER": ENDED})
        return [Branch(observation=obs, state=state, rules=("DLQ-29",) if h.table else ("DLQ-09",))]
    # RETRYINT is waited out on the system's clock: near its end, either way (ModelState.passed).
    rescans = [True] if h.cursor is None else state.passed(h.last_rescan, h.table.control.retryint * 10)
    return [b for rescan in rescans for b in _pass(state, op, h, ids, rescan)]


def _pass(state: ModelState, op: L.RunDlqHandler, h: HandlerState, ids: list, rescan: bool) -> list[Branch]:
    """A pass of running handler ``h`` that rescans its queue from the start or goes on from its cursor."""
    table = h.table
    visible = _visible(state, h.input_q)
    if rescan:
        todo = visible
        lengths = [len(todo)]
        base_rules = ["DLQ-18", "DLQ-28"]
        h = attrs.evolve(h, last_rescan=state.clock)
    else:
        todo = [m for m in visible if m.order_key > h.cursor]
        lengths = list(range(len(todo), -1, -1))  # the first outcome sees everything
        base_rules = ["DLQ-17"] if todo else []
        # which messages lie beyond the cursor is the queue's delivery order (browse-next, CORE-19)
        order = ["CORE-19"] + (["CORE-04"] if state.queues[h.input_q].attr("MSGDLVSQ") == C.MQMDS_PRIORITY else [])
        base_rules += [r for r in order if len(visible) > len(todo)]
    scan = tuple(base_rules) + (("DLQ-10",) if h.table_file != h.started_text else ()) + (
        ("DLQ-30",) if h.restarted else ())
    if rescan:
        h = attrs.evolve(h, restarted=False)
    # The outcomes after the first k messages, for every k a branch needs: each prefix is the one
    # before it taken one message further, so a pass costs one step per message, not one per
    # message and length.
    # A prefix's outcome holds the state it reached; _process clones before it changes one, so the
    # first holds the state the pass starts from.
    prefixes = [[_Outcome(state=state, handler=h, fates={}, field_rules={}, rules=list(base_rules))]]
    for m in todo:
        prefixes.append([nxt for o in prefixes[-1] for nxt in _process(o, m, scan)])
    keys = {mid: f"attrs.{mid.upper()}" for mid in ids if mid}
    # Outcomes alike in every fate give one observation (a pass that left every message alone may
    # have stopped after any of them): each is made once.
    observations: dict[tuple, L.Observation] = {}
    branches = []
    for k in lengths:
        for o in prefixes[k]:
            handler = o.handler
            if o.busy:
                handler = attrs.evolve(handler, busy_at=state.clock)
            rules = list(o.rules)
            # A table changed since the handler started is not in force (DLQ-10): when it is
            # pending, it is what a system that ends or goes on wrongly most likely applied.
            pending = ("DLQ-10",) if "DLQ-10" in scan else ()
            handler_rules: tuple[str, ...] = pending + ("DLQ-29",) + scan
            endings = [False]
            if table.control.wait != "YES":
                rules.append("DLQ-29")
                endings, why = _ends(handler, o.state, o.busy)
                # WAIT(NO) ends on what is left on the queue, not on how this pass went through it
                handler_rules = pending + why + (("DLQ-29",) if table.control.wait == "NO" else handler_rules)
            fates = tuple(o.fates.get(mid, KEPT) for mid in keys)
            # What decided each field is read only to explain a departure: worked out then.
            field_rules = Lazy(functools.partial(_pass_field_rules, o.field_rules, o.fates, keys,
                                                 tuple(base_rules) or ("DLQ-17",),
                                                 tuple(dict.fromkeys(handler_rules))))
            for ends in endings:
                status = ENDED if ends else RUNNING
                obs = observations.get((fates, status))
                if obs is None:
                    obs = observations[fates, status] = L.Observation(attrs={**dict(zip(keys, fates)),
                                                                             "HANDLER": status})
                # The branch's state: the outcome's with this handler's memory; the rest is shared, as
                # the model changes a state only in a copy of it.
                after = o.state.with_handler(op.handler, attrs.evolve(handler, scanned=True, running=not ends))
                branches.append(Branch(observation=obs, state=after, rules=tuple(dict.fromkeys(rules)),
                                       field_rules=field_rules))
    return branches


def _pass_field_rules(reached: dict, fates: dict, keys: dict, unreached: tuple[str, ...],
                      handler_rules: tuple[str, ...]) -> dict:
    """A pass's field rules: those of the messages it reached, ``unreached`` for the others."""
    out = dict(reached)
    for mid, key in keys.items():
        if mid not in fates:
            out[key] = unreached
    out["attrs.HANDLER"] = handler_rules
    # whether the handler goes on follows from what became of the messages
    out["fields:last"] = ("attrs.HANDLER",)
    return out
