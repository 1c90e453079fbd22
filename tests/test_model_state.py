"""The model's state: what copies share, and what they must not."""

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
    assert t.queues is s.queues            # nothing else was copied ...
    u = t.with_handler("H", t.dlq_handlers["H"].__class__(table_file="changed"))
    assert u.dlq_handlers["H"].table_file == "changed" and t.dlq_handlers["H"].table_file != "changed"
    # ... and a step from the new state changes a copy, never the state it shares queues with
    (ran,) = model.step(t, L.RunDlqHandler(handler="H"))
    assert [m.body for m in ran.state.queues["Q"].messages] == []
    assert [m.body for m in s.queues["Q"].messages] == ["m1"]
