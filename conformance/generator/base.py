"""The base of every conformance machine: a Hypothesis state machine bound to a session.

A machine generates operations and sends each through ``self.execute``; the
session runs it on the adapter, checks the observation against the reference
model and raises :class:`~conformance.runner.session.NonConformance` on a mismatch.
Machines never see which adapter they drive, only its capabilities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from hypothesis.stateful import RuleBasedStateMachine

from conformance.generator.steps import StepStrategy
from reference_model import language as L

if TYPE_CHECKING:   # the runner binds a session; the generator never imports the runner
    from conformance.runner.session import Session


class ConformanceMachine(RuleBasedStateMachine):
    #: The rule area the machine exercises.
    area: ClassVar[str]
    #: Injected by :func:`bind`.
    session: ClassVar[Session]

    def __init__(self) -> None:
        super().__init__()
        self._rules_strategy = StepStrategy(self)
        self.session.start_case()

    @classmethod
    def on(cls, session: Session) -> type["ConformanceMachine"]:
        """The machine to run against ``session``: this one, or a variant with rules only some
        platforms or systems can run (a rule that can never run is drawn and refused at every step)."""
        return cls

    def execute(self, op: L.Op) -> L.Observation:
        return self.session.execute(op)

    def can(self, op_type: type) -> bool:
        return self.session.capabilities.can(op_type)

    def can_run(self, op: L.Op) -> bool:
        """Whether the adapter runs ``op`` itself (its type, and these field values)."""
        return self.can(type(op)) and self.session.expressible(op)

    def teardown(self) -> None:
        self.session.end_case()


def bind(machine: type[ConformanceMachine], session: Session) -> type[ConformanceMachine]:
    """A subclass of ``machine`` that runs against ``session``."""
    return type(machine.__name__, (machine,), {"session": session, "__module__": machine.__module__})
