"""A bounded number of restarts (``--adapter-opt restart=N`` on a broker): each takes seconds on a real broker, so
a run may allow a few; once they are spent the machines go on without, never sending one the system declines."""

from __future__ import annotations

import pytest

from adapters.base import AdapterOptionError
from adapters.broker_shim import _restart_option
from adapters.simulated import SimulatedAdapter
from conformance.engine import run_areas
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
    adapter = offline(name, restarts=True, restart_limit=2, restarts_done=0)
    assert adapter.express(L.Restart()) == L.Restart()
    adapter.restarts_done = 2
    assert adapter.express(L.Restart()) is None
    assert offline(name, restarts=True).express(L.Restart()) == L.Restart()   # "on": no bound


class _Limited(SimulatedAdapter):
    """The simulated queue manager, declining restarts once ``limit`` of them ran (as a broker adapter does)."""

    limit = 2

    def __init__(self, **options):
        super().__init__(**options)
        self.ran = 0

    def express(self, op):
        return None if isinstance(op, L.Restart) and self.ran >= self.limit else op

    def execute(self, op):
        self.ran += isinstance(op, L.Restart)
        return super().execute(op)


def test_once_the_restarts_are_spent_the_machines_send_none_and_nothing_is_left_out():
    adapter = _Limited(platform="distributed")
    record = run_areas(adapter, ["core", "trigger"], examples=40, seed=3, keep_going=0)
    assert adapter.ran == adapter.limit   # the machines drew restarts, and ran exactly the two allowed
    assert record.coverage.not_expressible.get("Restart", 0) == 0
