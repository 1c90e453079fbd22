"""Input classes per rule: declared in the model, reached by checked steps, shown by runs and reports."""

from __future__ import annotations

import json

import attrs
import pytest

from adapters.registry import create_adapter
from conformance import cli
from conformance.records.results import Coverage
from conformance.runner.session import NonConformance, Session
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.classes import CLASSES
from reference_model.rules import RULES
from reports.inputs import ReportInputError, load_run
from reports.matrix import build

STD = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE


def test_every_declaration_names_a_rule_and_distinct_classes():
    ids = {r.id for r in RULES.all()}
    assert CLASSES and set(CLASSES) <= ids
    for entry in CLASSES.values():
        assert len(entry.names) >= 2, entry.rule   # one class distinguishes nothing


def _session(faults: str = "", area: str = "core") -> Session:
    options = {"faults": faults} if faults else {}
    session = Session(create_adapter("simulated", options), area, options, coverage=Coverage(),
                      platform=C.PLATFORM_DISTRIBUTED)
    session.start_case()
    return session


def _priority_queue(session: Session) -> None:
    session.execute(L.DefineQueue(queue="Q1", attrs={"MSGDLVSQ": C.MQMDS_PRIORITY}))
    session.execute(L.Connect(conn="a"))
    session.execute(L.Open(conn="a", handle="h", queue="Q1", options=STD))


def _put(session: Session, body: str, priority: int) -> None:
    session.execute(L.Put(conn="a", handle="h", body=body, md=L.MessageDescriptor(priority=priority)))


def test_a_get_is_classed_by_whether_the_higher_priority_came_first_or_after():
    session = _session()
    _priority_queue(session)
    _put(session, "low", 1)
    _put(session, "high", 5)
    session.execute(L.Get(conn="a", handle="h"))
    reached = session.coverage.classes
    assert reached["CORE-04:the higher priority put after a lower one"] == 1
    assert reached["CORE-04:the higher priority put first"] == 0
    session.execute(L.Get(conn="a", handle="h"))   # "low": the queue is empty again
    _put(session, "high first", 5)
    _put(session, "low after", 1)
    session.execute(L.Get(conn="a", handle="h"))
    assert session.coverage.classes["CORE-04:the higher priority put first"] == 1   # counts are added when read


def test_a_step_that_breaks_the_rule_reaches_no_class():
    """Only checked steps count: a class is reached when the system was seen to get it right."""
    session = _session(faults="priority-ignored")
    _priority_queue(session)
    _put(session, "low", 1)
    _put(session, "high", 5)
    with pytest.raises(NonConformance):
        session.execute(L.Get(conn="a", handle="h"))
    assert not any(k.startswith("CORE-04:") for k, n in session.coverage.classes.items() if n)


def test_a_get_that_finds_nothing_is_classed_by_what_the_queue_held_and_how_it_waited():
    session = _session()
    _priority_queue(session)
    session.execute(L.Connect(conn="b"))
    session.execute(L.Open(conn="b", handle="hb", queue="Q1", options=STD))
    session.execute(L.Get(conn="a", handle="h", options=C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, wait_interval=0))
    reached = session.coverage.classes
    assert reached["CORE-13:queue empty"] == 1 and reached["CORE-13:MQGMO_WAIT with a zero interval"] == 1
    _put(session, "mine", 3)   # outside syncpoint (the default on distributed platforms)
    session.execute(L.Put(conn="a", handle="h", body="own", options=C.MQPMO_SYNCPOINT))
    session.execute(L.Get(conn="b", handle="hb", options=C.MQGMO_NO_SYNCPOINT))   # takes "mine"
    session.execute(L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT))
    reached = session.coverage.classes   # read again: counts are added when read
    assert reached["CORE-13:only its own uncommitted puts"] == 1 and reached["CORE-13:no wait"] == 1
    session.execute(L.Get(conn="b", handle="hb", options=C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, wait_interval=5))
    reached = session.coverage.classes
    assert reached["CORE-13:only another's uncommitted puts"] == 1 and reached["CORE-13:a wait interval"] == 1


def _trigger_put(priority: int, threshold: int) -> dict[str, int]:
    session = _session(area="trigger")
    session.execute(L.DefineQueue(queue="INITQ"))
    session.execute(L.DefineProcess(process="P"))
    session.execute(L.DefineQueue(queue="APPQ", attrs={"TRIGGER": C.MQTC_ON, "TRIGTYPE": C.MQTT_EVERY,
                                                      "TRIGMPRI": threshold, "INITQ": "INITQ",
                                                      "PROCESS": "P"}))
    session.execute(L.Connect(conn="mon"))
    session.execute(L.Open(conn="mon", handle="mon.i", queue="INITQ", options=C.MQOO_INPUT_SHARED))
    session.execute(L.Connect(conn="a"))
    session.execute(L.Put1(conn="a", queue="APPQ", body="m", md=L.MessageDescriptor(priority=priority)))
    return session.coverage.classes


def test_a_get_past_expired_messages_is_classed_by_how_many_it_discards_and_their_priority():
    session = _session(area="expiry")
    _priority_queue(session)
    for body, priority, expiry in (("old high", 7, 5), ("old same", 3, 5), ("live", 3, C.MQEI_UNLIMITED)):
        session.execute(L.Put(conn="a", handle="h", body=body,
                              md=L.MessageDescriptor(priority=priority, expiry=expiry)))
    session.execute(L.AdvanceClock(tenths=20))
    obs = session.execute(L.Get(conn="a", handle="h", options=C.MQGMO_SYNCPOINT))
    assert obs.message.body == "live"
    reached = session.coverage.classes
    assert reached["EXP-04:by a get"] == 1 and reached["EXP-04:several expired messages ahead"] == 1
    assert reached["EXP-04:one expired message ahead"] == 0 and reached["EXP-04:no unexpired message after them"] == 0
    assert reached["EXP-05:expired of higher priority ahead"] == 1
    assert reached["EXP-05:expired of the same priority ahead"] == 1
    assert reached["EXP-13:a get under syncpoint"] == 1 and reached["EXP-13:a get outside syncpoint"] == 0


@pytest.mark.parametrize("priority, threshold, expected", [
    (3, 0, "TriggerMsgPriority 0"), (2, 4, "below TriggerMsgPriority"),
    (4, 4, "at TriggerMsgPriority"), (6, 4, "above TriggerMsgPriority"),
])
def test_trigger_priority_classes(priority, threshold, expected):
    reached = {k for k, n in _trigger_put(priority, threshold).items() if n and k.startswith("TRIG-02:")}
    assert reached == {f"TRIG-02:{expected}"}


def _start_handler(table: str) -> dict[str, int]:
    session = _session(area="dlq")
    session.execute(L.DefineQueue(queue="DLQ"))
    session.execute(L.AlterQueueManager(attrs={"DEADQ": "DLQ"}))
    session.execute(L.StartDlqHandler(handler="H", table=table))
    return {k.split(":", 1)[1] for k, n in session.coverage.classes.items() if n and k.startswith("DLQ-09:")}


def test_each_broken_line_the_dlq_machine_draws_is_refused_and_together_they_reach_every_kind_of_error():
    """The simulated handler refuses each broken table as the model does (else the step would fail),
    and the dlq machine's broken lines between them reach every kind of error DLQ-09 tells apart."""
    from conformance.generator.dlq import ALL_BROKEN, broken, render
    from reference_model.dlq_table import ERROR_KINDS
    entries = [{"RETRYINT": "10"}, {"REASON": "MQRC_Q_FULL", "ACTION": "DISCARD"}]
    assert _start_handler(render(entries, 0)) == {"a valid table"}
    reached = set()
    for line in ALL_BROKEN:
        kinds = _start_handler(broken(entries, 0, line))
        assert kinds and "a valid table" not in kinds, line
        reached |= kinds
    assert reached == set(ERROR_KINDS)


def test_classes_survive_the_record_and_merge():
    a, b = Coverage(), Coverage()
    a.classes["CORE-05:two of the highest priority"] += 2
    b.classes["CORE-05:two of the highest priority"] += 1
    back = Coverage.from_json(json.loads(json.dumps(a.to_json())))
    back.merge(b)
    assert back.class_counts("CORE-05") == {"two of the highest priority": 3,
                                            "three or more of the highest priority": 0,
                                            "one put earlier, committed after one put later": 0,
                                            "a backed-out message among them": 0}
    assert back.unreached("CORE-05") == ["three or more of the highest priority",
                                         "one put earlier, committed after one put later",
                                         "a backed-out message among them"]


def test_a_small_run_lists_the_classes_it_never_reached_and_reports_show_them(tmp_path, capsys):
    results = tmp_path / "run"
    code = cli.main(["run", "--adapter", "simulated", "--area", "core", "--examples", "3", "--seed", "5",
                     "--results", str(results)])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = {r["rule"]: r for r in map(json.loads, (results / "rules.jsonl").read_text().splitlines())}
    partly = {rid for rid, r in rows.items() if r["verdict"] == "partly exercised"}
    assert partly, "three cases should leave some input class unreached"
    # checked and never broken, yet a class unreached: partly exercised, never a pass
    assert all("classes" in rows[rid] and not all(rows[rid]["classes"].values()) for rid in partly)
    assert not [rid for rid, r in rows.items() if r["verdict"] == "pass" and not all(r.get("classes", {1: 1}).values())]
    assert "partly exercised" in out and "input classes never reached" in out and all(rid in out for rid in partly)
    assert all(set(rows[rid]["classes"]) == set(CLASSES[rid].names) for rid in CLASSES if rid in rows)

    md = tmp_path / "r.md"
    assert cli.main(["report", str(results), "--format", "md", "--out", str(md)]) == 0
    text = md.read_text()
    assert "### Input classes never reached" in text and all(f"| {rid} " in text for rid in partly)
    html = tmp_path / "r.html"
    assert cli.main(["report", str(results), "--format", "html", "--out", str(html)]) == 0
    assert "Input classes never reached" in html.read_text()


def test_a_rule_record_with_malformed_classes_is_refused_in_one_line(tmp_path):
    results = tmp_path / "run"
    assert cli.main(["run", "--adapter", "simulated", "--area", "core", "--examples", "2", "--seed", "5",
                     "--results", str(results)]) == 0
    lines = (results / "rules.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row["classes"] = {"x": "many"}
    (results / "rules.jsonl").write_text("\n".join([json.dumps(row)] + lines[1:]) + "\n")
    with pytest.raises(ReportInputError, match="classes must map"):
        build([load_run(results)])


def test_a_verdict_is_earned_a_failure_beats_a_declaration_and_a_pass_needs_every_class():
    """A recorded failure is a fail even where the adapter declared the rule not applicable (the declaration
    is contradicted and the row says so); checked with a class never reached is partly exercised, not pass."""
    from conformance.records.results import FAIL, NOT_APPLICABLE, PARTLY, PASS, RunRecord, verdict_for
    from reference_model.rules import RULES

    rule = RULES["CORE-23"]
    coverage = Coverage()
    coverage.checked["CORE-23"] += 5
    coverage.classes["CORE-23:queue not open for input"] += 3
    coverage.classes["CORE-23:queue open for shared input"] += 2
    assert verdict_for(rule, coverage, applicable=True, error=False) == PARTLY
    coverage.classes["CORE-23:queue open for exclusive input"] += 1
    coverage.classes["CORE-23:as the queue defines, DEFSOPT(SHARED), on a queue open for shared input"] += 1
    assert verdict_for(rule, coverage, applicable=True, error=False) == PARTLY
    coverage.classes["CORE-23:as the queue defines, DEFSOPT(EXCLUSIVE), on a queue open for shared input"] += 1
    assert verdict_for(rule, coverage, applicable=True, error=False) == PASS
    assert verdict_for(rule, coverage, applicable=False, error=False) == NOT_APPLICABLE
    coverage.failed["CORE-23"] += 1
    assert verdict_for(rule, coverage, applicable=False, error=False) == FAIL

    record = RunRecord(adapter="x", describe={}, capabilities={"areas": ["core"], "platforms": ["distributed"],
                                                                "not_applicable": {"CORE-23": "no exclusive input"}},
                       areas=["core"], seed=1, examples=1, coverage=coverage)
    row = next(r for r in record.rule_rows() if r["rule"] == "CORE-23")
    assert row["verdict"] == FAIL and row["declared_not_applicable"] == "no exclusive input"


class _NoBrowse:
    """The reference model behind an adapter that cannot browse (as an AMQP broker cannot)."""

    def __init__(self):
        from adapters.reference import ReferenceAdapter

        self.inner = ReferenceAdapter(platform="distributed")
        self.name = "no-browse"

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def express(self, op):
        return None if isinstance(op, L.Get) and op.options & C.MQGMO_BROWSE_ANY else op


def test_a_class_only_an_inexpressible_operation_would_reach_is_not_expressible_not_unreached():
    coverage = Coverage()
    session = Session(_NoBrowse(), "core", coverage=coverage, platform="distributed")
    session.start_case()
    for op in (L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="c"),
               L.Open(conn="c", handle="h", queue="Q", options=STD),
               L.Put(conn="c", handle="h", body="m1"), L.Put(conn="c", handle="h", body="m2"),
               L.Get(conn="c", handle="h", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT),
               L.Get(conn="c", handle="h", options=C.MQGMO_NO_SYNCPOINT)):
        session.execute(op)
    session.end_case()
    # the browse of two messages would have been in CORE-18's "several messages": left out, not unreached
    assert coverage.classes_not_expressible["CORE-18:several messages"] == 1
    assert coverage.inexpressible("CORE-18") == ["several messages"]
    assert coverage.unreached("CORE-18") == ["one message"]     # that one the machine never tried
    assert coverage.not_expressible["Get"] == 1
    # a class also reached by an expressed step is reached, whatever else was left out
    assert not coverage.classes_not_expressible["CORE-04:the higher priority put first"]


class _NoBrowseOpens(_NoBrowse):
    """... which, as the broker adapters do, opens a queue asked for input and browse for input alone, and leaves
    out an open for browse alone."""

    def express(self, op):
        if isinstance(op, L.Open) and op.options & C.MQOO_BROWSE:
            rest = op.options & ~C.MQOO_BROWSE
            return attrs.evolve(op, options=rest) if rest & ~C.MQOO_INQUIRE else None
        return super().express(op)


@pytest.mark.parametrize("browse_only", [False, True])
def test_a_browse_on_a_handle_opened_without_browse_reaches_its_classes_as_not_expressible(browse_only):
    """The system cannot browse, and its opens say so: the model's handle holds no browse. A browse the case then
    asks for of expired messages on it would have discarded them ("by a browse"): that class is not expressible on
    the system, not unreached (the model's handle, as the system opened it, could not even take the browse)."""
    coverage = Coverage()
    session = Session(_NoBrowseOpens(), "expiry", coverage=coverage, platform="distributed")
    session.start_case()
    browser = "b" if browse_only else "h"
    for op in (L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="c"),
               L.Open(conn="c", handle="h", queue="Q", options=STD),
               *([L.Open(conn="c", handle="b", queue="Q", options=C.MQOO_BROWSE)] if browse_only else []),
               L.Put(conn="c", handle="h", body="old", md=L.MessageDescriptor(expiry=5)),
               L.Put(conn="c", handle="h", body="live"), L.AdvanceClock(tenths=20),
               L.Get(conn="c", handle=browser, options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT),
               L.Get(conn="c", handle="h", options=C.MQGMO_NO_SYNCPOINT)):
        session.execute(op)
    session.end_case()
    assert coverage.classes["EXP-04:by a get"] == 1
    assert coverage.inexpressible("EXP-04") == ["by a browse"], coverage.unreached("EXP-04")
    assert "by a browse" not in coverage.unreached("EXP-04")


class _NoExclusive(_NoBrowse):
    """... which, as the broker adapters do, defines queues without DEFSOPT and leaves out an open that asks for
    exclusive input or for input as the queue defines."""

    def express(self, op):
        if isinstance(op, L.DefineQueue):
            return attrs.evolve(op, attrs=tuple((k, v) for k, v in op.attrs if k != "DEFSOPT"))
        if isinstance(op, L.Open) and op.options & (C.MQOO_INPUT_EXCLUSIVE | C.MQOO_INPUT_AS_Q_DEF):
            return None
        return super().express(op)


@pytest.mark.parametrize("defsopt, asked", [
    (C.MQOO_INPUT_EXCLUSIVE, "as the queue defines, DEFSOPT(EXCLUSIVE), on a queue open for shared input"),
    (C.MQOO_INPUT_SHARED, "as the queue defines, DEFSOPT(SHARED), on a queue open for shared input")])
def test_an_open_left_out_on_a_queue_defined_without_an_attribute_reaches_the_class_of_the_queue_as_asked(
        defsopt, asked):
    """The system defines the queue without its DEFSOPT, and cannot open as the queue defines: the open the case
    asked for, on the queue it asked for, would have been in the class of that DEFSOPT, which is what is not
    expressible; the other DEFSOPT's class (the queue as the system defined it) is not claimed."""
    coverage = Coverage()
    session = Session(_NoExclusive(), "core", coverage=coverage, platform="distributed")
    session.start_case()
    for op in (L.DefineQueue(queue="Q", attrs=(("DEFSOPT", defsopt),)), L.Connect(conn="c"),
               L.Open(conn="c", handle="h", queue="Q", options=C.MQOO_INPUT_SHARED),
               L.Open(conn="c", handle="h2", queue="Q", options=C.MQOO_INPUT_AS_Q_DEF)):
        session.execute(op)
    session.end_case()
    assert coverage.classes_not_expressible[f"CORE-23:{asked}"] == 1
    assert asked in coverage.inexpressible("CORE-23") and asked not in coverage.unreached("CORE-23")


def test_reports_show_classes_the_system_cannot_express_and_a_pass_does_not_wait_for_them(tmp_path):
    from conformance.records.results import PASS, PARTLY, RunRecord, verdict_for

    coverage = Coverage()
    rule = RULES["EXP-06"]
    _ = coverage.checked  # settle
    coverage._checked["EXP-06"] += 3
    coverage._classes["EXP-06:get"] += 3
    assert verdict_for(rule, coverage, True, False) == PARTLY       # "browse" never reached
    coverage.classes_not_expressible["EXP-06:browse"] += 2
    assert verdict_for(rule, coverage, True, False) == PASS         # ... because the system cannot browse
    record = RunRecord(adapter="no-browse", describe={"system": "x", "version": "1"},
                       capabilities={"areas": ["expiry"], "platforms": ["distributed"]}, areas=["expiry"], seed=1,
                       examples=1, coverage=coverage)
    record.coverage.examples = 1
    record.write(tmp_path / "r")
    row = next(r for r in map(json.loads, (tmp_path / "r" / "rules.jsonl").read_text().splitlines())
               if r["rule"] == "EXP-06")
    assert row["verdict"] == PASS and row["classes_not_expressible"] == ["browse"]
    report = build([load_run(tmp_path / "r")], None, [])
    cell = report.columns[0].cells["EXP-06"]
    assert cell.verdict == PASS and cell.inexpressible == ["browse"] and cell.unreached == []
    from reports import render

    md = render(report, "md")
    assert "### Input classes the system cannot express" in md and "| EXP-06 | pass " in md


def test_the_power_page_lists_every_rule_with_classes_and_each_class():
    from pathlib import Path
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "power.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| ([A-Z]+-\d+[a-z]?) \| (.+?) \|$", text, re.M))
    assert set(rows) == set(CLASSES), "docs/power.md's table of input classes is not the kit's"
    for rule, entry in CLASSES.items():
        assert all(name in rows[rule] for name in entry.names), (rule, entry.names)


def _fifo_with(session: Session, *conns: str) -> None:
    session.execute(L.DefineQueue(queue="Q1", attrs={"MSGDLVSQ": C.MQMDS_FIFO}))
    for conn in conns:
        session.execute(L.Connect(conn=conn))
        session.execute(L.Open(conn=conn, handle=f"{conn}.h", queue="Q1", options=STD))


@pytest.mark.parametrize("commit_order", ["as put", "other"])
def test_a_get_is_classed_by_whether_units_of_work_committed_in_another_order_than_they_put(commit_order):
    session = _session()
    _fifo_with(session, "a", "b", "r")
    session.execute(L.Put(conn="a", handle="a.h", body="first", options=C.MQPMO_SYNCPOINT))
    if commit_order == "as put":
        session.execute(L.Commit(conn="a"))
    session.execute(L.Put(conn="b", handle="b.h", body="second", options=C.MQPMO_SYNCPOINT))
    session.execute(L.Commit(conn="b"))
    session.execute(L.Commit(conn="a"))
    session.execute(L.Get(conn="r", handle="r.h"))
    reached = session.coverage.classes
    assert reached["CORE-06:one put earlier, committed after one put later"] == (commit_order == "other")
    assert reached["CORE-06:a backed-out message among them"] == 0


def test_a_get_is_classed_by_a_backed_out_message_among_those_it_chooses_from():
    session = _session()
    _fifo_with(session, "a")
    for body in ("m1", "m2"):
        session.execute(L.Put(conn="a", handle="a.h", body=body, options=C.MQPMO_NO_SYNCPOINT))
    session.execute(L.Get(conn="a", handle="a.h", options=C.MQGMO_SYNCPOINT))
    session.execute(L.Backout(conn="a"))
    session.execute(L.Get(conn="a", handle="a.h", options=C.MQGMO_NO_SYNCPOINT))
    reached = session.coverage.classes
    assert reached["CORE-06:a backed-out message among them"] == 1
    assert reached["CORE-06:one put earlier, committed after one put later"] == 0


@pytest.mark.parametrize("putters", [1, 2])
def test_a_put_to_a_full_queue_is_classed_by_whose_uncommitted_puts_fill_it(putters):
    session = _session()
    session.execute(L.DefineQueue(queue="Q1", attrs={"MAXDEPTH": 2}))
    for conn in ("a", "b"):
        session.execute(L.Connect(conn=conn))
        session.execute(L.Open(conn=conn, handle=f"{conn}.h", queue="Q1", options=STD))
    session.execute(L.Put(conn="a", handle="a.h", body="m1", options=C.MQPMO_SYNCPOINT))
    session.execute(L.Put(conn="ab"[putters - 1], handle=f"{'ab'[putters - 1]}.h", body="m2",
                          options=C.MQPMO_SYNCPOINT))
    assert session.execute(L.Put(conn="a", handle="a.h", body="m3")).rc == C.MQRC_Q_FULL
    reached = session.coverage.classes
    several = "CORE-27:full counting uncommitted puts of several programs"
    one = "CORE-27:full counting one program's uncommitted puts"
    assert (reached[several], reached[one]) == ((1, 0) if putters == 2 else (0, 1))


@pytest.mark.parametrize("wait, expired", [(2, False), (12, True)])
def test_a_get_past_a_message_whose_unit_of_work_committed_after_it_expired_is_a_class_of_its_own(wait, expired):
    session = _session(area="expiry")
    _fifo_with(session, "a")
    session.execute(L.Put(conn="a", handle="a.h", body="m", md=L.MessageDescriptor(expiry=8),
                          options=C.MQPMO_SYNCPOINT))
    session.execute(L.AdvanceClock(tenths=wait))
    session.execute(L.Commit(conn="a"))
    session.execute(L.AdvanceClock(tenths=10))
    assert session.execute(L.Get(conn="a", handle="a.h")).rc == C.MQRC_NO_MSG_AVAILABLE
    assert session.coverage.classes["EXP-04:put in a unit of work that committed after it expired"] == expired
    assert session.coverage.classes["EXP-04:one expired message ahead"] == 1


def test_a_cluster_put_is_classed_by_whether_ignoring_each_step_changes_its_destination():
    """Derived from the algorithm, not listed: a put where a step decides where the message goes (the same put with
    the step keeping every destination goes elsewhere), and one where it does not."""
    session = _session(area="cluster")
    session.execute(L.SetClusterQueueManager(name="GW", clusters=("C",), local=True))
    for qm, enabled in (("A", False), ("B", True)):
        session.execute(L.SetClusterQueueManager(name=qm, clusters=("C",)))
        session.execute(L.SetClusterInstance(qmgr=qm, queue="Q", clusters=("C",), put_enabled=enabled))
        session.execute(L.SetClusterChannel(name=f"TO.{qm}", qmgr=qm, clusters=("C",), state=3))
    session.execute(L.ClusterPut(queue="Q"))   # step 1 drops A's PUT-disabled instance: ignored, A is chosen
    reached = session.coverage.classes
    assert reached["CLWL-01:ignoring it changes the destination"] == 1
    assert reached["CLWL-01:ignoring it changes nothing"] == 0
    assert reached["CLWL-11:ignoring it changes nothing"] == 1   # one NETPRTY: step 11 keeps both
    session.execute(L.SetClusterInstance(qmgr="A", queue="Q", clusters=("C",), put_enabled=True))
    session.execute(L.SetClusterInstance(qmgr="B", queue="Q", clusters=("C",), put_enabled=False))
    session.execute(L.ClusterPut(queue="Q"))   # now B is the one dropped, and step 12 would pick A anyway
    assert session.coverage.classes["CLWL-01:ignoring it changes nothing"] == 1


@pytest.mark.parametrize("defsopt", [C.MQOO_INPUT_SHARED, C.MQOO_INPUT_EXCLUSIVE])
def test_an_open_as_the_queue_defines_is_classed_by_defsopt_only_where_others_hold_the_queue_for_shared_input(defsopt):
    session = _session()
    _fifo_with(session, "a", "b")
    session.execute(L.AlterQueue(queue="Q1", attrs={"DEFSOPT": defsopt}))
    session.execute(L.Open(conn="b", handle="b.q", queue="Q1", options=C.MQOO_INPUT_AS_Q_DEF | C.MQOO_OUTPUT))
    reached = session.coverage.classes
    word = "EXCLUSIVE" if defsopt == C.MQOO_INPUT_EXCLUSIVE else "SHARED"
    other = "SHARED" if word == "EXCLUSIVE" else "EXCLUSIVE"
    assert reached[f"CORE-23:as the queue defines, DEFSOPT({word}), on a queue open for shared input"] == 1
    assert reached[f"CORE-23:as the queue defines, DEFSOPT({other}), on a queue open for shared input"] == 0
    # on a queue no handle has open for input, DEFSOPT changes nothing: no class of its own
    session.execute(L.DefineQueue(queue="Q9"))
    session.execute(L.Open(conn="b", handle="b.q9", queue="Q9", options=C.MQOO_INPUT_AS_Q_DEF))
    assert reached["CORE-23:queue not open for input"] == 1
    assert sum(n for k, n in reached.items() if "as the queue defines" in k) == 1


@pytest.mark.parametrize("held", ["nothing", "a put", "a put and a get"])
def test_an_abnormal_end_is_classed_by_the_unit_of_work_it_backs_out(held):
    session = _session()
    _fifo_with(session, "a")
    session.execute(L.Put(conn="a", handle="a.h", body="m1", options=C.MQPMO_NO_SYNCPOINT))
    if held != "nothing":
        session.execute(L.Put(conn="a", handle="a.h", body="m2", options=C.MQPMO_SYNCPOINT))
    if held == "a put and a get":
        session.execute(L.Get(conn="a", handle="a.h", options=C.MQGMO_SYNCPOINT))
    session.execute(L.Disconnect(conn="a", abnormal=True))
    reached = session.coverage.classes
    assert reached["CORE-31:a unit of work of puts alone"] == (held == "a put")
    assert reached["CORE-31:a unit of work with gets"] == (held == "a put and a get")
    assert not any(k.startswith("CORE-30:") for k in reached if reached[k])   # a normal end's rule, not this one's


class _Declining(_NoBrowse):
    """The reference model behind an adapter that leaves out the calls of one kind (``reference_model.classes.CALLS``)."""

    def __init__(self, kind: str | None):
        super().__init__()
        self.kind = kind

    def express(self, op):
        from reference_model.classes import CALLS

        return None if self.kind is not None and CALLS[self.kind](op) else op


def test_a_class_that_needs_a_call_the_system_left_out_every_time_is_not_expressible():
    """A get that finds only messages another handle locked needs a browse that locks first: on a system without
    browse locks (each left out), CORE-13's class is not expressible, not unreached.  With the lock made, the get
    reaches it; with one made and the class not reached, it is unreached (the system could have got there)."""
    from reference_model.classes import NEEDS

    locked = "only messages locked by another handle"
    assert NEEDS[f"CORE-13:{locked}"] == "a browse that locks"
    lock = L.Get(conn="c", handle="b", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK | C.MQGMO_NO_SYNCPOINT)
    for made in (False, True):
        coverage = Coverage()
        session = Session(_Declining(None if made else "a browse that locks"), "core", coverage=coverage,
                          platform="distributed")
        session.start_case()
        for op in (L.DefineQueue(queue="Q"), L.Connect(conn="c"),
                   L.Open(conn="c", handle="h", queue="Q", options=STD),
                   L.Open(conn="c", handle="b", queue="Q", options=C.MQOO_BROWSE),
                   L.Put(conn="c", handle="h", body="m1"), lock,
                   L.Get(conn="c", handle="h", options=C.MQGMO_NO_SYNCPOINT)):
            session.execute(op)
        session.end_case()
        assert coverage.calls["a browse that locks:made" if made else "a browse that locks:left out"] == 1
        assert (locked in coverage.inexpressible("CORE-13")) is not made and locked not in coverage.unreached("CORE-13")
        assert coverage.classes[f"CORE-13:{locked}"] == (1 if made else 0)
    # a lock made and another left out: the system could have got there, and the class is unreached
    coverage.calls["a browse that locks:left out"] = 1
    coverage.classes[f"CORE-13:{locked}"] = 0
    assert locked in coverage.unreached("CORE-13") and locked not in coverage.inexpressible("CORE-13")
    # the record keeps what the calls were, and a report made from it says the same
    assert Coverage.from_json(coverage.to_json()).calls == coverage.calls


#: For each kind of call an input class is declared to need, what the model's state holds only after one: the
#: class's precondition.
HELD_AFTER = {
    "a browse that locks": lambda state: any(m.locked_by for q in state.queues.values() for m in q.messages),
    "an open for exclusive input or as the queue defines":
        lambda state: any(h.input_mode == C.MQOO_INPUT_EXCLUSIVE for h in state.handles.values()),
}


class _Watched(_Declining):
    """... which notes whether the model's state ever held a kind's precondition, and the calls that made it hold."""

    def __init__(self, kind: str | None, held):
        super().__init__(kind)
        self.held, self.seen, self.made_by = held, 0, []

    def start_case(self, *args, **kwargs):
        return self.inner.start_case(*args, **kwargs)

    def execute(self, op):
        before = self.held(self.inner.state)
        observed = self.inner.execute(op)
        after = self.held(self.inner.state)
        self.seen += after
        if after and not before:
            self.made_by.append(op)
        return observed


@pytest.mark.parametrize("needed", sorted(__import__("reference_model.classes", fromlist=["NEEDS"]).NEEDS))
def test_a_class_is_never_reached_without_the_call_it_is_declared_to_need(needed):
    """What NEEDS declares is checked against the model: searches whose every call of the kind is left out never
    reach the class, nor a state holding its precondition (a message locked; a handle open for exclusive input),
    where the same search with them made reaches both.  A kind declared too narrow (exclusive input by
    MQOO_INPUT_EXCLUSIVE alone, where MQOO_INPUT_AS_Q_DEF on a DEFSOPT(EXCLUSIVE) queue gets it too) fails here."""
    from conformance.records.results import RunRecord
    from conformance.runner.engine import run_area
    from reference_model.classes import NEEDS

    from reference_model import model
    from reference_model.classes import calls_of

    rule = needed.split(":", 1)[0]
    area, kind = RULES[rule].area, NEEDS[needed]
    held = HELD_AFTER[kind]
    # every call that makes the precondition hold is of the kind: those of the searches below, and a queue opened
    # as it defines where DEFSOPT(EXCLUSIVE) (which the searches seldom make on a queue no one holds)
    state = model.initial_state("distributed")
    for op in (L.DefineQueue(queue="Q", attrs=(("DEFSOPT", C.MQOO_INPUT_EXCLUSIVE),)), L.Connect(conn="c"),
               L.Open(conn="c", handle="h", queue="Q", options=C.MQOO_INPUT_AS_Q_DEF | C.MQOO_BROWSE),
               L.Put1(conn="c", queue="Q", body="m"),
               L.Get(conn="c", handle="h", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK | C.MQGMO_NO_SYNCPOINT)):
        after = model.step(state, op)[0].state
        assert not held(after) or held(state) or kind in calls_of(op), (kind, op)
        state = after
    for declined in (None, kind):
        reached = seen = 0
        for seed in (1, 2):
            adapter = _Watched(declined, held)
            record = RunRecord(adapter="declining", describe={}, capabilities={}, areas=[area], seed=seed, examples=30)
            run_area(adapter, area, "distributed", 30, seed, {}, record, minimise_histories=False)
            reached += record.coverage.classes[needed]
            seen += adapter.seen
            assert all(kind in calls_of(op) for op in adapter.made_by), [op for op in adapter.made_by]
            if declined is not None:
                assert record.coverage.calls[f"{kind}:left out"] > 0 and not record.coverage.calls[f"{kind}:made"]
        if declined is None:
            assert reached > 0 and seen > 0, f"{needed}: the search with every call made never got there"
        else:
            assert reached == 0 and seen == 0, f"{needed}: got there without any {kind}"
