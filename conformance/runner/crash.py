"""Crash schedules: messages put and got around restarts, every queue drained, every message accounted for.

A schedule puts messages (persistent or not, in and out of syncpoint), commits some, gets some, and restarts
the queue manager once or twice in a row (a crash during recovery); then a new connection drains the queue,
and :func:`conformance.checker.accounting.account` judges each message against the model after the same history.
Bugs of this class show with some probability, so the result of many schedules is a frequency per rule
("CORE-32: 3 of 24 schedules lost a committed persistent message"), each with its first breaking schedule.

``mqconform crash`` runs them on any adapter that can restart its system (a kill, ``Restart(abrupt=True)``, where
the adapter can express one: a broker under the nemesis).  Not yet: pauses, Spark, minimal histories of a
breaking schedule (the first one is shown as it ran).
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections import Counter
from typing import Callable, Sequence

import attrs

from conformance.checker.accounting import CLASSES, Accounting, account
from reference_model import language as L
from reference_model import mqconst as C

QUEUE = "Q1"
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
    #: Per rule, the schedules that departed naming it (the step's mismatch), and the first of them.
    departures: dict[str, int] = attrs.Factory(dict)
    first_departed: dict[str, Schedule] = attrs.Factory(dict)
    #: Stopped by Ctrl-C (or SIGTERM) before its schedules or its time were spent: what ran is all here.
    interrupted: bool = False

    def frequency(self, rule: str) -> float:
        return self.broke.get(rule, 0) / self.schedules if self.schedules else 0.0

    def interval(self, rule: str, z: float = 1.96) -> tuple[float, float]:
        """Wilson's 95% score interval of the rule's frequency: where its true rate lies, given these schedules."""
        n, k = self.schedules, self.broke.get(rule, 0)
        if not n:
            return 0.0, 1.0
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return max(0.0, centre - half), min(1.0, centre + half)


def random_schedule(rng: random.Random, index: int, restarts: Sequence[L.Restart] = (L.Restart(),)) -> list[L.Op]:
    """Puts (persistent or not, in syncpoint or not), maybe a commit, maybe a get, then one or two restarts (of
    the kinds ``restarts``: a kill where the system can be killed); two in a row is a crash during recovery."""
    ops: list[L.Op] = [L.DefineQueue(queue=QUEUE), L.Connect(conn="a"),
                       L.Open(conn="a", handle="a1", queue=QUEUE, options=OPTIONS)]
    for n in range(rng.randint(2, 5)):
        persistence = rng.choice((C.MQPER_PERSISTENT, C.MQPER_PERSISTENT, C.MQPER_NOT_PERSISTENT))
        sync = rng.random() < 0.3
        ops.append(L.Put(conn="a", handle="a1", body=f"m{index}.{n}", md=L.MessageDescriptor(persistence=persistence),
                         options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT))
    if rng.random() < 0.6:
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


def restart_kinds(adapter) -> tuple[L.Restart, ...]:
    """The restarts ``adapter`` runs: a kill and an orderly stop, or the one of them it can express."""
    express = getattr(adapter, "express", None)
    kinds = tuple(op for op in (L.Restart(abrupt=True), L.Restart()) if express is None or express(op) is not None)
    return kinds or (L.Restart(),)


def campaign(make_adapter: Callable[[], object], seed: int, schedules: int,
             shape: Callable[[random.Random, int], list[L.Op]] | None = None, deadline: float | None = None,
             progress: Callable[[int, Schedule], None] | None = None) -> CrashResult:
    """At most ``schedules`` schedules of ``shape`` (by default :func:`random_schedule` with the restarts the adapter
    runs) drawn from ``seed``, on one adapter, none started that would end after ``deadline`` (``time.monotonic()``)
    if it took as long as the schedules so far on average: the frequency of each rule broken.  Ctrl-C ends it
    with what ran (``interrupted``)."""
    rng = random.Random(seed)
    broke: Counter = Counter()
    classes: Counter = Counter()
    first: dict[str, Schedule] = {}
    departures: Counter = Counter()
    first_departed: dict[str, Schedule] = {}
    departed = ran = 0
    interrupted = False
    adapter = make_adapter()
    try:
        if shape is None:
            shape = functools.partial(random_schedule, restarts=restart_kinds(adapter))
        began = time.monotonic()
        for index in range(schedules):
            # none started that would, taking as long as the schedules so far on average, end after the deadline
            now = time.monotonic()
            if deadline is not None and now + ((now - began) / ran if ran else 0.0) >= deadline:
                break
            try:
                done = run_schedule(adapter, f"crash-{seed}-{index}", shape(rng, index))
            except KeyboardInterrupt:
                interrupted = True
                break
            ran += 1
            if progress is not None:
                progress(index, done)
            if done.accounting.departed is not None:
                departed += 1
                for rule in done.accounting.departed.rules:
                    departures[rule] += 1
                    first_departed.setdefault(rule, done)
                continue
            classes.update(a.cls for a in done.accounting.accounts)
            for rule in done.accounting.rules:
                broke[rule] += 1
                first.setdefault(rule, done)
    finally:
        close = getattr(adapter, "close", None)
        if close is not None:
            close()
    return CrashResult(schedules=ran, broke=dict(broke), classes={c: classes[c] for c in CLASSES},
                       first=first, departed=departed, interrupted=interrupted, departures=dict(departures),
                       first_departed=first_departed)


__all__ = ["Schedule", "CrashResult", "random_schedule", "restart_kinds", "run_schedule", "campaign"]
