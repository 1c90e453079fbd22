"""The ``activemq-stomp`` adapter against a private ActiveMQ Classic this module starts on 127.0.0.1 and stops by PID."""

from __future__ import annotations

import json
import socket
import time

import pytest

from adapters.base import AdapterUnavailable
from adapters.brokers import server
from adapters.brokers.server import free_port
from reference_model import language as L
from reference_model import mqconst as C
from tests.brokerkit import (check_a_fruitless_wait_counts_on_the_clock, assert_rules_reported, check_out_of_range_values_reach_the_broker,
                             check_priority_fifo_and_units_of_work, check_restart_matches_mq,
                             check_selection, get, mqconform)

pytestmark = [pytest.mark.broker, pytest.mark.skipif(
    server("activemq").installed() is not None, reason="activemq not installed (bash scripts/system-packages.sh)")]


@pytest.fixture(scope="session")
def broker(activemq_broker):
    """The test process's shared activemq (conftest.py): each test on queues of its own."""
    return activemq_broker


@pytest.fixture
def adapter(broker):
    from adapters.activemq import ActiveMQAdapter

    host, port = broker.address()
    a = ActiveMQAdapter(host=host, port=str(port))
    yield a
    a.close()


def test_mapping_priority_browse_units_of_work_and_backout(adapter):
    adapter.start_case("map1")
    x = adapter.execute
    check_priority_fifo_and_units_of_work(adapter, C.MQOO_BROWSE)
    assert x(L.Commit(conn="b")) == L.OK
    assert x(get("b", "bF")).rc == C.MQRC_NO_MSG_AVAILABLE
    adapter.end_case()


def test_restart_keeps_persistent_messages_and_drops_the_others(broker, monkeypatch):
    """ActiveMQ's restart matches MQ's (CORE-32): no departure, and the broker is back afterwards."""
    from adapters.activemq import ActiveMQAdapter

    check_restart_matches_mq(ActiveMQAdapter, broker, monkeypatch)


def test_run_gives_every_rule_a_verdict(broker, tmp_path):
    host, port = broker.address()
    code, out, err, _ = mqconform(
        "run", "--adapter", "activemq-stomp", "--area", "core", "--examples", "3", "--seed", "5", "--keep-going", "0",
        "--results", tmp_path / "r", env={"MQCONFORM_ACTIVEMQ_STOMP_URL": f"stomp://{host}:{port}"})
    assert code in (0, 1), out + err
    rows = [json.loads(line) for line in (tmp_path / "r" / "rules.jsonl").read_text().splitlines()]
    assert_rules_reported(rows, ["core"])
    assert any(r["verdict"] == "pass" for r in rows)
    if code == 1:
        failure = sorted((tmp_path / "r" / "failures").glob("core-*.json"))[0]
        code, out, err, _ = mqconform("replay", failure, "--adapter", "activemq-stomp", "--adapter-opt", f"host={host}",
                                      "--adapter-opt", f"port={port}")
        assert code == 1, out + err


def test_nothing_listening_is_one_line_and_exit_2_within_30_s(tmp_path):
    code, out, err, seconds = mqconform("run", "--adapter", "activemq-stomp", "--adapter-opt", f"port={free_port()}",
                                        "--examples", "2", "--results", tmp_path / "r", timeout=60)
    assert code == 2 and seconds < 30, (code, seconds, err)
    assert err.count("\n") == 1 and "activemq" in err and "127.0.0.1:" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_a_peer_that_never_answers_connect_is_unavailable_not_a_hang():
    from adapters.activemq import ActiveMQAdapter

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        with pytest.raises(AdapterUnavailable, match="activemq"):
            ActiveMQAdapter(port=str(silent.getsockname()[1]))
        assert time.monotonic() - started < 20


def test_priorities_and_expiries_outside_mqs_ranges_are_sent_and_judged(adapter):
    """STOMP's priority and expires headers take any integer: ActiveMQ caps a priority at 9 and raises -2 to 0,
    and a message whose expiry time is already past is never delivered; CORE-08, CORE-09 and EXP-10 are run."""
    adapter.start_case("st-range")
    got = check_out_of_range_values_reach_the_broker(adapter)
    adapter.end_case()
    bodies = [o.message.body for o in got]
    assert [b.split(":")[0] for b in bodies] == ["CORE-08", "CORE-09"], bodies
    assert [o.message.priority for o in got] == [9, 0]


def test_a_fruitless_wait_counts_on_the_clock(adapter):
    """The case's clock goes on by a waiting get's interval when it finds nothing, as MQ's does: a clock
    advance after it waits for real, and a short expiry runs out (the clock once stood still here, and a
    message not yet expired on the broker was reported as an EXP-02/03 departure)."""
    check_a_fruitless_wait_counts_on_the_clock(adapter)


def test_gets_and_browses_that_select_by_msgid_and_correlid_are_run_and_judged(adapter):
    check_selection(adapter)


def test_concurrent_clients_overlap_on_the_broker_and_a_concurrent_run_gives_every_core_rule_a_verdict(
        adapter, broker, tmp_path):
    from tests.brokerkit import check_concurrent_clients

    host, port = broker.address()
    check_concurrent_clients(adapter, ["--adapter-opt", f"host={host}", "--adapter-opt", f"port={port}"], tmp_path)
