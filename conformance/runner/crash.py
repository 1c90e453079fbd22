"""Crash schedules: messages put and got around restarts, every queue drained, every message accounted for.

A schedule puts messages (persistent or not, in and out of syncpoint), commits some, gets some, and restarts
the queue manager once or twice in a row (a crash during recovery); then a new connection drains the queue,
and :func:`conformance.checker.accounting.account` judges each message against the model after the same history.
Bugs of this class show with some probability, so the result of many schedules is a frequency per rule
("CORE-32: 3 of 24 schedules lost a committed persistent message"), each with its first breaking schedule.

``mqconform crash`` runs them on any adapter that can restart its system (a kill, ``Restart(abrupt=True)``, where
the adapter can express one: a broker under the nemesis).  The first schedule that broke each rule is then cut
down to the fewest calls that still break it (:func:`minimal_schedule`: a call is left out where a run without it,
drained and accounted, breaks the rule again within a number of tries), and can be run again that many times to
give its own frequency (:func:`replay`); so is the first schedule that departed before its drain under each
verdict that no drain's breaking schedule shares, a candidate kept where it departs under that verdict again.
Where the system can be paused, a schedule's commit is sometimes made while it is (in doubt).  The schedules run
as Spark tasks in :mod:`conformance.campaign.crash`.
"""

from __future__ import annotations

import functools
import random
import time
from collections import Counter
from typing import Callable, Sequence

import attrs

from conformance.checker.accounting import CLASSES, Accounting, account, departure_verdicts
from conformance.records.crash import wilson
from conformance.runner.collector import collector_tuned
from conformance.runner.stack import with_frame_room
from reference_model import language as L
from reference_model import mqconst as C

QUEUE = "Q1"
#: Of a time-boxed campaign's time, the share left to cutting down the breaking schedules once a rule broke.
MINIMISE_SHARE = 0.25
OPTIONS = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
#: A drain stops after this many messages (a system that keeps giving is an error of its own).
DRAIN_LIMIT = 500


@attrs.frozen
class Schedule:
    """One schedule as it ran: the history up to the drain, and what the drain read."""

    case_id: str
    steps: tuple[tuple[L.Op, L.Observation], ...]
    drained: tuple[str, ...]
    accounting: Accounting


@attrs.frozen
class CrashResult:
    schedules: int
    #: Per rule, how many schedules broke it (a message lost, duplicated, kept or unexpected naming it).
    broke: dict[str, int]
    #: Per class of message (conformance.checker.accounting.CLASSES), how many messages over every schedule.
    classes: dict[str, int]
    #: Per rule, the first schedule that broke it.
    first: dict[str, Schedule]
    #: Schedules whose history departed before the drain (judged step by step: not accounted).
    departed: int = 0
    #: Per rule, the schedules that departed breaking it (by counterfactual, as a run's departures are judged;
    #: rules joined by " or " where a schedule broke one of them without showing which), and the first of them.
    departures: dict[str, int] = attrs.Factory(dict)
    first_departed: dict[str, Schedule] = attrs.Factory(dict)
    #: Stopped by Ctrl-C (or SIGTERM) before its schedules or its time were spent: what ran is all here.
    interrupted: bool = False
    #: Per rule, the first schedule that broke it cut down to the fewest calls that still break it, as it last ran
    #: breaking it (a rule missing here was not minimised: asked not to be, or the time was up); and per departure
    #: verdict that no drain broke, the first schedule that departed under it, cut down alike.
    minimal: dict[str, Schedule] = attrs.Factory(dict)
    #: The runs minimising may make of a candidate schedule to see the rule broken again.
    tries: int = 0
    #: The rules whose schedule the time's end stopped cutting down before every call was tried.
    cut_short: tuple[str, ...] = ()

    def frequency(self, rule: str) -> float:
        return self.broke.get(rule, 0) / self.schedules if self.schedules else 0.0

    def interval(self, rule: str) -> tuple[float, float]:
        """Wilson's 95% score interval of the rule's frequency: where its true rate lies, given these schedules."""
        return wilson(self.broke.get(rule, 0), self.schedules)


def random_schedule(rng: random.Random, index: int, restarts: Sequence[L.Restart] = (L.Restart(),),
                    pause: bool = False) -> list[L.Op]:
    """Puts (persistent or not, in syncpoint or not), maybe a commit (of a get too), maybe a get, then one or two
    restarts (of the kinds ``restarts``: a kill where the system can be killed); two in a row is a crash during
    recovery.
    ``pause``: the system can be paused, and a commit is sometimes made while it is (the client gives up on it and
    its connection ends with the commit in flight: in doubt, MQ's either outcome allowed)."""
    ops: list[L.Op] = [L.DefineQueue(queue=QUEUE), L.Connect(conn="a"),
                       L.Open(conn="a", handle="a1", queue=QUEUE, options=OPTIONS)]
    for n in range(rng.randint(2, 5)):
        persistence = rng.choice((C.MQPER_PERSISTENT, C.MQPER_PERSISTENT, C.MQPER_NOT_PERSISTENT))
        sync = rng.random() < 0.3
        ops.append(L.Put(conn="a", handle="a1", body=f"m{index}.{n}", md=L.MessageDescriptor(persistence=persistence),
                         options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT))
    if rng.random() < 0.6:
        if rng.random() < 0.4:   # a get in the unit of work the commit ends
            ops.append(L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT))
        if pause and rng.random() < 0.3:
            ops.append(L.PauseQueueManager(conn="a", tenths=rng.choice((5, 20))))
        ops.append(L.Commit(conn="a"))
    if rng.random() < 0.4:
        ops.append(L.Get(conn="a", handle="a1",
                         options=C.MQGMO_SYNCPOINT if rng.random() < 0.5 else C.MQGMO_NO_SYNCPOINT))
    count = rng.choice((1, 1, 2))
    ops += [restarts[rng.randrange(len(restarts))] if len(restarts) > 1 else restarts[0] for _ in range(count)]
    return ops


def run_schedule(adapter, case_id: str, ops: Sequence[L.Op], platform: str = C.PLATFORM_DISTRIBUTED) -> Schedule:
    """Run ``ops`` on ``adapter``, drain the queue through a new connection, and account for every message."""
    adapter.start_case(case_id, platform)
    try:
        steps = tuple((op, adapter.execute(op)) for op in ops)
        drained: list[str] = []
        adapter.execute(L.Connect(conn="drain"))
        adapter.execute(L.Open(conn="drain", handle="drain1", queue=QUEUE, options=OPTIONS))
        for _ in range(DRAIN_LIMIT):
            got = adapter.execute(L.Get(conn="drain", handle="drain1", options=C.MQGMO_NO_SYNCPOINT))
            if got.message is None:
                break
            drained.append(got.message.body)
        else:
            raise RuntimeError(f"case {case_id}: the drain read {DRAIN_LIMIT} messages and the queue gave more")
    finally:
        adapter.end_case()
    return Schedule(case_id=case_id, steps=steps, drained=tuple(drained),
                    accounting=account(platform, steps, {QUEUE: drained}))


def breaks(done: Schedule) -> tuple[str, ...]:
    """What a schedule that ran broke: the rules its drain's accounting names, or, where it departed before its
    drain, the verdicts its departure is counted under (:func:`departure_verdicts`: "A or B" where it breaks one of
    two without showing which)."""
    if done.accounting.departed is not None:
        return departure_verdicts(done.accounting.departed)
    return done.accounting.rules


def _frame(ops: Sequence[L.Op]) -> int:
    """How many of a schedule's first calls make its frame (the queue, the connection, the handle): never left
    out, since without them no call after them reaches a message."""
    n = 0
    while n < len(ops) and isinstance(ops[n], (L.DefineQueue, L.Connect, L.Open)):
        n += 1
    return n


def breaking(adapter, case_id: str, ops: Sequence[L.Op], rule: str, tries: int,
             platform: str = C.PLATFORM_DISTRIBUTED, time_left: Callable[[], bool] | None = None) -> Schedule | None:
    """A run of ``ops`` (drained and accounted) that breaks ``rule`` (:func:`breaks`: at the drain, or departing
    before it), within ``tries`` runs (none started once ``time_left()`` says no); None when none did."""
    for n in range(tries):
        if time_left is not None and not time_left():
            return None
        done = run_schedule(adapter, f"{case_id}-{n}", ops, platform)
        if rule in breaks(done):
            return done
    return None


def minimal_schedule(adapter, first: Schedule, rule: str, tries: int, platform: str = C.PLATFORM_DISTRIBUTED,
                     deadline: float | None = None, per_run: float = 0.0) -> tuple[Schedule, bool]:
    """``first`` (a schedule that broke ``rule``) cut down to the fewest calls that still break it: each call after
    the frame, the last first, is left out where a run without it breaks the rule again within ``tries`` runs (a
    rule broken at one run in k needs tries of a few times k to be seen).  No run starts that would end after
    ``deadline`` (``time.monotonic()``) if it took ``per_run`` seconds: what was cut down by then is the result.
    Returns the run that last broke the rule, and whether every call was tried (False: the time was up)."""
    ops = [op for op, _ in first.steps]
    best = first

    def time_left() -> bool:
        return deadline is None or time.monotonic() + per_run < deadline

    frame = _frame(ops)
    for at in range(len(ops) - 1, frame - 1, -1):
        candidate = ops[:at] + ops[at + 1:]
        again = breaking(adapter, f"{first.case_id}-min{at}", candidate, rule, tries, platform, time_left)
        if again is not None:
            ops, best = candidate, again
        elif not time_left():
            return best, False
    return best, True


def replay(adapter, case_id: str, ops: Sequence[L.Op], tries: int, platform: str = C.PLATFORM_DISTRIBUTED,
           stop: Callable[[], bool] | None = None) -> tuple[int, Counter]:
    """``ops`` run ``tries`` times (fewer where ``stop()`` says so between runs), each drained and accounted: the
    runs made, and per rule (or departure verdict, :func:`breaks`) how many of them broke it."""
    broke: Counter = Counter()
    ran = 0
    for n in range(tries):
        if stop is not None and stop():
            break
        broke.update(breaks(run_schedule(adapter, f"{case_id}-{n}", ops, platform)))
        ran += 1
    return ran, broke


def can_pause(adapter) -> bool:
    """Whether ``adapter`` runs a pause of its system (a broker under the nemesis, the simulated queue manager)."""
    express = getattr(adapter, "express", None)
    caps = getattr(adapter, "capabilities", None)
    op = L.PauseQueueManager(conn="a", tenths=5)
    return (caps is None or caps().can(L.PauseQueueManager)) and (express is None or express(op) is not None)


def restart_kinds(adapter) -> tuple[L.Restart, ...]:
    """The restarts ``adapter`` runs: a kill and an orderly stop, or the one of them it can express."""
    express = getattr(adapter, "express", None)
    kinds = tuple(op for op in (L.Restart(abrupt=True), L.Restart()) if express is None or express(op) is not None)
    return kinds or (L.Restart(),)


@with_frame_room
def campaign(make_adapter: Callable[[], object], seed: int, schedules: int,
             shape: Callable[[random.Random, int], list[L.Op]] | None = None, deadline: float | None = None,
             progress: Callable[[int, Schedule], None] | None = None, tries: int = 0) -> CrashResult:
    """At most ``schedules`` schedules of ``shape`` (by default :func:`random_schedule` with the restarts the adapter
    runs) drawn from ``seed``, on one adapter, none started that would end after ``deadline`` (``time.monotonic()``)
    if it took as long as the longest schedule so far: the frequency of each rule broken.  Then, ``tries`` not
    0, the first schedule that broke each rule cut down (:func:`minimal_schedule`, within the deadline), and so is
    the first that departed under each verdict no drain broke.  Within a deadline, the last part of the time is
    left to cutting down while a schedule is yet to be; once all are, schedules run again while time is left.
    Ctrl-C ends it with what ran (``interrupted``).  The cyclic collector leaves what was alive before alone
    (:func:`conformance.runner.collector.collector_tuned`): a time box holds the campaign's own work, not a walk of
    a large heap its caller made."""
    adapter = make_adapter()
    try:
        with collector_tuned():
            return _campaign(adapter, seed, schedules, shape, deadline, progress, tries)
    finally:
        close = getattr(adapter, "close", None)
        if close is not None:
            close()


def _campaign(adapter, seed: int, schedules: int, shape: Callable[[random.Random, int], list[L.Op]] | None,
              deadline: float | None, progress: Callable[[int, Schedule], None] | None, tries: int) -> CrashResult:
    rng = random.Random(seed)
    broke: Counter = Counter()
    classes: Counter = Counter()
    first: dict[str, Schedule] = {}
    departures: Counter = Counter()
    first_departed: dict[str, Schedule] = {}
    departed = ran = 0
    longest = 0.0
    interrupted = False
    minimal: dict[str, Schedule] = {}
    cut: list[str] = []
    if shape is None:
        shape = functools.partial(random_schedule, restarts=restart_kinds(adapter), pause=can_pause(adapter))
    began = time.monotonic()
    spent = 0.0   # seconds the schedules took, not the cutting down
    attempted: set[str] = set()
    index = 0

    def pending() -> list[str]:
        """The rules (each rule's first breaking schedule, then each departure verdict no drain's breaking
        schedule shares) whose first schedule is yet to be cut down."""
        rules = sorted(first) + sorted(set(first_departed) - set(first))
        return [rule for rule in rules if rule not in attempted]

    while True:
        ran_before, cut_before = ran, len(attempted)
        while index < schedules:
            # none started that would, taking as long as the longest schedule so far, end after the deadline (a
            # mean let a schedule with a pause and a slow restart end past it); while a rule's schedule is yet
            # to be cut down, the last part of the time is left to that
            now = time.monotonic()
            end = deadline
            if deadline is not None and tries and pending():
                end = deadline - MINIMISE_SHARE * (deadline - began)
            if end is not None and now + longest >= end:
                break
            try:
                done = run_schedule(adapter, f"crash-{seed}-{index}", shape(rng, index))
            except KeyboardInterrupt:
                interrupted = True
                break
            took = time.monotonic() - now
            ran, index, spent, longest = ran + 1, index + 1, spent + took, max(longest, took)
            if progress is not None:
                progress(index - 1, done)
            if done.accounting.departed is not None:
                departed += 1
                for rule in departure_verdicts(done.accounting.departed):
                    departures[rule] += 1
                    first_departed.setdefault(rule, done)
                continue
            classes.update(a.cls for a in done.accounting.accounts)
            for rule in done.accounting.rules:
                broke[rule] += 1
                first.setdefault(rule, done)
        if tries and not interrupted and ran:
            per_run = spent / ran
            breaking_first = {**first_departed, **first}
            for rule in pending():
                if deadline is not None and time.monotonic() + per_run >= deadline:
                    break
                attempted.add(rule)
                try:
                    minimal[rule], done_all = minimal_schedule(adapter, breaking_first[rule], rule, tries,
                                                               deadline=deadline, per_run=per_run)
                    if not done_all:
                        cut.append(rule)
                except KeyboardInterrupt:
                    interrupted = True
                    break
        # time left once every schedule was cut down: more schedules, until the time is spent
        progressed = (ran, len(attempted)) != (ran_before, cut_before)
        if interrupted or deadline is None or index >= schedules or not progressed:
            break
    return CrashResult(schedules=ran, broke=dict(broke), classes={c: classes[c] for c in CLASSES},
                       first=first, departed=departed, interrupted=interrupted, departures=dict(departures),
                       first_departed=first_departed, minimal=minimal, tries=tries, cut_short=tuple(cut))


__all__ = ["Schedule", "CrashResult", "random_schedule", "can_pause", "restart_kinds", "run_schedule", "breaks",
           "breaking", "minimal_schedule", "replay", "campaign"]
