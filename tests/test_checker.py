"""The checker: allowed sets, latitude, and naming the rule an observation breaks."""

import pytest

from conformance.checker.sequential import ModelTracker, check_history, differing_fields
from reference_model import language as L
from reference_model import mqconst as C

STD = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
SETUP = [
    (L.DefineQueue(queue="Q1"), L.OK),
    (L.Connect(conn="a"), L.OK),
    (L.Open(conn="a", handle="a1", queue="Q1", options=STD), L.OK),
    (L.Connect(conn="b"), L.OK),
    (L.Open(conn="b", handle="b1", queue="Q1", options=STD), L.OK),
]


def msg(body, **kw):
    kw.setdefault("priority", 0)
    kw.setdefault("persistence", 0)
    kw.setdefault("msg_id", f"ID.{body}")   # a MsgId of its own, as MQ generates
    return L.Observation(message=L.ReturnedMessage(body=body, **kw))


def put(conn, handle, body, prio=0, options=C.MQPMO_NO_SYNCPOINT):
    return L.Put(conn=conn, handle=handle, body=body, md=L.MessageDescriptor(priority=prio), options=options)


def test_a_correct_history_passes_and_reports_exercised_rules():
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "m1"), L.OK),
        (L.Get(conn="b", handle="b1"), msg("m1")),
    ])
    assert all(c.mismatch is None for c in checks)
    assert "CORE-01" in checks[-1].rules


def test_wrong_order_names_the_ordering_rule():
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "low", 1), L.OK),
        (put("a", "a1", "high", 7), L.OK),
        (L.Get(conn="b", handle="b1"), msg("low", priority=1)),
    ])
    mm = checks[-1].mismatch
    assert mm is not None and mm.fields == ("message.body",)
    assert mm.rules[0] == "CORE-04"


def test_uncommitted_message_returned_names_visibility_rule():
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "u", options=C.MQPMO_SYNCPOINT), L.OK),
        (L.Get(conn="b", handle="b1"), msg("u")),
    ])
    assert "CORE-02" in checks[-1].mismatch.rules


def test_resurrected_message_names_the_rule_that_removed_it():
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "gone"), L.OK),
        (L.Get(conn="a", handle="a1", options=C.MQGMO_NO_SYNCPOINT), msg("gone")),
        (L.Backout(conn="a"), L.OK),
        (L.Get(conn="b", handle="b1"), msg("gone")),
    ])
    assert "CORE-16" in checks[-1].mismatch.rules


def test_latitude_keeps_both_states_until_an_observation_decides():
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED)
    for op, obs in SETUP + [(put("a", "a1", "own", options=C.MQPMO_SYNCPOINT), L.OK)]:
        assert tracker.advance(op, obs).mismatch is None
    # the putting connection may or may not see its own uncommitted message
    assert tracker.advance(L.Get(conn="a", handle="a1", options=C.MQGMO_BROWSE_FIRST), msg("own")).mismatch is None
    fresh = ModelTracker(C.PLATFORM_DISTRIBUTED)
    for op, obs in SETUP + [(put("a", "a1", "own", options=C.MQPMO_SYNCPOINT), L.OK)]:
        fresh.advance(op, obs)
    no_msg = L.Observation.of(C.MQRC_NO_MSG_AVAILABLE)
    assert fresh.advance(L.Get(conn="a", handle="a1", options=C.MQGMO_BROWSE_FIRST), no_msg).mismatch is None


def test_generated_msg_id_and_expiry_ranges_match_as_sets():
    expected = L.Observation(message=L.ReturnedMessage(body="b", priority=0, persistence=0, msg_id=None,
                                                       expiry=L.IntRange(lo=5, hi=9)))
    ok = L.Observation(message=L.ReturnedMessage(body="b", priority=0, persistence=0, msg_id="ABC", expiry=7))
    assert differing_fields(expected, ok) == []
    bad = L.Observation(message=L.ReturnedMessage(body="b", priority=0, persistence=0, msg_id="", expiry=10))
    assert differing_fields(expected, bad) == ["message.expiry", "message.msg_id"]


def test_wrong_curdepth_names_depth_rule():
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "x"), L.OK),
        (L.InquireQueue(queue="Q1", names=["CURDEPTH"]), L.Observation(attrs={"CURDEPTH": 2})),
    ])
    mm = checks[-1].mismatch
    assert mm.fields == ("attrs.CURDEPTH",) and mm.rules[0] == "CORE-28"


def test_connection_broken_during_commit_is_in_doubt_and_later_steps_decide():
    from conformance.records.results import INDETERMINATE, PASS, Coverage, verdict_for
    from reference_model.rules import RULES

    history = SETUP + [
        (put("a", "a1", "maybe", options=C.MQPMO_SYNCPOINT), L.OK),
        (L.Commit(conn="a"), L.Observation.of(C.MQRC_CONNECTION_BROKEN)),
    ]
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED)
    coverage = Coverage()
    for op, obs in history:
        check = tracker.advance(op, obs)
        coverage.record(check)
    assert check.in_doubt and len(tracker.candidates) == 2
    # whether the commit happened is undecided (CORE-29); that the call failed as it must is decided (CORE-48)
    assert verdict_for(RULES["CORE-29"], coverage, applicable=True, error=False) == INDETERMINATE
    assert verdict_for(RULES["CORE-48"], coverage, applicable=True, error=False) == PASS

    # either answer is allowed next, and it decides which outcome happened
    got = tracker.advance(L.Get(conn="b", handle="b1"), msg("maybe"))
    assert got.mismatch is None and len(tracker.candidates) == 1


def test_a_depth_too_low_blames_the_messages_that_must_count_not_those_that_may_have_expired():
    """An expired message may have gone in the background (distributed): a missing uncommitted put is the cause."""
    expiring = L.Put(conn="a", handle="a1", body="old", md=L.MessageDescriptor(priority=0, expiry=5),
                     options=C.MQPMO_NO_SYNCPOINT)
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (expiring, L.OK),
        (L.AdvanceClock(tenths=10), L.OK),
        (put("a", "a1", "pending", options=C.MQPMO_SYNCPOINT), L.OK),
        (L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs={"CURDEPTH": 0})),
    ])
    mismatch = checks[-1].mismatch
    assert mismatch is not None
    assert mismatch.rules == ("CORE-28",), mismatch.rules   # counting the uncommitted put is CORE-28's


def test_a_missing_priority_warning_names_only_the_priority_rule():
    """A put above MaxPriority accepted without MQRC_PRIORITY_EXCEEDS_MAXIMUM breaks CORE-08 alone: not
    the syncpoint rules (CORE-01/02/35) of the same put, which the system followed."""
    for options in (C.MQPMO_SYNCPOINT, C.MQPMO_NO_SYNCPOINT, C.MQPMO_NONE):
        checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [(put("a", "a1", "hi", 12, options), L.OK)])
        mm = checks[-1].mismatch
        assert mm is not None and mm.fields == ("rc",) and mm.rules == ("CORE-08",), (options, mm)
    put1 = L.Put1(conn="a", queue="Q1", body="hi", md=L.MessageDescriptor(priority=12),
                  options=C.MQPMO_NO_SYNCPOINT)
    mm = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [(put1, L.OK)])[-1].mismatch
    assert mm.rules == ("CORE-08",)


def test_an_uncommitted_put_left_out_of_curdepth_names_the_depth_rule_not_visibility():
    """CURDEPTH counts uncommitted puts (CORE-28); a system that leaves one out breaks that rule, not
    CORE-02, which it may well keep (the message stays hidden from other connections)."""
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "u", options=C.MQPMO_SYNCPOINT), L.OK),
        (L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs={"CURDEPTH": 0})),
    ])
    mm = checks[-1].mismatch
    assert mm is not None and mm.fields == ("attrs.CURDEPTH",)
    assert mm.rules[0] == "CORE-28" and "CORE-02" not in mm.rules, mm.rules


def test_an_available_message_returned_out_of_order_names_the_order_rule_only():
    """Both messages are there and available; returning the later one first breaks the order rule
    (CORE-05 here), not CORE-01: the earlier message was put outside syncpoint and is still available."""
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "first"), L.OK),
        (put("a", "a1", "second"), L.OK),
        (L.Get(conn="b", handle="b1"), msg("second")),
    ])
    mm = checks[-1].mismatch
    assert mm is not None and mm.fields == ("message.body",)
    assert mm.rules[0] == "CORE-05" and "CORE-01" not in mm.rules, mm.rules


def test_a_put1_accepted_where_mq_refuses_it_names_the_refusing_rule_not_put1s():
    """MQPUT1 obeys the rules of a put (CORE-37): a put1 accepted where a put is refused too breaks the
    refusing rule (EXP-10 for Expiry 0), not CORE-37."""
    put1 = L.Put1(conn="a", queue="Q1", body="x", md=L.MessageDescriptor(expiry=0), options=C.MQPMO_NO_SYNCPOINT)
    mm = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [(put1, L.OK)])[-1].mismatch
    assert mm is not None and mm.rules == ("EXP-10",), mm


def test_a_backed_out_message_passed_over_names_the_backout_rule_after_the_order_rule():
    """Another available message returned where a backed-out one should come first: either the order
    broke or the backout lost the message (as a broker that moves poison messages does): both named."""
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (put("a", "a1", "first"), L.OK),
        (put("a", "a1", "second"), L.OK),
        (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT), msg("first")),
        (L.Backout(conn="b"), L.OK),
        (L.Get(conn="b", handle="b1"), msg("second")),
    ])
    mm = checks[-1].mismatch
    assert mm is not None and mm.rules[0] == "CORE-05" and "CORE-15" in mm.rules and "CORE-01" not in mm.rules, \
        mm.rules


def test_a_put_accepted_on_a_full_queue_names_expiry_only_when_expired_messages_fill_it():
    """Uncommitted puts fill the queue: CORE-27 and CORE-28; EXP-11 (expired messages count) has
    nothing to do with it unless an expired message is there."""
    full = [(L.DefineQueue(queue="F", attrs=(("MAXDEPTH", 2),)), L.OK), (L.Connect(conn="a"), L.OK),
            (L.Open(conn="a", handle="h", queue="F", options=C.MQOO_OUTPUT), L.OK)]
    mm = check_history(C.PLATFORM_DISTRIBUTED, full + [
        (put("a", "h", f"m{i}", options=C.MQPMO_SYNCPOINT), L.OK) for i in range(3)])[-1].mismatch
    assert mm is not None and mm.rules == ("CORE-27", "CORE-28"), mm
    expiring = L.Put(conn="a", handle="h", body="old", md=L.MessageDescriptor(expiry=1), options=C.MQPMO_NO_SYNCPOINT)
    mm = check_history(C.PLATFORM_ZOS, full + [(expiring, L.OK), (put("a", "h", "m1"), L.OK),
                                               (L.AdvanceClock(tenths=5), L.OK),
                                               (put("a", "h", "m2"), L.OK)])[-1].mismatch
    assert mm is not None and "EXP-11" in mm.rules, mm


def test_an_expired_message_returned_names_expiry_not_the_history_of_the_message_due_instead():
    """A backed-out message that has expired since comes back: the expiry rules say it must not (its own
    history follows them); the message MQ returns instead, and the order between them, are not at fault."""
    expiring = L.Put(conn="a", handle="a1", body="old", md=L.MessageDescriptor(priority=0, expiry=3),
                     options=C.MQPMO_NO_SYNCPOINT)
    checks = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (expiring, L.OK),
        (put("a", "a1", "kept"), L.OK),
        (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT), msg("old", expiry=3)),
        (L.Backout(conn="b"), L.OK),
        (L.AdvanceClock(tenths=10), L.OK),
        (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT), msg("old", expiry=3, backout_count=1)),
    ])
    mm = checks[-1].mismatch
    assert mm is not None and mm.rules[:3] == ("EXP-06", "EXP-04", "EXP-14"), mm.rules
    assert not {"CORE-04", "CORE-05", "CORE-01"} & set(mm.rules), mm.rules


def test_a_backout_count_too_low_names_the_backout_rules_not_expiry_or_put():
    """Two backouts, BackoutCount 1 (a broker that only flags redelivery): CORE-15/CORE-17 first; the
    message is delivered in the closest outcome, so rules that would hide it (expiry) are not named,
    nor CORE-12 (a new message's count), which is about puts."""
    expiring = L.Put(conn="a", handle="a1", body="m", md=L.MessageDescriptor(priority=0, expiry=30),
                     options=C.MQPMO_NO_SYNCPOINT)
    get = L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT)
    mm = check_history(C.PLATFORM_DISTRIBUTED, SETUP + [
        (expiring, L.OK), (get, msg("m", expiry=30)), (L.Backout(conn="a"), L.OK),
        (get, msg("m", expiry=30, backout_count=1)), (L.Backout(conn="a"), L.OK),
        (get, msg("m", expiry=30, backout_count=1)),
    ])[-1].mismatch
    assert mm is not None and mm.fields == ("message.backout_count",), mm
    assert mm.rules[:2] == ("CORE-15", "CORE-17") and not {"CORE-12", "EXP-06", "EXP-04"} & set(mm.rules), mm.rules


def test_a_depth_short_by_the_uncommitted_puts_names_only_the_depth_rule():
    """One uncommitted and one committed message, CURDEPTH 1: leaving out the uncommitted put (CORE-28)
    explains it all; the committed message's history (CORE-01, a backout's CORE-15) is not blamed.
    Short by more than the uncommitted puts: the committed messages' history is named too."""
    history = SETUP + [
        (put("a", "a1", "pending", options=C.MQPMO_SYNCPOINT), L.OK),
        (put("a", "a1", "kept"), L.OK),
        (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT), msg("kept")),
        (L.Backout(conn="b"), L.OK),
    ]
    depth = L.InquireQueue(queue="Q1", names=("CURDEPTH",))
    mm = check_history(C.PLATFORM_DISTRIBUTED, history + [(depth, L.Observation(attrs={"CURDEPTH": 1}))])[-1].mismatch
    assert mm is not None and mm.rules == ("CORE-28",), mm.rules
    mm = check_history(C.PLATFORM_DISTRIBUTED, history + [(depth, L.Observation(attrs={"CURDEPTH": 0}))])[-1].mismatch
    assert mm is not None and "CORE-28" in mm.rules and "CORE-15" in mm.rules, mm.rules


def test_an_observation_of_a_set_aside_rule_does_not_decide_an_in_doubt_commit():
    """A commit cut in flight leaves two candidate states; a depth that leaves out another unit of work's
    uncommitted put (CORE-28, already found broken and set aside) happens to fit only the backed-out one.
    The depth may not decide it: the committed state stays a candidate, and the get that shows the put
    was committed is no departure.  Without CORE-28 set aside the same history is one (the test can fail)."""
    history = SETUP + [
        (put("b", "b1", "other", options=C.MQPMO_SYNCPOINT), L.OK),   # b's unit of work stays open
        (put("a", "a1", "maybe", options=C.MQPMO_SYNCPOINT), L.OK),
        (L.Commit(conn="a"), L.Observation.of(C.MQRC_CONNECTION_BROKEN)),
        # committed: "maybe" and b's uncommitted "other" count (2); backed out: only "other" (1).
        # The system committed, and its depth leaves out b's uncommitted put: 1.
        (L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs={"CURDEPTH": 1})),
        (L.Get(conn="b", handle="b1"), msg("maybe")),
    ]

    def run(set_aside):
        tracker = ModelTracker(C.PLATFORM_DISTRIBUTED, set_aside=set_aside)
        return [tracker.advance(op, obs) for op, obs in history], tracker

    checks, tracker = run(frozenset({"CORE-28"}))
    assert [c.index for c in checks if c.mismatch] == [], [c.mismatch for c in checks if c.mismatch]
    assert len(tracker.candidates) == 1   # the get decided it: committed
    checks, _ = run(frozenset())
    assert checks[-1].mismatch is not None

    # A set-aside rule keeps a state only where that rule alone explains the difference
    checks, _ = run(frozenset({"CORE-99"}))
    assert checks[-1].mismatch is not None


def backed_out_then_restarted(last: L.Observation) -> list:
    """A persistent message "m" got in a unit of work and backed out, an abrupt restart, then a get outside
    syncpoint answered ``last``."""
    persistent = L.Put(conn="a", handle="a1", body="m", md=L.MessageDescriptor(priority=0, persistence=1),
                       options=C.MQPMO_NO_SYNCPOINT)
    return SETUP + [
        (persistent, L.OK),
        (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("m", persistence=1)),
        (L.Backout(conn="a"), L.OK),
        (L.Restart(abrupt=True), L.OK),
        (L.Connect(conn="a"), L.OK),
        (L.Open(conn="a", handle="a2", queue="Q1", options=STD), L.OK),
        (L.Get(conn="a", handle="a2", options=C.MQGMO_NO_SYNCPOINT), last),
    ]


def test_a_backout_count_lost_at_a_restart_names_the_count_rules_not_how_the_get_removes_it():
    """A message backed out once, then a restart, then a get outside syncpoint returning BackoutCount 0
    (a broker that keeps its redelivery counter in memory): the count's rules are named, the survival
    of a count across a restart (CORE-45) among them; not CORE-16, which only says that this get
    removes the message it returns, nor what the restart did to other messages."""
    mm = check_history(C.PLATFORM_DISTRIBUTED, backed_out_then_restarted(msg("m", persistence=1)))[-1].mismatch
    assert mm is not None and mm.fields == ("message.backout_count",), mm
    assert mm.rules[0] == "CORE-45" and "CORE-15" in mm.rules, mm.rules
    assert not {"CORE-16", "CORE-32", "CORE-12"} & set(mm.rules), mm.rules


def test_a_mark_kept_from_a_get_outside_syncpoint_names_the_rule_that_ignores_it():
    """On z/OS a get marked without MQGMO_SYNCPOINT is not marked (SYNC-10). A system that kept the mark
    refuses the next marked get with MQRC_SECOND_MARK_NOT_ALLOWED: SYNC-10 is what it broke, then the
    one-mark rule, before any rule of the message the get should have returned."""
    mark = C.MQGMO_MARK_SKIP_BACKOUT
    history = SETUP + [(put("a", "a1", "one"), L.OK), (put("a", "a1", "two"), L.OK),
                       (L.Get(conn="a", handle="a1", options=C.MQGMO_NO_SYNCPOINT | mark), msg("one")),
                       (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT | mark),
                        L.Observation.of(C.MQRC_SECOND_MARK_NOT_ALLOWED))]
    mm = check_history(C.PLATFORM_ZOS, history)[-1].mismatch
    assert mm is not None and mm.rules[:2] == ("SYNC-10", "SYNC-06"), mm
    # after a commit the connection's next unit of work starts clean: the one-mark rule is no longer SYNC-10's
    history[-1:-1] = [(L.Commit(conn="a"), L.OK)]
    mm = check_history(C.PLATFORM_ZOS, history)[-1].mismatch
    assert mm is not None and "SYNC-10" not in mm.rules[:1], mm


@pytest.mark.parametrize("aside", [("CORE-19",), ("CORE-19", "CORE-04")])
def test_a_dlq_handler_fate_set_aside_is_stepped_past_only_from_a_reading_that_did_it(aside):
    """A handler that discarded a message MQ's handler had not reached yet (M5, of higher priority, arrived
    behind its cursor): the fate is what the call did, not a value read, so a keep-going run cannot go on from
    MQ's state (the message would still be there in the model and gone from the system).  With only the
    browse-next rule set aside (whose readings skip messages, never meet more) the case stops there instead of
    failing later for it; with priority order set aside as well, the pass that takes the queue in arrival order
    from its cursor met and discarded M5, and the case goes on from that state (the next pass agrees)."""
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED, set_aside=frozenset(aside))
    dead = L.MessageDescriptor(msg_id="M5", priority=7, format=C.MQFMT_DEAD_LETTER_HEADER)
    steps = [
        (L.DefineQueue(queue="DLQ"), L.OK),
        (L.AlterQueueManager(attrs={"DEADQ": "DLQ"}), L.OK),
        (L.Connect(conn="app"), L.OK),
        (L.StartDlqHandler(handler="H1", table="ACTION(DISCARD)\n"), L.OK),
        (L.Put1(conn="app", queue="DLQ", body="dead letter M4", options=C.MQPMO_NO_SYNCPOINT,
                md=L.MessageDescriptor(msg_id="M4", format=C.MQFMT_DEAD_LETTER_HEADER),
                dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A")), L.OK),
        (L.RunDlqHandler(handler="H1"), L.Observation(attrs={"HANDLER": "RUNNING", "M4": "discarded"})),
        (L.Put1(conn="app", queue="DLQ", body="dead letter M5", options=C.MQPMO_NO_SYNCPOINT, md=dead,
                dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A")), L.OK),
    ]
    for op, observed in steps:
        assert tracker.advance(op, observed).mismatch is None, op
    run = L.RunDlqHandler(handler="H1")
    seen = L.Observation(attrs={"HANDLER": "RUNNING", "M5": "discarded"})
    check = tracker.advance(run, seen)
    assert check.mismatch is not None and set(check.mismatch.rules) <= {"CORE-19", "CORE-04"}, check.mismatch
    if "CORE-04" not in aside:
        assert tracker.step_past(run, seen) is False
        return
    assert tracker.step_past(run, seen) is True
    assert tracker.advance(run, L.Observation(attrs={"HANDLER": "RUNNING"})).mismatch is None


def _follow(tracker, steps):
    """Advance ``tracker`` over ``steps``, stepping past each departure; the departures, in order."""
    departed = []
    for op, observed in steps:
        check = tracker.advance(op, observed)
        if check.mismatch is not None:
            departed.append(check.mismatch)
            assert tracker.step_past(op, observed), (op, observed)
    return departed


def test_a_put_accepted_past_a_set_aside_queue_full_is_followed_with_its_message_there():
    """With CORE-27 set aside (a system that ignores MAXDEPTH was found), a put accepted on a full queue is
    followed as the system did it, the message there: the depth read next, and the get after, agree."""
    steps = [(L.DefineQueue(queue="Q1", attrs=(("MAXDEPTH", 1),)), L.OK)] + SETUP[1:3] + [
        (put("a", "a1", "m1"), L.OK), (put("a", "a1", "m2"), L.OK),
        (L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 2),))),
        (L.Get(conn="a", handle="a1"), msg("m1")), (L.Get(conn="a", handle="a1"), msg("m2"))]
    departed = _follow(ModelTracker(C.PLATFORM_DISTRIBUTED, set_aside=frozenset({"CORE-27"})), steps)
    assert len(departed) == 1 and "CORE-27" in departed[0].rules, departed
    # without the rule set aside, the same put is not followed: the case stops there
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED)
    for op, observed in steps[:4]:
        tracker.advance(op, observed)
    assert tracker.advance(*steps[4]).mismatch is not None and tracker.step_past(*steps[4]) is False


def test_a_get_out_of_priority_order_set_aside_is_followed_with_that_message_gone():
    """With the order rules set aside (priorities ignored), a get that returns the older, lower-priority
    message is followed with that message gone: the next get returns the higher one, as MQ would then."""
    steps = SETUP + [(put("a", "a1", "low", 1), L.OK), (put("a", "a1", "high", 7), L.OK),
                     (L.Get(conn="b", handle="b1"), msg("low", priority=1)),
                     (L.Get(conn="b", handle="b1"), msg("high", priority=7)),
                     (L.Get(conn="b", handle="b1"), L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))]
    departed = _follow(ModelTracker(C.PLATFORM_DISTRIBUTED, set_aside=frozenset({"CORE-04"})), steps)
    assert len(departed) == 1 and departed[0].rules[0] == "CORE-04", departed
    # a browse out of order is followed as a queue taken in arrival order browses (CORE-04 relaxed): its cursor
    # on the message it returned, so a browse-next goes on in arrival order too (where MQ's cursor, on the lower
    # priority, has nothing after it)
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED, set_aside=frozenset({"CORE-04"}))
    for op, observed in steps[:7]:
        tracker.advance(op, observed)
    browse = L.Get(conn="b", handle="b1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT)
    assert tracker.advance(browse, msg("low", priority=1)).mismatch is not None
    assert tracker.step_past(browse, msg("low", priority=1)) is True
    nxt = L.Get(conn="b", handle="b1", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT)
    assert tracker.expect(nxt)[0].observation.rc == C.MQRC_NO_MSG_AVAILABLE   # MQ's cursor: past every message
    assert tracker.advance(nxt, msg("high", priority=7)).mismatch is not None
    assert tracker.step_past(nxt, msg("high", priority=7)) is True
    # but not a browse that returns what no order gives (a message never put)
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED, set_aside=frozenset({"CORE-04"}))
    for op, observed in steps[:7]:
        tracker.advance(op, observed)
    assert tracker.advance(browse, msg("ghost")).mismatch is not None
    assert tracker.step_past(browse, msg("ghost")) is False
