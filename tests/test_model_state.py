"""The model's state: what copies share, and what they must not."""

import attrs

from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from reference_model import state as S


def _ready() -> S.ModelState:
    s = model.initial_state()
    for op in (L.DefineQueue(queue="Q"), L.Connect(conn="c"),
               L.Open(conn="c", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)):
        (branch,) = model.step(s, op)
        s = branch.state
    return s


def _put(s: S.ModelState, body: str, priority: int = 0) -> S.ModelState:
    (branch,) = model.step(s, L.Put(conn="c", handle="h", body=body, md=L.MessageDescriptor(priority=priority)))
    return branch.state


def test_alike_messages_put_in_different_states_are_one_object():
    s = _ready()
    a, b = _put(s.clone(), "m1"), _put(s.clone(), "m1")
    assert a is not b and a.queues["Q"] is not b.queues["Q"]
    (ma,), (mb,) = a.queues["Q"].messages, b.queues["Q"].messages
    assert ma is mb                        # so comparing the two states finds it identical at once
    assert a == b
    (mc,) = _put(s.clone(), "m1", priority=5).queues["Q"].messages
    assert mc is not ma and mc != ma       # another value is another object


def test_a_changed_message_is_shared_by_value_too():
    s = _put(_ready(), "m1")
    got = [model.step(s, L.Get(conn="c", handle="h", options=C.MQGMO_SYNCPOINT))[0].state for _ in range(2)]
    (m1,), (m2,) = got[0].queues["Q"].messages, got[1].queues["Q"].messages
    assert m1.got_by == "c" and m1 is m2
    (before,) = s.queues["Q"].messages
    assert before.got_by is None           # the state the gets started from is unchanged


def test_the_table_of_shared_messages_is_bounded(monkeypatch):
    monkeypatch.setattr(S, "_SHARED", {})
    monkeypatch.setattr(S, "SHARED_LIMIT", 3)
    s = _ready()
    for i in range(7):
        s = _put(s, f"m{i}")
        assert len(S._SHARED) <= 3
    assert [m.body for m in s.queues["Q"].messages] == [f"m{i}" for i in range(7)]


def test_with_handler_replaces_only_the_handler_and_leaves_the_state_as_it_was():
    dead = L.Put(conn="c", handle="h", body="m1", md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER),
                 dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="Q2"))
    (put,) = model.step(_ready(), dead)
    s = put.state
    (started,) = model.step(s, L.StartDlqHandler(handler="H", table="INPUTQ(Q)\nACTION(DISCARD)"))
    t = started.state
    assert t.dlq_handlers["H"].running and "H" not in s.dlq_handlers
    assert t.queues["Q"] is s.queues["Q"]  # nothing else was copied ...
    u = t.with_handler("H", t.dlq_handlers["H"].__class__(table_file="changed"))
    assert u.dlq_handlers["H"].table_file == "changed" and t.dlq_handlers["H"].table_file != "changed"
    # ... and a step from the new state changes a copy, never the state it shares queues with
    (ran,) = model.step(t, L.RunDlqHandler(handler="H"))
    assert [m.body for m in ran.state.queues["Q"].messages] == []
    assert [m.body for m in s.queues["Q"].messages] == ["m1"]


def test_a_clone_shares_what_is_replaced_on_change_and_changing_it_leaves_the_original():
    s = _put(_put(_ready(), "m1"), "m2")
    t = s.clone()
    assert t.removed is s.removed and t.qmgr is s.qmgr and t.processes is s.processes
    (got,) = model.step(t, L.Get(conn="c", handle="h", options=C.MQGMO_NO_SYNCPOINT))
    (altered,) = model.step(t, L.AlterQueueManager(attrs={"TRIGINT": 5}))
    (defined,) = model.step(t, L.DefineProcess(process="P", appl_id="app"))
    assert "m1" in got.state.removed and altered.state.qmgr["TRIGINT"] == 5 and "P" in defined.state.processes
    for before in (s, t):   # the state each step started from, and the one it was cloned from, as they were
        assert "m1" not in before.removed and before.qmgr["TRIGINT"] != 5 and "P" not in before.processes


#: Fields of a state's parts left out of equality, each worked out from fields that take part in it.
DERIVED = {
    ("ModelQueue", "ordered"),            # the messages in delivery order
    ("RulesTable", "syntax_rules"),       # read from the table's text, which a handler's state holds
    ("RulesTable", "continuations"),
    ("TableError", "kind"),               # its message says it
    ("ModelState", "_own"),               # bookkeeping: which connections the state has its own copy of
    ("ModelState", "_ownq"),              # ... and which queues
    ("ModelState", "left_by"),            # of each removal's rules (in ``removed``), the removal's own
}


def _parts(value, seen):
    """Every attrs instance reachable from ``value`` (through attrs fields, dicts, lists, tuples, sets)."""
    if id(value) in seen or isinstance(value, (str, int, float, bool, type(None))):
        return
    seen[id(value)] = value
    if attrs.has(type(value)):
        for field in attrs.fields(type(value)):
            _parts(getattr(value, field.name), seen)
    elif isinstance(value, dict):
        for k, v in value.items():
            _parts(k, seen)
            _parts(v, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            _parts(v, seen)


def test_every_field_of_a_state_that_decides_what_happens_next_takes_part_in_equality(monkeypatch):
    """States that compare equal are taken for one another (candidates deduplicated, memo places
    merged), so no part of a state may leave out of equality a field that decides what happens next:
    every attrs class met in the states of a run in every area compares all its fields but those
    derived from others."""
    from adapters.registry import create_adapter
    from conformance.checker import sequential as checker
    from conformance.runner.engine import run_areas

    states, real = [], checker.ModelTracker._advance

    def advance(self, op, observed):
        check = real(self, op, observed)
        if len(states) < 20_000:
            states.extend(self.candidates)
        return check

    monkeypatch.setattr(checker.ModelTracker, "_advance", advance)
    run_areas(create_adapter("simulated", {}), ["core", "syncpoint", "expiry", "trigger", "cluster", "dlq"],
              examples=10, seed=3)
    seen: dict = {}
    for s in states[::20]:
        _parts(s, seen)
    classes = {type(v) for v in seen.values() if attrs.has(type(v))}
    names = {c.__name__ for c in classes}
    assert {"ModelState", "ModelQueue", "ModelMessage", "HandlerState", "RulesTable", "WorkloadHistory"} <= names
    left_out = {(c.__name__, f.name) for c in classes for f in attrs.fields(c) if not f.eq}
    assert left_out <= DERIVED, left_out - DERIVED


def test_states_whose_round_robin_differs_are_not_equal():
    from reference_model.cluster import WorkloadHistory

    a, b = model.initial_state(), model.initial_state()
    a.workload["Q"] = WorkloadHistory(numbers={"QM1": 1, "QM2": 0}, last_number=1)
    b.workload["Q"] = WorkloadHistory(numbers={"QM1": 0, "QM2": 1}, last_number=1)
    assert a != b
    assert hash(a.workload["Q"]) == hash(b.workload["Q"])   # still hashable: the dicts are left out of it


def test_states_differing_in_any_one_field_are_not_equal():
    """ModelState compares its fields in an order of its own: every field, each one deciding."""
    base = _put(_ready(), "m1")
    assert base == base.clone() and not (base != base.clone())
    for field in (f for f in attrs.fields(S.ModelState) if f.eq):
        other = base.clone()
        setattr(other, field.name, object())
        assert base != other and not (base == other), field.name
    assert base.__eq__("a state") is NotImplemented


def test_a_clone_shares_connections_until_it_changes_one():
    s = _ready()
    t = s.clone()
    assert t.conns["c"] is s.conns["c"]
    t.conn("c").uow.append(S.UowEntry(kind="put", queue="Q", seq=1))
    assert t.conns["c"] is not s.conns["c"] and s.conns["c"].uow == [] and len(t.conns["c"].uow) == 1
    assert t.conn("c") is t.conns["c"]            # its own now: changed in place from here on
    assert t.with_handler("H", None).conn("c") is not t.conns["c"]
    # a put under syncpoint leaves the state it started from as it was
    (branch,) = model.step(s, L.Put(conn="c", handle="h", body="m", md=L.MessageDescriptor(),
                                    options=C.MQPMO_SYNCPOINT))
    assert s.conns["c"].uow == [] and [e.kind for e in branch.state.conns["c"].uow] == ["put"]


def test_a_connection_s_own_copy_keeps_every_field():
    """The copy a state makes of a connection it is to change carries every field, each set otherwise than its
    default (a field left out went back to its default unseen, and with it what the unit of work had done)."""
    s = _ready()
    c = s.conns["c"]
    values = {"environment": "cics", "uow": [S.UowEntry(kind="get", queue="Q", seq=3)], "marked": 3, "skipped": 2,
              "loose_mark": "Q", "loose_skipped": True, "pending_triggers": [("INIT.Q", None, 1)], "qmgr": "QM2", "discarded": ("Q",)}
    assert set(values) == {f.name for f in attrs.fields(S.ModelConnection)} - {"name"}, "a field to set here"
    for name, value in values.items():
        setattr(c, name, value)
    copy_ = s.clone().conn("c")
    assert copy_ is not c and copy_ == c
    assert copy_.uow is not c.uow and copy_.pending_triggers is not c.pending_triggers


def test_a_clone_has_every_field_and_equals_its_original():
    base = _put(_ready(), "m1")
    copy_ = base.clone()
    for field in attrs.fields(S.ModelState):
        assert getattr(copy_, field.name) == getattr(base, field.name), field.name
    assert copy_ == base


def test_a_clone_shares_queues_until_it_changes_one_and_so_does_its_original():
    s = _put(_ready(), "m1")
    t = s.clone()
    assert t.queues["Q"] is s.queues["Q"]
    (put,) = model.step(t, L.Put(conn="c", handle="h", body="m2", md=L.MessageDescriptor()))
    assert [m.body for m in s.queues["Q"].messages] == ["m1"] == [m.body for m in t.queues["Q"].messages]
    assert [m.body for m in put.state.queues["Q"].messages] == ["m1", "m2"]
    # a state that owned a queue shares it once cloned: a change to either leaves the other as it was
    u = put.state
    own = u.queue("Q")
    v = u.clone()
    assert v.queues["Q"] is own
    u.queue("Q").attrs["MAXDEPTH"] = 7
    assert v.queues["Q"].attrs["MAXDEPTH"] != 7 and u.queues["Q"] is not own
