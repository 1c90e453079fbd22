"""A null in an answer is never compared only where a system may have no value at all (the fields of
``capabilities.lacks``); anywhere else it is a value, and a system answering null where MQ gives a value departs."""

from __future__ import annotations

import attrs

from adapters.base import LACKABLE, undeclared_nulls
from adapters.registry import create_adapter
from adapters.subprocess import left_out
from conformance.checker.sequential import NULL_ATTRS_IF_LACKING, NULL_IF_LACKING, differing_fields
from conformance.records.results import FAIL, ONE_OF, RunRecord
from conformance.runner.engine import run_areas
from reference_model import language as L
from reference_model import mqconst as C


def _obs(**attrs_):
    return L.Observation(attrs=attrs_)


def test_a_null_is_left_uncompared_only_for_the_fields_a_system_may_lack():
    assert {f"attrs.{n}" for n in NULL_ATTRS_IF_LACKING} | {f"message.{n}" for n in NULL_IF_LACKING} == set(LACKABLE)
    # a DLQ handler's fate of a message, where a cluster put went: values
    assert differing_fields(_obs(M1="discarded", HANDLER="RUNNING"), _obs(M1=None, HANDLER="RUNNING")) == ["attrs.M1"]
    assert differing_fields(_obs(DESTINATION="QM2"), _obs(DESTINATION=None)) == ["attrs.DESTINATION"]
    assert differing_fields(_obs(DEFPRTY=4), _obs(DEFPRTY=None)) == ["attrs.DEFPRTY"]
    # a depth or an open count the system has no value for: not compared
    assert differing_fields(_obs(CURDEPTH=2, IPPROCS=1, DEFPRTY=4), _obs(CURDEPTH=None, IPPROCS=None, DEFPRTY=4)) == []


class _NullFates:
    """The simulated queue manager, but its DLQ handler's runs answer null for every message it discarded."""

    def __init__(self):
        self.inner = create_adapter("simulated", {})

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, op):
        obs = self.inner.execute(op)
        if isinstance(op, L.RunDlqHandler) and obs.attrs:
            obs = attrs.evolve(obs, attrs=tuple((k, None if v == "discarded" else v) for k, v in obs.attrs))
        return obs


def test_a_handler_answering_null_for_a_discarded_message_is_found():
    """Before, a null fate passed as "a value the system does not have": a handler reporting nothing of what it
    did to a message passed every DLQ rule about discarding."""
    adapter = _NullFates()
    record: RunRecord = run_areas(adapter, ["dlq"], 60, 1, keep_going=0, minimise_histories=False)
    assert record.failures, "a handler answering null for what it discarded passed"
    # (no one rule's relaxation gives a null fate: the rules the run was checking there are each "one of")
    failed = {row["rule"] for row in record.rule_rows() if row["verdict"] in (FAIL, ONE_OF)}
    assert failed and all(rule.startswith("DLQ-") for rule in failed), failed
    assert any(step.op == L.RunDlqHandler(handler=step.op.handler) for f in record.failures
               for step in f.steps[-1:]), [f.steps[-1].op for f in record.failures]
    # the same run on the conforming queue manager: no failure
    clean = run_areas(create_adapter("simulated", {}), ["dlq"], 60, 1, keep_going=0, minimise_histories=False)
    assert not clean.failures


def test_a_protocol_server_answering_null_must_have_declared_the_field_lacking():
    get = L.Get(conn="c1", handle="h", options=C.MQGMO_NO_SYNCPOINT)
    message = {f: None for f in ("msg_id", "correl_id")} | {"body": "m1", "backout_count": None, "expiry": -1}
    fields = [a.name for a in attrs.fields(L.ReturnedMessage)]
    raw = {"cc": 0, "rc": 0, "message": {f: message.get(f, "") for f in fields}, "attrs": None}
    why = left_out(get, raw, frozenset())
    assert why is not None and "backout_count" in why and "capabilities.lacks" in why
    assert left_out(get, raw, frozenset({"message.backout_count"})) is None
    inquire = L.InquireQueue(queue="Q1", names=("CURDEPTH", "DEFPRTY"))
    raw = {"cc": 0, "rc": 0, "message": None, "attrs": [["CURDEPTH", None], ["DEFPRTY", 4]]}
    why = left_out(inquire, raw, frozenset())
    assert why is not None and "CURDEPTH" in why
    assert left_out(inquire, raw, frozenset({"attrs.CURDEPTH"})) is None
    # a null for an attribute no system may lack is not the protocol's to refuse: the checker judges it as a value
    assert left_out(inquire, {"cc": 0, "rc": 0, "message": None, "attrs": [["CURDEPTH", 0], ["DEFPRTY", None]]},
                    frozenset()) is None


class _NoExpiry(_NullFates):
    """The simulated queue manager, but every message it returns comes with no Expiry (null), undeclared."""

    def execute(self, op):
        obs = self.inner.execute(op)
        if obs.message is not None:
            obs = attrs.evolve(obs, message=attrs.evolve(obs.message, expiry=None))
        return obs


def test_a_null_an_adapter_did_not_declare_lacking_is_an_error_not_a_pass():
    """A returned message's Expiry of null was never compared, whichever system answered it: a queue manager
    giving no Expiry passed every expiry rule.  Undeclared, it is now the adapter's error, never a verdict."""
    assert undeclared_nulls(L.Observation(attrs=(("CURDEPTH", None), ("DEFPRTY", None))), frozenset()) \
        == ["attrs.CURDEPTH"]
    assert undeclared_nulls(L.Observation(attrs=(("CURDEPTH", None),)), frozenset({"attrs.CURDEPTH"})) == []
    record = run_areas(_NoExpiry(), ["expiry"], 10, 1, keep_going=0, minimise_histories=False)
    assert not record.failures
    assert record.error is not None and "message.expiry" in record.error, record.error
    assert {row["verdict"] for row in record.rule_rows()} & {FAIL, ONE_OF, "pass"} == set()


def test_a_concurrent_case_with_an_undeclared_null_is_an_error_too():
    import pytest

    from adapters.base import AdapterError
    from conformance.runner.concurrent import search

    with pytest.raises(AdapterError, match="message.expiry"):
        search(_NoExpiry, 1, cases=5)
    race, _ = search(lambda: create_adapter("simulated", {}), 1, cases=5)
    assert race is None
