"""The DLQ handler host's reading of the dead-letter queue.

The simulated queue manager lets the host walk the queue inside it (``host_browse``) instead of
making the calls of a browse; what the host finds, and what the walk does to the queue manager
(expired messages discarded with their reports, under every fault), must be what the calls do.
"""

import copy

import pytest

from adapters.registry import create_adapter
from adapters.simulated.queue_manager import SimulatedQueueManager
from conformance.runner.engine import run_areas
from reference_model import language as L
from reference_model import mqconst as C

#: Faults that change what a browse finds or what it does on the way.
BROWSE_FAULTS = ("", "dead-letter-expired-no-report", "uncommitted-put-visible", "browse-next-skips",
                 "fifo-within-priority-broken", "priority-discards-lower", "report-at-eligibility",
                 "expired-message-returned", "get-inhibit-ignored", "lock-expired-returned")


def _loaded(faults: str, aged: bool = True) -> SimulatedQueueManager:
    """A queue manager whose dead-letter queue holds messages of every kind a browse treats apart:
    priorities, expired ones asking for reports, one put but not committed, one locked by another
    browse, one without a MsgId, and one with a backout count."""
    qm = SimulatedQueueManager(C.PLATFORM_DISTRIBUTED, tuple(f for f in faults.split(",") if f))
    for op in (L.DefineQueue(queue="DLQ"), L.DefineQueue(queue="REPORTS"), L.Connect(conn="c"),
               L.Connect(conn="other"),
               L.Open(conn="c", handle="out", queue="DLQ", options=C.MQOO_OUTPUT),
               L.Open(conn="other", handle="peek", queue="DLQ", options=C.MQOO_BROWSE),
               L.Open(conn="c", handle="in", queue="DLQ", options=C.MQOO_INPUT_SHARED)):
        assert qm.execute(op).cc != C.MQCC_FAILED, op
    for i, (priority, expiry) in enumerate(((0, C.MQEI_UNLIMITED), (5, 10), (5, C.MQEI_UNLIMITED), (0, 5),
                                            (9, C.MQEI_UNLIMITED), (0, C.MQEI_UNLIMITED), (5, 30))):
        md = L.MessageDescriptor(priority=priority, expiry=expiry, msg_id=f"M{i}" if i != 5 else "",
                                 report=C.MQRO_EXPIRATION if expiry != C.MQEI_UNLIMITED else 0,
                                 reply_to_q="REPORTS")
        assert qm.execute(L.Put(conn="c", handle="out", body=f"b{i}", md=md,
                                options=C.MQPMO_NO_SYNCPOINT)).cc != C.MQCC_FAILED
    # one got and backed out (its BackoutCount rises), one locked by another browse, one uncommitted
    assert qm.execute(L.Get(conn="c", handle="in", options=C.MQGMO_SYNCPOINT)).message is not None
    qm.execute(L.Backout(conn="c"))
    qm.execute(L.Get(conn="other", handle="peek", options=C.MQGMO_BROWSE_FIRST))
    qm.execute(L.Get(conn="other", handle="peek", options=C.MQGMO_BROWSE_NEXT))
    qm.execute(L.Get(conn="other", handle="peek", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_LOCK))
    qm.execute(L.Put(conn="c", handle="out", body="uncommitted", md=L.MessageDescriptor(msg_id="U"),
                     options=C.MQPMO_SYNCPOINT))
    if aged:
        qm.execute(L.AdvanceClock(tenths=20))
    return qm


def _state(qm: SimulatedQueueManager):
    return {name: [(m.body, m.md.msg_id, m.backout_count, m.lock, m.pending_put is not None)
                   for m in q.all_messages()] for name, q in qm.queues.items()}


@pytest.mark.parametrize("faults", BROWSE_FAULTS)
@pytest.mark.parametrize("inhibited", [False, True])
@pytest.mark.parametrize("aged", [True, False], ids=["some-expired", "none-expired"])
def test_the_direct_walk_finds_and_does_what_the_browse_calls_do(faults, inhibited, aged):
    qm = _loaded(faults, aged)
    if inhibited:
        qm.execute(L.AlterQueue(queue="DLQ", attrs={"GET": C.MQQA_GET_INHIBITED}))
    by_calls = copy.deepcopy(qm)
    direct = qm.host_browse("DLQ")
    browsed = by_calls.dlq._browse("DLQ")
    assert direct == browsed
    assert _state(qm) == _state(by_calls)
    if not inhibited and not faults and not aged:
        assert {"M0", "M1", "M3", "M4", "M6"} < set(direct) and len(direct) == 6
    if not inhibited and not faults and aged:
        # what the queue holds, less the expired, the uncommitted and the locked message; the one
        # without a MsgId was given one by the put
        assert {"M0", "M4", "M6"} < set(direct) and len(direct) == 4
        assert direct["M4"] == 1 and sum(direct.values()) == 1
    assert qm.host_browse("NO.SUCH.Q") == by_calls.dlq._browse("NO.SUCH.Q") == {}


def _outcome(record):
    return ([(f.mismatch.rules, [L.to_json(s.op) for s in f.steps], [L.to_json(s.observed) for s in f.steps])
             for f in record.failures], record.coverage.to_json())


@pytest.mark.parametrize("faults", ["", "dlq-ignore-not-assumed", "dead-letter-expired-no-report",
                                    "browse-next-skips", "uncommitted-put-visible"])
def test_a_dlq_run_reads_the_same_either_way(faults, monkeypatch):
    """Same seed, same verdicts, counterexamples and coverage whether the host walks the queue or browses it."""
    def run():
        return run_areas(create_adapter("simulated", {"faults": faults} if faults else {}), ["dlq"],
                         examples=20, seed=3)

    direct = run()
    monkeypatch.setattr(SimulatedQueueManager, "HOST_READS_DIRECTLY", False)
    by_calls = run()
    assert direct.error is None and by_calls.error is None
    assert _outcome(direct) == _outcome(by_calls)
    assert direct.coverage.steps > 200
