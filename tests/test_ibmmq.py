"""The ``ibmmq`` adapter (docs/adapters/ibmmq.md), through the test-only stand-in for IBM's ``ibmmq`` package.

No IBM MQ client can be installed here: the stand-in (tests/ibmmq_standin.py) answers the MQI calls the
adapter makes with the simulated queue manager, so these tests check the adapter's mapping, its isolation
and its clean-up, not a live queue manager."""

from __future__ import annotations

import importlib.util
import json

import attrs
import pytest

import adapters.ibmmq
from adapters.ibmmq import HANDLER_OPERATIONS, OPERATIONS, IbmMqAdapter, _identifier, _identifier_text
from adapters.simulated.faults import FAULTS
from reference_model import language as L
from reference_model import mqconst as C
from tests import ibmmq_standin
from tests.clikit import run_cli

STANDIN = ("--adapter", "ibmmq", "--adapter-opt", "client=tests.ibmmq_standin")
#: The calls only the expiry area makes (a remote queue, ALTER QMGR EXPRYINT, REFRESH QMGR TYPE(EXPIRY)),
#: and those only the trigger area makes; each area's test checks its own reached the queue manager.
EXPIRY_CALLS = {"DefineRemoteQueue", "AlterQueueManager", "RefreshExpiry"}
TRIGGER_CALLS = {"DefineProcess", "AlterQueueManager"}

#: Checked and never broken: a pass, or partly exercised where a short run left an input class unreached.
CLEAN = {"pass", "partly exercised"}


def _verdicts(results) -> dict[str, str]:
    return {r["rule"]: r["verdict"] for r in map(json.loads, (results / "rules.jsonl").read_text().splitlines())}


@pytest.mark.skipif(importlib.util.find_spec("ibmmq") is not None, reason="an ibmmq package is installed here")
def test_without_ibms_client_a_run_ends_with_one_line_and_exit_2(tmp_path):
    code, out, err = run_cli("run", "--adapter", "ibmmq", "--area", "core", "--results", tmp_path / "r")
    assert code == 2
    assert err.count("\n") == 1 and "IBM's MQ client library" in err and "docs/adapters/ibmmq.md" in err, err
    assert "Traceback" not in out + err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("platform", [C.PLATFORM_DISTRIBUTED, C.PLATFORM_ZOS])
def test_a_conforming_queue_manager_passes_and_every_object_is_removed(platform, tmp_path):
    server = ibmmq_standin.reset(platform=platform)
    code, out, err = run_cli("run", *STANDIN, "--area", "core,syncpoint", "--examples", "5", "--seed", "7",
                             "--results", tmp_path / "r")
    assert code == 0, out[-3000:] + err
    verdicts = _verdicts(tmp_path / "r")
    assert {r for r, v in verdicts.items() if v in CLEAN} >= {"CORE-01", "CORE-02", "CORE-04", "CORE-15", "CORE-29"}
    # Every MQI call the adapter maps for these areas reached the queue manager (a clock advance is a
    # wait, not a call; the expiry area's calls are checked by its own test below).
    assert set(server.calls) == set(OPERATIONS) - {"AdvanceClock"} - EXPIRY_CALLS - TRIGGER_CALLS \
        - set(HANDLER_OPERATIONS), sorted(set(server.calls))
    # The platform read at connect decided the platform run on.
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["capabilities"]["platforms"] == [platform] and meta["system"]["platforms"] == [platform]
    # Every queue the kit defined carries the run's prefix and was deleted when its case ended.
    prefix = meta["system"]["prefix"]
    assert server.defined and all(q.startswith(prefix + ".") for q in server.defined)
    assert sorted(server.deleted) == sorted(server.defined)
    # What a client cannot do is not applicable, with the reason.
    assert verdicts["CORE-32"] == "not applicable" and verdicts["CORE-31"] == "not applicable"
    caps = meta["capabilities"]
    assert "alter_qmgr=yes" in caps["not_applicable"]["DLQ-01"] and "cluster" in caps["not_applicable"]["CLWL-01"]


@pytest.mark.parametrize("fault", ["backout-count-not-incremented", "get-inhibit-ignored"])
def test_a_faulty_queue_manager_is_found_through_the_adapter(fault, tmp_path, fast):
    ibmmq_standin.reset(faults=fault, fast=True)
    code, out, err = run_cli("run", *STANDIN, "--area", FAULTS[fault].area, "--examples", "30", "--seed", "7",
                             "--keep-going", "0", "--results", tmp_path / "r")
    assert code == 1, out[-3000:] + err
    assert {r for r, v in _verdicts(tmp_path / "r").items() if v in ("fail", "one of")} & set(FAULTS[fault].rules)


@pytest.mark.parametrize("fault", ["expired-message-returned", "remote-put-inner-expiry-unlimited"])
def test_an_expiry_fault_is_found_through_the_adapter_on_real_time(fault, tmp_path, fast):
    """Expiry runs on the queue manager's own clock; the MQXQH of a remote put is read back (EXP-18)."""
    ibmmq_standin.reset(faults=fault, fast=True)
    code, out, err = run_cli("run", *STANDIN, "--area", "expiry", "--examples", "30", "--seed", "3",
                             "--keep-going", "0", "--shrink-cases", "0", "--no-minimise", "--results", tmp_path / "r")
    assert code == 1, out[-3000:] + err
    assert {r for r, v in _verdicts(tmp_path / "r").items() if v in ("fail", "one of")} & set(FAULTS[fault].rules)


@pytest.mark.parametrize("platform,alter_qmgr", [(C.PLATFORM_DISTRIBUTED, "no"), (C.PLATFORM_ZOS, "yes")])
def test_the_expiry_area_passes_on_a_conforming_queue_manager(platform, alter_qmgr, tmp_path, fast):
    server = ibmmq_standin.reset(platform=platform, fast=True)
    server.qmgr_attrs["EXPRYINT"] = 30 if platform == C.PLATFORM_ZOS else 0   # scans the kit must turn off
    code, out, err = run_cli("run", *STANDIN, "--adapter-opt", f"alter_qmgr={alter_qmgr}", "--area", "expiry",
                             "--examples", "4", "--seed", "3", "--results", tmp_path / "r")
    assert code == 0, out[-3000:] + err
    verdicts = _verdicts(tmp_path / "r")
    assert {r for r, v in verdicts.items() if v in CLEAN} >= {"EXP-01", "EXP-02", "EXP-03", "EXP-06", "EXP-19"}
    assert {"DefineRemoteQueue", "Put1", "Put", "Get"} <= set(server.calls)
    if alter_qmgr == "yes":
        # Each case turned the scans off (and on where the machine asked), then put the value back.
        assert EXPIRY_CALLS <= set(server.calls)
        assert server.qmgr_attrs["EXPRYINT"] == 30
        assert verdicts["EXP-23"] in CLEAN
    else:
        assert verdicts["EXP-23"] == "not applicable" and "AlterQueueManager" not in server.calls
    assert verdicts["EXP-25"] == "not applicable"
    assert sorted(server.deleted) == sorted(server.defined)


def test_scans_the_kit_may_not_turn_off_make_the_expiry_area_not_applicable(tmp_path):
    server = ibmmq_standin.reset(platform=C.PLATFORM_ZOS)
    server.qmgr_attrs["EXPRYINT"] = 30
    code, out, err = run_cli("run", *STANDIN, "--area", "expiry", "--examples", "2", "--seed", "3",
                             "--results", tmp_path / "r")
    assert code == 2 and "no test case ran" in err and "every 30 s (EXPRYINT)" in err, out[-3000:] + err
    assert "Put" not in server.calls and server.qmgr_attrs["EXPRYINT"] == 30
    # The other areas run as before.
    caps = IbmMqAdapter(client="tests.ibmmq_standin").capabilities()
    assert set(caps.areas) == {"core", "syncpoint", "trigger"} and "EXPRYINT" in caps.not_applicable["EXP-01"]


def test_a_transmission_queue_header_is_built_and_read_as_the_mqi_lays_it_out():
    """MQXQH (StrucId, Version, RemoteQName, RemoteQMgrName), then an MQMD version 1, then the body."""
    import struct

    ibmmq_standin.reset()
    adapter = IbmMqAdapter(client="tests.ibmmq_standin")
    data = adapter._data(L.Put(conn="a", handle="h", body="payload", xmit_header=L.XmitHeader(expiry=37),
                               md=L.MessageDescriptor(format=C.MQFMT_XMIT_Q_HEADER)))
    assert len(data) == 428 + len("payload") and data[:4] == b"XQH " and data[428:] == b"payload"
    assert data[104:108] == b"MD  " and struct.unpack("=ii", data[108:116]) == (1, 0)   # version 1, no Report
    assert struct.unpack("=i", data[120:124]) == (37,)   # the embedded Expiry
    assert adapter._xmit_header(data) == (L.XmitHeader(expiry=37), b"payload")
    assert adapter._xmit_header(b"short") == (None, b"short")
    assert adapter._data(L.Put(conn="a", handle="h", body="plain")) == b"plain"
    adapter.close()


@pytest.mark.parametrize("platform,alter_qmgr", [(C.PLATFORM_DISTRIBUTED, "yes"), (C.PLATFORM_ZOS, "no")])
def test_the_trigger_area_passes_on_a_conforming_queue_manager(platform, alter_qmgr, tmp_path, fast):
    """Process definitions, initiation queues and trigger messages (MQTM) through the MQI; TRIGINT by option."""
    server = ibmmq_standin.reset(platform=platform, fast=True)
    code, out, err = run_cli("run", *STANDIN, "--adapter-opt", f"alter_qmgr={alter_qmgr}", "--area", "trigger",
                             "--examples", "10", "--seed", "3", "--results", tmp_path / "r")
    assert code == 0, out[-3000:] + err
    verdicts = _verdicts(tmp_path / "r")
    assert {r for r, v in verdicts.items() if v in CLEAN} >= {
        "TRIG-01", "TRIG-02", "TRIG-03", "TRIG-06", "TRIG-10", "TRIG-12", "TRIG-13", "TRIG-20", "TRIG-23", "TRIG-30"}
    assert verdicts["TRIG-17"] == "not applicable"   # a restart
    assert ("AlterQueueManager" in server.calls) == (alter_qmgr == "yes") and "DefineProcess" in server.calls
    assert server.qmgr_attrs["TRIGINT"] == C.DEFAULT_TRIGGER_INTERVAL   # put back after each case
    assert sorted(server.deleted) == sorted(server.defined)
    assert server.processes and sorted(server.processes_deleted) == sorted(server.processes)


@pytest.mark.parametrize("fault,alter_qmgr", [("first-fires-on-nonempty", "no"), ("trigger-message-expires", "no"),
                                               ("no-trigger-at-close", "no"), ("trigint-ignored", "yes")])
def test_a_trigger_fault_is_found_through_the_adapter(fault, alter_qmgr, tmp_path, fast):
    ibmmq_standin.reset(faults=fault, fast=True)
    code, out, err = run_cli("run", *STANDIN, "--adapter-opt", f"alter_qmgr={alter_qmgr}", "--area", "trigger",
                             "--examples", "30", "--seed", "7", "--keep-going", "0", "--results", tmp_path / "r")
    assert code == 1, out[-3000:] + err
    assert {r for r, v in _verdicts(tmp_path / "r").items() if v in ("fail", "one of")} & set(FAULTS[fault].rules)


def test_a_trigger_interval_the_kit_may_not_set_back_makes_the_trigger_area_not_applicable():
    server = ibmmq_standin.reset()
    server.qmgr_attrs["TRIGINT"] = 60000
    caps = IbmMqAdapter(client="tests.ibmmq_standin").capabilities()
    assert "trigger" not in caps.areas and "expiry" in caps.areas
    assert "trigger interval of 60000 ms (TRIGINT)" in caps.not_applicable["TRIG-01"]
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", alter_qmgr="yes")
    assert "trigger" in adapter.capabilities().areas
    adapter.start_case("c1")
    assert server.qmgr_attrs["TRIGINT"] == C.DEFAULT_TRIGGER_INTERVAL   # as the rules assume, for the case
    adapter.end_case()
    assert server.qmgr_attrs["TRIGINT"] == 60000   # and back
    adapter.close()


def test_a_trigger_message_is_read_as_the_mqi_lays_out_an_mqtm():
    import struct

    ibmmq_standin.reset()
    adapter = IbmMqAdapter(client="tests.ibmmq_standin")
    adapter.start_case("c1")
    tm = L.TriggerMessage(q_name="APP.Q", process_name="PROC", trigger_data="data", appl_type=C.MQAT_UNIX,
                          appl_id="/opt/app", env_data="env", user_data="user")
    prefixed = attrs.evolve(tm, q_name=adapter._name("APP.Q"), process_name=adapter._name("PROC"))
    data = ibmmq_standin._trigger_data(prefixed, "")
    assert len(data) == 684 and data[:4] == b"TM  " and struct.unpack("=i", data[4:8]) == (1,)
    assert data[8:8 + 48].rstrip() == adapter._name("APP.Q").encode()   # QName follows StrucId and Version
    assert adapter._trigger_message(data) == (tm, b"")
    assert adapter._trigger_message(b"TM  short") == (None, b"TM  short")
    adapter.end_case()
    adapter.close()


def test_cleanup_removes_what_a_killed_run_left_and_nothing_else():
    server = ibmmq_standin.reset()
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", prefix="MQC.OLD")
    adapter.start_case("left", None)
    for op in (L.DefineQueue(queue="Q1"), L.DefineQueue(queue="XQ"),
               L.DefineRemoteQueue(queue="R1", rname="Q", rqmname="FAR", xmitq="XQ"), L.DefineProcess(process="P1")):
        assert adapter.execute(op) == L.OK
    adapter.defined.clear()   # as if the run had been killed before its case ended
    adapter.processes.clear()
    adapter.close()
    server.leave("APP.QUEUE")   # someone else's queue and process
    server.leave("APP.PROCESS", process=True)
    assert sorted(IbmMqAdapter(client="tests.ibmmq_standin").cleanup("MQC.OLD.")) == [
        "MQC.OLD.1.P1", "MQC.OLD.1.Q1", "MQC.OLD.1.R1", "MQC.OLD.1.XQ"]
    assert sorted(server.deleted) == ["MQC.OLD.1.Q1", "MQC.OLD.1.R1", "MQC.OLD.1.XQ"]
    assert server.processes_deleted == ["MQC.OLD.1.P1"]


def test_a_bad_prefix_is_refused():
    from adapters.base import AdapterOptionError

    ibmmq_standin.reset()
    with pytest.raises(AdapterOptionError, match="prefix"):
        IbmMqAdapter(client="tests.ibmmq_standin", prefix="lower.case")


def test_identifiers_the_kit_chose_come_back_as_text_and_generated_ones_in_hex():
    assert _identifier_text(_identifier("ID0002")) == "ID0002"
    generated = b"AMQ QM1     " + bytes(range(1, 13))
    assert _identifier_text(generated) == generated.hex()
    assert _identifier_text(b"\0" * 24) == ""


def test_the_cleanup_command_deletes_a_runs_queues_and_refuses_a_prefix_that_could_match_others():
    server = ibmmq_standin.reset()
    for name in ("MQC.DEAD.3.Q1", "MQC.DEAD.3.Q2", "MQC.LIVE.1.Q1"):
        server.leave(name)
    code, out, err = run_cli("ibmmq", "cleanup", "--prefix", "MQC.DEAD", "--adapter-opt", "client=tests.ibmmq_standin")
    assert code == 0 and sorted(server.deleted) == ["MQC.DEAD.3.Q1", "MQC.DEAD.3.Q2"], (out, err)
    assert "2 object(s) with prefix MQC.DEAD deleted" in out
    for bad in ("", "S", "SYSTEM.ADMIN", "mqc.dead"):
        code, out, err = run_cli("ibmmq", "cleanup", "--prefix", bad, "--adapter-opt", "client=tests.ibmmq_standin")
        assert code == 2 and err.count("\n") == 1 and "prefix" in err, (bad, err)
    assert sorted(server.deleted) == ["MQC.DEAD.3.Q1", "MQC.DEAD.3.Q2"]


def test_segments_travel_through_the_adapter_with_their_status_and_offset():
    """MAXMSGL, MsgFlags, and a get's Offset and SegmentStatus are mapped both ways (CORE-49, CORE-50)."""
    ibmmq_standin.reset()
    adapter = IbmMqAdapter(client="tests.ibmmq_standin")
    adapter.start_case("c1")
    try:
        for op in (L.DefineQueue(queue="Q1", attrs={"MAXMSGL": 16}), L.Connect(conn="a"),
                   L.Open(conn="a", handle="a.Q1", queue="Q1", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)):
            assert adapter.execute(op).rc == 0
        body = "abcdefghijklmnopqrstuvwxyz" + "0123456789" * 2 + "!?"
        assert adapter.execute(L.Put(conn="a", handle="a.Q1", body=body)).rc == C.MQRC_MSG_TOO_BIG_FOR_Q
        assert adapter.execute(L.Put(conn="a", handle="a.Q1", body=body,
                                     md=L.MessageDescriptor(msg_flags=C.MQMF_SEGMENTATION_ALLOWED))).rc == 0
        got = [adapter.execute(L.Get(conn="a", handle="a.Q1")).message for _ in range(3)]
        assert [(m.body, m.offset, m.segment_status) for m in got] == [
            (body[:16], 0, C.MQSS_SEGMENT), (body[16:32], 16, C.MQSS_SEGMENT), (body[32:], 32, C.MQSS_LAST_SEGMENT)]
    finally:
        adapter.end_case()
        adapter.close()


@pytest.fixture
def fast(monkeypatch):
    """The stand-in's clock for the adapter too, with waits skipped: a dlq case waits tens of seconds for
    rescans and expiry on a real queue manager, and both clocks move on together here instead."""
    monkeypatch.setattr(adapters.ibmmq, "time", ibmmq_standin.CLOCK)
    yield
    ibmmq_standin.CLOCK.fast = False


#: Seed 4: its 20 cases reach every rule the conforming runs below ask for (seed 3's no longer reach DLQ-21 since the
#: DLQ machine's rule of a table that ignores every message: a rule more to draw among).
def _dlq_run(tmp_path, *extra, examples="20"):
    return run_cli("run", *STANDIN, "--adapter-opt", "alter_qmgr=yes", *extra, "--area", "dlq",
                   "--examples", examples, "--seed", "4", "--keep-going", "0", "--results", tmp_path / "r")


@pytest.mark.parametrize("platform", [C.PLATFORM_DISTRIBUTED, C.PLATFORM_ZOS])
def test_the_dlq_area_passes_on_a_conforming_queue_manager(platform, fast, tmp_path):
    """The kit's DLQ handler as an MQ client of the queue manager: dead letters with their MQDLH put and
    browsed through the MQI, DEADQ set for each case and put back, every queue removed."""
    server = ibmmq_standin.reset(platform=platform, fast=True)
    code, out, err = _dlq_run(tmp_path)
    assert code == 0, out[-3000:] + err
    verdicts = _verdicts(tmp_path / "r")
    assert {r for r, v in verdicts.items() if v in CLEAN} >= {
        "DLQ-01", "DLQ-02", "DLQ-06", "DLQ-07", "DLQ-09", "DLQ-11", "DLQ-12", "DLQ-20", "DLQ-21", "DLQ-22"}
    assert {"Put1", "Get", "AlterQueueManager"} <= set(server.calls)
    assert server.qmgr_attrs["DEADQ"] == "" and sorted(server.deleted) == sorted(server.defined)
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["system"]["dlq_handler"] == "mqconform (built in)"


def test_a_queue_manager_fault_is_found_in_the_dlq_area(fast, tmp_path):
    ibmmq_standin.reset(faults="dead-letter-expired-no-report", fast=True)
    code, out, err = _dlq_run(tmp_path, examples="60")
    assert code == 1, out[-3000:] + err
    assert {r for r, v in _verdicts(tmp_path / "r").items() if v in ("fail", "one of")} \
        & set(FAULTS["dead-letter-expired-no-report"].rules)


def test_a_handler_program_given_by_option_is_the_one_checked(fast, tmp_path):
    """``dlq_handler=COMMAND``: a program speaking the handler protocol (here the kit's own, broken on
    purpose) works the dead-letter queue through the adapter, and its departure is found."""
    import sys

    ibmmq_standin.reset(fast=True)
    command = f"{sys.executable} -m adapters.dlq_handler --fault dlq-ignore-not-assumed"
    code, out, err = _dlq_run(tmp_path, "--adapter-opt", f"dlq_handler={command}", "--shrink-cases", "0",
                              "--no-minimise", examples="10")
    assert code == 1, out[-3000:] + err
    assert {r for r, v in _verdicts(tmp_path / "r").items() if v in ("fail", "one of")} \
        & set(FAULTS["dlq-ignore-not-assumed"].rules)
    assert json.loads((tmp_path / "r" / "run.json").read_text())["system"]["dlq_handler"] == command


def test_without_alter_qmgr_the_dlq_area_is_not_offered(tmp_path):
    ibmmq_standin.reset()
    caps = IbmMqAdapter(client="tests.ibmmq_standin").capabilities()
    assert "dlq" not in caps.areas and "DEADQ" in caps.not_applicable["DLQ-20"]
    code, out, err = run_cli("run", *STANDIN, "--area", "dlq", "--results", tmp_path / "r")
    assert code == 2 and "DEADQ" in err and err.count("\n") == 1, err


def test_a_dead_letter_header_travels_as_an_mqdlh_with_the_case_prefix_on_its_destination():
    server = ibmmq_standin.reset()
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", alter_qmgr="yes")
    adapter.start_case("c1")
    dlh = L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A", format=C.MQFMT_STRING,
                             put_appl_type=C.MQAT_UNIX, put_appl_name="payroll")
    far = L.DeadLetterHeader(reason=C.MQRC_PUT_INHIBITED, dest_q="A", dest_qmgr="FAR.QM")
    try:
        for op in (L.DefineQueue(queue="DLQ"), L.Connect(conn="a"),
                   L.Put1(conn="a", queue="DLQ", body="one", dlh=dlh,
                          md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id="M1")),
                   L.Put1(conn="a", queue="DLQ", body="two", dlh=far,
                          md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id="M2")),
                   L.Open(conn="a", handle="h", queue="DLQ", options=C.MQOO_INPUT_SHARED)):
            assert adapter.execute(op).rc == 0, op
        held = sorted((m.body, m.dlh) for m in server.qm.queues[adapter._name("DLQ")].all_messages())
        held = [dlh for _, dlh in held]
        assert held[0].dest_q == adapter._name("A") and held[0].put_appl_name == "payroll"
        assert held[1].dest_q == "A" and held[1].dest_qmgr == "FAR.QM"   # another queue manager's queue
        got = [adapter.execute(L.Get(conn="a", handle="h")).message for _ in range(2)]
        assert [(m.body, m.format, m.dlh) for m in got] == [("one", C.MQFMT_DEAD_LETTER_HEADER, dlh),
                                                            ("two", C.MQFMT_DEAD_LETTER_HEADER, far)]
        # The queue manager writes its own name in DestQMgrName: the language's blank.
        assert adapter._dead_letter_header(
            ibmmq_standin.DLH(Reason=1, DestQName=adapter._name("B").encode().ljust(48),
                              DestQMgrName=adapter.qmgr_name.encode().ljust(48)).pack())[0] \
            == L.DeadLetterHeader(reason=1, dest_q="B", format="", put_appl_type=0)
    finally:
        adapter.end_case()
        adapter.close()


def test_a_context_passed_on_is_set_with_set_all_context():
    """MQPMO_PASS_ALL_CONTEXT takes the context from an input handle the language does not name; the
    adapter sets the same fields with MQPMO_SET_ALL_CONTEXT (the stand-in refuses PASS without a handle)."""
    ibmmq_standin.reset()
    adapter = IbmMqAdapter(client="tests.ibmmq_standin")
    adapter.start_case("c1")
    context = L.MessageContext(user_id="alice", put_appl_type=C.MQAT_UNIX, put_appl_name="payroll")
    try:
        for op in (L.DefineQueue(queue="Q"), L.Connect(conn="a"),
                   L.Put1(conn="a", queue="Q", body="m", md=L.MessageDescriptor(context=context),
                          options=C.MQPMO_NO_SYNCPOINT | C.MQPMO_PASS_ALL_CONTEXT),
                   L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_INPUT_SHARED)):
            assert adapter.execute(op).rc == 0, op
        assert adapter.execute(L.Get(conn="a", handle="h")).message.context == context
    finally:
        adapter.end_case()
        adapter.close()


def test_an_identifier_the_queue_manager_made_goes_back_as_the_same_bytes():
    generated = bytes(range(200, 224))
    assert _identifier(_identifier_text(generated)) == generated


# -- a queue-sharing group (z/OS): the members the group option names -------------------------------------------

GROUP = ("--adapter-opt", "group=QMB@mvs2(1414)", "--adapter-opt", "cfstruct=APPL1")


def test_the_group_rules_run_on_the_members_the_group_option_names(fast, tmp_path):
    server = ibmmq_standin.reset(platform=C.PLATFORM_ZOS, group=("QMB",), fast=True)
    code, out, err = run_cli("run", *STANDIN, *GROUP, "--area", "trigger", "--examples", "12", "--seed", "3",
                             "--results", tmp_path / "r")
    assert code == 0, out[-3000:] + err
    verdicts = _verdicts(tmp_path / "r")
    assert {verdicts[r] for r in ("TRIG-05", "TRIG-07", "TRIG-08")} <= CLEAN
    # The member's own initiation queue, the group's shared queue and its process were defined where
    # they belong (QSGDISP), and removed with the same disposition when each case ended.
    assert any(k.endswith(".INIT.Q@QMB") for k in server.defined)
    assert any(k.endswith(".SHARED.Q") and server.types[k] == 1 for k in server.defined)
    assert sorted(server.deleted) == sorted(server.defined) and not server.placement
    assert server.processes and sorted(server.processes_deleted) == sorted(server.processes)
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["system"]["group"] == ["QMB"] and meta["system"]["cfstruct"] == "APPL1"


def test_another_members_expiry_scans_are_checked_and_its_attribute_put_back(fast, tmp_path):
    server = ibmmq_standin.reset(platform=C.PLATFORM_ZOS, group=("QMB",), fast=True)
    server.member_attrs["QMB"]["EXPRYINT"] = 45
    code, out, err = run_cli("run", *STANDIN, *GROUP, "--adapter-opt", "alter_qmgr=yes", "--area", "expiry",
                             "--examples", "12", "--seed", "3", "--results", tmp_path / "r")
    assert code == 0, out[-3000:] + err
    assert _verdicts(tmp_path / "r")["EXP-25"] in CLEAN
    assert server.member_attrs["QMB"]["EXPRYINT"] == 45 and not server.placement


@pytest.mark.parametrize("fault", ["one-trigger-per-group", "open-input-counted-group-wide"])
def test_a_group_fault_is_found_through_the_adapter(fault, fast, tmp_path):
    ibmmq_standin.reset(platform=C.PLATFORM_ZOS, group=("QMB",), fast=True, faults=fault)
    code, out, err = run_cli("run", *STANDIN, *GROUP, "--area", "trigger", "--examples", "40", "--seed", "3",
                             "--keep-going", "0", "--results", tmp_path / "r")
    assert code == 1, out[-3000:] + err
    assert {r for r, v in _verdicts(tmp_path / "r").items() if v in ("fail", "one of")} & set(FAULTS[fault].rules)


def test_without_the_group_option_the_group_rules_are_not_applicable_with_the_reason():
    ibmmq_standin.reset(platform=C.PLATFORM_ZOS, group=("QMB",))
    caps = IbmMqAdapter(client="tests.ibmmq_standin").capabilities()
    assert all("group" in caps.not_applicable[r] for r in ("EXP-25", "TRIG-05", "TRIG-07", "TRIG-08"))
    assert "DefineQueueSharingGroup" not in caps.operations
    grouped = IbmMqAdapter(client="tests.ibmmq_standin", group="QMB@mvs2(1414)", cfstruct="APPL1")
    caps = grouped.capabilities()
    assert not {"TRIG-05", "TRIG-07", "TRIG-08"} & set(caps.not_applicable)
    assert "alter_qmgr=yes" in caps.not_applicable["EXP-25"]   # another member's EXPRYINT is altered
    assert grouped.express(L.DefineQueueSharingGroup(qmgrs=("QM2", "QM3"))) is None   # one member named
    grouped.close()


@pytest.mark.parametrize("options,platform,message", [
    ({"group": "QMB@mvs2(1414)"}, C.PLATFORM_ZOS, "cfstruct"),
    ({"group": "QMB@mvs2(1414)", "cfstruct": "APPL1"}, C.PLATFORM_DISTRIBUTED, "z/OS"),
    ({"group": "LONGNAME@mvs2(1414)", "cfstruct": "APPL1"}, C.PLATFORM_ZOS, "4 characters"),
])
def test_a_group_option_that_cannot_work_is_refused(options, platform, message):
    from adapters.base import AdapterOptionError

    ibmmq_standin.reset(platform=platform, group=("QMB",) if platform == C.PLATFORM_ZOS else ())
    with pytest.raises(AdapterOptionError, match=message):
        IbmMqAdapter(client="tests.ibmmq_standin", **options)


def test_cleanup_removes_a_killed_runs_objects_on_the_members_and_in_the_group():
    server = ibmmq_standin.reset(platform=C.PLATFORM_ZOS, group=("QMB",))
    server.leave("MQC.OLD.1.INIT.Q", member="QMB")
    server.leave("MQC.OLD.1.SHARED.Q", disposition=C.MQQSGD_SHARED)
    server.leave("MQC.OLD.1.APP.PROCESS", disposition=C.MQQSGD_GROUP, process=True)
    server.leave("APP.INIT.Q", member="QMB")   # another application's
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", group="QMB@mvs2(1414)", cfstruct="APPL1")
    assert sorted(adapter.cleanup("MQC.OLD.")) == ["MQC.OLD.1.APP.PROCESS", "MQC.OLD.1.INIT.Q", "MQC.OLD.1.SHARED.Q"]
    assert sorted(server.deleted) == ["MQC.OLD.1.INIT.Q@QMB", "MQC.OLD.1.SHARED.Q"]
    assert server.processes_deleted == ["MQC.OLD.1.APP.PROCESS"] and "APP.INIT.Q@QMB" in server.placement
    adapter.close()


# -- a cluster set up for the kit: the members the cluster options name ----------------------------------------

MEMBERS = ("CLA", "CLB", "CLC", "CLD")
CLUSTER = ("--adapter-opt", "cluster=KIT", "--adapter-opt", "alter_qmgr=yes", "--adapter-opt",
           "cluster_members=" + ",".join(f"{m}@{m.lower()}(1414)" for m in MEMBERS))


def _cluster_run(tmp_path, *extra, examples="40"):
    return run_cli("run", *STANDIN, *CLUSTER, *extra, "--area", "cluster", "--examples", examples, "--seed", "4",
                   "--results", tmp_path / "r")


def test_the_cluster_area_runs_on_the_members_and_puts_everything_back(fast, tmp_path):
    # Each change on a member reaches the queue manager's repository two inquiries later.
    server = ibmmq_standin.reset(fast=True, cluster=("KIT", MEMBERS, 2))
    code, out, err = _cluster_run(tmp_path)
    assert code == 0, out[-3000:] + err
    verdicts = _verdicts(tmp_path / "r")
    assert {verdicts[r] for r in ("CLWL-01", "CLWL-03", "CLWL-04a", "CLWL-04b", "CLWL-06", "CLWL-12")} <= CLEAN
    from adapters.ibmmq.cluster import NOT_EXPRESSIBLE
    assert {verdicts[r] for r in NOT_EXPRESSIBLE} == {"not applicable"}
    # Everything the cases changed was put back: instances deleted, channels' attributes as they were
    # and none stopped, no member suspended, the queue manager's CLWLUSEQ and CLWLMRUC as before.
    cluster = server.cluster
    assert server.defined and sorted(server.deleted) == sorted(server.defined) and not cluster.instances
    assert all(r == dict(name=f"TO.{m}", clwlrank=0, clwlprty=0, clwlwght=50, netprty=0)
               for m, r in cluster.receivers.items())
    assert 6 not in cluster.status.values() and not cluster.suspended and not cluster.sctq
    assert (server.qmgr_attrs["CLWLUSEQ"], server.qmgr_attrs["CLWLMRUC"]) == (0, 999999999)
    # Every cluster operation the adapter maps reached the queue manager, by every command it maps to.
    assert cluster.applied == {"SetClusterQueueManager", "SetClusterChannel", "SetClusterInstance",
                               "RemoveClusterInstance"} and "ClusterPut" in server.calls
    assert cluster.commands >= {"MQCMD_CREATE_Q", "MQCMD_CHANGE_Q", "MQCMD_DELETE_Q", "MQCMD_CHANGE_CHANNEL",
                                "MQCMD_STOP_CHANNEL", "MQCMD_START_CHANNEL", "MQCMD_SUSPEND_Q_MGR_CLUSTER",
                                "MQCMD_RESUME_Q_MGR_CLUSTER", "MQCMD_INQUIRE_CLUSTER_Q_MGR", "MQCMD_INQUIRE_Q",
                                "MQCMD_INQUIRE_CHANNEL_STATUS", "MQCMD_INQUIRE_CHANNEL"}
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["system"]["cluster"] == "KIT" and meta["system"]["cluster_members"] == list(MEMBERS)


@pytest.mark.parametrize("fault", ["weights-ignored", "local-not-preferred", "rank-ignored", "channel-state-ignored"])
def test_a_cluster_fault_is_found_through_the_adapter(fault, fast, tmp_path):
    ibmmq_standin.reset(fast=True, faults=fault, cluster=("KIT", MEMBERS, 1))
    code, out, err = _cluster_run(tmp_path, "--keep-going", "0", examples="60")
    assert code == 1, out[-3000:] + err
    assert {r for r, v in _verdicts(tmp_path / "r").items() if v in ("fail", "one of")} & set(FAULTS[fault].rules)


def test_a_change_the_queue_manager_never_sees_is_an_error_not_a_verdict(fast, tmp_path):
    ibmmq_standin.reset(fast=True, cluster=("KIT", MEMBERS, 10 ** 9))
    code, out, err = _cluster_run(tmp_path, "--adapter-opt", "cluster_wait=2", examples="3")
    assert code not in (0, 1), out[-3000:] + err
    assert "cluster_wait" in out + err and "Traceback" not in out + err
    assert not {"fail", "one of"} & set(_verdicts(tmp_path / "r").values())


def test_without_the_cluster_options_the_cluster_area_is_not_offered_with_the_reason():
    from adapters.base import AdapterOptionError

    ibmmq_standin.reset(cluster=("KIT", MEMBERS, 0))
    caps = IbmMqAdapter(client="tests.ibmmq_standin").capabilities()
    assert "cluster" not in caps.areas and "cluster_members" in caps.not_applicable["CLWL-12"]
    # Without alter_qmgr the queue manager's CLWLUSEQ and CLWLMRUC cannot be set for each case.
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", cluster="KIT", cluster_members="CLA@a(1)")
    assert "cluster" not in adapter.capabilities().areas
    adapter.close()
    with pytest.raises(AdapterOptionError, match="go together"):
        IbmMqAdapter(client="tests.ibmmq_standin", cluster="KIT")
    with pytest.raises(AdapterOptionError, match="cluster_wait"):
        IbmMqAdapter(client="tests.ibmmq_standin", cluster="KIT", cluster_members="CLA@a(1)", cluster_wait="soon")


def test_a_run_starts_with_the_members_a_killed_run_left_suspended_resumed_and_its_channels_started(fast):
    server = ibmmq_standin.reset(fast=True, cluster=("KIT", MEMBERS, 1))
    server.cluster.suspended.add("CLB")
    server.cluster.status["CLC"] = 6
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", cluster="KIT", cluster_members="CLA@a(1),CLB@b(1),CLC@c(1)",
                           alter_qmgr="yes")
    assert not server.cluster.suspended and server.cluster.status["CLC"] == 3
    assert "cluster" in adapter.capabilities().areas
    adapter.close()


def test_a_member_without_a_receiver_channel_in_the_cluster_stops_the_run_before_any_case():
    from adapters.base import AdapterError

    ibmmq_standin.reset(cluster=("KIT", MEMBERS, 0))
    with pytest.raises(AdapterError, match="no cluster-receiver channel in cluster ELSE"):
        IbmMqAdapter(client="tests.ibmmq_standin", cluster="ELSE", cluster_members="CLA@a(1)", alter_qmgr="yes")


def test_cleanup_with_the_cluster_options_removes_a_killed_runs_instances_on_the_members(fast):
    server = ibmmq_standin.reset(fast=True, cluster=("KIT", MEMBERS, 0))
    options = dict(client="tests.ibmmq_standin", cluster="KIT", cluster_members="CLA@a(1)", alter_qmgr="yes",
                   prefix="MQC.OLD")
    adapter = IbmMqAdapter(**options)
    adapter.start_case("left", None)
    for op in (L.SetClusterQueueManager(name="GW", clusters=("SALES",), local=True),
               L.SetClusterChannel(name="TO.QM1", qmgr="QM1", clusters=("SALES",), state=3),
               L.SetClusterInstance(qmgr="QM1", queue="ORDERS", clusters=("SALES",)),
               L.SetClusterInstance(qmgr="GW", queue="ORDERS", clusters=("SALES",))):
        assert adapter.execute(op) == L.OK
    assert set(server.cluster.instances) == {("CLA", "MQC.OLD.1.ORDERS"), ("QM1", "MQC.OLD.1.ORDERS")}
    adapter.cluster.instances.clear()   # as if the run had been killed before its case ended
    adapter.close()
    assert sorted(IbmMqAdapter(**options).cleanup("MQC.OLD.")) == ["MQC.OLD.1.ORDERS"] * 2
    assert not server.cluster.instances and sorted(server.deleted) == ["MQC.OLD.1.ORDERS", "MQC.OLD.1.ORDERS@CLA"]


def test_a_cluster_command_the_queue_manager_refuses_is_an_error_not_a_verdict(fast):
    from adapters.base import AdapterError

    server = ibmmq_standin.reset(fast=True, cluster=("KIT", MEMBERS, 0))
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", cluster="KIT", cluster_members="CLA@a(1)", alter_qmgr="yes")
    adapter.start_case("c", None)
    assert adapter.execute(L.SetClusterQueueManager(name="GW", clusters=("SALES",), local=True)) == L.OK
    server.cluster.receivers["CLA"]["name"] = "RENAMED"   # the channel the adapter found is gone
    with pytest.raises(AdapterError, match="SetClusterChannel refused by the queue manager"):
        adapter.execute(L.SetClusterChannel(name="TO.QM1", qmgr="QM1", clusters=("SALES",), clwlwght=20))
    server.cluster.receivers["CLA"]["name"] = "TO.CLA"
    adapter.close()


def test_a_channel_with_no_status_yet_is_started_then_stopped(fast):
    """MQ may refuse to stop an inactive channel (MQRCCF_CHANNEL_NOT_ACTIVE): the adapter starts it first."""
    server = ibmmq_standin.reset(fast=True, cluster=("KIT", MEMBERS, 0))
    adapter = IbmMqAdapter(client="tests.ibmmq_standin", cluster="KIT", cluster_members="CLA@a(1)", alter_qmgr="yes")
    adapter.start_case("c", None)
    assert server.cluster.status["CLA"] == 0
    assert adapter.execute(L.SetClusterChannel(name="TO.QM1", qmgr="QM1", clusters=("SALES",), state=6)) == L.OK
    assert server.cluster.status["CLA"] == 6
    adapter.close()   # the case's end starts it again
    assert server.cluster.status["CLA"] == 3
