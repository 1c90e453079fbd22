"""A departure raised while a run shrinks or minimises is not rendered until its text is asked for."""

from __future__ import annotations

import pickle

from adapters.registry import create_adapter
from conformance.records import render
from conformance.runner.session import NonConformance, Session
from reference_model import language as L
from reference_model import mqconst as C


def _departure() -> NonConformance:
    options = {"faults": "priority-ignored", "platform": "distributed"}
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q1"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           L.Put(conn="c1", handle="h1", body="low", md=L.MessageDescriptor(priority=1), options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="c1", handle="h1", body="high", md=L.MessageDescriptor(priority=7), options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT)]
    adapter = create_adapter("simulated", options)
    session = Session(adapter, "core", options, platform="distributed")
    session.start_case()
    try:
        for op in ops:
            session.execute(op)
    except NonConformance as exc:
        return exc
    finally:
        adapter.close()
    raise AssertionError("the faulty queue manager departs nowhere")


def test_a_departure_is_rendered_only_when_its_text_is_asked_for(monkeypatch):
    rendered = []
    real = render.render_failure
    monkeypatch.setattr(render, "render_failure", lambda failure: rendered.append(failure) or real(failure))
    exc = _departure()
    assert rendered == []
    text = str(exc)
    assert rendered == [exc.failure] and text == real(exc.failure) and "CORE-04" in text
    assert str(exc) == text and len(rendered) == 1   # rendered once
    again = pickle.loads(pickle.dumps(exc))
    assert again.failure == exc.failure and str(again) == text


def test_a_counterexample_says_which_queue_manager_each_queue_is_on():
    """In a queue-sharing group two queues may share a name, one on each member: every operation that names a queue
    manager shows it (``QUEUE@QMGR``), so that the reader can tell the initiation queue inquired from the other."""
    ops = [L.DefineQueue(queue="INIT.Q", qmgr="QM2"), L.DefineQueue(queue="INIT.Q"),
           L.AlterQueueManager(attrs={"DEADQ": "DLQ"}, qmgr="QM2"),
           L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",), qmgr="QM2"),
           L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",)),
           L.Put1(conn="c1", queue="Q1", qmgr="QM2", body="b")]
    texts = [render.op_text(op) for op in ops]
    assert texts[0].split()[1] == "INIT.Q@QM2" and texts[1].split()[1] == "INIT.Q", texts
    assert texts[2].split()[1] == "QM2" and texts[3].split()[1] == "INIT.Q@QM2" and texts[4].split()[1] == "INIT.Q"
    assert texts[5].split()[2] == "Q1@QM2", texts


def test_a_cluster_operation_names_the_fields_it_sets():
    """A cluster definition has many fields, most at their defaults: those it sets are named (MQSC's attributes as
    MQSC writes them, a channel's state as DISPLAY CHSTATUS shows it), those at their defaults left out, so that
    a reader sees which priority or rank a step changed."""
    instance = render.op_text(L.SetClusterInstance(qmgr="GW", queue="ORDERS", clusters=("SALES",), clwlprty=6,
                                                   clwluseq="ANY"))
    assert instance == "SetClusterInstance GW ORDERS SALES CLWLPRTY(6) CLWLUSEQ(ANY)", instance
    channel = render.op_text(L.SetClusterChannel(name="TO.QM1", qmgr="QM1", clusters=("OTHER", "SALES"), state=3,
                                                 clwlrank=1))
    assert channel == "SetClusterChannel TO.QM1 QM1 OTHER,SALES STATUS(RUNNING) CLWLRANK(1)", channel
    assert render.op_text(L.ClusterPut(queue="ORDERS", pcf=True)) == "ClusterPut ORDERS pcf=True"
    assert render.op_text(L.SetClusterQueueManager(name="GW", clusters=("SALES",), local=True)) == \
        "SetClusterQueueManager GW SALES local=True"
