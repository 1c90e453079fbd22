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


def test_the_crash_command_gives_frequencies_the_accounting_and_the_first_breaking_schedule(tmp_path):
    import json

    from tests.clikit import run_cli

    code, out, err = run_cli("crash", "--adapter", "simulated", "--faults", "restart-keeps-nonpersistent",
                             "--schedules", "12", "--seed", "3", "--results", tmp_path / "c")
    assert code == 1, out + err
    assert "CORE-32" in out and "95% interval" in out and "First schedule breaking CORE-32" in out
    data = json.loads((tmp_path / "c" / "crash.json").read_text())
    assert data["schedules"] == 12 and set(data["rules"]) == {"CORE-32"} and data["classes"]["kept"]
    first = data["rules"]["CORE-32"]["first"]
    assert any(m["class"] == "kept" for m in first["messages"]) and first["steps"]
    low, high = data["rules"]["CORE-32"]["interval"]
    assert low <= data["rules"]["CORE-32"]["frequency"] <= high
    # a conforming queue manager: nothing broke, exit 0; kills among the restarts where the system runs them
    code, out, err = run_cli("crash", "--adapter", "simulated", "--schedules", "10", "--seed", "3",
                             "--results", tmp_path / "ok")
    assert code == 0 and "No drain found a message out of place" in out, out + err
    assert json.loads((tmp_path / "ok" / "crash.json").read_text())["rules"] == {}


def test_schedules_restart_with_every_kind_the_adapter_runs():
    """A kill and an orderly stop where the adapter runs both; only the one it can express otherwise."""
    import random

    from conformance.runner.crash import random_schedule, restart_kinds

    class OrderlyOnly(SimulatedAdapter):
        def express(self, op):
            return None if isinstance(op, L.Restart) and op.abrupt else op

    assert set(restart_kinds(SimulatedAdapter())) == {L.Restart(), L.Restart(abrupt=True)}
    assert restart_kinds(OrderlyOnly()) == (L.Restart(),)
    rng = random.Random(4)
    drawn = {op for i in range(40) for op in random_schedule(rng, i, restart_kinds(SimulatedAdapter()))
             if isinstance(op, L.Restart)}
    assert drawn == {L.Restart(), L.Restart(abrupt=True)}


def test_a_crash_campaign_stops_starting_schedules_when_its_time_is_up(tmp_path):
    from tests.clikit import run_cli

    code, out, err = run_cli("crash", "--adapter", "simulated", "--schedules", "100000", "--minutes", "0.02",
                             "--seed", "1", "--results", tmp_path / "c")
    ran = int(out.split(" schedules ran")[0].rsplit("\n", 1)[-1])
    assert code == 0 and 0 < ran < 100000, out[-500:] + err


def test_a_crash_campaign_on_a_system_that_cannot_restart_is_refused_in_one_line(tmp_path):
    import sys
    from pathlib import Path

    from tests.clikit import run_cli

    server = Path(__file__).resolve().parent.parent / "examples" / "queuelib-qm" / "server.py"
    code, out, err = run_cli("crash", "--adapter", "subprocess", "--adapter-opt", f"command={sys.executable} {server}",
                             "--results", tmp_path / "c")
    assert code == 2 and err.count("\n") == 1 and "does not restart its system" in err, err
    assert not (tmp_path / "c").exists()


def test_a_schedule_that_departs_before_its_drain_is_reported_with_its_rules_never_dropped():
    """A system that refuses every other put as full (MQ has room): the schedules depart at that put, step by step;
    the result counts them per rule named, keeps the first of each, and the summary shows them."""
    from conformance.cli.crash import summary

    class FullAtTimes(SimulatedAdapter):
        puts = 0

        def execute(self, op):
            if isinstance(op, L.Put):
                self.puts += 1
                if self.puts % 2 == 0:
                    return L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_Q_FULL)
            return super().execute(op)

    result = campaign(lambda: FullAtTimes(platform="distributed"), 1, 10)
    assert result.departed and "CORE-27" in result.departures, result.departures
    first = result.first_departed["CORE-27"]
    assert isinstance(first.steps[first.accounting.departed.index][0], L.Put)
    text = summary(result)
    assert "Departed before the drain" in text and "CORE-27" in text and "First schedule departing for CORE-27" in text
