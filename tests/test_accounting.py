"""Accounting for every message after a crash (conformance.checker.accounting): drain results whose answer is known."""

from __future__ import annotations

import pytest

from conformance.checker.accounting import DUPLICATED, GONE, IN_DOUBT, KEPT, LOST, OK, UNEXPECTED, account
from reference_model import language as L
from reference_model import mqconst as C
from tests.test_checker import SETUP, msg

D = C.PLATFORM_DISTRIBUTED


def put(conn, body, persistent=True, sync=False):
    return (L.Put(conn=conn, handle=f"{conn}1", body=body,
                  md=L.MessageDescriptor(persistence=C.MQPER_PERSISTENT if persistent else C.MQPER_NOT_PERSISTENT),
                  options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT), L.OK)


RESTART = (L.Restart(), L.OK)


def classes(steps, drained):
    result = account(D, SETUP + steps, drained)
    assert result.departed is None
    return {a.body: a.cls for a in result.accounts}, result


def test_a_committed_persistent_message_survives_a_restart_or_is_lost():
    assert classes([put("a", "p"), RESTART], {"Q1": ["p"]})[0] == {"p": OK}
    got, result = classes([put("a", "p"), RESTART], {"Q1": []})
    assert got == {"p": LOST} and "CORE-32" in result.rules and result.failures


def test_a_message_that_is_not_persistent_may_go_at_a_restart_but_must_not_stay():
    assert classes([put("a", "n", persistent=False), RESTART], {"Q1": []})[0] == {"n": GONE}
    got, result = classes([put("a", "n", persistent=False), RESTART], {"Q1": ["n"]})
    assert got == {"n": KEPT} and "CORE-32" in result.rules


def test_an_uncommitted_put_is_backed_out_by_the_restart():
    assert classes([put("a", "u", sync=True), RESTART], {"Q1": []})[0] == {"u": GONE}
    got, result = classes([put("a", "u", sync=True), RESTART], {"Q1": ["u"]})
    assert got == {"u": KEPT} and result.rules


def test_a_message_got_for_good_that_comes_back_is_duplicated_and_one_found_twice_too():
    consumed = [put("a", "c"), (L.Get(conn="b", handle="b1"), msg("c", persistence=C.MQPER_PERSISTENT)), RESTART]
    assert classes(consumed, {"Q1": []})[0] == {"c": GONE}
    got, result = classes(consumed, {"Q1": ["c"]})
    assert got == {"c": DUPLICATED} and "CORE-16" in result.rules
    assert classes([put("a", "p"), RESTART], {"Q1": ["p", "p"]})[0] == {"p": DUPLICATED}


def test_a_get_in_a_unit_of_work_the_restart_backed_out_comes_back():
    held = [put("a", "h"), (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT),
                            msg("h", persistence=C.MQPER_PERSISTENT)), RESTART]
    assert classes(held, {"Q1": ["h"]})[0] == {"h": OK}
    got, result = classes(held, {"Q1": []})
    assert got == {"h": LOST} and result.rules


def test_a_get_in_a_unit_of_work_still_open_at_the_drain_keeps_the_message_from_it():
    """A schedule cut down may leave no restart after a get under syncpoint: the drain, on a connection of its own,
    must not get the message while that unit of work is open (CORE-14), and not finding it is no loss."""
    pending = [put("a", "h"), (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT),
                               msg("h", persistence=C.MQPER_PERSISTENT))]
    assert classes(pending, {"Q1": []})[0] == {"h": GONE}
    got, result = classes(pending, {"Q1": ["h"]})
    assert got == {"h": DUPLICATED} and result.rules == ("CORE-14",)


def test_a_commit_cut_in_flight_leaves_its_message_in_doubt_either_way():
    cut = [put("a", "d", sync=True), (L.CutConnection(conn="a", in_flight=True), L.OK),
           (L.Commit(conn="a"), L.Observation.of(C.MQRC_CONNECTION_BROKEN)), RESTART]
    assert classes(cut, {"Q1": []})[0] == {"d": IN_DOUBT}
    assert classes(cut, {"Q1": ["d"]})[0] == {"d": OK}


def test_a_message_nobody_put_is_unexpected():
    got, result = classes([put("a", "p"), RESTART], {"Q1": ["p", "stranger"]})
    assert got == {"p": OK, "stranger": UNEXPECTED} and [a.body for a in result.failures] == ["stranger"]
    assert result.counts()[OK] == 1 and result.counts()[UNEXPECTED] == 1


@pytest.mark.parametrize("drained", [{"Q1": ["p"]}, {"Q1": []}])
def test_a_history_that_departs_before_the_drain_accounts_for_nothing(drained):
    steps = [put("a", "p"), (L.Get(conn="b", handle="b1"), msg("other"))]
    result = account(D, SETUP + steps, drained)
    assert result.departed is not None and result.accounts == ()


def test_a_message_of_a_commit_cut_in_flight_kept_past_a_restart_breaks_the_restart_rule_alone():
    """A non-persistent message put under syncpoint, the commit cut in flight (in doubt), a restart, and the drain
    finds it: committed, the restart should have discarded it (CORE-32); backed out, it never was. Finding it
    decides the commit happened: CORE-32 alone, not the in-doubt rule."""
    sync = C.MQPMO_SYNCPOINT
    steps = [(L.DefineQueue(queue="Q1"), L.OK), (L.Connect(conn="a"), L.OK),
             (L.Open(conn="a", handle="a1", queue="Q1", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED), L.OK),
             (L.Put(conn="a", handle="a1", body="n1", md=L.MessageDescriptor(persistence=C.MQPER_NOT_PERSISTENT),
                    options=sync), L.OK),
             (L.PauseQueueManager(conn="a", tenths=5), L.OK),
             (L.Commit(conn="a"), L.Observation.of(C.MQRC_CONNECTION_BROKEN)),
             (L.Restart(), L.OK)]
    kept = account(C.PLATFORM_DISTRIBUTED, steps, {"Q1": ["n1"]})
    assert [(a.body, a.cls, a.rules) for a in kept.accounts] == [("n1", KEPT, ("CORE-32",))]
    # not found: in doubt no more (either reading drops it at the restart)
    assert [a.cls for a in account(C.PLATFORM_DISTRIBUTED, steps, {"Q1": []}).accounts] == [GONE]


@pytest.mark.parametrize("drained, classes, rules", [
    # the put committed, the get backed out: judged as backed out (a put kept) or as committed (a get undone)
    (["old", "new"], ({"old": OK, "new": KEPT}, {"old": DUPLICATED, "new": OK}), ("CORE-48",)),
    # the get committed, the put backed out: a message lost either way
    ([], ({"old": LOST, "new": IN_DOUBT}, {"old": IN_DOUBT, "new": LOST}), ("CORE-48",)),
    # committed, or backed out: what was not found is in doubt (held in a reading of the history)
    (["new"], ({"old": IN_DOUBT, "new": OK},), ()),
    (["old"], ({"old": OK, "new": IN_DOUBT},), ()),
])
def test_a_unit_of_work_in_doubt_is_carried_out_whole_or_not_at_all(drained, classes, rules):
    """A get and a put in one unit of work whose commit is cut in flight: MQ commits both or neither.  Each message
    alone has a reading that lets it pass whatever the drain shows; a drain that mixes the readings breaks the
    in-doubt rule (CORE-48), the messages judged by the reading that explains most."""
    sync = C.MQPMO_SYNCPOINT
    persistent = L.MessageDescriptor(persistence=C.MQPER_PERSISTENT)
    steps = [(L.DefineQueue(queue="Q1"), L.OK), (L.Connect(conn="a"), L.OK),
             (L.Open(conn="a", handle="a1", queue="Q1", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED), L.OK),
             (L.Put(conn="a", handle="a1", body="old", md=persistent, options=C.MQPMO_NO_SYNCPOINT), L.OK),
             (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("old", persistence=1)),
             (L.Put(conn="a", handle="a1", body="new", md=persistent, options=sync), L.OK),
             (L.PauseQueueManager(conn="a", tenths=5), L.OK),
             (L.Commit(conn="a"), L.Observation.of(C.MQRC_CONNECTION_BROKEN))]
    judged = account(C.PLATFORM_DISTRIBUTED, steps, {"Q1": drained})
    assert judged.departed is None
    assert {a.body: a.cls for a in judged.accounts} in classes
    assert judged.rules == rules


def test_a_message_each_reading_explains_by_a_rule_of_its_own_breaks_one_of_them_not_each():
    """A get under syncpoint whose commit is cut in flight, then a restart: committed, the get deleted the message
    (CORE-14); backed out, the restart discarded it, not persistent (CORE-32).  The drain finding it breaks one of
    the two, and does not show which: one verdict, "CORE-14 or CORE-32", never both counted as broken."""
    steps = [(L.DefineQueue(queue="Q1"), L.OK), (L.Connect(conn="a"), L.OK),
             (L.Open(conn="a", handle="a1", queue="Q1", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED), L.OK),
             (L.Put(conn="a", handle="a1", body="m", md=L.MessageDescriptor(persistence=C.MQPER_NOT_PERSISTENT),
                    options=C.MQPMO_NO_SYNCPOINT), L.OK),
             (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("m", persistence=0)),
             (L.PauseQueueManager(conn="a", tenths=5), L.OK),
             (L.Commit(conn="a"), L.Observation.of(C.MQRC_CONNECTION_BROKEN)),
             (L.Restart(), L.OK)]
    judged = account(C.PLATFORM_DISTRIBUTED, steps, {"Q1": ["m"]})
    assert [(a.body, a.cls) for a in judged.accounts] == [("m", DUPLICATED)]
    assert len(judged.rules) == 1 and set(judged.rules[0].split(" or ")) == {"CORE-14", "CORE-32"}, judged.rules
