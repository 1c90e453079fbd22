"""The operation language: lossless JSON, validation at the boundary."""

import json

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_model import language as L
from reference_model import mqconst as C

text = st.text(max_size=20)  # any Unicode, control characters and lone surrogates included
ints = st.integers(min_value=-(2**31), max_value=2**31 - 1)
names = st.text(alphabet="ABCQ12._", min_size=1, max_size=8)
contexts = st.builds(L.MessageContext, user_id=text, appl_identity_data=text, put_appl_type=ints,
                     put_appl_name=text)
dlhs = st.builds(L.DeadLetterHeader, reason=ints, dest_q=text, dest_qmgr=text, format=text, put_appl_type=ints,
                 put_appl_name=text)
mds = st.builds(L.MessageDescriptor, priority=ints, persistence=ints, expiry=ints, report=ints,
                msg_type=ints, feedback=ints, format=text, reply_to_q=text, msg_id=text,
                correl_id=text, backout_count=ints, reply_to_qmgr=text, context=st.one_of(st.none(), contexts))
settable = st.dictionaries(
    st.sampled_from(["DEFPRTY", "MAXDEPTH", "BOQNAME", "GET", "PUT", "MSGDLVSQ"]), st.just(None)
).map(lambda d: {k: {"DEFPRTY": 3, "MAXDEPTH": 10, "BOQNAME": "B", "GET": 1, "PUT": 0, "MSGDLVSQ": 1}[k] for k in d})

ops = st.one_of(
    st.builds(L.DefineQueue, queue=names, attrs=settable),
    st.builds(L.AlterQueue, queue=names, attrs=settable),
    st.builds(L.InquireQueue, queue=names, names=st.lists(st.sampled_from(["CURDEPTH", "IPPROCS", "DEFPRTY"]))),
    st.builds(L.Connect, conn=names, environment=text),
    st.builds(L.Disconnect, conn=names, abnormal=st.booleans()),
    st.builds(L.Open, conn=names, handle=names, queue=names, options=ints),
    st.builds(L.Close, conn=names, handle=names),
    st.builds(L.Put, conn=names, handle=names, body=text, md=mds, options=ints),
    st.builds(L.Put1, conn=names, queue=names, qmgr=text, body=text, md=mds, options=ints,
              dlh=st.one_of(st.none(), dlhs)),
    st.builds(L.StartDlqHandler, handler=names, table=text),
    st.builds(L.ChangeDlqTable, handler=names, table=text),
    st.builds(L.RestartDlqHandler, handler=names),
    st.builds(L.RunDlqHandler, handler=names),
    st.builds(L.Get, conn=names, handle=names, options=ints, wait_interval=ints),
    st.builds(L.Commit, conn=names),
    st.builds(L.Backout, conn=names),
    st.builds(L.Restart, abrupt=st.booleans()),
    st.builds(L.CutConnection, conn=names, in_flight=st.booleans()),
    st.builds(L.PauseQueueManager, conn=names, tenths=st.integers(min_value=1, max_value=100)),
    st.builds(L.AdvanceClock, tenths=st.integers(min_value=0, max_value=10**9)),
    st.builds(L.AlterQueueManager, attrs=st.fixed_dictionaries({"EXPRYINT": st.integers(0, 10**6)})),
    st.builds(L.AlterQueueManager, attrs=st.fixed_dictionaries({"DEADQ": names})),
    st.builds(L.RefreshExpiry, queues=names),
    st.builds(L.DefineProcess, process=names, appl_type=ints, appl_id=text, env_data=text, user_data=text),
    st.builds(L.DefineRemoteQueue, queue=names, rname=names, rqmname=names, xmitq=names),
    st.builds(L.SetClusterQueueManager, name=names, clusters=st.lists(names), local=st.booleans(),
              suspended=st.booleans(), clwluseq=text, clwlmruc=ints),
    st.builds(L.SetClusterInstance, qmgr=names, queue=names, clusters=st.lists(names), put_enabled=st.booleans(),
              clwlrank=ints, clwlprty=ints, clwluseq=text),
    st.builds(L.RemoveClusterInstance, qmgr=names, queue=names),
    st.builds(L.SetClusterChannel, name=names, qmgr=names, clusters=st.lists(names), state=ints, clwlrank=ints,
              clwlprty=ints, clwlwght=ints, netprty=ints, local_sender=st.booleans()),
    st.builds(L.ClusterPut, queue=names, put_locally=st.booleans(), pcf=st.booleans(), already_sent=st.lists(names),
              qmgr=names),
    st.builds(L.SetClusterAlias, name=names, qmgr=names, clusters=st.lists(names), put_enabled=st.booleans(),
              clwlrank=ints, clwlprty=ints),
    st.builds(L.Put, conn=names, handle=names, body=text, md=mds, options=ints,
              xmit_header=st.builds(L.XmitHeader, expiry=ints)),
)
messages = st.builds(
    L.ReturnedMessage, body=text, priority=ints, persistence=ints,
    expiry=st.one_of(ints, st.builds(L.IntRange, lo=ints, hi=ints)),
    msg_id=st.one_of(st.none(), text), correl_id=st.one_of(st.none(), text), backout_count=ints,
    xmit_header=st.one_of(st.none(), st.builds(L.XmitHeader, expiry=st.one_of(ints, st.builds(L.IntRange, lo=ints, hi=ints)))),
    trigger=st.one_of(st.none(), st.builds(L.TriggerMessage, q_name=names, process_name=text, trigger_data=text,
                                           appl_type=ints, appl_id=text, env_data=text, user_data=text)),
    reply_to_qmgr=text, context=st.one_of(st.none(), contexts), dlh=st.one_of(st.none(), dlhs),
)
observations = st.builds(
    L.Observation, cc=ints, rc=ints, message=st.one_of(st.none(), messages),
    attrs=st.one_of(st.none(), st.dictionaries(st.sampled_from(["CURDEPTH", "BOQNAME"]), st.one_of(ints, text))),
)


def test_every_operation_class_is_generated():
    assert {c.__name__ for c in L.OPERATIONS} == {
        "DefineQueue", "AlterQueue", "InquireQueue", "Connect", "Disconnect", "Open", "Close",
        "Put", "Put1", "Get", "GetMatching", "Commit", "Backout", "Restart", "AdvanceClock", "AlterQueueManager",
        "RefreshExpiry", "DefineProcess", "DefineRemoteQueue",
 "SetClusterQueueManager", "SetClusterInstance", "SetClusterAlias", "RemoveClusterInstance",
        "SetClusterChannel", "ClusterPut", "StartDlqHandler", "ChangeDlqTable", "RestartDlqHandler",
        "RunDlqHandler", "CutConnection", "PauseQueueManager", "DefineQueueSharingGroup"}


@given(st.one_of(ops, observations))
def test_json_round_trip_is_lossless(value):
    text_form = L.dumps(value)
    assert L.loads(text_form) == value
    assert L.dumps(L.loads(text_form)) == text_form


@given(ops)
def test_ops_are_frozen_and_hashable(op):
    hash(op)
    field = attrs.fields(type(op))[0].name if attrs.fields(type(op)) else None
    if field:
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(op, field, None)


@pytest.mark.parametrize("bad", [
    "{", "[]", '{"type": "Nope"}', '{"type": "Commit"}', '{"type": "Commit", "conn": "a", "extra": 1}',
    '{"type": "DefineQueue", "queue": "Q", "attrs": [["COLOUR", 1]]}',
    '{"type": "DefineQueue", "queue": "Q", "attrs": [["DEFPRTY", 10]]}',
    '{"type": "AdvanceClock", "tenths": -1}',
    '{"type": "AlterQueueManager", "attrs": [["DEADQ", 5]]}',
])
def test_malformed_json_is_rejected_with_language_error(bad):
    with pytest.raises(L.LanguageError):
        L.loads(bad)


def test_attribute_names_are_case_insensitive_and_sorted():
    op = L.DefineQueue(queue="Q", attrs={"maxdepth": 3, "DEFPRTY": 1})
    assert op.attrs == (("DEFPRTY", 1), ("MAXDEPTH", 3))
    assert json.loads(L.dumps(op))["attrs"] == [["DEFPRTY", 1], ["MAXDEPTH", 3]]


def test_completion_codes_follow_reasons():
    assert L.Observation.of(C.MQRC_PRIORITY_EXCEEDS_MAXIMUM).cc == C.MQCC_WARNING
    assert L.Observation.of(C.MQRC_Q_FULL).cc == C.MQCC_FAILED
    assert L.Observation.of(0).cc == C.MQCC_OK
