"""How a conformance machine picks its rules (conformance.generator.steps): one choice a step, swarm
testing, preconditions honoured, arguments packed into one choice yet shrinking each on its own."""

from __future__ import annotations

import collections

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from conformance.generator.steps import StepStrategy, arguments, options


def test_options_of_strategies_that_pick_one_of_a_few_values():
    assert options(st.sampled_from(("a", "b", "c"))) == ("a", "b", "c")
    assert options(st.booleans()) == (False, True)
    assert options(st.integers(0, 3)) == (0, 1, 2, 3)
    assert options(st.integers(min_value=-2, max_value=1)) == (0, 1, -1, -2)   # nearest zero first
    assert options(st.just(5)) == (5,)
    # what is not one of a few values is drawn as Hypothesis draws it
    assert options(st.integers(0, 1000)) is None
    assert options(st.integers()) is None
    assert options(st.sampled_from((1, 2)).map(str)) is None
    assert options(st.sampled_from((1, 2)).filter(bool)) is None
    assert options(st.lists(st.booleans())) is None
    assert options(st.data()) is None


class Swarm(RuleBasedStateMachine):
    """Five rules, one never runnable, one with arguments packed and one drawn as Hypothesis draws it."""

    runs: list[collections.Counter] = []

    def __init__(self) -> None:
        super().__init__()
        self._rules_strategy = StepStrategy(self)
        self.ran = collections.Counter()
        type(self).runs.append(self.ran)

    @rule()
    def a(self):
        self.ran["a"] += 1

    @rule(x=st.integers(0, 9), flag=st.booleans())
    def b(self, x, flag):
        assert 0 <= x <= 9 and isinstance(flag, bool)
        self.ran["b"] += 1

    @rule(values=st.lists(st.integers(0, 3), max_size=3))
    def c(self, values):
        assert isinstance(values, list)
        self.ran["c"] += 1

    @rule()
    def d(self):
        self.ran["d"] += 1

    @precondition(lambda self: False)
    @rule()
    def never(self):
        raise AssertionError("a rule whose precondition is false ran")


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, stateful_step_count=20, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), phases=(Phase.generate,))


def test_swarm_leaves_rules_out_of_some_cases_and_runs_every_runnable_rule():
    Swarm.runs = []
    run_state_machine_as_test(Swarm, settings=_settings(150))
    runs = [ran for ran in Swarm.runs if sum(ran.values()) >= 15]
    assert len(runs) > 50
    overall = sum(runs, collections.Counter())
    assert set(overall) == {"a", "b", "c", "d"}
    # swarm testing: some long cases ran two of the four rules at most (picking among all four at
    # each of 15 steps, one case in about 5,000 would), and some ran all of them
    assert sum(len(ran) <= 2 for ran in runs) >= 3
    assert any(len(ran) == 4 for ran in runs)


def test_arguments_of_a_few_values_are_one_choice_the_rest_drawn_apart():
    rules = StepStrategy.rules_of(Swarm)
    by_name = {r.function.__name__: r for r in rules}
    packed, others = arguments(by_name["b"])
    assert packed is not None and others == ()
    packed, others = arguments(by_name["c"])
    assert packed is None and [name for name, _ in others] == ["values"]


class Shrinks(RuleBasedStateMachine):
    """Fails once ``put`` has been called with a size of at least 3: the smallest failure found
    should have every other argument at its plainest, though all of them were one choice."""

    def __init__(self) -> None:
        super().__init__()
        self._rules_strategy = StepStrategy(self)

    @rule(colour=st.sampled_from(("red", "green", "blue")), size=st.integers(0, 7), loud=st.booleans())
    def put(self, colour, size, loud):
        type(self).last = (colour, size, loud)
        assert size < 3

    @rule(n=st.integers(0, 5))
    def other(self, n):
        type(self).others = getattr(type(self), "others", 0) + 1


def test_packed_arguments_shrink_each_on_its_own():
    with pytest.raises(AssertionError):
        run_state_machine_as_test(Shrinks, settings=settings(
            max_examples=300, stateful_step_count=10, deadline=None, database=None,
            suppress_health_check=list(HealthCheck)))
    # the last call Hypothesis ran is the shrunk counterexample's failing step
    assert Shrinks.last == ("red", 3, False)
