"""Finding a departure fast: shrinking has a budget, and a departure found on one platform is not searched
for and shrunk again on the next.

Counted in cases, never in seconds, except by a time-boxed campaign's hard end and, as a safety net
that the run then reports, a real-time system's limit on shrinking one departure.
"""

from __future__ import annotations

import pytest
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from adapters.registry import create_adapter
from conformance.runner.engine import bound_machine, machine_settings, run_area, run_areas
from conformance.records.results import Coverage, RunRecord
from conformance.runner.stable import stable_generation
from conformance.runner.stack import with_frame_room
from reference_model import mqconst as C

FAULT = "priority-ignored"   # core
BOTH = "put-without-output-open"  # core, shown on both platforms by the same history (seed 7)


#: Hypothesis's run of a machine, its frames kept in one chunk as the engine's are (conformance/runner/stack.py).
_run = with_frame_room(run_state_machine_as_test)


def _record(adapter, area: str) -> RunRecord:
    return RunRecord(adapter=adapter.name, describe={}, capabilities=adapter.capabilities().to_json(),
                     areas=[area], seed=7, examples=200)


def _cases(budget: int | None) -> tuple[int, object]:
    """(cases run on the system, the session) for the fault's run with shrinking limited to ``budget`` cases."""
    adapter = create_adapter("simulated", {"faults": FAULT})
    coverage = Coverage()
    machine = bound_machine(adapter, "core", C.PLATFORM_DISTRIBUTED, 7, {"faults": FAULT}, coverage,
                            shrink_budget=budget)
    with pytest.raises((AssertionError, Flaky)), stable_generation():   # the departure, or Flaky once the budget is spent
        _run(machine, settings=machine_settings(200))
    return coverage.examples, machine.session


def test_shrinking_stops_at_its_budget_with_the_smallest_departure_so_far():
    none, session = _cases(0)
    assert session.shrink_spent and "CORE-04" in session.smallest.rules
    first = session.smallest
    three, session = _cases(3)
    assert three == none + 3
    assert session.shrink_spent and len(session.smallest.steps) <= len(first.steps)
    unbounded, session = _cases(None)
    assert not session.shrink_spent and unbounded > three + 10


def test_shrinking_ends_when_it_has_found_nothing_smaller_for_its_stall_count(monkeypatch):
    from conformance.runner import engine

    monkeypatch.setattr(engine, "SHRINK_STALL", 5)
    none, _ = _cases(0)
    stalled, session = _cases(500)
    assert session.shrink_spent and session.shrink.stall == 5
    assert none < stalled < none + 500   # it shrank, and stopped long before its budget
    assert session._stalled > 5 and "CORE-04" in session.smallest.rules
    # without a stall count, the same shrinking goes on to its budget (40 cases here: it would go on to 500)
    monkeypatch.setattr(engine, "SHRINK_STALL", None)
    longer, session = _cases(40)
    assert longer == none + 40 > stalled and session.shrink_spent


def test_a_time_boxed_campaign_shrinks_no_case_after_its_hard_end():
    """``shrink_until`` in the past: the departure stands as found, no shrinking case runs on the system."""
    import time

    adapter = create_adapter("simulated", {"faults": FAULT})
    coverage = Coverage()
    machine = bound_machine(adapter, "core", C.PLATFORM_DISTRIBUTED, 7, {"faults": FAULT}, coverage,
                            shrink_budget=None, shrink_until=time.time() - 1)
    with pytest.raises((AssertionError, Flaky)), stable_generation():
        _run(machine, settings=machine_settings(200))
    none, found = _cases(0)
    assert machine.session.shrink_spent and "CORE-04" in machine.session.smallest.rules
    assert coverage.examples == none and machine.session.smallest.steps == found.smallest.steps


def test_a_campaign_task_that_finds_a_departure_after_its_hard_end_reports_it_unshrunk():
    import time

    from conformance.campaign.spark import _run_machine, _spec

    spec = _spec(7, "core", C.PLATFORM_DISTRIBUTED, 0, 200, deadline=time.time() + 600, seconds=600,
                 finish_by=time.time() - 1).to_json()
    result = _run_machine(spec, "simulated", {"faults": FAULT}, [], False)
    assert result["error"] is None and len(result["failures"]) == 1
    assert "CORE-04" in result["failures"][0]["rules"]
    shrunk = _run_machine(dict(spec, finish_by=None), "simulated", {"faults": FAULT}, [], False)
    assert len(shrunk["failures"][0]["steps"]) < len(result["failures"][0]["steps"])


def test_a_run_keeps_the_departure_when_the_budget_is_spent():

    adapter = create_adapter("simulated", {"faults": FAULT, "platform": C.PLATFORM_DISTRIBUTED})
    record = _record(adapter, "core")
    outcome, _ = run_area(adapter, "core", C.PLATFORM_DISTRIBUTED, 200, 7, {}, record)
    assert outcome.startswith("NON-CONFORMANT") and "CORE-04" in outcome
    assert record.failures and len(record.failures[0].steps) <= 10


def test_a_departure_found_on_one_platform_is_replayed_not_searched_for_on_the_next():
    adapter = create_adapter("simulated", {"faults": BOTH})
    record = run_areas(adapter, ["core"], 200, 7, {"faults": BOTH})
    by_platform = {f.platform: f for f in record.failures}
    assert set(by_platform) == {C.PLATFORM_DISTRIBUTED, C.PLATFORM_ZOS}
    first, second = by_platform[C.PLATFORM_DISTRIBUTED], by_platform[C.PLATFORM_ZOS]
    assert second.rules == first.rules and len(second.steps) <= len(first.steps)
    # the second platform ran one case: the replay
    alone = run_areas(create_adapter("simulated", {"faults": BOTH, "platform": C.PLATFORM_DISTRIBUTED}),
                      ["core"], 200, 7, {})
    assert record.coverage.examples == alone.coverage.examples + 1


class DistributedOnly:
    """The simulated queue manager with a fault on Distributed platforms only."""

    name = "simulated"

    def __init__(self, fault: str) -> None:
        self.faulty = create_adapter("simulated", {"faults": fault})
        self.sound = create_adapter("simulated", {})
        self.inner = self.faulty

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def start_case(self, name: str, platform: str) -> None:
        self.inner = self.faulty if platform == C.PLATFORM_DISTRIBUTED else self.sound
        self.inner.start_case(name, platform)

    def execute(self, op):
        return self.inner.execute(op)

    def end_case(self) -> None:
        self.inner.end_case()


def test_a_departure_not_shown_again_on_the_next_platform_is_not_reported_there():
    adapter = DistributedOnly(FAULT)
    record = run_areas(adapter, ["core"], 60, 7, {})
    assert record.failures and {f.platform for f in record.failures} == {C.PLATFORM_DISTRIBUTED}
    # z/OS ran its own search: the replay and then its generated cases
    assert record.coverage.examples > 60


def test_each_departure_is_said_and_handed_on_as_soon_as_it_is_recorded():
    """The counterexample found on the first platform reaches the user (progress line, record written)
    before the next platform's search starts, not at the end of the run."""
    adapter = DistributedOnly(FAULT)
    events: list[tuple[str, object]] = []
    record = run_areas(adapter, ["core"], 60, 7, {}, progress=lambda line: events.append(("line", line)),
                       on_update=lambda r: events.append(("update", len(r.failures))))
    said = [i for i, (kind, what) in enumerate(events) if kind == "line" and "departure from" in what]
    assert len(said) == len(record.failures) >= 1
    first = events[said[0]][1]
    assert first.startswith(f"core on {C.PLATFORM_DISTRIBUTED}: departure from ")
    assert "CORE-04" in first and f"{len(record.failures[0].steps)} steps" in first
    zos_done = next(i for i, (kind, what) in enumerate(events)
                    if kind == "line" and what.startswith(f"core on {C.PLATFORM_ZOS}: "))
    assert said[0] < zos_done
    # the record holding it was handed on before it was said
    assert events[said[0] - 1] == ("update", 1)


def _unshrunk_steps() -> int:
    return len(_cases(0)[1].smallest.steps)


def test_a_run_given_shrink_seconds_shrinks_no_longer():
    """``--shrink-seconds 0``: no shrinking case runs; the departure stands as found, then is minimised."""
    adapter = create_adapter("simulated", {"faults": FAULT, "platform": C.PLATFORM_DISTRIBUTED})
    record = _record(adapter, "core")
    outcome, _ = run_area(adapter, "core", C.PLATFORM_DISTRIBUTED, 200, 7, {}, record, minimise_histories=False,
                          shrink_seconds=0)
    none, _session = _cases(0)
    assert "CORE-04" in outcome and record.coverage.examples == none
    assert len(record.failures[0].steps) == _unshrunk_steps()


def _realtime(monkeypatch):
    """The simulated queue manager, declaring that it runs on real time (as a broker does)."""
    import attrs

    adapter = create_adapter("simulated", {"faults": FAULT, "platform": C.PLATFORM_DISTRIBUTED})
    realtime = attrs.evolve(adapter.capabilities(), realtime=True)
    monkeypatch.setattr(adapter, "capabilities", lambda: realtime)
    return adapter


def test_a_system_on_real_time_shrinks_by_a_smaller_count_of_cases(monkeypatch):
    """On real time shrinking is bounded by :data:`SHRINK_CASES_REALTIME` cases, so that a seed still fixes
    which cases run (and the verdicts they give evidence for); its time limit is only a safety net."""
    from conformance.runner import engine

    adapter = _realtime(monkeypatch)
    none, _session = _cases(0)
    runs = []
    for _ in range(2):
        record = _record(adapter, "core")
        run_area(adapter, "core", C.PLATFORM_DISTRIBUTED, 200, 7, {}, record, minimise_histories=False,
                 keep_going=0)
        runs.append(record)
    first, second = runs
    assert first.coverage.examples == none + engine.SHRINK_CASES_REALTIME   # the cases, to the last one
    assert first.coverage.to_json() == second.coverage.to_json()
    assert first.failures[0].steps == second.failures[0].steps
    # Twenty cases may or may not find a shorter history; never a longer one.
    assert len(first.failures[0].steps) <= _unshrunk_steps()
    assert first.timed_shrinks == []


def test_shrinking_cut_by_its_time_limit_is_recorded_on_the_run(monkeypatch, tmp_path):
    """The safety net fires (a limit of 0 s): the departure stands as found, and the run says that its
    shrinking depended on the clock, in run.json and in the summary."""
    import io
    import json

    from conformance.runner import engine
    from conformance.cli import _summary

    adapter = _realtime(monkeypatch)
    monkeypatch.setattr(engine, "SHRINK_SECONDS_REALTIME", 0.0)
    record = _record(adapter, "core")
    run_area(adapter, "core", C.PLATFORM_DISTRIBUTED, 200, 7, {}, record, minimise_histories=False, keep_going=0)
    assert len(record.failures[0].steps) == _unshrunk_steps()
    assert record.timed_shrinks == [f"core on {C.PLATFORM_DISTRIBUTED}"]
    record.write(tmp_path)
    assert json.loads((tmp_path / "run.json").read_text())["timed_shrinks"] == record.timed_shrinks
    out = io.StringIO()
    _summary(record, out)
    assert "Shrinking stopped at its time limit (core on" in out.getvalue()
    # bounded by cases alone, the same run records nothing
    record = _record(adapter, "core")
    run_area(adapter, "core", C.PLATFORM_DISTRIBUTED, 200, 7, {}, record, minimise_histories=False, keep_going=0,
             shrink_seconds=None)
    assert record.timed_shrinks == []


def test_hypothesis_never_ends_a_shrink_before_the_sessions_own_time_limit(monkeypatch):
    """Hypothesis stops shrinking after five minutes of its own; a longer limit of the session's is what
    must fire (and be reported), so Hypothesis's is raised above it for the run, and put back after."""
    from hypothesis.internal.conjecture import engine as conjecture

    from conformance.runner import engine

    seen = []
    monkeypatch.setattr(engine, "run_state_machine_as_test",
                        lambda machine, settings: seen.append(conjecture.MAX_SHRINKING_SECONDS))
    before = conjecture.MAX_SHRINKING_SECONDS
    adapter = create_adapter("simulated", {})
    for seconds in (1000.0, None):
        machine = bound_machine(adapter, "core", C.PLATFORM_DISTRIBUTED, 7, {}, Coverage(), shrink_seconds=seconds)
        engine.run_machine(machine, machine_settings(1))
    assert seen == [1060.0, before] and conjecture.MAX_SHRINKING_SECONDS == before


def test_once_the_budget_is_spent_the_run_stops_rather_than_drawing_cases_that_run_nothing(monkeypatch):
    """After the budget, Hypothesis would go on shrinking on cases that run nothing, and drawing them
    costs about what running them does: :func:`run_machine` ends the run at the first such case and
    raises the smallest departure found."""
    from conformance.runner import session as S
    from conformance.runner.engine import run_machine
    from conformance.runner.session import NonConformance

    starts = []
    original = S.Session.start_case

    def counted(self):
        starts.append(self.shrink_spent)
        return original(self)

    none, _ = _cases(0)
    monkeypatch.setattr(S.Session, "start_case", counted)
    adapter = create_adapter("simulated", {"faults": FAULT})
    coverage = Coverage()
    machine = bound_machine(adapter, "core", C.PLATFORM_DISTRIBUTED, 7, {"faults": FAULT}, coverage,
                            shrink_budget=3)
    with pytest.raises(NonConformance) as raised:
        run_machine(machine, machine_settings(200))
    session = machine.session
    assert session.shrink_spent and coverage.examples == none + 3
    assert raised.value.failure is session.smallest and "CORE-04" in session.smallest.rules
    # one more case started, the one that found the budget spent; Hypothesis's own shrinking made many more
    assert len(starts) == none + 4
    assert not session.stop_when_spent   # the next run through this session is Hypothesis's own again
    starts.clear()
    _cases(3)
    assert len(starts) > none + 10
