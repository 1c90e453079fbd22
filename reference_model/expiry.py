"""Semantics of the ``expiry`` area (“Expiry (MQLONG)”): remaining time, discard on get, reports, scans.

Time is the model's virtual clock in tenths of a second.  A message's remaining
time is its Expiry less the time since it was put (a backout does not restart
it).  ``state.expiry_tolerance`` is how approximate the system under test may be
(paragraph 2): within it of zero a message may count as expired or not, and a
returned Expiry may differ from the exact value by that much.
"""

from __future__ import annotations

import fnmatch
from itertools import product
from typing import Iterator

from reference_model import language as L
from reference_model import mqconst as C
from reference_model.model import Branch, HistoryError, handles, require_member
from reference_model.state import ModelMessage, ModelQueue, ModelState

LIVE, EXPIRED, MAYBE = "live", "expired", "maybe"


def remaining(state: ModelState, m: ModelMessage) -> int | None:
    """Exact remaining tenths, or None for MQEI_UNLIMITED."""
    if m.md.expiry == C.MQEI_UNLIMITED:
        return None
    return m.md.expiry - (state.clock - m.put_time)


def status(state: ModelState, m: ModelMessage) -> str:
    left = remaining(state, m)
    if left is None or left > state.expiry_tolerance:
        return LIVE
    if left <= -state.expiry_tolerance:
        return EXPIRED
    return MAYBE


def _approx(state: ModelState, exact: int, original: int) -> int | L.IntRange:
    """The Expiry a get may return.  Exact, and never below 1 (EXP-06), on a system that keeps time
    exactly; on one measured within ``t`` tenths (paragraph 2), anything within ``t`` of the exact
    value, below 1 included: a message got within ``t`` of its expiry may still be live by the
    system's own clock, and what it remained is then measured by another clock, which EXP-06's
    "greater than zero" cannot be held to.  An expired message beyond ``t`` is never returned at all."""
    t = state.expiry_tolerance
    if t == 0:
        return max(exact, 1)
    return L.IntRange(lo=exact - t, hi=max(1, min(original, exact + t)))


def returned_expiry(state: ModelState, m: ModelMessage) -> int | L.IntRange:
    """EXP-03: the remaining time a get returns (never <= 0: EXP-06)."""
    left = remaining(state, m)
    return C.MQEI_UNLIMITED if left is None else _approx(state, left, m.md.expiry)


def expired_shown(state: ModelState, discarded) -> dict:
    """For each expired message a get discarded, the Expiry it could show had it come back with its time on
    the queue counted (``message.expiry:expired:BODY``): at most what is left of it (1 at least, as MQ never
    returns less to a live message), within the system's tolerance.  A system that returns it with more broke
    the decrement as well as EXP-06 (read only to explain a departure)."""
    out = {}
    for m in discarded:
        left = remaining(state, m)
        if left is not None:
            out[f"message.expiry:expired:{m.body}"] = L.IntRange(lo=-(2 ** 31), hi=max(1, left + state.expiry_tolerance))
    return out


def returned_xmit_header(state: ModelState, m: ModelMessage) -> L.XmitHeader | None:
    """EXP-20/22: the embedded Expiry is decremented too, and returned as zero once elapsed."""
    if m.xmit_expiry is None:
        return None
    if m.xmit_expiry == C.MQEI_UNLIMITED:
        return L.XmitHeader(expiry=C.MQEI_UNLIMITED)
    exact = m.xmit_expiry - (state.clock - m.put_time)
    t = state.expiry_tolerance
    if exact > t:
        return L.XmitHeader(expiry=_approx(state, exact, m.xmit_expiry))
    if exact <= -t:
        return L.XmitHeader(expiry=0)
    return L.XmitHeader(expiry=L.IntRange(lo=0, hi=max(0, exact + t)))


def put_outcomes(md: L.MessageDescriptor, xmit: L.XmitHeader | None) -> list[tuple[int, str]]:
    """Expiry errors of a put: each (reason, rule); (0, rule) marks an allowed acceptance."""
    if md.expiry == 0 or md.expiry < C.MQEI_UNLIMITED:
        return [(C.MQRC_EXPIRY_ERROR, "EXP-10")]
    if xmit is not None and md.format == C.MQFMT_XMIT_Q_HEADER:
        inner = xmit.expiry
        if not isinstance(inner, int) or inner == 0 or inner < C.MQEI_UNLIMITED:
            return [(C.MQRC_EXPIRY_ERROR, "EXP-19")]
        if inner != md.expiry:
            # EXP-19: differing values are allowed, yet "inconsistent" ones are rejected: both allowed.
            return [(C.MQRC_NONE, "EXP-19"), (C.MQRC_EXPIRY_ERROR, "EXP-19")]
        return [(C.MQRC_NONE, "EXP-19")]
    return []


def background_removal(state: ModelState, q: ModelQueue | None = None) -> bool:
    """EXP-26/23: may expired messages leave a queue (``q``, or the queue manager's own) without a get
    touching them?  On z/OS only scans remove them: a queue manager's EXPRYINT scans its own queues,
    and in a queue-sharing group the shared queues are scanned by one member, 'generally' the first to
    set EXPRYINT (EXP-25): which one is not certain, so any member's interval may scan them."""
    if state.platform != C.PLATFORM_ZOS:
        return True
    if q is None or not state.group:
        return state.qmgr.get("EXPRYINT", 0) > 0
    intervals = {"": state.qmgr.get("EXPRYINT", 0), **{m: a.get("EXPRYINT", 0) for m, a in state.peers.items()}}
    if q.shared:
        return any(v > 0 for v in intervals.values())
    return intervals.get(q.owner, 0) > 0


def lingering(state: ModelState, q: ModelQueue) -> list[ModelMessage]:
    """Expired messages still on the queue and counted in its depth (EXP-11)."""
    if not q.expiring:
        return []
    return [m for m in q.messages if m.got_by is None and status(state, m) == EXPIRED]


def reports(state: ModelState, m: ModelMessage) -> bool:
    """Does discarding ``m`` put an expiration report (EXP-08)?"""
    return bool(m.md.report & C.MQRO_EXPIRATION) and m.md.reply_to_q in state.queues


def removable(state: ModelState, m: ModelMessage) -> bool:
    """May ``m`` have been removed in the background by now (EXP-26)?  Within the tolerance of its
    expiry a message may already count as expired (paragraph 2), and so may already have gone."""
    return m.got_by is None and status(state, m) != LIVE


def depth_range(state: ModelState, q: ModelQueue, full: int) -> list[tuple[int, int]]:
    """Possible (CURDEPTH, background_removed) pairs given background removal.

    Only messages whose removal leaves no other trace are counted here, by number; one that asks
    for an expiration report is removed by name with its report (:func:`report_removals`)."""
    if not background_removal(state, q):
        return [(full, 0)]
    n = sum(1 for m in q.messages if removable(state, m) and not reports(state, m)) if q.expiring else 0
    low = min(q.background_removed, n)
    return [(full - k, k) for k in range(low, n + 1)]


def report_removals(state: ModelState, queue: str, source: bool = True) -> list[tuple[ModelState, tuple[str, ...]]]:
    """The states an observation of ``queue`` may find, as (state, rules): expired messages that ask
    for an expiration report may have been removed in the background already (EXP-26), and their
    reports put with them (EXP-08, EXP-12): a removal is a discard.  Those are the messages on
    ``queue`` (when ``source``) and those whose reports go to it.  A pass over a queue removes what
    has expired by then, so of one queue's messages those that expired first go first: the ways
    are, per queue, each number of them in order of expiry.  The first way is ``state`` itself."""
    if not background_removal(state) and not state.group:
        return [(state, ())]
    by_queue = []
    for name, q in state.queues.items():
        if not q.expiring or not background_removal(state, q):
            continue
        found = sorted((m for m in q.messages
                        if (m.md.reply_to_q == queue or (source and name == queue))
                        and reports(state, m) and removable(state, m)),
                       key=lambda m: (m.put_time + m.md.expiry, m.seq))
        if found:
            by_queue.append((name, found))
    if not by_queue:
        return [(state, ())]
    out: list[tuple[ModelState, tuple[str, ...]]] = []
    for counts in product(*(range(len(found) + 1) for _, found in by_queue)):
        if not any(counts):
            out.append((state, ()))
            continue
        s = state.clone()
        for (name, found), n in zip(by_queue, counts):
            for m in found[:n]:
                s.discard(name, s.find(name, m.seq), ("EXP-26",))
                _report(s, m)
        out.append((s, ("EXP-26", "EXP-08", "EXP-12")))
    return out


def walk(state: ModelState, candidates: list[ModelMessage]) -> Iterator[tuple[list[ModelMessage], ModelMessage | None]]:
    """Every way a get can walk ``candidates`` (in delivery order): the messages it discards and the one it returns.

    EXP-04/05: expired messages the get would have returned are discarded until
    the first unexpired one; a message within the tolerance may go either way.
    """
    return _walk(state, candidates, 0, [])


def _walk(state: ModelState, candidates: list[ModelMessage], i: int, discarded: list[ModelMessage]):
    # a function of the module rather than a nested one: a nested generator calling itself is a
    # reference cycle, left to the cyclic collector at every get
    if i == len(candidates):
        yield discarded, None
        return
    m = candidates[i]
    st = status(state, m)
    if st in (LIVE, MAYBE):
        yield discarded, m
    if st in (EXPIRED, MAYBE):
        yield from _walk(state, candidates, i + 1, discarded + [m])


def discard(s: ModelState, queue: str, m: ModelMessage, rules: tuple[str, ...],
            report_rules: tuple[str, ...] = (), in_unit_of_work: bool = True) -> None:
    """Discard an expired message outside any unit of work (EXP-13), with its report (EXP-08/12;
    ``report_rules``: what else requires the report, such as EXP-09 for a program's discard).
    ``in_unit_of_work``: whether the call that discards it may be in one (a get outside syncpoint is not, and a
    report missing after it, or the message back, is never that the discard was made part of one: EXP-13)."""
    if not in_unit_of_work:
        rules = tuple(r for r in rules if r != "EXP-13")
    if s.queues[queue].find(m.seq) is m:
        s.discard(queue, m, rules)
    q = s.queues[queue]
    if background_removal(s, q) and q.background_removed:
        s.queue(queue).background_removed -= 1  # it may have been one of those removed in the background
    _report(s, m, report_rules, in_unit_of_work)


def _report(s: ModelState, m: ModelMessage, extra: tuple[str, ...] = (), in_unit_of_work: bool = True) -> None:
    report = m.md.report
    if not report & C.MQRO_EXPIRATION or m.md.reply_to_q not in s.queues:
        return
    if report & C.MQRO_EXPIRATION_WITH_FULL_DATA == C.MQRO_EXPIRATION_WITH_FULL_DATA:
        body = m.body
    elif report & C.MQRO_EXPIRATION_WITH_DATA == C.MQRO_EXPIRATION_WITH_DATA:
        body = m.body[: C.REPORT_DATA_LENGTH]
    else:
        body = ""
    md = L.MessageDescriptor(
        priority=m.md.priority, persistence=m.md.persistence, expiry=C.MQEI_UNLIMITED,
        msg_type=C.MQMT_REPORT, feedback=C.MQFB_EXPIRATION, format=m.md.format if body else C.MQFMT_NONE,
        msg_id="", correl_id=m.md.msg_id,
    )
    target = s.queue(m.md.reply_to_q)
    order = target.attr("DEFPRTY") if target.attr("MSGDLVSQ") == C.MQMDS_FIFO else min(md.priority, C.MAX_PRIORITY)
    target.append(ModelMessage(seq=s.next_seq, body=body, md=md, order_priority=order, put_time=s.clock,
                               provenance=("EXP-08", "EXP-12") + (("EXP-13",) if in_unit_of_work else ()) + extra))
    s.next_seq += 1


def pending_report_rules(state: ModelState, queue: str) -> tuple[str, ...]:
    """Rules saying why reports not (yet) on ``queue`` must not be there: for diagnosing extra reports."""
    rules: list[str] = []
    for q in state.queues.values():
        for m in q.messages:
            if m.md.report & C.MQRO_EXPIRATION and m.md.reply_to_q == queue:
                rules += ["EXP-12", "EXP-08"]
                if status(state, m) != LIVE:
                    rules += ["EXP-05", "EXP-04"] if q.attr("MSGDLVSQ") == C.MQMDS_PRIORITY else ["EXP-04"]
    return tuple(dict.fromkeys(rules))


def report_fields(m: ModelMessage) -> dict:
    """Fields of an expected report whose exact value MQ leaves open (any value allowed)."""
    if m.md.msg_type != C.MQMT_REPORT or m.md.feedback != C.MQFB_EXPIRATION:
        return {}
    fields = {"priority": None, "persistence": None, "format": None}
    if not m.md.correl_id:
        fields["correl_id"] = None  # the original's generated MsgId
    return fields


# ---------------------------------------------------------------- administration


@handles(L.AlterQueueManager)
def alter_queue_manager(state: ModelState, op: L.AlterQueueManager) -> list[Branch]:
    attrs_ = dict(op.attrs)
    if "EXPRYINT" in attrs_ and state.platform != C.PLATFORM_ZOS:
        raise HistoryError("EXPRYINT is a z/OS queue-manager attribute")
    require_member(state, op.qmgr)
    s = state.clone()
    if op.qmgr:
        s.peers = {**s.peers, op.qmgr: {**s.peers.get(op.qmgr, {}), **attrs_}}
    else:
        s.qmgr = {**s.qmgr, **attrs_}
    rules = ("EXP-23",) if "EXPRYINT" in attrs_ else ()
    if rules and s.group:
        rules += ("EXP-25",)   # which member scans the shared queues
    return [Branch(observation=L.OK, state=s, rules=rules)]


@handles(L.RefreshExpiry)
def refresh_expiry(state: ModelState, op: L.RefreshExpiry) -> list[Branch]:
    if state.platform != C.PLATFORM_ZOS:
        raise HistoryError("REFRESH QMGR TYPE(EXPIRY) is documented for z/OS only")
    names = [n for n in state.queues if fnmatch.fnmatchcase(n, op.queues)]
    targets = [(n, m) for n in names for m in sorted(state.queues[n].messages, key=lambda m: m.seq)
               if m.got_by is None and status(state, m) != LIVE]
    branches = []
    for choice in discard_choices(state, [m for _, m in targets]):
        s = state.clone()
        for n, m in targets:
            if m.seq in choice:
                discard(s, n, s.find(n, m.seq), ("EXP-24",))
        branches.append(Branch(observation=L.OK, state=s, rules=("EXP-24", "EXP-08", "EXP-12")))
    return branches


def discard_choices(state: ModelState, msgs: list[ModelMessage]) -> list[set[int]]:
    """Which of ``msgs`` (by seq) a pass over them may discard: definitely expired messages always,
    those within the tolerance either way."""
    sure = {m.seq for m in msgs if status(state, m) == EXPIRED}
    out = [sure]
    for m in msgs:
        if status(state, m) == MAYBE:
            out = out + [c | {m.seq} for c in out]
    return out

