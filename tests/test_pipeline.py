"""One pipeline from cases to a departure (``engine.search``): ``mqconform run`` and a campaign's task both search
through it, and it reads each way Hypothesis ends in one place."""

from __future__ import annotations

import pytest
from hypothesis.errors import Flaky

from adapters.registry import create_adapter
from conformance.records.results import Coverage, RunRecord
from conformance.runner import engine
from conformance.runner.session import HarnessError


def _watched(monkeypatch) -> list[tuple[str, bool]]:
    calls: list[tuple[str, bool]] = []
    real = engine.search

    def watching(machine, settings, shrink=True, keep_memo=False):
        ended = real(machine, settings, shrink=shrink, keep_memo=keep_memo)
        calls.append((machine.session.area, shrink, ended.departure is not None))
        return ended

    monkeypatch.setattr(engine, "search", watching)
    return calls


def test_a_run_and_a_campaign_task_search_through_the_one_pipeline(monkeypatch):
    from conformance.campaign import spark as CP

    calls = _watched(monkeypatch)
    faults = "priority-ignored"
    adapter = create_adapter("simulated", {"faults": faults, "platform": "distributed"})
    record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                       areas=["core"], seed=3, examples=30)
    engine.run_area(adapter, "core", "distributed", 30, 3, {"faults": faults}, record, 0)
    assert record.failures and calls and calls[0] == ("core", True, True), calls
    del calls[:]
    spec = CP.plan_tasks(3, [("core", "distributed")], 30, 30)[0]
    result = CP._run_machine(spec.to_json(), "simulated", {"faults": faults}, [], False)
    assert result["failures"] and not result["error"]
    # the campaign's task: its cases searched without shrinking, then the same seed shrinking what they met
    assert calls == [("core", False, True), ("core", True, True)], calls
    # a departure the campaign knows already is not searched for a second time, to shrink it
    del calls[:]
    known = CP._run_machine(spec.to_json(), "simulated", {"faults": faults},
                            [CP.fingerprint(CP.Failure.from_json(f)) for f in result["failures"]], False)
    assert known["duplicates"] and not known["failures"] and calls == [("core", False, True)], calls


class _Session:
    area = "core"

    def __init__(self, smallest=None, broken=None):
        self.smallest, self.broken = smallest, broken


class _Machine:
    def __init__(self, session):
        self.session = session


def _ending_with(monkeypatch, exc):
    def run(machine, settings, keep_memo=False):
        raise exc

    monkeypatch.setattr(engine, "run_machine", run)


def test_a_system_that_answers_differently_a_second_time_is_read_once(monkeypatch):
    """Flaky with no departure shown is no verdict (Unsteady, a harness error); with one shown, that departure
    stands, marked unsteady; a system that broke meanwhile is its own error, whichever way Hypothesis ended."""
    settings = engine.machine_settings(1)
    _ending_with(monkeypatch, Flaky("answered otherwise"))
    with pytest.raises(engine.Unsteady, match="core: the system answered the same operations differently"):
        engine.search(_Machine(_Session()), settings)
    assert issubclass(engine.Unsteady, HarnessError)

    class _Failure:
        steps = (1, 2)

    ended = engine.search(_Machine(_Session(smallest=_Failure)), settings)
    assert ended.departure is _Failure and ended.unsteady
    broken = HarnessError("the broker went away")
    for exc in (Flaky("x"), RuntimeError("inside Hypothesis")):
        _ending_with(monkeypatch, exc)
        with pytest.raises(HarnessError, match="the broker went away"):
            engine.search(_Machine(_Session(smallest=_Failure, broken=broken)), settings)
    _ending_with(monkeypatch, RuntimeError("a defect of the kit"))
    with pytest.raises(RuntimeError, match="a defect of the kit"):
        engine.search(_Machine(_Session()), settings)


def test_a_search_without_shrinking_leaves_the_shrink_phase_out(monkeypatch):
    seen = []
    monkeypatch.setattr(engine, "run_machine", lambda machine, settings, keep_memo=False: seen.append(
        (tuple(settings.phases), keep_memo)))
    machine = _Machine(_Session())
    assert engine.search(machine, engine.machine_settings(5), shrink=False, keep_memo=True).departure is None
    engine.search(machine, engine.machine_settings(5))
    from hypothesis import Phase

    assert seen[0] == ((Phase.explicit, Phase.generate), True)
    assert Phase.shrink in seen[1][0] and seen[1][1] is False
    assert Coverage().examples == 0
