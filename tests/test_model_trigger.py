"""Hand-written cases for the ``trigger`` rules (“Conditions for a trigger event”)."""

import pytest

from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from reference_model.rules import RULES
from tests.modelkit import COVERED, Script, covers

NOT_YET_EXERCISABLE: set[str] = set()
FIRST, EVERY, DEPTH = C.MQTT_FIRST, C.MQTT_EVERY, C.MQTT_DEPTH
APP_ATTRS = {"TRIGGER": C.MQTC_ON, "PROCESS": "PROC", "INITQ": "INIT", "TRIGDATA": "data"}


def setup(platform=C.PLATFORM_DISTRIBUTED, monitor=True, **attrs):
    s = Script(platform=platform, INIT={})
    s.do(L.DefineProcess(process="PROC", appl_type=C.MQAT_UNIX, appl_id="/bin/server", env_data="e", user_data="u"))
    s.do(L.DefineQueue(queue="APP", attrs={**APP_ATTRS, **attrs}))
    s.connect("p", "APP", options=C.MQOO_OUTPUT)
    if monitor:
        s.do(L.Open(conn="p", handle="monitor", queue="INIT", options=C.MQOO_INPUT_SHARED))
    s.do(L.Open(conn="p", handle="watch", queue="INIT", options=C.MQOO_BROWSE))
    return s


def triggers(s) -> int:
    return s.depth("INIT")


@covers("TRIG-01", "TRIG-03", "TRIG-29", "TRIG-30", "TRIG-10", "TRIG-13", "TRIG-14")
def test_first_triggers_on_the_first_message_with_the_process_fields():
    s = setup(TRIGTYPE=FIRST)
    s.put("p", "APP", "a")
    s.put("p", "APP", "b")
    assert triggers(s) == 1
    m = s.do(L.Get(conn="p", handle="monitor")).message
    assert m.trigger == L.TriggerMessage(q_name="APP", process_name="PROC", trigger_data="data",
                                         appl_type=C.MQAT_UNIX, appl_id="/bin/server", env_data="e", user_data="u")
    assert (m.format, m.persistence, m.expiry) == (C.MQFMT_TRIGGER, C.MQPER_NOT_PERSISTENT, C.MQEI_UNLIMITED)
    s.do(L.AlterQueue(queue="APP", attrs={"TRIGGER": C.MQTC_OFF}))
    s.put("p", "APP", "c")
    assert triggers(s) == 0


def test_every_and_depth_counts():
    s = setup(TRIGTYPE=EVERY)
    for b in "abc":
        s.put("p", "APP", b)
    assert triggers(s) == 3
    d = setup(TRIGTYPE=DEPTH, TRIGDPTH=3)
    d.put("p", "APP", "a")
    d.put("p", "APP", "b")
    assert triggers(d) == 0
    d.put("p", "APP", "c")
    assert triggers(d) == 1


SEG = C.MQMF_SEGMENTATION_ALLOWED


@covers("TRIG-27")
@pytest.mark.parametrize("ttype,depth,put_first,want", [
    (EVERY, 1, 0, 1),      # three segments, one event: not three trigger messages
    (FIRST, 1, 0, 1),
    (FIRST, 1, 1, 0),      # the queue was not empty: no event (the trigger interval has not passed)
    (DEPTH, 3, 0, 1),      # the segments take the depth from 0 past 3 at once: one event
    (DEPTH, 5, 0, 0),      # 3 segments do not reach 5
    (DEPTH, 4, 1, 1),      # 1 + 3 reaches 4
])
def test_a_segmented_put_is_one_trigger_event(ttype, depth, put_first, want):
    s = setup(TRIGTYPE=ttype, TRIGDPTH=depth, MAXMSGL=16)
    for i in range(put_first):
        s.put("p", "APP", f"m{i}")
    before = triggers(s)
    assert s.put("p", "APP", "x" * 48, msg_flags=SEG).rc == C.MQRC_NONE
    assert "TRIG-27" in s.last_rules
    assert s.depth("APP") == put_first + 3
    assert triggers(s) - before == want


@covers("TRIG-27")
def test_segments_count_one_by_one_once_on_the_queue():
    # DEPTH 2 with three segments on the queue: after the trigger, TriggerControl goes back on and a server
    # that gets one segment and closes leaves two, which is TriggerDepth: the close triggers (condition 12)
    s = setup(TRIGTYPE=DEPTH, TRIGDPTH=2, MAXMSGL=16)
    s.put("p", "APP", "y" * 48, msg_flags=SEG)
    assert triggers(s) == 1
    s.do(L.Get(conn="p", handle="monitor"))
    s.do(L.AlterQueue(queue="APP", attrs={"TRIGGER": C.MQTC_ON}))   # condition 13: 3 >= 2, a trigger
    assert triggers(s) == 1
    s.do(L.Get(conn="p", handle="monitor"))
    s.do(L.Open(conn="p", handle="server", queue="APP", options=C.MQOO_INPUT_SHARED))
    assert s.do(L.Get(conn="p", handle="server")).message.segment_status == C.MQSS_SEGMENT
    s.do(L.AlterQueue(queue="APP", attrs={"TRIGGER": C.MQTC_ON}))
    s.do(L.Close(conn="p", handle="server"))
    assert triggers(s) == 1   # two segments left: TriggerDepth reached at the close
    s.do(L.Get(conn="p", handle="monitor"))
    s.do(L.Open(conn="p", handle="server", queue="APP", options=C.MQOO_INPUT_SHARED))
    s.do(L.Get(conn="p", handle="server"))
    s.do(L.AlterQueue(queue="APP", attrs={"TRIGGER": C.MQTC_ON}))
    s.do(L.Close(conn="p", handle="server"))
    assert triggers(s) == 0   # one segment left, below TriggerDepth


def group(**attrs):
    """z/OS, the queue manager under test and QM2 in a queue-sharing group; APP shared, an initiation queue
    INIT on each, each with its trigger monitor (connections m1 and m2)."""
    s = Script(platform=C.PLATFORM_ZOS, INIT={})
    s.do(L.DefineQueueSharingGroup(qmgrs=("QM2",)))
    s.do(L.DefineQueue(queue="INIT", qmgr="QM2"))
    s.do(L.DefineProcess(process="PROC", appl_type=C.MQAT_UNIX, appl_id="/bin/server"))
    s.do(L.DefineQueue(queue="APP", attrs={**APP_ATTRS, "QSGDISP": C.MQQSGD_SHARED, **attrs}))
    for conn, qm in (("p", ""), ("m1", ""), ("m2", "QM2"), ("s2", "QM2"), ("s1", "")):
        s.do(L.Connect(conn=conn, qmgr=qm))
    s.do(L.Open(conn="p", handle="p.APP", queue="APP", options=C.MQOO_OUTPUT))
    s.do(L.Open(conn="m1", handle="m1.INIT", queue="INIT", options=C.MQOO_INPUT_SHARED))
    s.do(L.Open(conn="m2", handle="m2.INIT", queue="INIT", options=C.MQOO_INPUT_SHARED))
    return s


def initiated(s) -> tuple[int, int]:
    """Trigger messages on the initiation queue of the queue manager under test, and of QM2."""
    return (s.depth("INIT"), dict(s.do(L.InquireQueue(queue="INIT", names=["CURDEPTH"], qmgr="QM2")).attrs)["CURDEPTH"])


def test_a_shared_queue_triggers_each_queue_manager_for_its_own_initiation_queue():
    s = group(TRIGTYPE=FIRST)
    s.put("p", "APP", "a")
    assert initiated(s) == (1, 1)
    m = s.do(L.Get(conn="m2", handle="m2.INIT")).message
    assert m.trigger.q_name == "APP"
    # DEPTH: each member judges the event as it stood, then TriggerControl is off for all
    d = group(TRIGTYPE=DEPTH, TRIGDPTH=1)
    d.put("p", "APP", "a")
    assert initiated(d) == (1, 1)
    assert dict(d.do(L.InquireQueue(queue="APP", names=["TRIGGER"])).attrs)["TRIGGER"] == C.MQTC_OFF


@covers("TRIG-05")
def test_a_shared_queue_counts_committed_messages_only():
    s = group(TRIGTYPE=FIRST)
    s.do(L.Open(conn="s1", handle="s1.APP", queue="APP", options=C.MQOO_OUTPUT))
    s.put("p", "APP", "a")
    assert initiated(s) == (1, 1)
    for conn in ("m1", "m2"):
        s.do(L.Get(conn=conn, handle=f"{conn}.INIT"))
    s.do(L.Open(conn="s2", handle="s2.APP", queue="APP", options=C.MQOO_INPUT_SHARED))
    assert s.do(L.Get(conn="s2", handle="s2.APP")).message.body == "a"
    s.do(L.Close(conn="s2", handle="s2.APP"))   # empty again; the trigger interval has not passed since
    # an uncommitted put: it does not count, and whether it is an event itself is not said
    options = [b for b in s.branches(L.Put(conn="s1", handle="s1.APP", body="u", options=C.MQPMO_SYNCPOINT))]
    assert len(options) > 1 and all("TRIG-05" in b.rules for b in options)
    quiet = [i for i, b in enumerate(options) if not b.state.conns["s1"].pending_triggers]
    s.do(L.Put(conn="s1", handle="s1.APP", body="u", options=C.MQPMO_SYNCPOINT), pick=quiet[0])
    s.put("p", "APP", "c")           # the queue held no committed message: FIRST, on both
    assert "TRIG-05" in s.last_rules
    assert initiated(s) == (1, 1)


@covers("TRIG-08")
def test_open_input_count_is_per_queue_manager_and_exclusive_input_stops_every_trigger():
    s = group(TRIGTYPE=FIRST)
    s.do(L.Open(conn="s2", handle="s2.APP", queue="APP", options=C.MQOO_INPUT_SHARED))
    assert dict(s.do(L.InquireQueue(queue="APP", names=["IPPROCS"], qmgr="QM2")).attrs)["IPPROCS"] == 1
    assert dict(s.do(L.InquireQueue(queue="APP", names=["IPPROCS"])).attrs)["IPPROCS"] == 0
    s.put("p", "APP", "a")
    assert initiated(s) == (1, 0)    # QM2 has it open for input; the queue manager under test does not
    s.do(L.Get(conn="m1", handle="m1.INIT"))
    s.do(L.Close(conn="s2", handle="s2.APP"))   # QM2's only server closes: condition 12 there
    assert initiated(s) == (0, 1)
    s.do(L.Get(conn="m2", handle="m2.INIT"))
    s.do(L.Open(conn="s1", handle="s1.APP", queue="APP", options=C.MQOO_INPUT_EXCLUSIVE))
    assert s.do(L.Get(conn="s1", handle="s1.APP")).message.body == "a"   # empty again
    s.do(L.Open(conn="s2", handle="s2.APP2", queue="APP", options=C.MQOO_OUTPUT))
    s.do(L.Put(conn="s2", handle="s2.APP2", body="b"))
    assert initiated(s) == (0, 0)    # open exclusively on one queue manager: no trigger on any


@covers("TRIG-07")
def test_while_another_queue_manager_has_it_open_for_shared_input_a_queue_is_first_with_priority_zero():
    s = group(TRIGTYPE=DEPTH, TRIGDPTH=3, TRIGMPRI=5)
    s.put("p", "APP", "low", priority=0)
    assert initiated(s) == (0, 0)    # DEPTH 3, and below TriggerMsgPriority
    s.do(L.Open(conn="s2", handle="s2.APP", queue="APP", options=C.MQOO_INPUT_SHARED | C.MQOO_BROWSE))
    s.do(L.Get(conn="s2", handle="s2.APP"))  # QM2's server takes it: the queue is empty again
    s.put("p", "APP", "low again", priority=0)
    assert "TRIG-07" in s.last_rules
    assert initiated(s) == (1, 0)    # here FIRST and priority 0; on QM2 its own server has it open


@covers("TRIG-28")
def test_depth_trigger_turns_trigger_control_off():
    s = setup(TRIGTYPE=DEPTH, TRIGDPTH=1)
    s.put("p", "APP", "a")
    assert dict(s.do(L.InquireQueue(queue="APP", names=["TRIGGER"])).attrs)["TRIGGER"] == C.MQTC_OFF
    s.put("p", "APP", "b")
    assert triggers(s) == 1


@covers("TRIG-02", "TRIG-25", "TRIG-24")
def test_hundred_low_priority_messages_then_one_high():
    s = setup(TRIGTYPE=FIRST, TRIGMPRI=5)
    for i in range(100):
        s.put("p", "APP", f"low{i}", priority=4)
    assert triggers(s) == 0
    s.put("p", "APP", "high", priority=5)
    assert triggers(s) == 1
    fifo = setup(TRIGTYPE=EVERY, TRIGMPRI=5, MSGDLVSQ=C.MQMDS_FIFO, DEFPRTY=4)
    fifo.put("p", "APP", "high", priority=9)  # compared as DefPriority 4
    assert triggers(fifo) == 0


@covers("TRIG-04")
def test_uncommitted_messages_count_on_non_shared_queues():
    s = setup(TRIGTYPE=FIRST)
    s.put("p", "APP", "a", options=C.MQPMO_SYNCPOINT)
    s.put("p", "APP", "b")  # the uncommitted one already made the queue non-empty
    assert triggers(s) == 0
    s.do(L.Commit(conn="p"))
    assert triggers(s) == 1


@covers("TRIG-15")
@pytest.mark.parametrize("ttype, delivered_on_backout", [(FIRST, True), (DEPTH, True), (EVERY, False)])
def test_trigger_from_a_unit_of_work_waits_for_its_end(ttype, delivered_on_backout):
    s = setup(TRIGTYPE=ttype, TRIGDPTH=1)
    s.put("p", "APP", "a", options=C.MQPMO_SYNCPOINT)
    assert triggers(s) == 0
    s.do(L.Backout(conn="p"))
    assert triggers(s) == (1 if delivered_on_backout else 0)


@covers("TRIG-06")
def test_first_and_depth_need_the_queue_closed_for_input():
    s = setup(TRIGTYPE=FIRST)
    s.do(L.Open(conn="p", handle="server", queue="APP", options=C.MQOO_INPUT_SHARED))
    s.put("p", "APP", "a")
    assert triggers(s) == 0


@covers("TRIG-09")
def test_get_inhibited_application_queue():
    z = setup(platform=C.PLATFORM_ZOS, TRIGTYPE=FIRST, GET=C.MQQA_GET_INHIBITED)
    z.put("p", "APP", "a")
    assert triggers(z) == 0
    d = setup(TRIGTYPE=FIRST, GET=C.MQQA_GET_INHIBITED)
    op = L.Put(conn="p", handle="p.APP", body="a")
    assert len(d.branches(op)) == 2  # undocumented off z/OS: either way


def test_transmission_queue_with_blank_process():
    s = setup(TRIGTYPE=FIRST)
    s.do(L.DefineQueue(queue="XQ", attrs={"USAGE": C.MQUS_TRANSMISSION, "TRIGGER": 1, "INITQ": "INIT",
                                          "TRIGDATA": "CHANNEL"}))
    s.do(L.Open(conn="p", handle="p.XQ", queue="XQ", options=C.MQOO_OUTPUT))
    s.put("p", "XQ", "x")
    m = s.do(L.Get(conn="p", handle="monitor")).message
    assert m.trigger == L.TriggerMessage(q_name="XQ", trigger_data="CHANNEL", appl_type=C.MQAT_UNKNOWN)
    s.do(L.DefineQueue(queue="NOPROC", attrs={"TRIGGER": 1, "INITQ": "INIT"}))
    s.do(L.Open(conn="p", handle="p.NOPROC", queue="NOPROC", options=C.MQOO_OUTPUT))
    s.put("p", "NOPROC", "y")  # blank process on a normal queue: no trigger
    assert triggers(s) == 0


@covers("TRIG-11", "TRIG-12", "TRIG-21", "TRIG-23")
def test_initiation_queue_state_and_monitor():
    s = setup(monitor=False, TRIGTYPE=FIRST)
    s.put("p", "APP", "a")
    assert triggers(s) == 0  # no monitor (condition 8)
    s.do(L.Open(conn="p", handle="monitor", queue="INIT", options=C.MQOO_INPUT_SHARED))
    assert triggers(s) == 1  # condition 13, case 3
    s.do(L.Get(conn="p", handle="monitor"))
    s.do(L.AlterQueue(queue="INIT", attrs={"PUT": C.MQQA_PUT_INHIBITED}))
    s.do(L.DefineQueue(queue="APP2", attrs={**APP_ATTRS, "TRIGTYPE": FIRST}))
    s.do(L.Open(conn="p", handle="p.APP2", queue="APP2", options=C.MQOO_OUTPUT))
    s.put("p", "APP2", "b")
    assert triggers(s) == 0  # initiation queue put-inhibited (condition 7)
    s.do(L.AlterQueue(queue="INIT", attrs={"PUT": C.MQQA_PUT_ALLOWED}))
    assert triggers(s) == 2  # condition 13, case 1: one per qualifying queue


@covers("TRIG-16", "TRIG-17")
def test_first_on_a_non_empty_queue_after_the_trigger_interval():
    s = setup(TRIGTYPE=FIRST)
    s.do(L.AlterQueueManager(attrs={"TRIGINT": 1000}))
    s.put("p", "APP", "a")
    s.put("p", "APP", "b")
    assert triggers(s) == 1
    s.do(L.AdvanceClock(tenths=10))
    s.put("p", "APP", "c")
    assert triggers(s) == 2
    s.do(L.Restart())
    s.connect("q", "APP", options=C.MQOO_OUTPUT)
    s.do(L.Open(conn="q", handle="mon", queue="INIT", options=C.MQOO_INPUT_SHARED))
    assert triggers(s) == 0  # trigger messages are non-persistent (and the queue's messages too)


@covers("TRIG-18", "TRIG-19")
def test_close_by_the_only_server():
    s = setup(TRIGTYPE=FIRST)
    s.do(L.Open(conn="p", handle="server", queue="APP", options=C.MQOO_INPUT_SHARED))
    s.put("p", "APP", "a")
    s.put("p", "APP", "b")
    s.do(L.Get(conn="p", handle="server", options=C.MQGMO_NO_SYNCPOINT))
    s.do(L.Close(conn="p", handle="server"))
    assert triggers(s) == 1  # a message is left (note a: the loop)
    t = setup(TRIGTYPE=FIRST)
    t.do(L.Open(conn="p", handle="server", queue="APP", options=C.MQOO_INPUT_SHARED))
    t.put("p", "APP", "only")
    t.do(L.Get(conn="p", handle="server", options=C.MQGMO_SYNCPOINT))
    t.do(L.Close(conn="p", handle="server"))  # closed before backing out: otherwise empty
    assert triggers(t) == 0
    t.do(L.Backout(conn="p"))
    assert triggers(t) == 0


@covers("TRIG-20", "TRIG-22", "TRIG-26")
def test_mqset_changes_trigger_once_even_for_every():
    s = setup(TRIGTYPE=EVERY, TRIGGER=C.MQTC_OFF)
    for b in "abc":
        s.put("p", "APP", b)
    s.do(L.AlterQueue(queue="APP", attrs={"TRIGGER": C.MQTC_ON}))
    assert triggers(s) == 1
    g = setup(platform=C.PLATFORM_ZOS, TRIGTYPE=FIRST, TRIGGER=C.MQTC_OFF, GET=C.MQQA_GET_INHIBITED)
    g.put("p", "APP", "a")
    g.do(L.AlterQueue(queue="APP", attrs={"TRIGGER": C.MQTC_ON}))
    assert triggers(g) == 0  # still get-inhibited (condition 5)
    g.do(L.AlterQueue(queue="APP", attrs={"GET": C.MQQA_GET_ALLOWED}))
    assert triggers(g) == 1  # condition 13, case 2


def test_every_trigger_rule_has_a_case_or_says_why_not():
    missing = [r.id for r in RULES.all("trigger") if r.id not in COVERED and r.id not in NOT_YET_EXERCISABLE]
    assert missing == []
    for rid in NOT_YET_EXERCISABLE:
        assert "not exercised" in RULES[rid].note.lower()


def test_a_message_removed_in_the_background_no_longer_counts_for_depth_triggering():
    """Depth, triggering and reports agree within a branch: once the depth says an expired message
    has gone (EXP-26), the next put finds one message on the queue, not TriggerDepth."""
    s = setup(TRIGTYPE=DEPTH, TRIGDPTH=2)
    s.put("p", "APP", "old", expiry=5)
    s.do(L.AdvanceClock(tenths=10))
    query = L.InquireQueue(queue="APP", names=["CURDEPTH"])
    gone = [i for i, b in enumerate(s.branches(query)) if dict(b.observation.attrs)["CURDEPTH"] == 0]
    s.do(query, pick=gone[0])
    s.put("p", "APP", "new")
    assert triggers(s) == 0
    s.put("p", "APP", "third")
    assert triggers(s) == 1


def test_an_expired_message_may_have_gone_before_the_put_that_would_reach_the_depth():
    s = setup(TRIGTYPE=DEPTH, TRIGDPTH=2)
    s.put("p", "APP", "old", expiry=5)
    s.do(L.AdvanceClock(tenths=10))
    branches = s.branches(L.Put(conn="p", handle="p.APP", body="new", md=L.MessageDescriptor()))
    depth = L.InquireQueue(queue="INIT", names=["CURDEPTH"])
    # gone in the background already (no trigger) or still there (the depth is reached): each branch
    # then says so in the application queue's depth too
    seen = set()
    for b in branches:
        init = dict(model.step(b.state, depth)[0].observation.attrs)["CURDEPTH"]
        app = {dict(o.observation.attrs)["CURDEPTH"]
               for o in model.step(b.state, L.InquireQueue(queue="APP", names=["CURDEPTH"]))}
        seen.add((init, frozenset(app)))
    assert seen == {(0, frozenset({1})), (1, frozenset({1, 2}))}


@covers("TRIG-18")
def test_a_disconnect_closing_two_served_queues_may_trigger_them_in_either_order():
    """MQ does not say in which order MQDISC closes a connection's handles: the trigger messages of two
    queues whose only server disconnects may reach the initiation queue in either order."""
    s = setup(TRIGTYPE=FIRST)
    s.do(L.DefineQueue(queue="OTHER", attrs={**APP_ATTRS, "TRIGTYPE": FIRST}))
    s.do(L.Connect(conn="server"))
    for q in ("OTHER", "APP"):
        s.do(L.Open(conn="server", handle=f"server.{q}", queue=q, options=C.MQOO_INPUT_SHARED))
    s.do(L.Open(conn="p", handle="p.OTHER", queue="OTHER", options=C.MQOO_OUTPUT))
    s.put("p", "APP", "a")
    s.put("p", "OTHER", "b")
    assert triggers(s) == 0   # each queue is served
    firsts = set()
    for branch in s.branches(L.Disconnect(conn="server")):
        after = Script.__new__(Script)
        after.state = branch.state
        assert triggers(after) == 2
        firsts.add(after.do(L.Get(conn="p", handle="watch", options=C.MQGMO_BROWSE_FIRST)).message.trigger.q_name)
    assert firsts == {"APP", "OTHER"}


def test_the_group_rules_are_drawn_only_where_a_case_may_define_a_group():
    from adapters.registry import create_adapter
    from conformance.generator.trigger import GroupTriggerMachine, TriggerMachine
    from conformance.runner.session import Session

    def machine(platform):
        adapter = create_adapter("simulated", {"platform": platform})
        return TriggerMachine.on(Session(adapter, "trigger", {}, 1, platform=platform))

    names = {r.function.__name__ for r in GroupTriggerMachine.setup_state().rules}
    plain = {r.function.__name__ for r in TriggerMachine.setup_state().rules}
    assert {"put_shared", "serve_shared", "shared_conditions_met"} <= names - plain
    assert machine("distributed") is TriggerMachine
    assert machine("zos") is GroupTriggerMachine


def test_a_trigger_a_fifo_queue_owes_its_default_priority_is_missed_as_trig_24():
    """FIFO: the message's own priority is below TriggerMsgPriority, the queue's DefPriority is not: a
    queue manager that compares the message's priority leaves out the trigger message, and the check
    names TRIG-24 first, the rule that made it due."""
    from conformance.checker.sequential import check_history

    ops = [L.DefineProcess(process="PROC", appl_id="/bin/server"), L.DefineQueue(queue="INIT"),
           L.DefineQueue(queue="APP", attrs={**APP_ATTRS, "TRIGTYPE": FIRST, "TRIGMPRI": 4, "DEFPRTY": 5,
                                             "MSGDLVSQ": C.MQMDS_FIFO}),
           L.Connect(conn="p"), L.Open(conn="p", handle="a", queue="APP", options=C.MQOO_OUTPUT),
           L.Open(conn="p", handle="m", queue="INIT", options=C.MQOO_INPUT_SHARED),
           L.Put(conn="p", handle="a", body="x", md=L.MessageDescriptor(priority=0))]
    depth = L.InquireQueue(queue="INIT", names=["CURDEPTH"])
    history = [(op, L.OK) for op in ops]
    good = check_history(C.PLATFORM_DISTRIBUTED, history + [(depth, L.Observation(attrs=(("CURDEPTH", 1),)))])
    assert all(c.mismatch is None for c in good)
    bad = check_history(C.PLATFORM_DISTRIBUTED, history + [(depth, L.Observation(attrs=(("CURDEPTH", 0),)))])
    assert bad[-1].mismatch is not None and bad[-1].mismatch.rules[0] == "TRIG-24"


def test_on_a_real_clock_the_trigger_interval_near_its_end_may_have_passed_or_not():
    """TriggerInterval is waited out on the system's clock: within its tolerance of the end a FIRST
    trigger message on a non-empty queue may be written or not; outside it only the exact answer."""
    def written(s, tenths):
        s.do(L.AdvanceClock(tenths=tenths))
        put = L.Put(conn="p", handle="p.APP", body="x", md=L.MessageDescriptor(), options=C.MQPMO_NO_SYNCPOINT)
        return {b.state.queues["INIT"].depth for b in s.branches(put)}

    for tenths, expected in ((3, {1}), (10, {1, 2}), (20, {2})):
        s = setup(TRIGTYPE=FIRST)
        s.state.expiry_tolerance = 5
        s.do(L.AlterQueueManager(attrs={"TRIGINT": 1000}))
        s.put("p", "APP", "a")
        assert triggers(s) == 1
        assert written(s, tenths) == expected, tenths
