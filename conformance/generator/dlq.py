"""The ``dlq`` machine: rules tables, dead-letter queue contents and failing destinations.

A queue manager has a dead-letter queue (FIFO or priority), three destination
queues with small MAXDEPTHs and a queue that may not exist yet.  The machine
generates a rules table (rendered with the syntax's freedoms: any keyword case,
commas, continuations, comments), starts a handler with it, and interleaves:
dead-letter messages with MQDLHs and varied descriptors and contexts (some made
to match one of the tables' rules, some to miss one by a single keyword), messages
without an MQDLH, handler runs, clock advances past RETRYINT, destinations
put-inhibited or filled and drained (each drained message is checked: its
header, format and context), a second handler on the same queue, table edits
and restarts.  Some dead letters expire: they keep ageing on the dead-letter
queue, are forwarded with what is left of their expiry, or are discarded when
the handler reaches them, with the expiration report they ask for.  Every
message's fate after each run is checked against the model.
"""

from __future__ import annotations

import functools
import random

import attrs

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from conformance.generator.base import ConformanceMachine
from conformance.generator.draws import OneOf, Record, Some, absent_or, drawn_initialize, drawn_rule
from reference_model import language as L
from reference_model import dlq_table as T
from reference_model import mqconst as C

DLQ, TARGETS, MISSING = "DLQ", ("A", "B", "PARK"), "NEW.Q"
#: A queue name as long as a name may be (48 characters; no such queue is defined), and one too long.
LONGEST, TOO_LONG = "L" * 48, "L" * 49
#: Where expiration reports for dead letters go (unbounded, so a report always has room).
REPORTS = "REPORTS"
APP = "app"
USERS = ("alice", "bob")
APPL_NAMES = ("payroll.batch", "billing", "payroll")
REASONS = {"MQRC_Q_FULL": C.MQRC_Q_FULL, "MQRC_PUT_INHIBITED": C.MQRC_PUT_INHIBITED,
           "MQRC_UNKNOWN_OBJECT_NAME": C.MQRC_UNKNOWN_OBJECT_NAME}


# ---------------------------------------------------------------------------- rules tables

#: A rules-table entry's pattern keywords: an entry has some of them (none as often as any number).
PATTERNS = Some(
    REASON=(*REASONS, "2053", "*"),
    DESTQ=("A", "B", "A*", "?", MISSING, "*", "'PAR?'"),
    MSGTYPE=("MQMT_REQUEST", "MQMT_DATAGRAM", "8"),
    PERSIST=("MQPER_PERSISTENT", "MQPER_NOT_PERSISTENT"),
    # A pattern's trailing blanks do not count (blank-padded comparison): 'bob ' matches bob.
    USERID=("'alice'", "'bob '", "'al*'"),
    APPLNAME=("'payroll*'", "'payroll?batch'", "'billing?'", "'payroll?'"),
    REPLYQ=("?*", "' '", "B"),
    FORMAT=("MQSTR", "' '"),
)


def _entry(pattern: dict, action: str, retry: dict, fwdq: str, forward: dict) -> dict:
    """A rules-table entry: its pattern, its action and the action's own keywords."""
    keywords = {"ACTION": action}
    if action == "RETRY":
        keywords.update(retry)
    elif action == "FWD":
        keywords.update({"FWDQ": fwdq, **forward})
    return {**pattern, **keywords}


ENTRY = Record(_entry, pattern=PATTERNS, action=("DISCARD", "IGNORE", "RETRY", "FWD"),
               retry=Some(RETRY=("1", "2", "3")),
               fwdq=("A", "B", "PARK", "PARK", MISSING, "&DESTQ", "&REPLYQ", "&destq", LONGEST),
               forward=Some(FWDQM=("&REPLYQM", "' '", "&DESTQM", "&replyqm"), HEADER=("YES", "NO"),
                            PUTAUT=("DEF", "CTX"), RETRY=("1", "2")))

#: Pattern keywords the other rules never carry: the context's ApplType and ApplIdentityData, the
#: MQDLH's DestQMgrName, the descriptor's Feedback and ReplyToQMgr (DLQ-41).  Half the tables have
#: one more rule matching on one of them, at a drawn place; each value matches some of the dead
#: letters drawn and not others, and the rules around it keep the patterns their tries and
#: fall-through are tried with.
RARE_PATTERNS = (("APPLTYPE", "MQAT_UNIX"), ("APPLTYPE", "28"), ("APPLIDAT", "'a 1'"), ("APPLIDAT", "' '"),
                 ("DESTQM", "FAR.QM"), ("DESTQM", "' '"), ("FEEDBACK", "MQFB_NONE"), ("FEEDBACK", "MQRC_Q_FULL"),
                 ("REPLYQM", "FAR*"), ("REPLYQM", "' '"))
RARE = Record(lambda pattern, action: {pattern[0]: pattern[1], "ACTION": action} if pattern else None,
              pattern=absent_or(*RARE_PATTERNS), action=("DISCARD", "IGNORE"))


def _rules(first: dict, more: dict, rare: dict | None, at: int) -> list[dict]:
    rules = [first, *more.values()]
    return rules[:at] + [rare] + rules[at:] if rare else rules


#: A table's rules: one to four entries (two and a half on average), and in half the tables a rule on a
#: rare keyword at a drawn place.
RULES = Record(_rules, first=ENTRY, more=Some(second=ENTRY, third=ENTRY, fourth=ENTRY), rare=RARE, at=range(5))
table_rules = RULES.strategy
CONTROL = Record(lambda RETRYINT, more: {"RETRYINT": RETRYINT, **more}, RETRYINT=("1", "10", "30"),
                 more=Some(WAIT=("YES", "NO", "20"), INPUTQ=(DLQ, "' '"), INPUTQM=("' '",)))
#: How a table is spelt (:func:`render`'s style, 0 the plainest): two bytes.
STYLE = Record(lambda high, low: high << 8 | low, high=range(256), low=range(256))


def render(entries: list[dict], style: int) -> str:
    """A table's text, in one of the many spellings the syntax allows (``style`` 0 is the plainest).

    The spelling is derived from one number so that Hypothesis shrinks it in one step.  A case
    spells the same entries again and again (each broken table of :meth:`DlqMachine.refused_tables`
    is its valid one and a line), so texts are kept.
    """
    return _render(tuple(tuple(entry.items()) for entry in entries), style)


@functools.lru_cache(maxsize=1024)
def _render(entries: tuple[tuple[tuple[str, str], ...], ...], style: int) -> str:
    rnd = random.Random(style)
    plain = style == 0
    lines = [] if plain or rnd.random() < 0.5 else ["* generated rules table"]
    for entry in entries:
        items = list(entry)
        if not plain:
            rnd.shuffle(items)
        words = []
        for name, value in items:
            name = name.lower() if not plain and rnd.random() < 0.3 else name
            gap = " " if not plain and rnd.random() < 0.2 else ""
            words.append(f"{name}{gap}({value})")
        sep = ", " if not plain and rnd.random() < 0.3 else " "
        line = sep.join(words)
        if not plain and len(words) > 1 and rnd.random() < 0.3:
            cut = rnd.randrange(1, len(words))
            # '+' continues from the next line's first non-blank character, '-' from its column 1.
            joint = " +\n     " if rnd.random() < 0.6 else " -\n"
            line = sep.join(words[:cut]) + joint + sep.join(words[cut:])
        lines.append(line)
        if not plain and rnd.random() < 0.2:
            lines.append("")
    return "\n".join(lines) + "\n"


#: A valid rules table, rendered with the freedoms the syntax allows, and its rules (dicts).
TABLE = Record(lambda control, rules, style: (render([control] + rules, style), rules),
               control=CONTROL, rules=RULES, style=STYLE)


def tables_with_rules() -> st.SearchStrategy[tuple[str, list[dict]]]:
    """A valid rules table, rendered with the freedoms the syntax allows, and its rules (dicts)."""
    return TABLE.strategy


def tables() -> st.SearchStrategy[str]:
    """A valid rules table, rendered with the freedoms the syntax allows."""
    return tables_with_rules().map(lambda t: t[0])


#: Lines that make a table invalid, each breaking one syntax rule (one line per kind of error
#: ``reference_model.dlq_table.ERROR_KINDS`` names; NO_RULES stands for a table without rules).
NO_RULES = "(no rules)"
BROKEN_LINES = ("ACTION(FWD) HEADER(NO)", "COLOUR(RED) ACTION(DISCARD)", "REASON(20?3) ACTION(IGNORE)",
                "ACTION(RETRY) RETRY(0)", "DESTQ(A) DESTQ(B) ACTION(DISCARD)", "WAIT(NO)",
                "FORMAT() ACTION(DISCARD)", "USERID('far.too.long.user') ACTION(IGNORE)",
                "REASON=2053 ACTION(IGNORE)", "ACTION(DISCARD) REASON(MQRC_Q_FULL", "DESTQ(A) PERSIST(MQPER_PERSISTENT)",
                "ACTION(DISCARD) FWDQ(A)", "MSGTYPE(MQMT_NOTHING) ACTION(IGNORE)", "USERID('bob) ACTION(IGNORE)",
                "ACTION(MOVE) FWDQ(A)", "ACTION(MOVE)", "ACTION(FWD) FWDQ(A) PUTAUT(ALL)",
                "ACTION(FWD) FWDQ(&NOTAVAR)", f"ACTION(FWD) FWDQ({TOO_LONG})", "ACTION(FWD) FWDQ(A) HEADER(MAYBE)",
                f"DESTQ({TOO_LONG}) ACTION(IGNORE)", NO_RULES)
#: Control data that makes a table invalid (it replaces the table's own): a queue name with a wildcard,
#: a RETRYINT that is not a number, a WAIT that is neither YES, NO nor a number, a name too long.
BROKEN_CONTROLS = ("INPUTQ('DL*')", "INPUTQM('QM?') RETRYINT(10)", "RETRYINT(TEN)", "WAIT(MAYBE)",
                   f"INPUTQ({TOO_LONG})")


def _syntax_edges() -> tuple[tuple[str, ...], ...]:
    """Lines at the edges of the rules table's syntax, derived from its definition (the model's tables of
    keywords, field lengths, symbolic-name prefixes and limits): valid rules lines, valid control data, broken
    rules lines and broken control data.  Each valid line is at a limit and each broken one a step past it, so
    that a reader off by one, or one that compares the wrong end of a value, refuses a valid table or accepts
    a broken one.  Which is which is the model's to say (a test checks that it agrees with this split)."""
    valid, bad = [], []
    for name, length in sorted(T.STRING_PATTERNS.items()):
        valid.append(f"{name}('{'X' * length}') ACTION(IGNORE)")
        bad.append(f"{name}('{'X' * (length + 1)}') ACTION(IGNORE)")
    # blanks at the end and '*' do not count towards the length; '' stands for a quote; ')' may be quoted
    valid += [f"DESTQ('{'L' * 48}*') ACTION(IGNORE)", "USERID('bob          ') ACTION(IGNORE)",
              "APPLIDAT('a''1') ACTION(IGNORE)", "APPLIDAT('a)b') ACTION(IGNORE)"]
    for name, prefixes in sorted(T.NUMERIC_PATTERNS.items()):
        for prefix in prefixes:
            known = min(s for s in T.SYMBOLS if s.startswith(prefix))
            valid.append(f"{name}({known}) ACTION(IGNORE)")
            bad.append(f"{name}({prefix}NO_SUCH_NAME) ACTION(IGNORE)")
        others = sorted(s for s in T.SYMBOLS if not s.startswith(prefixes))
        bad += [f"{name}({others[0]}) ACTION(IGNORE)", f"{name}(2?) ACTION(IGNORE)"]
    valid += ["REASON(+2053) ACTION(IGNORE)", "MSGTYPE(*) ACTION(DISCARD)",
              f"DESTQ(B) ACTION(RETRY) RETRY({T.MAX_RETRY})", "ACTION(DISCARD) RETRY(2)", "ACTION(DISCARD) PUTAUT(CTX)",
              "ACTION(FWD) FWDQ('PARK ')", "ACTION(FWD) FWDQ(PARK) HEADER(no) PUTAUT(ctx)", "destq(a) action(ignore)",
              "ACTION( DISCARD ) DESTQ( 'B' )", "DESTQ(A),,ACTION(IGNORE)", "  * a comment after blanks",
              "DESTQ(A) +\n    ACTION(IGNORE)", "DESTQ(B) -\nACTION(DISCARD)"]
    bad += [f"ACTION(RETRY) RETRY({T.MAX_RETRY + 1})", "ACTION(RETRY) RETRY(*)", "ACTION(RETRY) RETRY(-1)",
            "ACTION(FWD) FWDQ(A) RETRY(0)", "USERID('') ACTION(IGNORE)", "DESTQ(A B) ACTION(IGNORE)",
            "ACTION(FWD) FWDQ(' ')", "ACTION(FWD) FWDQ(A?)", "ACTION(FWD) FWDQ(A) FWDQM(QM*)",
            f"ACTION(FWD) FWDQ(A) FWDQM({'Q' * 49})", "ACTION(FWD) FWDQ(A) FWDQM(&DESTQ)", "ACTION(FWD) FWDQ(&DESTQM)",
            "ACTION(IGNORE) action(DISCARD)", "ACTION(IGNORE) FWDQM(' ')", "ACTION(RETRY) HEADER(YES)",
            "INPUTQ(DLQ) ACTION(IGNORE)",
            # keywords need a blank or comma between them, also where a continuation joins two lines
            "ACTION(DISCARD)REPLYQ(X)", "DESTQ(A)+\n    ACTION(IGNORE)", "DESTQ(A)-\nACTION(IGNORE)"]
    limit = T.MAX_RETRY
    controls = [f"RETRYINT({limit})", f"WAIT({limit})", "WAIT(no)", "WAIT(0)", "INPUTQ('DLQ  ') RETRYINT( 10 )",
                 "INPUTQ(DLQ),WAIT(NO)"]
    bad_controls = [f"RETRYINT({limit + 1})", f"WAIT({limit + 1})", f"INPUTQM({'Q' * 49})", "WAIT(-1)",
                    "RETRYINT(+5)", "INPUTQ('')", "INPUTQ(DLQ)WAIT(NO)"]
    return tuple(valid), tuple(controls), tuple(bad), tuple(bad_controls)


#: Lines at the syntax's edges (:func:`_syntax_edges`): valid rules lines, valid control data, and broken ones.
EDGE_LINES, EDGE_CONTROLS, _BROKEN_EDGES, _BROKEN_EDGE_CONTROLS = _syntax_edges()
BROKEN_LINES += _BROKEN_EDGES
BROKEN_CONTROLS += _BROKEN_EDGE_CONTROLS
#: Every way a table is broken, each one line: rules lines go between entries, control lines first.
ALL_BROKEN = BROKEN_LINES + BROKEN_CONTROLS


def broken(entries: list[dict], style: int, line: str) -> str:
    """A valid table of ``entries`` (its control data first) broken by ``line`` (one of :data:`ALL_BROKEN`)."""
    if line == NO_RULES:
        return render(entries[:1], style)
    if line in BROKEN_CONTROLS:
        return line + "\n" + render(entries[1:], style)
    return render(entries, style) + line + "\n"


def broken_at(entries: list[dict], style: int, bad: list[str], places: tuple[int, ...]) -> str:
    """The table of ``entries`` (its control data first) broken by each line of ``bad`` (one or two of
    :data:`ALL_BROKEN`), a rules line going to the gap between entries that ``places`` picks.

    Broken lines go between entries, never inside one continued over several lines (which could
    complete it: an entry without ACTION continued by one that has it is valid).
    """
    if NO_RULES in bad:
        return render(entries[:1], style)
    for line in bad:
        if line in BROKEN_CONTROLS:
            return broken(entries, style, line)
    lines = render(entries, style).splitlines()
    first = 0   # the last line of the first entry (the control data): a line goes only after it
    while not lines[first].strip() or lines[first].lstrip().startswith("*") \
            or lines[first].rstrip().endswith(("+", "-")):
        first += 1
    for line, place in zip(bad, places):
        gaps = [i for i in range(first + 1, len(lines) + 1) if not lines[i - 1].rstrip().endswith(("+", "-"))]
        lines.insert(gaps[place % len(gaps)], line)
    return "\n".join(lines) + "\n"


#: How a table is broken: one or two broken lines and where each goes (:func:`broken_at`).
BREAKAGE = Record(lambda first, second, place, other: ([first] + ([second] if second else []), (place, other)),
                  first=ALL_BROKEN, second=absent_or(*ALL_BROKEN), place=range(8), other=range(8))
#: A table with one or two syntax errors, or without rules: a handler must refuse it (DLQ-09, DLQ-13).
BROKEN = Record(lambda control, rules, style, how: broken_at([control] + rules, style, *how),
                control=CONTROL, rules=RULES, style=STYLE, how=BREAKAGE)


def broken_tables() -> st.SearchStrategy[str]:
    """A table with one or two syntax errors, or without rules: a handler must refuse it (DLQ-09, DLQ-13)."""
    return BROKEN.strategy


#: A new table for a running handler: valid two times in three (with its rules), else broken (no rules).
EDIT = OneOf(TABLE, TABLE, Record(lambda table: (table, []), table=BROKEN))


# ---------------------------------------------------------------------------- messages

def _descriptor(user_id, appl_identity_data, put_appl_type, put_appl_name, **fields) -> dict:
    return {**fields, "context": L.MessageContext(user_id=user_id, appl_identity_data=appl_identity_data,
                                                  put_appl_type=put_appl_type, put_appl_name=put_appl_name)}


HEADER = Record(L.DeadLetterHeader, reason=tuple(REASONS.values()), dest_q=("A", "B", "A", MISSING, "PARK"),
                dest_qmgr=("", "", "", "FAR.QM"), format=(C.MQFMT_STRING, C.MQFMT_NONE))
#: A dead letter's descriptor fields (a dict) with its context.
DESCRIPTOR = Record(
    _descriptor, msg_type=(C.MQMT_DATAGRAM, C.MQMT_REQUEST), persistence=(C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT),
    reply_to_q=("", "B", "PARK"), reply_to_qmgr=("", "", "FAR.QM"), priority=range(10),
    # a report's Feedback (none on most messages), which FEEDBACK patterns match
    feedback=(C.MQFB_NONE, C.MQFB_NONE, C.MQRC_Q_FULL),
    user_id=USERS, appl_identity_data=("", "a 1"), put_appl_type=(C.MQAT_UNIX, C.MQAT_JAVA), put_appl_name=APPL_NAMES)
headers, descriptors = HEADER.strategy, DESCRIPTOR.strategy


#: For each pattern the tables carry, what makes a dead letter match it: (where, field, value) with
#: where the MQDLH ("dlh"), the descriptor ("md") or its context ("ctx"); nothing to change for a
#: pattern every dead letter matches.  APPLNAME 'billing?' and 'payroll?' want one character more
#: than the names drawn: the nearest name is taken, and whether it matches is the rule's to say.
FITS: dict[tuple[str, str], tuple[tuple[str, str, object], ...]] = {
    **{("REASON", name): (("dlh", "reason", code),) for name, code in REASONS.items()},
    ("REASON", "2053"): (("dlh", "reason", C.MQRC_Q_FULL),),
    ("DESTQ", "A"): (("dlh", "dest_q", "A"),), ("DESTQ", "B"): (("dlh", "dest_q", "B"),),
    ("DESTQ", "A*"): (("dlh", "dest_q", "A"),), ("DESTQ", "?"): (("dlh", "dest_q", "B"),),
    ("DESTQ", MISSING): (("dlh", "dest_q", MISSING),), ("DESTQ", "'PAR?'"): (("dlh", "dest_q", "PARK"),),
    ("MSGTYPE", "MQMT_REQUEST"): (("md", "msg_type", C.MQMT_REQUEST),),
    ("MSGTYPE", "MQMT_DATAGRAM"): (("md", "msg_type", C.MQMT_DATAGRAM),),
    ("MSGTYPE", "8"): (("md", "msg_type", C.MQMT_DATAGRAM),),
    ("PERSIST", "MQPER_PERSISTENT"): (("md", "persistence", C.MQPER_PERSISTENT),),
    ("PERSIST", "MQPER_NOT_PERSISTENT"): (("md", "persistence", C.MQPER_NOT_PERSISTENT),),
    ("USERID", "'alice'"): (("ctx", "user_id", "alice"),), ("USERID", "'bob '"): (("ctx", "user_id", "bob"),),
    ("USERID", "'al*'"): (("ctx", "user_id", "alice"),),
    ("APPLNAME", "'payroll*'"): (("ctx", "put_appl_name", "payroll"),),
    ("APPLNAME", "'payroll?batch'"): (("ctx", "put_appl_name", "payroll.batch"),),
    ("APPLNAME", "'billing?'"): (("ctx", "put_appl_name", "billing"),),
    ("APPLNAME", "'payroll?'"): (("ctx", "put_appl_name", "payroll"),),
    ("REPLYQ", "?*"): (("md", "reply_to_q", "PARK"),), ("REPLYQ", "' '"): (("md", "reply_to_q", ""),),
    ("REPLYQ", "B"): (("md", "reply_to_q", "B"),),
    ("FORMAT", "MQSTR"): (("dlh", "format", C.MQFMT_STRING),), ("FORMAT", "' '"): (("dlh", "format", C.MQFMT_NONE),),
    ("APPLTYPE", "MQAT_UNIX"): (("ctx", "put_appl_type", C.MQAT_UNIX),),
    ("APPLTYPE", "28"): (("ctx", "put_appl_type", C.MQAT_JAVA),),
    ("APPLIDAT", "'a 1'"): (("ctx", "appl_identity_data", "a 1"),),
    ("APPLIDAT", "' '"): (("ctx", "appl_identity_data", ""),),
    ("DESTQM", "FAR.QM"): (("dlh", "dest_qmgr", "FAR.QM"),), ("DESTQM", "' '"): (("dlh", "dest_qmgr", ""),),
    ("FEEDBACK", "MQFB_NONE"): (("md", "feedback", C.MQFB_NONE),),
    ("FEEDBACK", "MQRC_Q_FULL"): (("md", "feedback", C.MQRC_Q_FULL),),
    ("REPLYQM", "FAR*"): (("md", "reply_to_qmgr", "FAR.QM"),), ("REPLYQM", "' '"): (("md", "reply_to_qmgr", ""),),
}


#: For each pattern a dead letter can fail to match, a value that does not match it (where, field,
#: value as in :data:`FITS`): a dead letter fitted to a rule and then given one of these misses that
#: rule by that keyword alone.  Patterns every value matches ('*') have none, nor do those whose
#: nearest miss depends on how blanks pad a field ('?*', 'billing?' against 'billing').
MISSES: dict[tuple[str, str], tuple[str, str, object]] = {
    ("REASON", "MQRC_Q_FULL"): ("dlh", "reason", C.MQRC_PUT_INHIBITED),
    ("REASON", "MQRC_PUT_INHIBITED"): ("dlh", "reason", C.MQRC_Q_FULL),
    ("REASON", "MQRC_UNKNOWN_OBJECT_NAME"): ("dlh", "reason", C.MQRC_Q_FULL),
    ("REASON", "2053"): ("dlh", "reason", C.MQRC_PUT_INHIBITED),
    ("DESTQ", "A"): ("dlh", "dest_q", "B"), ("DESTQ", "B"): ("dlh", "dest_q", "A"),
    ("DESTQ", "A*"): ("dlh", "dest_q", "B"), ("DESTQ", "?"): ("dlh", "dest_q", "PARK"),
    ("DESTQ", MISSING): ("dlh", "dest_q", "A"), ("DESTQ", "'PAR?'"): ("dlh", "dest_q", "A"),
    ("MSGTYPE", "MQMT_REQUEST"): ("md", "msg_type", C.MQMT_DATAGRAM),
    ("MSGTYPE", "MQMT_DATAGRAM"): ("md", "msg_type", C.MQMT_REQUEST),
    ("MSGTYPE", "8"): ("md", "msg_type", C.MQMT_REQUEST),
    ("PERSIST", "MQPER_PERSISTENT"): ("md", "persistence", C.MQPER_NOT_PERSISTENT),
    ("PERSIST", "MQPER_NOT_PERSISTENT"): ("md", "persistence", C.MQPER_PERSISTENT),
    ("USERID", "'alice'"): ("ctx", "user_id", "bob"), ("USERID", "'bob '"): ("ctx", "user_id", "alice"),
    ("USERID", "'al*'"): ("ctx", "user_id", "bob"),
    ("APPLNAME", "'payroll*'"): ("ctx", "put_appl_name", "billing"),
    ("APPLNAME", "'payroll?batch'"): ("ctx", "put_appl_name", "billing"),
    ("APPLNAME", "'payroll?'"): ("ctx", "put_appl_name", "billing"),
    ("REPLYQ", "' '"): ("md", "reply_to_q", "B"), ("REPLYQ", "B"): ("md", "reply_to_q", "PARK"),
    ("FORMAT", "MQSTR"): ("dlh", "format", C.MQFMT_NONE), ("FORMAT", "' '"): ("dlh", "format", C.MQFMT_STRING),
    ("APPLTYPE", "MQAT_UNIX"): ("ctx", "put_appl_type", C.MQAT_JAVA),
    ("APPLTYPE", "28"): ("ctx", "put_appl_type", C.MQAT_UNIX),
    ("APPLIDAT", "'a 1'"): ("ctx", "appl_identity_data", ""), ("APPLIDAT", "' '"): ("ctx", "appl_identity_data", "a 1"),
    ("DESTQM", "FAR.QM"): ("dlh", "dest_qmgr", ""), ("DESTQM", "' '"): ("dlh", "dest_qmgr", "FAR.QM"),
    ("FEEDBACK", "MQFB_NONE"): ("md", "feedback", C.MQRC_Q_FULL),
    ("FEEDBACK", "MQRC_Q_FULL"): ("md", "feedback", C.MQFB_NONE),
    ("REPLYQM", "FAR*"): ("md", "reply_to_qmgr", ""), ("REPLYQM", "' '"): ("md", "reply_to_qmgr", "FAR.QM"),
}


# Operations a case repeats, each made once: the same object every time is found at once in the
# step memo (its hash kept, equal by identity).
@functools.lru_cache(maxsize=None)
def _run(handler: str) -> L.RunDlqHandler:
    return L.RunDlqHandler(handler=handler)


@functools.lru_cache(maxsize=None)
def _restart(handler: str) -> L.RestartDlqHandler:
    return L.RestartDlqHandler(handler=handler)


@functools.lru_cache(maxsize=None)
def _advance(tenths: int) -> L.AdvanceClock:
    return L.AdvanceClock(tenths=tenths)


def _changed(dlh: L.DeadLetterHeader, md: dict, changes) -> tuple[L.DeadLetterHeader, dict]:
    """``dlh`` and ``md`` with ``changes`` made ((where, field, value), where "dlh", "md" or "ctx")."""
    header: dict = {}
    desc = dict(md)
    ctx: dict = {}
    for where, name, value in changes:
        {"dlh": header, "md": desc, "ctx": ctx}[where][name] = value
    if ctx:
        desc["context"] = attrs.evolve(desc["context"], **ctx)
    return attrs.evolve(dlh, **header), desc


def _forwarded_to(rule: dict, dlh: L.DeadLetterHeader, md: dict) -> str | None:
    """The machine's queue the ACTION(FWD) rule ``rule`` forwards a dead letter it matches to, if it is one."""
    if rule.get("FWDQM", "' '") not in ("' '", "&DESTQM", "&REPLYQM"):
        return None
    queue = {"&DESTQ": dlh.dest_q, "&REPLYQ": md.get("reply_to_q", "")}.get(rule["FWDQ"], rule["FWDQ"])
    return queue if queue in TARGETS + (REPORTS,) else None


def fitted(rule: dict, dlh: L.DeadLetterHeader, md: dict) -> tuple[L.DeadLetterHeader, dict]:
    """``dlh`` and ``md`` changed just enough that the rules-table entry ``rule`` matches them."""
    return _changed(dlh, md, [change for key, pattern in rule.items() for change in FITS.get((key, pattern), ())])


def near_miss(rule: dict, dlh: L.DeadLetterHeader, md: dict, which: int) -> tuple[L.DeadLetterHeader, dict]:
    """``dlh`` and ``md`` made to match ``rule`` in every pattern keyword but one (the ``which``-th of
    those :data:`MISSES` can miss, in the rule's order), which they miss; or fitted, if none can."""
    dlh, md = fitted(rule, dlh, md)
    missable = [(key, pattern) for key, pattern in rule.items() if (key, pattern) in MISSES]
    return _changed(dlh, md, [MISSES[missable[which % len(missable)]]]) if missable else (dlh, md)


class DlqMachine(ConformanceMachine):
    area = "dlq"

    @drawn_initialize(table=TABLE, fifo=(False, True), maxdepth=(1, 2, 4),
                      inhibited=Some(**{q: (True,) for q in TARGETS}))
    def set_up(self, table, fifo, maxdepth, inhibited):
        table, self.known_rules = table
        self.count = 0
        self.missing_defined = False
        self.second = False
        self.execute(L.DefineQueue(queue=DLQ, attrs={"MSGDLVSQ": C.MQMDS_FIFO if fifo else C.MQMDS_PRIORITY}))
        for q in TARGETS:
            self.execute(L.DefineQueue(queue=q, attrs={"MAXDEPTH": maxdepth, "PUT": int(q in inhibited)}))
        self.execute(L.DefineQueue(queue=REPORTS))
        self.execute(L.AlterQueueManager(attrs={"DEADQ": DLQ}))
        self.execute(L.Connect(conn=APP))
        for q in TARGETS + (REPORTS,):
            self.execute(L.Open(conn=APP, handle=f"{APP}.{q}", queue=q,
                                options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT))
        self.execute(L.StartDlqHandler(handler="H1", table=table))
        self.handlers = ["H1"]
        self.h1_table = table

    def _recent_rules(self) -> list[dict]:
        """The last rules the case's tables brought (as many as a drawn table has at most): a refused
        table is built of them, only how it is broken being drawn."""
        return self.known_rules[-4:]

    def _msg_id(self) -> str:
        self.count += 1
        return f"M{self.count}"

    def _h1_restarted_with(self, table: str) -> None:
        """H1 given ``table`` and restarted (with :attr:`h1_table`: its own table back)."""
        self.execute(L.ChangeDlqTable(handler="H1", table=table))
        self.execute(_restart("H1"))

    def _dead_letter(self, dlh: L.DeadLetterHeader, md: dict) -> None:
        mid = self._msg_id()
        desc = L.MessageDescriptor(msg_id=mid, format=C.MQFMT_DEAD_LETTER_HEADER, **md)
        self.execute(L.Put1(conn=APP, queue=DLQ, body=f"dead letter {mid}", md=desc, dlh=dlh))

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR)
    def dead_letter(self, dlh, md):
        self._dead_letter(dlh, md)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, expiry=(20, 100, 600), report=(False, True), wait=(0, 50, 150),
                then=(None,) + TARGETS + (REPORTS,), fit=absent_or(*range(8)))
    def expiring_dead_letter(self, dlh, md, expiry, report, wait, then, fit):
        """A dead letter with an expiry (and perhaps an expiration report), time, a handler run, and
        perhaps a queue drained to see what arrived (with what is left of its expiry).  Half of them are
        made to match one of the case's forwarding rules (where it has any), and the queue drained is then
        the one that rule forwards to, if it is one of the machine's: a dead letter drawn at random is rarely
        forwarded where a drain sees it, and a handler that forwards without what is left of the expiry went
        unseen in some runs."""
        mid = self._msg_id()
        if report:
            md = {**md, "reply_to_q": REPORTS, "reply_to_qmgr": ""}
        forwarding = [r for r in self.known_rules if r.get("ACTION") == "FWD"] if fit is not None else []
        if forwarding:
            rule = forwarding[fit % len(forwarding)]
            dlh, md = fitted(rule, dlh, md)
            then = _forwarded_to(rule, dlh, md) or then
        desc = L.MessageDescriptor(msg_id=mid, format=C.MQFMT_DEAD_LETTER_HEADER, expiry=expiry,
                                   report=C.MQRO_EXPIRATION if report else C.MQRO_NONE, **md)
        self.execute(L.Put1(conn=APP, queue=DLQ, body=f"expiring {mid}", md=desc, dlh=dlh))
        if wait:
            self.execute(_advance(wait))
        self.run_handler(0)
        if then:
            self.drain(then)

    @rule(md=descriptors)
    def without_header(self, md):
        mid = self._msg_id()
        desc = L.MessageDescriptor(msg_id=mid, format=C.MQFMT_STRING, **md)
        self.execute(L.Put1(conn=APP, queue=DLQ, body=f"plain {mid}", md=desc))

    @rule(which=st.integers(0, 1))
    def run_handler(self, which):
        self.execute(_run(self.handlers[which % len(self.handlers)]))

    @rule(tenths=st.sampled_from([10, 50, 100, 300, 600]))
    def time_passes(self, tenths):
        self.execute(_advance(tenths))

    @drawn_rule(which=(0, 1), tenths=(100, 300))
    def rescan(self, which, tenths):
        """Time for a rescan (RETRYINT is at most 30 seconds), then a run."""
        self.execute(_advance(tenths))
        self.run_handler(which)

    def _dead_letter_and_run(self, dlh, md, which, then) -> None:
        self._dead_letter(dlh, md)
        self.run_handler(which)
        if then:
            self.drain(then)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, which=(0, 1), then=(None,) + TARGETS)
    def dead_letter_and_run(self, dlh, md, which, then):
        """A dead letter, a handler run, and perhaps a destination drained: what arrived there is
        checked (its MQDLH, format, context and expiry) while it is still the message just handled."""
        self._dead_letter_and_run(dlh, md, which, then)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, which=range(8), also=range(8), then=(None,) + TARGETS)
    def dead_letter_for_a_rule(self, dlh, md, which, also, then):
        """A dead letter made to match one of the rules the handlers' tables have had and, where their
        patterns agree, a later one too (most drawn dead letters match few rules, so that actions,
        tries and falling through from a rule whose tries are spent would come late), a handler run,
        and perhaps a destination drained."""
        first, later = which % len(self.known_rules), also % len(self.known_rules)
        if later > first:
            dlh, md = fitted(self.known_rules[later], dlh, md)
        dlh, md = fitted(self.known_rules[first], dlh, md)
        self._dead_letter_and_run(dlh, md, which, then)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, which=range(8), miss=range(8), then=(None,) + TARGETS)
    def dead_letter_near_a_rule(self, dlh, md, which, miss, then):
        """A dead letter that matches one of the case's rules in every pattern keyword but one: a
        keyword the handler ignores, or compares with another field, shows only where it alone decides
        whether a rule matches (a dead letter drawn at random rarely meets a rule's other keywords)."""
        rule = self.known_rules[which % len(self.known_rules)]
        self._dead_letter_and_run(*near_miss(rule, dlh, md, miss), which, then)

    @drawn_rule(queue=TARGETS, inhibited=(False, True))
    def put_inhibit(self, queue, inhibited):
        self.execute(L.AlterQueue(queue=queue, attrs={"PUT": int(inhibited)}))

    @rule(queue=st.sampled_from(TARGETS + (REPORTS,)))
    def drain(self, queue):
        for _ in range(5):
            obs = self.execute(L.Get(conn=APP, handle=f"{APP}.{queue}", options=C.MQGMO_NO_SYNCPOINT))
            if obs.message is None:
                break

    @precondition(lambda self: not self.missing_defined)
    @rule()
    def define_missing_queue(self):
        self.missing_defined = True
        self.execute(L.DefineQueue(queue=MISSING))

    @rule(table=EDIT.strategy)
    def edit_table(self, table):
        table, rules = table
        self.execute(L.ChangeDlqTable(handler="H1", table=table))
        self.h1_table = table
        self.known_rules = self.known_rules + rules

    @drawn_rule(style=STYLE, how=BREAKAGE, retryint=("1", "10", "30"))
    def refused_table(self, style, how, retryint):
        """H1 restarted with a broken table is refused and stays stopped (DLQ-09); given its former
        table back and restarted, it runs again with a fresh memory (DLQ-30).  The table's valid part
        is rules the case already has, spelt another way: only how it is broken is drawn anew."""
        table = broken_at([{"RETRYINT": retryint}] + self._recent_rules(), style, *how)
        self._h1_restarted_with(table)
        self._h1_restarted_with(self.h1_table)

    @drawn_rule(style=STYLE, first=range(len(ALL_BROKEN)))
    def refused_tables(self, style, first):
        """H1 restarted with each of five tables, each broken in another way (a fifth of the ways a
        table can be broken, spread over them), every one refused (DLQ-09); then its own table back.
        The tables' valid part is rules the case already has."""
        rules = self._recent_rules()
        step = len(ALL_BROKEN) // 5
        for k in range(5):
            line = ALL_BROKEN[(first + k * step) % len(ALL_BROKEN)]
            self._h1_restarted_with(broken([{"RETRYINT": "10"}] + rules, style, line))
        self._h1_restarted_with(self.h1_table)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, which=range(8), line=EDGE_LINES, control=absent_or(*EDGE_CONTROLS),
                place=range(8), style=STYLE)
    def table_at_the_syntax_edges(self, dlh, md, which, line, control, place, style):
        """H1 given a table valid at one of the syntax's edges (a value as long as its field, a number at its
        limit, a symbolic name of each prefix, blanks, commas, quotes and continuations where they may be; and
        perhaps control data at its own edges) and restarted: it must start (DLQ-09) and act by what the lines
        say.  The rest of the table is rules the case has; a dead letter for one of them and a run; then H1 has
        its own table back.  Broken tables only one step past the same edges are :data:`ALL_BROKEN`'s: a
        reader off by one, or blind to a separator, refuses one of these or accepts one of those."""
        rules = self._recent_rules()
        head = [] if control else [{"RETRYINT": "10"}]
        text = broken_at(head + rules, style, [line], (place,))
        self._h1_restarted_with(f"{control}\n{text}" if control else text)
        self._dead_letter(*fitted(rules[which % len(rules)], dlh, md))
        self.run_handler(0)
        self._h1_restarted_with(self.h1_table)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, which=range(8),
                first=({"ACTION": "DISCARD"}, {"ACTION": "FWD", "FWDQ": "PARK"}),
                control=CONTROL, more=RULES, style=STYLE)
    def new_table_for_what_was_left(self, dlh, md, which, first, control, more, style):
        """A dead letter for one of the rules the case has had (one that ignores where there is one), a run of
        H1 that may leave it on the queue, then H1 given a new table, whose first rule acts on every message (no
        pattern: what the handler left is then told by its memory alone, not by how it matches), and restarted,
        and a run: a restarted handler considers again what its previous run left alone, with the table it
        started with (DLQ-30), as an operator who edits the table for the messages being ignored expects.  A
        handler that remembered what it had left, or the tries it had counted, leaves it still.  Then H1 has its
        own table back, restarted again."""
        left = [r for r in self.known_rules if r.get("ACTION") == "IGNORE"] or self.known_rules
        rule = left[which % len(left)]
        self._dead_letter(*fitted(rule, dlh, md))
        self.run_handler(0)
        self._h1_restarted_with(render([control, first, *more], style))
        self.run_handler(0)
        # and its own table back, the case going on as it was
        self._h1_restarted_with(self.h1_table)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, pattern=RARE_PATTERNS, hit=(False, True), control=CONTROL, style=STYLE)
    def dead_letter_by_a_rare_keyword(self, dlh, md, pattern, hit, control, style):
        """H1 given a table whose first rule discards by a keyword the other rules never carry (the context's
        ApplType or ApplIdentityData, the MQDLH's DestQMgrName, the descriptor's Feedback or ReplyToQMgr) and
        whose second ignores every message, and restarted; a dead letter that matches that keyword, or misses
        the rule by it alone; a run, and the dead-letter queue's depth, one message fewer exactly where the
        keyword matched (DLQ-41; the second rule makes a message no rule deals with, DLQ-06, no part of it).  At
        random such a rule comes in one table of ten, and a dead letter near it more rarely still, so that a
        handler that ignores one of these keywords, or compares it with another field, went unseen in some
        runs.  Then H1 has its own table back, restarted."""
        rare = {pattern[0]: pattern[1], "ACTION": "DISCARD"}
        self._h1_restarted_with(render([control, rare, {"ACTION": "IGNORE"}], style))
        self._dead_letter(*(fitted(rare, dlh, md) if hit else near_miss(rare, dlh, md, 0)))
        self.run_handler(0)
        self.execute(L.InquireQueue(queue=DLQ, names=("CURDEPTH",)))
        self._h1_restarted_with(self.h1_table)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, retry=("2", "3"), control=CONTROL, style=STYLE)
    def tried_at_each_rescan(self, dlh, md, retry, control, style):
        """H1 given a table whose one rule forwards every message to PARK, RETRY(2) or (3) times, and restarted,
        PARK emptied and put-inhibited; a dead letter, and a run at each of three rescans, PARK put-enabled
        before the third: the forward fails twice, the message backed out each time, and is tried again at the
        next rescan until the rule's tries are spent (DLQ-03, DLQ-24): with RETRY(3) the third try forwards it,
        with RETRY(2) it is left (DLQ-05); then PARK drained, what arrived checked (its MQDLH and context,
        DLQ-22, DLQ-12).  A handler that tries each rule once went unseen in some runs: a failing action and a
        rescan after it come together rarely at random.  Then H1 has its own table back, restarted."""
        # RETRYINT(10), not (1): between two runs without an advance a system's own time passes too (a real
        # queue manager's handler rescans on the wall clock); ten seconds of it between two steps is not met
        control = {**control, "RETRYINT": "10"}
        rule = {"ACTION": "FWD", "FWDQ": "PARK", "RETRY": retry}
        self.drain("PARK")
        self.execute(L.AlterQueue(queue="PARK", attrs={"PUT": 1}))
        self._h1_restarted_with(render([control, rule], style))
        self._dead_letter(dlh, md)
        self.run_handler(0)
        self.execute(_advance(100))
        self.run_handler(0)
        self.execute(L.AlterQueue(queue="PARK", attrs={"PUT": 0}))
        self.execute(_advance(100))
        self.run_handler(0)
        self.drain("PARK")
        self._h1_restarted_with(self.h1_table)

    @drawn_rule(dlh=HEADER, md=DESCRIPTOR, wait=("0", "20", "NO"), retryint=("1", "10"), tenths=(50, 150, 400),
                style=STYLE)
    def only_ignored_messages_wait(self, dlh, md, wait, retryint, tenths, style):
        """H1 given a table that ignores every message, with WAIT(NO), WAIT(0) or WAIT(20), and restarted; a
        dead letter, a run, time (a rescan or more), a run: a message the handler ignores, met again at each
        rescan, is no action tried, so the handler ends once its WAIT has passed (DLQ-29); one that counted it
        as work would run on.  Then H1 has its own table back, restarted."""
        self._h1_restarted_with(render([{"RETRYINT": retryint, "WAIT": wait}, {"ACTION": "IGNORE"}], style))
        self._dead_letter(dlh, md)
        self.run_handler(0)
        self.execute(_advance(tenths))
        self.run_handler(0)
        self._h1_restarted_with(self.h1_table)

    @rule(which=st.integers(0, 1))
    def restart_handler(self, which):
        self.execute(_restart(self.handlers[which % len(self.handlers)]))

    @precondition(lambda self: not self.second)
    @drawn_rule(table=TABLE, exclusive=(False, True))
    def second_handler(self, table, exclusive):
        """A second handler on the same queue; with DEFSOPT(EXCL) it cannot open it while H1 runs (DLQ-14)."""
        table, rules = table
        self.known_rules = self.known_rules + rules
        self.second = True
        if exclusive:
            self.execute(L.AlterQueue(queue=DLQ, attrs={"DEFSOPT": C.MQOO_INPUT_EXCLUSIVE}))
        self.handlers.append("H2")
        self.execute(L.StartDlqHandler(handler="H2", table=table))
