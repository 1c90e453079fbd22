"""One dispatch style across the adapters: an operation is carried out by the adapter's method named for its type
(``_op_Put``), found by ``adapters.base.handler_for``, so that a new operation is one method in each adapter that
can run it, never a branch added to a chain of type tests."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from adapters.base import Refused, carry_out, handler_for
from reference_model import language as L
from reference_model import mqconst as C

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = [t for t in L.types().values() if isinstance(t, type) and issubclass(t, L.Op) and t is not L.Op]


class _Base:
    def _op_Connect(self, op):
        return None

    def _op_Commit(self, op):
        raise Refused(C.MQRC_HCONN_ERROR)

    def _op_Get(self, op):
        return L.Observation(attrs={"CURDEPTH": 1})


class _Own(_Base):
    def _op_Get(self, op):   # a subclass's method for a type is the one used
        return L.Observation(attrs={"CURDEPTH": 2})


def test_an_operation_is_carried_out_by_the_method_named_for_its_type():
    assert carry_out(_Base(), L.Connect(conn="a")) == L.OK
    assert carry_out(_Base(), L.Commit(conn="a")) == L.Observation.of(C.MQRC_HCONN_ERROR)
    get = L.Get(conn="a", handle="h")
    assert dict(carry_out(_Base(), get).attrs) == {"CURDEPTH": 1} and dict(carry_out(_Own(), get).attrs) == {"CURDEPTH": 2}
    with pytest.raises(NotImplementedError, match="_Own has no method for Backout"):
        carry_out(_Own(), L.Backout(conn="a"))
    assert handler_for(_Own, L.Backout) is None and handler_for(_Own, L.Get) is _Own._op_Get


def test_the_simulated_queue_manager_has_a_method_for_every_operation_of_the_language():
    from adapters.dlq_handler.host import DlqHost
    from adapters.simulated.queue_manager import SimulatedQueueManager

    assert len(OPERATIONS) > 25
    missing = [t.__name__ for t in OPERATIONS
               if handler_for(SimulatedQueueManager, t) is None and handler_for(DlqHost, t) is None]
    assert missing == []


def test_every_operation_a_broker_adapter_runs_has_its_method():
    """What the broker adapters' base class runs itself (the nemesis's operations go to the proxy first)."""
    from adapters.broker_shim import BrokerShim

    ran = {t.__name__ for t in OPERATIONS if handler_for(BrokerShim, t) is not None}
    assert {"Connect", "Disconnect", "DefineQueue", "AlterQueue", "InquireQueue", "Open", "Close", "Put", "Put1",
            "Get", "GetMatching", "Commit", "Backout", "Restart", "AdvanceClock"} <= ran


def _ladders(path: Path) -> list[str]:
    """The branches ``if isinstance(op, L.<Type>): ... return ...`` in the methods that carry out operations."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.FunctionDef) and node.name in ("execute", "_execute", "execute_op")):
            continue
        for branch in ast.walk(node):
            test = getattr(branch, "test", None)
            if isinstance(branch, ast.If) and isinstance(test, ast.Call) and getattr(test.func, "id", "") == \
                    "isinstance" and isinstance(test.args[1], ast.Attribute) and \
                    any(isinstance(s, ast.Return) for s in branch.body):
                found.append(f"{path.relative_to(ROOT)}:{branch.lineno} {node.name}: {ast.unparse(test)}")
    return found


def test_no_adapter_carries_out_operations_by_a_chain_of_type_tests():
    found = [line for path in sorted((ROOT / "adapters").rglob("*.py")) for line in _ladders(path)]
    assert found == []
    # ... which the check finds where there is one
    ladder = ROOT / "tests" / "data" / "ladder_adapter.py"
    assert len(_ladders(ladder)) == 2
