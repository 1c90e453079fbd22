"""The reference model's public surface: a pure, deterministic step function.

``step(state, op)`` never mutates ``state``; it returns every allowed outcome as a
:class:`Branch`: the observation MQ may give, the state that follows, and the rule
IDs that decide it.  Where MQ's documentation leaves latitude the list has
several branches; the checker keeps each branch consistent with what the system
under test actually answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Callable, TypeVar

import attrs

from reference_model import language as L
from reference_model import mqconst as C
from reference_model.state import ModelState


class HistoryError(ValueError):
    """An operation that no well-formed history contains (e.g. a handle name reused)."""


def require_member(state: ModelState, qmgr: str) -> None:
    """``qmgr`` (blank: the queue manager under test) must be a member of its queue-sharing group."""
    if qmgr and qmgr not in state.group:
        raise HistoryError(f"{qmgr!r} is not a queue manager of the queue-sharing group")


class Lazy(Mapping):
    """A read-only table worked out by ``compute`` the first time it is read.

    For a branch's ``field_rules`` and ``excluded`` where they cost a pass over a
    queue: most are read only to diagnose a failure.
    """

    def __init__(self, compute: Callable[[], dict]) -> None:
        self._compute = compute
        self._table: dict | None = None

    def _all(self) -> dict:
        if self._table is None:
            self._table = self._compute()
        return self._table

    def __getitem__(self, key):
        return self._all()[key]

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


@attrs.define(kw_only=True)
class Branch:
    """One outcome MQ allows for an operation: what the system returns, the state after it, and why.
    (Not frozen, so that making one costs less: nothing changes a branch once the model has made it.)"""

    observation: L.Observation
    state: ModelState = attrs.field(eq=False)
    #: Rules exercised by this outcome.
    rules: tuple[str, ...] = ()
    #: Which rules decide which observed field ("rc", "message", "message.priority",
    #: "attrs.CURDEPTH", ...); a field not listed falls back to ``rules``.
    field_rules: dict = attrs.field(factory=dict, eq=False)
    #: Messages (by body) that the outcome deliberately did not return, and the rules why.
    excluded: dict = attrs.field(factory=dict, eq=False)


Handler = Callable[[ModelState, L.Op], "list[Branch]"]
_HANDLERS: dict[type, Handler] = {}


_H = TypeVar("_H", bound=Callable[..., "list[Branch]"])


def handles(*op_types: type) -> Callable[[_H], _H]:
    """Register a rule area's handler for the given operation types (each handler takes the state and an
    operation of one of those types)."""

    def deco(fn: _H) -> _H:
        for t in op_types:
            _HANDLERS[t] = fn
        return fn

    return deco


def initial_state(platform: str = C.PLATFORM_DISTRIBUTED, expiry_tolerance: int = 0) -> ModelState:
    if platform not in C.PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}")
    return ModelState(platform=platform, expiry_tolerance=expiry_tolerance)


def step(state: ModelState, op: L.Op) -> list[Branch]:
    """All outcomes MQ allows for ``op`` in ``state`` (at least one)."""
    handler = _HANDLERS.get(type(op))
    if handler is None:
        raise HistoryError(f"the model has no semantics for {type(op).__name__}")
    if (state.broken or state.armed) and not isinstance(op, (L.Connect, L.CutConnection)) \
            and getattr(op, "conn", None) in state.broken | state.armed:
        return _dedupe(_core.lost_call(state, op, step))
    branches = handler(state, op)
    assert branches, f"no outcome for {op!r}"
    return _dedupe(branches)


def _dedupe(branches: list[Branch]) -> list[Branch]:
    if len(branches) < 2:
        return branches
    out: list[Branch] = []
    alike: dict[tuple, list[Branch]] = {}   # by state digest: only those can be equal
    for b in branches:
        same = alike.setdefault(b.state.digest(), [])
        if not any(b.observation == o.observation and (b.state is o.state or b.state == o.state) for o in same):
            same.append(b)
            out.append(b)
    return out


# Rule areas register their handlers on import.
from reference_model import core as _core  # noqa: E402,F401
from reference_model import syncpoint as _syncpoint  # noqa: E402,F401
from reference_model import expiry as _expiry  # noqa: E402,F401
from reference_model import trigger as _trigger  # noqa: E402,F401
from reference_model import cluster as _cluster  # noqa: E402,F401
from reference_model import dlq as _dlq  # noqa: E402,F401
