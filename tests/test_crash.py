"""Crash schedules on the simulated queue manager: every message accounted for, rules judged by frequency."""

from __future__ import annotations

import time

import pytest

from adapters.simulated import SimulatedAdapter
from adapters.simulated.faults import FAULTS, SOMETIMES
from conformance.records.crash import binomial_interval
from conformance.runner.crash import campaign
from reference_model import language as L
from reference_model import mqconst as C

RATE = 0.25   # the fault's true rate: one restart in four loses a committed persistent message


def _simulated(faults: str = ""):
    return lambda: SimulatedAdapter(platform="distributed", faults=faults)


class AnswersWhilePaused(SimulatedAdapter):
    """A client that completes a commit made while its queue manager is paused without asking it."""
    paused = False

    def execute(self, op):
        if isinstance(op, L.PauseQueueManager):
            self.paused = True
            return L.Observation()
        if self.paused and isinstance(op, L.Commit):
            self.paused = False
            return L.Observation()
        self.paused = False
        return super().execute(op)


def _two_persistent_and_a_restart(rng, index):
    """Two committed persistent messages, one restart: the fault loses one of them at a rate of exactly RATE."""
    persistent = L.MessageDescriptor(persistence=C.MQPER_PERSISTENT)
    return [L.DefineQueue(queue="Q1"), L.Connect(conn="a"),
            L.Open(conn="a", handle="a1", queue="Q1", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
            L.Put(conn="a", handle="a1", body=f"p{index}.1", md=persistent, options=C.MQPMO_NO_SYNCPOINT),
            L.Put(conn="a", handle="a1", body=f"p{index}.2", md=persistent, options=C.MQPMO_NO_SYNCPOINT),
            L.Restart()]


def test_a_queue_manager_that_keeps_every_message_breaks_nothing_in_any_schedule():
    for seed in (1, 2, 3):
        result = campaign(_simulated(), seed, 40)
        assert result.broke == {} and result.departed == 0
        assert result.classes["ok"] and result.classes["gone"]   # kept ones, and ones MQ drops (not persistent)


def test_a_loss_at_one_restart_in_four_is_found_at_its_rate_naming_the_restart_rule():
    assert "restart-sometimes-loses-persistent" in SOMETIMES and "restart-sometimes-loses-persistent" not in FAULTS
    low, high = binomial_interval(80, RATE)
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


def test_where_the_system_can_be_paused_some_commits_are_made_while_it_is_and_nothing_breaks():
    """A commit made while the queue manager is paused is cut in flight: in doubt, either outcome allowed; a
    conforming queue manager breaks no rule with them, and a system that cannot be paused gets none."""
    import random

    from conformance.runner.crash import can_pause, random_schedule

    class NoPause(SimulatedAdapter):
        def express(self, op):
            return None if isinstance(op, L.PauseQueueManager) else op

    assert can_pause(SimulatedAdapter()) and not can_pause(NoPause())
    rng = random.Random(1)
    schedules = [random_schedule(rng, i, pause=True) for i in range(60)]
    paused = [ops for ops in schedules if any(isinstance(op, L.PauseQueueManager) for op in ops)]
    assert paused and all(isinstance(ops[ops.index(next(op for op in ops if isinstance(op, L.PauseQueueManager))) + 1],
                                     L.Commit) for ops in paused)
    rng = random.Random(1)
    assert not any(isinstance(op, L.PauseQueueManager) for i in range(60) for op in random_schedule(rng, i))
    result = campaign(_simulated(), 1, 60)
    assert result.broke == {} and result.departed == 0
    in_doubt = [s for s in paused if any(isinstance(op, L.Put) and op.options & C.MQPMO_SYNCPOINT for op in s)]
    assert in_doubt   # some of them with puts in the unit of work cut in flight


def test_a_crash_campaign_stops_starting_schedules_when_its_time_is_up(tmp_path):
    from conformance.cli.crash import DEFAULT_SCHEDULES
    from tests.clikit import run_cli

    def ran(out):
        return int(out.split(" schedules ran")[0].rsplit("\n", 1)[-1])

    code, out, err = run_cli("crash", "--adapter", "simulated", "--schedules", "100000", "--minutes", "0.02",
                             "--seed", "1", "--results", tmp_path / "c")
    assert code == 0 and 0 < ran(out) < 100000, out[-500:] + err
    # --minutes alone: the time bounds the campaign, not the default number of schedules (a five-minute campaign
    # on a broker had stopped at 40 schedules, a third of its time)
    code, out, err = run_cli("crash", "--adapter", "simulated", "--minutes", "0.05", "--seed", "1",
                             "--results", tmp_path / "d")
    assert code == 0 and ran(out) > DEFAULT_SCHEDULES, out[-500:] + err
    assert "until the time is spent" in out, out[:500]


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


def test_a_breaking_schedule_is_cut_down_to_the_calls_that_break_the_rule_and_replays_at_its_rate():
    """The fault loses a committed persistent message at one restart in four: the first schedule that showed it,
    cut down, is the frame, a persistent message put and one restart; run again it breaks the rule at the fault's
    rate (within the binomial 95% interval)."""
    from conformance.runner.crash import replay

    result = campaign(_simulated("restart-sometimes-loses-persistent"), 2, 40, tries=20)
    first, minimal = result.first["CORE-32"], result.minimal["CORE-32"]
    ops = [op for op, _ in minimal.steps]
    assert "CORE-32" in minimal.accounting.rules and len(ops) < len(first.steps), (first.steps, ops)
    assert ops[:3] == [op for op, _ in first.steps][:3]   # the frame: the queue, the connection, the handle
    body = ops[3:]
    assert sum(isinstance(op, L.Restart) for op in body) == 1 and isinstance(body[-1], L.Restart)
    puts = [op for op in body if isinstance(op, L.Put)]
    assert len(puts) == 1 and puts[0].md.persistence == C.MQPER_PERSISTENT
    assert len(body) <= 3   # the put, maybe its commit, the restart
    ran, broke = replay(_simulated("restart-sometimes-loses-persistent")(), "again", ops, 80)
    low, high = binomial_interval(80, RATE)
    assert ran == 80 and set(broke) <= {"CORE-32"} and low <= broke["CORE-32"] <= high, (broke, (low, high))


def test_the_crash_command_writes_each_cut_down_schedule_and_its_replay_says_how_often_it_breaks(tmp_path):
    import json
    import shlex

    from tests.clikit import run_cli

    code, out, err = run_cli("crash", "--adapter", "simulated", "--faults", "restart-keeps-nonpersistent",
                             "--schedules", "12", "--seed", "3", "--results", tmp_path / "c")
    assert code == 1 and "cut down to the fewest calls that still break it" in out, out + err
    saved = json.loads((tmp_path / "c" / "schedules" / "CORE-32.json").read_text())
    assert saved["format"] == "mqconform-crash-schedule" and saved["rule"] == "CORE-32" and saved["tries"] == 5
    data = json.loads((tmp_path / "c" / "crash.json").read_text())
    assert len(data["rules"]["CORE-32"]["minimal"]["steps"]) == len(saved["ops"]) \
        < len(data["rules"]["CORE-32"]["first"]["steps"])
    command = next(line for line in out.splitlines() if line.startswith("Replay: mqconform crash "))
    argv = shlex.split(command.removeprefix("Replay: mqconform "))
    assert argv[argv.index("--replay") + 1] == str(tmp_path / "c" / "schedules" / "CORE-32.json")
    code, out, err = run_cli(*argv, "--results", tmp_path / "r")
    assert code == 1 and "CORE-32  20 of 20" in out, out + err   # the fault keeps every non-persistent message
    assert json.loads((tmp_path / "r" / "replay.json").read_text())["rules"]["CORE-32"]["runs"] == 20
    # on a queue manager without the fault the same schedule breaks nothing
    code, out, err = run_cli("crash", "--adapter", "simulated", "--replay", tmp_path / "c" / "schedules" / "CORE-32.json",
                             "--tries", "5", "--results", tmp_path / "clean")
    assert code == 0 and "CORE-32  0 of 5" in out, out + err
    # --tries 0: not cut down
    code, out, err = run_cli("crash", "--adapter", "simulated", "--faults", "restart-keeps-nonpersistent",
                             "--schedules", "6", "--seed", "3", "--tries", "0", "--results", tmp_path / "n")
    assert code == 1 and "(as it ran, not minimised)" in out and not (tmp_path / "n" / "schedules").exists()


def test_a_file_that_is_not_a_crash_schedule_is_one_line_and_exit_2_before_anything_runs(tmp_path):
    from tests.clikit import run_cli

    for text, needle in (('{"format": "mqconform-race"}', "not a well-formed crash schedule"),
                         ('{"format": "mqconform-crash-schedule", "version": 1, "rule": "CORE-32", "ops": [1]}',
                          "not a well-formed crash schedule"),
                         ("not json", "not a well-formed crash schedule")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        code, out, err = run_cli("crash", "--adapter", "simulated", "--replay", bad, "--results", tmp_path / "r")
        assert code == 2 and err.count("\n") == 1 and needle in err and "Traceback" not in err, err
        assert not (tmp_path / "r").exists()
    code, out, err = run_cli("crash", "--adapter", "simulated", "--replay", tmp_path / "none.json",
                             "--results", tmp_path / "r")
    assert code == 2 and "cannot read" in err and err.count("\n") == 1, err


def test_cutting_down_stops_when_the_time_is_up_and_says_so():
    import time

    from conformance.runner.crash import minimal_schedule

    result = campaign(_simulated("restart-keeps-nonpersistent"), 3, 10)
    first = result.first["CORE-32"]
    adapter = _simulated("restart-keeps-nonpersistent")()
    assert minimal_schedule(adapter, first, "CORE-32", 5, deadline=time.monotonic()) == (first, False)
    cut, whole = minimal_schedule(adapter, first, "CORE-32", 5, deadline=time.monotonic() + 600)
    assert whole and len(cut.steps) < len(first.steps) and "CORE-32" in cut.accounting.rules


def test_a_commit_carried_out_in_part_when_cut_in_flight_is_found_naming_the_in_doubt_rule():
    """The fault makes a commit cut in flight (the queue manager paused) make its puts available and back its gets
    out: each message alone is where one outcome of the commit has it, the drain as a whole where none does."""
    result = campaign(_simulated("in-flight-commit-half-done"), 2, 60)
    assert set(result.broke) == {"CORE-48"} and result.departed == 0, result.broke
    first = result.first["CORE-48"]
    assert any(isinstance(op, L.PauseQueueManager) for op, _ in first.steps)
    assert all(a.rules == ("CORE-48",) for a in first.accounting.failures)
    clean = campaign(_simulated(), 2, 60)
    assert clean.broke == {} and clean.classes["in doubt"]


def test_the_parts_of_a_campaign_run_as_tasks_merge_into_one_result():
    """Schedules, messages per class and each rule's count add up; the frequency and interval are the sums'; the
    first breaking schedule is the first task's that has one, and so is the cut-down one."""
    from conformance.campaign.crash import merge, plan
    from conformance.records.crash import result_json, wilson

    specs = plan(7, 25, 3)
    assert [s["schedules"] for s in specs] == [9, 8, 8] and len({s["seed"] for s in specs}) == 3
    assert plan(7, 25, 3) == specs and plan(7, 2, 5) == plan(7, 2, 2)
    parts = []
    for spec in specs:
        result = campaign(_simulated("restart-keeps-nonpersistent"), spec["seed"], spec["schedules"],
                          tries=3 if spec["index"] == 1 else 0)
        parts.append(dict(result_json(result, "simulated", {}, spec["seed"]), task=spec["id"]))
    merged = merge(parts, 7)
    assert merged["schedules"] == 25 and merged["tasks"] == [s["id"] for s in specs]
    assert merged["classes"] == {cls: sum(p["classes"][cls] for p in parts) for cls in merged["classes"]}
    k = sum(p["rules"]["CORE-32"]["schedules"] for p in parts if "CORE-32" in p["rules"])
    rule = merged["rules"]["CORE-32"]
    assert rule["schedules"] == k and rule["frequency"] == k / 25 and rule["interval"] == list(wilson(k, 25))
    first_task = next(p for p in parts if "CORE-32" in p["rules"])
    assert rule["first"] == first_task["rules"]["CORE-32"]["first"]
    assert rule["replay_task"] == specs[1]["id"] and rule["minimal"] == parts[1]["rules"]["CORE-32"]["minimal"]


@pytest.mark.parametrize("argv, needle", [
    (["--tasks", "2"], "--tasks needs --master"),
    (["--master", "nowhere"], "not a Spark master URL"),
])
def test_what_a_spark_crash_campaign_cannot_do_is_one_line(argv, needle, tmp_path):
    from tests.clikit import run_cli

    code, out, err = run_cli("crash", "--adapter", "simulated", *argv, "--results", tmp_path / "c")
    assert code == 2 and needle in err and err.count("\n") == 1, err


class CpuClock:
    """A clock for the crash runner that the CPU this thread uses moves: the simulated queue manager's schedules and
    their cutting down run in this thread, so its time box holds the same work however busy the machine is, and
    whatever else the test process's other threads do (a process's CPU clock, tried first, ran twice as fast in a
    suite's worker and left no time to cut down)."""

    @staticmethod
    def monotonic():
        return time.thread_time()


def test_a_time_boxed_campaign_leaves_the_last_part_of_its_time_to_cutting_down_what_broke(monkeypatch):
    """Cutting down what broke is done within the 1.5 s, not after: the campaign (in this process, one thread) uses
    at most a second past its deadline.  On the CPU's clock, not the wall's: with the quick suite's three workers on
    two cores, the quarter of a wall-clock 1.5 s kept for cutting down was once too little CPU to cut down anything
    (and once 2.6 s against 2.5 for the same work), where the same work on the CPU's clock ends in time."""
    import conformance.runner.crash as crash

    monkeypatch.setattr(crash, "time", CpuClock)
    began, wall = time.thread_time(), time.monotonic()
    result = campaign(_simulated("restart-keeps-nonpersistent"), 3, 10 ** 6, deadline=began + 1.5, tries=3)
    used, took = time.thread_time() - began, time.monotonic() - wall
    assert "CORE-32" in result.minimal and "CORE-32" not in result.cut_short
    assert len(result.minimal["CORE-32"].steps) < len(result.first["CORE-32"].steps)
    assert result.schedules < 10 ** 6 and used < 1.5 + 1.0 and took < 1.5 + 30, (used, took)


def _history(*steps):
    ok = L.Observation()
    return [(op, observed or ok) for op, observed in steps]


def _put(body, options, persistence=C.MQPER_PERSISTENT):
    return L.Put(conn="a", handle="a1", body=body, options=options,
                 md=L.MessageDescriptor(priority=-1, persistence=persistence))


_OPENED = ((L.DefineQueue(queue="Q1"), None), (L.Connect(conn="a"), None),
           (L.Open(conn="a", handle="a1", queue="Q1",
                   options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE), None))


def test_a_departure_before_the_drain_is_counted_under_the_rules_its_history_breaks_not_every_rule_named():
    """As a run judges a departure: a message put under syncpoint returned behind one put after it breaks FIFO
    order (CORE-05), which the step's allowed outcomes also file under the commit (CORE-29); a call made while the
    queue manager is paused answered OK breaks one of CORE-48 and CORE-46, and the history does not show which
    (ActiveMQ's JMS client, 2026-12-04: counted under both before)."""
    from conformance.checker.accounting import account, departure_verdicts

    got = L.Observation(message=L.ReturnedMessage(body="m1", priority=0, persistence=C.MQPER_PERSISTENT,
                                                  msg_id="X"))
    behind = _history(*_OPENED, (_put("m0", C.MQPMO_SYNCPOINT), None), (_put("m1", C.MQPMO_NO_SYNCPOINT), None),
                      (_put("m2", C.MQPMO_SYNCPOINT), None), (L.Commit(conn="a"), None),
                      (L.Get(conn="a", handle="a1", options=C.MQGMO_NO_SYNCPOINT), got))
    departed = account(C.PLATFORM_DISTRIBUTED, behind, {}).departed
    assert departed is not None and departed.index == len(behind) - 1
    assert "CORE-29" in departed.rules          # named by the step ...
    assert departure_verdicts(departed) == ("CORE-05",)   # ... not broken by the history
    paused = _history(*_OPENED, (_put("m0", C.MQPMO_NO_SYNCPOINT), None),
                      (L.PauseQueueManager(conn="a", tenths=5), None), (L.Commit(conn="a"), None))
    departed = account(C.PLATFORM_DISTRIBUTED, paused, {}).departed
    assert departure_verdicts(departed) == ("CORE-48 or CORE-46",)


def test_a_campaign_counts_a_departure_that_breaks_one_of_two_rules_once_under_both_and_says_so():
    from conformance.cli.crash import summary

    result = campaign(lambda: AnswersWhilePaused(platform="distributed"), 1, 40)
    assert result.departures, result.departures
    # each schedule counted once, under the rules it breaks one of: never CORE-48 as broken alone
    assert sum(result.departures.values()) == result.departed, result.departures
    assert all(" or " in verdict and "CORE-48" in verdict.split(" or ") for verdict in result.departures), \
        result.departures
    text = summary(result)
    assert all(verdict in text for verdict in result.departures) and "one of them" in text


class ScheduleClock:
    """A clock for the crash runner that only what a test's schedules add to ``now`` moves."""

    now = 0.0

    def monotonic(self):
        return self.now


@pytest.fixture
def schedule_clock(monkeypatch):
    import conformance.runner.crash as crash

    clock = ScheduleClock()
    monkeypatch.setattr(crash, "time", clock)
    return clock


def test_a_time_boxed_campaign_starts_no_schedule_that_would_end_past_its_deadline_were_it_as_slow_as_the_slowest(
        schedule_clock):
    """Schedules differ in length (a pause, a slow restart): judged by the mean, a slow one started late ends past
    the deadline.  On a clock that only the schedules move, the first and the twenty-first take 4.42 s, the others
    0.1 s, with 10 s to spend: the slowest stops it after thirteen (5.62 s spent), where the mean (about 0.32 s)
    would have started the twenty-first at 6.32 s and ended at 10.74."""
    clock = schedule_clock

    def shape(rng, index):
        clock.now += 4.42 if index in (0, 20) else 0.1
        return _two_persistent_and_a_restart(rng, index)

    result = campaign(_simulated(), 1, 100, shape=shape, deadline=10.0)
    assert result.schedules == 13 and clock.now <= 10.0, (result.schedules, clock.now)


def test_a_schedule_that_departed_before_its_drain_is_cut_down_written_and_its_replay_departs_again(tmp_path):
    """A queue manager that returns the newest of two messages of one priority departs at that get, before any
    drain: the first such schedule is cut down as a drain's breaking one is (a call left out where the run without
    it departs for the same rule again), written under schedules/, and replayed it departs every time; on a clean
    queue manager, never."""
    import json
    import shlex

    from tests.clikit import run_cli

    code, out, err = run_cli("crash", "--adapter", "simulated", "--faults", "fifo-within-priority-broken",
                             "--schedules", "10", "--seed", "1", "--results", tmp_path / "c")
    assert code == 1 and "First schedule departing for CORE-05, cut down to the fewest calls" in out, out + err
    data = json.loads((tmp_path / "c" / "crash.json").read_text())
    entry = data["departures"]["CORE-05"]
    steps = entry["minimal"]["steps"]
    assert entry["replay"] == "schedules/CORE-05.json" and len(steps) < len(entry["first"]["steps"]), entry
    # what is left: the frame, two puts and the get that returns the later one (nothing after the departure)
    assert [s["op"]["type"] for s in steps] == ["DefineQueue", "Connect", "Open", "Put", "Put", "Get"], steps
    saved = json.loads((tmp_path / "c" / "schedules" / "CORE-05.json").read_text())
    assert saved["rule"] == "CORE-05" and len(saved["ops"]) == len(steps)
    command = next(line for line in out.splitlines() if line.startswith("Replay: mqconform crash "))
    argv = shlex.split(command.removeprefix("Replay: mqconform "))
    code, out, err = run_cli(*argv, "--tries", "6", "--results", tmp_path / "r")
    assert code == 1 and "CORE-05  6 of 6" in out, out + err
    code, out, err = run_cli("crash", "--adapter", "simulated", "--replay", tmp_path / "c" / "schedules" / "CORE-05.json",
                             "--tries", "4", "--results", tmp_path / "clean")
    assert code == 0 and "CORE-05  0 of 4" in out, out + err


def test_a_departure_that_breaks_one_of_two_rules_is_cut_down_under_both_and_its_file_has_no_blank():
    """A commit answered while the queue manager is paused departs for "CORE-48 or CORE-46": cut down, what is left
    after the frame ends with the pause and the commit; its file is named without a blank."""
    from conformance.records.crash import result_json, schedule_file

    result = campaign(lambda: AnswersWhilePaused(platform="distributed"), 1, 40, tries=2)
    verdict = next(v for v in result.departures if " or " in v)
    cut = [op for op, _ in result.minimal[verdict].steps]
    assert len(cut) < len(result.first_departed[verdict].steps)
    assert isinstance(cut[-2], L.PauseQueueManager) and isinstance(cut[-1], L.Commit), cut
    assert schedule_file(verdict) == verdict.replace(" or ", "_or_") + ".json"
    data = result_json(result, "simulated", {}, 1)
    assert data["departures"][verdict]["replay"] == f"schedules/{schedule_file(verdict)}"


def test_tasks_merge_a_departure_s_cut_down_schedule_as_a_rule_s():
    """The first task whose departure under a verdict was cut down gives the merged result its schedule and file;
    a task that did not cut it down gives none."""
    from conformance.campaign.crash import merge, plan
    from conformance.records.crash import result_json

    specs = plan(3, 12, 2)
    parts = []
    for spec in specs:
        result = campaign(_simulated("fifo-within-priority-broken"), spec["seed"], spec["schedules"],
                          tries=2 if spec["index"] == 1 else 0)
        parts.append(dict(result_json(result, "simulated", {}, spec["seed"]), task=spec["id"]))
    assert "minimal" not in parts[0]["departures"]["CORE-05"] and "minimal" in parts[1]["departures"]["CORE-05"]
    merged = merge(parts, 3)["departures"]["CORE-05"]
    assert merged["schedules"] == sum(p["departures"]["CORE-05"]["schedules"] for p in parts)
    assert merged["first"] == parts[0]["departures"]["CORE-05"]["first"]
    assert merged["minimal"] == parts[1]["departures"]["CORE-05"]["minimal"] and merged["replay_task"] == specs[1]["id"]


def test_time_left_once_every_breaking_schedule_is_cut_down_runs_more_schedules(schedule_clock):
    """The last quarter of a time box is kept for cutting down; where that takes less (here no time at all, on a
    clock only the schedules move, a second each), schedules run again until the time is spent: nineteen in twenty
    seconds (none starts that would end at the deadline), where fourteen ran before the quarter was given back."""
    import conformance.runner.crash as crash

    clock = schedule_clock

    def shape(rng, index):
        clock.now += 1.0
        return crash.random_schedule(rng, index)

    result = campaign(_simulated("restart-keeps-nonpersistent"), 1, 100, shape=shape, deadline=20.0, tries=2)
    assert "CORE-32" in result.minimal and result.broke["CORE-32"] < result.schedules, result.broke
    assert result.schedules == 19 and clock.now <= 20.0, (result.schedules, clock.now)
