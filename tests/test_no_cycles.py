"""The kit's own code leaves no reference cycles behind a case.

What reference counting cannot free waits for the cyclic collector, and every young
collection walks it again: a case that left its queue manager (queues, messages and all)
or a closure per call in a cycle made the collector a tenth of a run.  Hypothesis's own
cycles are its business; these tests look only at the kit's objects.
"""

import collections
import gc
import weakref

import pytest

from adapters.dlq_handler.handler import _wildcard
from adapters.registry import create_adapter
from adapters.simulated import SimulatedAdapter
from conformance.bench import suite as bench
from conformance.checker.sequential import MEMO
from conformance.runner.engine import area_platforms
from reference_model import language as L
from reference_model import mqconst as C

KIT = ("reference_model", "adapters", "conformance")

#: (with what the process held frozen, as the suite's tuned collector has it, a cycle made before a run within the
#: body began would be out of the collector's sight: run as the process has it, conftest.py)
pytestmark = pytest.mark.own_collector


def _kits_cyclic_garbage(body) -> collections.Counter:
    """What of the kit's own (functions and closures, queue managers and their parts, model states)
    the cyclic collector finds unreachable after ``body`` runs with automatic collection off.  The
    step memo is emptied first: what an earlier test left in it is not this body's doing."""
    MEMO.clear()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        body()
        gc.collect()
        found = collections.Counter()
        for o in gc.garbage:
            kind = type(o)
            if kind.__name__ == "function" and (o.__module__ or "").startswith(KIT):
                found[o.__qualname__] += 1
            elif kind.__module__.startswith(("adapters.simulated", "adapters.dlq_handler", "reference_model.state")):
                found[kind.__qualname__] += 1
        return found
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_replaced_queue_manager_is_freed_at_once():
    adapter = SimulatedAdapter()
    adapter.start_case("c1")
    for op in (L.DefineQueue(queue="DLQ"), L.AlterQueueManager(attrs={"DEADQ": "DLQ"}),
               L.StartDlqHandler(handler="h", table="INPUTQ(DLQ) WAIT(YES)\nACTION(DISCARD)\n"),
               L.RunDlqHandler(handler="h")):
        assert adapter.execute(op).cc != C.MQCC_FAILED, op
    old = weakref.ref(adapter.qm)
    gc.disable()
    try:
        adapter.start_case("c2")
        assert old() is None
    finally:
        gc.enable()
    adapter.close()


def test_the_handlers_pattern_matching_makes_no_cycles():
    def match():
        for value in ("ABC", "ABD", "XYZ", "AB"):
            for pattern in ("A*", "A?C", "*B*", "??", "A*D*"):
                _wildcard(pattern, value, False)
    assert _kits_cyclic_garbage(match) == collections.Counter()


@pytest.mark.parametrize("area", ["dlq", "expiry", "core", "trigger"])
def test_a_run_leaves_none_of_the_kits_objects_in_cycles(area):
    platform = area_platforms(area, create_adapter("simulated", {}).capabilities())[0]
    found = _kits_cyclic_garbage(lambda: bench._kit_run(area, platform, 15, 3))
    assert found == collections.Counter(), found
