"""The ``rabbitmq`` adapter against a private RabbitMQ this module starts on 127.0.0.1 and stops by PID.

Small budgets: these check the mapping, the verdicts and the bad conditions, not
RabbitMQ at length (``mqconform run --adapter rabbitmq`` does that).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import psutil
import pytest

from adapters.base import AdapterUnavailable
from adapters.brokers import server
from adapters.brokers.server import free_port
from adapters.rabbitmq import RabbitMQAdapter
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import RULES
from tests.brokerkit import (check_a_fruitless_wait_counts_on_the_clock, check_crash_campaign, assert_rules_reported, check_priority_fifo_and_units_of_work, get, mqconform, put,
                             restart_history, two_programs_and_mqdisc)

pytestmark = [pytest.mark.broker, pytest.mark.skipif(
    server("rabbitmq").installed() is not None, reason="rabbitmq-server not installed (bash scripts/system-packages.sh)")]


@pytest.fixture(scope="session")
def broker(rabbitmq_broker):
    """The test process's shared rabbitmq (conftest.py): each test on queues of its own."""
    return rabbitmq_broker


@pytest.fixture
def adapter(broker):
    host, port = broker.address()
    a = RabbitMQAdapter(host=host, port=str(port))
    yield a
    a.close()


def test_mapping_priority_units_of_work_backout_count_and_clean_up(adapter, broker):
    adapter.start_case("map1")
    x = adapter.execute
    check_priority_fifo_and_units_of_work(adapter)
    assert x(L.Backout(conn="b")) == L.OK
    # A FIFO queue is a quorum queue, which counts deliveries: BackoutCount goes on to 2.
    third = x(get("b", "bF", C.MQGMO_SYNCPOINT))
    assert third.message.body == "tx" and third.message.backout_count == 2
    assert x(L.Commit(conn="b")) == L.OK
    assert x(get("b", "bF")).rc == C.MQRC_NO_MSG_AVAILABLE
    names = [d.name for d in adapter.queues.values()]
    adapter.end_case()
    # The case's queues are gone; nothing else was touched.
    import pika
    host, port = broker.address()
    conn = pika.BlockingConnection(pika.ConnectionParameters(host=host, port=port, socket_timeout=5,
                                                             connection_attempts=1))
    try:
        for name in names:
            ch = conn.channel()
            with pytest.raises(pika.exceptions.ChannelClosedByBroker):
                ch.queue_declare(name, passive=True)
    finally:
        conn.close()


def test_what_amqp_cannot_express_is_left_out_not_failed(adapter):
    caps = adapter.capabilities()
    assert caps.realtime and set(caps.areas) == {"core", "expiry"}
    for rule in RULES.all("trigger") + RULES.all("syncpoint"):
        assert caps.not_applicable[rule.id]
    adapter.start_case("na")
    assert adapter.express(L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_FIRST)) is None
    assert adapter.express(L.AlterQueueManager(attrs=())) is None if hasattr(L, "AlterQueueManager") else True
    kept = adapter.express(L.DefineQueue(queue="Q", attrs=(("PUT", C.MQQA_PUT_INHIBITED), ("MAXDEPTH", 5),
                                                           ("MSGDLVSQ", C.MQMDS_FIFO))))
    assert dict(kept.attrs) == {"MAXDEPTH": 5, "MSGDLVSQ": C.MQMDS_FIFO}


def test_a_negative_priority_is_not_applicable_because_the_client_cannot_encode_it():
    """CORE-09's reason, tried on the client: AMQP's priority is an unsigned octet, and pika refuses to encode
    -2 (or anything past 255) before a broker sees it; 10 and 42 it encodes, so CORE-08 is run."""
    import pika

    assert "CORE-09" in RabbitMQAdapter.not_applicable and "CORE-08" not in RabbitMQAdapter.not_applicable
    for refused in (-2, -5, 256):
        with pytest.raises(Exception, match="ubyte|0 <= number <= 255"):
            pika.BasicProperties(priority=refused).encode()
    for taken in (10, 42, 255):
        assert pika.BasicProperties(priority=taken).encode()
    # and the adapter leaves such a put out (not applicable), but sends one above 9
    shim = RabbitMQAdapter.__new__(RabbitMQAdapter)
    assert shim.encodable(L.MessageDescriptor(priority=-2)) is False
    assert shim.encodable(L.MessageDescriptor(priority=42)) is True
    assert shim.encodable(L.MessageDescriptor(priority=256)) is False


def test_uncommitted_puts_missing_from_depth_are_reported_as_core_28(adapter):
    """RabbitMQ's queue depth leaves out uncommitted publishes; MQ's CURDEPTH counts them."""
    from conformance.runner.session import NonConformance, Session

    session = Session(adapter, "core", seed=0)
    session.start_case()
    for op in (L.DefineQueue(queue="Q", attrs=()), L.Connect(conn="a"),
               L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT),
               put("a", "h", "m", options=C.MQPMO_SYNCPOINT)):
        assert session.execute(op) == L.OK
    with pytest.raises(NonConformance) as info:
        session.execute(L.InquireQueue(queue="Q", names=("CURDEPTH",)))
    assert "CORE-28" in info.value.failure.rules and info.value.failure.mismatch.fields == ("attrs.CURDEPTH",)
    session.end_case()


def test_a_queue_the_broker_lost_is_an_unknown_object_not_an_error_and_the_connection_goes_on(adapter):
    """RabbitMQ can lose a queue declared just before a kill. A call on a queue the broker no longer
    has answers MQRC_UNKNOWN_OBJECT_NAME (the checker reports the departure) and the program's
    connection still works for its other queues."""
    adapter.start_case("gone")
    x = adapter.execute
    for q in ("P", "F"):
        assert x(L.DefineQueue(queue=q, attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY if q == "P" else C.MQMDS_FIFO),))) == L.OK
    assert x(L.Connect(conn="a")) == L.OK
    for q in ("P", "F"):
        assert x(L.Open(conn="a", handle=q, queue=q, options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)) == L.OK
    assert x(put("a", "F", "kept", options=C.MQPMO_NO_SYNCPOINT)) == L.OK
    adapter._admin().queue_delete(adapter.queues["P"].name)   # behind the program's back
    assert x(get("a", "P", C.MQGMO_SYNCPOINT)).rc == C.MQRC_UNKNOWN_OBJECT_NAME
    assert x(put("a", "P", "lost", options=C.MQPMO_SYNCPOINT)).rc in (C.MQRC_NONE, C.MQRC_UNKNOWN_OBJECT_NAME)
    assert x(L.InquireQueue(queue="P", names=("CURDEPTH",))).rc == C.MQRC_UNKNOWN_OBJECT_NAME
    assert x(get("a", "F", C.MQGMO_SYNCPOINT)).message.body == "kept"
    assert x(L.Commit(conn="a")) == L.OK
    assert dict(x(L.InquireQueue(queue="F", names=("CURDEPTH",))).attrs) == {"CURDEPTH": 0}
    adapter.end_case()


def test_a_call_the_broker_takes_and_never_answers_fails_with_2009_at_the_deadline(adapter, broker, monkeypatch):
    """pika waits without limit for a reply; the adapter gives the connection up at its call deadline."""
    from adapters.broker_shim import MAX_REAL_WAIT_MS

    monkeypatch.setattr(adapter, "call_deadline", 1.0)
    adapter.start_case("deadline")
    x = adapter.execute
    for op in (L.DefineQueue(queue="Q", attrs=()), L.Connect(conn="a"),
               L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
               put("a", "h", "m")):
        assert x(op) == L.OK, op
    broker.pause()   # the broker takes the call (the socket stays open) and does not answer
    assert all(p.status() == psutil.STATUS_STOPPED for p in broker._alive(broker.recorded()))
    try:
        started = time.monotonic()
        first = x(get("a", "h"))
        elapsed = time.monotonic() - started
        later = x(get("a", "h"))
    finally:
        broker.resume()
    assert first.rc == C.MQRC_CONNECTION_BROKEN and later.rc == C.MQRC_CONNECTION_BROKEN
    assert 1.0 <= elapsed < 1.0 + MAX_REAL_WAIT_MS / 1000 + 3, elapsed
    assert x(L.Disconnect(conn="a", abnormal=True)) == L.OK
    # The broker itself is fine: a new connection finds the message the unanswered get never took.
    for op in (L.Connect(conn="a"), L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_INPUT_SHARED)):
        assert x(op) == L.OK, op
    again = x(L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_WAIT, wait_interval=3000))
    assert again.message is not None and again.message.body == "m", again
    adapter.end_case()


@pytest.mark.parametrize("queue_type", ["quorum", "classic"])

def test_restart_runs_on_a_kit_started_broker_and_its_departures_are_reported(broker, monkeypatch, queue_type):
    """MQ discards non-persistent messages when the queue manager restarts (CORE-32).

    A quorum queue keeps every message whatever its delivery mode, a departure the
    kit must report; a classic durable queue drops transient messages as MQ does.
    """
    from conformance.runner.session import NonConformance, Session

    off = RabbitMQAdapter(host=broker.address()[0], port=str(broker.address()[1]))
    try:
        off_caps = off.capabilities().not_applicable
        assert {"CORE-32", "CORE-45"} <= set(off_caps) and off.express(L.Restart()) is None
    finally:
        off.close()
    monkeypatch.setenv("MQCONFORM_RUN_DIR", str(broker.base))  # the broker is one the kit started
    adapter = RabbitMQAdapter(restart="on", **{"queue-type": queue_type})
    try:
        caps = adapter.capabilities()
        assert "Restart" in caps.operations and not {"CORE-32", "CORE-45"} & set(caps.not_applicable)
        session = Session(adapter, "core", seed=0)
        session.start_case()
        persistent = restart_history(session, C.MQPER_PERSISTENT)
        assert persistent.message.body == "kept?"
        session.end_case()
        session.start_case()
        if queue_type == "classic":
            assert restart_history(session, C.MQPER_NOT_PERSISTENT).rc == C.MQRC_NO_MSG_AVAILABLE
        else:
            with pytest.raises(NonConformance) as info:
                restart_history(session, C.MQPER_NOT_PERSISTENT)
            assert "CORE-32" in info.value.failure.rules
        session.end_case()
        assert broker.status().ready
    finally:
        adapter.close()


def test_restart_on_needs_a_broker_the_kit_started(broker, tmp_path, monkeypatch):
    monkeypatch.setenv("MQCONFORM_RUN_DIR", str(tmp_path / "elsewhere"))
    host, port = broker.address()
    code, out, err, _ = mqconform("run", "--adapter", "rabbitmq", "--adapter-opt", f"port={port}",
                                  "--adapter-opt", "restart=on", "--results", tmp_path / "r", timeout=60)
    assert code == 2 and err.count("\n") == 1 and "restart=on needs a broker the kit started" in err, err
    code, out, err, _ = mqconform("run", "--adapter", "rabbitmq", "--adapter-opt", f"port={port}",
                                  "--adapter-opt", "restart=maybe", "--results", tmp_path / "r2", timeout=60)
    assert code == 2 and "restart must be on, off or a number of restarts" in err, err


def test_run_gives_every_rule_a_verdict_and_a_replayable_counterexample(broker, tmp_path):
    host, port = broker.address()
    code, out, err, _ = mqconform(
        "run", "--adapter", "rabbitmq", "--area", "core", "--examples", "3", "--seed", "5", "--keep-going", "0",
        "--results", tmp_path / "r", env={"MQCONFORM_RABBITMQ_URL": f"amqp://guest:guest@{host}:{port}/%2F"})
    assert code == 1, out + err
    rows = [json.loads(line) for line in (tmp_path / "r" / "rules.jsonl").read_text().splitlines()]
    assert_rules_reported(rows, ["core"])
    assert any(r["verdict"] == "pass" for r in rows) and any(r["verdict"] == "fail" for r in rows)
    run = (tmp_path / "r" / "run.json").read_text()
    assert "guest:guest" not in run and "password" not in run
    # The saved counterexample replays on the same broker and still fails.
    failure = sorted((tmp_path / "r" / "failures").glob("core-*.json"))[0]
    code, out, err, _ = mqconform("replay", failure, "--adapter", "rabbitmq", "--adapter-opt", f"host={host}",
                                  "--adapter-opt", f"port={port}")
    assert code == 1, out + err


@pytest.mark.parametrize("how", ["nothing listens", "wrong password"])
def test_an_unusable_broker_is_one_line_and_exit_2_within_30_s(broker, how, tmp_path):
    host, port = broker.address()
    opts = ["--adapter-opt", f"port={free_port()}"] if how == "nothing listens" else \
        ["--adapter-opt", f"port={port}", "--adapter-opt", "user=guest", "--adapter-opt", "password=s3cret-pw"]
    code, out, err, seconds = mqconform("run", "--adapter", "rabbitmq", *opts, "--examples", "2",
                                        "--results", tmp_path / "r", timeout=60)
    assert code == 2 and seconds < 30, (code, seconds, err)
    assert err.count("\n") == 1 and "rabbitmq" in err and "127.0.0.1:" in err, err
    assert "s3cret-pw" not in out + err and "Traceback" not in err
    assert "pass" not in out and not (tmp_path / "r" / "rules.jsonl").exists()


def test_adapter_refuses_a_non_amqp_url():
    os.environ["MQCONFORM_RABBITMQ_URL"] = "http://127.0.0.1:1/"
    try:
        with pytest.raises(Exception, match="amqp://"):
            RabbitMQAdapter()
    finally:
        del os.environ["MQCONFORM_RABBITMQ_URL"]


def test_no_broker_configured_starts_a_private_one_and_stops_it(tmp_path):
    """The broker's life is what is checked: the run's departure is kept as met, neither shrunk nor minimised (9 s
    of shrinking and minimising on this broker, not what this is about; `test_compliance.py`'s fresh runs check
    them on RabbitMQ)."""
    env = {"MQCONFORM_RUN_DIR": str(tmp_path / "empty-run-dir"), "TMPDIR": str(tmp_path)}
    code, out, err, _ = mqconform("run", "--adapter", "rabbitmq", "--area", "core", "--examples", "2",
                                  "--keep-going", "0", "--seed", "1", "--shrink-cases", "1", "--no-minimise",
                                  "--results", tmp_path / "r", env=env)
    assert code in (0, 1), err
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert "private" in json.dumps(run)
    left = [p for p in psutil.process_iter(["cmdline", "environ"])
            if str(tmp_path) in " ".join(p.info.get("cmdline") or [])
            or str(tmp_path) in json.dumps(p.info.get("environ") or {})]
    assert not left, [p.info["cmdline"] for p in left]
    assert not list(tmp_path.glob("mqconform-rabbitmq-*"))


def test_a_broker_dying_mid_run_is_an_error_and_keeps_what_was_recorded(tmp_path):
    srv = server("rabbitmq", tmp_path / "dying")
    srv.up()
    host, port = srv.address()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.cli", "run", "--adapter", "rabbitmq", "--adapter-opt", f"port={port}",
             "--area", "core", "--examples", "400", "--keep-going", "20", "--seed", "2", "--jobs", "1",
             # (what is recorded before the broker dies is this test's subject, not how small it is: the first
             # departure is written after one shrinking case and unminimised, 25 s to 14 s)
             "--shrink-cases", "1", "--no-minimise", "--results", str(tmp_path / "r")],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The broker dies once the run has recorded a departure and gone on looking for others (its
        # rounds run hundreds of cases each): what was recorded before must survive.
        failures = tmp_path / "r" / "failures"
        for _ in range(1200):
            if proc.poll() is not None or (failures.is_dir() and any(failures.iterdir())):
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before the broker was stopped"
    finally:
        srv.down()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, out + err
    assert err.count("\n") == 1 and "rabbitmq" in err and "Traceback" not in err, err
    rows = [json.loads(line) for line in (tmp_path / "r" / "rules.jsonl").read_text().splitlines()]
    assert any(r["verdict"] == "error" for r in rows)
    assert json.loads((tmp_path / "r" / "run.json").read_text())["error"]
    assert any((tmp_path / "r" / "failures").iterdir()), "the departure recorded before the broker died was lost"


def test_private_broker_cannot_be_reached_means_unavailable():
    with pytest.raises(AdapterUnavailable, match="no usable broker at 127.0.0.1"):
        RabbitMQAdapter(port=str(free_port()))


def test_cost_against_the_raw_client_is_measured_side_by_side(broker):
    """mqconform bench --only brokers: the same rounds through the adapter (checked) and through pika."""
    from conformance.bench.brokers import OPS_PER_ROUND, measure

    host, port = broker.address()
    cost = measure("rabbitmq", rounds=5, options={"host": host, "port": str(port)})
    assert cost.rounds == 5 and cost.kit_ops_per_s > 0 and cost.raw_ops_per_s > 0 and OPS_PER_ROUND == 6
    assert cost.ratio == cost.kit_ops_per_s / cost.raw_ops_per_s and cost.system.startswith("RabbitMQ")


def test_a_commit_the_broker_completes_in_part_is_backed_out_and_the_connection_goes_on(adapter):
    """A classic queue (MSGDLVSQ(PRIORITY)) with MAXDEPTH 1 and two puts under syncpoint: RabbitMQ refuses the
    second at the commit, applies the first and closes the channel with PRECONDITION_FAILED "partial tx
    completion".  The program sees MQ's answer to a commit that failed (MQRC_BACKED_OUT), the depth shows
    what the broker kept, and the connection goes on: a later MQDISC whose commit fails the same way
    answers MQCC_WARNING with MQRC_BACKED_OUT, as MQ's does."""
    adapter.start_case("ptx")
    x = adapter.execute
    opts = C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | C.MQOO_INQUIRE
    assert x(L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY), ("MAXDEPTH", 1)))) == L.OK
    assert x(L.Connect(conn="a")) == L.OK
    assert x(L.Open(conn="a", handle="h", queue="Q", options=opts)) == L.OK
    for body in ("m1", "m2"):
        assert x(put("a", "h", body, C.MQPMO_SYNCPOINT)) == L.OK
    assert x(L.Commit(conn="a")) == L.Observation.of(C.MQRC_BACKED_OUT)
    assert x(L.InquireQueue(queue="Q", names=("CURDEPTH",))).attrs == (("CURDEPTH", 1),)
    assert x(put("a", "h", "m3", C.MQPMO_SYNCPOINT)) == L.OK
    answer = x(L.Disconnect(conn="a"))
    assert answer.cc == C.MQCC_WARNING and answer.rc == C.MQRC_BACKED_OUT
    assert x(L.InquireQueue(queue="Q", names=("CURDEPTH",))).attrs == (("CURDEPTH", 1),)
    adapter.end_case()


def test_the_defaults_mapping_leaves_the_glue_out(broker):
    """mapping=defaults: RabbitMQ and pika as they install. MQDISC closes without the adapter's commit (the
    broker rolls the unit of work back), a blank MsgId stays blank, and a queue declared without
    x-max-priority ignores priority; the report states only what the adapter still does."""
    host, port = broker.address()
    a = RabbitMQAdapter(host=host, port=str(port), mapping="defaults")
    try:
        assert a.describe()["mapping"] == "defaults"
        assert all(d.needed for d in a.capabilities().depends_on)
        a.start_case("defaults")
        x = a.execute
        two_programs_and_mqdisc(a, (("MSGDLVSQ", C.MQMDS_PRIORITY),))
        assert x(get("b", "b")).rc == C.MQRC_NO_MSG_AVAILABLE      # MQ: MQDISC committed "tx"
        assert x(put("b", "b", "low", priority=1)) == L.OK
        assert x(put("b", "b", "high", priority=9)) == L.OK
        first = x(L.Get(conn="b", handle="b", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_WAIT, wait_interval=10_000)).message
        assert first is not None and first.body == "low" and first.msg_id == ""            # MQ: "high", and a generated MsgId
        a.end_case()
    finally:
        a.close()


def test_a_fruitless_wait_counts_on_the_clock(adapter):
    """The case's clock goes on by a waiting get's interval when it finds nothing, as MQ's does: a clock
    advance after it waits for real, and a short expiry runs out (the clock once stood still here, and a
    message not yet expired on the broker was reported as an EXP-02/03 departure)."""
    check_a_fruitless_wait_counts_on_the_clock(adapter)



def test_a_crash_campaign_ends_within_its_budget_accounts_for_every_message_and_leaves_no_broker(tmp_path):
    check_crash_campaign("rabbitmq", tmp_path)


def test_a_backout_returns_once_the_broker_shows_the_requeued_messages(monkeypatch):
    """A quorum queue applies a reject after the channel answered: the backout reads the queue's ready count
    until it holds the requeued message again (here, two reads later), and gives up after backout_settle."""
    from adapters.rabbitmq.adapter import RabbitConnection

    class Channel:
        def __init__(self):
            self.calls = []

        def __getattr__(self, name):
            return lambda *a, **k: self.calls.append(name)

    class Admin:
        def __init__(self, counts):
            self.counts, self.reads = counts, 0

        def queue_declare(self, name, passive):
            assert passive and name == "mqc.c.Q"
            count = self.counts[min(self.reads, len(self.counts) - 1)]
            self.reads += 1
            return type("Ok", (), {"method": type("M", (), {"message_count": count})})()

    def backout(counts, settle=3.0):
        shim = RabbitMQAdapter.__new__(RabbitMQAdapter)
        shim.faithful, shim.backout_settle = True, settle
        shim.shared_lock, shim.concurrent = threading.RLock(), False
        admin = Admin(counts)
        monkeypatch.setattr(shim, "_admin", lambda: admin, raising=False)
        c = RabbitConnection(connection=None, now=Channel(), tx=Channel(), pending_tx=[7], held_from=["mqc.c.Q"])
        started = time.monotonic()
        shim._broker_backout(c)
        assert c.tx.calls == ["basic_reject", "tx_commit"] and not c.held_from and not c.pending_tx
        return admin.reads, time.monotonic() - started

    # before the reject 2 ready; the broker shows 3 only at the fourth read
    assert backout([2, 2, 2, 3])[0] == 4
    # a count that never comes back (the message expired, say) is waited for no longer than the bound
    reads, took = backout([2], settle=0.3)
    assert reads > 2 and 0.3 <= took < 2
    # nothing held: no read at all
    shim = RabbitMQAdapter.__new__(RabbitMQAdapter)
    shim.faithful, shim.backout_settle = True, 3.0
    monkeypatch.setattr(shim, "_admin", lambda: pytest.fail("read a depth"), raising=False)
    shim._broker_backout(RabbitConnection(connection=None, now=Channel(), tx=Channel()))


def test_a_message_backed_out_is_counted_at_once_on_a_quorum_queue(adapter):
    adapter.start_case("settle")
    x = adapter.execute
    for op in (L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="a"),
               L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)):
        assert x(op) == L.OK
    for i in range(10):
        assert x(put("a", "h", f"m{i}")) == L.OK
        assert x(get("a", "h", C.MQGMO_SYNCPOINT)).message.body == f"m{i}"
        assert x(L.Backout(conn="a")) == L.OK
        assert dict(x(L.InquireQueue(queue="Q", names=("CURDEPTH",))).attrs)["CURDEPTH"] == 1
        assert x(get("a", "h")).message.body == f"m{i}"
    adapter.end_case()


def test_concurrent_clients_overlap_on_the_broker_and_a_concurrent_run_gives_every_core_rule_a_verdict(
        adapter, broker, tmp_path):
    from tests.brokerkit import check_concurrent_clients

    host, port = broker.address()
    check_concurrent_clients(adapter, ["--adapter-opt", f"host={host}", "--adapter-opt", f"port={port}"], tmp_path)
