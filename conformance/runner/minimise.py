"""Minimal counterexamples: delta debugging over a failure's recorded history.

Hypothesis shrinks the *choices* a machine made; it cannot remove what every
case of a machine does first (defining queues, connecting, opening handles), nor
an operation a later one happens to lean on.  Histories are data, so after
shrinking the kit minimises the history itself: it replays candidate
sub-histories against the adapter (a fresh case each, checked against the model
as in a run) and keeps a candidate only if it still fails in the same way (the
same differing fields and the same rules named) or names fewer of those rules,
the first still first, and none besides: a counterexample that leaves less in
doubt about which rule the system breaks (a backed-out disconnect shown by a
message missing, not by another one in its place that delivery order might also
explain), which is then the failure minimised.

The result is 1-minimal (removing any single remaining operation makes the
failure disappear or change), queue attributes the failure does not need are
dropped from definitions, message fields it does not need go back to MQ's
defaults, DLQ rules tables keep only the entries and keywords it needs (written
plainly), and handle and connection names are renumbered in order of appearance.
The first candidate keeps only the operations on the queue the failing call used
(and those on no queue: connections, units of work, restarts): most histories
carry a whole case's traffic on other queues, which one replay then removes. On
a system that runs on real time, where a replay takes seconds (a restart many),
the search is bounded by a count of replays, so that the same departure
minimises to the same history however fast the broker answers, with a time limit
only as a safety net; it keeps the smallest history found so far. A result that
does not reproduce once more is discarded in favour of the history Hypothesis
gave.

Where the minimal history still blames several rules for a value a message carries
from call to call (its BackoutCount), a browse of the message put in earlier can
show which step changed it: such a *witness* is added where the departure is then
blamed on fewer rules (:func:`_witnessed`).  Likewise where a get returned another message than
MQ's, or none, and several rules are blamed (a message lost by how a unit of work ended, or passed
over by the delivery order): an inquiry of the queue's depth before the get tells the two apart.
"""

from __future__ import annotations

import fnmatch
import re
import time
from typing import Callable

import attrs

from adapters.base import Adapter
from conformance.checker import sequential as K
from conformance.records.history import Failure
from conformance.records.results import Coverage
from conformance.runner.collector import collector_tuned
from conformance.runner.stack import with_frame_room
from reference_model import core, dlq_table
from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from reference_model.rules import RULES

#: Replays a minimisation may make on a system on a virtual clock (a replay takes milliseconds), so
#: that a slower system, or the same one behind a subprocess, minimises to the same history ...
REPLAYS_VIRTUAL = 5000
#: ... and the seconds it may take there at most (a safety net: the count is what bounds it).
BUDGET_VIRTUAL = 120.0
#: Histories longer than this are cut down first, and their puts under syncpoint made plain afterwards only
#: (:func:`_outside_units_of_work` diagnoses each candidate, and a diagnosis costs as much more as the history
#: is longer: ten of a 246-step trigger history took 90 s, and the minimiser's time limit then cut it short).
EARLY_DIAGNOSIS_STEPS = 60
#: Replays a minimisation may make on a system that runs on real time (a broker's replay without a restart takes
#: a tenth of a second or so: the published RabbitMQ CORE-30 history, 39 steps, minimised to 18 calls in 40
#: replays and to 13 in 100, in 11 s) ...
REPLAYS_REALTIME = 100
#: ... or this many for each step of the history given, where that is more: ddmin's replays grow with the history's
#: length, and a 29-step ActiveMQ expiry history the run had cut down from a longer one in 100 replays took 106 more
#: to reach 14 steps (a count fixed by the history alone, so that a seed still gives the same counterexample
#: however fast the broker answers).
REPLAYS_PER_STEP_REALTIME = 5
#: Replays spent at most looking for a part of a history that shows its departure when the whole history
#: replayed does not (an earlier step answered otherwise that time: a real system's timing): each part
#: that shows it is a counterexample the system did show again, where the whole is one it showed once.
REPLAYS_RESCUE = 12
#: ... and the seconds it may take there at most (a safety net: the count is what bounds it).
BUDGET_REALTIME = 240.0


class _Search:
    def __init__(self, failure: Failure, adapter: Adapter, budget: float,
                 set_aside: frozenset[str] = frozenset()) -> None:
        from adapters.reference import ReferenceAdapter

        self.failure = failure
        self.adapter = adapter
        #: Rules the run that found the failure had set aside (an earlier keep-going round found them
        #: broken): its history may pass through departures from them, which replays step past too.
        self.set_aside = frozenset(set_aside)
        self.deadline = time.monotonic() + budget
        self.replays = 0
        #: Replays the search may make (None: as many as its time allows).
        self.max_replays: int | None = None
        #: The model on its own (a witness's probe runs on it) ...
        self.model = ReferenceAdapter(platform=failure.platform)
        #: ... and what it made of the candidates so far (a candidate it cannot run is never sent to the system
        #: under test), as a tree of their operations (:meth:`well_formed`): each node maps an operation to the
        #: state the model reached with it (None: it could not run it) and the next node.  Candidates share
        #: their beginnings (each leaves out a part of one before), which are run once.
        self._start = model.initial_state(failure.platform)
        self._walked: dict = {}
        #: Set when the system under test failed (not a verdict): the search stops there.
        self.broken = False
        #: The failure the last replay found, the same as the one minimised or not.
        self.last: Failure | None = None
        #: The failure the last replay kept showed: the departure minimised as the history the search now stands on
        #: shows it (:meth:`fewer` diagnoses it, not the longer history minimising began with).
        self.kept: Failure | None = None
        #: Calls added to show which step changed a value (:func:`_witnessed`): the result may be longer
        #: than the history given by as many.
        self.witness = 0
        #: The rules a departure shown with a witness is blamed on: a candidate that shows it blamed on more (a
        #: witness's calls taken out again) is not the same departure.
        self.narrowed: frozenset[str] | None = None
        #: The rules each failure diagnosed so far is blamed on, by its history and mismatch (and the rules it came
        #: blamed on, if any): a diagnosis is a function of those (the run's set-aside rules and the system's expiry
        #: tolerance are the search's), and a replay often shows a departure an earlier one showed (a fifth of the
        #: diagnoses of the fault runs).
        self._blamed: dict[tuple, tuple[str, ...]] = {}
        #: The failure each history replayed showed, up to its failing call, where it was the one minimised (or
        #: one with fewer of its rules): what a stage diagnoses as the history it starts from (:meth:`shown`).
        self._shown: dict[tuple[L.Op, ...], Failure] = {}

    def shown(self, ops: list[L.Op]) -> Failure:
        """The failure ``ops`` showed when replayed (else the one minimised, as given): the history a stage
        measures its candidates against is the one it starts from, not the longer one minimising began with,
        whose diagnosis costs as much more as it is longer (a 246-step trigger history: most of a minute)."""
        return self._shown.get(tuple(ops), self.failure)

    def out_of_time(self) -> bool:
        return (self.broken or time.monotonic() >= self.deadline
                or self.max_replays is not None and self.replays >= self.max_replays)

    def well_formed(self, ops: list[L.Op]) -> bool:
        """The model can run ``ops`` (every handle and connection used exists, no name reused), taking the
        first of the outcomes it allows at each step.  The model is pure: the state a beginning of ``ops``
        leads to is the one it led to when an earlier candidate began the same way."""
        state, node = self._start, self._walked
        for op in ops:
            walked = node.get(op)
            if walked is None:
                try:
                    walked = (model.step(state, op)[0].state, {})
                except Exception:  # noqa: BLE001 - HistoryError and the like: not a history a program could make
                    walked = (None, None)
                node[op] = walked
            state, node = walked
            if state is None:
                return False
        return True

    def replay(self, ops: list[L.Op]) -> Failure | None:
        """The failure ``ops`` lead to, when it is the same as the one being minimised, or names fewer of
        its rules, its first still first, and none besides (which then becomes the one being minimised)."""
        from conformance.runner.session import NonConformance, Session

        if self.broken or not self.well_formed(ops):
            return None
        self.replays += 1
        f = self.failure
        session = Session(self.adapter, f.area, f.adapter_options, f.seed, coverage=Coverage(), platform=f.platform,
                          set_aside=self.set_aside,
                          named=frozenset(f.found_broken) if f.found_broken else self.set_aside - set(f.rules),
                          replaying=True)
        found = None
        #: How many of ``ops`` ran, the failing one included (what :meth:`reduce` keeps).
        self.ran = 0
        try:
            session.start_case()
            for op in ops:
                self.ran += 1
                session.execute(op)
        except NonConformance as exc:
            found = exc.failure
        except Exception:  # noqa: BLE001 - the system under test failed: stop searching, keep what was found
            self.broken = True
            found = None
        finally:
            try:
                session.end_case()
            except Exception:  # noqa: BLE001
                pass
        if found is None:
            return None
        self.last = found
        if self.same(found):
            self._shown[tuple(ops[:self.ran])] = found
            self.kept = found
            return found
        if set(found.rules) < set(f.rules) and found.rules[0] == f.rules[0] or self.fewer(found, self.ran):
            # the departure with fewer of its rules in play: a counterexample that leaves less in doubt
            # (which fields differ may change with it: a message missing instead of another in its place);
            # from here on it is the failure being minimised
            self.failure = found
            self._shown[tuple(ops[:self.ran])] = found
            self.kept = found
            return found
        return None

    def reduce(self, ops: list[L.Op]) -> list[L.Op] | None:
        """``ops`` up to the step that fails, when they fail the same way (else None).

        On a system that runs on real time the session puts clock advances of its own into the
        history it records (the time each call took); they are not part of the candidate, and a
        next candidate built from the recorded history would carry them on and add more.
        """
        if self.replay(ops) is None:
            return None
        return list(ops[:self.ran])

    def same(self, other: Failure) -> bool:
        if other.mismatch.fields != self.failure.mismatch.fields or set(other.rules) != set(self.failure.rules):
            return False
        return self.narrowed is None or set(self.blamed(other)) <= self.narrowed

    def blamed(self, failure: Failure) -> tuple[str, ...]:
        """The rules ``failure`` is blamed on (the run's set-aside rules stepped past)."""
        from conformance.records.history import blamed_rules

        key = (failure.steps, failure.mismatch, failure.mismatch.blamed)   # (blamed is not compared: one given)
        rules = self._blamed.get(key)
        if rules is None:
            rules = self._blamed[key] = blamed_rules(failure, self.adapter.capabilities().expiry_tolerance,
                                                     self.set_aside)
        return rules

    def fewer(self, found: Failure, steps: int) -> bool:
        """Whether ``found`` (after ``steps`` calls) is the departure minimised with fewer of its rules in doubt,
        whichever now comes first: named for fewer of its rules (in the same fields or in others), blamed on some of
        the rules the departure minimised is, none besides; named otherwise (other fields, another step), blamed on
        fewer of them.  A step that only adds a rule
        to the "one of" (a DLQ table changed but not in force, DLQ-10, named first as what a system most likely
        applied) can then go, though the checker then names another rule first.  The departure minimised is
        diagnosed as the history the search stands on shows it (:attr:`kept`), not as the longer one minimising
        began with, which may blame more rules (a 121-step trigger history) and whose length would keep any from
        being diagnosed: both histories must have :data:`EARLY_DIAGNOSIS_STEPS` steps or fewer (a long one costs
        most of a minute)."""
        f = self.failure
        kept = self.kept
        base = kept if kept is not None and kept.mismatch.fields == f.mismatch.fields \
            and set(kept.rules) == set(f.rules) else f
        if max(steps, len(base.steps)) > EARLY_DIAGNOSIS_STEPS:
            return False
        if set(found.rules) < set(f.rules):
            # in the same fields or in others, named for fewer rules and blamed on some of those the departure
            # minimised is: a field the blamed rule decides shown alone, where the history had shown it only
            # behind a difference of a rule the run had set aside (a forwarded message's lost context behind
            # another message in its place, which the delivery order set aside explains)
            return set() < set(self.blamed(found)) <= set(self.blamed(base))
        # a "one of" narrowed to one of them: a lower-priority message returned where MQ returns one its handle's
        # close should have unlocked (CORE-04 or CORE-21?), and, the queue holding the locked one alone, nothing
        # returned (CORE-21 alone)
        blamed = set(self.blamed(base))
        return len(blamed) > 1 and found.rules[0] in blamed and set() < set(self.blamed(found)) < blamed


@with_frame_room
@collector_tuned()
def minimise(failure: Failure, adapter: Adapter, budget: float | None = None,
             replays: int | None = None, set_aside: frozenset[str] = frozenset()) -> Failure:
    """The smallest history that still shows ``failure`` on ``adapter`` (``failure`` itself if none is found).

    ``budget`` (seconds) and ``replays`` bound the search; by default :func:`minimise_budget` and
    :data:`REPLAYS_REALTIME` on a system that runs on real time, :data:`REPLAYS_VIRTUAL` on one on a
    virtual clock: the count is what bounds it, so that a seed gives the same counterexample on a
    fast or a slow system (the time is a safety net; on real time :func:`realtime_replays`, more for a long
    history).  The replays that confirm the failure
    first and the result last are not counted.  When the first replay, the same operations on a
    fresh case, does not show ``failure`` (nor does a part of them), it is returned as it was, marked not
    reproduced: a departure that depends on a real system's timing is published as such, never as one that
    replaying it shows.  So is the smallest history a replay showed it with when that history, run again
    last, does not show it.  ``set_aside``: the rules the run that found ``failure`` had set aside, whose
    departures its replays step past as that run did.
    """
    realtime = adapter.capabilities().realtime
    if budget is None:
        budget = minimise_budget(adapter)
    if replays is None:
        replays = realtime_replays(failure) if realtime else REPLAYS_VIRTUAL
    search = _Search(failure, adapter, budget, set_aside)
    ops = search.reduce(_ops(failure))
    #: The history as found showed the departure again (else a part of it did, or none).
    whole = ops is not None
    if ops is None and not search.broken:
        ops = _rescue(_ops(failure), search)
    if ops is None:
        # not shown again (a real broker's timing, or the system failed on the replay): keep what Hypothesis
        # found, marked
        return attrs.evolve(failure, reproduced=False)
    search.max_replays = None if replays is None else search.replays + replays
    if realtime:
        # Most clock advances there are the time calls took, recorded by the session; a replay
        # records its own. Tried first all at once, as they are seldom what a failure needs.
        ops = search.reduce([op for op in ops if not isinstance(op, L.AdvanceClock)]) or ops
        # A real system's replays are few (each takes real time): what seldom matters goes first, in a few
        # replays that each try much at once (the calls that changed nothing as the system answered them; the
        # calls of the connection a failing commit or disconnect is of, on its queues)
        ops = _quieter(ops, search)
        ops = _connection_focus(ops, search)
    focused = _focus(ops)
    if len(focused) < len(ops):
        ops = search.reduce(focused) or ops
    ops = _plainer_gets(ops, search)
    ops = _plainer_failing_browse(ops, search)
    if len(ops) <= EARLY_DIAGNOSIS_STEPS:
        ops = _outside_units_of_work(ops, search)
    ops = _ddmin(search, ops)
    ops = _one_by_one(ops, search)
    merged = _merge(ops, search)
    if len(merged) < len(ops):
        ops = _one_by_one(merged, search)
    # once the history is small, a unit of work that only an operation now gone needed (a get under syncpoint
    # of the message put in it) may go: its puts made plain, its commit then removed
    plainer = _outside_units_of_work(ops, search)
    if plainer != ops:
        ops = _one_by_one(plainer, search)
    ops = _fewer_attributes(ops, search)
    ops = _plainer_tables(ops, search)
    ops = _plainer_messages(ops, search)
    shown, failing = search.failure, ops[-1] if ops else None
    ops = _witnessed(ops, search)
    if search.failure is not shown and ops and (isinstance(ops[-1], L.InquireQueue) or ops[-1] != failing
                                                or search.failure.mismatch.index < len(shown.steps) - 1):
        # the departure is now the witness's (another call, its inquiry, or an earlier step): what only the later
        # calls needed goes
        search.max_replays = None if search.max_replays is None else search.max_replays + len(ops)
        ops = _one_by_one(ops, search)
    renamed = _renumber(ops)
    search.max_replays = None   # the result is confirmed whatever the count
    final = search.replay(renamed) or search.replay(ops)
    if final is None:
        # the history the search ended on showed the departure and did not when it ran again (a real system's
        # timing, or the system failed): the smallest history that showed it, marked, not the one found first
        # as though it had been confirmed
        return attrs.evolve(_smallest_shown(failure, search), reproduced=False)
    if final.size > failure.size + search.witness:
        return failure if whole else attrs.evolve(failure, reproduced=False)
    return final


def _smallest_shown(failure: Failure, search: _Search) -> Failure:
    """The last history a replay of the search showed the departure with (the smallest it reached), else
    ``failure``."""
    kept = search.kept
    return kept if kept is not None and kept.size <= failure.size + search.witness else failure


def realtime_replays(failure: Failure) -> int:
    """The replays a minimisation of ``failure`` may make on a system that runs on real time."""
    return max(REPLAYS_REALTIME, REPLAYS_PER_STEP_REALTIME * len(failure.steps))


def _rescue(ops: list[L.Op], search: _Search) -> list[L.Op] | None:
    """A part of ``ops`` that shows the departure when ``ops`` replayed whole did not, within
    :data:`REPLAYS_RESCUE` replays (None if none does): the operations on the failing call's queue
    alone, then delta debugging.  A step before the failing one that answered otherwise on the replay (a
    real system's timing, a departure from another rule) keeps the whole from reaching the failing step;
    a part without it may reach it and show the same departure."""
    search.max_replays = search.replays + REPLAYS_RESCUE
    try:
        focused = _focus(ops)
        if len(focused) < len(ops):
            found = search.reduce(focused)
            if found is not None:
                return found
        n = 2
        while len(ops) >= 2 and not search.out_of_time():
            size = max(1, len(ops) // n)
            chunks = [ops[i:i + size] for i in range(0, len(ops), size)]
            for i in range(len(chunks)):
                candidate = [op for j, chunk in enumerate(chunks) if j != i for op in chunk]
                found = search.reduce(candidate) if candidate else None
                if found is not None:
                    return found
                if search.out_of_time():
                    return None
            if n >= len(ops):
                return None
            n = min(len(ops), 2 * n)
        return None
    finally:
        search.max_replays = None


def minimise_budget(adapter: Adapter) -> float:
    """Seconds :func:`minimise` spends at most on ``adapter`` unless told otherwise."""
    return BUDGET_REALTIME if adapter.capabilities().realtime else BUDGET_VIRTUAL


def _ops(failure: Failure) -> list[L.Op]:
    return [s.op for s in failure.steps]


def _queues_of(ops: list[L.Op]) -> Callable[[L.Op], str | None]:
    """The queue each of ``ops`` is on: the one it names (``queue``), or the one its handle was opened on in
    ``ops``; None for an operation on none (a connection's, a commit, a restart, a clock advance)."""
    opened = {op.handle: op.queue for op in ops if isinstance(op, L.Open)}

    def queue_of(op: L.Op) -> str | None:
        queue = getattr(op, "queue", None)
        if isinstance(queue, str) and queue:
            return queue
        handle = getattr(op, "handle", None)
        return opened.get(handle) if isinstance(handle, str) else None

    return queue_of


def _focus(ops: list[L.Op]) -> list[L.Op]:
    """``ops`` without the operations on queues other than the one the last (failing) operation used.

    An operation is on a queue when it names it (``queue``) or uses a handle opened on it;
    operations on none (connections, commits, backouts, restarts, clock advances) stay.
    """
    queue_of = _queues_of(ops)
    target = queue_of(ops[-1]) if ops else None
    if target is None:
        return ops
    return [op for op in ops if queue_of(op) in (None, target)]


#: Calls that change nothing when they fail: refused, they did none of their work (a get that found no message,
#: a put to a handle never opened or to a full queue).  Not those that end a unit of work or a connection, whose
#: failure says what happened to it.
QUIET_WHEN_FAILED = (L.Get, L.Put, L.Put1, L.Open, L.Close, L.DefineQueue, L.DefineRemoteQueue, L.DefineProcess,
                     L.AlterQueue, L.AlterQueueManager)


def _answers(ops: list[L.Op], failure: Failure) -> list[L.Observation | None]:
    """What the system answered each of ``ops`` with in ``failure``'s history (the same calls in the same order,
    with the clock advances a real-time session records between them): None where it is not there."""
    steps = failure.steps
    out: list[L.Observation | None] = []
    i = 0
    for op in ops:
        j = i
        while j < len(steps) and steps[j].op != op:
            j += 1
        if j < len(steps):
            out.append(steps[j].observed)
            i = j + 1
        else:
            out.append(None)
    return out


def _quieter(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """``ops`` without, all at once, the calls before the failing one that changed nothing as the system answered
    them (an inquiry, a call refused: :data:`QUIET_WHEN_FAILED`), where the departure still shows (one replay)."""
    if search.kept is None or len(ops) < 2:
        return ops
    answers = _answers(ops, search.kept)
    keep = [op for op, seen in zip(ops[:-1], answers) if not (
        isinstance(op, L.InquireQueue)
        or seen is not None and seen.cc == C.MQCC_FAILED and isinstance(op, QUIET_WHEN_FAILED))]
    if len(keep) == len(ops) - 1:
        return ops
    return search.reduce(keep + ops[-1:]) or ops


def _connection_focus(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Where the failing call is on a connection and no queue (a commit, a backout, a disconnect): ``ops`` with
    only that connection's calls and what is on no queue (definitions of the queues it uses kept), then, where
    that does not show the departure, the calls on the queues it uses by any connection (two replays at most)."""
    last = ops[-1] if ops else None
    conn = getattr(last, "conn", None)
    queue_of = _queues_of(ops)
    if not isinstance(conn, str) or queue_of(last) is not None:
        return ops
    used = {queue_of(op) for op in ops if getattr(op, "conn", None) == conn} - {None}
    own = [op for op in ops if getattr(op, "conn", None) == conn
           or getattr(op, "conn", None) is None and queue_of(op) in used | {None}]
    if len(own) < len(ops):
        found = search.reduce(own)
        if found is not None:
            return found
    on_queues = [op for op in ops if queue_of(op) in used | {None}]
    if len(on_queues) < len(ops):
        return search.reduce(on_queues) or ops
    return ops


def _ddmin(search: _Search, ops: list[L.Op]) -> list[L.Op]:
    """Zeller's ddmin over the operations: drop chunks while the failure stays."""
    n = 2
    while len(ops) >= 2 and not search.out_of_time():
        size = max(1, len(ops) // n)
        chunks = [ops[i:i + size] for i in range(0, len(ops), size)]
        reduced = False
        for i in range(len(chunks)):
            candidate = [op for j, chunk in enumerate(chunks) if j != i for op in chunk]
            found = search.reduce(candidate) if candidate else None
            if found is not None:
                ops = found
                n = max(n - 1, 2)
                reduced = True
                break
            if search.out_of_time():
                return ops
        if not reduced:
            if n >= len(ops):
                break
            n = min(len(ops), n * 2)
    return ops


#: Histories this long or shorter are also tried without each two neighbouring operations, once none can go alone.
PAIRS_UP_TO = 40


def _one_by_one(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Remove single operations, last first, until none can go (1-minimal); then, in a short history, two
    neighbouring ones at once (a message put and got only to be out of the way: neither can go alone)."""
    while not search.out_of_time():
        found = _without(ops, search, 1) or (_without(ops, search, 2) if len(ops) <= PAIRS_UP_TO else None)
        if found is None:
            break
        ops = found
    return ops


def _without(ops: list[L.Op], search: _Search, width: int) -> list[L.Op] | None:
    """The first history, removing ``width`` neighbouring operations from the last back, that still fails."""
    for i in range(len(ops) - width, -1, -1):
        if search.out_of_time():
            return None
        found = search.reduce(ops[:i] + ops[i + width:])
        if found is not None:
            return found
    return None


def _renamed(op: L.Op, field: str, old: str, new: str) -> L.Op:
    if field in {a.name for a in attrs.fields(type(op))} and getattr(op, field) == old:
        return attrs.evolve(op, **{field: new})
    return op


def _merge(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Let fewer connections, handles and clock advances do the same work, while the failure stays.

    Removing single operations cannot take away a connection or a handle that
    other operations use; merging can: a later connection's operations move to an
    earlier one (its MQCONN goes), a later handle on the same queue and connection
    becomes an earlier one opened with both sets of options (its MQOPEN and MQCLOSE
    go), and two clock advances become one.
    """
    for candidates in (_conn_merges, _clock_merges, _handle_merges):
        merged = True
        while merged and not search.out_of_time():
            merged = False
            for candidate in candidates(ops):
                if search.out_of_time():
                    return ops
                if search.replay(candidate) is not None:
                    ops, merged = candidate, True
                    break
    return ops


def _conn_merges(ops: list[L.Op]):
    """Each later connection's operations moved to an earlier one, its MQCONN gone."""
    conns = [op.conn for op in ops if isinstance(op, L.Connect)]
    for i, later in enumerate(conns):
        for earlier in conns[:i]:
            yield [_renamed(op, "conn", later, earlier) for op in ops
                   if not (isinstance(op, L.Connect) and op.conn == later)]


def _clock_merges(ops: list[L.Op]):
    """Two successive clock advances as one of their sum, at the place of either."""
    clocks = [i for i, op in enumerate(ops) if isinstance(op, L.AdvanceClock)]
    for a, b in zip(clocks, clocks[1:]):
        total = L.AdvanceClock(tenths=ops[a].tenths + ops[b].tenths)
        for keep, drop in ((b, a), (a, b)):
            yield [total if k == keep else op for k, op in enumerate(ops) if k != drop]


def _handle_merges(ops: list[L.Op]):
    """A later handle on the same queue and connection folded into an earlier one (both sets of options)."""
    opens = [op for op in ops if isinstance(op, L.Open)]
    for i, later in enumerate(opens):
        for earlier in opens[:i]:
            if (earlier.queue, earlier.conn) != (later.queue, later.conn) or earlier.handle == later.handle:
                continue
            both = attrs.evolve(earlier, options=earlier.options | later.options)
            yield [both if op == earlier else _renamed(op, "handle", later.handle, earlier.handle)
                   for op in ops if op != later and not (isinstance(op, L.Close) and op.handle == later.handle)]


def _fewer_attributes(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Drop queue attributes from definitions (they fall back to MQ's defaults) and alterations (the queue keeps
    what it had) while the failure stays, and then an alteration left with none.

    An attribute a broken rule is about (``MSGDLVSQ`` for priority order) stays, so
    that the reader sees it spelled out even when its value is the default.
    """
    about = {name for rule in search.failure.rules if rule in RULES
             for name in L.QUEUE_ATTRIBUTES if name in RULES[rule].summary}
    for i, op in enumerate(ops):
        if not isinstance(op, (L.DefineQueue, L.AlterQueue)):
            continue
        for name, _ in tuple(op.attrs):
            if name in about:
                continue
            if search.out_of_time():
                return ops
            current = ops[i]
            lighter = attrs.evolve(current, attrs=tuple((k, v) for k, v in current.attrs if k != name))
            candidate = ops[:i] + [lighter] + ops[i + 1:]
            if search.replay(candidate) is not None:
                ops = candidate
    # an alteration left with no attribute (it had one the departure needed until another call went) alters
    # nothing: it goes too, where the failure stays
    for i in reversed(range(len(ops))):
        if isinstance(ops[i], L.AlterQueue) and not ops[i].attrs and not search.out_of_time():
            candidate = ops[:i] + ops[i + 1:]
            if search.replay(candidate) is not None:
                ops = candidate
    return ops


#: The rules of gets that select by MsgId and CorrelId.
SELECTION_RULES = frozenset({"CORE-51", "CORE-52", "CORE-53", "CORE-54"})


#: How long a get made of a browse or of a selecting get waits (ms) where the get made plainly found nothing, and
#: from the first try on a system that runs on real time: a get right after the puts finds nothing on a broker that
#: dispatches to its consumers a moment later (ActiveMQ as it installs), or finds the message only at some tries;
#: one that waits takes the messages in the order its gets give them, which is what it is made to show.  MQ answers
#: a get that waits alike where a message is there.
WITNESS_WAIT_MS = 1000


def _waiting(op: L.Get) -> L.Get:
    """``op`` waiting :data:`WITNESS_WAIT_MS` for a message."""
    return attrs.evolve(op, options=op.options | C.MQGMO_WAIT, wait_interval=WITNESS_WAIT_MS)


def _made_get(op: L.Get, search: _Search) -> L.Get:
    """A get the minimiser made (of a browse, of a selecting get) as it is first tried: waiting on a system that runs
    on real time, else as it is."""
    return _waiting(op) if search.adapter.capabilities().realtime else op


def _found_nothing(search: _Search, made: list[L.Op], at) -> bool:
    """Whether the last replay of ``made`` (a history with gets the minimiser made at the steps ``at``) departed at
    one of those gets, not yet waiting, by finding nothing where a message waits: the same gets are worth a try
    waiting."""
    missed = search.last
    return missed is not None and missed.mismatch.index in at and missed.mismatch.observed.message is None \
        and not made[missed.mismatch.index].options & C.MQGMO_WAIT


def _plainer_gets(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Gets that select (MatchOptions) made plain gets where the failure stays, less the selection's rules:
    then it was not about selecting, and the reader is spared MatchOptions.  All at once, else one by one;
    once one goes, the failure being minimised is the one without those rules."""
    chosen = [i for i, op in enumerate(ops) if isinstance(op, L.GetMatching)]
    original = search.failure
    rules = tuple(r for r in original.rules if r not in SELECTION_RULES)
    if not chosen or not rules:
        return ops

    def bare(op: L.Op) -> L.Get:
        return L.Get(conn=op.conn, handle=op.handle, options=op.options, wait_interval=op.wait_interval)

    def plain(op: L.Op) -> L.Op:
        return _made_get(bare(op), search)

    def waiting(op: L.Op) -> L.Op:
        return _waiting(bare(op))

    search.failure = attrs.evolve(original, mismatch=attrs.evolve(original.mismatch, rules=rules))
    search.last = None
    current = _all_then_each(ops, chosen, plain, search.reduce, search)
    if current is ops and _found_nothing(search, [plain(op) if i in chosen else op for i, op in enumerate(ops)],
                                         chosen):
        current = _all_then_each(ops, chosen, waiting, search.reduce, search)
    if current is ops:
        search.failure = original
    return current


def _outside_units_of_work(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Puts under syncpoint made puts outside it, where the same departure is then blamed on fewer rules (a
    queue full by a committed put: how the unit of work ended was in doubt, now MAXDEPTH alone is broken),
    or on the same ones (a unit of work the departure does not need: its commit can then go).  All at once,
    then one by one."""
    chosen = [i for i, op in enumerate(ops) if isinstance(op, (L.Put, L.Put1)) and op.options & C.MQPMO_SYNCPOINT]
    if not chosen:
        return ops

    def blamed(failure) -> set[str]:
        return set(search.blamed(failure))

    # the failure minimised, diagnosed once (as ``ops`` show it), not again for every candidate measured against it
    minimised = [search.failure, blamed(search.shown(ops))]

    def plain(op: L.Op) -> L.Op:
        return attrs.evolve(op, options=(op.options & ~C.MQPMO_SYNCPOINT) | C.MQPMO_NO_SYNCPOINT)

    def fewer(candidate: list[L.Op]) -> list[L.Op] | None:
        """``candidate``, when it fails the same way with no more rules blamed (else the search is as it was)."""
        kept = search.failure
        if kept is not minimised[0]:
            minimised[:] = [kept, blamed(kept)]
        if search.replay(candidate) is not None and (fewer_rules := blamed(search.last)) <= minimised[1]:
            search.failure = search.last   # from here on the failure minimised is the one with fewer rules
            minimised[:] = [search.last, fewer_rules]
            return list(candidate[:search.ran])
        search.failure = kept
        return None

    return _all_then_each(ops, chosen, plain, fewer, search)


#: Fields a message carries from call to call, whose rules the model names by what changed the value since a
#: call last showed it (:func:`reference_model.core._count_rules`): a browse earlier in the history shows
#: which step changed it.
WITNESSED = frozenset({"message.backout_count"})
#: Places tried for such a browse, latest first (each a replay).
WITNESS_PLACES = 4


def _witnessed(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """A browse of the failing call's message put in earlier, where the departure is then blamed on fewer
    rules: a BackoutCount lost at a restart, with nothing between the backout and the restart that showed
    the count, is explained as well by a backout that never counted (each rule's relaxation alone passes
    the history); a browse after the backout that shows the count right leaves the restart alone to blame
    (one that shows it wrong is the departure, earlier and blamed on the backout).  Places are tried
    latest first, where the model says the message is on the queue for any connection to browse."""
    f = search.failure
    message = f.mismatch.observed.message
    if not ops or not isinstance(ops[-1], (L.Get, L.Put, L.Put1, L.InquireQueue)):
        return ops
    tolerance = search.adapter.capabilities().expiry_tolerance
    now = search.shown(ops)   # the departure as ``ops`` show it: what a witness must blame on fewer rules
    blamed = set(search.blamed(now))
    if len(blamed) < 2:
        rivals = _rivals(now, tolerance, search.set_aside, f.stepped_past())
        return _story_witnessed(ops, search, rivals, f.stepped_past()) if len(rivals) > 1 else ops
    marked = _mark_witnessed(ops, search, blamed) if any(r.startswith("SYNC-") for r in blamed) else None
    if marked is not None:
        return marked
    told = _browses_made_gets(ops, search, blamed) or _twin_witnessed(ops, search, blamed) \
        or _refresh_witnessed(ops, search, blamed) or _cursor_witnessed(ops, search, blamed)
    if told is not None:
        return told
    if isinstance(ops[-1], L.InquireQueue):
        # the same inquiry made earlier: a depth already wrong before later units of work ended is blamed on
        # what came before them alone (a put a first backout kept, not how a second one ended)
        return _depth_witnessed(ops, search, blamed, probe=[ops[-1]])
    if set(f.mismatch.fields) <= DEPTH_WITNESSED:
        return _depth_witnessed(ops, search, blamed)
    if message is None or not set(f.mismatch.fields) <= WITNESSED or not isinstance(ops[-1], L.Get):
        return ops
    queue, handle = _call_queue(ops), _witness_handle(ops)
    if queue is None:
        return ops
    _allow_witness_replays(search)
    tried = 0
    for place in range(len(ops) - 1, 0, -1):
        if tried >= WITNESS_PLACES or search.broken:
            break
        probe = _browse_probe(ops[:place], queue, handle, message.body, search)
        if probe is None:
            continue
        tried += 1
        shown = _with_probe(ops, place, probe, search, lambda found: set(found.mismatch.fields) <= WITNESSED and 0 < len(
            set(search.blamed(found))) < len(blamed))
        if shown is not None:
            return shown
    return ops


#: The body of the message a witness puts (:func:`_mark_witnessed`).
WITNESS_BODY = "witness"


def _mark_witnessed(ops: list[L.Op], search: _Search, blamed: set[str]) -> list[L.Op] | None:
    """A get of another message in the unit of work of a get that marked its message to skip backout, where the
    departure is then blamed on fewer of the rules (None where no such place does that): a marked message gone
    after an abnormal end is explained as well by the end committing the unit of work (CORE-31), or a backout
    losing what it should reinstate (CORE-15), as by the end honouring the mark (SYNC-07).  An unmarked get
    beside it tells them apart: if its message comes back, the mark alone was treated otherwise, and the rules of
    marks alone are to blame; if it does not, the unit of work's ending is, whatever became of the mark.  The
    other message is put just before the marked get (MQPUT1 outside syncpoint, priority 0, persistent, so that
    the marked get still takes its own message first and a restart keeps both) and got under syncpoint just
    after it.  Marked gets latest first, :data:`WITNESS_PLACES` at most."""
    if not search.adapter.capabilities().can(L.Put1):
        return None
    _allow_witness_replays(search)
    tried = 0
    for i in range(len(ops) - 2, -1, -1):
        op = ops[i]
        if not (isinstance(op, L.Get) and op.options & C.MQGMO_MARK_SKIP_BACKOUT):
            continue
        queue = next((o.queue for o in reversed(ops[:i]) if isinstance(o, L.Open) and o.handle == op.handle), None)
        if queue is None:
            continue
        if tried >= WITNESS_PLACES or search.broken:
            break
        put = L.Put1(conn=op.conn, queue=queue, body=WITNESS_BODY,
                     md=L.MessageDescriptor(priority=0, persistence=C.MQPER_PERSISTENT))
        get = L.Get(conn=op.conn, handle=op.handle, options=C.MQGMO_SYNCPOINT)
        candidate = [*ops[:i], put, op, get, *ops[i + 1:]]
        if not search.well_formed(candidate):
            continue
        tried += 1
        shown = _with_candidate(candidate, 2, search, _narrowing(search, blamed))
        if shown is not None:
            return shown
    return None


#: The plain local queue a twin witness puts its message to (:func:`_twin_witnessed`), a number added where the
#: history already names it.
TWIN_QUEUE = "WITNESS.Q"


def _twin_witnessed(ops: list[L.Op], search: _Search, blamed: set[str]) -> list[L.Op] | None:
    """The failing get's message put again, as it was put, to a plain local queue of its own, and got from there
    just before the failing get, where the departure is then blamed on fewer of the rules (None where that does
    not narrow it): a message that reached the queue it was got from by a route (put to a remote queue definition
    and got from the transmission queue, say) brings the rules of that route into the "one of".  An expired
    message got from a transmission queue is explained as well by a message never returned once expired being
    returned (EXP-06) as by the put giving the transmission header another expiry (EXP-18) or by expiry on a
    transmission queue (EXP-07); the same message put to a local queue at the same moment, got at the same
    moment, departs or not by the rules of any queue alone.  If it departs, that is the departure, earlier and
    blamed on them; if not, the route is to blame, and nothing is kept."""
    last = ops[-1]
    message = search.failure.mismatch.observed.message
    if not isinstance(last, L.Get) or message is None or not search.adapter.capabilities().can(L.Put1):
        return None
    queue = _call_queue(ops)
    put = next((i for i in range(len(ops) - 2, -1, -1) if isinstance(ops[i], (L.Put, L.Put1))
                and ops[i].body == message.body), None)
    if queue is None or put is None:
        return None
    original = ops[put]
    if isinstance(original, L.Put1):
        target, qmgr = original.queue, original.qmgr
    else:
        target, qmgr = next((o.queue for o in reversed(ops[:put]) if isinstance(o, L.Open)
                             and o.handle == original.handle), None), ""
    if target is None or (target == queue and not qmgr):
        return None   # put where it was got: no route to tell apart
    names = {getattr(o, "queue", None) for o in ops}
    twin_queue = next(name for name in (TWIN_QUEUE, *(f"{TWIN_QUEUE}{n}" for n in range(2, len(ops) + 3)))
                      if name not in names)
    handle = _witness_handle(ops)
    twin = [L.DefineQueue(queue=twin_queue),
            L.Put1(conn=original.conn, queue=twin_queue, body=WITNESS_BODY, md=original.md,
                   options=original.options)]
    got = [L.Open(conn=last.conn, handle=handle, queue=twin_queue, options=C.MQOO_INPUT_SHARED | (
               C.MQOO_BROWSE if last.options & (C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT) else 0)),
           attrs.evolve(last, handle=handle)]
    candidate = [*ops[:put + 1], *twin, *ops[put + 1:-1], *got, last]
    if not search.well_formed(candidate):
        return None
    _allow_witness_replays(search)
    return _with_candidate(candidate, len(twin) + len(got), search, _narrowing(search, blamed))


def _refresh_witnessed(ops: list[L.Op], search: _Search, blamed: set[str]) -> list[L.Op] | None:
    """The depth of each queue a REFRESH QMGR TYPE(EXPIRY) scanned, inquired just after it, where the departure is
    then blamed on fewer of the rules that explain it (None where none narrows it): an expiration report missing
    after a refresh is blamed on the reports' rules (the message discarded without one), as what the history
    shows, where the refresh leaving the expired message where it was (EXP-24) explains it as well, inferred.  A
    depth that still counts the message is the departure, earlier, and the refresh's; one that does not leaves
    the reports' rules to blame.  Refreshes latest first."""
    from conformance.checker.blame import REFRESH_RULE

    refreshes = [i for i, op in enumerate(ops[:-1]) if isinstance(op, L.RefreshExpiry)]
    if REFRESH_RULE in blamed or not refreshes or not search.adapter.capabilities().can(L.InquireQueue):
        return None
    tolerance = search.adapter.capabilities().expiry_tolerance
    known = search.failure.stepped_past()
    rivals = _rivals(search.shown(ops), tolerance, search.set_aside, known)
    if REFRESH_RULE not in rivals:
        return None
    defined = list(dict.fromkeys(op.queue for op in ops if isinstance(op, L.DefineQueue)))
    _allow_witness_replays(search)
    for i in reversed(refreshes):
        pattern = ops[i].queues
        for queue in [q for q in defined if fnmatch.fnmatchcase(q, pattern)][:WITNESS_PLACES]:
            probe = [L.InquireQueue(queue=queue, names=("CURDEPTH",))]
            if search.broken or not search.well_formed(ops[:i + 1] + probe + ops[i + 1:]):
                continue
            shown = _with_probe(ops, i + 1, probe, search, _fewer_rivals(search, rivals, known))
            if shown is not None:
                return shown
    return None


def _call_queue(ops: list[L.Op]) -> str | None:
    """The queue the last of ``ops`` (the failing call) acts on: its own, or its handle's."""
    last = ops[-1]
    if isinstance(last, (L.InquireQueue, L.Put1)):
        return last.queue
    handle = getattr(last, "handle", None)
    return next((op.queue for op in ops if isinstance(op, L.Open) and op.handle == handle), None)


def _witness_handle(ops: list[L.Op]) -> str:
    """A handle name ``ops`` do not open, for a witness's browse."""
    handles = {op.handle for op in ops if isinstance(op, L.Open)}
    return next(f"w{n}" for n in range(1, len(handles) + 2) if f"w{n}" not in handles)


def _cursor_witnessed(ops: list[L.Op], search: _Search, blamed: set[str]) -> list[L.Op] | None:
    """A call under the cursor that selects and found nothing there reads as a selection applied, which MQ ignores
    there (CORE-53), and as well as a cursor that lost its message (CORE-20): the same call as a browse under the
    cursor, just after a browse under the cursor that selects nothing, tells them apart.  Where the plain browse
    returns the message and the selecting one does not, the selection is to blame; where the plain one finds
    nothing, the cursor is (that is the departure then, earlier); where the selecting browse returns the message,
    nothing is kept (a destructive get that selects and finds nothing may still be either: its replay without the
    selection, :func:`_plainer_gets`, is what shows the cursor to blame)."""
    last = ops[-1]
    if not ({"CORE-53", "CORE-20"} <= blamed and isinstance(last, L.GetMatching) and core.selects(last)
            and last.options & core.UNDER_CURSOR):
        return None
    browse = attrs.evolve(last, options=C.MQGMO_BROWSE_MSG_UNDER_CURSOR)
    plain = L.Get(conn=last.conn, handle=last.handle, options=C.MQGMO_BROWSE_MSG_UNDER_CURSOR)
    candidate = [*ops[:-1], plain, browse]
    if not search.well_formed(candidate):
        return None
    _allow_witness_replays(search)
    return _with_candidate(candidate, 1, search, _narrowing(search, blamed))


def _allow_witness_replays(search: _Search) -> None:
    """Give a witness's search its own :data:`WITNESS_PLACES` replays beyond what minimising has spent."""
    if search.max_replays is not None:
        search.max_replays = max(search.max_replays, search.replays) + WITNESS_PLACES


def _with_probe(ops: list[L.Op], place: int, probe: list[L.Op], search: _Search, better) -> list[L.Op] | None:
    """``ops`` with ``probe`` put in at ``place``, up to the step that departs, where the departure it shows is
    ``better`` (then the failure minimised from here on); else None, the search as it was."""
    return _with_candidate(ops[:place] + probe + ops[place:], len(probe), search, better)


def _narrowing(search: _Search, blamed: set[str]):
    """Whether a departure a witness shows is blamed on some of ``blamed`` but not all (what a witness is kept for)."""
    return lambda found: set() < set(search.blamed(found)) < blamed


def _fewer_rivals(search: _Search, rivals: set[str], known: frozenset[str]):
    """Whether a departure a witness shows is explained alone by some of ``rivals`` but not all, none besides (the
    rules it is blamed on and those that gave way to them as a story inferred: :func:`_rivals`)."""
    tolerance = search.adapter.capabilities().expiry_tolerance
    return lambda found: 0 < len(told := _rivals(found, tolerance, search.set_aside, known)) < len(rivals) \
        and told <= rivals


def _with_candidate(candidate: list[L.Op], added: int, search: _Search, better) -> list[L.Op] | None:
    """``candidate`` (a history with ``added`` calls put in to show something), up to the step that departs,
    where the departure it shows is ``better``; else None, the search as it was."""
    kept = search.failure
    search.last = None
    search.replay(candidate)   # (whatever rules the checker names: the blame decides)
    found = search.last
    if found is not None and better(found):
        search.failure = found
        search.witness = added
        search.narrowed = frozenset(search.blamed(found))
        return list(candidate[:search.ran])
    search.failure = kept
    return None


def _rivals(failure: Failure, tolerance: int, set_aside: frozenset[str], known: frozenset[str]) -> set[str]:
    """The rules that explain ``failure`` alone (``known``: those found broken before, never on trial): those it
    is blamed on, and those that gave way to them only because the story they tell is inferred (a default
    resolved otherwise at a put, where nothing shows it)."""
    from conformance.checker.blame import blame

    found = blame(failure.steps, failure.mismatch, failure.platform, tolerance, set_aside, known)
    return set(found.rules) | set(found.inferred)


def _story_witnessed(ops: list[L.Op], search: _Search, rivals: set[str], known: frozenset[str]) -> list[L.Op]:
    """A browse of a message put to the failing call's queue, put in earlier, where the departure is then blamed
    on fewer of ``rivals`` (none besides): a message put as the queue's default persistence that a restart
    kept is explained as well by the restart keeping a non-persistent message (CORE-32) as by the put making
    it persistent (CORE-10), where nothing showed its persistence; a browse before the restart shows it (the
    departure, earlier, and the put's).  Messages latest put first, places latest first."""
    queue = _call_queue(ops)
    if queue is None or not search.adapter.capabilities().can(L.Get):
        return ops
    on_queue = {op.handle for op in ops if isinstance(op, L.Open) and op.queue == queue}
    bodies = list(dict.fromkeys(op.body for op in reversed(ops[:-1]) if isinstance(op, L.Put) and op.handle in on_queue
                                or isinstance(op, L.Put1) and op.queue == queue))
    handle = _witness_handle(ops)
    _allow_witness_replays(search)
    tried = 0
    for body in bodies[:WITNESS_PLACES]:
        for place in range(len(ops) - 1, 0, -1):
            if tried >= WITNESS_PLACES or search.broken:
                return ops
            probe = _browse_probe(ops[:place], queue, handle, body, search)
            if probe is None:
                continue
            tried += 1
            shown = _with_probe(ops, place, probe, search, _fewer_rivals(search, rivals, known))
            if shown is not None:
                return shown
            break   # the latest place the message is there to browse: earlier ones show no more of it
    return ops


#: Fields of a get that returned another message than MQ's, or none (a message lost and one passed over by
#: the order look alike there), and of a put accepted on a full queue or refused on one with room (the
#: queue's depth miscounted, or the check at the put): the queue's depth before the call tells them apart.
DEPTH_WITNESSED = frozenset({"message.body", "message", "rc"})


def _depth_witnessed(ops: list[L.Op], search: _Search, blamed: set[str],
                     probe: list[L.Op] | None = None) -> list[L.Op]:
    """An inquiry of the failing get's (or put's) queue's depth put in earlier, where the departure is then
    blamed on fewer of the rules (none besides): another message returned in place of MQ's is explained as
    well by the order passing it over as by a unit of work's ending (a commit that backed out, a backout
    that lost it) that left it off the queue.  A depth that counts it leaves the order alone to blame; one
    that does not is the departure, earlier, and blamed on what removed it.  So for a put accepted on a
    full queue: a depth that counts the uncommitted puts leaves the check at the put alone to blame
    (CORE-27, not CORE-28).  Places are tried latest first."""
    if not search.adapter.capabilities().can(L.InquireQueue):
        return ops
    if probe is None:
        queue = _call_queue(ops)
        if queue is None:
            return ops
        probe = [L.InquireQueue(queue=queue, names=("CURDEPTH",))]
    _allow_witness_replays(search)
    queue = probe[0].queue if isinstance(probe[0], L.InquireQueue) else None
    effects = _effect_places(ops, search, queue, blamed) if queue is not None else []
    tried = 0
    for place in dict.fromkeys([*effects, *range(len(ops) - 1, 0, -1)]):
        if tried >= WITNESS_PLACES or search.broken:
            break
        if isinstance(ops[place - 1], L.InquireQueue) or not search.well_formed(ops[:place] + probe + ops[place:]):
            continue
        tried += 1
        shown = _with_probe(ops, place, probe, search, _narrowing(search, blamed))
        if shown is not None:
            return shown
    return ops


def _effect_places(ops: list[L.Op], search: _Search, queue: str, blamed: set[str]) -> list[int]:
    """Where a depth seen tells the blamed rules apart: just after each step at which one of them began to
    bear on ``queue``'s depth, latest first (a message it removed, or one it brought or kept there).  A
    restart that discarded a non-persistent message, long before a commit cut in flight left the queue
    one too deep, is as good a reading of that depth as the commit: the depth seen after the restart
    tells which.  Read off the model following the recorded history (none where ``ops`` is not it)."""
    steps = search.failure.steps
    if [s.op for s in steps[:len(ops)]] != ops:
        return []
    tracker = K.ModelTracker(search.failure.platform, expiry_tolerance=search.adapter.capabilities().expiry_tolerance,
                             set_aside=search.set_aside)
    before: set[str] = set()
    places: list[int] = []
    for i, step in enumerate(steps[:len(ops) - 1]):
        if not K._follow(tracker, step.op, step.observed):
            break
        now = {r for state in tracker.candidates if queue in state.queues
               for r in (*state.queues[queue].departures,
                         *(p for m in state.queues[queue].messages for p in m.provenance))}
        if (now - before) & blamed:
            places.append(i + 1)
        before = now
    return places[::-1]


def _browse_probe(before: list[L.Op], queue: str, handle: str, body: str, search: _Search) -> list[L.Op] | None:
    """Operations that browse message ``body`` on ``queue`` after ``before`` (a handle opened to browse,
    browsed to the message, closed), on a connection open there; where a unit of work holds the message
    (got under syncpoint, a restart to back it out), that unit of work backed out first, which counts as
    the restart's backout would.  None where the model has the message nowhere a browse reaches."""
    conns = list(dict.fromkeys(op.conn for op in reversed(before) if isinstance(op, L.Connect)))
    model = search.model
    for conn in conns:
        model.start_case("witness", search.failure.platform)
        try:
            for op in before:
                model.execute(op)
            ops: list[L.Op] = []
            for _ in range(2):   # a get marked to skip backout leaves its unit of work at the first backout
                held = sorted({m.got_by for q in model.state.queues.values() for m in q.messages
                               if m.body == body} - {None})
                ops += [L.Backout(conn=c) for c in held]
                if any(model.execute(L.Backout(conn=c)).cc == C.MQCC_FAILED for c in held):
                    break
            ops.append(L.Open(conn=conn, handle=handle, queue=queue, options=C.MQOO_BROWSE))
            if model.execute(ops[-1]).cc == C.MQCC_FAILED:
                continue
            for n in range(4):
                browse = C.MQGMO_BROWSE_NEXT if n else C.MQGMO_BROWSE_FIRST
                ops.append(L.Get(conn=conn, handle=handle, options=browse | C.MQGMO_NO_SYNCPOINT, wait_interval=0))
                got = model.execute(ops[-1])
                if got.message is None:
                    break
                if got.message.body == body:
                    return ops + [L.Close(conn=conn, handle=handle)]
        except Exception:  # noqa: BLE001 - a history the model cannot run there: no probe
            continue
    return None


def _all_then_each(ops: list[L.Op], chosen: list[int], plain, attempt, search: _Search) -> list[L.Op]:
    """``ops`` with the operations at ``chosen`` made ``plain``: all at once where ``attempt`` (a candidate to
    the operations kept, or None) takes that, else one by one, last first, each it takes."""
    found = attempt([plain(op) if i in chosen else op for i, op in enumerate(ops)])
    if found is not None:
        return found
    current = ops
    for i in reversed(chosen):
        if search.out_of_time() or i >= len(current):
            break
        current = attempt(current[:i] + [plain(current[i])] + current[i + 1:]) or current
    return current


def _plainer_failing_browse(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """A failing BROWSE_FIRST made a destructive get where that shows the departure with fewer rules
    broken (a delivery order broken shows in a browse as in a get; the browse adds its own rule, which a
    get need not leave in doubt).  Only the failing call: an earlier one would change what follows (a failing
    BROWSE_NEXT and the browses before it are a witness's, :func:`_browses_made_gets`)."""
    if not ops:
        return ops
    last = ops[-1]
    browse = C.MQGMO_BROWSE_FIRST
    if type(last) is not L.Get or not last.options & browse or last.options & (C.MQGMO_BROWSE_ANY & ~browse):
        return ops
    plain = _made_get(attrs.evolve(last, options=last.options & ~(browse | C.MQGMO_LOCK | C.MQGMO_UNLOCK)), search)
    before = search.failure.rules
    search.last = None
    if search.replay(ops[:-1] + [plain]) is None:
        if not _found_nothing(search, ops[:-1] + [plain], {len(ops) - 1}):
            return ops
        # the get found nothing where a message waits: the get waiting (:data:`WITNESS_WAIT_MS`)
        plain = _waiting(plain)
        if search.replay(ops[:-1] + [plain]) is None:
            return ops
    if search.failure.rules == before:
        return ops
    return ops[:-1] + [plain]


def _browses_made_gets(ops: list[L.Op], search: _Search, blamed: set[str]) -> list[L.Op] | None:
    """A failing BROWSE_NEXT that returned a message out of the queue's delivery order reads as a browse cursor
    that passed messages over (CORE-19) as well as a delivery order broken for every get (CORE-04 on a priority
    queue): the browses of its handle up to it (from its latest BROWSE_FIRST), made destructive gets, take the
    messages in the order a get does.  Where they depart, blamed on fewer of the rules, that is the departure
    (the order of gets); where they do not (None), the cursor alone is to blame and the browses stay.  Gets that
    found nothing where a message waits (the departure of another rule) are tried again waiting (MQGMO_WAIT,
    :data:`WITNESS_WAIT_MS`)."""
    last = ops[-1]
    if type(last) is not L.Get or not last.options & C.MQGMO_BROWSE_NEXT:
        return None
    browses = [i for i, op in enumerate(ops) if type(op) is L.Get and op.handle == last.handle
               and op.options & (C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT)]
    start = max((i for i in browses if ops[i].options & C.MQGMO_BROWSE_FIRST), default=browses[0])
    made = {i for i in browses if i >= start}
    if any(ops[i].options & (C.MQGMO_BROWSE_ANY & ~(C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT)) for i in made):
        return None
    candidate = [_made_get(attrs.evolve(op, options=op.options & ~(C.MQGMO_BROWSE_FIRST | C.MQGMO_BROWSE_NEXT
                                                                  | C.MQGMO_LOCK | C.MQGMO_UNLOCK)), search)
                 if i in made else op for i, op in enumerate(ops)]
    if not search.well_formed(candidate):
        return None
    told = _with_candidate(candidate, 0, search, _narrowing(search, blamed))
    if told is not None or not _found_nothing(search, candidate, made):
        return told
    waiting = [_waiting(op) if i in made else op for i, op in enumerate(candidate)]
    if not search.well_formed(waiting):
        return None
    _allow_witness_replays(search)
    return _with_candidate(waiting, 0, search, _narrowing(search, blamed))


def _try(ops: list[L.Op], i: int, op: L.Op, search: _Search) -> list[L.Op] | None:
    """``ops`` with its ``i``-th operation replaced by ``op``, when that fails the same way."""
    return search.reduce(ops[:i] + [op] + ops[i + 1:])


def _plainer_tables(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Rules tables down to the entries and keywords the failure needs, written plainly.

    A table the failure still shows with is first written one entry a line, keywords as
    ``NAME(value)``; then whole entries go (the last first), then single keywords.  A table the
    handler refuses, or one whose spelling the failure needs (a continuation, a comment), stays
    as it was.
    """
    i = 0
    while i < len(ops):
        table = getattr(ops[i], "table", None)
        entries = dlq_table.entries(table) if isinstance(table, str) else None
        if entries is None:
            i += 1
            continue

        def written(entries: list, op: L.Op = ops[i]) -> L.Op:
            return attrs.evolve(op, table=dlq_table.spell(entries))

        if dlq_table.spell(entries) != table:
            found = _try(ops, i, written(entries), search)
            if found is None:
                i += 1
                continue
            ops = found
        for j in range(len(entries) - 1, -1, -1):
            if search.out_of_time() or i >= len(ops):
                return ops
            fewer = entries[:j] + entries[j + 1:]
            found = _try(ops, i, written(fewer), search) if fewer else None
            if found is not None:
                ops, entries = found, fewer
        for j in range(len(entries)):
            for name in [name for name, _, _ in entries[j] if name != "ACTION"]:
                if search.out_of_time() or i >= len(ops):
                    return ops
                lighter = entries[:j] + [tuple(k for k in entries[j] if k[0] != name)] + entries[j + 1:]
                found = _try(ops, i, written(lighter), search)
                if found is not None:
                    ops, entries = found, lighter
        i += 1
    return ops


def _defaults(value) -> list:
    """``value`` (an attrs value of the language) with one field put back to its default, for each field
    that is not at it; a field holding such a value is first put back whole, then field by field."""
    out = []
    for field in attrs.fields(type(value)):
        current = getattr(value, field.name)
        if field.default is attrs.NOTHING or current == field.default:
            continue
        out.append(attrs.evolve(value, **{field.name: field.default}))
        if attrs.has(type(current)):
            out += [attrs.evolve(value, **{field.name: inner}) for inner in _defaults(current)]
    return out


def _plainer_messages(ops: list[L.Op], search: _Search) -> list[L.Op]:
    """Message descriptors, their context and MQDLHs with the fields the failure does not need put
    back to MQ's defaults (a priority, a persistence, a reply-to queue the failure never reads).  The
    format of a message that begins with a header stays the header's, and so does the MsgId of every message
    where a DLQ handler runs: the handler's run reports each message's fate by its MsgId, and one that the
    queue manager generates is not a value the model can name."""
    by_id = any(isinstance(op, L.RunDlqHandler) for op in ops)
    for i in range(len(ops)):
        for part in ("md", "dlh"):
            if i >= len(ops):
                return ops
            value = getattr(ops[i], part, None)
            changed = True
            while changed and attrs.has(type(value)):
                changed = False
                for lighter in _defaults(value):
                    if part == "md" and lighter.format != value.format and \
                            (getattr(ops[i], "dlh", None) or getattr(ops[i], "xmit_header", None)):
                        continue   # a header's format names it: the message is read by it
                    if part == "md" and by_id and lighter.msg_id != value.msg_id:
                        continue
                    if search.out_of_time() or i >= len(ops):
                        return ops
                    found = _try(ops, i, attrs.evolve(ops[i], **{part: lighter}), search)
                    if found is not None:
                        ops, value, changed = found, lighter, True
                        break
    return ops


_CONN = re.compile(r"c\d+")


def _renumber(ops: list[L.Op]) -> list[L.Op]:
    """Handles h1, h2, ... and connections c1, c2, ... in order of first appearance."""
    handles: dict[str, str] = {}
    conns: dict[str, str] = {}

    def conn(name: str) -> str:
        if not _CONN.fullmatch(name):
            return name
        return conns.setdefault(name, f"c{len(conns) + 1}")

    def handle(name: str) -> str:
        return handles.setdefault(name, f"h{len(handles) + 1}")

    out = []
    for op in ops:
        changes = {}
        names = {a.name for a in attrs.fields(type(op))}
        if "conn" in names and isinstance(op.conn, str) and op.conn:
            changes["conn"] = conn(op.conn)
        if "handle" in names and isinstance(op.handle, str) and op.handle:
            changes["handle"] = handle(op.handle)
        out.append(attrs.evolve(op, **changes) if changes else op)
    return out
