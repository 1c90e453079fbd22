"""A bounded number of restarts on a broker (each takes seconds there): ``--adapter-opt restart=N``, and by default a
few on a broker the kit started.  Searching cases spend the bound; once it is spent the machines go on without, never
sending one the system declines.  Cases that replay a departure (Hypothesis shrinking it, the kit minimising or
replaying it) spend none of it and run as many restarts as the case that found it ran."""

from __future__ import annotations

import pytest

from adapters.base import AdapterOptionError, RestartBudget
from adapters.broker_shim import DEFAULT_RESTARTS, _restart_option
from adapters.simulated import SimulatedAdapter
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
    assert adapter.express(L.Restart()) == L.Restart()
    adapter.budget.ran(), adapter.budget.ran()
    assert adapter.express(L.Restart()) is None
    # replaying a departure whose case ran one restart: one per case, however spent the search is
    adapter.phase("replay", 1)
    adapter.budget.start_case()
    assert adapter.express(L.Restart()) == L.Restart()
    adapter.budget.ran()
    assert adapter.express(L.Restart()) is None and adapter.budget.spent == 2
    adapter.phase("search")
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

    def phase(self, name, restarts=None):
        self.budget.phase(name, restarts)

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
    assert len(failure.steps) <= 8, len(failure.steps)
