"""A machine runs with the cyclic collector tuned, and the process gets it back as it was."""

import gc

import pytest
from hypothesis import Phase

from adapters.registry import create_adapter
from conformance.runner import engine
from conformance.runner.collector import COLLECTOR_THRESHOLDS, collector_tuned
from conformance.runner.engine import run_areas

#: (each test looks at the process's collector: run as the process has it, not tuned by the suite, conftest.py)
pytestmark = pytest.mark.own_collector


def test_the_collector_is_tuned_while_a_machine_runs_and_given_back(monkeypatch):
    before = gc.get_threshold()
    seen = []
    real = engine.run_state_machine_as_test

    def watching(machine, settings):
        seen.append((gc.get_threshold(), gc.get_freeze_count() > 0))
        return real(machine, settings=settings)

    monkeypatch.setattr(engine, "run_state_machine_as_test", watching)
    record = run_areas(create_adapter("simulated", {}), ["core"], examples=3, seed=1)
    assert record.coverage.examples >= 3 and not record.failures
    assert seen and all(s == (COLLECTOR_THRESHOLDS, True) for s in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_the_collector_is_given_back_when_the_run_raises():
    before = gc.get_threshold()
    try:
        with collector_tuned():
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_the_collector_can_be_left_alone(monkeypatch):
    monkeypatch.setenv("MQCONFORM_GC", "default")
    before = gc.get_threshold()
    with collector_tuned():
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_what_the_process_held_before_is_frozen_meanwhile():
    """So a measurement in a process that measured other things first (the bench's broker rounds run
    under it) does not walk what those left alive."""
    held = [[i] for i in range(2000)]   # containers alive before
    before = gc.get_freeze_count()
    with collector_tuned():
        assert gc.get_freeze_count() >= before + len(held)
    assert gc.get_freeze_count() == before


def test_a_campaign_tasks_machine_runs_with_the_collector_tuned_too(monkeypatch):
    """Both its passes (without shrinking, then shrinking a departure met) run through the engine's search."""
    from conformance.campaign import spark as CP

    before = gc.get_threshold()
    seen = []
    real = engine.run_state_machine_as_test

    def watching(machine, settings):
        seen.append((gc.get_threshold(), gc.get_freeze_count() > 0, Phase.shrink in settings.phases))
        return real(machine, settings=settings)

    monkeypatch.setattr(engine, "run_state_machine_as_test", watching)
    spec = CP.plan_tasks(3, [("core", "distributed")], 30, 30)[0]
    result = CP._run_machine(spec.to_json(), "simulated", {"faults": "priority-ignored"}, [], False)
    assert result["examples"] >= 1 and not result["error"] and result["failures"], result
    # the search without shrinking, then the same seed shrinking the departure it met
    assert [shrinking for _, _, shrinking in seen] == [False, True]
    assert all(s[:2] == (COLLECTOR_THRESHOLDS, True) for s in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_it_nests_and_the_outermost_gives_the_collector_back():
    """A machine's run within an area's work leaves the thresholds tuned for what follows it (minimising and
    blaming), and the objects frozen stay frozen until the outermost body ends."""
    before = gc.get_threshold()
    with collector_tuned():
        with collector_tuned():
            assert gc.get_threshold() == COLLECTOR_THRESHOLDS
        assert gc.get_threshold() == COLLECTOR_THRESHOLDS and gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_departure_is_minimised_and_blamed_with_the_collector_tuned(monkeypatch):
    """Minimising replays candidate histories and steps the model as much as the search does: outside a tuned
    body Python's thresholds walk the area's whole heap each time it grows by a quarter."""
    from conformance.runner import minimise as M

    before = gc.get_threshold()
    seen = []
    real = M.K.ModelTracker.advance

    def watching(self, op, observed):
        seen.append(gc.get_threshold())
        return real(self, op, observed)

    monkeypatch.setattr(M.K.ModelTracker, "advance", watching)
    record = run_areas(create_adapter("simulated", {"faults": "priority-ignored"}), ["core"], examples=30, seed=7)
    assert record.failures and "CORE-04" in {r for f in record.failures for r in f.rules}
    assert seen and set(seen) == {COLLECTOR_THRESHOLDS}
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    # and minimising called alone (a replay's, a plugin's, a campaign task's) is tuned too
    seen.clear()
    M.minimise(record.failures[0], create_adapter("simulated", {"faults": "priority-ignored"}))
    assert seen and set(seen) == {COLLECTOR_THRESHOLDS}
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_concurrent_search_and_its_shrinking_check_with_the_collector_tuned(monkeypatch):
    """Each concurrent case is checked for a linearization on the model, as many states as a sequential run steps."""
    from conformance.runner import concurrent as R

    before = gc.get_threshold()
    seen = []
    real = R.check

    def watching(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(R, "check", watching)
    adapter = create_adapter("simulated", {"faults": "get-not-atomic"})
    races, ran = R.search_races(adapter, 1, 40)   # (a race in the first case or two: measured 5 times of 5)
    assert races and seen and set(seen) == {COLLECTOR_THRESHOLDS}
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    seen.clear()
    R.shrink(adapter, races[0], "distributed", max_cases=3)
    assert seen and set(seen) == {COLLECTOR_THRESHOLDS}
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_these_tests_see_the_collector_as_the_process_has_it():
    """(the mark ``own_collector`` keeps the suite's tuning out of them, conftest.py)"""
    assert gc.get_freeze_count() == 0 and gc.get_threshold() != COLLECTOR_THRESHOLDS


def test_what_a_body_left_in_cycles_before_a_body_within_it_is_collected_at_its_end():
    """A body within another does not freeze: what the outer one made and let go of in cycles before it (a
    minimiser's garbage before the next round's run) is collected at the outermost body's end, not left frozen
    and then among the process's objects uncollected, growing from one area to the next."""
    import weakref

    class Node:
        pass

    with collector_tuned():
        node = Node()
        node.me = node   # a cycle: reference counting alone never frees it
        gone = weakref.ref(node)
        del node
        with collector_tuned():
            pass
    assert gone() is None
