"""Crash schedules on the simulated queue manager: every message accounted for, rules judged by frequency."""

from __future__ import annotations

import math

from adapters.simulated import SimulatedAdapter
from adapters.simulated.faults import FAULTS, SOMETIMES
from conformance.runner.crash import campaign
from reference_model import language as L
from reference_model import mqconst as C

RATE = 0.25   # the fault's true rate: one restart in four loses a committed persistent message


def _simulated(faults: str = ""):
    return lambda: SimulatedAdapter(platform="distributed", faults=faults)


def _two_persistent_and_a_restart(rng, index):
    """Two committed persistent messages, one restart: the fault loses one of them at a rate of exactly RATE."""
    persistent = L.MessageDescriptor(persistence=C.MQPER_PERSISTENT)
    return [L.DefineQueue(queue="Q1"), L.Connect(conn="a"),
            L.Open(conn="a", handle="a1", queue="Q1", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
            L.Put(conn="a", handle="a1", body=f"p{index}.1", md=persistent, options=C.MQPMO_NO_SYNCPOINT),
            L.Put(conn="a", handle="a1", body=f"p{index}.2", md=persistent, options=C.MQPMO_NO_SYNCPOINT),
            L.Restart()]


def _binomial_interval(n: int, p: float, mass: float = 0.95) -> tuple[int, int]:
    """The central interval of a binomial(n, p) holding at least ``mass`` of its probability."""
    cdf, low, high = 0.0, None, n
    for k in range(n + 1):
        cdf += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if low is None and cdf > (1 - mass) / 2:
            low = k
        if cdf >= 1 - (1 - mass) / 2:
            high = k
            break
    return low or 0, high


def test_a_queue_manager_that_keeps_every_message_breaks_nothing_in_any_schedule():
    for seed in (1, 2, 3):
        result = campaign(_simulated(), seed, 40)
        assert result.broke == {} and result.departed == 0
        assert result.classes["ok"] and result.classes["gone"]   # kept ones, and ones MQ drops (not persistent)


def test_a_loss_at_one_restart_in_four_is_found_at_its_rate_naming_the_restart_rule():
    assert "restart-sometimes-loses-persistent" in SOMETIMES and "restart-sometimes-loses-persistent" not in FAULTS
    low, high = _binomial_interval(80, RATE)
    for seed in (1, 2, 3):
        result = campaign(_simulated("restart-sometimes-loses-persistent"), seed, 80, shape=_two_persistent_and_a_restart)
        assert set(result.broke) == {"CORE-32"}, result.broke
        assert low <= result.broke["CORE-32"] <= high, (seed, result.broke, (low, high))
        first = result.first["CORE-32"]
        assert [a.cls for a in first.accounting.failures] == ["lost"] and len(first.drained) == 1


def test_messages_kept_where_mq_drops_them_are_kept_not_lost():
    result = campaign(_simulated("restart-keeps-nonpersistent"), 2, 40)
    assert set(result.broke) == {"CORE-32"} and result.classes["kept"] and not result.classes["lost"]


def test_the_same_seed_gives_the_same_frequencies():
    one = campaign(_simulated("restart-sometimes-loses-persistent"), 5, 30)
    two = campaign(_simulated("restart-sometimes-loses-persistent"), 5, 30)
    assert one.broke == two.broke and one.classes == two.classes
