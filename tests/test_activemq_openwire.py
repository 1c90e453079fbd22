"""The ``activemq`` adapter (OpenWire/JMS) against a private ActiveMQ this module starts and stops by PID.

Small budgets: the mapping, the BackoutCount rules, restarts and the bad
conditions, not ActiveMQ at length (``mqconform run --adapter activemq`` does that).
"""

from __future__ import annotations

import json

import pytest

from adapters.brokers import server
from adapters.brokers.server import free_port
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import RULES
from tests.brokerkit import (check_a_fruitless_wait_counts_on_the_clock, check_crash_campaign, assert_rules_reported, check_out_of_range_values_reach_the_broker,
                             check_priority_fifo_and_units_of_work, check_restart_matches_mq,
                             check_selection, get, mqconform, put, two_programs_and_mqdisc)

pytestmark = [pytest.mark.broker, pytest.mark.skipif(
    server("activemq").installed() is not None, reason="activemq not installed (bash scripts/system-packages.sh)")]


@pytest.fixture(scope="session")
def broker(activemq_broker):
    """The test process's shared activemq (conftest.py): each test on queues of its own."""
    return activemq_broker


@pytest.fixture
def adapter(broker):
    from adapters.activemq.openwire import ActiveMQOpenWireAdapter

    host, port = broker.address("openwire")
    a = ActiveMQOpenWireAdapter(host=host, port=str(port))
    yield a
    a.close()


def test_mapping_priority_units_of_work_and_backout_count(adapter):
    adapter.start_case("ow1")
    x = adapter.execute
    check_priority_fifo_and_units_of_work(adapter, C.MQOO_BROWSE)
    # The redelivery counter is BackoutCount: it goes on counting backouts.
    assert x(L.Backout(conn="b")) == L.OK
    third = x(get("b", "bF", C.MQGMO_SYNCPOINT))
    assert third.message.body == "tx" and third.message.backout_count == 2
    assert x(L.Commit(conn="b")) == L.OK
    assert x(get("b", "bF")).rc == C.MQRC_NO_MSG_AVAILABLE
    adapter.end_case()


def test_a_backed_out_message_is_back_at_its_place_for_any_getter(adapter):
    adapter.start_case("ow2")
    x = adapter.execute
    assert x(L.DefineQueue(queue="F", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),))) == L.OK
    for conn in ("a", "b"):
        assert x(L.Connect(conn=conn)) == L.OK
        assert x(L.Open(conn=conn, handle=conn, queue="F", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)) == L.OK
    for body in ("m0", "m1"):
        assert x(put("a", "a", body, persistence=C.MQPER_PERSISTENT)) == L.OK
    assert x(get("a", "a", C.MQGMO_SYNCPOINT)).message.body == "m0"
    assert dict(x(L.InquireQueue(queue="F", names=("CURDEPTH",))).attrs) == {"CURDEPTH": 1}
    assert x(L.Backout(conn="a")) == L.OK
    again = x(get("b", "b"))
    assert again.message.body == "m0" and again.message.backout_count == 1
    # An abnormal end backs out too, and counts.
    assert x(get("a", "a", C.MQGMO_SYNCPOINT)).message.body == "m1"
    assert x(L.Disconnect(conn="a", abnormal=True)) == L.OK
    last = x(get("b", "b"))
    assert last.message.body == "m1" and last.message.backout_count == 1
    adapter.end_case()


@pytest.mark.parametrize("order,end", [(C.MQMDS_FIFO, "backout"), (C.MQMDS_PRIORITY, "backout"),
                                       (C.MQMDS_FIFO, "abnormal end")])
def test_messages_of_one_unit_of_work_go_back_in_their_queue_order(adapter, order, end):
    """A unit of work that got a later message before an earlier one (another connection held the
    earlier one meanwhile) puts both back in queue order, whichever it got first, whether MQBACK
    or an abnormal end backs it out."""
    from conformance.runner.session import Session

    session = Session(adapter, "core", seed=0)
    session.start_case()
    x = session.execute
    assert x(L.DefineQueue(queue="F", attrs=(("MSGDLVSQ", order),))) == L.OK
    for conn in ("a", "b"):
        assert x(L.Connect(conn=conn)) == L.OK
        assert x(L.Open(conn=conn, handle=conn, queue="F", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)) == L.OK
    assert x(put("a", "a", "m0", priority=5)) == L.OK
    assert x(put("a", "a", "m1", priority=5)) == L.OK
    assert x(get("b", "b", C.MQGMO_SYNCPOINT)).message.body == "m0"
    assert x(get("a", "a", C.MQGMO_SYNCPOINT)).message.body == "m1"
    assert x(L.Backout(conn="b")) == L.OK
    assert x(get("a", "a", C.MQGMO_SYNCPOINT)).message.body == "m0"
    assert x(L.Backout(conn="a") if end == "backout" else L.Disconnect(conn="a", abnormal=True)) == L.OK
    first, second = x(get("b", "b")), x(get("b", "b"))   # the session raises on any departure
    assert (first.message.body, first.message.backout_count) == ("m0", 2)
    assert (second.message.body, second.message.backout_count) == ("m1", 1)
    session.end_case()


def test_browse_cursor_and_the_message_under_it(adapter):
    adapter.start_case("ow3")
    x = adapter.execute
    assert x(L.DefineQueue(queue="F", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),))) == L.OK
    assert x(L.Connect(conn="a")) == L.OK
    assert x(L.Open(conn="a", handle="h", queue="F",
                    options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | C.MQOO_BROWSE)) == L.OK
    for body in ("m0", "m1", "m2"):
        assert x(put("a", "h", body)) == L.OK
    assert x(get("a", "h", C.MQGMO_BROWSE_FIRST)).message.body == "m0"
    assert x(get("a", "h", C.MQGMO_BROWSE_NEXT)).message.body == "m1"
    assert x(get("a", "h", C.MQGMO_BROWSE_MSG_UNDER_CURSOR)).message.body == "m1"
    assert x(get("a", "h", C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_SYNCPOINT)).message.body == "m1"
    assert x(get("a", "h", C.MQGMO_MSG_UNDER_CURSOR)).rc == C.MQRC_NO_MSG_UNDER_CURSOR
    # The message got under syncpoint is not on the queue for a browser or a getter.
    assert x(get("a", "h", C.MQGMO_BROWSE_FIRST)).message.body == "m0"
    assert x(get("a", "h", C.MQGMO_BROWSE_NEXT)).message.body == "m2"
    assert dict(x(L.InquireQueue(queue="F", names=("CURDEPTH",))).attrs) == {"CURDEPTH": 2}
    assert x(L.Backout(conn="a")) == L.OK
    assert sorted(x(get("a", "h")).message.body for _ in range(3)) == ["m0", "m1", "m2"]
    adapter.end_case()


def test_a_backed_out_message_overtaking_older_ones_is_reported(adapter):
    """ActiveMQ dispatches a rolled-back message before the older messages still on the queue;
    MQ puts it back at its place in the queue.  The kit reports that as a departure."""
    from conformance.runner.session import NonConformance, Session

    session = Session(adapter, "core", seed=0)
    session.start_case()
    x = session.execute
    for op in (L.DefineQueue(queue="F", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="a"),
               L.Open(conn="a", handle="h", queue="F", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | C.MQOO_BROWSE),
               put("a", "h", "m0"), put("a", "h", "m1")):
        assert x(op) == L.OK
    assert x(get("a", "h", C.MQGMO_BROWSE_FIRST)).message.body == "m0"
    assert x(get("a", "h", C.MQGMO_BROWSE_NEXT)).message.body == "m1"
    assert x(get("a", "h", C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_SYNCPOINT)).message.body == "m1"
    assert x(L.Backout(conn="a")) == L.OK
    with pytest.raises(NonConformance) as info:
        x(get("a", "h"))
    assert info.value.failure.mismatch.fields == ("message.body",) and info.value.failure.rules, info.value.failure.rules
    session.end_case()


def test_backout_count_rules_are_checked_not_set_aside(adapter):
    caps = adapter.capabilities()
    assert set(caps.areas) == {"core", "expiry"}
    for rule in ("CORE-13", "CORE-15", "CORE-17", "CORE-18", "CORE-20", "CORE-31"):
        assert rule not in caps.not_applicable
    for rule in RULES.all("trigger"):
        assert caps.not_applicable[rule.id]


def test_restart_is_checked_against_mq(broker, monkeypatch):
    """ActiveMQ's restart matches MQ's (CORE-32): no departure, and the broker is back afterwards."""
    from adapters.activemq.openwire import ActiveMQOpenWireAdapter

    check_restart_matches_mq(ActiveMQOpenWireAdapter, broker, monkeypatch)


def test_run_gives_every_rule_a_verdict(broker, tmp_path):
    """Every rule of two areas gets a verdict over OpenWire.  Its departure is kept as met, neither shrunk nor
    minimised: what is checked is the verdicts, and on a broker on real time minimising an expiry history (its
    clock advances slept through, replay after replay) took 83 s of this test's 93.  Minimising on ActiveMQ
    stays checked by the compliance test's fresh runs, on real time by test_minimise.py's."""
    host, port = broker.address("openwire")
    code, out, err, _ = mqconform(
        "run", "--adapter", "activemq", "--area", "core,expiry", "--examples", "3", "--seed", "5", "--keep-going", "0",
        "--shrink-cases", "1", "--no-minimise", "--results", tmp_path / "r",
        env={"MQCONFORM_ACTIVEMQ_URL": f"tcp://mqconform:mqconform@{host}:{port}"})
    assert code in (0, 1), out + err
    rows = [json.loads(line) for line in (tmp_path / "r" / "rules.jsonl").read_text().splitlines()]
    assert_rules_reported(rows, ["core", "expiry"])
    assert any(r["verdict"] == "pass" for r in rows)
    assert "mqconform:mqconform" not in (tmp_path / "r" / "run.json").read_text()


def test_nothing_listening_is_one_line_and_exit_2(tmp_path):
    code, out, err, seconds = mqconform("run", "--adapter", "activemq", "--adapter-opt", f"port={free_port()}",
                                        "--examples", "2", "--results", tmp_path / "r", timeout=60)
    assert code == 2 and seconds < 30, (code, seconds, err)
    assert err.count("\n") == 1 and "activemq" in err and "127.0.0.1:" in err and "Traceback" not in err, err


def test_expiry_zero_is_sent_over_jms_and_expiry_counts_down(adapter):
    """A put with Expiry 0 is sent as a JMS time to live of 0 (which JMS reads as "never expires"): EXP-10 is
    run and the broker's answer judged, not left out; a positive Expiry counts down."""
    zero = put("a", "a", "z", expiry=0)
    assert adapter.express(zero) == zero
    assert "EXP-10" not in adapter.capabilities().not_applicable
    adapter.start_case("ow-exp")
    x = adapter.execute
    assert x(L.DefineQueue(queue="E")) == L.OK
    assert x(L.Connect(conn="a")) == L.OK
    assert x(L.Open(conn="a", handle="a", queue="E", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)) == L.OK
    put_at = adapter.elapsed_tenths()
    assert x(put("a", "a", "e", expiry=100)) == L.OK
    assert x(L.AdvanceClock(tenths=put_at + 40)) == L.OK   # the case's clock runs from start_case
    got = x(get("a", "a"))
    # What remained when the get was issued: 100 tenths less at least the 40 waited (rounded up).
    assert got.message.body == "e" and 1 <= got.message.expiry <= 61
    adapter.end_case()


def test_cost_against_the_raw_jms_client_is_measured_side_by_side(broker):
    """mqconform bench --only brokers: the same rounds through the adapter (checked) and through JMS."""
    from conformance.bench.brokers import measure

    host, port = broker.address("openwire")
    cost = measure("activemq", rounds=5, options={"host": host, "port": str(port)})
    assert cost.rounds == 5 and cost.kit_ops_per_s > 0 and cost.raw_ops_per_s > 0
    assert cost.system.startswith("ActiveMQ")


def test_priorities_and_expiries_outside_mqs_ranges_are_sent_and_judged(adapter):
    """The JMS client's send takes any priority and any time to live (ActiveMQ caps a priority at 9, raises a
    negative one to 0, and keeps a message with a time to live of zero or less for ever), so CORE-08, CORE-09
    and EXP-10 are run on this adapter: MQ's answers (a warning, two refusals) are what the kit compares."""
    adapter.start_case("ow-range")
    got = check_out_of_range_values_reach_the_broker(adapter)
    adapter.end_case()
    bodies = [o.message.body for o in got]
    # every put stayed (an expiry of zero or less never expires here), the capped priority first
    assert len(got) == 4 and bodies[0].startswith("CORE-08"), bodies
    assert got[0].message.priority == 9
    assert {o.message.priority for o in got if o.message.body.startswith("CORE-09")} == {0}


def test_the_defaults_mapping_leaves_the_glue_out(broker):
    """mapping=defaults: the JMS client as it installs (prefetch, asynchronous acknowledgements, the redelivery
    policy's delay and limit) and no adapter code beyond expressing the calls: MQDISC closes the connection
    without a commit (the session rolls back), a blank MsgId is the JMS message ID, and a priority left to the
    queue's default is the JMS default (4) whatever DEFPRTY says."""
    from adapters.activemq.openwire import ActiveMQOpenWireAdapter

    host, port = broker.address("openwire")
    a = ActiveMQOpenWireAdapter(host=host, port=str(port), mapping="defaults")
    try:
        caps = a.capabilities()
        assert a.describe()["mapping"] == "defaults"
        # the broker given is configured by the kit: its settings are still in force, and stated
        assert {d.kind for d in caps.depends_on if not d.needed} == {"broker setting"}
        a.start_case("defaults")
        x = a.execute
        two_programs_and_mqdisc(a, (("MSGDLVSQ", C.MQMDS_FIFO), ("DEFPRTY", 7)))
        assert x(get("b", "b")).rc == C.MQRC_NO_MSG_AVAILABLE      # MQ: MQDISC committed "tx"
        assert x(put("b", "b", "plain", priority=C.MQPRI_PRIORITY_AS_Q_DEF)) == L.OK
        # a waiting get: with the client's prefetch the message reaches the consumer when the broker sends it
        got = x(L.Get(conn="b", handle="b", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_WAIT, wait_interval=10_000)).message
        assert got is not None and got.body == "plain" and got.priority == 4 and got.msg_id.startswith("ID:")   # MQ: 7, MQ's own MsgId
        # the program's connections have the client's default prefetch; the adapter's own (depths, clean-up)
        # pulls under either mapping (with a prefetch, a clean-up's removal of a queue was never answered)
        assert int(a.conns["b"].connection.getPrefetchPolicy().getQueuePrefetch()) > 0
        assert int(a._admin().connection.getPrefetchPolicy().getQueuePrefetch()) == 0
        a.end_case()
    finally:
        a.close()


def test_a_fruitless_wait_counts_on_the_clock(adapter):
    """The case's clock goes on by a waiting get's interval when it finds nothing, as MQ's does: a clock
    advance after it waits for real, and a short expiry runs out (the clock once stood still here, and a
    message not yet expired on the broker was reported as an EXP-02/03 departure)."""
    check_a_fruitless_wait_counts_on_the_clock(adapter)


def test_a_crash_campaign_ends_within_its_budget_accounts_for_every_message_and_leaves_no_broker(tmp_path):
    check_crash_campaign("activemq", tmp_path)



def test_gets_and_browses_that_select_by_msgid_and_correlid_are_run_and_judged(adapter):
    check_selection(adapter)


def test_concurrent_clients_overlap_on_the_broker_and_a_concurrent_run_gives_every_core_rule_a_verdict(
        adapter, broker, tmp_path):
    from tests.brokerkit import check_concurrent_clients

    host, port = broker.address("openwire")
    check_concurrent_clients(adapter, ["--adapter-opt", f"host={host}", "--adapter-opt", f"port={port}"], tmp_path)
