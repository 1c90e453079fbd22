"""Replaying a saved history, and regression tests written from one (``mqconform replay --as-pytest``)."""

from __future__ import annotations

import json
import re

from adapters.base import Adapter
from conformance.history import Failure, with_alternatives
from conformance.render import render_failure
from conformance.session import HarnessError, NonConformance, Session
from reference_model import language as L


def replay_on(adapter: Adapter, failure: Failure, options: dict) -> Failure | None:
    """Run ``failure``'s history on ``adapter`` as one test case: the departure it still shows, or None."""
    platforms = adapter.capabilities().platforms
    if failure.platform not in platforms:
        raise HarnessError(f"adapter {adapter.name!r} cannot show platform {failure.platform!r} "
                           f"of this replay (it shows {', '.join(platforms)})")
    # the rules the run that found it had set aside stay set aside: the history passes through departures
    # from them as that run did, and reaches its own step
    session = Session(adapter, failure.area, options, failure.seed, platform=failure.platform,
                      set_aside=frozenset(failure.set_aside))
    session.start_case()
    try:
        for step in failure.steps:
            session.execute(step.op)
    except NonConformance as exc:
        return exc.failure
    session.end_case()
    return None


def call_number(failure: Failure) -> int:
    """Which call of the history departs, clock advances apart: on a system that runs on real time the kit
    inserts those as time passes, so a replay's step numbers shift by them alone."""
    return sum(not isinstance(s.op, L.AdvanceClock) for s in failure.steps[:failure.mismatch.index + 1])


def same_departure(found: Failure, recorded: Failure) -> bool:
    """``found`` is ``recorded``'s departure again: at the same call, the same rules named, the same
    fields differing (another departure on the way, or at the same call for other rules, is not)."""
    return (call_number(found) == call_number(recorded) and set(found.rules) == set(recorded.rules)
            and set(found.mismatch.fields) == set(recorded.mismatch.fields))


def check_history(data: dict, adapter: str, options: dict | None = None) -> None:
    """What a generated regression test calls: fails, with the kit's failure text, if the departure is back."""
    __tracebackhide__ = True   # pytest shows the kit's text, not this function
    from adapters.registry import create_adapter

    failure = Failure.from_json(data, origin="regression test")
    system = create_adapter(adapter, dict(options or {}))
    try:
        found = replay_on(system, failure, dict(options or {}))
        if found is not None:
            found = with_alternatives(found, system.capabilities().expiry_tolerance)
    finally:
        system.close()
    if found is not None:
        raise AssertionError(render_failure(found))


def pytest_source(failure: Failure, data: dict, adapter: str, options: dict, origin: str) -> str:
    """A standalone pytest module that replays ``failure``'s history on ``adapter`` (no Hypothesis needed)."""
    name = re.sub(r"\W+", "_", f"{failure.area}_{failure.platform}_{'_'.join(failure.blamed[:3])}").lower()
    rules = ", ".join(failure.blamed)
    return f'''"""Regression test for a departure mqconform found: area {failure.area}, platform {failure.platform},
rules {rules}.

Written by ``mqconform replay {origin} --as-pytest``.  It replays the minimal history
({len(failure.steps)} operations) on adapter {adapter!r} and fails, with the kit's
description of the departure, for as long as the system still departs from MQ.
Run it with plain pytest; it needs the mqconform kit installed, not Hypothesis.
"""

import json

from conformance.regression import check_history

ADAPTER = {adapter!r}
OPTIONS = {options!r}
HISTORY = json.loads({json.dumps(data, sort_keys=True)!r})


def test_{name}():
    check_history(HISTORY, ADAPTER, OPTIONS)
'''

