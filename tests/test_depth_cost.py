"""The cost of an operation does not grow with the messages on the queue.

Counted in function calls (deterministic), not in time: the same operations on a
queue holding 10 messages and on one holding 1,000 must take about the same
number of calls, in the simulated queue manager and in the model with its
checker alike.  A pass over every message per operation would multiply the
count by about a hundred.
"""

import cProfile
import pstats

import pytest

from adapters.registry import create_adapter
from conformance.bench.suite import deep_queue_setup, deep_queue_workload, prepared
from reference_model import language as L
from reference_model import mqconst as C


def _calls(depth: int) -> tuple[int, int]:
    """(calls in the simulated queue manager, calls in the model and checker) for the operations."""
    sim, tracker, ops = prepared(depth)
    adapter, model = cProfile.Profile(), cProfile.Profile()
    seen = []
    for op in ops:
        adapter.enable()
        seen.append(sim.execute(op))
        adapter.disable()
    for op, observed in zip(ops, seen):
        model.enable()
        check = tracker.advance(op, observed)
        model.disable()
        assert check.mismatch is None, check.mismatch
    sim.close()
    count = lambda p: sum(row[1] for row in pstats.Stats(p).stats.values())  # noqa: E731
    return count(adapter), count(model)


def test_the_operations_do_real_work():
    """Gets return messages, browses lock them, gets under the cursor and unlocks find them."""
    sim = create_adapter("simulated", {})
    for op in deep_queue_setup(0):
        sim.execute(op)
    ops = deep_queue_workload()
    observed = [sim.execute(op) for op in ops]
    returned = [op.options for op, o in zip(ops, observed) if o.message is not None]
    assert len(returned) >= 24
    assert any(opts & C.MQGMO_MSG_UNDER_CURSOR for opts in returned)
    assert any(opts & C.MQGMO_LOCK for opts in returned)
    assert any(isinstance(op, L.Get) and op.options & C.MQGMO_UNLOCK and o.rc == 0 for op, o in zip(ops, observed))
    sim.close()


@pytest.mark.parametrize("side", ["simulated queue manager", "model and checker"])
def test_operation_cost_is_flat_in_queue_depth(side):
    shallow, deep = _calls(10), _calls(1000)
    index = 0 if side == "simulated queue manager" else 1
    ratio = deep[index] / shallow[index]
    assert ratio <= 1.5, f"{side}: {deep[index]} calls at depth 1000 against {shallow[index]} at 10"
