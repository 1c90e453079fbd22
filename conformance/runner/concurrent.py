"""Concurrent cases: several clients at once on one system, the history judged by :mod:`conformance.checker.linearizable`.

A case is a sequential set-up (a queue, a connection and a handle per client, a few messages), then each
client's script of operations run on a thread of its own, all released together, every call recorded with
when it was invoked and when it returned (one monotonic clock), then a sequential check (the queue's depth).
A call that raised is an operation of unknown effect: it may have happened or not.

:func:`search` draws cases from a seed and stops at the first history no order explains.  The adapter must
take calls from several threads at once (the simulated queue manager runs each call whole under a lock, as a
queue manager's calls are atomic; its race faults, ``adapters.simulated.faults.RACES``, break that).

``mqconform run --concurrency N`` runs :func:`search_on`, then :func:`shrink` on the race it found;
``mqconform replay`` of a race file runs :func:`rerun`.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
import threading
import time
from typing import Any, Callable, Sequence

import attrs

from adapters.base import AdapterError, undeclared_nulls
from conformance.checker.linearizable import LINEARIZABLE, NOT_LINEARIZABLE, Event, Linearization, check
from conformance.checker.sequential import ModelTracker, follow
from conformance.records.results import Coverage
from conformance.runner.collector import collector_tuned
from conformance.runner.engine import BY_SYSTEM
from conformance.runner.stack import with_frame_room
from reference_model import language as L
from reference_model import mqconst as C

OPTIONS = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_BROWSE
#: A client's handle where its input opens are the case's subject (``exclusive``) or would stop a trigger (``trigger``).
OUTPUT_OPTIONS = C.MQOO_OUTPUT | C.MQOO_INQUIRE | C.MQOO_BROWSE
QUEUE = "Q1"
#: The ``trigger`` case's initiation queue, its process, and the trigger monitor's connection that holds it open.
INITQ, PROCESS, MONITOR = "IQ1", "P1", "monitor"
#: The connection the check after a ``queue`` case drains the queue on.
CHECK = "check"
#: Seconds a client may take over its whole script before the case is an error.
CLIENT_DEADLINE = 30.0
#: Python's thread switch interval while the clients run (seconds; its default is 0.005).
SWITCH_INTERVAL = 1e-5

#: The check after the clients of a case: the queue's depth.
AFTER = (L.InquireQueue(queue=QUEUE, names=("CURDEPTH",)),)

#: What a case is about, drawn for each case with these weights:
#:
#: * ``queue``: the clients put, get, browse with LOCK, commit, back out and ask the depth of one queue that all
#:   have open for input;
#: * ``exclusive``: the clients open the queue for input (exclusively or shared), get through that handle and
#:   close it, so that at most one exclusive input handle may be open at a time (CORE-23);
#: * ``trigger``: the clients put, in and out of units of work, to an empty FIRST-triggered queue that nobody has
#:   open for input, a trigger monitor holding its initiation queue open: one trigger message for the first
#:   (TRIG-03), counted by the check after.
KINDS = ("queue", "exclusive", "trigger")
KIND_WEIGHTS = (3, 1, 1)


@attrs.frozen
class ConcurrentCase:
    """What ran: the set-up's steps, the clients' events, the check's steps."""

    setup: tuple[tuple[L.Op, L.Observation], ...]
    events: tuple[Event, ...]
    after: tuple[tuple[L.Op, L.Observation], ...]
    #: The clients in the order their threads were started: which runs first once they are released together
    #: decides how a small race's calls meet, so a replay starts them in the same order.
    started: tuple[str, ...] = ()


@attrs.frozen
class Race:
    """A history no order of its operations explains, and the case it came from."""

    case: ConcurrentCase
    result: Linearization
    seed: int
    index: int
    #: The rules races found before this one had broken, set aside when it was judged (a run keeping going).
    set_aside: frozenset = frozenset()


def setup_ops(clients: Sequence[str], messages: int, kind: str = "queue") -> list[L.Op]:
    """The sequential set-up of a case of ``kind``: the queue, each client's connection and handle (``{client}1``),
    and ``messages`` messages put by the first client (none on a ``trigger`` case's queue, which must be empty)."""
    ops: list[L.Op] = []
    if kind == "trigger":
        ops += [L.DefineProcess(process=PROCESS, appl_id="/opt/app/server"), L.DefineQueue(queue=INITQ),
                L.DefineQueue(queue=QUEUE, attrs=(("TRIGGER", C.MQTC_ON), ("TRIGTYPE", C.MQTT_FIRST),
                                                  ("PROCESS", PROCESS), ("INITQ", INITQ))),
                L.Connect(conn=MONITOR),
                L.Open(conn=MONITOR, handle=f"{MONITOR}1", queue=INITQ, options=C.MQOO_INPUT_SHARED)]
        messages = 0
    else:
        ops.append(L.DefineQueue(queue=QUEUE))
    options = OPTIONS if kind == "queue" else OUTPUT_OPTIONS
    for client in clients:
        ops += [L.Connect(conn=client), L.Open(conn=client, handle=f"{client}1", queue=QUEUE, options=options)]
    first = clients[0]
    ops += [L.Put(conn=first, handle=f"{first}1", body=f"s{n}", options=C.MQPMO_NO_SYNCPOINT) for n in range(messages)]
    return ops


def client_script(rng: random.Random, client: str, length: int, kind: str = "queue") -> list[L.Op]:
    """A client's calls, drawn from ``rng``, for a case of ``kind`` (:data:`KINDS`).  On a ``queue`` case: a
    producer (puts in a unit of work, then its commit or backout), a consumer (gets, in and out of syncpoint, and
    the queue's depth), a browser (browses of the first message with LOCK, each followed by a get of it or an
    unlock) or any mix of puts, gets, commits, backouts and depth inquiries: the roles whose overlap races show in.
    On an ``exclusive`` case: input opens (mostly exclusive), each followed by a get or two and a close.  On a
    ``trigger`` case: a put or two, some in a unit of work that ends with a commit or a backout."""
    handle = f"{client}1"

    def put(n: int, sync: bool) -> L.Op:
        return L.Put(conn=client, handle=handle, body=f"{client}{n}",
                     options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT)

    def get(sync: bool, through: str = handle) -> L.Op:
        return L.Get(conn=client, handle=through, options=C.MQGMO_SYNCPOINT if sync else C.MQGMO_NO_SYNCPOINT)

    depth = L.InquireQueue(queue=QUEUE, names=("CURDEPTH",))
    if kind == "exclusive":
        out: list[L.Op] = []
        for n in range(max(1, length // 2)):
            opened = f"{client}{n + 2}"
            mode = C.MQOO_INPUT_EXCLUSIVE if rng.random() < 0.75 else C.MQOO_INPUT_SHARED
            out.append(L.Open(conn=client, handle=opened, queue=QUEUE, options=mode | C.MQOO_INQUIRE))
            out += [get(False, opened) for _ in range(rng.choice((1, 2)))]
            out.append(L.Close(conn=client, handle=opened))
        return out
    if kind == "trigger":
        # one or two puts: the race is in the first puts' overlap, and every order of many puts to one queue
        # leaves it differently, each an order the checker would have to refute
        sync = rng.random() < 0.4
        out = [put(n, sync) for n in range(rng.choice((1, 2)))]
        if sync:
            out.append(L.Commit(conn=client) if rng.random() < 0.7 else L.Backout(conn=client))
        return out
    role = rng.choice(("producer", "consumer", "mixed", "browser"))
    if role == "producer":
        ops = [put(n, True) for n in range(max(1, length - 1))]
        return ops + [L.Commit(conn=client) if rng.random() < 0.8 else L.Backout(conn=client)]
    if role == "consumer":
        return [depth if rng.random() < 0.25 else get(rng.random() < 0.2) for _ in range(2 * length)]
    if role == "browser":
        out = []
        for _ in range(max(1, length // 2)):
            out.append(L.Get(conn=client, handle=handle,
                             options=C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK | C.MQGMO_NO_SYNCPOINT))
            out.append(L.Get(conn=client, handle=handle, options=C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT)
                       if rng.random() < 0.6 else L.Get(conn=client, handle=handle, options=C.MQGMO_UNLOCK))
        return out
    out = []
    for n in range(length):
        call = rng.choice(("put", "put sync", "get", "get", "get", "get sync", "commit", "backout", "depth"))
        if call.startswith("put"):
            out.append(put(n, call.endswith("sync")))
        elif call.startswith("get"):
            out.append(get(call.endswith("sync")))
        elif call == "commit":
            out.append(L.Commit(conn=client))
        elif call == "backout":
            out.append(L.Backout(conn=client))
        else:
            out.append(depth)
    return out


def after_ops(kind: str = "queue", setup: Sequence[L.Op] = (), scripts: dict[str, list[L.Op]] | None = None
              ) -> tuple[L.Op, ...]:
    """The sequential check after the clients of a case of ``kind``: the queue's depth (and, on a ``trigger``
    case, the initiation queue's: how many trigger messages the puts gave).  On a ``queue`` case given its
    ``setup`` and ``scripts``, then a drain on a connection of its own (:data:`CHECK`): as many gets outside
    syncpoint as messages were put and one more, so that what is left on the queue shows, not only how many it
    counts."""
    if kind == "trigger":
        return AFTER + (L.InquireQueue(queue=INITQ, names=("CURDEPTH",)),)
    if kind != "queue" or scripts is None:
        return AFTER
    puts = sum(isinstance(op, L.Put) for op in [*setup, *(op for ops in scripts.values() for op in ops)])
    return AFTER + (L.Connect(conn=CHECK), L.Open(conn=CHECK, handle=f"{CHECK}1", queue=QUEUE,
                                                  options=C.MQOO_INPUT_SHARED)) + tuple(
        L.Get(conn=CHECK, handle=f"{CHECK}1", options=C.MQGMO_NO_SYNCPOINT) for _ in range(puts + 1))


def expressed(adapter, ops: Sequence[L.Op]) -> list[L.Op]:
    """``ops`` as ``adapter`` can express them (its ``express``, as a sequential run applies it: an operation
    changed to what the system can do, or left out), a call through a handle whose open was left out left out
    with it."""
    express = getattr(adapter, "express", None)
    if express is None:
        return list(ops)
    out: list[L.Op] = []
    gone: set[str] = set()
    for op in ops:
        if getattr(op, "handle", None) in gone:
            continue
        fitted = express(op)
        if fitted is None:
            if isinstance(op, L.Open):
                gone.add(op.handle)
            continue
        out.append(fitted)
    return out


#: Of each kind, a call a system must be able to make for the kind to be drawn on it (besides its set-up).
_KIND_NEEDS = {"exclusive": L.Open(conn="a", handle="a2", queue=QUEUE, options=C.MQOO_INPUT_EXCLUSIVE)}


def runnable_kinds(adapter, clients: Sequence[str], messages: int) -> tuple[str, ...]:
    """The kinds of case ``adapter`` can run: those whose set-up it expresses without leaving an operation out
    (a system without triggering cannot define a process), and that it can make the kind's own call of (an
    exclusive input open).  The others are never drawn on it: what a system cannot express is not applicable."""
    express = getattr(adapter, "express", None)
    if express is None:
        return KINDS
    out = []
    for kind in KINDS:
        setup = setup_ops(clients, messages, kind)
        need = _KIND_NEEDS.get(kind)
        if all(express(op) is not None for op in setup) and (need is None or express(need) == need):
            out.append(kind)
    return tuple(out)


@with_frame_room
def run_case(adapter, case_id: str, platform: str, setup: Sequence[L.Op], scripts: dict[str, list[L.Op]],
             after: Sequence[L.Op] = (), in_order: bool = False) -> ConcurrentCase:
    """Run one concurrent case on ``adapter``: the set-up, the clients on threads released together, the check.
    The clients' threads are started in an order drawn from ``case_id`` (``in_order``: in the scripts' order, as a
    replay of a race file starts them)."""
    if getattr(adapter, "concurrent_calls", False):
        adapter.start_case(case_id, platform, concurrent=True)   # its calls will come at once
    else:
        adapter.start_case(case_id, platform)
    try:
        done_setup = tuple((op, adapter.execute(op)) for op in setup)
        start = threading.Barrier(len(scripts))
        events: list[Event] = []
        guard = threading.Lock()

        def client(name: str, ops: list[L.Op]) -> None:
            start.wait()
            for op in ops:
                invoked = time.monotonic()
                try:
                    observed = adapter.execute(op)
                except Exception:  # noqa: BLE001 - a call that raised: its effect is unknown, and the client ends
                    with guard:
                        events.append(Event(client=name, op=op, observed=None, invoked=invoked, returned=None))
                    return
                returned = time.monotonic()
                with guard:
                    events.append(Event(client=name, op=op, observed=observed, invoked=invoked, returned=returned))

        # the clients started in an order of the case's own: which runs first once they are released together
        # decides how a small race's calls meet (a commit raced by a consumer's gets, started always in the
        # scripts' order, showed in 8 runs of 100 with the committer named first and in 61 with the consumer), so
        # that a search met only the races of one order and a shrink, dropping a client, lost races it needed only
        # to start another way
        order = list(scripts.items())
        if not in_order:
            random.Random(f"start order {case_id}").shuffle(order)
        threads = [threading.Thread(target=client, args=(name, ops), daemon=True) for name, ops in order]
        # switch threads often while the clients run, so that a call in one is under way when another starts
        # (a call of an in-process system is shorter than Python's usual switch interval)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(CLIENT_DEADLINE)
        finally:
            sys.setswitchinterval(interval)
        if any(t.is_alive() for t in threads):
            raise TimeoutError(f"a client of case {case_id} did not end within {CLIENT_DEADLINE:g}s")
        done_after = tuple((op, adapter.execute(op)) for op in after)
    finally:
        adapter.end_case()
    lacks = adapter.capabilities().lacks
    for op, observed in (*done_setup, *((e.op, e.observed) for e in events if e.observed is not None), *done_after):
        nulls = undeclared_nulls(observed, lacks)
        if nulls:
            raise AdapterError(f"the adapter answered {type(op).__name__} with no value for {', '.join(nulls)}, which "
                               f"its capabilities do not declare lacking (capabilities.lacks)")
    return ConcurrentCase(setup=done_setup, events=tuple(events), after=done_after,
                          started=tuple(name for name, _ in order))


def witness_coverage(platform: str, case: ConcurrentCase, result: Linearization, coverage: Coverage,
                     set_aside: frozenset[str] = frozenset()) -> bool:
    """Count the rules a linearizable case exercised, as the sequential history of its witness order exercises
    them (the set-up, the events in that order, the check after): what the case is evidence of.  False, and
    nothing counted, where the order holds an event of unknown effect (no answer to follow it by)."""
    placed = [case.events[i] for i in result.order]
    if any(e.observed is None for e in placed):
        return False
    steps = [*case.setup, *((e.op, e.observed) for e in placed if e.observed is not None), *case.after]
    tracker = ModelTracker(platform, set_aside=set_aside)
    followed = [follow(tracker, op, observed) for op, observed in steps]
    if any(mismatch is not None for _, mismatch in followed):   # (the checker found this order passes: never here)
        return False
    for check_, _ in followed:
        if check_.mismatch is None:   # (a step past a departure set aside is evidence of nothing)
            coverage.record(check_)
    return True


#: The verdict counted for a case no order explains that breaks only rules races before it were found to break.
EXPLAINED = "explained by an earlier race"


@with_frame_room
@collector_tuned()
def search_races(adapter, seed: int, cases: int, clients: int = 3, length: int = 4, messages: int = 2,
                 platform: str = C.PLATFORM_DISTRIBUTED, progress: Callable[[int], None] | None = None,
                 stop: Callable[[], bool] | None = None, coverage: Coverage | None = None,
                 verdicts: Counter | None = None, keep_going: int | None = 0,
                 on_race: Callable[[Race], Sequence[str]] | None = None) -> tuple[list[Race], int]:
    """Draw and run up to ``cases`` concurrent cases from ``seed`` on ``adapter`` (left open); (the races found, in
    the order found, and the cases run).  After a race, at most ``keep_going`` more are looked for (None: until the
    cases are spent), each judged with the rules of those before it set aside, so that a departure found once does
    not hide the others; ``on_race`` is told each race as it is found (to shrink it: the rules it returns are set
    aside too), and a race that breaks only rules races before it were found to break is counted in ``verdicts``
    as :data:`EXPLAINED`, not again as a race.  ``progress`` is told each case's number once it is judged; ``stop`` is asked before each
    case (True: end there); ``coverage`` counts the cases and the rules each linearizable case exercised
    (:func:`witness_coverage`); ``verdicts`` the cases by the checker's verdict.  Kinds of case the adapter cannot
    express (:func:`runnable_kinds`) are never drawn, and a call it cannot make is left out of a client's script."""
    rng = random.Random(seed)
    names = [chr(ord("a") + n) for n in range(clients)]
    kinds = runnable_kinds(adapter, names, messages)
    weights = [w for k, w in zip(KINDS, KIND_WEIGHTS) if k in kinds]
    races: list[Race] = []
    set_aside: frozenset[str] = frozenset()
    for index in range(cases):
        if stop is not None and stop():
            return races, index
        kind = rng.choices(kinds, weights)[0]
        drawn = {name: client_script(rng, name, length, kind) for name in names}
        scripts = {name: ops for name, ops in ((n, expressed(adapter, o)) for n, o in drawn.items()) if ops}
        if not scripts:
            continue
        setup = expressed(adapter, setup_ops(names, messages, kind))
        case = run_case(adapter, f"concurrent-{seed}-{index}", platform, setup, scripts,
                        after=expressed(adapter, after_ops(kind, setup, scripts)))
        result = check(platform, case.setup, case.events, case.after, set_aside=set_aside)
        if verdicts is not None:
            verdicts[result.verdict] += 1
        if coverage is not None:
            coverage.examples += 1
            if result.verdict == LINEARIZABLE:
                witness_coverage(platform, case, result, coverage, set_aside)
        if progress is not None:
            progress(index + 1)
        if result.verdict == NOT_LINEARIZABLE:
            if result.rules and set(result.rules) <= set_aside:
                if verdicts is not None:
                    verdicts[EXPLAINED] += 1
                continue
            race = Race(case=case, result=result, seed=seed, index=index, set_aside=set_aside)
            races.append(race)
            # the rules it breaks, by counterfactual (as found and as shrunk), not every rule its longest order's
            # failing step named: one only named, set aside, would let a later case step past its departure
            set_aside |= frozenset((*result.rules, *(on_race(race) if on_race is not None else ())))
            if keep_going is not None and len(races) > keep_going or not result.rules:
                return races, index + 1
    return races, cases


def search_on(adapter, seed: int, cases: int, clients: int = 3, length: int = 4, messages: int = 2,
              platform: str = C.PLATFORM_DISTRIBUTED, progress: Callable[[int], None] | None = None,
              stop: Callable[[], bool] | None = None, coverage: Coverage | None = None,
              verdicts: Counter | None = None) -> tuple[Race | None, int]:
    """:func:`search_races` stopping at the first race: (it or None, cases run)."""
    races, ran = search_races(adapter, seed, cases, clients, length, messages, platform, progress, stop, coverage,
                              verdicts, keep_going=0)
    return (races[0] if races else None), ran


@with_frame_room
def search(make_adapter: Callable[[], object], seed: int, cases: int, clients: int = 3, length: int = 4,
           messages: int = 2, platform: str = C.PLATFORM_DISTRIBUTED) -> tuple[Race | None, int]:
    """:func:`search_on` a fresh adapter from ``make_adapter``, closed at the end."""
    adapter = make_adapter()
    try:
        return search_on(adapter, seed, cases, clients, length, messages, platform)
    finally:
        close = getattr(adapter, "close", None)
        if close is not None:
            close()


@attrs.frozen
class Tried:
    """What running the same clients again showed: the runs made, how many were not linearizable, the first such
    result and its case."""

    runs: int
    shows: int
    result: Linearization | None
    case: ConcurrentCase | None


@with_frame_room
def rerun(adapter, setup: Sequence[L.Op], scripts: dict[str, list[L.Op]], after: Sequence[L.Op], platform: str,
          tries: int, case_id: str = "replay",
          set_aside: frozenset[str] = frozenset(), enough: int | None = None,
          rules: frozenset[str] | None = None, in_order: bool = False
          ) -> tuple[int, Linearization | None, ConcurrentCase | None]:
    """Run the same clients ``tries`` times, each on a fresh case: (how many were not linearizable, the first such
    result and its case), judged with the rules ``set_aside`` set aside.  A race depends on how the calls met, so it
    shows in some tries, not all.  ``enough``: stop once that many were not linearizable.  ``rules``: count only
    the races that break one of them.  ``in_order``: the clients started in the scripts' order each time (a race
    file's replay), not in an order drawn per try."""
    tried = try_again(adapter, setup, scripts, after, platform, tries, case_id=case_id, set_aside=set_aside,
                      enough=enough, rules=rules, in_order=in_order)
    return tried.shows, tried.result, tried.case


@with_frame_room
def try_again(adapter, setup: Sequence[L.Op], scripts: dict[str, list[L.Op]], after: Sequence[L.Op], platform: str,
              tries: int, case_id: str = "replay", set_aside: frozenset[str] = frozenset(), enough: int | None = None,
              rules: frozenset[str] | None = None, in_order: bool = False, start: int = 0) -> Tried:
    """:func:`rerun`, saying also how many runs it made (fewer than ``tries`` where ``enough`` showed first).
    ``start``: the number of its first try (its case id, and so the order its clients start in)."""
    failed, runs = 0, 0
    first: tuple[Linearization | None, ConcurrentCase | None] = (None, None)
    for n in range(tries):
        if enough is not None and failed >= enough:
            break
        case = run_case(adapter, f"{case_id}-{start + n}", platform, setup, scripts, after=after, in_order=in_order)
        runs += 1
        result = check(platform, case.setup, case.events, case.after, set_aside=set_aside)
        if result.verdict == NOT_LINEARIZABLE and (rules is None or set(result.rules) & rules):
            failed += 1
            if first[0] is None:
                first = (result, case)
    return Tried(runs=runs, shows=failed, result=first[0], case=first[1])


#: Tries a shrinking candidate is given to show a race, and how many of them must show it for the candidate to be
#: kept: a race that shows only now and then is not traded for a smaller one that shows more rarely still.  A
#: candidate one show short after its tries is given as many again (a race of two calls that must meet, shown in
#: one run of ten, is as likely kept as lost on ten alone; one never shown costs no more).  A candidate's runs are
#: kept: met again, it is given only the tries it has not had.
SHRINK_TRIES = 10
SHRINK_SHOWS = 2
#: After a first fixed point, shrinking goes on with each candidate given this many times the tries (and asked to
#: show the race as many times more).
RETRY_TRIES = 3
#: Cases shrinking a race may run at most (each run counted; a candidate's tries stop once it has shown enough).
SHRINK_CASES = 600
#: Seconds shrinking one race may take on a system that runs on real time (a broker), where a case costs a
#: connection per client, the set-up's puts and the drain after: on ActiveMQ over STOMP 600 cases took longer
#: than a CI test's whole run allows.  What was shrunk by then is the race recorded, and its file says the shrink
#: was stopped by the clock (a smaller case may exist).  None on a virtual clock.
SHRINK_SECONDS_REALTIME = 120.0


@attrs.frozen
class Shrunk:
    """A race shrunk: the set-up and clients' scripts left, the case that showed it last, its result, and the calls
    of the race before and after."""

    setup: tuple[L.Op, ...]
    scripts: dict
    case: ConcurrentCase
    result: Linearization
    calls_before: int
    calls_after: int
    #: The shrink was stopped by its time bound, not by finding nothing smaller (a smaller case may exist).
    timed_out: bool = False


def race_file(race: Race, shrunk: Shrunk | None, *, adapter: str, adapter_options: dict, platform: str):
    """What a race file records of ``race`` (as ``shrunk`` left it, where it was shrunk): the one record a run,
    the pytest plugin and a campaign's task write alike."""
    from conformance.records.races import race_record

    case, result = (race.case, race.result) if shrunk is None else (shrunk.case, shrunk.result)
    return race_record(adapter=adapter, adapter_options=adapter_options, platform=platform, seed=race.seed,
                       index=race.index, setup=case.setup, events=case.events, after=case.after, result=result,
                       shrunk_from=None if shrunk is None else shrunk.calls_before, set_aside=race.set_aside,
                       shrink_timed_out=shrunk is not None and shrunk.timed_out,
                       started=case.started)


def _without_client(setup: Sequence[L.Op], client: str) -> list[L.Op]:
    """The set-up without a client's connection and handle (messages put by it stay, put by another)."""
    kept = [op for op in setup if getattr(op, "conn", None) != client or isinstance(op, L.Put)]
    owner = next((op.conn for op in kept if isinstance(op, L.Open)), None)
    def moved(op: L.Op) -> L.Op:
        changed: Any = op   # (a value class of the language: attrs, as mypy does not see through its decorator)
        return attrs.evolve(changed, conn=owner, handle=f"{owner}1")

    return [moved(op) if isinstance(op, L.Put) and op.conn == client else op for op in kept]


@with_frame_room
@collector_tuned()
def shrink(adapter, race: Race, platform: str, tries: int = SHRINK_TRIES, max_cases=SHRINK_CASES,
           stop: Callable[[], bool] | None = None, seconds=BY_SYSTEM,
           clock: Callable[[], float] = time.monotonic) -> Shrunk:
    """A smaller case that still races: whole clients left out, then each client's calls one by one (from its
    last), then the messages the set-up put, each candidate kept when :data:`SHRINK_SHOWS` of ``tries`` runs of it
    are not linearizable, breaking one of the rules the race breaks (a race shows in some runs, not all; a smaller
    case that shows another departure, or the same one with the calls that told it apart gone, is another
    counterexample), until none more can go; then the same again with :data:`RETRY_TRIES` times the tries and the
    shows (a candidate's earlier runs counted among them); at most ``max_cases`` cases in all, and no candidate
    begun ``seconds`` after the shrink began (by default :data:`SHRINK_SECONDS_REALTIME` on a system that runs on
    real time, no bound on a virtual clock; None: none)."""
    if max_cases is BY_SYSTEM:
        max_cases = SHRINK_CASES
    if seconds is BY_SYSTEM:
        caps = getattr(adapter, "capabilities", None)
        seconds = SHRINK_SECONDS_REALTIME if caps is not None and caps().realtime else None
    ends = None if seconds is None else clock() + seconds
    timed_out = False
    setup = [op for op, _ in race.case.setup]
    scripts: dict[str, list[L.Op]] = {client: [] for client in race.case.started}
    for e in sorted(race.case.events, key=lambda e: e.invoked):
        scripts.setdefault(e.client, []).append(e.op)
    scripts = {client: ops for client, ops in scripts.items() if ops}
    after = [op for op, _ in race.case.after]
    best = (race.case, race.result)
    spent = 0

    # what each candidate tried showed so far (runs, shows, the first case that showed it): met again (on a later
    # pass to the fixed point, or on the second pass with more tries), a candidate's earlier runs count among its
    # tries, so that a candidate turned down is not run again on chance alone and the second pass gives it only the
    # runs it has not had
    seen: dict[tuple, tuple[int, int, tuple[ConcurrentCase, Linearization] | None]] = {}

    def races(candidate_setup: list[L.Op], candidate: dict[str, list[L.Op]],
              candidate_after: list[L.Op] | None = None, per: int = tries) -> bool:
        nonlocal spent, best, timed_out
        if not any(candidate.values()) or spent >= max_cases or (stop is not None and stop()):
            return False
        if ends is not None and clock() >= ends:
            timed_out = True
            return False
        key = (tuple(candidate_setup), tuple((c, tuple(ops)) for c, ops in sorted(candidate.items())),
               None if candidate_after is None else tuple(candidate_after))
        runs, shows, shown = seen.get(key, (0, 0, None))
        # as many shows as the first tries ask, in proportion: more tries are more evidence, never a rarer race
        need = SHRINK_SHOWS * per // tries
        for given in (per, 2 * per):
            n = min(given - runs, max_cases - spent)
            if n > 0:
                tried = try_again(adapter, candidate_setup, candidate,
                                  after if candidate_after is None else candidate_after, platform, n,
                                  case_id="shrink", set_aside=race.set_aside, enough=need - shows,
                                  rules=frozenset(race.result.rules) or None, start=runs)
                spent += tried.runs
                runs += tried.runs
                shows += tried.shows
                if tried.result is not None and tried.case is not None and shown is None:
                    shown = (tried.case, tried.result)
            if shows != need - 1 or spent >= max_cases:
                break
        if shows >= need and shown is not None:
            best = shown
            return True
        seen[key] = (runs, shows, shown)
        return False

    # to a fixed point, then again with each candidate given more tries and asked for as many more shows: a race
    # that shows only now and then may have lost a candidate to chance the first time
    for per in (tries, RETRY_TRIES * tries):
        changed = True
        while changed and spent < max_cases:
            changed = False
            for client in sorted(scripts, reverse=True):
                if len(scripts) > 1:
                    fewer = {c: ops for c, ops in scripts.items() if c != client}
                    less = _without_client(setup, client)
                    if races(less, fewer, per=per):
                        setup, scripts, changed = less, fewer, True
                        continue
                for i in reversed(range(len(scripts[client]))):
                    fewer = {**scripts, client: scripts[client][:i] + scripts[client][i + 1:]}
                    if races(setup, fewer, per=per):
                        scripts, changed = fewer, True
            for i in reversed(range(len(setup))):
                if isinstance(setup[i], L.Put):
                    less = setup[:i] + setup[i + 1:]
                    if races(less, scripts, per=per):
                        setup, changed = less, True
    # the drain after it as long as the messages left to drain need (one get more than the puts left)
    drains = [n for n, op in enumerate(after) if isinstance(op, L.Get) and op.conn == CHECK]
    puts = sum(isinstance(op, L.Put) for op in [*setup, *(op for ops in scripts.values() for op in ops)])
    if len(drains) > puts + 1:
        shorter = after[:drains[puts + 1]]
        if races(setup, scripts, shorter):
            after = shorter
    case, result = best
    return Shrunk(setup=tuple(setup), scripts={c: list(ops) for c, ops in scripts.items()}, case=case, result=result,
                  calls_before=len(race.case.events), calls_after=len(case.events), timed_out=timed_out)


__all__ = ["ConcurrentCase", "Race", "Shrunk", "Tried", "run_case", "search", "search_on", "search_races", "rerun",
           "try_again", "shrink", "setup_ops", "client_script", "after_ops", "expressed", "runnable_kinds", "race_file",
           "AFTER", "KINDS", "EXPLAINED"]
