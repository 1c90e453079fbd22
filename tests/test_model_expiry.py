"""Hand-written cases for the ``expiry`` rules (“Expiry (MQLONG)”), the document's examples included."""

import pytest

from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from reference_model.rules import RULES
import tests.test_model_dlq  # noqa: F401 - its cases cover EXP-09 and EXP-16 (expiry on the dead-letter queue)
from tests.modelkit import COVERED, Script, covers


NOSYNC, SYNC = C.MQGMO_NO_SYNCPOINT, C.MQGMO_SYNCPOINT
#: Rules about things the kit cannot express yet (remote queues, QSGs, DLQ handler, triggers).
NOT_YET_EXERCISABLE: set[str] = set()



def script(platform=C.PLATFORM_ZOS, **attrs):
    s = Script(platform=platform, APP=attrs, REPLY={}, XMIT={})
    s.connect("p", "APP", "REPLY", "XMIT")
    s.connect("g", "APP", "REPLY", "XMIT")
    return s


def advance(s, tenths):
    s.do(L.AdvanceClock(tenths=tenths))


@covers("EXP-01", "EXP-02", "EXP-03", "EXP-06")
def test_remaining_time_is_returned_and_never_zero():
    s = script()
    s.put("p", "APP", "a", expiry=50)
    s.put("p", "APP", "forever")
    advance(s, 20)
    assert s.get("g", "APP", C.MQGMO_BROWSE_FIRST).message.expiry == 30
    advance(s, 30)  # exactly elapsed: expired, never returned
    m = s.get("g", "APP").message
    assert (m.body, m.expiry) == ("forever", C.MQEI_UNLIMITED)


def tolerant(platform, tolerance=5):
    """A queue Q1 and connection ``a`` on a system whose expiry may be ``tolerance`` tenths off."""
    from reference_model import model
    s = Script(platform=platform)
    s.state = model.initial_state(platform, expiry_tolerance=tolerance)
    s.do(L.DefineQueue(queue="Q1"))
    s.connect("a", "Q1")
    return s


def test_tolerance_gives_ranges_and_either_way_near_expiry():
    s = tolerant(C.PLATFORM_ZOS)
    s.put("a", "Q1", "x", expiry=50)
    advance(s, 20)
    assert s.get("a", "Q1", C.MQGMO_BROWSE_FIRST).message.expiry == L.IntRange(lo=25, hi=35)
    advance(s, 28)  # 2 tenths left: within the tolerance
    assert {o.rc for o in s.allowed(L.Get(conn="a", handle="a.Q1"))} == {0, C.MQRC_NO_MSG_AVAILABLE}
    # got anyway, it may show what another clock measured: as little as 5 tenths below the exact 2
    got = [o.message.expiry for o in s.allowed(L.Get(conn="a", handle="a.Q1", options=C.MQGMO_BROWSE_FIRST))
           if o.message is not None]
    assert got == [L.IntRange(lo=-3, hi=7)]


def test_exact_time_never_returns_an_expiry_below_one():
    s = tolerant(C.PLATFORM_ZOS, tolerance=0)
    s.put("a", "Q1", "x", expiry=5)
    advance(s, 4)
    assert s.get("a", "Q1", C.MQGMO_BROWSE_FIRST).message.expiry == 1


def test_within_the_tolerance_a_message_may_already_be_gone_from_the_depth():
    """As a get may find it expired, so may the queue manager's own removal (distributed)."""
    s = tolerant(C.PLATFORM_DISTRIBUTED)
    s.put("a", "Q1", "x", expiry=50)
    s.put("a", "Q1", "y")
    advance(s, 10)   # 40 tenths left: not near its expiry
    depths = {dict(o.attrs)["CURDEPTH"] for o in s.allowed(L.InquireQueue(queue="Q1", names=["CURDEPTH"]))}
    assert depths == {2}
    advance(s, 38)   # 2 tenths left: within the tolerance
    depths = {dict(o.attrs)["CURDEPTH"] for o in s.allowed(L.InquireQueue(queue="Q1", names=["CURDEPTH"]))}
    assert depths == {1, 2}


@covers("EXP-04", "EXP-11", "EXP-26")
def test_fifo_example_get_discards_every_expired_message_up_to_first_unexpired():
    s = script(MSGDLVSQ=C.MQMDS_FIFO)
    for body, exp in [("e1", 5), ("e2", 5), ("live", C.MQEI_UNLIMITED), ("e3", 5)]:
        s.put("p", "APP", body, expiry=exp)
    advance(s, 10)
    assert s.depth("APP") == 4  # expired but not discarded: still counted (z/OS, no EXPRYINT)
    assert s.body("g", "APP") == "live"
    assert "EXP-04" in s.last_rules
    assert s.depth("APP") == 1  # e3 remains: it is after the first unexpired message
    distributed = script(platform=C.PLATFORM_DISTRIBUTED)
    distributed.put("p", "APP", "e", expiry=5)
    advance(distributed, 10)
    depths = sorted(dict(o.attrs)["CURDEPTH"] for o in distributed.allowed(L.InquireQueue(queue="APP", names=["CURDEPTH"])))
    assert depths == [0, 1]  # no documented removal time on distributed platforms


@covers("EXP-05")
def test_priority_example_discards_higher_and_earlier_equal_priority_only():
    s = script()
    for body, prio, exp in [("hi-expired", 7, 5), ("eq-early-expired", 3, 5), ("eq-live", 3, -1),
                            ("eq-late-expired", 3, 5), ("low-expired", 1, 5)]:
        s.put("p", "APP", body, priority=prio, expiry=exp)
    advance(s, 10)
    assert s.body("g", "APP") == "eq-live"
    assert "EXP-05" in s.last_rules
    assert s.depth("APP") == 2  # eq-late-expired and low-expired remain


@covers("EXP-08", "EXP-12", "EXP-13")
def test_reports_at_discard_outside_the_unit_of_work():
    s = script()
    body = "b" * 150
    s.put("p", "APP", body, expiry=5, report=C.MQRO_EXPIRATION_WITH_DATA, reply_to_q="REPLY", msg_id="ID1")
    s.put("p", "APP", "plain", expiry=5, reply_to_q="REPLY", msg_id="ID2")
    advance(s, 10)
    assert s.get("g", "REPLY").rc == C.MQRC_NO_MSG_AVAILABLE  # eligible is not discarded
    assert s.get("g", "APP", SYNC).rc == C.MQRC_NO_MSG_AVAILABLE  # the walk discards both
    s.do(L.Backout(conn="g"))  # not part of the unit of work
    assert s.depth("APP") == 0
    report = s.get("g", "REPLY").message
    assert (report.msg_type, report.feedback, report.correl_id) == (C.MQMT_REPORT, C.MQFB_EXPIRATION, "ID1")
    assert report.body == body[:100]
    assert s.get("g", "REPLY").rc == C.MQRC_NO_MSG_AVAILABLE  # none for the message without the option


def test_report_with_full_data_and_without_data():
    s = script()
    s.put("p", "APP", "full", expiry=1, report=C.MQRO_EXPIRATION_WITH_FULL_DATA, reply_to_q="REPLY", msg_id="A")
    s.put("p", "APP", "none", expiry=1, report=C.MQRO_EXPIRATION, reply_to_q="REPLY", msg_id="B")
    advance(s, 5)
    s.get("g", "APP")
    assert [s.get("g", "REPLY").message.body for _ in range(2)] == ["full", ""]


@covers("EXP-10")
def test_zero_or_negative_expiry_fails_without_report():
    s = script()
    for bad in (0, -2):
        assert s.put("p", "APP", "x", expiry=bad, report=C.MQRO_EXPIRATION, reply_to_q="REPLY").rc == C.MQRC_EXPIRY_ERROR
    assert s.depth("REPLY") == 0 and s.depth("APP") == 0


@covers("EXP-14")
def test_backed_out_message_keeps_ageing_and_may_expire():
    s = script()
    s.put("p", "APP", "x", expiry=20)
    s.get("g", "APP", SYNC)
    advance(s, 15)
    s.do(L.Backout(conn="g"))
    assert s.get("g", "APP", C.MQGMO_BROWSE_FIRST).message.expiry == 5
    advance(s, 5)
    assert s.get("g", "APP").rc == C.MQRC_NO_MSG_AVAILABLE


@covers("EXP-15")
def test_locked_message_that_expires_gives_no_msg_under_cursor():
    s = script()
    s.put("p", "APP", "x", expiry=10)
    s.get("g", "APP", C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK)
    advance(s, 10)
    assert {o.rc for o in s.allowed(L.Get(conn="g", handle="g.APP", options=C.MQGMO_MSG_UNDER_CURSOR))} == {
        C.MQRC_NO_MSG_UNDER_CURSOR}


@covers("EXP-19", "EXP-20", "EXP-21", "EXP-22")
def test_transmission_header_two_expiry_fields():
    s = script()
    xmit = dict(format=C.MQFMT_XMIT_Q_HEADER)
    put = lambda body, outer, inner: s.do(L.Put(conn="p", handle="p.XMIT", body=body,  # noqa: E731
                                                  md=L.MessageDescriptor(expiry=outer, **xmit),
                                                  xmit_header=L.XmitHeader(expiry=inner)))
    assert put("bad-inner", 30, 0).rc == C.MQRC_EXPIRY_ERROR
    assert put("same", 30, 30).rc == 0
    # differing valid values: accepted, or rejected as "inconsistent" (undefined): both allowed
    op = L.Put(conn="p", handle="p.XMIT", body="diff", md=L.MessageDescriptor(expiry=40, **xmit),
               xmit_header=L.XmitHeader(expiry=10))
    assert sorted(o.rc for o in s.allowed(op)) == [0, C.MQRC_EXPIRY_ERROR]
    s.do(op, pick=[o.rc for o in s.allowed(op)].index(0))
    advance(s, 20)
    same = s.get("g", "XMIT").message
    assert (same.expiry, same.xmit_header.expiry) == (10, 10)  # both decremented
    diff = s.get("g", "XMIT").message  # inner elapsed, outer not: not discarded, inner is zero
    assert (diff.body, diff.expiry, diff.xmit_header.expiry) == ("diff", 20, 0)


@covers("EXP-23", "EXP-24")
def test_zos_scans_discard_without_a_get():
    s = script()
    s.put("p", "APP", "x", expiry=5, report=C.MQRO_EXPIRATION, reply_to_q="REPLY", msg_id="ID")
    advance(s, 10)
    s.do(L.RefreshExpiry(queues="APP*"))
    assert s.depth("APP") == 0 and s.get("g", "REPLY").message.correl_id == "ID"
    s.do(L.AlterQueueManager(attrs={"EXPRYINT": 1}))
    s.put("p", "APP", "y", expiry=5)
    advance(s, 10)
    assert sorted(dict(o.attrs)["CURDEPTH"] for o in s.allowed(L.InquireQueue(queue="APP", names=["CURDEPTH"]))) == [0, 1]


def test_every_expiry_rule_has_a_case_or_says_why_not():
    missing = [r.id for r in RULES.all("expiry") if r.id not in COVERED and r.id not in NOT_YET_EXERCISABLE]
    assert missing == []
    for rid in NOT_YET_EXERCISABLE:
        assert "not exercised" in RULES[rid].note.lower()


@covers("EXP-25")
def test_in_a_queue_sharing_group_the_shared_queues_are_scanned_by_a_member_each_its_own_private_ones():
    s = Script(platform=C.PLATFORM_ZOS)
    s.do(L.DefineQueueSharingGroup(qmgrs=("QM2",)))
    s.do(L.DefineQueue(queue="SHARED", attrs={"QSGDISP": C.MQQSGD_SHARED}))
    s.do(L.DefineQueue(queue="MINE"))
    s.connect("p", "SHARED", "MINE")
    s.put("p", "SHARED", "s", expiry=5)
    s.put("p", "MINE", "m", expiry=5)
    s.do(L.AlterQueueManager(attrs={"EXPRYINT": 1}, qmgr="QM2"))
    assert "EXP-25" in s.last_rules
    advance(s, 30)
    # QM2 scans: the shared queue's expired message may be gone; this queue manager's own is not scanned
    assert sorted(dict(o.attrs)["CURDEPTH"] for o in s.allowed(L.InquireQueue(queue="SHARED", names=["CURDEPTH"]))) \
        == [0, 1]
    assert s.depth("MINE") == 1
    # without a member's EXPRYINT nobody scans
    t = Script(platform=C.PLATFORM_ZOS)
    t.do(L.DefineQueueSharingGroup(qmgrs=("QM2",)))
    t.do(L.DefineQueue(queue="SHARED", attrs={"QSGDISP": C.MQQSGD_SHARED}))
    t.connect("p", "SHARED")
    t.put("p", "SHARED", "s", expiry=5)
    advance(t, 30)
    assert t.depth("SHARED") == 1


def reporting(platform=C.PLATFORM_DISTRIBUTED):
    """Q1 holds a message asking for an expiration report to R, expired by now."""
    s = Script(platform=platform, Q1={}, R={})
    s.connect("a", "Q1", "R")
    s.put("a", "Q1", "x", expiry=5, report=C.MQRO_EXPIRATION, reply_to_q="R", msg_id="X1")
    s.do(L.AdvanceClock(tenths=10))
    return s


@covers("EXP-26")
def test_a_message_removed_in_the_background_sends_its_report_in_the_same_branch():
    s = reporting()
    depths = {}
    for b in s.branches(L.InquireQueue(queue="Q1", names=["CURDEPTH"])):
        report = model.step(b.state, L.Get(conn="a", handle="a.R", options=C.MQGMO_BROWSE_FIRST))
        depths[dict(b.observation.attrs)["CURDEPTH"]] = {o.observation.message.correl_id
                                                         if o.observation.message else None for o in report}
    # gone: its report is on R, always; still there: it may yet go, and its report with it
    assert depths == {1: {None, "X1"}, 0: {"X1"}}


def test_the_report_may_arrive_before_anything_looks_at_the_expired_message():
    s = reporting()
    seen = {o.message.correl_id if o.message else None
            for o in s.allowed(L.Get(conn="a", handle="a.R", options=C.MQGMO_BROWSE_FIRST))}
    assert seen == {None, "X1"}
    # on z/OS without an expiry interval nothing is removed in the background
    z = reporting(C.PLATFORM_ZOS)
    assert [o.rc for o in z.allowed(L.Get(conn="a", handle="a.R"))] == [C.MQRC_NO_MSG_AVAILABLE]


@covers("EXP-17")
def test_a_trigger_message_is_got_with_an_unlimited_expiry_and_says_so():
    from tests.test_model_trigger import setup

    s = setup(TRIGTYPE=C.MQTT_FIRST)
    s.put("p", "APP", "a")
    m = s.do(L.Get(conn="p", handle="watch", options=C.MQGMO_BROWSE_FIRST))
    assert m.message.expiry == C.MQEI_UNLIMITED and "EXP-17" in s.last_rules


def remote_script(platform=C.PLATFORM_DISTRIBUTED):
    """Transmission queue XMIT, remote definition FAR.ORDERS through it, and XMIT named as queue manager XMIT."""
    s = Script(platform=platform, REPLY={}, XMIT={"USAGE": C.MQUS_TRANSMISSION})
    s.do(L.DefineRemoteQueue(queue="FAR.ORDERS", rname="ORDERS", rqmname="FAR", xmitq="XMIT"))
    s.connect("p", "REPLY", "XMIT")
    return s


@covers("EXP-18")
@pytest.mark.parametrize("named", [dict(queue="FAR.ORDERS"), dict(queue="ORDERS", qmgr="XMIT")])
def test_a_put_to_a_remote_queue_sets_both_expiry_fields(named):
    s = remote_script()
    md = L.MessageDescriptor(expiry=50, msg_id="R1", format=C.MQFMT_STRING)
    assert s.do(L.Put1(conn="p", body="to far", md=md, **named)).rc == 0
    assert "EXP-18" in s.last_rules
    advance(s, 10)
    m = s.get("p", "XMIT").message
    assert (m.body, m.format, m.expiry, m.xmit_header.expiry) == ("to far", C.MQFMT_XMIT_Q_HEADER, 40, 40)


def test_a_remote_queue_whose_transmission_queue_is_missing_has_no_route():
    s = Script(Q={})
    s.do(L.DefineRemoteQueue(queue="FAR.ORDERS", rname="ORDERS", rqmname="FAR"))
    s.do(L.Connect(conn="p"))
    put = L.Put1(conn="p", queue="FAR.ORDERS", body="x", md=L.MessageDescriptor())
    assert s.do(put).rc == C.MQRC_UNKNOWN_REMOTE_Q_MGR
    # a queue manager named by a queue that is not a transmission queue is no route either
    assert s.do(L.Put1(conn="p", queue="ORDERS", qmgr="Q", body="x", md=L.MessageDescriptor())).rc == \
        C.MQRC_UNKNOWN_REMOTE_Q_MGR


@covers("EXP-07")
def test_a_message_for_a_remote_queue_may_expire_on_the_transmission_queue():
    s = remote_script()
    md = L.MessageDescriptor(expiry=5, msg_id="R1", report=C.MQRO_EXPIRATION, reply_to_q="REPLY")
    s.do(L.Put1(conn="p", queue="FAR.ORDERS", body="late", md=md))
    advance(s, 10)
    obs = s.get("p", "XMIT")
    assert obs.message is None and "EXP-07" in s.last_rules
    report = s.get("p", "REPLY").message
    assert report.feedback == C.MQFB_EXPIRATION and report.correl_id == "R1"
