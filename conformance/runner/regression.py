"""Replaying a saved history, and regression tests written from one (``mqconform replay --as-pytest``)."""

from __future__ import annotations

import re

import attrs

from adapters.base import Adapter
from conformance.records.history import Failure, with_alternatives
from conformance.records.render import render_failure
from conformance.runner.session import HarnessError, Session, one_case
from reference_model import language as L


def replay_on(adapter: Adapter, failure: Failure, options: dict) -> Failure | None:
    """Run ``failure``'s history on ``adapter`` as one test case: the departure it still shows, or None."""
    platforms = adapter.capabilities().platforms
    if failure.platform not in platforms:
        raise HarnessError(f"adapter {adapter.name!r} cannot show platform {failure.platform!r} "
                           f"of this replay (it shows {', '.join(platforms)})")
    # the rules the run that found it had set aside stay set aside: the history passes through departures
    # from them as that run did, and reaches its own step
    # (its own rules among them only as mentioned: a departure from them is reported, not stepped past)
    session = Session(adapter, failure.area, options, failure.seed, platform=failure.platform,
                      set_aside=frozenset(failure.set_aside), named=failure.stepped_past(), replaying=True)
    # (the case is ended whatever it shows: several files replayed in one process each begin on a system the one
    # before left as a case leaves it, its connections closed and its queues gone)
    return one_case(session, [step.op for step in failure.steps])


def call_number(failure: Failure) -> int:
    """Which call of the history departs, clock advances apart: on a system that runs on real time the kit
    inserts those as time passes, so a replay's step numbers shift by them alone."""
    return sum(not isinstance(s.op, L.AdvanceClock) for s in failure.steps[:failure.mismatch.index + 1])


def same_departure(found: Failure, recorded: Failure) -> bool:
    """``found`` is ``recorded``'s departure again: at the same call, the same rules broken, the same
    fields differing (another departure on the way, or at the same call for other rules, is not).  The
    same rules: those the checker named, or those blamed where both were diagnosed (the rules a checker
    mentions beside those broken may change as the kit's model does, and say nothing of the system; a
    blame that a replay's timing left unconfirmed names the checker's first rule alone).  Or fewer of those
    blamed: a kit whose model now blames fewer of the rules it blamed then for the same call and fields (a rule
    found not to decide the field there) diagnoses the same behaviour of the system more exactly."""
    if call_number(found) != call_number(recorded) or set(found.mismatch.fields) != set(recorded.mismatch.fields):
        return False
    if set(found.rules) == set(recorded.rules):
        return True
    return bool(found.mismatch.blamed and recorded.mismatch.blamed) and set(found.blamed) <= set(recorded.blamed)


def check_history(data: dict, adapter: str, options: dict | None = None) -> None:
    """What a generated regression test calls: fails, with the kit's failure text, if the departure is back."""
    __tracebackhide__ = True   # pytest shows the kit's text, not this function
    from adapters.registry import create_adapter

    failure = Failure.from_json(data, origin="regression test")
    system = create_adapter(adapter, dict(options or {}))
    try:
        found = replay_on(system, failure, dict(options or {}))
        if found is not None:
            found = with_alternatives(found, system.capabilities().expiry_tolerance,
                                      known_by=failure.known_before())
    finally:
        system.close()
    if found is not None:
        raise AssertionError(render_failure(found))


def check_steps(steps, found: dict, adapter: str, options: dict | None = None) -> None:
    """What a generated regression test calls: ``steps`` (operation, observation) pairs written as code and
    ``found`` (the rest of the replay file) are the replay file again; fails as :func:`check_history` does."""
    __tracebackhide__ = True
    data = dict(found, steps=[{"op": L.to_json(op), "observed": L.to_json(observed)} for op, observed in steps])
    mismatch = dict(data.get("mismatch") or {})
    index = mismatch.get("index")
    if isinstance(index, int) and 0 <= index < len(steps):
        # the departing step's operation and answer are the history's own
        mismatch.setdefault("op", data["steps"][index]["op"])
        mismatch.setdefault("observed", data["steps"][index]["observed"])
    data["mismatch"] = mismatch
    check_history(data, adapter, options)


def as_code(value) -> str:
    """``value`` (an operation, an observation or anything they hold) as Python source that builds it again:
    the kit's language classes as ``L.Name(...)`` with only the fields that differ from their defaults."""
    if attrs.has(type(value)):
        cls = type(value)
        if getattr(L, cls.__name__, None) is not cls:
            raise ValueError(f"{cls.__module__}.{cls.__name__} is not a class of the kit's language")
        args = []
        for field in attrs.fields(cls):
            if not field.init:
                continue
            current = getattr(value, field.name)
            default = field.default
            if isinstance(default, attrs.Factory):   # type: ignore[arg-type]
                default = attrs.NOTHING if default.takes_self else default.factory()
            if default is not attrs.NOTHING and current == default and type(current) is type(default):
                continue
            args.append(f"{field.alias or field.name}={as_code(current)}")
        return f"L.{cls.__name__}({', '.join(args)})"
    if isinstance(value, tuple):
        inner = ", ".join(as_code(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return f"[{', '.join(as_code(v) for v in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{as_code(k)}: {as_code(v)}" for k, v in value.items()) + "}"
    if isinstance(value, frozenset):
        return f"frozenset({as_code(sorted(value, key=repr))})" if value else "frozenset()"
    return repr(value)


def pytest_source(failure: Failure, data: dict, adapter: str, options: dict, origin: str) -> str:
    """A standalone pytest module that replays ``failure``'s history on ``adapter`` (no Hypothesis needed):
    the history written as the kit's operations, one step a line with the kit's reading of it beside."""
    from conformance.records.render import observation_text, op_text

    name = re.sub(r"\W+", "_", f"{failure.area}_{failure.platform}_{'_'.join(failure.blamed[:3])}").lower()
    rules = ", ".join(failure.blamed)
    mark = failure.mismatch.index
    lines = []
    for i, step in enumerate(failure.steps):
        lines.append(f"    # {i + 1}{'  <- the departure' if i == mark else ''}: {_comment(op_text(step.op))} -> "
                     f"{_comment(observation_text(step.observed))}")
        lines.append(f"    ({as_code(step.op)},\n     {as_code(step.observed)}),")
    found = {k: v for k, v in data.items() if k != "steps"}
    # the departing step's operation and answer are read from STEPS
    found["mismatch"] = {k: v for k, v in found["mismatch"].items() if k not in ("op", "observed")}
    return f'''"""Regression test for a departure mqconform found: area {failure.area}, platform {failure.platform},
rules {rules}.

Written by ``mqconform replay {origin} --as-pytest``.  It replays the minimal history
({len(failure.steps)} operations) on adapter {adapter!r} and fails, with the kit's
description of the departure, for as long as the system still departs from MQ.
Run it with plain pytest; it needs the mqconform kit installed, not Hypothesis.
"""

from conformance.runner.regression import check_steps
from reference_model import language as L

ADAPTER = {adapter!r}
OPTIONS = {options!r}

#: The history: each operation in the kit's language with what the system answered when the departure was
#: found (the comment above it is the kit's reading of the two).
STEPS = [
{chr(10).join(lines)}
]

#: The rest of the replay file: where the departure was, what MQ allows there, the rules it breaks.
FOUND = {_literal(found)}


def test_{name}():
    check_steps(STEPS, FOUND, ADAPTER, OPTIONS)
'''


def _comment(text: str) -> str:
    """One line of a comment, whatever the text holds."""
    return text.replace("\r", " ").replace("\n", " ")


def _literal(data) -> str:
    """JSON data as a Python literal, one key a line."""
    import pprint

    return pprint.pformat(data, indent=1, width=110, sort_dicts=True)
