"""How a conformance machine picks its next rule: one choice a step, with swarm testing.

Hypothesis's own rule strategy asks a feature flag of every rule it tries (a span
and a choice each) and draws from ``sampled_from(rules).filter(...)``, retrying
until it meets a rule that is both enabled and runnable: with twenty rules, a
few of them disabled or not runnable in the state, about fifteen choices a step
before the rule draws its arguments, each one a span Hypothesis records,
mutates and shrinks over.  :class:`StepStrategy` keeps what that buys and draws
far less:

- *swarm testing* as Hypothesis does it (each case runs with some rules left
  out, each left out with a probability drawn for the case, so that a case can
  dwell on a few kinds of operation): decided once a case, for every rule at
  once, as one bytes choice; shrinking lowers it towards every rule enabled;
- the rule: one integer choice over all the rules (the first in Hypothesis's
  order the plainest), so that a choice names the same rule wherever
  Hypothesis's mutations move it; where that rule is left out or its
  preconditions do not hold, a second choice among those enabled whose
  preconditions hold (where the swarm left none of the runnable rules enabled,
  among all the runnable ones);
- its arguments: those that pick one of a few values (``sampled_from``,
  ``booleans``, ``integers`` over at most 256 values) all as one bytes choice, a
  byte each (:mod:`conformance.generator.draws`: each still shrinks on its own,
  towards its first value, or the integer nearest zero), the others as
  Hypothesis draws them.

The machine runs the rule as Hypothesis does (its name, arguments and printed
step unchanged); only the choices that pick it are fewer.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidDefinition
from hypothesis.stateful import RuleStrategy

from conformance.generator.draws import Record

try:   # Hypothesis's own strategy classes: where they move, every argument is drawn as Hypothesis draws it
    from hypothesis.strategies._internal.misc import BooleansStrategy
    from hypothesis.strategies._internal.numbers import IntegersStrategy
    from hypothesis.strategies._internal.strategies import SampledFromStrategy
except ImportError:  # pragma: no cover - depends on the Hypothesis release
    BooleansStrategy = IntegersStrategy = SampledFromStrategy = ()


def options(strategy: st.SearchStrategy) -> tuple | None:
    """The values ``strategy`` picks one of, plainest first, where it is such a strategy (a
    ``sampled_from`` without a map or filter, ``booleans``, ``integers`` over at most 256 values);
    otherwise None."""
    inner = getattr(strategy, "wrapped_strategy", strategy)
    if isinstance(inner, SampledFromStrategy) and not getattr(inner, "_transformations", True) \
            and 0 < len(inner.elements) <= 256:
        return tuple(inner.elements)
    if isinstance(inner, BooleansStrategy):
        return (False, True)
    if isinstance(inner, IntegersStrategy) and inner.start is not None and inner.end is not None \
            and inner.end - inner.start < 256:
        return tuple(sorted(range(inner.start, inner.end + 1), key=lambda v: (abs(v), v < 0)))
    return None


@functools.lru_cache(maxsize=None)
def arguments(rule) -> tuple[st.SearchStrategy | None, tuple]:
    """How :class:`StepStrategy` draws ``rule``'s arguments: one strategy for all those that pick one
    of a few values (a dict of them; None if there are none), and the others' names and strategies."""
    picked, others = {}, []
    for name, strategy in rule.arguments_strategies.items():
        values = options(strategy)
        if values is None:
            others.append((name, strategy))
        else:
            picked[name] = values
    return (Record(**picked).strategy if picked else None), tuple(others)


@functools.lru_cache(maxsize=None)
def _plan(machine_type) -> tuple[list, list, st.SearchStrategy]:
    """What :class:`StepStrategy` needs of a machine class, worked out once."""
    rules = StepStrategy.rules_of(machine_type)
    entries = [(i, rule, bool(rule.bundles or rule.preconditions)) for i, rule in enumerate(rules)]
    return rules, entries, st.binary(min_size=len(rules) + 1, max_size=len(rules) + 1)


class StepStrategy(st.SearchStrategy):
    """A machine's next step: ``(rule, arguments)``, as Hypothesis's rule strategy draws it."""

    def __init__(self, machine) -> None:
        super().__init__()
        self.machine = machine
        #: The rules; each rule's place, the rule, and whether it has preconditions or bundles to ask
        #: first; and the swarm's strategy (the same for every case of a machine class).
        self.rules, self.entries, self.swarm = _plan(type(machine))
        #: For each rule, whether this case's swarm left it out (drawn at the case's first step).
        self.disabled: list[bool] | None = None

    @staticmethod
    def rules_of(machine_type) -> list:
        """A machine class's rules in Hypothesis's order (fewer arguments first, then by name)."""
        setup = getattr(RuleStrategy, "_setup_for", None)
        if setup is not None:
            return setup(machine_type)[0]
        return sorted(machine_type.setup_state().rules, key=lambda rule: (
            sorted(rule.targets), len(rule.arguments), rule.function.__name__))  # pragma: no cover

    def __repr__(self) -> str:
        return f"StepStrategy({type(self.machine).__name__})"

    def _runnable(self, rule) -> bool:
        for bundle in rule.bundles:
            if not self.machine.bundle(bundle.name):
                return False
        return all(precondition(self.machine) for precondition in rule.preconditions)

    def do_draw(self, data) -> tuple[Any, dict]:
        if self.disabled is None:
            raw = data.draw(self.swarm)
            # A rule is left out when its byte and the case's share of rules left out (byte 0) sum
            # past 255: each with probability about byte 0 / 256; all bytes at 0 leave none out.
            self.disabled = [raw[0] + b > 255 for b in raw[1:]]
        disabled = self.disabled
        # The rule a choice over all of them names, where it is enabled and runnable: so that a
        # choice names the same rule wherever Hypothesis moves or copies it (its mutations build
        # new cases from parts of earlier ones).  Otherwise a second choice among those that are.
        first = data.draw_integer(0, len(self.rules) - 1)
        _, rule, ask = self.entries[first]
        if disabled[first] or (ask and not self._runnable(rule)):
            runnable = [(i, r) for i, r, a in self.entries if not a or self._runnable(r)]
            if not runnable:
                names = ", ".join(r.function.__name__ for r in self.rules)
                raise InvalidDefinition(f"No progress can be made from state {self.machine!r}: "
                                        f"no rule had a true precondition. rules: {names}")
            enabled = [r for i, r in runnable if not disabled[i]] or [r for _, r in runnable]
            rule = enabled[data.draw_integer(0, len(enabled) - 1)] if len(enabled) > 1 else enabled[0]
        picked, others = arguments(rule)
        drawn = data.draw(picked) if picked is not None else {}
        for name, strategy in others:
            drawn[name] = data.draw(strategy)
        return rule, drawn
