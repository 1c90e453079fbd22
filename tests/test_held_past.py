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


#: A queue that triggers on its first message, but only for messages at TriggerMsgPriority 4 or above.
_TRIGGERED = (("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("TRIGGER", C.MQTC_ON), ("TRIGMPRI", 4))


def _trigger_history(queue_attrs, ops):
    opts_init = C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE | C.MQOO_INQUIRE
    return [L.DefineProcess(process="APP.PROCESS", appl_id="/opt/app/server"), L.DefineQueue(queue="INIT.Q"),
            L.DefineQueue(queue="APP.Q", attrs=_TRIGGERED + queue_attrs), L.Connect(conn="c1"),
            L.Open(conn="c1", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
            L.Open(conn="c1", handle="h2", queue="INIT.Q", options=opts_init), *ops]


def _followed(history, set_aside):
    """How far a keep-going tracker with ``set_aside`` follows ``history``: the steps it departs at, and the
    index of the step it stops at (None: it follows the whole history)."""
    from conformance.checker.sequential import follow

    tracker = ModelTracker(D, set_aside=frozenset(set_aside))
    departed = []
    for i, (op, observed) in enumerate(history):
        check, stop = follow(tracker, op, observed)
        if check.mismatch is not None:
            departed.append(i)
        if stop is not None:
            return departed, i
    return departed, None


def test_a_depth_a_set_aside_rule_explains_is_followed_from_the_step_that_rule_broke_unseen():
    """A FIFO queue compares its DefPriority (0) with TriggerMsgPriority, so MQ writes no trigger message for a
    message put at priority 4; a queue manager that ignores TriggerMsgPriority writes one, and answers the put as
    MQ does.  Its rules found broken (TRIG-02, and TRIG-24 the depth names with it), the depth of 1 departs as
    they explain, and the browse of the trigger message after it is what they let happen, not a browse that
    returned a message where there is none (CORE-13, CORE-18): the step past goes on from the put, the trigger
    message written."""
    put = L.Put(conn="c1", handle="h1", body="m1", md=L.MessageDescriptor(priority=4),
                options=C.MQPMO_NO_SYNCPOINT)
    ops = _trigger_history((("MSGDLVSQ", C.MQMDS_FIFO),), [
        put, L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",)),
        L.Get(conn="c1", handle="h2", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_BROWSE_FIRST)])
    history = _on_simulated(ops, "trigmpri-ignored")
    assert history[-2][1].attrs == (("CURDEPTH", 1),) and history[-1][1].message.format == C.MQFMT_TRIGGER
    departed, stopped = _followed(history, {"TRIG-02", "TRIG-24"})
    assert departed == [len(ops) - 2] and stopped is None
    # one of them alone set aside: the depth names both, and the run stops there, as before
    assert _followed(history, {"TRIG-02"}) == ([len(ops) - 2], len(ops) - 2)
    # and a queue manager that conforms is followed as MQ answers: no trigger message, the depth 0
    assert _followed(_on_simulated(ops, ""), set()) == ([], None)


def test_a_depth_other_than_mqs_leaves_the_model_knowing_no_more_than_before_it():
    """Two puts below TriggerMsgPriority on a queue whose TRIGINT is 0 write two trigger messages on a queue
    manager that ignores it.  The depth of 2 departs as TRIG-02, set aside, explains (two events, one relaxation
    cannot show both), and the model goes on from where it was: the depth asked again is the same departure,
    not a depth MQ's own would have left without an explanation (CORE-28)."""
    put = lambda body: L.Put(conn="c1", handle="h1", body=body, options=C.MQPMO_NO_SYNCPOINT)
    depth = L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))
    ops = [L.AlterQueueManager(attrs=(("TRIGINT", 0),)),
           *_trigger_history((), [put("m1"), put("m2"), depth, depth])]
    history = _on_simulated(ops, "trigmpri-ignored")
    assert history[-1][1].attrs == (("CURDEPTH", 2),)
    departed, stopped = _followed(history, {"TRIG-02"})
    assert departed == [len(ops) - 2, len(ops) - 1] and stopped is None
