"""Hand-written cases for every ``core`` rule of the reference model."""

import attrs
import pytest

from reference_model import language as L
from reference_model import mqconst as C
from reference_model.model import HistoryError
from reference_model.rules import RULES
from tests.modelkit import COVERED, STD, Script, covers

SYNC, NOSYNC = C.MQGMO_SYNCPOINT, C.MQGMO_NO_SYNCPOINT


def two_conns(**queue_attrs):
    s = Script(Q1=queue_attrs)
    s.connect("a", "Q1")
    s.connect("b", "Q1")
    return s


@covers("CORE-01", "CORE-11")
def test_put_outside_syncpoint_is_available_with_its_descriptor():
    s = two_conns()
    s.put("a", "Q1", "hello", priority=3, format="MQSTR", reply_to_q="R", correl_id="c", report=0,
          msg_id="ID1", msg_type=C.MQMT_REQUEST, feedback=0)
    m = s.get("b", "Q1").message
    assert (m.body, m.priority, m.format, m.reply_to_q, m.correl_id, m.msg_id, m.msg_type) == (
        "hello", 3, "MQSTR", "R", "c", "ID1", C.MQMT_REQUEST)
    s.put("a", "Q1", "no id")
    assert s.get("b", "Q1").message.msg_id is None  # "any generated identifier"


@covers("CORE-02", "CORE-29")
def test_uncommitted_put_invisible_to_others_until_commit():
    s = two_conns()
    s.put("a", "Q1", "x", options=C.MQPMO_SYNCPOINT)
    assert s.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE
    assert s.depth("Q1") == 1
    # for the putting connection both answers are allowed (undocumented)
    assert {o.rc for o in s.allowed(L.Get(conn="a", handle="a.Q1", options=NOSYNC))} == {0, 2033}
    s.do(L.Commit(conn="a"))
    assert s.body("b", "Q1") == "x"


@covers("CORE-03")
def test_backout_deletes_puts():
    s = two_conns()
    s.put("a", "Q1", "x", options=C.MQPMO_SYNCPOINT)
    s.do(L.Backout(conn="a"))
    assert s.depth("Q1") == 0
    assert s.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE


@covers("CORE-04", "CORE-05")
def test_priority_order_and_fifo_within_priority():
    s = two_conns()
    for body, prio in [("p1a", 1), ("p5a", 5), ("p1b", 1), ("p5b", 5), ("p0", 0)]:
        s.put("a", "Q1", body, priority=prio)
    assert [s.body("b", "Q1") for _ in range(5)] == ["p5a", "p5b", "p1a", "p1b", "p0"]


@covers("CORE-06")
def test_fifo_queue_ignores_priority_but_keeps_the_field():
    s = two_conns(MSGDLVSQ=C.MQMDS_FIFO)
    for body, prio in [("a", 1), ("b", 9), ("c", 4)]:
        s.put("a", "Q1", body, priority=prio)
    got = [s.get("b", "Q1").message for _ in range(3)]
    assert [(m.body, m.priority) for m in got] == [("a", 1), ("b", 9), ("c", 4)]


@covers("CORE-07")
def test_priority_as_queue_default_is_copied_at_put_time():
    s = two_conns(DEFPRTY=4)
    s.put("a", "Q1", "x")
    s.do(L.AlterQueue(queue="Q1", attrs={"DEFPRTY": 7}))
    assert s.get("b", "Q1").message.priority == 4


@covers("CORE-08")
def test_priority_above_maximum_warns_queues_at_max_and_keeps_field():
    s = two_conns()
    obs = s.put("a", "Q1", "hi", priority=12)
    assert (obs.cc, obs.rc) == (C.MQCC_WARNING, C.MQRC_PRIORITY_EXCEEDS_MAXIMUM)
    s.put("a", "Q1", "nine", priority=9)
    first = s.get("b", "Q1").message
    assert (first.body, first.priority) == ("hi", 12)  # arrived first at MaxPriority


@covers("CORE-09")
def test_negative_priority_fails():
    s = two_conns()
    assert s.put("a", "Q1", "x", priority=-2).rc == C.MQRC_PRIORITY_ERROR
    assert s.depth("Q1") == 0


@covers("CORE-10")
def test_persistence_defaults_and_errors():
    s = two_conns(DEFPSIST=C.MQPER_PERSISTENT)
    s.put("a", "Q1", "x")
    assert s.get("b", "Q1").message.persistence == C.MQPER_PERSISTENT
    assert s.put("a", "Q1", "y", persistence=7).rc == C.MQRC_PERSISTENCE_ERROR


@covers("CORE-12", "CORE-15", "CORE-17", "CORE-14")
def test_backout_count_counts_backed_out_gets_not_browses():
    s = two_conns()
    s.put("a", "Q1", "x", backout_count=42)
    assert s.get("b", "Q1", C.MQGMO_BROWSE_FIRST).message.backout_count == 0
    for expected in (0, 1, 2):
        assert s.get("a", "Q1", SYNC).message.backout_count == expected
        assert s.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE  # hidden while in the UOW
        assert s.depth("Q1") == 0
        s.do(L.Backout(conn="a"))
    assert s.get("b", "Q1", C.MQGMO_BROWSE_FIRST).message.backout_count == 3
    s.get("a", "Q1", SYNC)
    s.do(L.Commit(conn="a"))
    assert s.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE


@covers("CORE-13")
def test_get_on_empty_queue_and_wait_advances_the_clock():
    s = two_conns()
    assert s.get("a", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE
    obs = s.do(L.Get(conn="a", handle="a.Q1", options=C.MQGMO_WAIT | NOSYNC, wait_interval=500))
    assert obs.rc == C.MQRC_NO_MSG_AVAILABLE and s.state.clock == 5


@covers("CORE-15")
def test_backout_reinstates_in_original_place():
    s = two_conns()
    for b in ("first", "second"):
        s.put("a", "Q1", b)
    assert s.body("a", "Q1", SYNC) == "first"
    s.do(L.Backout(conn="a"))
    assert s.body("b", "Q1") == "first"


@covers("CORE-16")
def test_get_outside_syncpoint_is_not_restored_by_backout():
    s = two_conns()
    s.put("a", "Q1", "x")
    s.get("a", "Q1", NOSYNC)
    s.do(L.Backout(conn="a"))
    assert s.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE


@covers("CORE-18", "CORE-19")
def test_browse_first_and_next_follow_delivery_order_and_cursor():
    s = two_conns()
    for body, prio in [("low", 1), ("high", 8)]:
        s.put("a", "Q1", body, priority=prio)
    assert s.body("b", "Q1", C.MQGMO_BROWSE_NEXT) == "high"  # new cursor: before the first
    assert s.body("b", "Q1", C.MQGMO_BROWSE_NEXT) == "low"
    s.put("a", "Q1", "late-high", priority=9)  # lands before the cursor
    assert s.get("b", "Q1", C.MQGMO_BROWSE_NEXT).rc == C.MQRC_NO_MSG_AVAILABLE
    assert s.body("b", "Q1", C.MQGMO_BROWSE_FIRST) == "late-high"
    assert s.depth("Q1") == 3


@covers("CORE-20")
def test_message_under_cursor():
    s = two_conns()
    assert s.get("b", "Q1", C.MQGMO_BROWSE_MSG_UNDER_CURSOR).rc == C.MQRC_NO_MSG_UNDER_CURSOR
    s.put("a", "Q1", "one")
    s.put("a", "Q1", "two")
    s.get("b", "Q1", C.MQGMO_BROWSE_FIRST)
    assert s.body("b", "Q1", C.MQGMO_BROWSE_NEXT) == "two"
    assert s.body("b", "Q1", C.MQGMO_MSG_UNDER_CURSOR | NOSYNC) == "two"
    assert s.get("b", "Q1", C.MQGMO_MSG_UNDER_CURSOR).rc == C.MQRC_NO_MSG_UNDER_CURSOR
    assert s.body("a", "Q1") == "one"


@covers("CORE-21")
def test_lock_hides_message_from_other_handles_until_unlock():
    s = two_conns()
    s.put("a", "Q1", "x")
    assert s.get("b", "Q1", C.MQGMO_UNLOCK).rc == C.MQRC_NO_MSG_LOCKED
    s.get("b", "Q1", C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK)
    assert s.get("a", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE
    assert s.get("b", "Q1", C.MQGMO_UNLOCK).rc == 0
    assert s.body("a", "Q1") == "x"


@covers("CORE-22")
def test_not_open_for_input_browse_output():
    s = Script()
    s.connect("a", "Q1", options=C.MQOO_INQUIRE)
    assert s.get("a", "Q1").rc == C.MQRC_NOT_OPEN_FOR_INPUT
    assert s.get("a", "Q1", C.MQGMO_BROWSE_FIRST).rc == C.MQRC_NOT_OPEN_FOR_BROWSE
    assert s.put("a", "Q1", "x").rc == C.MQRC_NOT_OPEN_FOR_OUTPUT


@covers("CORE-23", "CORE-24")
def test_exclusive_input_and_open_counts():
    s = Script(Q1={"DEFSOPT": C.MQOO_INPUT_EXCLUSIVE})
    s.do(L.Connect(conn="a"))
    assert s.do(L.Open(conn="a", handle="h1", queue="Q1", options=C.MQOO_INPUT_AS_Q_DEF)).rc == 0
    assert s.do(L.Open(conn="a", handle="h2", queue="Q1", options=C.MQOO_INPUT_SHARED)).rc == C.MQRC_OBJECT_IN_USE
    assert s.do(L.Open(conn="a", handle="h3", queue="Q1", options=C.MQOO_OUTPUT)).rc == 0
    attrs = dict(s.do(L.InquireQueue(queue="Q1", names=["IPPROCS", "OPPROCS"])).attrs)
    assert attrs == {"IPPROCS": 1, "OPPROCS": 1}
    s.do(L.Close(conn="a", handle="h1"))
    assert s.do(L.Open(conn="a", handle="h4", queue="Q1", options=C.MQOO_INPUT_EXCLUSIVE)).rc == 0


@covers("CORE-25")
def test_get_inhibited_applies_to_open_handles_and_browse():
    s = two_conns()
    s.put("a", "Q1", "x")
    s.do(L.AlterQueue(queue="Q1", attrs={"GET": C.MQQA_GET_INHIBITED}))
    assert s.get("b", "Q1").rc == C.MQRC_GET_INHIBITED
    assert s.get("b", "Q1", C.MQGMO_BROWSE_FIRST).rc == C.MQRC_GET_INHIBITED


@covers("CORE-26", "CORE-37", "CORE-33")
def test_put_inhibited_and_put1():
    s = two_conns(PUT=C.MQQA_PUT_INHIBITED)
    assert s.put("a", "Q1", "x").rc == C.MQRC_PUT_INHIBITED
    assert s.do(L.Put1(conn="a", queue="Q1", body="y")).rc == C.MQRC_PUT_INHIBITED
    assert s.do(L.Put1(conn="a", queue="NOPE", body="y")).rc == C.MQRC_UNKNOWN_OBJECT_NAME
    assert s.do(L.Open(conn="a", handle="z", queue="NOPE", options=STD)).rc == C.MQRC_UNKNOWN_OBJECT_NAME
    s.do(L.AlterQueue(queue="Q1", attrs={"PUT": C.MQQA_PUT_ALLOWED}))
    assert s.do(L.Put1(conn="a", queue="Q1", body="y")).rc == 0
    assert s.body("b", "Q1") == "y"


@covers("CORE-27", "CORE-28")
def test_q_full_uses_curdepth_which_backout_can_push_past_maxdepth():
    s = two_conns(MAXDEPTH=2)
    s.put("a", "Q1", "1")
    s.put("a", "Q1", "2", options=C.MQPMO_SYNCPOINT)  # uncommitted puts count
    assert s.put("b", "Q1", "3").rc == C.MQRC_Q_FULL
    s.do(L.Commit(conn="a"))
    s.get("a", "Q1", SYNC)  # got under syncpoint: no longer counted
    assert s.put("b", "Q1", "3").rc == 0
    s.do(L.Backout(conn="a"))
    assert s.depth("Q1") == 3


@covers("CORE-30", "CORE-31")
def test_disconnect_commits_and_abnormal_end_backs_out():
    s = two_conns()
    s.put("a", "Q1", "kept", options=C.MQPMO_SYNCPOINT)
    s.do(L.Disconnect(conn="a"))
    assert s.body("b", "Q1") == "kept"
    s.connect("a", "Q1")
    s.put("a", "Q1", "lost", options=C.MQPMO_SYNCPOINT)
    s.do(L.Disconnect(conn="a", abnormal=True))
    assert s.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE


def test_zos_disconnect_allows_both_dispositions():
    s = Script(platform=C.PLATFORM_ZOS)
    s.connect("a", "Q1")
    s.put("a", "Q1", "x", options=C.MQPMO_SYNCPOINT)
    assert len(s.branches(L.Disconnect(conn="a"))) == 2


@covers("CORE-32")
def test_restart_keeps_committed_persistent_only():
    s = two_conns()
    s.put("a", "Q1", "p", persistence=C.MQPER_PERSISTENT)
    s.put("a", "Q1", "np", persistence=C.MQPER_NOT_PERSISTENT)
    s.put("a", "Q1", "uncommitted", persistence=C.MQPER_PERSISTENT, options=C.MQPMO_SYNCPOINT)
    s.put("b", "Q1", "p2", persistence=C.MQPER_PERSISTENT)
    s.get("b", "Q1", SYNC)  # gets "p": in flight at restart
    s.do(L.Restart())
    assert s.state.conns == {} and s.state.handles == {}
    s.connect("c", "Q1")
    got = [s.get("c", "Q1").message for _ in range(2)]
    assert [(m.body, m.backout_count) for m in got] == [("p", 1), ("p2", 0)]
    assert s.get("c", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE


@covers("CORE-34")
def test_conflicting_syncpoint_options():
    s = two_conns()
    assert s.put("a", "Q1", "x", options=C.MQPMO_SYNCPOINT | C.MQPMO_NO_SYNCPOINT).rc == C.MQRC_OPTIONS_ERROR
    assert s.get("a", "Q1", SYNC | NOSYNC).rc == C.MQRC_OPTIONS_ERROR


@covers("CORE-35")
def test_default_syncpoint_outside_uow_on_distributed_inside_on_zos():
    s = two_conns()
    s.put("a", "Q1", "x", options=C.MQPMO_NONE)
    assert s.body("b", "Q1", 0) == "x"
    s.do(L.Backout(conn="b"))
    assert s.depth("Q1") == 0
    z = Script(platform=C.PLATFORM_ZOS)
    z.connect("a", "Q1")
    z.connect("b", "Q1")
    z.put("a", "Q1", "x", options=C.MQPMO_NONE)
    assert z.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE  # still in a's unit of work


@covers("CORE-36")
def test_syncpoint_if_persistent():
    s = two_conns()
    s.put("a", "Q1", "p", persistence=C.MQPER_PERSISTENT)
    s.put("a", "Q1", "n", persistence=C.MQPER_NOT_PERSISTENT)
    s.get("a", "Q1", C.MQGMO_SYNCPOINT_IF_PERSISTENT)
    s.get("a", "Q1", C.MQGMO_SYNCPOINT_IF_PERSISTENT)
    s.do(L.Backout(conn="a"))
    assert s.body("b", "Q1") == "p"
    assert s.get("b", "Q1").rc == C.MQRC_NO_MSG_AVAILABLE


@covers("CORE-38")
def test_wait_interval_error():
    s = two_conns()
    obs = s.do(L.Get(conn="a", handle="a.Q1", options=C.MQGMO_WAIT, wait_interval=-5))
    assert obs.rc == C.MQRC_WAIT_INTERVAL_ERROR


@covers("CORE-39")
def test_close_releases_lock_but_keeps_uow():
    s = two_conns()
    s.put("a", "Q1", "locked")
    s.put("a", "Q1", "got")
    s.get("b", "Q1", C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK)
    s.do(L.Get(conn="a", handle="a.Q1", options=SYNC))  # "got" (the first is locked)
    s.do(L.Close(conn="b", handle="b.Q1"))
    s.do(L.Close(conn="a", handle="a.Q1"))
    s.do(L.Backout(conn="a"))  # the UOW outlives the handle
    s.do(L.Open(conn="b", handle="b2", queue="Q1", options=STD))
    assert [s.do(L.Get(conn="b", handle="b2")).message.body for _ in range(2)] == ["locked", "got"]


@covers("CORE-40")
def test_unknown_handles_and_connections():
    s = two_conns()
    assert s.do(L.Get(conn="a", handle="b.Q1")).rc == C.MQRC_HOBJ_ERROR
    assert s.do(L.Commit(conn="zz")).rc == C.MQRC_HCONN_ERROR
    with pytest.raises(HistoryError):
        s.do(L.Connect(conn="a"))


@covers("CORE-41")
def test_inquire_returns_defined_and_altered_values():
    s = Script(Q1={"MAXDEPTH": 7, "BOQNAME": "BACK"})
    s.do(L.AlterQueue(queue="Q1", attrs={"DEFPRTY": 3}))
    attrs = dict(s.do(L.InquireQueue(queue="Q1", names=["MAXDEPTH", "BOQNAME", "DEFPRTY", "MSGDLVSQ"])).attrs)
    assert attrs == {"MAXDEPTH": 7, "BOQNAME": "BACK", "DEFPRTY": 3, "MSGDLVSQ": C.MQMDS_PRIORITY}
    assert s.do(L.DefineQueue(queue="Q1")).rc == C.MQRCCF_OBJECT_ALREADY_EXISTS


@covers("CORE-42")
def test_backout_threshold_does_not_move_messages():
    s = two_conns(BOTHRESH=1, BOQNAME="BACK")
    s.put("a", "Q1", "poison")
    for _ in range(3):
        s.get("a", "Q1", SYNC)
        s.do(L.Backout(conn="a"))
    m = s.get("b", "Q1").message
    assert (m.body, m.backout_count) == ("poison", 3)
    assert "CORE-42" in s.last_rules


def test_model_never_mutates_its_input_state():
    s = two_conns()
    s.put("a", "Q1", "x")
    before = s.state.clone()
    s.branches(L.Get(conn="a", handle="a.Q1", options=SYNC))
    assert s.state == before


@covers("CORE-43")
def test_put1_to_an_unknown_queue_manager_fails():
    s = two_conns()
    obs = s.do(L.Put1(conn="a", queue="Q1", qmgr="ELSEWHERE", body="x"))
    assert obs.rc == C.MQRC_UNKNOWN_REMOTE_Q_MGR
    assert s.depth("Q1") == 0


@covers("CORE-44")
def test_context_set_on_put_is_returned_and_default_context_is_open():
    s = two_conns()
    ctx = L.MessageContext(user_id="alice", appl_identity_data="acct 7", put_appl_type=C.MQAT_JAVA,
                           put_appl_name="payroll")
    s.put("a", "Q1", "with", context=ctx, reply_to_qmgr="QM9")
    s.put("a", "Q1", "without")
    first, second = s.get("b", "Q1").message, s.get("b", "Q1").message
    assert (first.context, first.reply_to_qmgr) == (ctx, "QM9")
    assert second.context is None  # the queue manager's own context: any value is allowed


@covers("CORE-46", "CORE-47")
def test_a_cut_connection_ends_as_an_abnormal_end_and_its_calls_then_fail():
    s = two_conns()
    s.put("b", "Q1", "committed")
    s.put("a", "Q1", "uncommitted", options=C.MQPMO_SYNCPOINT)
    assert s.get("a", "Q1", SYNC).message.body == "committed"
    s.do(L.CutConnection(conn="a"))
    assert "CORE-46" in s.last_rules
    # the unit of work is backed out: its put is gone, its get is back with BackoutCount 1
    assert s.depth("Q1") == 1
    back = s.get("b", "Q1").message
    assert (back.body, back.backout_count) == ("committed", 1)
    # every later call on the connection fails, with either reason code MQ's topics allow
    assert {o.rc for o in s.allowed(L.Commit(conn="a"))} == {C.MQRC_CONNECTION_BROKEN, C.MQRC_HCONN_ERROR}
    assert {o.rc for o in s.allowed(L.Put(conn="a", handle="a.Q1", body="x"))} == {
        C.MQRC_CONNECTION_BROKEN, C.MQRC_HCONN_ERROR}
    # the program ends (no call), then connects again under the same name
    assert s.do(L.Disconnect(conn="a", abnormal=True)) == L.OK
    s.connect("a", "Q1")
    assert s.put("a", "Q1", "again").rc == 0


@covers("CORE-48")
def test_a_commit_cut_in_flight_may_or_may_not_have_happened():
    s = two_conns()
    s.put("b", "Q1", "old")
    assert s.get("a", "Q1", SYNC).message.body == "old"
    s.put("a", "Q1", "new", options=C.MQPMO_SYNCPOINT)
    s.do(L.CutConnection(conn="a", in_flight=True))
    branches = s.branches(L.Commit(conn="a"))
    assert {b.observation.rc for b in branches} == {C.MQRC_CONNECTION_BROKEN}
    assert all("CORE-48" in b.rules for b in branches)
    outcomes = set()
    for b in branches:
        t = Script()
        t.state = b.state
        t.do(L.Connect(conn="c"))
        t.do(L.Open(conn="c", handle="c.Q1", queue="Q1", options=STD))
        outcomes.add(tuple(t.body("c", "Q1") for _ in range(2)))
    # committed: only the new message is left; backed out: the old one is back, the new one gone
    assert outcomes == {("new", None), ("old", None)}
    # the connection is gone either way
    from reference_model import model
    assert {o.observation.rc for b in branches for o in model.step(b.state, L.Backout(conn="a"))} == {
        C.MQRC_CONNECTION_BROKEN, C.MQRC_HCONN_ERROR}


@covers("CORE-48")
def test_a_call_made_while_the_queue_manager_is_paused_gives_up_and_time_goes_on():
    s = two_conns()
    s.put("b", "Q1", "expiring", expiry=5)
    s.put("a", "Q1", "new", options=C.MQPMO_SYNCPOINT)
    s.do(L.PauseQueueManager(conn="a", tenths=10))
    assert s.state.clock == 10 and "a" in s.state.armed
    branches = s.branches(L.Commit(conn="a"))
    assert {b.observation.rc for b in branches} == {C.MQRC_CONNECTION_BROKEN} and len(branches) == 2


SEG = C.MQMF_SEGMENTATION_ALLOWED


@covers("CORE-49")
def test_a_message_longer_than_maxmsgl_is_refused_unless_it_may_be_segmented():
    s = two_conns(MAXMSGL=16)
    assert s.put("a", "Q1", "x" * 16).rc == C.MQRC_NONE
    assert s.put("a", "Q1", "x" * 17).rc == C.MQRC_MSG_TOO_BIG_FOR_Q
    assert "CORE-49" in s.last_rules
    z = Script(platform=C.PLATFORM_ZOS, Q1={"MAXMSGL": 16})
    z.connect("a", "Q1")
    # z/OS accepts the flag but does not segment
    assert z.put("a", "Q1", "x" * 32, msg_flags=SEG).rc == C.MQRC_MSG_TOO_BIG_FOR_Q


@covers("CORE-50")
def test_a_segmented_message_is_got_as_its_segments_in_order():
    s = two_conns(MAXMSGL=16)
    body = "".join(chr(ord("a") + i % 26) for i in range(48))
    # 48 bytes in pieces of 16 bytes at most and at least: one way
    assert s.put("a", "Q1", body, msg_flags=SEG).rc == C.MQRC_NONE
    assert s.depth("Q1") == 3
    got = [s.get("b", "Q1").message for _ in range(3)]
    assert [(m.body, m.offset, m.segment_status) for m in got] == [
        (body[:16], 0, C.MQSS_SEGMENT), (body[16:32], 16, C.MQSS_SEGMENT), (body[32:], 32, C.MQSS_LAST_SEGMENT)]
    assert s.put("a", "Q1", "short", msg_flags=SEG).rc == C.MQRC_NONE
    m = s.get("b", "Q1").message
    assert (m.segment_status, m.offset) == (C.MQSS_NOT_A_SEGMENT, 0)


@covers("CORE-50")
def test_where_segments_fall_is_the_queue_managers_choice():
    from reference_model.core import segmentations
    assert segmentations(48, 24) == ([(16, 16, 16), (24, 24)], [])
    assert segmentations(40, 20) == ([(20, 20)], [])
    assert segmentations(40, 16) == ([], [(16, 16, 8)])
    s = two_conns(MAXMSGL=24)
    branches = s.branches(L.Put(conn="a", handle="a.Q1", body="z" * 48, md=L.MessageDescriptor(msg_flags=SEG)))
    depths = sorted(len(b.state.queues["Q1"].messages) for b in branches)
    assert depths[0] == 2 and 3 in depths and all(b.observation.rc == 0 for b in branches)
    # a message that splits only with a short last piece: refusing it is allowed too
    s = two_conns(MAXMSGL=16)
    assert {b.observation.rc for b in s.branches(L.Put(conn="a", handle="a.Q1", body="q" * 20,
                                                       md=L.MessageDescriptor(msg_flags=SEG)))} == {
        C.MQRC_NONE, C.MQRC_MSG_TOO_BIG_FOR_Q}
    # a queue whose MAXMSGL is below the smallest segment cannot take it at all
    s = two_conns(MAXMSGL=10)
    assert s.put("a", "Q1", "q" * 20, msg_flags=SEG).rc == C.MQRC_MSG_TOO_BIG_FOR_Q



def _select(s: Script, conn: str, queue: str, options: int = NOSYNC, match: int = 3, msg_id: str = "",
            correl_id: str = "", pick=None) -> L.Observation:
    return s.do(L.GetMatching(conn=conn, handle=f"{conn}.{queue}", options=options, match_options=match,
                              msg_id=msg_id, correl_id=correl_id), pick=pick)


def _identified(s: Script) -> None:
    """Four messages on Q1: two replies to request r1 (one with its own MsgId), one to r2, one plain."""
    s.put("a", "Q1", "plain")
    s.put("a", "Q1", "r1-first", correl_id="r1")
    s.put("a", "Q1", "r2", correl_id="r2", msg_id="M2")
    s.put("a", "Q1", "r1-second", correl_id="r1", msg_id="M3", priority=9)


@covers("CORE-51")
def test_a_get_selects_by_correl_id_by_msg_id_or_by_both():
    s = two_conns(MSGDLVSQ=C.MQMDS_FIFO)
    _identified(s)
    assert _select(s, "b", "Q1", match=C.MQMO_MATCH_CORREL_ID, correl_id="r2").message.body == "r2"
    assert _select(s, "b", "Q1", match=C.MQMO_MATCH_MSG_ID, msg_id="M3").message.body == "r1-second"
    # both must match: r1 with MsgId M2 is nobody
    assert _select(s, "b", "Q1", match=C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID, msg_id="M2",
                   correl_id="r1").rc == C.MQRC_NO_MSG_AVAILABLE
    assert "CORE-51" in s.last_rules and "CORE-52" in s.last_rules
    # a field without its option is ignored: CorrelId r9 given, only MsgId asked for (none given: any)
    assert _select(s, "b", "Q1", match=C.MQMO_MATCH_MSG_ID, correl_id="r9", options=C.MQGMO_BROWSE_FIRST
                   | NOSYNC).message.body == "plain"
    # MQMI_NONE and MQCI_NONE with their options match any message
    assert _select(s, "b", "Q1", match=3).message.body == "plain"
    # the messages passed over are still there, in their order
    assert [s.body("b", "Q1") for _ in range(2)] == ["r1-first", None]


@covers("CORE-52")
def test_of_the_messages_selected_the_first_in_delivery_order_comes_first_and_browse_next_walks_on():
    s = two_conns()   # MSGDLVSQ(PRIORITY)
    _identified(s)
    # r1-second has the higher priority: it is first of the two r1 replies
    assert _select(s, "b", "Q1", options=C.MQGMO_BROWSE_FIRST | NOSYNC, match=C.MQMO_MATCH_CORREL_ID,
                   correl_id="r1").message.body == "r1-second"
    assert _select(s, "b", "Q1", options=C.MQGMO_BROWSE_NEXT | NOSYNC, match=C.MQMO_MATCH_CORREL_ID,
                   correl_id="r1").message.body == "r1-first"
    assert _select(s, "b", "Q1", options=C.MQGMO_BROWSE_NEXT | NOSYNC, match=C.MQMO_MATCH_CORREL_ID,
                   correl_id="r1").rc == C.MQRC_NO_MSG_AVAILABLE
    assert _select(s, "b", "Q1", match=C.MQMO_MATCH_CORREL_ID, correl_id="r9").rc == C.MQRC_NO_MSG_AVAILABLE
    assert s.depth("Q1") == 4


def test_a_selecting_get_discards_only_the_expired_messages_it_would_have_returned():
    """EXP-04 with selection: an expired message the get passes over because it does not match stays."""
    # z/OS without EXPRYINT: nothing removes expired messages in the background
    s = Script(C.PLATFORM_ZOS, Q1={"MSGDLVSQ": C.MQMDS_FIFO})
    s.connect("a", "Q1")
    s.connect("b", "Q1")
    s.put("a", "Q1", "old-other", correl_id="x", expiry=5)
    s.put("a", "Q1", "old-mine", correl_id="r1", expiry=5)
    s.put("a", "Q1", "mine", correl_id="r1")
    s.do(L.AdvanceClock(tenths=10))
    got = _select(s, "b", "Q1", match=C.MQMO_MATCH_CORREL_ID, correl_id="r1", pick=0)
    assert got.message.body == "mine"
    # old-mine was discarded on the way; old-other, never walked past, still counts
    assert s.depth("Q1") == 1


@covers("CORE-53")
def test_under_the_cursor_the_selection_is_ignored():
    s = two_conns(MSGDLVSQ=C.MQMDS_FIFO)
    _identified(s)
    assert s.get("b", "Q1", C.MQGMO_BROWSE_FIRST | NOSYNC).message.body == "plain"
    obs = _select(s, "b", "Q1", options=C.MQGMO_MSG_UNDER_CURSOR | NOSYNC, match=C.MQMO_MATCH_CORREL_ID,
                  correl_id="r2")
    assert obs.message.body == "plain" and "CORE-53" in s.last_rules


@covers("CORE-54")
def test_an_undefined_match_option_fails():
    s = two_conns()
    _identified(s)
    obs = _select(s, "b", "Q1", match=C.MQMO_MATCH_CORREL_ID | 256, correl_id="r1")
    assert obs.rc == C.MQRC_MATCH_OPTIONS_ERROR and s.last_rules == ("CORE-54",)
    assert s.depth("Q1") == 4
    # the fields the language has no field for are refused where the operation is made, not judged
    with pytest.raises(ValueError):
        L.GetMatching(conn="b", handle="b.Q1", match_options=C.MQMO_MATCH_GROUP_ID)


def test_on_zos_a_selecting_get_may_also_fail_for_want_of_an_index():
    s = Script(C.PLATFORM_ZOS, Q1={})
    s.connect("a", "Q1")
    s.put("a", "Q1", "r", correl_id="r1")
    op = L.GetMatching(conn="a", handle="a.Q1", options=NOSYNC, match_options=C.MQMO_MATCH_CORREL_ID,
                       correl_id="r1")
    assert {o.rc for o in s.allowed(op)} == {0, C.MQRC_MATCH_OPTIONS_ERROR}
    # nothing selected (MQCI_NONE): no index needed
    assert {o.rc for o in s.allowed(attrs.evolve(op, correl_id=""))} == {0}

def test_every_core_rule_has_a_hand_written_case():
    import tests.test_model_syncpoint  # noqa: F401 - its cases cover CORE-45 (BackoutCount across a restart)

    missing = [r.id for r in RULES.all("core") if r.id not in COVERED]
    assert missing == []
