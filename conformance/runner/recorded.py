"""Recorded counterexamples replayed after a run's search (``mqconform run --recorded``).

A run on a real system samples cases: a departure one run met, another run of the same system may not meet,
when the search takes another path (a kit that blames or shrinks otherwise, another seed, departures found in
another order), and a verdict published from it would move from fail to pass with nothing changed in the
system.  Each area's search runs first, as without them, so that what it finds is shrunk and minimised as
ever; then each recorded counterexample of the area whose departure the run has not found (a rule it breaks
not found broken; or its one rule found only as one of several, which it shows broken alone) is replayed, and
one that shows its departure again is evidence of this run, on this system, recorded as its departure (minimised
as any other).  (Hypothesis replays the failing examples of its database for the same reason.)  Where the search
found the departure only in a history that was not shown again (on a system on real time, its confirming replay
passed), a recorded counterexample of the same rules that was shown again when recorded is replayed too: shown
again now, it is the run's failure in place of the search's (``CONFIRMED``).

Each is replayed once, as ``mqconform replay`` does (the rules its run had set aside stay set aside; the
departure must be the recorded one: the same call and fields, the same rules or fewer of those it was blamed
on, :func:`conformance.runner.regression.same_departure`).  One whose history holds an operation the
system cannot express as recorded (a restart, on a run without restarts) is not replayed; one for another
adapter, area or platform neither.  What each showed is kept in the run's record (``recorded`` in run.json).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from adapters.base import Adapter
from conformance.records.history import Failure, ReplayFileError, load_failure, with_alternatives
from conformance.records.results import (REPLAY_CONFIRMED, REPLAY_CONFORMANT, REPLAY_EXPLAINED, REPLAY_FOUND,
                                         REPLAY_NOT_EXPRESSIBLE, REPLAY_OTHER_SYSTEM, REPLAY_OTHERWISE, REPLAY_SHOWN)
from conformance.runner.regression import same_departure
from conformance.runner.session import Session, one_case

# (what a replay showed, as the run's record keeps it)
SHOWN, EXPLAINED, CONFORMANT, OTHERWISE = REPLAY_SHOWN, REPLAY_EXPLAINED, REPLAY_CONFORMANT, REPLAY_OTHERWISE
FOUND, OTHER_SYSTEM, NOT_EXPRESSIBLE = REPLAY_FOUND, REPLAY_OTHER_SYSTEM, REPLAY_NOT_EXPRESSIBLE
CONFIRMED = REPLAY_CONFIRMED


@attrs.frozen
class Recorded:
    """A recorded counterexample: its file's name and its failure."""

    name: str
    failure: Failure


def load_recorded(paths: list[Path]) -> list[Recorded]:
    """The replay files ``paths`` name, a directory standing for the replay files in it (race files left out,
    as a run of sequential cases cannot replay them).  Every file is read before anything runs: a bad one
    raises :class:`ReplayFileError`, with nothing run."""
    from conformance.records.races import is_race_file

    out: list[Recorded] = []
    for path in paths:
        if path.is_dir():
            files = [f for f in sorted(path.glob("*.json")) if not is_race_file(f)]
            if not files:
                raise ReplayFileError(f"{path}: no replay file in this directory")
        elif is_race_file(path):
            raise ReplayFileError(f"{path}: a race file: a run of sequential cases cannot replay it "
                                  "(mqconform replay does)")
        else:
            files = [path]
        out += [Recorded(f.name, load_failure(f)) for f in files]
    return out


def not_replayed(adapter: Adapter, recorded: Failure) -> str | None:
    """Why ``recorded`` is not replayed on ``adapter`` (None: it is)."""
    if recorded.adapter != adapter.name:
        return f"{OTHER_SYSTEM} ({recorded.adapter})"
    operations = adapter.capabilities().operations
    express = getattr(adapter, "express", None)
    for step in recorded.steps:
        name = type(step.op).__name__
        if operations is not None and name not in operations or express is not None and express(step.op) != step.op:
            return f"{NOT_EXPRESSIBLE} ({name} at step {recorded.steps.index(step) + 1})"
    return None


def replay_recorded(adapter: Adapter, recorded: Failure, options: dict | None, coverage) -> tuple[str, Failure | None]:
    """Replay ``recorded`` on ``adapter`` as one case counted in ``coverage``: what it showed, and the departure
    when it is the recorded one again."""
    why = not_replayed(adapter, recorded)
    if why is not None:
        return why, None
    session = Session(adapter, recorded.area, options, recorded.seed, coverage=coverage, platform=recorded.platform,
                      set_aside=frozenset(recorded.set_aside), named=recorded.stepped_past(), replaying=True)
    got = one_case(session, [step.op for step in recorded.steps])
    if got is None:
        return CONFORMANT, None
    told = with_alternatives(got, adapter.capabilities().expiry_tolerance, known_by=recorded.known_before())
    if not same_departure(told, recorded):
        return OTHERWISE, None
    return SHOWN, got
