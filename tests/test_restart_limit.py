"""A bounded number of restarts on a broker (each takes seconds there): ``--adapter-opt restart=N``, and by default a
few on a broker the kit started.  Searching cases spend the bound; once it is spent the machines go on without, never
sending one the system declines.  Cases that replay a departure (Hypothesis shrinking it, the kit minimising or
replaying it) spend none of it and run as many restarts as the case that found it ran."""

from __future__ import annotations

import pytest

from adapters.base import AdapterOptionError, RestartBudget
from adapters.broker_shim import DEFAULT_RESTARTS, _restart_option
from adapters.simulated import SimulatedAdapter
from adapters.simulated.faults import FAULTS
from conformance.runner.engine import run_areas
from reference_model import language as L
from tests.test_dependencies import offline


def test_the_restart_option_is_on_off_or_a_number_of_restarts():
    assert _restart_option("rabbitmq", None) == (False, None)
    assert _restart_option("rabbitmq", "off") == (False, None)
    assert _restart_option("rabbitmq", "on") == (True, None)
    assert _restart_option("rabbitmq", "3") == (True, 3)
    for bad in ("0", "-1", "many", "2.5"):
        with pytest.raises(AdapterOptionError, match="restart must be on, off or a number"):
            _restart_option("rabbitmq", bad)


@pytest.mark.parametrize("name", ["rabbitmq", "activemq"])
def test_a_broker_adapter_expresses_restarts_until_its_limit_is_spent(name):
    adapter = offline(name, restarts=True, budget=RestartBudget(limit=2))
    adapter.budget.start_case()
    assert adapter.express(L.Restart()) == L.Restart()
    adapter.budget.ran()
    adapter.budget.start_case()   # a case that starts with one restart of the two left
    adapter.budget.ran()
    assert adapter.express(L.Restart()) is None
    # replaying what that case found: the one restart it had at its start, at every replay, spending none
    adapter.phase("replay")
    for _ in range(3):
        adapter.budget.start_case()
        assert adapter.express(L.Restart()) == L.Restart()
        adapter.budget.ran()
        assert adapter.express(L.Restart()) is None
    assert adapter.budget.spent == 2
    adapter.phase("search")
    adapter.budget.start_case()
    assert adapter.express(L.Restart()) is None
    assert offline(name, restarts=True).express(L.Restart()) == L.Restart()   # "on": no bound
    assert offline(name, restarts=False).express(L.Restart()) is None


@pytest.mark.parametrize("name", ["rabbitmq", "activemq"])
def test_restarts_are_off_on_a_broker_the_kit_was_given_and_the_report_says_why(name):
    given = offline(name, restarts=False, restart_given=False, host="127.0.0.1", port=5672)
    reason = given.capabilities().not_applicable["CORE-32"]
    assert "only a broker it started" in reason
    asked_off = offline(name, restarts=False, restart_given=True, host="127.0.0.1", port=5672)
    assert "restart=on" in asked_off.capabilities().not_applicable["CORE-32"]
    assert DEFAULT_RESTARTS >= 1


class _Limited(SimulatedAdapter):
    """The simulated queue manager with a broker adapter's bound on restarts (the same :class:`RestartBudget`)."""

    def __init__(self, limit=2, **options):
        super().__init__(**options)
        self.budget = RestartBudget(limit=limit)
        self.ran = 0

    def phase(self, name):
        self.budget.phase(name)

    def start_case(self, case_id, platform=None):
        self.budget.start_case()
        super().start_case(case_id, platform)

    def express(self, op):
        return None if isinstance(op, L.Restart) and not self.budget.allows() else op

    def execute(self, op):
        if isinstance(op, L.Restart):
            self.ran += 1
            self.budget.ran()
        return super().execute(op)


def test_once_the_restarts_are_spent_the_machines_send_none_and_nothing_is_left_out():
    adapter = _Limited(platform="distributed")
    record = run_areas(adapter, ["core", "trigger"], examples=40, seed=3, keep_going=0)
    assert adapter.budget.spent == 2   # the machines drew restarts, and searching ran exactly the two allowed
    assert record.coverage.not_expressible.get("Restart", 0) == 0


def test_a_departure_found_with_the_last_restart_allowed_shrinks_and_minimises_with_it():
    """Non-persistent messages kept across a restart, with one restart allowed: the case that spends it
    departs, and shrinking and minimising replay it (with its restart) many times, spending nothing; the
    counterexample holds the restart, and searching spent exactly one."""
    adapter = _Limited(limit=1, platform="distributed", faults="restart-keeps-nonpersistent")
    record = run_areas(adapter, ["core"], examples=60, seed=3, keep_going=0)
    assert record.failures, "the fault was not found"
    failure = record.failures[0]
    assert any(isinstance(s.op, L.Restart) for s in failure.steps), failure.steps
    assert "CORE-32" in failure.rules
    assert adapter.budget.spent == 1 and adapter.ran > 1   # replays ran restarts the bound never counted
    # at most: connect, define, open, a non-persistent message put and a persistent one beside it (the witness that
    # the restart happened), the restart, connect, open and the get that returns the non-persistent one
    assert len(failure.steps) <= 9, len(failure.steps)


@pytest.mark.parametrize("fault, seed", [("priority-ignored", 2), ("disconnect-backs-out", 4),
                                         ("backout-count-not-incremented", 3)])
def test_a_departure_found_while_restarts_remained_shrinks_with_the_same_choices(fault, seed):
    """The case that found the departure could still restart (it did not, or not every time it could): its replays
    have the same restarts available at every step, so the machines choose the same rules, and shrinking ends on
    the departure with no error, however many restarts the search spent before it."""
    adapter = _Limited(limit=5, platform="distributed", faults=fault)
    record = run_areas(adapter, ["core"], examples=60, seed=seed, keep_going=0)
    assert record.error is None and record.failures, (record.error, record.failures)
    assert set(FAULTS[fault].rules) & set(record.failures[0].rules)
    assert adapter.budget.spent <= 5
