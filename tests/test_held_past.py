"""A step that departs only as a departure found before explains is stepped past; the rules of it that decide
nothing of what differed held there, and count as checked, in their input classes (a system that gives every
default-priority message its own priority still returns its messages in order: one departure does not leave
the order rules unchecked)."""

from adapters.registry import create_adapter
from conformance.checker.sequential import ModelTracker
from conformance.records.results import Coverage
from conformance.runner.session import Session
from reference_model import language as L
from reference_model import mqconst as C
from tests.test_blame import _on_simulated

D = C.PLATFORM_DISTRIBUTED
STD = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
AS_Q_DEF = L.MessageDescriptor(priority=C.MQPRI_PRIORITY_AS_Q_DEF)


def _ops():
    return [L.DefineQueue(queue="Q1", attrs=(("DEFPRTY", 2),)), L.Connect(conn="c1"),
            L.Open(conn="c1", handle="h1", queue="Q1", options=STD),
            L.Put(conn="c1", handle="h1", body="m1", md=AS_Q_DEF, options=C.MQPMO_NO_SYNCPOINT),
            L.Put(conn="c1", handle="h1", body="m2", md=AS_Q_DEF, options=C.MQPMO_NO_SYNCPOINT),
            L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT),
            L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT)]


def _run(faults: str, set_aside: frozenset[str]) -> Coverage:
    coverage = Coverage()
    adapter = create_adapter("simulated", {"faults": faults, "platform": D})
    try:
        session = Session(adapter, "core", {}, 1, coverage=coverage, platform=D, set_aside=set_aside)
        session.start_case()
        for op in _ops():
            session.execute(op)
        session.end_case()
    finally:
        adapter.close()
    return coverage


def test_a_step_past_counts_the_rules_that_decide_nothing_of_what_differed_as_checked():
    faultless = _run("", frozenset())
    coverage = _run("defprty-ignored", frozenset({"CORE-07"}))
    # each get returned the message MQ returns, with the system's priority 4 where DEFPRTY gives 2: the order
    # and the removal held, checked as in a run of a system without that departure
    for rule in ("CORE-05", "CORE-16", "CORE-12"):
        assert coverage.checked[rule] == faultless.checked[rule] > 0, (rule, coverage.checked, faultless.checked)
    assert coverage.classes["CORE-05:two of the highest priority"] == 1, coverage.classes
    # the rule that decides the field that differed is not among those that held
    history = _on_simulated(_ops(), "defprty-ignored")
    tracker = ModelTracker(D, set_aside=frozenset({"CORE-07"}))
    for op, observed in history[:5]:
        assert tracker.advance(op, observed).mismatch is None
    op, observed = history[5]
    assert tracker.advance(op, observed).mismatch is not None and tracker.step_past(op, observed)
    assert "CORE-05" in tracker.held[0] and "CORE-07" not in tracker.held[0], tracker.held



def test_a_step_past_that_another_message_came_back_in_counts_no_order_rule():
    """The order itself broken too (``priority-ignored`` with a message of a higher priority put after): the
    get that returned another message is no check of the order."""
    tracker = ModelTracker(D, set_aside=frozenset({"CORE-07"}))
    ops = _ops()[:4] + [L.Put(conn="c1", handle="h1", body="m2", md=L.MessageDescriptor(priority=7),
                              options=C.MQPMO_NO_SYNCPOINT), L.Get(conn="c1", handle="h1",
                                                                   options=C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops, "defprty-ignored,priority-ignored")
    for op, observed in history[:-1]:
        assert tracker.advance(op, observed).mismatch is None
    op, observed = history[-1]
    assert observed.message.body == "m1"   # MQ returns m2 (priority 7)
    check = tracker.advance(op, observed)
    assert check.mismatch is not None
    if tracker.step_past(op, observed):
        assert not {"CORE-04", "CORE-05"} & set(tracker.held[0]), tracker.held
