"""Semantics of the ``syncpoint`` area: MQGMO_MARK_SKIP_BACKOUT (“Skipping backout”, z/OS only).

The core handlers call into this module when a get carries the mark and when a
unit of work that holds a marked (or skipped) get ends.  Rule IDs are those of
:mod:`reference_model.rules.syncpoint`.
"""

from __future__ import annotations

import attrs

from reference_model import core
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.model import Branch
from reference_model.state import ModelHandle, ModelState

#: The connection environment in which the option fails (note 2).
RRS_STORED_PROCEDURE = "rrs-db2-stored-procedure"
ENVIRONMENTS = ("normal", RRS_STORED_PROCEDURE)


def _tag(branches: list[Branch], *rules: str) -> list[Branch]:
    return [attrs.evolve(b, rules=tuple(dict.fromkeys(b.rules + rules))) for b in branches]


def _refused(state: ModelState, rc: int, *rules: str) -> Branch:
    return Branch(observation=L.Observation.of(rc), state=state, rules=rules)


def marked_get(state: ModelState, op: L.Get, h: ModelHandle) -> list[Branch]:
    """A get with MQGMO_MARK_SKIP_BACKOUT that passed the core checks."""
    o = op.options
    unmarked = attrs.evolve(op, options=o & ~C.MQGMO_MARK_SKIP_BACKOUT)
    if state.platform != C.PLATFORM_ZOS:
        # SYNC-01: MQ documents nothing for the option here; refused or ignored.
        return [_refused(state, C.MQRC_OPTIONS_ERROR, "SYNC-01")] + _tag(core.plain_get(state, unmarked, h), "SYNC-01")
    c = state.conns[op.conn]
    rrs = c.environment == RRS_STORED_PROCEDURE
    if o & C.MQGMO_BROWSE_ANY or not o & C.MQGMO_SYNCPOINT:
        # SYNC-10: effective only with MQGMO_SYNCPOINT; what happens otherwise is undocumented.
        ignored = [b if b.state is not state else attrs.evolve(b, state=state.clone())
                   for b in _tag(core.plain_get(state, unmarked, h), "SYNC-10")]
        for b in ignored:
            _blame_removal(b, h.queue, "SYNC-10")
            b.state.conn(op.conn).loose_mark = h.queue
        # Under RRS (SYNC-08) too: which of the two MQ checks first is not documented.
        return ([_refused(state, C.MQRC_OPTION_ENVIRONMENT_ERROR, "SYNC-08")] if rrs else []) \
            + [_refused(state, C.MQRC_OPTIONS_ERROR, "SYNC-10")] + ignored
    if rrs:
        return [_refused(state, C.MQRC_OPTION_ENVIRONMENT_ERROR, "SYNC-08")]
    if c.marked is not None:
        # SYNC-06; which check MQ makes first is not documented, so the get's own failures are allowed too.
        others = [b for b in core.plain_get(state, unmarked, h) if b.observation.rc != C.MQRC_NONE]
        return [_refused(state, C.MQRC_SECOND_MARK_NOT_ALLOWED, "SYNC-06")] + _tag(others, "SYNC-06")
    marked = _tag(core.plain_get(state, op, h, mark=True), "SYNC-01", "SYNC-10")
    if c.loose_mark:
        # refused as a second mark: the system kept the mark of a get made outside syncpoint (SYNC-10)
        marked = [attrs.evolve(b, field_rules={**b.field_rules, f"rc=={C.MQRC_SECOND_MARK_NOT_ALLOWED}":
                                               ("SYNC-10", "SYNC-06")}) for b in marked]
    if c.skipped is not None:
        # The new unit of work holds a skipped get: a further mark may or may not be allowed.
        return [_refused(state, C.MQRC_SECOND_MARK_NOT_ALLOWED, "SYNC-06")] + _tag(marked, "SYNC-06")
    return marked


def _blame_removal(b: Branch, queue: str, rule: str) -> None:
    """Name ``rule`` first among the reasons the message a branch removed is gone (b.state is its own)."""
    m = b.observation.message
    if m is not None and m.body in b.state.removed:
        b.state.removed = {**b.state.removed, m.body: (rule,) + b.state.removed[m.body]}
        b.state.left_by = {**b.state.left_by, m.body: (rule,) + b.state.left_by.get(m.body, ())}
        b.state.queue(queue).departed((rule,))


def end_unit_of_work(state: ModelState, conn: str, commit: bool) -> list[Branch]:
    """MQCMIT / MQBACK of a unit of work that holds a marked or skipped get."""
    c = state.conns[conn]
    if commit:
        s = state.clone()
        rules = ["CORE-29"]
        if c.marked is not None:
            rules.append("SYNC-12")
        if c.skipped is not None:
            rules += ["SYNC-04", "SYNC-16"]
            if any(e.kind == "put" for e in c.uow):
                rules.append("SYNC-15")
        ending = "SYNC-16" if c.skipped is not None else "SYNC-12" if c.marked is not None else "CORE-29"
        rules += core._end_uow(s, conn, True, ending)
        return [Branch(observation=L.OK, state=s, rules=tuple(dict.fromkeys(rules)))]
    if c.marked is None:
        # Backing out the new unit of work: the skipped message is reinstated like any other.
        s = state.clone()
        seq, queue = c.skipped, _queue_of(c, c.skipped)
        rules = ["CORE-15", "SYNC-05", "SYNC-17", "SYNC-18"] + core._end_uow(s, conn, False, "CORE-15")
        m = s.find(queue, seq) if queue else None
        if m is not None:
            s.queue(queue).update(m, provenance=("SYNC-17", "SYNC-05"))
        return [Branch(observation=L.OK, state=s, rules=tuple(dict.fromkeys(rules)))]
    out = [_skip(state, conn, bump) for bump in (0, 1)]
    seq = c.marked
    m = next((state.find(e.queue, seq) for e in c.uow if e.kind == "get" and e.seq == seq), None)
    if m is not None and m.put_by == conn:
        # the marked message was put in this same unit of work (a connection getting its own uncommitted put):
        # its put is backed out, and whether the marked get still leaves the new unit of work holding a skipped
        # get, its message gone, is not documented: both
        held = out[0].state.clone()
        held.conn(conn).skipped = seq
        out.append(Branch(observation=L.OK, state=held, rules=out[0].rules))
    return out


def _queue_of(c, seq: int) -> str | None:
    for e in c.uow:
        if e.kind == "get" and e.seq == seq:
            return e.queue
    return None


def _skip(state: ModelState, conn: str, bump: int) -> Branch:
    """The application backs out a unit of work with a marked get (steps 5-7)."""
    s = state.clone()
    c = s.conn(conn)
    seq = c.marked
    keep = [e for e in c.uow if e.kind == "get" and e.seq == seq]
    c.uow = [e for e in c.uow if e not in keep]
    rules = ["CORE-15", "SYNC-02", "SYNC-03", "SYNC-13", "SYNC-14", "SYNC-18"]
    rules += core._end_uow(s, conn, False, "SYNC-13")
    m = s.find(keep[0].queue, seq) if keep else None
    if m is not None and m.got_by == conn:
        c.uow = keep
        c.skipped = seq
        # SYNC-18 note: whether the count goes up is undocumented, both allowed
        s.queue(keep[0].queue).update(m, backout_count=m.backout_count + bump, provenance=("SYNC-14", "SYNC-03"))
    return Branch(observation=L.OK, state=s, rules=tuple(dict.fromkeys(rules)))
