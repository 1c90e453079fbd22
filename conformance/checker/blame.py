"""Blame by counterfactual: which rules a failing history really breaks.

The checker names the rules that decide the fields where an observation differs from
MQ's closest outcome (:attr:`~conformance.checker.sequential.Mismatch.rules`).  That list says
where to look; it is not yet a verdict.  A rule is *blamed* (reported failed) only
when the history passes once that rule alone is relaxed: the model follows the whole
history again, allowing besides MQ's own outcomes every outcome that rule constrains,
and no step departs any more.  A departure that no single relaxation explains is
blamed on the smallest set of rules whose relaxation together does.  Rules the checker
mentioned but whose relaxation does not explain the history are *also mentioned*:
shown, never failed.

What relaxing a rule allows:

* at any step, an observation that differs from one of MQ's outcomes only in fields
  the rule decides (:func:`deciders`: the model's own account of which rules decide
  each field, made exact for delivery order: CORE-04 only where the message that came
  back has another priority, CORE-05 only where it has the same one); the history goes
  on from that outcome's state where what differs cannot change what happens next;
* for the rules that say how a unit of work ends (:data:`OTHER_END`), the other
  ending: a commit that backs out, a normal MQDISC that backs out, an abnormal end
  that commits; for the two rules of a backout (:data:`PARTIAL_END`), the backout
  with that half undone (its puts kept, or its gets' messages left gone), whether the
  application asked for it or an abnormal end, a cut connection or a restart made it.  Later steps
  then decide whether the system really ended the unit of work so; an observation
  alone never blames them.

The rule named first is the one whose relaxation is first needed along the history
(the earliest step that departs from MQ's outcomes under every other reading).  Pure:
the model alone, no system.
"""

from __future__ import annotations

import itertools

import attrs

from conformance.checker import sequential as K
from reference_model import core
from reference_model import dlq
from reference_model import expiry
from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from reference_model import trigger
from reference_model.state import ModelState

#: The rules of how a unit of work ends, relaxed by letting the other ending happen instead: for each,
#: the operation whose ending it decides and the operation that ends it the other way.
OTHER_END = {
    "CORE-29": (L.Commit, lambda op: L.Backout(conn=op.conn)),
    "CORE-30": (L.Disconnect, lambda op: None if op.abnormal else attrs.evolve(op, abnormal=True)),
    "CORE-31": (L.Disconnect, lambda op: attrs.evolve(op, abnormal=False) if op.abnormal else None),
}
#: Of those, the rules whose other ending backs the unit of work out: a call that did so may answer MQRC_BACKED_OUT.
BACKS_OUT = frozenset({"CORE-29", "CORE-30"})
#: The rule of how a commit ends its unit of work: a commit answers, so its other ending is told by inference
#: wherever the departure is at another step.
COMMIT_ENDING = frozenset({"CORE-29"})
#: The rules of what a backout does, each relaxed by a backout that does all else: CORE-03 (it deletes the
#: unit of work's puts) by one that keeps them, CORE-15 (it reinstates its gets) by one that leaves their
#: messages gone; both relaxed, the backout commits.
PARTIAL_END = {"CORE-03": "puts", "CORE-15": "gets"}
#: Only an application's backout skips a marked get: relaxed, a backout it did not ask for (an abnormal end, a
#: connection cut, a restart) skips it too, the marked message gone for good and the rest backed out.
UNREQUESTED_SKIP = "SYNC-07"
PARTIAL_RULES = frozenset(PARTIAL_END)
#: Every rule a reading relaxes by ending a unit of work otherwise.
ENDINGS = frozenset(OTHER_END) | PARTIAL_RULES
#: Rules whose effect is the state a unit of work leaves: an observation elsewhere never blames them
#: alone (the state that other ending leaves is followed instead).
ENDINGS_ONLY = frozenset({"CORE-29", "CORE-30", "CORE-31"})
ORDER_RULES = ("CORE-04", "CORE-05", "CORE-06")
#: The rules of first in, first out: among messages of one priority (CORE-05), on a MSGDLVSQ(FIFO) queue (CORE-06).
FIFO_RULES = frozenset({"CORE-05", "CORE-06"})
#: Rules that decide a count a message carries (BackoutCount, and what of it a restart keeps), never whether
#: or which message comes back.
COUNT_ONLY = frozenset({"CORE-12", "CORE-17", "CORE-45", "SYNC-19"})
#: How MQ discards an expired message and reports it: never that a get returns it (EXP-06 says that).
DISCARD_ONLY = frozenset({"EXP-04", "EXP-05", "EXP-08", "EXP-12", "EXP-13"})
#: That an expired message counts in the depth until it is discarded: a depth without it tells the same story
#: of the same message as its discard does (gone, its report due), so it never makes a discard's rules, needed
#: only later, give way (:func:`blamed_alone`).
UNCOUNTED_EXPIRED = "EXP-11"
#: When MQ may remove an expired message that no get touches (a latitude, never broken by keeping it): never
#: that a get returns it.
BACKGROUND = frozenset({"EXP-23", "EXP-26"})
#: How an application's put placed a message: never why it should have left the queue.
PLAIN_PUT = frozenset({"CORE-01", "CORE-02"})
#: Rules of how a put's descriptor values are resolved or checked, each with the only reasons it gives a put: it
#: decides a put's reason code only where MQ's or the system's is one of these (a put refused for another reason,
#: or failing where MQ accepts it, never breaks how its priority or persistence was resolved).
OWN_REASONS = {"CORE-07": (), "CORE-10": (C.MQRC_PERSISTENCE_ERROR,), "CORE-08": (C.MQRC_PRIORITY_EXCEEDS_MAXIMUM,),
               "CORE-09": (C.MQRC_PRIORITY_ERROR,)}
#: Rules tried alone, and pairs among the first of them, at most (each a walk of the model over the history).
MAX_RULES = 12
MAX_PAIR_RULES = 7
#: Ways of relaxing the fields a message returned out of order shows otherwise, tried with the order's, at most.
MAX_SHOWN_WAYS = 8


@attrs.frozen(kw_only=True)
class Blame:
    """What a failing history breaks: ``rules`` (each alone explains it, or together the smallest set
    that does), first the one first needed; ``mentioned``: rules the checker named that do not, and rules of
    discards that explain it alone only from a later step than a rule of what the history shows;
    ``confirmed``: False when no relaxation within the bounds explained it (``rules`` is then the
    checker's first rule, unconfirmed)."""

    rules: tuple[str, ...]
    mentioned: tuple[str, ...] = ()
    confirmed: bool = True
    #: The history passes with the rules its run had set aside relaxed alone: a departure already found,
    #: that the checker named with other rules (``rules`` is then empty).
    known: bool = False
    #: Of ``mentioned``, the rules that explain the history alone only by a story no answer of the system shows
    #: (a unit of work ended the other way, a queue taken in another order, ...): they gave way to ``rules``.
    inferred: tuple[str, ...] = ()
    #: ``rules`` are more than one and each alone explains the history: it shows that one of them is broken,
    #: not which (a rule found broken by another history explains this one; the others are then not shown).
    each: bool = False
    #: Of ``rules``, those of which the history breaks one, not which, beside the others, each broken: no rule
    #: alone explains it, and each of several smallest sets does, all sharing the others (an expired message
    #: returned with its Expiry untouched: EXP-06, and one of the two rules of its decrement).
    either: tuple[str, ...] = ()


def _message(state: ModelState, queue: str, body) -> object:
    q = state.queues.get(queue)
    if q is None:
        return None
    return next((m for m in q.messages if m.body == body), None)


def _anywhere(state: ModelState, body) -> bool:
    """Whether a message ``body`` is, or was, in the model: on a queue, or removed from one."""
    return body in state.removed or any(m.body == body for q in state.queues.values() for m in q.messages)


def _order_deciders(branch: model.Branch, observed: L.Observation) -> list[frozenset[str]] | None:
    """Which order rules, relaxed, let the get return the observed message instead of MQ's: None when
    the observed message is not one that was there and available later in delivery order."""
    later = branch.field_rules.get("message.body:later")
    body = observed.message.body if observed.message is not None else None
    if not later or not K._available_later(branch, body):
        return None
    queue = branch.field_rules.get("message.body:queue", ("",))[0]
    q = branch.state.queues.get(queue)
    got = _message(branch.state, queue, body)
    want = branch.observation.message
    if q is None or got is None or want is None:
        return None
    expected_priority = min(want.priority, C.MAX_PRIORITY) if isinstance(want.priority, int) else None
    available = [m for m in q.messages if m.got_by is None and m.put_by is None and m.body not in branch.excluded]
    return [_order_broken(q, expected_priority, got, available)]


def _order_broken(q, want_priority, got, available) -> frozenset[str]:
    """The order rules a get breaks that returns ``got`` on ``q`` where delivery order gives a message of
    ``want_priority``; ``available``: the messages it could have returned."""
    if q.attr("MSGDLVSQ") == C.MQMDS_FIFO:
        return frozenset({"CORE-06"})
    if want_priority == got.order_priority:
        return frozenset({"CORE-05"})   # the same priority: only arrival order put the other first
    oldest = min((m for m in available if m.order_priority == got.order_priority), key=lambda m: m.seq, default=got)
    return frozenset({"CORE-04"}) if oldest is got else frozenset({"CORE-04", "CORE-05"})


def _none_taken_literally(branch: model.Branch, observed: L.Observation, op: L.Op) -> bool:
    """Whether ``op``, a get selecting by MQMI_NONE or MQCI_NONE (any value), returned what a selection of the
    blank value gives instead (a message whose identifier is blank, or none) where MQ's message has one."""
    if not core.selects(op) or op.options & core.UNDER_CURSOR:
        return False
    mo = op.match_options
    blank = [f for f, given, flag in (("msg_id", op.msg_id, C.MQMO_MATCH_MSG_ID),
                                      ("correl_id", op.correl_id, C.MQMO_MATCH_CORREL_ID)) if mo & flag and not given]
    want = branch.observation.message
    if not blank or want is None:
        return False
    # (a MsgId the queue manager generated is never blank)
    if all(getattr(want, f) == "" for f in blank):
        return False   # MQ's message is one the literal reading selects too
    got = observed.message
    if got is None:
        # none came back: a literal reading gives that only where no message there has the blank values (it
        # selects one that has them)
        return observed.rc == C.MQRC_NO_MSG_AVAILABLE and not _any_blank(branch.state, op, blank)
    return all(getattr(got, f) == "" for f in blank)


def _any_blank(state: ModelState, op: L.Op, fields: list[str]) -> bool:
    """Whether the queue of ``op``'s handle holds, in ``state``, a message ``op``'s connection could get whose
    ``fields`` (MsgId, CorrelId) are all blank."""
    if "msg_id" in fields:
        return False   # the queue manager gives every message a MsgId: none is blank
    h = state.handles.get(op.handle)
    q = state.queues.get(h.queue) if h is not None else None
    return q is not None and any(
        m.got_by is None and m.put_by in (None, op.conn) and all(getattr(m.md, f) == "" for f in fields)
        for m in q.messages)


#: The rules of a get's selection: by MsgId and CorrelId (CORE-51), none under the cursor (CORE-53).
SELECTION_RULES = frozenset({"CORE-51", "CORE-53"})


def _selected_under_cursor(branch: model.Branch, observed: L.Observation, op: L.Op) -> bool:
    """Whether ``op``, a selecting get under the cursor, found nothing there (MQRC_NO_MSG_UNDER_CURSOR) where MQ
    returns a message its selection, had it applied, would have left out."""
    if not (core.selects(op) and op.options & core.UNDER_CURSOR and observed.rc == C.MQRC_NO_MSG_UNDER_CURSOR):
        return False
    m = branch.observation.message
    if m is None:
        return False
    mo = op.match_options
    # (a MsgId the queue manager generated is never one a program selects by)
    return bool(mo & C.MQMO_MATCH_MSG_ID and op.msg_id and m.msg_id != op.msg_id
                or mo & C.MQMO_MATCH_CORREL_ID and op.correl_id and m.correl_id != op.correl_id)


def _shown_there_plainly(pairs) -> bool:
    """Whether the failing call, a browse under the cursor that selects, came right after a browse under the cursor
    of the same handle that selected nothing and returned a message: the handle's cursor had a message there for
    a browse, so what left it out of the next is the selection (CORE-53), not the cursor (CORE-20)."""
    if len(pairs) < 2:
        return False
    (op, _), (before, seen) = pairs[-1], pairs[-2]
    return (core.selects(op) and bool(op.options & C.MQGMO_BROWSE_MSG_UNDER_CURSOR)
            and isinstance(before, (L.Get, L.GetMatching)) and not core.selects(before)
            and getattr(before, "handle", None) == op.handle and getattr(before, "conn", None) == op.conn
            and bool(before.options & C.MQGMO_BROWSE_MSG_UNDER_CURSOR) and seen.message is not None
            and seen.rc == C.MQRC_NONE)


def _expiry_deciders(branch: model.Branch, observed: L.Observation, named: tuple[str, ...]) -> tuple[str, ...]:
    """Of the rules named for a returned Expiry, those that could give the value observed: an expired message
    returned (EXP-06) only with an Expiry of zero or less; a decrement by the time on the queue (EXP-02)
    only where time passed."""
    got = observed.message.expiry if observed.message is not None else None
    if not (isinstance(got, int) and got <= 0 and got != C.MQEI_UNLIMITED):
        named = tuple(r for r in named if r != "EXP-06")
    if branch.field_rules.get("message.expiry:age") == 0:
        named = tuple(r for r in named if r != "EXP-02")
    return named


def deciders(branch: model.Branch, field: str, observed: L.Observation, op: L.Op,
             before: ModelState | None = None) -> list[frozenset[str]]:
    """The ways of relaxing rules that allow ``observed``'s value of ``field`` where ``branch`` is MQ's
    outcome (from state ``before``, where known): each a set of rules, any one set relaxed suffices."""
    named = K._implicated(branch, [field], observed)
    own = isinstance(op, (L.Commit, L.Backout, L.Disconnect))
    out: list[frozenset[str]] = []
    if field == "message.body":
        order = _order_deciders(branch, observed)
        if order is not None:
            out += order
            named = tuple(r for r in named if r not in ORDER_RULES)
        if _under_the_cursor_again(before, op, observed):
            # a browse-next that returned the message its cursor was on: no delivery order does that
            out = [w for w in out if not w & set(ORDER_RULES)]
            named = tuple(r for r in named if r not in ORDER_RULES)
    if field in ("message", "message.body", "rc") and _none_taken_literally(branch, observed, op):
        # MQMI_NONE or MQCI_NONE, which select any value, taken as the blank value: the selection (CORE-51) is
        # what is broken, not which message comes first
        return [frozenset({"CORE-51"})]
    if field in ("message", "rc") and _selected_under_cursor(branch, observed, op):
        # a get under the cursor that found nothing there where MQ returns a message its selection leaves out:
        # one that applied the selection, which MQ ignores there (CORE-53), or one that found nothing under the
        # cursor whatever it selected (CORE-20); not how the message came there.  Which of them, the history
        # alone seldom shows (:func:`_shown_there_plainly`)
        return [frozenset({"CORE-53"}), frozenset({"CORE-20"})]
    if field in ("message", "message.body", "rc") and K.report_never_made(branch, observed):
        # an expiration report MQ never produced: the rules of when reports are made (the checker's own)
        return [frozenset({r}) for r in K.EXPIRY_REPORTS]
    if field in ("message", "message.body", "rc"):
        named = tuple(r for r in named if r not in COUNT_ONLY)
        if observed.message is None and branch.observation.message is not None and _by_order(op):
            # nothing came back where MQ returns a message: every delivery order returns one of those
            # available, so no order rule explains none (among those a selection matches: nor CORE-52)
            named = tuple(r for r in named if r not in ORDER_RULES and r != "CORE-52")
        body = observed.message.body if observed.message is not None else None
        why_gone = (*branch.state.removed.get(body, ()), *branch.excluded.get(body, ())) if body is not None else ()
        if ({"EXP-04", "EXP-06"} | BACKGROUND) & set(why_gone):
            # an expired message came back: that it is never returned (EXP-06) is broken, with whatever else
            # hid it there (a browse lock, a transmission queue); not how MQ discards and reports it, nor when it
            # may remove one no get touches (those decide what happens to it, never that a get returns it), nor
            # how it was put
            named = tuple(dict.fromkeys(("EXP-06",) + tuple(r for r in named if r in why_gone and r not in DISCARD_ONLY
                                                            and r not in BACKGROUND and r not in PLAIN_PUT)))
            shown = branch.field_rules.get(f"message.expiry:expired:{body}")
            got = observed.message.expiry
            if shown is not None and isinstance(got, int) and got != C.MQEI_UNLIMITED and not K._value_ok(shown, got):
                # it came back with more Expiry than its time on the queue left it: returning it (EXP-06) is
                # not all that was broken, its decrement was too (EXP-03, EXP-02)
                named = tuple(r for r in named if r != "EXP-06")
                out += [frozenset({"EXP-06", "EXP-03"}), frozenset({"EXP-06", "EXP-02"})]
        if body is not None and body in branch.state.removed and body not in branch.excluded:
            # a message that had left the queue came back: what removed it is broken, not the plain put
            # that once placed it there (its provenance, which the checker names along)
            named = tuple(r for r in named if r not in PLAIN_PUT)
            # nor how it had come to be there before it left (a backout that reinstated it, a restart that kept
            # it): only what removed it
            own = branch.state.left_by.get(body)
            if own is not None:
                named = tuple(r for r in named if r in own or r not in branch.state.removed.get(body, ()))
            if own == (RESTART_RULE,):
                # a non-persistent message a restart discarded: a restart that kept it is CORE-32's reading that
                # keeps the non-persistent messages (each as it was put, its persistence shown), not any message
                # coming back with whatever fields
                named = tuple(r for r in named if r != RESTART_RULE)
        elif body is not None and body not in branch.excluded and not _anywhere(branch.state, body):
            # a message MQ never had (a whole message where MQ holds its segments, say): no delivery order
            # returns it, nor does the put that placed what MQ holds instead
            named = tuple(r for r in named if r not in ORDER_RULES and r not in PLAIN_PUT)
    if field in ("message", "message.body", "rc") and isinstance(op, L.Get) and op.options & core.UNDER_CURSOR:
        # a call under the cursor acts on the message a browse of its handle returned: that the message was
        # available (how its put placed it) is shown, and decides nothing here
        named = tuple(r for r in named if r not in PLAIN_PUT)
    if field == "rc":
        codes = {branch.observation.rc, observed.rc}
        named = tuple(r for r in named if r not in OWN_REASONS or codes & set(OWN_REASONS[r]))
    if field == "attrs.CURDEPTH":
        # how a counted message was put says nothing of how it is counted (CORE-28 does), nor does the count
        # it carries
        named = tuple(r for r in named if r not in PLAIN_PUT and r not in COUNT_ONLY)
        # and CORE-28 alone moves it only so far: leaving out the uncommitted puts, counting the held gets
        reach = branch.field_rules.get("attrs.CURDEPTH:CORE-28")
        want, got = (dict(o.attrs or ()).get("CURDEPTH") for o in (branch.observation, observed))
        if reach is not None and isinstance(want, int) and isinstance(got, int) \
                and not reach[0] <= got - want <= reach[1]:
            named = tuple(r for r in named if r != "CORE-28")
    if field == "message.expiry":
        named = _expiry_deciders(branch, observed, named)
    if field.startswith("message.") and field != "message.body":
        # a field of a message that came back: how available the message was (its put) and which came
        # first decide nothing in it, except where the model names them for that field itself
        own_rules = branch.field_rules.get(field, ())
        named = tuple(r for r in named if r in own_rules or (r not in PLAIN_PUT and r not in ORDER_RULES))
    if field in ("message", "message.body") and core.selects(op) and observed.message is not None:
        # a get that selects: a message outside the selection breaks the selection (CORE-51), never the
        # order among the messages selected (CORE-52 and the order rules); one inside it, the order alone
        msg_id, correl_id = core.selection(op)
        inside = (not msg_id or observed.message.msg_id == msg_id) and \
                 (not correl_id or observed.message.correl_id == correl_id)
        if inside:
            # (and which of them comes first, or next after the cursor, is the selecting get's own rule, CORE-52,
            # not the plain browse's)
            named = tuple(r for r in named if r not in ("CORE-51", "CORE-18", "CORE-19"))
        else:
            named = tuple(dict.fromkeys(("CORE-51",) + tuple(r for r in named if r not in ORDER_RULES
                                                               and r != "CORE-52")))
            out = [w for w in out if not w & {*ORDER_RULES, "CORE-52"}]
    out += [frozenset({r}) for r in named if own or r not in ENDINGS_ONLY]
    return list(dict.fromkeys(out))


def _differing(expected: L.Observation, observed: L.Observation) -> list[str]:
    """The fields in which ``observed`` differs from ``expected`` that a relaxation must explain: a call that
    failed where MQ's succeeded returns no message, so its message missing is its refusal's (the rules of its
    reason code), never a rule of which message comes back."""
    fields = K.differing_fields(expected, observed)
    if "rc" in fields and "message" in fields and observed.cc == C.MQCC_FAILED and observed.message is None:
        fields.remove("message")
    return fields


def explained(branch: model.Branch, observed: L.Observation, op: L.Op, relaxed: frozenset[str],
              before: ModelState | None = None) -> bool:
    """``observed`` differs from ``branch``'s outcome (from state ``before``) only in fields that ``relaxed``
    rules decide.  Another message returned, which only an order relaxed explains, is that message as MQ
    returns it: its own fields differing are decided by their own rules (a priority resolved otherwise at its
    put is not the order's)."""
    fields = _differing(branch.observation, observed)
    body_ways: list[frozenset[str]] | None = None
    for f in fields:
        ways = deciders(branch, f, observed, op, before)
        if not any(w <= relaxed for w in ways):
            return False
        body_ways = ways if f == "message.body" else body_ways
    if not fields:
        return False
    if "message" in fields:
        # a message where MQ returns none: that message as MQ returns it, its own fields decided by their rules
        instead = _returned_instead(branch, observed, op, before)
        return instead is None or all(any(ways <= relaxed for ways in field_ways)
                                      for field_ways in _shown(instead, observed, op, before))
    if body_ways is None:
        return True
    # Another message came first: whatever reading explains that (an order relaxed, or what put MQ's first
    # message there), the one that came is then as MQ delivers it, and its own fields differing are decided by
    # their own rules (a forwarded message stripped of its header is not explained by the handler's not having
    # forwarded another).
    instead = _delivered_instead(branch, observed, op, before)
    return instead is None or all(any(ways <= relaxed for ways in field_ways)
                                  for field_ways in _shown(instead, observed, op, before))


def _shown(instead: model.Branch, observed: L.Observation, op: L.Op,
           before: ModelState | None) -> list[list[frozenset[str]]]:
    """For each field in which ``observed``'s message differs from MQ's delivery of it (``instead``), the ways of
    relaxing rules that decide it."""
    return [deciders(instead, field, observed, op, before)
            for field in K.differing_fields(instead.observation, observed)]


def _same_message(outcome: L.Observation, observed: L.Observation) -> bool:
    """Whether ``observed`` returned the message ``outcome`` does, answered alike but for its fields (which a
    reading's own rules never decide: a reading says which message comes, and what came is not its own)."""
    return outcome.message is not None and observed.message is not None and outcome.cc == observed.cc \
        and outcome.rc == observed.rc and outcome.message.body == observed.message.body


def _appeared(branch: model.Branch, observed: L.Observation) -> bool:
    """Whether ``observed`` returned a message where ``branch``, MQ's get, returns none: a reading that lets the
    get's answer differ there (a get finding a message where none is available) says that a message came, not
    where from."""
    return branch.observation.message is None and observed.message is not None


def _returned_instead(branch: model.Branch, observed: L.Observation, op: L.Op,
                      before: ModelState | None) -> model.Branch | None:
    """MQ's get ``op`` from state ``before`` returning the message the system returned where ``branch`` returns
    none: the fields MQ returns that message with.  None where the model cannot say (no message returned, one
    not on the handle's queue or not told apart there by its body, one expired: MQ never returns it; state
    unknown)."""
    if before is None or branch.observation.message is not None or observed.message is None:
        return None
    h = before.handles.get(getattr(op, "handle", None))
    q = before.queues.get(h.queue) if h is not None else None
    alike = [m for m in q.messages if m.body == observed.message.body] if q is not None else []
    if len(alike) != 1 or not observed.message.body or expiry.status(before, alike[0]) != expiry.LIVE:
        return None   # (trigger messages all have an empty body: which one came back is not known)
    got = alike[0]
    return core._deliver(before, op, h, [], got, (), {}, True, False)


def _delivered_instead(branch: model.Branch, observed: L.Observation, op: L.Op,
                       before: ModelState | None) -> model.Branch | None:
    """MQ's get ``op`` from state ``before`` returning the message the system returned where ``branch`` returns
    another (one available later in delivery order): the fields MQ returns that message with, and the rules
    deciding each.  None where the model cannot say (not a message available later, state unknown)."""
    if before is None or _order_deciders(branch, observed) is None:
        return None
    h = before.handles.get(getattr(op, "handle", None))
    got = _message(before, h.queue, observed.message.body) if h is not None else None
    if got is None:
        return None
    return core._deliver(before, op, h, [], got, (), {}, True, False)


def _under_the_cursor_again(before: ModelState | None, op: L.Op, observed: L.Observation) -> bool:
    """Whether ``op``, a browse-next, returned the message its handle's cursor was on in state ``before``."""
    if before is None or not _browses_next(op) or observed.message is None:
        return False
    h = before.handles.get(op.handle)
    if h is None or h.cursor_seq is None or h.queue not in before.queues:
        return False
    under = before.find(h.queue, h.cursor_seq)
    return under is not None and under.body == observed.message.body


def _relaxed_step(state: ModelState, op: L.Op, relaxed: frozenset[str],
                  observed: L.Observation | None = None) -> tuple[list, list]:
    """MQ's outcomes of ``op``, and those the relaxed rules add: a unit of work's other ending, a put that a
    relaxed check of the queue (full, put-inhibited, message too long) did not refuse.  ``observed``, where
    given, is what the system answered: a reading whose outcomes are too many to list (which of a DLQ handler's
    messages its browses skipped) gives only the one that answer is, if it is one."""
    plain, extra = _readings(state, op, relaxed, observed)
    if EXPIRED_RETURNED in relaxed and any(EXPIRED_RETURNED in b.rules for b in plain) \
            and isinstance(op, L.RunDlqHandler) and not _answered_as_mq(op, observed, plain):
        # a DLQ handler's pass that met the expired messages on its queue as any other (EXP-06 relaxed), with
        # whatever else the rules relaxed let it do (take the queue in arrival order, say)
        unmet = _expired_unmet(state, op)
        if unmet is not None:
            met_plain, met_extra = _readings(unmet, op, relaxed, observed)
            extra += [attrs.evolve(b, rules=tuple(dict.fromkeys((EXPIRED_RETURNED, *b.rules))))
                      for b in met_plain + met_extra]
    return plain, extra


def _answered_as_mq(op: L.Op, observed: L.Observation | None, plain: list[model.Branch]) -> bool:
    """Whether the system answered ``op`` as one of MQ's own outcomes ``plain`` does (never, where the answer
    is not known)."""
    return observed is not None and any(b.observation == observed for b in plain)


def _readings(state: ModelState, op: L.Op, relaxed: frozenset[str],
              observed: L.Observation | None = None) -> tuple[list, list]:
    """:func:`_relaxed_step` from ``state`` as it is."""
    plain = K.STEPS.step(state, op)
    extra: list[model.Branch] = []

    def live() -> bool:   # a connection that can end its unit of work (asked only of an op that ends one)
        return op.conn in state.conns and not (state.broken | state.armed) & {op.conn}

    for rule in relaxed:
        kind, other = OTHER_END.get(rule, (None, None))
        if kind is not None and isinstance(op, kind):
            instead = other(op)
            if instead is not None and live():
                ended = [b for b in K.STEPS.step(state, instead) if b.observation.cc != C.MQCC_FAILED]
                extra += ended
                if rule in BACKS_OUT:
                    # a commit (or the commit of a normal MQDISC) that backed out says so: MQRC_BACKED_OUT
                    extra += [attrs.evolve(b, observation=L.Observation.of(C.MQRC_BACKED_OUT)) for b in ended]
    if isinstance(op, L.Backout) and relaxed & PARTIAL_RULES and live():
        if PARTIAL_RULES <= relaxed:   # neither puts deleted nor gets reinstated: a commit
            extra += [b for b in K.STEPS.step(state, L.Commit(conn=op.conn)) if b.observation.cc != C.MQCC_FAILED]
        for rule in sorted(relaxed & PARTIAL_RULES):
            kept = core.backout_keeping(state, op.conn, PARTIAL_END[rule])
            if kept is not None:
                extra.append(model.Branch(observation=L.OK, state=kept, rules=(rule,)))
    elif relaxed & PARTIAL_RULES:
        extra += _partial_backouts(state, op, relaxed & PARTIAL_RULES)
    if UNREQUESTED_SKIP in relaxed:
        extra += _marks_skipped(state, op)
    if GETS_DELETED in relaxed:
        extra += _commit_keeping_gets(state, op)
    if UNCAPPED in relaxed:
        extra += _uncapped(state, op)
    if relaxed & set(ORDER_RULES) and any(b.observation.message is not None for b in plain):
        extra += _out_of_order(state, op, {b.observation.message.body for b in plain
                                           if b.observation.message is not None}, relaxed)
    if VISIBILITY_RULE in relaxed:
        extra += _seen_uncommitted(state, op)
        extra += _backout_reinstating_seen(state, op)
    # (a DLQ handler's pass answers with every message's fate: where MQ's own outcome is that answer, a pass
    # taking the queue in another order, losing or meeting again what it backed out, which would answer the
    # same, is not read; a backout that left the count is, as MQ's pass that never reached the message answers
    # alike)
    answered = isinstance(op, L.RunDlqHandler) and _answered_as_mq(op, observed, plain)
    if "CORE-04" in relaxed and not answered:
        extra += _in_arrival_order(state, op)
    if relaxed & FIFO_RULES and not answered:
        extra += _newest_first(state, op, relaxed)
    if relaxed & {TRIGGER_PRIORITY, FIFO_TRIGGER_PRIORITY}:
        extra += _trigger_priority_ignored(state, op, plain, relaxed)
    if REFRESH_RULE in relaxed and isinstance(op, L.RefreshExpiry):
        extra += _refresh_discarding_nothing(state, op, plain)
    if RESTART_RULE in relaxed and isinstance(op, L.Restart):
        extra += _restart_otherwise(state, op, plain)
    if CUT_RULE in relaxed and isinstance(op, L.CutConnection) and not op.in_flight and _backed_out_by(state, op):
        extra += _cut_committing(state, op)
    if IN_FLIGHT_RULE in relaxed and isinstance(op, L.Commit) and op.conn in state.armed:
        extra += _commit_half_done(state, op)
    if COMMIT_RULE in relaxed and isinstance(op, L.Commit) and live():
        extra += _commit_in_part(state, op)
    if relaxed & set(RESOLVED_BY) and isinstance(op, (L.Put, L.Put1)):
        extra += _resolved_otherwise(state, op, relaxed)
    if BROWSE_NEXT_RULE in relaxed:
        extra += _browse_skipping(state, op)
        if isinstance(op, L.RunDlqHandler) and observed is not None:
            extra += _handler_browse_skipping(state, op, observed, plain)
    if relaxed & set(COUNT_RAISED) and isinstance(op, L.RunDlqHandler):
        extra += _handler_backouts_uncounted(state, op, plain, relaxed)
    if GETS_REINSTATED in relaxed and isinstance(op, L.RunDlqHandler) and not answered:
        extra += _handler_backouts_lost(state, op, plain)
        extra += _handler_meets_again(state, op, plain)
    waived = {WAIVED[r][0]: WAIVED[r][1] for r in relaxed if r in WAIVED}
    queue = _put_queue(state, op) if waived else None
    if queue is not None and any(b.observation.cc == C.MQCC_FAILED for b in plain):
        # the put the system accepted, on the queue as it is but for the checks relaxed: what it left
        # (the message there, counted) is what the history goes on from
        extra += [b for b in _waiving(state, op, [queue], waived) if b.observation.cc != C.MQCC_FAILED]
    if DEPTH_RULE in relaxed:
        extra += _counted_otherwise(state, op, plain)
    if OVERFLOW_RULE in relaxed and isinstance(op, OVERFLOWING):
        extra += _overflow_dropping_head(op, plain + extra)
    if waived and isinstance(op, L.RunDlqHandler) and state.dlq_handlers.get(op.handler) is not None:
        # the handler's puts (forwards, messages put back) accepted as the system accepted the application's:
        # every queue it may put to as it is but for the checks relaxed
        extra += [attrs.evolve(b, rules=tuple(dict.fromkeys((*sorted(relaxed & set(WAIVED)), *b.rules))))
                  for b in _waiving(state, op, list(state.queues), waived)]
    return plain, extra


def _waiving(state: ModelState, op: L.Op, queues: list[str], waived: dict) -> list[model.Branch]:
    """MQ's outcomes of ``op`` with the attributes ``waived`` (a relaxed check's, such as MAXDEPTH) set so on
    ``queues`` while it runs, and back as they were after it."""
    lifted = state.clone()
    kept_by = {}
    for name in queues:
        q = lifted.queue(name)
        kept_by[name] = {a: q.attrs[a] for a in waived if a in q.attrs}
        q.attrs.update({a: v for a, v in waived.items() if a in q.attrs})
    out = model.step(lifted, op)
    for b in out:
        for name, kept in kept_by.items():
            if name in b.state.queues:
                b.state.queue(name).attrs.update(kept)
    return out


#: The rule that keeps a unit of work's puts from other connections until it commits (core._visibility).
VISIBILITY_RULE = "CORE-02"


def _seen_uncommitted(state: ModelState, op: L.Op) -> list[model.Branch]:
    """A get (or browse) that sees the messages other connections put in units of work not yet committed (the
    visibility rule relaxed), as if they were committed: what it returns, and what it does to them on its way
    (an expired one discarded, with its report), is what the history goes on from.  Those it leaves where they
    are are their units of work's again, to commit or back out as MQ would."""
    if not isinstance(op, L.Get):
        return []
    h = state.handles.get(op.handle)
    q = state.queues.get(h.queue) if h is not None else None
    if q is None or not q.uncommitted:
        return []
    hidden = {m.seq: m.put_by for m in q.messages if m.put_by is not None and m.put_by != h.conn and m.got_by is None}
    if not hidden:
        return []
    lifted = state.clone()
    lq = lifted.queue(h.queue)
    for seq in hidden:
        lq.update(lq.find(seq), put_by=None)
    out = []
    for b in model.step(lifted, op):
        bq = b.state.queues.get(h.queue)
        if bq is not None:
            for seq, conn in hidden.items():
                m = bq.find(seq)
                if m is not None and m.put_by is None:
                    bq.update(m, put_by=conn)
        out.append(attrs.evolve(b, rules=tuple(dict.fromkeys((VISIBILITY_RULE, *b.rules)))))
    return out


def _backout_reinstating_seen(state: ModelState, op: L.Op) -> list[model.Branch]:
    """A backout of a unit of work that got a message another connection put and has not committed (seen through
    the visibility rule relaxed): the message reinstated as any other, its BackoutCount raised, and the other
    unit of work's put again.  (MQ's outcome, followed as the model follows it, leaves it got: a system that
    shows uncommitted puts may do either.)"""
    if not isinstance(op, L.Backout) or op.conn not in state.conns or op.conn in state.broken | state.armed:
        return []
    c = state.conns[op.conn]
    seen = [e for e in c.uow if e.kind == "get" and (m := state.find(e.queue, e.seq)) is not None
            and m.put_by not in (None, op.conn)]
    if not seen:
        return []
    s = state.clone()
    for entry in seen:
        m = s.find(entry.queue, entry.seq)
        s.queue(entry.queue).update(m, got_by=None, backout_count=m.backout_count + 1,
                                    provenance=(VISIBILITY_RULE, "CORE-15", "CORE-17"))
    s.conn(op.conn).uow[:] = [e for e in c.uow if e not in seen]
    return [attrs.evolve(b, rules=tuple(dict.fromkeys((VISIBILITY_RULE, *b.rules)))) for b in model.step(s, op)]


def _requeued(q, priority_of) -> None:
    """Place the messages of queue ``q`` (of a cloned state) again with ``priority_of(m)`` as their delivery
    priority: the order a get or a DLQ handler takes them in is then the one that priority gives."""
    messages = list(q.messages)
    for m in messages:
        q.remove(m)
    for m in messages:
        q.append(attrs.evolve(m, order_priority=priority_of(m)))


def _read_queue(state: ModelState, op: L.Op):
    """The queue a get, browse or DLQ handler's pass of ``op`` takes messages from in delivery order,
    and the handle whose browse cursor stands on it (None: none, or not such an op)."""
    if isinstance(op, (L.Get, L.GetMatching)):
        handle = state.handles.get(op.handle)
        return (state.queues.get(handle.queue) if handle is not None else None), handle
    if isinstance(op, L.RunDlqHandler):
        d = state.dlq_handlers.get(op.handler)
        return (state.queues.get(d.input_q or "") if d is not None and d.running else None), None
    return None, None


def _cursor(state: ModelState, op: L.Op, handle):
    """Where the call ``op`` goes on from: the browse cursor of its handle, or of the DLQ handler it runs (None:
    from the queue's head)."""
    if isinstance(op, L.RunDlqHandler):
        d = state.dlq_handlers.get(op.handler)
        return d.cursor if d is not None else None
    return handle.cursor if handle is not None else None


def _taken_otherwise(state: ModelState, op: L.Op, q, handle, rule: str, key) -> list[model.Branch]:
    """``op``'s outcomes with queue ``q`` taken in the order ``key(order_priority, seq)`` gives (the higher
    first, arrival order among equals) in place of delivery order, under ``rule`` relaxed.  Which message
    comes back follows from that order, and so does what the call meets on its way there: an expired message
    that delivery order would have put first is met only if it came first (discarded, its report written),
    which message a DLQ handler's forward fills a queue with and which finds it full, where a browse cursor
    stands.  The messages it leaves keep their places; a cursor stays on the message it is on."""
    cursor = _cursor(state, op, handle)
    placed = {m.seq: m.order_priority for m in q.messages}
    if cursor is not None:
        placed.setdefault(cursor[1], -cursor[0])
    lifted = state.clone()
    _requeued(lifted.queue(q.name), lambda m: key(m.order_priority, m.seq))
    if cursor is not None:
        lifted_cursor = (-key(-cursor[0], cursor[1]), cursor[1])
        if isinstance(op, L.RunDlqHandler):
            lifted.dlq_handlers[op.handler] = attrs.evolve(lifted.dlq_handlers[op.handler], cursor=lifted_cursor)
        else:
            lifted.handles[handle.name] = attrs.evolve(handle, cursor=lifted_cursor)
    out = []
    for b in model.step(lifted, op):
        if q.name in b.state.queues:
            _requeued(b.state.queue(q.name), lambda m: placed.get(m.seq, m.order_priority))
        h = b.state.handles.get(handle.name) if handle is not None else None
        if h is not None and h.cursor is not None and h.cursor[1] in placed:
            b.state.handles[h.name] = attrs.evolve(h, cursor=(-placed[h.cursor[1]], h.cursor[1]))
        if isinstance(op, L.RunDlqHandler):
            d = b.state.dlq_handlers.get(op.handler)
            if d is not None and d.cursor is not None and d.cursor[1] in placed:
                b.state.dlq_handlers[op.handler] = attrs.evolve(d, cursor=(-placed[d.cursor[1]], d.cursor[1]))
        out.append(attrs.evolve(b, rules=tuple(dict.fromkeys((rule, *b.rules)))))
    return out


def _any_message_will_do(q, op: L.Op) -> bool:
    """Whether the order rules relaxed already let ``op`` return any message of ``q`` it may, and nothing
    else comes of the order (:func:`_out_of_order`): a plain get of a queue with no message that may expire,
    its messages told apart by their bodies (not so trigger messages, all with an empty one)."""
    return _by_order(op) and not q.expiring and len({m.body for m in q.messages}) == len(q.messages)


def _in_arrival_order(state: ModelState, op: L.Op) -> list[model.Branch]:
    """A MSGDLVSQ(PRIORITY) queue taken in arrival order, as a queue that ignores priority delivers (CORE-04
    relaxed): a get or browse of it, or a DLQ handler's first pass over it as its dead-letter queue (see
    :func:`_taken_otherwise`)."""
    q, handle = _read_queue(state, op)
    if q is None or q.attr("MSGDLVSQ") != C.MQMDS_PRIORITY or _any_message_will_do(q, op):
        return []
    cursor = _cursor(state, op, handle)
    if len({-m.order_priority for m in q.messages} | ({cursor[0]} if cursor is not None else set())) < 2:
        return []   # arrival order is delivery order here
    return _taken_otherwise(state, op, q, handle, "CORE-04", lambda priority, seq: 0)


#: Above every arrival stamp: a priority scaled by it keeps priority order before arrival order.
_STAMPS = 10 ** 12


def _newest_first(state: ModelState, op: L.Op, relaxed: frozenset[str]) -> list[model.Branch]:
    """A queue whose messages of one delivery priority are taken newest first, as a queue kept as a stack
    delivers (first in, first out relaxed: CORE-05 on a MSGDLVSQ(PRIORITY) queue, CORE-06 on a
    MSGDLVSQ(FIFO) one, where every message has one delivery priority): a get or browse of it, or a DLQ
    handler's first pass over it (see :func:`_taken_otherwise`); a browse cursor then moves to older
    messages."""
    q, handle = _read_queue(state, op)
    if q is None or _any_message_will_do(q, op):
        return []
    rule = "CORE-06" if q.attr("MSGDLVSQ") == C.MQMDS_FIFO else "CORE-05"
    if rule not in relaxed:
        return []
    cursor = _cursor(state, op, handle)
    levels = [-m.order_priority for m in q.messages] + ([cursor[0]] if cursor is not None else [])
    if len(levels) == len(set(levels)):
        return []   # one message to each priority: newest first is delivery order here
    return _taken_otherwise(state, op, q, handle, rule, lambda priority, seq: priority * _STAMPS + seq)


#: The rule of REFRESH QMGR TYPE(EXPIRY) (z/OS): it discards the expired messages of the queues it names.
REFRESH_RULE = "EXP-24"


def _refresh_discarding_nothing(state: ModelState, op: L.RefreshExpiry, plain: list[model.Branch]) -> list[model.Branch]:
    """A REFRESH QMGR TYPE(EXPIRY) that left the expired messages where they were (EXP-24 relaxed): a depth
    read after it counts them, a get or browse meets them (where it would have found them gone)."""
    if not any(b.state.queues != state.queues for b in plain):
        return []
    return [model.Branch(observation=L.OK, state=state.clone(), rules=(REFRESH_RULE,))]


#: The rule that only messages at or above TriggerMsgPriority count toward a trigger event.
TRIGGER_PRIORITY = "TRIG-02"
#: The rule that on a FIFO queue the queue's DefPriority, not the message's, is what is compared with it.
FIFO_TRIGGER_PRIORITY = "TRIG-24"


def _trigger_priority_ignored(state: ModelState, op: L.Op, plain: list[model.Branch],
                              relaxed: frozenset[str]) -> list[model.Branch]:
    """``op``'s outcomes where an event that wrote no trigger message only because its messages were below
    TriggerMsgPriority wrote one: a put, or an ALTER that raised TriggerMsgPriority above the messages there, on a
    queue whose triggering counts every message (TRIG-02 relaxed), or, on a FIFO queue, whose message's own priority
    was compared instead of the queue's DefPriority (TRIG-24 relaxed; TRIG-02 relaxed does as well).  The trigger
    message is there to be got and browsed like any other (held to its unit of work's commit for a put under
    syncpoint)."""
    conn = op.conn if isinstance(op, (L.Put, L.Put1)) and op.options & C.MQPMO_SYNCPOINT else None
    out = []
    lowered: set[str] = set()
    put_to = _put_queue(state, op) if TRIGGER_PRIORITY in relaxed else None
    if put_to is not None and state.queues[put_to].attr("TRIGMPRI") > 0 \
            and state.queues[put_to].attr("TRIGGER") == C.MQTC_ON:
        # a queue whose triggering counts every message may also write none where MQ writes one: a message below
        # TriggerMsgPriority already there counted, the event's condition of none before it is not met (a FIRST
        # event where MQ, counting only messages at or above it, has one): the put as MQ makes it with
        # TriggerMsgPriority 0, the attribute kept (a shared queue's too, each queue manager's event its own)
        lowered.add(put_to)
        out += _with_trigmpri_zero(state, op, put_to)
    for b in plain:
        for name, q in b.state.queues.items():
            before = state.queues.get(name)
            if before is not None and before.trigger_notes == q.trigger_notes:
                continue
            newest = q.trigger_notes[:1]
            if newest == ((TRIGGER_PRIORITY,),):
                why = (TRIGGER_PRIORITY,) if TRIGGER_PRIORITY in relaxed else ()
            elif newest == ((FIFO_TRIGGER_PRIORITY,),):
                # (noted with TRIG-02: the message's own priority would do, and so would no comparison at all)
                why = tuple(r for r in (FIFO_TRIGGER_PRIORITY, TRIGGER_PRIORITY) if r in relaxed)
            else:
                why = ()
            if not why:
                continue
            if name in lowered:
                continue   # (its event with TriggerMsgPriority 0 is there already)
            if TRIGGER_PRIORITY in why and before is not None and (
                    isinstance(op, (L.Open, L.Close)) or q.shared and isinstance(op, (L.Put, L.Put1))):
                # an event of another call (a trigger monitor opening the initiation queue, the last server
                # closing), or a shared queue's (each queue manager's own, judged for its own initiation queue):
                # the call as MQ makes it with TriggerMsgPriority 0, its trigger messages written in the order the
                # event writes them, among those of the other queues it serves
                lowered.add(name)
                out += _with_trigmpri_zero(state, op, name)
                continue
            if q.shared or trigger._initiation_queue(b.state, q, "") is None:
                continue   # (no initiation queue, no message)
            s = b.state.clone()
            trigger._write(s, name, conn, why)
            out.append(attrs.evolve(b, state=s, rules=tuple(dict.fromkeys((*why, *b.rules)))))
    return out


def _trigmpri_set(pairs) -> bool:
    """Whether a queue of the history was defined or altered with a TriggerMsgPriority above 0."""
    return any(isinstance(op, (L.DefineQueue, L.AlterQueue)) and dict(op.attrs).get("TRIGMPRI", 0) > 0
               for op, _ in pairs)


def _fifo_set(pairs) -> bool:
    """Whether a queue of the history was defined or altered to deliver its messages first in first out."""
    return any(isinstance(op, (L.DefineQueue, L.AlterQueue)) and dict(op.attrs).get("MSGDLVSQ") == C.MQMDS_FIFO
               for op, _ in pairs)


def _with_trigmpri_zero(state: ModelState, op: L.Op, queue: str) -> list[model.Branch]:
    """``op``'s outcomes with ``queue``'s TriggerMsgPriority taken as 0 (TRIG-02 relaxed), the attribute as it
    was in every state that follows."""
    low = state.clone()
    was = low.queue(queue).attrs.get("TRIGMPRI")
    low.queue(queue).attrs["TRIGMPRI"] = 0
    out = []
    for b in model.step(low, op):
        if queue in b.state.queues:
            if was is None:
                b.state.queue(queue).attrs.pop("TRIGMPRI", None)
            else:
                b.state.queue(queue).attrs["TRIGMPRI"] = was
        out.append(attrs.evolve(b, rules=tuple(dict.fromkeys((TRIGGER_PRIORITY, *b.rules)))))
    return out


#: The rule of what a restart keeps (committed persistent messages).
RESTART_RULE = "CORE-32"
#: Messages a restart may lose one at a time, at most, in the readings that relax what it keeps (beyond: all).
MAX_LOST_ONE_BY_ONE = 8


def _restart_otherwise(state: ModelState, op: L.Op, plain: list[model.Branch]) -> list[model.Branch]:
    """A restart that keeps otherwise than MQ's (CORE-32 relaxed): one that loses committed persistent messages
    (any one of them, or all), or one that keeps the non-persistent messages outside units of work in flight.
    A system may show either only much later (a depth, a get finding nothing or a message MQ discarded, a put
    refused as full), after calls that MQ answers alike either way."""
    out = []
    for b in plain:
        kept = [(name, m) for name, q in sorted(b.state.queues.items()) for m in q.messages]
        ways = [[one] for one in kept] if len(kept) <= MAX_LOST_ONE_BY_ONE else []
        if len(kept) > 1:
            ways.append(kept)
        for lost in ways:
            s = b.state.clone()
            for name, m in lost:
                # gone, and not as a removal of MQ's (whose rule, relaxed, would let it come back with anything)
                s.queue(name).remove(m)
            out.append(attrs.evolve(b, state=s, rules=tuple(dict.fromkeys((RESTART_RULE, *b.rules)))))
    # the non-persistent messages kept: the restart as MQ makes it with them persistent, and their persistence
    # as put again after it
    light = {(name, m.seq): m.md for name, q in state.queues.items() for m in q.messages
             if m.md.persistence != C.MQPER_PERSISTENT and m.put_by is None}
    if light:
        lifted = state.clone()
        for name, seq in light:
            q = lifted.queue(name)
            m = q.find(seq)
            q.update(m, md=attrs.evolve(m.md, persistence=C.MQPER_PERSISTENT))
        for b in model.step(lifted, op):
            for (name, seq), md in light.items():
                m = b.state.find(name, seq) if name in b.state.queues else None
                if m is not None:
                    b.state.queue(name).update(m, md=md)
            out.append(attrs.evolve(b, rules=tuple(dict.fromkeys((RESTART_RULE, *b.rules)))))
    return out


#: The rule of a connection cut from outside: it ends as an abnormal end does, its unit of work backed out.
CUT_RULE = "CORE-46"


def _cut_committing(state: ModelState, op: L.CutConnection) -> list[model.Branch]:
    """A connection cut between calls whose unit of work the queue manager commits, as if the program had
    called MQDISC (CORE-46 relaxed); the connection is broken as after any cut."""
    s = state.clone()
    core._end_uow(s, op.conn, True, CUT_RULE)
    return [attrs.evolve(b, rules=tuple(dict.fromkeys((CUT_RULE, *b.rules)))) for b in core._break(s, op.conn)]


#: The rule of a call cut in flight: carried out whole or not at all, the connection then broken.
IN_FLIGHT_RULE = "CORE-48"


def _commit_half_done(state: ModelState, op: L.Commit) -> list[model.Branch]:
    """A commit cut in flight that the queue manager carried out in part (CORE-48 relaxed): its puts made
    permanent and its gets backed out, or its gets made permanent and its puts deleted; the connection then
    breaks and the program sees MQRC_CONNECTION_BROKEN, as after any call cut in flight."""
    base = state.clone()
    base.armed = base.armed - {op.conn}
    out = []
    for kept in ("puts", "gets"):
        half = core.backout_keeping(base, op.conn, kept, IN_FLIGHT_RULE)
        if half is not None:
            out += [attrs.evolve(b, observation=L.Observation.of(C.MQRC_CONNECTION_BROKEN),
                                 rules=tuple(dict.fromkeys((IN_FLIGHT_RULE, *b.rules))))
                    for b in core._break(half, op.conn, IN_FLIGHT_RULE)]
    return out


#: The rule of what a commit does: all of its unit of work's puts made available, or (answered
#: MQRC_BACKED_OUT) none.
COMMIT_RULE = "CORE-29"
#: Puts in one unit of work past which a commit carried out in part is not read as any subset of them (each
#: subset is a branch), only queue by queue (:func:`commit_parts`).
MAX_PART_PUTS = 4
#: Parts read queue by queue at most, past which none is.
MAX_QUEUE_PARTS = 64


def commit_parts(state: ModelState, conn: str) -> list[tuple]:
    """Each part of ``conn``'s unit of work's puts that a commit carried out in part may have left out or made
    available apart from the rest (none where the unit of work has fewer than two puts).  Up to
    :data:`MAX_PART_PUTS` puts, every non-empty subset short of all of them.  Past that, as a broker that applies a
    transaction queue by queue carries one out: on each queue the puts up to one of them (in the order they were
    put), those after it left out, as a queue's limit refuses what no longer fits, every choice short of none left
    out (up to :data:`MAX_QUEUE_PARTS` of them)."""
    c = state.conns.get(conn)
    puts = [e for e in c.uow if e.kind == "put"] if c is not None else []
    if len(puts) < 2:
        return []
    if len(puts) <= MAX_PART_PUTS:
        return [part for n in range(1, len(puts)) for part in itertools.combinations(puts, n)]
    by_queue: dict[str, list] = {}
    for e in puts:
        by_queue.setdefault(e.queue, []).append(e)
    # on each queue, how many of its puts (counted from its last) are left out: 0 to all
    tails = [[tuple(q[len(q) - n:]) for n in range(len(q) + 1)] for q in by_queue.values()]
    out = []
    for choice in itertools.product(*tails):
        part = tuple(e for tail in choice for e in tail)
        if part and len(part) < len(puts):
            out.append(part)
            if len(out) == MAX_QUEUE_PARTS:
                break
    return out


def _commit_in_part(state: ModelState, op: L.Commit) -> list[model.Branch]:
    """A commit carried out in part (CORE-29 relaxed): some of its unit of work's puts made available and the
    others deleted, its gets ended as a commit ends them, answered as success or as MQRC_BACKED_OUT (a broker
    that applies a transaction queue by queue, refusing what a queue's limit does not take at the commit)."""
    out: list[model.Branch] = []
    for dropped in commit_parts(state, op.conn):
        s = state.clone()
        for entry in dropped:
            m = s.find(entry.queue, entry.seq)
            if m is not None:
                s.discard(entry.queue, m, (COMMIT_RULE,))
        ended = [attrs.evolve(b, rules=tuple(dict.fromkeys((COMMIT_RULE, *b.rules))))
                 for b in model.step(s, op) if b.observation.cc != C.MQCC_FAILED]
        out += ended + [attrs.evolve(b, observation=L.Observation.of(C.MQRC_BACKED_OUT)) for b in ended]
    return out


#: The rules by which a put resolves a descriptor value "as the queue's default", each with its field, the value
#: the put asks it by, the queue attribute that gives it, and the values a system that does not resolve it is read
#: to give instead: its own default (a priority of none at all, or a JMS client's 4; a message persistent, or not,
#: whatever DEFPSIST says).
RESOLVED_BY = {"CORE-07": ("priority", C.MQPRI_PRIORITY_AS_Q_DEF, "DEFPRTY", (0, 4)),
               "CORE-10": ("persistence", C.MQPER_PERSISTENCE_AS_Q_DEF, "DEFPSIST",
                           (C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT))}


def _resolved_otherwise_than(state: ModelState, field: str, rule: str, value: int) -> bool:
    """Whether a message in ``state`` was put asking for its queue's default ``field`` and got, as MQ resolves it,
    another value than ``value``: a system that gives its own default gives it to every such put, so a later put
    is not read to have got ``value`` (which keeps the readings of many such puts to one per put, not one per
    subset of them)."""
    return any((field, (rule,)) in m.decided and getattr(m.md, field) != value
               for q in state.queues.values() for m in q.messages)


def _resolved_otherwise(state: ModelState, op: L.Put | L.Put1, relaxed: frozenset[str]) -> list[model.Branch]:
    """A put that asked for the queue's default priority or persistence given another value instead (CORE-07,
    CORE-10 relaxed): the message placed, and ordered, with the system's own default, as a put that named that
    value would place it (where both are relaxed, each of them, and both together).  The message says so
    (:func:`_system_default`): every later such put is read with that value alone."""
    queue = _put_queue(state, op)
    if queue is None:
        return []
    per_field: list[list[tuple[str, int, str] | None]] = []
    for rule, (field, asked, attr, instead) in RESOLVED_BY.items():
        if rule in relaxed and getattr(op.md, field) == asked:
            default = state.queues[queue].attr(attr)
            given = _system_default(state, field)
            if given is not None:
                # the system's own default, given before: that alone (MQ's is it here, or no longer an outcome)
                per_field.append([None] if given == default else [(field, given, rule)])
                continue
            per_field.append([None] + [(field, value, rule) for value in instead if value != default
                                       and not _resolved_otherwise_than(state, field, rule, value)])
    out: list[model.Branch] = []
    for choice in itertools.product(*per_field):
        chosen = [c for c in choice if c is not None]
        if not chosen:
            continue
        md = attrs.evolve(op.md, **{field: value for field, value, _ in chosen})
        rules = tuple(rule for _, _, rule in chosen)
        marks = tuple(mark for field, _, rule in chosen for mark in ((field, (rule,)), (field + OWN_DEFAULT, ())))
        out += [attrs.evolve(b, state=_marked(b.state, queue, op.body, marks),
                             rules=tuple(dict.fromkeys((*rules, *b.rules))))
                for b in model.step(state, attrs.evolve(op, md=md)) if b.observation.cc != C.MQCC_FAILED]
    return out


#: That a priority above MaxPriority places the message at MaxPriority (CORE-08): relaxed, at the priority put.
UNCAPPED = "CORE-08"


def _uncapped(state: ModelState, op: L.Op) -> list[model.Branch]:
    """A put of a priority above MaxPriority that placed its message at that priority, above every message of
    MaxPriority (CORE-08 relaxed), on a MSGDLVSQ(PRIORITY) queue: answered as MQ answers it (the warning), the
    Priority field as put."""
    if not isinstance(op, (L.Put, L.Put1)) or op.md.priority <= C.MAX_PRIORITY:
        return []
    queue = _put_queue(state, op)
    if queue is None or state.queues[queue].attr("MSGDLVSQ") != C.MQMDS_PRIORITY:
        return []
    out = []
    for b in model.step(state, op):
        if b.observation.cc == C.MQCC_FAILED:
            continue
        s = b.state.clone()
        q = s.queue(queue)
        placed = [m for m in q.messages if m.body == op.body and m.order_priority == C.MAX_PRIORITY
                  and m.md.priority == op.md.priority]
        if not placed:
            continue
        for m in placed:   # the newest of the queue: taken off and placed again, above MaxPriority
            q.remove(m)
        for m in placed:
            q.append(attrs.evolve(m, order_priority=op.md.priority))
        out.append(attrs.evolve(b, state=s, rules=tuple(dict.fromkeys((UNCAPPED, *b.rules)))))
    return out


#: The mark (in a message's ``decided``) of a default a reading gave as the system's own, not the queue's.
OWN_DEFAULT = ":system-default"


def _marked(state: ModelState, queue: str, body, marks: tuple) -> ModelState:
    """``state`` with the message ``body`` just put on ``queue`` carrying ``marks`` in its ``decided``."""
    q = state.queue(queue)
    m = next((m for m in reversed(q.messages) if m.body == body), None)
    if m is not None:
        q.update(m, decided=tuple(dict.fromkeys((*m.decided, *marks))))
    return state


def _system_default(state: ModelState, field: str) -> int | None:
    """The value a reading gave a message on a queue of ``state`` as the system's own default ``field`` (a put
    that asked for the queue's), where one did: the system gives it to every such put."""
    mark = (field + OWN_DEFAULT, ())
    return next((getattr(m.md, field) for q in state.queues.values() for m in q.messages if mark in m.decided), None)


def _against_system_default(state: ModelState, op: L.Op, branch: model.Branch) -> bool:
    """Whether ``branch``, MQ's put of a message asking for its queue's default priority or persistence, gives it
    the queue's value where a reading already gave an earlier such put the system's own, another one."""
    queue = _put_queue(state, op)
    if queue is None or branch.observation.cc == C.MQCC_FAILED:
        return False
    return any(getattr(op.md, field) == asked and _system_default(state, field) not in (
        None, state.queues[queue].attr(attr)) for field, asked, attr, _ in RESOLVED_BY.values())


#: The rule that a browse-next returns the next message after the cursor.
BROWSE_NEXT_RULE = "CORE-19"
#: Messages a browse-next may skip at most, in the readings that relax it.
MAX_SKIPPED = 4


def _browses_next(op: L.Op) -> bool:
    """Whether ``op`` is a get with MQGMO_BROWSE_NEXT (selecting or not)."""
    return isinstance(op, (L.Get, L.GetMatching)) and bool(op.options & C.MQGMO_BROWSE_NEXT)


def _browse_skipping(state: ModelState, op: L.Op) -> list[model.Branch]:
    """A browse-next that skips messages (CORE-19 relaxed): it returns one of the messages after the next one
    past the cursor (up to :data:`MAX_SKIPPED` skipped, among those it may return), the cursor then on it; the
    messages it skipped stay where they are, never met (an expired one not discarded), and behind the cursor."""
    if not _browses_next(op) or op.options & core.UNDER_CURSOR:
        return []
    h = state.handles.get(op.handle)
    q = state.queues.get(h.queue) if h is not None else None
    if q is None:
        return []
    start = q.position((h.cursor[0], h.cursor[1] + 1)) if h.cursor is not None else 0
    criteria = core.selection(op)
    ahead = [m for m in q.ordered[start:] if core._visibility(state, m, h, False) is None
             and core.satisfies(criteria, m)][:MAX_SKIPPED + 1]
    out = []
    for passed in ahead[:-1]:
        lifted = state.clone()
        lifted.handles[h.name] = attrs.evolve(h, cursor=passed.order_key, cursor_seq=passed.seq)
        out += [attrs.evolve(b, rules=tuple(dict.fromkeys((BROWSE_NEXT_RULE, *b.rules))))
                for b in model.step(lifted, op) if b.observation.message is not None]
    return out


#: Messages of a dead-letter queue a DLQ handler's pass may have skipped, in the reading that relaxes browse-next
#: for it: any one or two of the first :data:`MAX_HANDLER_SKIP_FROM` after the first (or every one its answer
#: shows left alone).
MAX_HANDLER_SKIPPED = 2
MAX_HANDLER_SKIP_FROM = 6
#: Readings of one handler run a walk follows at most in that reading (every one of them is the run's answer).
MAX_HANDLER_READINGS = 16


def _handler_browse_skipping(state: ModelState, op: L.RunDlqHandler, observed: L.Observation,
                             plain: list[model.Branch]) -> list[model.Branch]:
    """A DLQ handler's pass over a queue whose browse-next skips messages (CORE-19 relaxed), when that is what
    ``observed`` shows.  The handler reads its queue by browsing it (browse first, then next), and so does the
    host that tells each message's fate (before and after the pass): a message the handler's browse skipped is
    never met by that pass (not acted on, not discarded if expired, and behind its cursor after); one the host's
    browse before the pass skipped is not listed at all; one its browse after skipped is reported discarded
    though it is still there.  The first message of the queue comes from a browse-first, never skipped.  (Not
    read where MQ's own outcome is the answer: a skip that nothing in the answer shows is not followed.)"""
    if _answered_as_mq(op, observed, plain):
        return []
    d = state.dlq_handlers.get(op.handler)
    if d is None or not d.input_q or d.input_q not in state.queues or observed.cc == C.MQCC_FAILED:
        return []
    visible = dlq._visible(state, d.input_q)
    if len(visible) < 2:
        return []
    head = visible[0].md.msg_id
    # (a pass that goes on from its cursor browses next from there: it may skip the queue's first message too)
    passed = visible if d.cursor is not None else visible[1:]
    hideable = passed[:MAX_HANDLER_SKIP_FROM]
    # which messages the pass skipped: any one or two of the first few, or every one the answer shows left
    # alone or unlisted (a browse that skips every other message skips many)
    seen = dict(observed.attrs or ())
    untouched = tuple(m for m in passed if seen.get(m.md.msg_id, dlq.KEPT) == dlq.KEPT)
    unlisted = tuple(m for m in untouched if m.md.msg_id not in seen)
    ways = [hidden for size in range(MAX_HANDLER_SKIPPED + 1) for hidden in itertools.combinations(hideable, size)]
    ways += [w for w in dict.fromkeys((unlisted, untouched)) if len(w) > MAX_HANDLER_SKIPPED]
    out: list[model.Branch] = []
    told: set = set()
    for hidden in ways:
        # (the same queue less the same messages comes again under each rule relaxed: found again by the state)
        branches = K.STEPS.step(_without(state, d.input_q, hidden) if hidden else state, op)
        for b in branches:
            key = (tuple(m.seq for m in hidden), b.observation)
            if key in told:
                continue   # one reading per set skipped and outcome: each is the answer, and the states alike
            told.add(key)
            # the messages the pass skipped are there still, for the host to list as kept
            fates = {**{m.md.msg_id: dlq.KEPT for m in hidden if m.md.msg_id}, **dict(b.observation.attrs or ())}
            left = dlq._visible(b.state, d.input_q) if d.input_q in b.state.queues else []
            first = min([*left, *hidden], key=lambda m: m.order_key, default=None)
            if _host_view_explains(fates, b.observation.cc, first.md.msg_id if first else None, head, observed):
                after = _with_back(b.state, d.input_q, hidden) if hidden else b.state
                out.append(attrs.evolve(b, observation=observed, state=after,
                                        rules=tuple(dict.fromkeys((BROWSE_NEXT_RULE, *b.rules)))))
                if len(out) >= MAX_HANDLER_READINGS:
                    return out   # the fewest skipped first
    return out


def _without(state: ModelState, queue: str, hidden) -> ModelState:
    """``state`` (cloned) with the messages ``hidden`` taken off ``queue``."""
    lifted = state.clone()
    q = lifted.queue(queue)
    for m in hidden:
        q.remove(q.find(m.seq))
    return lifted


def _with_back(state: ModelState, queue: str, hidden) -> ModelState:
    """``state`` (cloned) with the messages ``hidden`` on ``queue`` again, in their places."""
    s = state.clone()
    q = s.queue(queue)
    messages = sorted([*q.messages, *hidden], key=lambda m: m.seq)
    for m in list(q.messages):
        q.remove(m)
    for m in messages:
        q.append(m)
    return s


def _host_view_explains(want: dict, cc: int, first_after: str | None, head: str, observed: L.Observation) -> bool:
    """Whether ``observed``, a DLQ handler run's fates, is the outcome ``want`` (fates, completion code ``cc``)
    as the host's browses that skip messages see it: each message's fate as the outcome's, or missing (the
    browse before the pass skipped it), or discarded where it is still there (the browse after skipped it);
    never so for the queue's first message before the pass (``head``) or after it (``first_after``)."""
    got = dict(observed.attrs or ())
    if want.get("HANDLER") != got.get("HANDLER") or cc != observed.cc:
        return False
    for key in set(want) | set(got):
        w, g = want.get(key), got.get(key)
        if w == g:
            continue
        if key == head or w is None:
            return False
        if g is None or (g == dlq.DISCARDED and w in (dlq.KEPT, dlq.BACKED_OUT) and key != first_after):
            continue
        return False
    return True


#: The rule that a backout reinstates the messages its unit of work got.
GETS_REINSTATED = "CORE-15"

#: The rule that an expired message is never returned: its queue manager discards it when a get or browse
#: reaches it.
EXPIRED_RETURNED = "EXP-06"


def _expired_unmet(state: ModelState, op: L.RunDlqHandler) -> ModelState | None:
    """The state ``op`` (a DLQ handler's pass) would meet if the expired messages on its queue were returned to
    its browses like any other (EXP-06 relaxed): each as a message with a tenth of a second left (what a get
    returns of it, or of what the handler forwards, the least Expiry a live message has), expiring again as
    soon as time passes (None: none there)."""
    d = state.dlq_handlers.get(op.handler)
    q = state.queues.get(d.input_q or "") if d is not None else None
    expired = [m for m in q.messages if expiry.status(state, m) != expiry.LIVE] if q is not None and q.expiring else []
    if not expired:
        return None
    s = state.clone()
    for m in expired:
        left = state.clock - m.put_time + state.expiry_tolerance + 1
        s.queue(q.name).update(s.find(q.name, m.seq), md=attrs.evolve(m.md, expiry=left))
    return s


#: The rules of the count a backout raises: a reinstated message's BackoutCount + 1 (CORE-15), which counts
#: every backed-out get (CORE-17).
COUNT_RAISED = ("CORE-15", "CORE-17")


def _handler_backouts_uncounted(state: ModelState, op: L.RunDlqHandler, plain: list[model.Branch],
                                relaxed: frozenset[str]) -> list[model.Branch]:
    """A DLQ handler's pass whose backouts put their messages back without raising their BackoutCount (CORE-15
    or CORE-17 relaxed): where an action's put failed and the handler backed out its get, the message is back
    with the count it had, and the host, which tells a backout by the count, reports it kept."""
    d = state.dlq_handlers.get(op.handler)
    queue = d.input_q if d is not None else None
    tags = tuple(r for r in COUNT_RAISED if r in relaxed)
    out = []
    for b in plain:
        fates = dict(b.observation.attrs or ())
        backed = {mid for mid, fate in fates.items() if fate == dlq.BACKED_OUT}
        if not backed or queue not in b.state.queues:
            continue
        s = b.state.clone()
        q = s.queue(queue)
        for m in [m for m in q.messages if m.md.msg_id in backed and m.backout_count > 0]:
            q.update(m, backout_count=m.backout_count - 1)
        seen = L.Observation(cc=b.observation.cc, rc=b.observation.rc, attrs=tuple(
            (k, dlq.KEPT if k in backed else v) for k, v in b.observation.attrs))
        out.append(attrs.evolve(b, state=s, observation=seen, rules=tuple(dict.fromkeys((*tags, *b.rules)))))
    return out


def _handler_backouts_lost(state: ModelState, op: L.RunDlqHandler, plain: list[model.Branch]) -> list[model.Branch]:
    """A DLQ handler's pass whose backouts lost the messages they should have put back (CORE-15 relaxed): where
    an action's put failed and the handler backed out its get, the message is gone (all such messages of the
    pass, or any one of them), and the handler, finding it gone, reports it discarded."""
    d = state.dlq_handlers.get(op.handler)
    queue = d.input_q if d is not None else None
    out = []
    for b in plain:
        fates = dict(b.observation.attrs or ())
        backed = [mid for mid, fate in fates.items() if fate == dlq.BACKED_OUT]
        if not backed or queue not in b.state.queues:
            continue
        ways = [[one] for one in backed] if len(backed) <= MAX_LOST_ONE_BY_ONE else []
        if len(backed) > 1:
            ways.append(backed)
        for lost in ways:
            s = b.state.clone()
            q = s.queue(queue)
            for m in [m for m in q.messages if m.md.msg_id in lost]:
                q.remove(m)   # gone, and not as a discard of MQ's
            status = fates.get("HANDLER")
            h = s.dlq_handlers.get(op.handler)
            if status == dlq.RUNNING and h is not None and h.table is not None and h.table.control.wait == "NO" \
                    and dlq._ends(h, s, True)[0] == [True]:
                # WAIT(NO): nothing left that it would act on, the handler ends
                status = dlq.ENDED
                s.dlq_handlers[op.handler] = attrs.evolve(h, running=False)
            seen = L.Observation(cc=b.observation.cc, rc=b.observation.rc, attrs=tuple(
                (k, dlq.DISCARDED if k in lost else status if k == "HANDLER" else v)
                for k, v in b.observation.attrs))
            out.append(attrs.evolve(b, state=s, observation=seen,
                                    rules=tuple(dict.fromkeys((GETS_REINSTATED, *b.rules)))))
    return out


#: Passes over a message its own backouts put back at the tail that a DLQ handler's run may make, at most, in
#: the reading that relaxes where a backout reinstates a message.
MAX_MET_AGAIN = 3


def _handler_meets_again(state: ModelState, op: L.RunDlqHandler, plain: list[model.Branch]) -> list[model.Branch]:
    """A DLQ handler's pass on a queue whose backouts put a message back behind the others of its priority, not
    in its original place (CORE-15 relaxed): a message the pass backed out (its action's put failed) is then
    just past the handler's browse cursor, which is still where the message was, and the pass meets it again,
    trying it once more (and so on, while its retries last).  Told after the pass: the messages it backed out
    met again, the others as they were.  Each message's fate is the last the pass gave it; whether the handler
    ends is decided after the last meeting; its cursor ends on the last message it met."""
    d = state.dlq_handlers.get(op.handler)
    queue = d.input_q if d is not None else None
    out: list[model.Branch] = []
    rounds = [(b, dict(b.observation.attrs or ())) for b in plain]
    for _ in range(MAX_MET_AGAIN):
        nxt = []
        for b, fates in rounds:
            backed = {mid for mid, fate in fates.items() if fate == dlq.BACKED_OUT and mid != "HANDLER"}
            h = b.state.dlq_handlers.get(op.handler)
            if not backed or queue not in b.state.queues or h is None or h.table is None:
                continue
            s = b.state.clone()
            q = s.queue(queue)
            moved = []
            for m in [m for m in q.messages if m.md.msg_id in backed]:
                q.remove(m)
                moved.append(attrs.evolve(m, seq=s.next_seq))   # behind every message of its priority now
                q.append(moved[-1])
                s.next_seq += 1
            others = [m for m in q.messages if m.md.msg_id not in backed]
            lifted = _without(s, queue, others)
            first = min(m.order_key for m in moved)
            lifted.dlq_handlers[op.handler] = attrs.evolve(h, running=True, cursor=(first[0], first[1] - 1))
            for again in model.step(lifted, op):
                later = dict(again.observation.attrs or ())
                merged = {mid: (later[mid] if later.get(mid, dlq.KEPT) != dlq.KEPT else fate)
                          for mid, fate in fates.items() if mid != "HANDLER"}
                merged["HANDLER"] = later.get("HANDLER", fates.get("HANDLER"))
                after = _with_back(again.state, queue, others)
                ha = after.dlq_handlers.get(op.handler)
                if ha is not None and h.cursor is not None and (ha.cursor is None or ha.cursor < h.cursor):
                    after.dlq_handlers[op.handler] = attrs.evolve(ha, cursor=h.cursor)
                seen = L.Observation(cc=again.observation.cc, rc=again.observation.rc, attrs=merged)
                branch = attrs.evolve(again, observation=seen, state=after,
                                      rules=tuple(dict.fromkeys((GETS_REINSTATED, *again.rules))))
                out.append(branch)
                nxt.append((branch, {mid: later.get(mid, dlq.KEPT) for mid in fates}))
        rounds = nxt[:K.MAX_CANDIDATES]
        if not rounds:
            break
    return out


def _get_beside_uncommitted(pairs) -> bool:
    """Whether some get in ``pairs`` came while a connection other than its own had a put under syncpoint (by
    the operations alone: a cheap bound on where :func:`_seen_uncommitted` can add anything)."""
    pending: set[str] = set()
    for op, _ in pairs:
        if isinstance(op, (L.Put, L.Put1)) and op.options & C.MQPMO_SYNCPOINT:
            pending.add(op.conn)
        elif isinstance(op, (L.Commit, L.Backout, L.Disconnect)):
            pending.discard(op.conn)
        elif isinstance(op, L.Get) and pending - {op.conn}:
            return True
    return False


def _cut_shown_backed_out(pairs) -> bool:
    """Whether a connection cut between calls in ``pairs`` is seen to have backed its unit of work out: a
    message it had got under syncpoint is returned again after the cut (by the operations and answers alone;
    where it came back, in what order, with what count, is another rule's)."""
    got: dict[str, set[str]] = {}
    backed: set[str] = set()
    for op, observed in pairs:
        message = observed.message
        if message is not None and isinstance(op, (L.Get, L.GetMatching)):
            name = message.msg_id or message.body
            if name in backed:
                return True
            if op.options & C.MQGMO_SYNCPOINT and not op.options & C.MQGMO_BROWSE_ANY \
                    and observed.cc != C.MQCC_FAILED:
                got.setdefault(op.conn, set()).add(name)
        elif isinstance(op, (L.Commit, L.Backout, L.Disconnect, L.Connect)):
            got.pop(op.conn, None)
        elif isinstance(op, L.CutConnection) and not op.in_flight:
            backed |= got.pop(op.conn, set())
    return False


def _taken_after_priorities(pairs) -> bool:
    """Whether some get, browse or DLQ handler's run came after puts of more than one priority (by the
    operations alone: a cheap bound on where :func:`_in_arrival_order` can add anything)."""
    priorities: set[int] = set()
    for op, _ in pairs:
        if isinstance(op, (L.Put, L.Put1)):
            priorities.add(op.md.priority)
        elif isinstance(op, (L.Get, L.GetMatching, L.RunDlqHandler)) and len(priorities) > 1:
            return True
    return False


def _taken_after_two(pairs) -> bool:
    """Whether some get, browse or DLQ handler's run came after two steps that may have put messages (by the
    operations alone: a cheap bound on where :func:`_newest_first` can add anything; a queue manager's own
    messages, a trigger message or a report, come of steps of any kind)."""
    return any(isinstance(op, (L.Get, L.GetMatching, L.RunDlqHandler)) for op, _ in pairs[2:])


def _backed_out_by(state: ModelState, op: L.Op) -> list[str]:
    """The connections whose units of work ``op`` backs out without the application asking (an abnormal end,
    a connection cut between calls, a restart): those holding one."""
    def holds(conn: str) -> bool:
        c = state.conns.get(conn)
        # (a connection cut while a call was in flight, its program ending without a call: nothing was in flight,
        # and its unit of work is backed out as any abnormal end's)
        ending = isinstance(op, L.Disconnect) and op.abnormal
        return c is not None and bool(c.uow) and conn not in state.broken | (frozenset() if ending else state.armed)

    if isinstance(op, L.Disconnect) and op.abnormal or isinstance(op, L.CutConnection) and not op.in_flight:
        return [op.conn] if holds(op.conn) else []
    if isinstance(op, L.Restart) and not state.group:
        return sorted(conn for conn in state.conns if holds(conn))
    return []


#: That a commit deletes the messages its unit of work got (CORE-14): relaxed, a commit (an MQCMIT, or the commit of
#: a normal MQDISC) that makes its puts available and leaves its gets' messages on their queues, available again.
GETS_DELETED = "CORE-14"


def _got_under_syncpoint(pairs) -> bool:
    """Whether a get in ``pairs`` returned a message under syncpoint (as asked, or as a persistent one may be)."""
    return any(isinstance(op, (L.Get, L.GetMatching)) and observed.message is not None
               and op.options & (C.MQGMO_SYNCPOINT | C.MQGMO_SYNCPOINT_IF_PERSISTENT) for op, observed in pairs)


def _commit_keeping_gets(state: ModelState, op: L.Op) -> list[model.Branch]:
    """``op``'s outcomes where the commit it makes (MQCMIT, a normal MQDISC) leaves the messages its unit of work got
    where they were, available to every program again with their counts as they were (CORE-14 relaxed); its puts
    committed and the rest of ``op`` as MQ does it."""
    if not (isinstance(op, L.Commit) or isinstance(op, L.Disconnect) and not op.abnormal):
        return []
    c = state.conns.get(op.conn)
    # (a commit cut in flight too: whichever way it went, a get it did not delete stays)
    if c is None or op.conn in state.broken or c.marked is not None or c.skipped is not None:
        return []
    gets = [e for e in c.uow if e.kind == "get"]
    if not gets:
        return []
    s = state.clone()
    for entry in gets:
        m = s.find(entry.queue, entry.seq)
        if m is not None and m.got_by == op.conn:
            s.queue(entry.queue).update(m, got_by=None, provenance=(GETS_DELETED,) + m.provenance)
    s.conn(op.conn).uow[:] = [e for e in c.uow if e.kind != "get"]
    cut = op.conn in state.armed   # (a call cut in flight fails, whether or not its commit was made)
    return [attrs.evolve(b, rules=tuple(dict.fromkeys((GETS_DELETED, *b.rules))))
            for b in model.step(s, op) if cut or b.observation.cc != C.MQCC_FAILED]


def _partial_backouts(state: ModelState, op: L.Op, rules: frozenset[str]) -> list[model.Branch]:
    """``op``'s outcomes where each backout it makes is one that breaks ``rules`` (CORE-03, CORE-15) alone, as
    a plain MQBACK relaxed so: its puts kept, or its gets' messages left gone; the rest of ``op`` (handles
    closed, the connection ended, the queue manager restarted) as MQ does it."""
    conns = _backed_out_by(state, op)
    if not conns:
        return []
    out: list[model.Branch] = []
    for rule in sorted(rules):
        s: ModelState | None = state
        why = "CORE-31" if isinstance(op, L.Disconnect) else "CORE-46" if isinstance(op, L.CutConnection) else "CORE-32"
        for conn in conns:
            s = core.backout_keeping(s, conn, PARTIAL_END[rule], why) if s is not None else None
        if s is not None:
            out += [attrs.evolve(b, rules=tuple(dict.fromkeys((rule, *b.rules))))
                    for b in model.step(s, op) if b.observation.cc != C.MQCC_FAILED]
    return out


def _marks_skipped(state: ModelState, op: L.Op) -> list[model.Branch]:
    """``op``'s outcomes where each backout it makes without the application asking skips the marked get of
    the unit of work as an MQBACK would, and for good (SYNC-07 relaxed): the marked message stays gone, the
    rest is backed out as MQ does it."""
    s: ModelState | None = None
    for conn in _backed_out_by(state, op):
        c = state.conns[conn]
        entry = next((e for e in c.uow if e.kind == "get" and e.seq == c.marked), None)
        m = state.find(entry.queue, entry.seq) if entry is not None else None
        if m is None:
            continue
        s = s or state.clone()
        own = s.conn(conn)
        own.uow.remove(entry)
        own.marked = None
        s.discard(entry.queue, s.find(entry.queue, entry.seq), (UNREQUESTED_SKIP,))
    if s is None:
        return []
    return [attrs.evolve(b, rules=tuple(dict.fromkeys((UNREQUESTED_SKIP, *b.rules))))
            for b in model.step(s, op) if b.observation.cc != C.MQCC_FAILED]


#: Get options under which delivery order does not pick the message alone (a cursor, a lock, a mark).
#: (A browse is left out too: where its cursor stands after another message depends on the order it broke.)
_NOT_BY_ORDER = C.MQGMO_BROWSE_ANY | core.UNDER_CURSOR | C.MQGMO_LOCK | C.MQGMO_UNLOCK | C.MQGMO_MARK_SKIP_BACKOUT


def _out_of_order(state: ModelState, op: L.Op, chosen: set, relaxed: frozenset[str]) -> list[model.Branch]:
    """A destructive get returning another message available to it than delivery order puts first (the
    order rules relaxed): one branch per such message (among those a selection matches), what follows
    going on with that one gone.  Only on a queue without expiring messages, and without a browse, lock
    or mark: where nothing but order chooses."""
    if not _by_order(op):
        return []
    h = state.handles.get(op.handle)
    q = state.queues.get(h.queue) if h is not None else None
    if q is None or q.expiring:
        return []
    criteria = core.selection(op)
    available = [m for m in q.ordered if core._visibility(state, m, h, False) is None and core.satisfies(criteria, m)]
    want = next((m for m in available if m.body in chosen), None)
    if want is None:
        return []
    return [core._deliver(state, op, h, [], m, (), {}, True, False) for m in available
            if m.body not in chosen and _order_broken(q, want.order_priority, m, available) <= relaxed]


def _by_order(op: L.Op) -> bool:
    """Whether delivery order alone picks the message ``op`` returns: a destructive get, with no browse
    cursor, lock or mark in play (a browse's cursor stands where the order it broke left it)."""
    return type(op) in (L.Get, L.GetMatching) and not op.options & _NOT_BY_ORDER


#: Checks of a put a relaxed rule waives: the queue attribute that refuses it, and a value with which it does not.
WAIVED = {"CORE-27": ("MAXDEPTH", 10 ** 9), "CORE-26": ("PUT", C.MQQA_PUT_ALLOWED),
          "CORE-49": ("MAXMSGL", 10 ** 9), "CORE-50": ("MAXMSGL", 10 ** 9)}


#: The rule of what CURDEPTH counts (uncommitted puts in, messages got under syncpoint out).
DEPTH_RULE = "CORE-28"
#: The rule of a full queue (a put that would take it past MAXDEPTH fails with MQRC_Q_FULL), relaxed also by a
#: queue that takes the message and drops its oldest to stay within its limit (a broker's drop-head overflow).
OVERFLOW_RULE = "CORE-27"
#: The calls that may take a queue past its limit: a put, and the commit that makes a unit of work's puts
#: available (a broker that enqueues them only then).
OVERFLOWING = (L.Put, L.Put1, L.Commit, L.Disconnect)


def _overflow_dropping_head(op: L.Op, outcomes: list[model.Branch]) -> list[model.Branch]:
    """CORE-27 relaxed as a queue that never refuses for want of room but drops its oldest: each outcome of
    ``op`` that leaves a queue holding more messages than its MAXDEPTH, with its oldest messages (in the order
    they arrived) gone until it holds MAXDEPTH.  (Not the first in delivery order: on a priority queue that
    would be a message just put above the rest, and a queue that ignores priority, returning an older message
    first, would read as one that dropped the newer.)  What such a limit counts: the messages a commit has made
    available (a broker that enqueues a transaction's messages at its commit), with or without those a get
    holds in a unit of work (RabbitMQ counts only the messages ready to deliver); each count a reading of its
    own, the second only where a get holds one."""
    out = []
    for b in outcomes:
        if b.observation.cc == C.MQCC_FAILED:
            continue
        held = any(q.held for q in b.state.queues.values())
        for held_count in (False, True) if held else (False,):
            s = None
            for name, q in b.state.queues.items():
                limit = q.attrs.get("MAXDEPTH")
                ready = [m for m in q.messages if m.put_by is None and m.got_by is None]
                counted = len(ready) + (held_count and sum(m.got_by is not None for m in q.messages))
                if limit is None or counted <= limit:
                    continue
                s = s or b.state.clone()
                for m in ready[:counted - limit]:
                    s.discard(name, s.find(name, m.seq), (OVERFLOW_RULE,))
            if s is not None:
                out.append(attrs.evolve(b, state=s, rules=tuple(dict.fromkeys((OVERFLOW_RULE, *b.rules)))))
    return out


def _counted_otherwise(state: ModelState, op: L.Op, plain: list[model.Branch]) -> list[model.Branch]:
    """A put checked against MAXDEPTH with the queue's depth counted otherwise than MQ counts it (CORE-28
    relaxed): without the uncommitted puts (accepted where MQ finds the queue full), or with the messages got
    under syncpoint still in (refused as full where MQ accepts it).  The check itself (CORE-27) as MQ's."""
    queue = _put_queue(state, op)
    if queue is None:
        return []
    q = state.queues[queue]
    maxdepth = q.attr("MAXDEPTH")
    out: list[model.Branch] = []
    if q.uncommitted and any(b.observation.rc == C.MQRC_Q_FULL for b in plain):
        out += [b for b in _waiving(state, op, [queue], {"MAXDEPTH": maxdepth + q.uncommitted})
                if b.observation.cc != C.MQCC_FAILED]
    if q.held and any(b.observation.cc != C.MQCC_FAILED for b in plain):
        out += [b for b in _waiving(state, op, [queue], {"MAXDEPTH": max(maxdepth - q.held, 0)})
                if b.observation.rc == C.MQRC_Q_FULL]
    return [attrs.evolve(b, rules=tuple(dict.fromkeys((DEPTH_RULE, *b.rules)))) for b in out]


def _put_queue(state: ModelState, op: L.Op) -> str | None:
    """The local queue a put or put1 goes to, where the model knows it."""
    if isinstance(op, L.Put):
        h = state.handles.get(op.handle)
        name = h.queue if h is not None else None
    elif isinstance(op, L.Put1):
        name = op.queue
    else:
        return None
    return name if name in state.queues else None


#: The rule that makes a message put outside syncpoint available as soon as its put returns.
AT_ONCE_RULE = "CORE-01"


def _arriving_late(plain: list[model.Branch], late: int) -> list[model.Branch]:
    """A depth asked for before the latest ``late`` messages put outside syncpoint had arrived (CORE-01 relaxed:
    the puts returned first): MQ's depth less one to ``late`` of them.  They are on the queue for the history's
    next steps as MQ has them (they arrived after)."""
    out = []
    for b in plain:
        depth = dict(b.observation.attrs or ()).get("CURDEPTH")
        if isinstance(depth, int):
            out += [attrs.evolve(b, observation=attrs.evolve(b.observation, attrs={**dict(b.observation.attrs),
                                                                                     "CURDEPTH": depth - k}),
                                 rules=tuple(dict.fromkeys((AT_ONCE_RULE, *b.rules))))
                    for k in range(1, min(late, depth) + 1)]
    return out


class Walk:
    """The model following a history step by step with ``relaxed`` rules relaxed (``set_aside``: rules a
    keep-going run stepped past, relaxed as well but never counted as needed).  :meth:`step` takes the next
    step and says whether the history so far passes; the readings that may go on past it are kept, so a
    history that grows (a case running on) is followed once, not again from its start at each question."""

    def __init__(self, platform: str, relaxed: frozenset[str], expiry_tolerance: int = 0,
                 set_aside: frozenset[str] = frozenset()):
        self.relaxed = relaxed
        self.set_aside = set_aside
        self.loose = relaxed | set_aside
        # what the set-aside rules, broken as relaxing them allows, let happen instead (a put accepted past a check,
        # another message got): never counted as needed.  Not a unit of work ended the other way: a rule of how one
        # ends is found broken in one way (a backed-out message put back out of order, say), and every backout of
        # the history committing instead would explain away all else.
        self.loose_aside = set_aside - relaxed - ENDINGS
        # each candidate with the first step at which a relaxation of ``relaxed`` entered its past (None: none)
        self.candidates: list[tuple[ModelState, int | None]] = [(model.initial_state(platform, expiry_tolerance),
                                                                  None)]
        self.taken = 0
        self.result: int | None = -1
        #: Whether every reading that passes the last step taken explains it only by letting a message appear
        #: where MQ's get finds none (:func:`_appeared`).
        self.appeared = False
        #: Per queue, the messages put outside syncpoint that no call has met since (only puts, opens, connects and
        #: calls on other queues came after them): a depth asked for now may leave them out where CORE-01 is
        #: relaxed (:func:`_arriving_late`).  The same along every reading: it is the history's, not a state's.
        self.unmet: dict[str, int] = {}

    def through(self, pairs) -> int | None:
        """Take the steps of ``pairs`` not yet taken (``pairs`` extends the history taken so far) and return
        :meth:`step`'s answer for the last."""
        for op, observed in pairs[self.taken:]:
            self.step(op, observed)
        return self.result

    def step(self, op: L.Op, observed: L.Observation) -> int | None:
        """Take one more step.  Returns, for the history so far: the index of the first step whose outcome
        needed the relaxation, -1 when none needed it, None when some step still departs."""
        i = self.taken
        self.taken += 1
        if not self.candidates:
            self.result = None
            return None
        relaxed, set_aside, loose, loose_aside = self.relaxed, self.set_aside, self.loose, self.loose_aside
        candidates = self.candidates
        if observed.rc == C.MQRC_CONNECTION_BROKEN and isinstance(op, K.IN_DOUBT_OPS) \
                and not any(op.conn in s.armed | s.broken for s, _ in candidates):
            candidates = [(K._armed(s, op.conn) if op.conn in s.conns else s, at) for s, at in candidates]
        # (branch, first step needed at, whether the reading may go on past this step)
        nxt: list[tuple[model.Branch, int | None, bool]] = []
        # for each of them, whether it explains the step only by letting a message appear (:func:`_appeared`)
        appeared: list[bool] = []
        late = self.unmet.get(op.queue, 0) if isinstance(op, L.InquireQueue) and not op.qmgr \
            and "CURDEPTH" in op.names else 0
        for state, at in candidates:
            plain, extra = _relaxed_step(state, op, relaxed, observed)
            if isinstance(op, (L.Put, L.Put1)):
                # where a reading gave the system's own default, MQ's resolution is no longer one of its outcomes
                plain = [b for b in plain if not _against_system_default(state, op, b)]
            aside = _relaxed_step(state, op, loose_aside, observed)[1] if loose_aside else []
            # (only where the depth is not one MQ gives: one MQ gives tells no story of messages arriving late)
            if late and not _answered_as_mq(op, observed, plain):
                if AT_ONCE_RULE in relaxed:
                    extra = extra + _arriving_late(plain, late)
                elif AT_ONCE_RULE in loose_aside:
                    aside = aside + _arriving_late(plain, late)
            for b in plain:
                if K._matches(b.observation, observed):
                    bound = _generated_id_noted(b, observed, relaxed, loose)
                    if bound is not None:
                        nxt.append((bound[0], (i if at is None else at) if bound[1] else at, True))
                        appeared.append(False)
                elif explained(b, observed, op, loose, state):
                    fields = K.differing_fields(b.observation, observed)
                    needed = explained(b, observed, op, set_aside, state) is False
                    # a reading that let a value differ goes on only where the difference cannot change what
                    # happens next; as the history's last step, it passes either way
                    nxt.append((_adopted(b, fields, observed), (i if at is None else at) if needed else at,
                                K._nothing_changes_next(fields, b.observation, observed)))
                    appeared.append(_appeared(b, observed))
            for b, relaxing in [(b, True) for b in extra] + [(b, False) for b in aside]:
                if K._matches(b.observation, observed):
                    bound = _generated_id_noted(b, observed, relaxed, loose)
                    if bound is not None:
                        nxt.append((bound[0], (i if at is None else at) if relaxing or bound[1] else at, True))
                        appeared.append(False)
                elif _same_message(b.observation, observed) and explained(b, observed, op, loose, state):
                    # a reading that returned the message the system did, differing still in its fields that
                    # the rules relaxed decide (a message taken in arrival order, its blank MsgId left blank)
                    fields = K.differing_fields(b.observation, observed)
                    needed = relaxing or explained(b, observed, op, set_aside, state) is False
                    nxt.append((_adopted(b, fields, observed), (i if at is None else at) if needed else at,
                                K._nothing_changes_next(fields, b.observation, observed)))
                    appeared.append(False)
        if not nxt:
            self.candidates = []
            self.result = None
            return None
        self._note(op, observed, candidates[0][0], [b for b, _, _ in nxt])
        self.appeared = all(appeared)
        used = [at for _, at, _ in nxt if at is not None]
        # passes: the first step the relaxation was needed at along the readings that pass without any later
        # departure (a reading needing none means the history passes unrelaxed)
        self.result = min(used) if len(used) == len(nxt) else -1
        seen: list[tuple[ModelState, int | None]] = []
        for b, at, goes_on in nxt:
            if not goes_on:
                continue
            for k, (s, a) in enumerate(seen):
                if s is b.state or s == b.state:
                    # one state reached two ways: the reading that needed the relaxation least
                    seen[k] = (s, None if at is None or a is None else min(at, a))
                    break
            else:
                if len(seen) < K.MAX_CANDIDATES:
                    seen.append((b.state, at))
        self.candidates = seen
        return self.result

    def _note(self, op: L.Op, observed: L.Observation, before: ModelState, after: list[model.Branch]) -> None:
        """:attr:`unmet` after ``op``: a put outside syncpoint adds the messages it placed; a get or a depth asked
        for meets its queue's; an open, a connect, a call on another queue leave them; anything else meets all."""
        if isinstance(op, (L.Put, L.Put1)):
            queue = _put_queue(before, op)
            if queue is not None and observed.cc != C.MQCC_FAILED:
                placed = max((sum(1 for m in b.state.queues[queue].messages
                                  if m.seq >= before.next_seq and m.put_by is None and AT_ONCE_RULE in m.provenance)
                              for b in after if queue in b.state.queues), default=0)
                if placed:
                    self.unmet[queue] = self.unmet.get(queue, 0) + placed
        elif isinstance(op, L.InquireQueue) and not op.qmgr:
            if "CURDEPTH" in op.names:
                self.unmet.pop(op.queue, None)
        elif isinstance(op, L.Get):
            h = before.handles.get(op.handle)
            self.unmet.pop(h.queue if h is not None else None, None)
        elif not isinstance(op, (L.Open, L.Connect)):
            self.unmet.clear()


def _generated_id_noted(branch: model.Branch, observed: L.Observation, relaxed: frozenset[str],
                        loose: frozenset[str]) -> tuple[model.Branch, bool] | None:
    """``branch`` (matching ``observed``) with the MsgId the system generated noted, and whether the reading needed
    CORE-11 relaxed for it (a MsgId generated for another message: passes with the rule relaxed or set aside, and
    is counted as needed only where relaxed); None where the rule is neither."""
    bound = K.bind_generated_id(branch, observed, loose)
    return None if bound is None else (bound[0], bound[1] and K.UNIQUE_ID_RULE in relaxed)


def follows(pairs, platform: str, relaxed: frozenset[str], expiry_tolerance: int = 0,
            set_aside: frozenset[str] = frozenset()) -> int | None:
    """Whether the history ``pairs`` ((op, observed), ...) passes with ``relaxed`` rules relaxed: the
    index of the first step whose outcome needed the relaxation, or None when some step still departs
    (``set_aside``: rules a keep-going run stepped past, relaxed as well but never counted as needed)."""
    walk = Walk(platform, relaxed, expiry_tolerance, set_aside)
    for op, observed in pairs:
        if walk.step(op, observed) is None:
            return None
    return walk.result


#: Fields of a returned message that the message carries on: a reading that let the system show another
#: value goes on with the message holding what the system showed (a count not raised stays not raised).
CARRIED = {"message.backout_count": "backout_count"}


def _adopted(branch: model.Branch, fields: list[str], observed: L.Observation) -> model.Branch:
    """``branch`` with the message ``observed`` returned carrying on the values of :data:`CARRIED` fields
    it showed, where they differ from MQ's."""
    carried = {CARRIED[f]: getattr(observed.message, CARRIED[f]) for f in fields if f in CARRIED}
    if not carried or observed.message is None or any(not isinstance(v, int) for v in carried.values()):
        return branch
    state = branch.state.clone()
    for name, q in list(state.queues.items()):
        for m in q.messages:
            if m.body == observed.message.body:
                state.queue(name).update(m, **carried, backout_uncertain=0)
    return attrs.evolve(branch, state=state)


def _deciding(pairs, platform: str, expiry_tolerance: int,
              set_aside: frozenset[str]) -> tuple[list[str], list[frozenset[str]]]:
    """The rules that, alone or together, decide the failing step's (the last of ``pairs``) differing
    fields, and the sets of rules needed together there: the checker may mention only one of a pair that
    is needed together (two order rules; returning an expired message and not counting its time)."""
    tracker = K.ModelTracker(platform, expiry_tolerance=expiry_tolerance, set_aside=set_aside)
    out: list[str] = []
    for op, observed in pairs[:-1]:
        if tracker.candidates and observed.cc != C.MQCC_FAILED and _put_queue(tracker.candidates[0], op) is not None:
            # a put the system accepted where MQ may have refused it: the check that refuses it, relaxed,
            # lets the history go on with the message there (what the system did), not without it
            out += [r for b in tracker.expect(op) if b.observation.cc == C.MQCC_FAILED
                    for r in b.rules if r in WAIVED]
        if not K._follow(tracker, op, observed):
            return [], []
    op, observed = pairs[-1]
    together: list[frozenset[str]] = []
    before = tracker.candidates[0] if tracker.candidates else None
    for b in tracker.expect(op):
        fields = _differing(b.observation, observed)
        if "message.body" in fields:
            order = _order_deciders(b, observed) or ()
            for ways in order:
                out += sorted(ways)
            instead = _delivered_instead(b, observed, op, before) if order else None
            shown = _shown(instead, observed, op, before) if instead is not None else []
            # the message returned out of order shows fields otherwise than MQ returns it: their rules, alone
            # (where they place it first too) or with the order's, every field's together
            out += sorted({r for field_ways in shown for ways in field_ways for r in ways})
            if shown and all(shown):
                together += [o.union(*ways) for o in order
                             for ways in itertools.islice(itertools.product(*shown), MAX_SHOWN_WAYS)]
        instead = _returned_instead(b, observed, op, before) if "message" in fields else None
        if instead is not None:
            # a message where MQ returns none, showing fields otherwise than MQ returns that message: their
            # rules, alone and with each way of the message coming back at all
            shown = _shown(instead, observed, op, before)
            out += sorted({r for field_ways in shown for ways in field_ways for r in ways})
            if shown and all(shown):
                together += [o.union(*ways) for o in deciders(b, "message", observed, op, before)
                             for ways in itertools.islice(itertools.product(*shown), MAX_SHOWN_WAYS)]
        per_field = []
        for field in fields:
            field_ways = deciders(b, field, observed, op, before)
            per_field.append(field_ways)
            for ways in field_ways:
                if len(ways) > 1:
                    out += sorted(ways)
                    together.append(ways)
                elif ways & SELECTION_RULES:
                    # a selection applied where MQ ignores it, or a none value taken literally: the rule that
                    # decides it, which the checker may not have named (it names how the message came there)
                    out += sorted(ways)
        if len(per_field) > 2 and all(per_field):
            # three fields or more, each decided by its own rules: one way of each, together (a message given
            # neither the queue's DEFPRTY nor its DEFPSIST, and no MsgId generated: three rules, which no pair
            # explains)
            together += [frozenset().union(*ways)
                         for ways in itertools.islice(itertools.product(*per_field), MAX_SHOWN_WAYS)]
    return list(dict.fromkeys(out)), list(dict.fromkeys(together))


class Explainer:
    """Whether the rules ``known`` (found broken already) explain a history: relaxed all together as rules set
    aside are; or, for a rule of how a unit of work ends among them (which set aside never ends one the other
    way: every backout committing instead would explain away all else), that rule relaxed as such, the others
    set aside.  A unit of work the system was found to end the other way explains a history that shows just
    that.  Asked again of the same history grown longer (a case running on past a departure explained), it
    follows only the steps added."""

    def __init__(self, platform: str, known: frozenset[str], expiry_tolerance: int = 0):
        self.known = known
        self.walks = _known_walks(platform, known, expiry_tolerance)

    def explains(self, pairs) -> bool:
        """Whether ``known`` explain ``pairs`` (the history asked of before, with steps added or not)."""
        return any(walk.through(pairs) is not None for walk in self.walks)


def _known_walks(platform: str, known: frozenset[str], expiry_tolerance: int) -> list[Walk]:
    """The walks by which the rules ``known`` may explain a history (see :class:`Explainer`): all set aside, and
    each rule of how a unit of work ends relaxed as such, the others set aside (none where none are known)."""
    if not known:
        return []
    return [Walk(platform, frozenset(), expiry_tolerance, known)] + [
        Walk(platform, frozenset({rule}), expiry_tolerance, known - {rule}) for rule in sorted(known & ENDINGS)]


def explained_by(pairs, platform: str, known: frozenset[str], expiry_tolerance: int = 0) -> bool:
    """Whether the rules ``known`` explain the history ``pairs`` (see :class:`Explainer`)."""
    return Explainer(platform, frozenset(known), expiry_tolerance).explains(pairs)


def explains_step(platform: str, known: frozenset[str], states, op: L.Op, observed: L.Observation,
                  expiry_tolerance: int = 0) -> bool:
    """Whether the rules ``known`` explain ``op`` answered ``observed`` from any of ``states``: where a
    keep-going run stood when it met a departure, having gone on past earlier ones as the rules it set aside
    let it (the departure is then no new one if these rules explain it from there)."""
    for walk in _known_walks(platform, known, expiry_tolerance):
        walk.candidates = [(state, None) for state in states]
        if walk.step(op, observed) is not None:
            return True
    return False


def known_past_aside(pairs, platform: str, known: frozenset[str], expiry_tolerance: int = 0,
                     set_aside: frozenset[str] = frozenset()) -> bool:
    """Whether the rules ``known`` explain the last step of ``pairs`` where a keep-going run that set
    ``set_aside`` aside stood when it met it: the run followed the steps before it, going on past each
    departure as the rules set aside let it (see :func:`explains_step`)."""
    tracker = K.ModelTracker(platform, expiry_tolerance=expiry_tolerance, set_aside=set_aside | known)
    for op, observed in pairs[:-1]:
        if tracker.advance(op, observed).mismatch is not None and not tracker.step_past(op, observed):
            return False
    return bool(pairs) and explains_step(platform, known, tracker.candidates, *pairs[-1], expiry_tolerance)


def blamed_alone(alone: list[tuple[int, int, str]]) -> tuple[str, ...]:
    """Of the rules that each explain a history alone, ``(the step it is needed from, order tried, rule)``,
    those blamed, first the one needed first: all but the rules of discards needed only later than a rule of
    what the history shows (see :func:`blame`)."""
    earliest = min(at for at, _, _ in alone)
    shown = any(at == earliest and r not in DISCARD_ONLY and r != UNCOUNTED_EXPIRED for at, _, r in alone)
    return tuple(r for at, _, r in sorted(alone) if at == earliest or not shown or r not in DISCARD_ONLY)


def blame(steps, mismatch: K.Mismatch, platform: str, expiry_tolerance: int = 0,
          set_aside: frozenset[str] = frozenset(), known_by: frozenset[str] | None = None) -> Blame:
    """The rules the failing history ``steps`` (ending at ``mismatch.index``) breaks, by counterfactual.
    ``known_by``: the rules found broken already (none by default: a recorded failure diagnosed again is
    never known); a history that passes with them alone relaxed is :attr:`Blame.known`.  (A run sets aside
    every rule a departure named, found broken or only mentioned; only those found broken make a departure
    known.)"""
    pairs = [(s.op, s.observed) if hasattr(s, "op") else tuple(s) for s in steps][:mismatch.index + 1]
    mentioned = list(dict.fromkeys([*mismatch.rules, *(r for a in mismatch.alternatives for r in a.rules)]))
    known_by = frozenset(known_by or ())
    if explained_by(pairs, platform, known_by, expiry_tolerance) or set_aside - known_by and known_past_aside(
            pairs, platform, known_by, expiry_tolerance, set_aside):
        return Blame(rules=(), mentioned=tuple(mentioned), known=True)
    # besides the rules the checker mentioned, how each unit of work in the history ended: a system that
    # ended one the other way explains any later step that shows it
    endings = [rule for op, _ in pairs[:-1] for rule, (kind, other) in OTHER_END.items()
               if isinstance(op, kind) and other(op) is not None and rule in ENDINGS_ONLY]
    # (a commit, or a normal MQDISC's, of a unit of work that got messages: one that left them on their queues
    # shows that only later, by a depth or a get that meets them again)
    endings += [GETS_DELETED] if any(isinstance(op, L.Commit) or isinstance(op, L.Disconnect) and not op.abnormal
                                     for op, _ in pairs[:-1]) and _got_under_syncpoint(pairs[:-1]) else []
    # (a connection cut between calls ends its unit of work too: committed instead, it shows only later)
    endings += [CUT_RULE] if any(isinstance(op, L.CutConnection) and not op.in_flight for op, _ in pairs[:-1]) else []
    # A rule the run set aside only because an earlier departure mentioned it (not found broken) may well be
    # what this one breaks: it is tried like any other, and no rule on trial stays set aside while another is
    # tried (else each of two could seem to explain the history with the other's help); a rule found broken
    # is never on trial: a history it alone explained would have been known.
    # and, where a get came while another connection had a put under syncpoint, the rule that hides it: a get
    # that saw it may show that only by what it did to it (an expired message discarded, its report written)
    hidden = [VISIBILITY_RULE] if _get_beside_uncommitted(pairs[:-1]) else []
    # and, where a get or browse came after puts of more than one priority, priority order: a queue taken in
    # arrival order may show that only by what the call met on its way (an expired message left undiscarded, a
    # browse cursor standing elsewhere), never by the message it returned
    unseen = ["CORE-04"] if _taken_after_priorities(pairs) else []
    # and, where a get, browse or handler's run came after messages may have arrived, first in first out: a
    # queue taken newest first may show that too only by what the call met on its way, or by what it left
    unseen += sorted(FIFO_RULES) if _taken_after_two(pairs) else []
    # and, where the queue manager restarted, what a restart keeps: a message it lost may show only much later
    restarted = [RESTART_RULE] if any(isinstance(op, L.Restart) for op, _ in pairs[:-1]) else []
    # and, where a DLQ handler ran, that a backout reinstates what it got: a handler whose action's put failed
    # backs out its get, and a message that backout lost shows as one the handler discarded
    unseen += [GETS_REINSTATED] if any(isinstance(op, L.RunDlqHandler) for op, _ in pairs) else []
    # and, where a browse-next came, what it returns: one that skipped a message may show that only later (the
    # message never met, a browse finding nothing where it was); a DLQ handler and its host browse its queue
    unseen += [BROWSE_NEXT_RULE] if any(_browses_next(op) or isinstance(op, L.RunDlqHandler)
                                        for op, _ in pairs) else []
    # and, where expired messages were refreshed away (z/OS), that the refresh discards them: one it left shows
    # only later (a depth that counts it, a get that meets it)
    unseen += [REFRESH_RULE] if any(isinstance(op, L.RefreshExpiry) for op, _ in pairs[:-1]) else []
    # and, where a trigger message came back or a queue had a TriggerMsgPriority, that only messages at or above
    # it count: an event that wrote one it should not have shows only by the message, got or browsed later, or
    # by an initiation queue's depth
    unseen += [TRIGGER_PRIORITY] if any(observed.message is not None and observed.message.format == C.MQFMT_TRIGGER
                                        for _, observed in pairs) or _trigmpri_set(pairs) else []
    # (and, on a FIFO queue, that its DefPriority is what is compared: a message whose own priority would have
    # counted)
    unseen += [FIFO_TRIGGER_PRIORITY] if _trigmpri_set(pairs) and _fifo_set(pairs) else []
    # and, where a put asked for the queue's default priority or persistence, that it got it: a message given
    # the system's own default shows that later only by where it comes in order, or by what a restart or a
    # get under SYNCPOINT_IF_PERSISTENT does with it
    unseen += [rule for rule, (field, asked, _, _) in RESOLVED_BY.items()
               if any(isinstance(op, (L.Put, L.Put1)) and getattr(op.md, field) == asked for op, _ in pairs[:-1])]
    deciding, needed_together = _deciding(pairs, platform, expiry_tolerance, set_aside)
    # (a selection the failing step's outcome shows applied as MQ does not apply it, a none value taken literally
    # say, is tried first: the message returned is exactly the one that reading gives, where an order relaxed
    # only allows it among others)
    selecting = [r for r in deciding if r in SELECTION_RULES]
    tried = [r for r in dict.fromkeys([*selecting, *mentioned[:MAX_RULES], *deciding, *endings, *hidden, *unseen,
                                       *restarted]) if r not in known_by]
    # A rule set aside only because an earlier departure mentioned it, which neither this step's check nor its
    # deciding rules name, may explain the history by what it let an earlier step do (an expired message left
    # out of a depth that MQ's background removal explains as well): where the rules set aside explain it with
    # no rule on trial, every reading would need nothing, so those not found broken that it cannot do without
    # go on trial too (all of them, where it can do without each).
    suspects = sorted(set_aside - known_by - set(tried))
    if suspects and follows(pairs, platform, frozenset(), expiry_tolerance, set_aside | known_by) is not None:
        needed = [r for r in suspects
                  if follows(pairs, platform, frozenset(), expiry_tolerance, (set_aside | known_by) - {r}) is None]
        tried += needed or suspects
    # (the rules found broken, never on trial, relaxed in every reading as the rules set aside are: a round records
    # as found broken those found later in it too, which it had not set aside yet)
    aside = (set_aside | known_by) - set(tried)
    alone: list[tuple[int, int, str]] = []
    # the rules that explain the history alone only by letting the last step's get return a message where MQ's
    # finds none
    appearing: set[str] = set()
    for n, rule in enumerate(tried):
        walk = Walk(platform, frozenset({rule}), expiry_tolerance, aside)
        at = walk.through(pairs)
        if at is not None and at >= 0:
            alone.append((at, n, rule))
            appearing |= {rule} if walk.appeared else set()
    # Rules tried only for a story the history tells by inference alone: a unit of work that ended the other
    # way where the system answered as for MQ's way, a get that did something unseen to a put not yet
    # committed, a queue taken in another order where every message returned was MQ's. They give way to any
    # other rule that explains the history alone: the system's own answer (a commit answered OK, a get
    # returning the message MQ returns) is evidence, and nothing shows otherwise.  (Found broken by a history
    # that shows them, they explain such a history as known.)
    guessed = {r for r in (*hidden, *endings, *unseen) if r not in mentioned and r not in deciding}
    # A DLQ handler's run answers with each message's fate alone: where a backout put its message (lost, or
    # back at the tail to be met again in the same pass) is a story by inference there, even when the
    # checker named the rule (a handler's failed action backs out its get)
    guessed |= {GETS_REINSTATED} - set(deciding) if isinstance(pairs[-1][0], L.RunDlqHandler) else set()
    # A commit's other ending is a story by inference too wherever the departure is not at a commit, even
    # when the checker named it: each commit answered as MQ's commit answers, and a later step that
    # another rule explains alone (a put past MAXDEPTH) does not show that a commit backed out.
    guessed |= {r for r in COMMIT_ENDING if r in mentioned and r not in deciding
                and not isinstance(pairs[-1][0], OTHER_END[r][0])}
    # So is a cut's other ending (a commit) where the history shows the cut backing out, a message its unit
    # of work got returned again: how that message came back (out of place, its count) is another rule's.
    guessed |= {CUT_RULE} - set(deciding) if _cut_shown_backed_out(pairs) else set()
    if alone:
        # A discard MQ would have made (and its report) is never seen, only inferred from what the history
        # shows later: where a rule of what the history does show explains it alone from an earlier step, a
        # rule of discards that explains it only later tells a story of the same history built on that
        # inference (an expired message discarded without its report, where an uncommitted put not counted
        # explains the depth that suggested the discard), and is mentioned, not blamed.
        if any(r not in guessed for _, _, r in alone):
            alone_kept = [a for a in alone if a[2] not in guessed]
        else:
            alone_kept = alone
        # A rule whose reading only lets a get that finds nothing return a message (one where none is available:
        # CORE-13) gives way to one whose reading has that message there and returns it as the system did (a
        # trigger message written by an event MQ does not fire): that reading says where it came from, the other
        # only that it came.
        alone_kept = [a for a in alone_kept if a[2] not in appearing] or alone_kept
        if _shown_there_plainly(pairs) and any(r == "CORE-53" for _, _, r in alone_kept):
            # the cursor's message shown by the same browse without the selection just before: the cursor is
            # not what left it out
            alone_kept = [a for a in alone_kept if a[2] != "CORE-20"]
        rules = blamed_alone(alone_kept)
        mentioned += [r for _, _, r in sorted(alone) if r not in rules and r not in mentioned]
        inferred = tuple(r for _, _, r in sorted(alone) if r in guessed and r not in rules)
    else:
        together: list[tuple[int, int, tuple[str, ...]]] = []
        candidates = [tuple(sorted(ways, key=tried.index)) for ways in needed_together if ways <= set(tried)]
        candidates += [pair for pair in itertools.combinations(tried[:MAX_PAIR_RULES], 2) if pair not in candidates]
        for n, pair in enumerate(candidates):
            at = follows(pairs, platform, frozenset(pair), expiry_tolerance, aside)
            if at is not None and at >= 0:
                together.append((at, n, pair))
        if not together:
            first = tried[0] if tried else (mismatch.rules[0] if mismatch.rules else "")
            return Blame(rules=(first,) if first else (), mentioned=tuple(r for r in mentioned if r != first),
                         confirmed=False)
        # (as alone: a set holding a rule that tells a story by inference gives way to one of rules the history shows)
        kept = [t for t in together if not set(t[2]) & guessed] or together
        rules, either = _together_blamed(kept)
        inferred = tuple(dict.fromkeys(r for _, _, pair in sorted(together) for r in pair
                                       if r in guessed and r not in rules))
        return Blame(rules=rules, mentioned=tuple(r for r in mentioned if r not in rules), inferred=inferred,
                     either=either)
    return Blame(rules=rules, mentioned=tuple(r for r in mentioned if r not in rules), inferred=inferred,
                 each=bool(alone) and len(rules) > 1)


def _together_blamed(kept: list[tuple[int, int, tuple[str, ...]]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Of the sets of rules that together explain a history (``(the step needed from, order tried, rules)``, none
    alone), what is blamed: the first needed; or, where every set needed from that step shares all of its rules
    but one, the shared rules and the others as one of them (:attr:`Blame.either`): each such set explains the
    history, so the shared rules are broken in every reading and one of the others beside them, not shown
    which.  Sets sharing less than that (two readings with nothing, or only part, in common) leave the first."""
    first = min(kept)
    sets = [ways for at, _, ways in sorted(kept) if at == first[0]]
    shared = set(sets[0]).intersection(*sets[1:])
    if len(sets) < 2 or not shared or any(len(set(ways) - shared) != 1 for ways in sets):
        return first[2], ()
    either = tuple(dict.fromkeys(r for ways in sets for r in ways if r not in shared))
    return first[2] + tuple(r for r in either if r not in first[2]), either
