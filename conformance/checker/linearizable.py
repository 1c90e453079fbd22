"""Concurrent histories judged against the sequential model: is there an order of the overlapping operations
that keeps real time and in which every answer is one MQ allows?

A concurrent case is a sequential set-up, then several clients each running operations on their own connection
at the same time, then an optional sequential check (a drain, an inquiry).  Each operation of the clients is an
:class:`Event`: who ran it, what it answered, and when it was invoked and when it returned (one monotonic clock).
The history is *linearizable* when some order of the events

* keeps real time: an event that returned before another was invoked comes before it;
* gives every event an answer the model allows at its place (the model's set of allowed outcomes, followed
  as the sequential checker follows a history: every state consistent with the answers so far);
* and leaves a state in which the sequential check passes.

An event whose effect is unknown (it timed out, its connection was cut: ``observed`` None, ``returned`` None)
may take effect at any point after its invocation, with any outcome, or never.

The search is Wing and Gong's, with Lowe's memo: a configuration (the events placed, the model's states) that
failed once is never searched again.  It is bounded: a search that reaches ``bound`` configurations ends
*indeterminate*, never linearizable.  When no order exists, the result is the longest prefix of an order that
was found and the event that no order could place after it, with the checker's mismatch there (its rules).

Its rules are blamed as a sequential history's are, on the longest order's history (and on any other as long,
placing other calls: where each is explained by another rule, the race breaks one of them); and, where what came
after the step every order breaks at can say more, by searching the whole history again with one thing relaxed:
every CURDEPTH answer unjudged, where the queue was drained after it (only the count departs: CORE-28), or each
commit that ran beside other calls free to make its puts available in parts (CORE-29).

Pure: the model alone, no system.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import attrs

from conformance.checker.blame import COMMIT_RULE, Blame, blame, commit_parts
from conformance.checker.sequential import Mismatch, ModelTracker, follow
from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from reference_model.state import ModelState

LINEARIZABLE, NOT_LINEARIZABLE, INDETERMINATE = "linearizable", "not linearizable", "indeterminate"
#: Configurations searched at most, by default, before a history is called indeterminate.
BOUND = 20_000


@attrs.frozen
class Event:
    """One operation of one client of a concurrent case."""

    client: str
    op: L.Op
    #: What it answered; None: unknown (it never returned, or its connection was cut while it was in flight).
    observed: L.Observation | None
    #: When it was invoked and when it returned (seconds on one monotonic clock); ``returned`` None: never.
    invoked: float
    returned: float | None

    def __attrs_post_init__(self) -> None:
        if (self.observed is None) != (self.returned is None):
            raise ValueError("an event has both an answer and a return time, or neither")
        if self.returned is not None and self.returned < self.invoked:
            raise ValueError("an event returned before it was invoked")


@attrs.frozen
class Linearization:
    """What the search found."""

    verdict: str
    #: Linearizable: a witness order (indexes into the events; events of unknown effect left out never took
    #: effect).  Otherwise: the longest prefix of an order found.
    order: tuple[int, ...] = ()
    #: Not linearizable: why the longest prefix could go no further (the set-up's own departure, the event no
    #: order could place after it, or the sequential check after every event), as the sequential checker says.
    mismatch: Mismatch | None = None
    #: Where the mismatch is: "setup", an event's index, or "after".
    at: str | int | None = None
    #: Configurations searched.
    explored: int = 0
    #: Not linearizable: the rules the longest order's history breaks, by counterfactual (conformance.checker.blame), as
    #: a sequential history's are blamed; empty where that could not be said (an event of unknown effect in it).
    #: Where no relaxation within blame's bounds explained it, the checker's first rule alone (``confirmed`` False),
    #: as a sequential history's blame gives: never every rule the checker named.
    blamed: tuple[str, ...] = ()
    #: ``blamed`` are more than one and each alone explains the longest order's history: the race shows that one of
    #: them is broken, not which (a verdict of *one of* for each, as for a sequential history).
    each: bool = False
    confirmed: bool = True

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules the race breaks: those blamed where blame could be made, else those the checker named."""
        if self.blamed:
            return self.blamed
        return self.mismatch.rules if self.mismatch is not None else ()

    @property
    def one_of(self) -> bool:
        """Whether the race breaks one of :attr:`rules`, not each of them."""
        return self.each and len(self.blamed) > 1


class Bounded(Exception):
    """The search reached its bound."""


def _tracker(platform: str, states: Sequence[ModelState], expiry_tolerance: int,
             set_aside: frozenset[str] = frozenset(), node: dict | None = None) -> ModelTracker:
    """A tracker at ``states`` (not empty) that counts no input classes: the search only asks what is allowed.
    ``node``: the place in the step memo the states were reached at (None: off the memo)."""
    tracker = ModelTracker(platform, initial=states[0], expiry_tolerance=expiry_tolerance, set_aside=set_aside,
                           classes=False, place=node)
    tracker.candidates = list(states)
    return tracker


def _any_outcome(states: Sequence[ModelState], op: L.Op) -> list[ModelState]:
    """The states after ``op`` whatever it answered: an event whose answer nobody saw."""
    out: list[ModelState] = []
    for state in states:
        for branch in model.step(state, op):
            if not any(branch.state is s or branch.state == s for s in out):
                out.append(branch.state)
    return out


def check(platform: str, setup: Iterable[tuple[L.Op, L.Observation]], events: Sequence[Event],
          after: Iterable[tuple[L.Op, L.Observation]] = (), bound: int = BOUND,
          expiry_tolerance: int = 0, set_aside: frozenset[str] = frozenset(),
          split_commits: bool = False) -> Linearization:
    """Whether the concurrent history (``setup``, then ``events`` overlapping, then ``after``) is linearizable.
    ``set_aside``: rules found broken already (a run that keeps going after a race): an answer that departs from
    them alone, as the sequential checker follows it then, does not rule an order out.  ``split_commits``: CORE-29
    relaxed as a race can break it: a commit may make some of its unit of work's puts available at one point
    while it runs, and the rest where it takes effect (:func:`_in_part`)."""
    setup = tuple(setup)
    events = tuple(events)
    after = tuple(after)
    set_aside = frozenset(set_aside)
    # the set-up in the step memo: every case of a kind starts with the same set-up, and its answers are the same
    tracker = ModelTracker(platform, expiry_tolerance=expiry_tolerance, set_aside=set_aside, memo=True,
                           classes=False)
    for n, (op, observed) in enumerate(setup):
        _, mismatch = follow(tracker, op, observed)
        if mismatch is not None:
            # a sequential departure before any client ran: blamed as one
            return Linearization(verdict=NOT_LINEARIZABLE, mismatch=mismatch, at="setup", **_verdict(
                _blamed_pairs(platform, list(setup[:n + 1]), mismatch, expiry_tolerance, set_aside)))
    returned = {i: e.returned for i, e in enumerate(events) if e.returned is not None}
    known = frozenset(returned)
    invoked = [e.invoked for e in events]

    # The events that returned, earliest return first; and every event in the order they are tried in where
    # several may come next: those that returned first (a call most often took effect before one that returned
    # after it), then those of unknown effect.
    by_end = sorted((end, i) for i, end in returned.items())
    tried_order = sorted(range(len(events)), key=lambda i: (
        events[i].returned is None, events[i].returned if events[i].returned is not None else 0.0, invoked[i]))

    def ready_after(done: frozenset) -> list[int]:
        """Of the events still to place, in the order they are tried, those no other of them returned before it
        was invoked: those invoked no later than the earliest return among the others."""
        ends = []
        for end, i in by_end:
            if i not in done:
                ends.append((end, i))
                if len(ends) == 2:
                    break
        first_end, first = ends[0] if ends else (math.inf, None)
        second_end = ends[1][0] if len(ends) > 1 else math.inf
        return [i for i in tried_order if i not in done and invoked[i] <= (second_end if i == first else first_end)]

    failed: dict[tuple, list[list[ModelState]]] = {}
    best: dict = {"order": (), "mismatch": None, "at": None}
    ties: list[dict] = []
    explored = 0

    def remember_failure(done: frozenset, states: list[ModelState], parted: frozenset) -> None:
        failed.setdefault((done, parted, frozenset(s.digest() for s in states)), []).append(states)

    def failed_before(done: frozenset, states: list[ModelState], parted: frozenset) -> bool:
        if not failed:   # (no digests to take before the search first went back)
            return False
        key = (done, parted, frozenset(s.digest() for s in states))
        return any(len(seen) == len(states) and all(any(a == b for b in seen) for a in states)
                   for seen in failed.get(key, ()))

    def note(order: tuple[int, ...], mismatch: Mismatch, at) -> None:
        if len(order) > len(best["order"]) or best["mismatch"] is None:
            best.update(order=order, mismatch=mismatch, at=at)
            ties.clear()
        elif len(order) == len(best["order"]) and len(ties) < MAX_TIES and at != "after" \
                and (set(order), at) != (set(best["order"]), best["at"]) \
                and all((set(order), at) != (set(t["order"]), t["at"]) for t in ties):
            # as long, with other calls placed (or the same calls, another failing): a reading of its own
            ties.append({"order": order, "mismatch": mismatch, "at": at})

    def search(done: frozenset, order: tuple[int, ...], states: list[ModelState],
               node: dict | None, parted: frozenset = frozenset()) -> tuple[int, ...] | None:
        nonlocal explored
        explored += 1
        if explored > bound:
            raise Bounded
        if known <= done:
            check_after = _tracker(platform, states, expiry_tolerance, set_aside, node)
            for op, observed in after:
                _, mismatch = follow(check_after, op, observed)
                if mismatch is not None:
                    note(order, mismatch, "after")
                    break
            else:
                return order
            # events of unknown effect still unplaced may yet take effect and let the check pass
        if failed_before(done, states, parted):
            return None
        ready = ready_after(done)
        for i in ready:
            event = events[i]
            if split_commits and i not in parted and isinstance(event.op, L.Commit) and event.observed is not None \
                    and event.observed.cc != C.MQCC_FAILED:
                # part of its puts made available here, the commit itself still to take effect
                for state in states:
                    for part in _in_part(state, event.op.conn):
                        found = search(done, order, [part], None, parted | {i})
                        if found is not None:
                            return found
            if event.observed is not None:
                # in the step memo, as the set-up was: the cases of a run start alike, and their first calls
                # are often the same calls answered alike from the same states
                tracker = _tracker(platform, states, expiry_tolerance, set_aside, node)
                _, mismatch = follow(tracker, event.op, event.observed)
                if mismatch is not None:
                    note(order, mismatch, i)
                    continue
                found = search(done | {i}, order + (i,), tracker.candidates, tracker._node, parted)
            else:
                after_it = _any_outcome(states, event.op)
                found = search(done | {i}, order + (i,), after_it, None, parted) if after_it else None
            if found is not None:
                return found
        remember_failure(done, states, parted)
        return None

    try:
        found = search(frozenset(), (), list(tracker.candidates), tracker._node)
    except Bounded:
        return Linearization(verdict=INDETERMINATE, order=best["order"], mismatch=best["mismatch"], at=best["at"],
                             explored=explored)
    if found is not None:
        return Linearization(verdict=LINEARIZABLE, order=found, explored=explored)
    if split_commits:
        return Linearization(verdict=NOT_LINEARIZABLE, order=best["order"], mismatch=best["mismatch"], at=best["at"],
                             explored=explored)
    blamed = _one_of_the_longest(
        [_blamed(platform, setup, events, after, longest, expiry_tolerance, set_aside) for longest in (best, *ties)])
    if _counts_alone(best, events, after) and (blamed is None or not set(blamed.rules) <= COUNT_RULES):
        blamed = _counted_wrong(platform, setup, events, after, bound, expiry_tolerance, set_aside, blamed)
    elif (blamed is None or blamed.rules != (COMMIT_RULE,)) and _commit_overlapped(events) \
            and COMMIT_RULE not in set_aside:
        blamed = _committed_in_parts(platform, setup, events, after, bound, expiry_tolerance, set_aside, blamed)
    return Linearization(verdict=NOT_LINEARIZABLE, order=best["order"], mismatch=best["mismatch"], at=best["at"],
                         explored=explored, **_verdict(blamed))


#: The rules of what CURDEPTH counts: CurrentQDepth's own (CORE-28), and that expired messages count until
#: they are discarded (EXP-11).
COUNT_RULES = frozenset({"CORE-28", "EXP-11"})
COUNTER_RULE = "CORE-28"


def _count_only(op: L.Op) -> bool:
    """An inquiry of CURDEPTH alone: it reads a count and changes nothing."""
    return isinstance(op, L.InquireQueue) and set(op.names) == {"CURDEPTH"}


def _empty(op: L.Op, observed: L.Observation | None) -> bool:
    return isinstance(op, L.Get) and observed is not None and observed.rc == C.MQRC_NO_MSG_AVAILABLE


def _counts_alone(best: dict, events: Sequence[Event], after) -> bool:
    """Whether the step every order broke at is an inquiry of CURDEPTH alone, and the queue was then seen, not
    only counted: a get found it empty in the check after the clients (past that step), or a client's get did,
    invoked when every other client's call but an inquiry had returned (so nothing could come after it)."""
    at = best["at"]
    if best["mismatch"] is None or at is None or at == "setup":
        return False
    op = after[best["mismatch"].index][0] if at == "after" else events[at].op
    if not _count_only(op):
        return False
    later = after[best["mismatch"].index + 1:] if at == "after" else after
    if any(_empty(o, observed) for o, observed in later):
        return True
    return any(_empty(e.op, e.observed) and all(
        other.client == e.client or _count_only(other.op) or (other.returned is not None
                                                             and other.returned < e.invoked)
        for other in events) for e in events)


def _counted_wrong(platform: str, setup, events: Sequence[Event], after, bound: int, expiry_tolerance: int,
                   set_aside: frozenset[str], blamed):
    """The blame of a race that broke every order at a CURDEPTH, the queue drained after it: where the same history with every answer of a
    CURDEPTH inquiry left unjudged is linearizable, every call and the check after them saw the queue's messages
    as MQ allows in some order, and only the count departs: CurrentQDepth's rule (CORE-28), confirmed by that
    search.  A rule of another story the longest order alone told (a got message still counted, which the drain
    after it refutes) is mentioned, not failed.  Otherwise, or where that search is indeterminate, ``blamed``."""
    judged = [e for e in events if not _count_only(e.op)]
    rest = [(op, observed) for op, observed in after if not _count_only(op)]
    passes = check(platform, setup, judged, rest, bound=bound, expiry_tolerance=expiry_tolerance,
                   set_aside=set_aside).verdict == LINEARIZABLE
    return _confirmed(COUNTER_RULE, blamed) if passes else blamed


def _in_part(state: ModelState, conn: str) -> list[ModelState]:
    """``state`` with some of ``conn``'s unit of work's puts made available, as its commit makes them (one stamp
    of arrival among the others), the rest still uncommitted for the commit to make available where it takes
    effect: one state for each part :func:`conformance.checker.blame.commit_parts` gives."""
    out: list[ModelState] = []
    for made in commit_parts(state, conn):
        s = state.clone()
        stamp = (s.next_seq, s.clock)
        for entry in made:
            m = s.find(entry.queue, entry.seq)
            if m is not None:
                s.queue(entry.queue).update(m, put_by=None, provenance=(COMMIT_RULE,), committed=stamp)
        s.next_seq = stamp[0] + 1
        own = s.conn(conn)
        own.uow = [e for e in own.uow if e not in made]
        out.append(s)
    return out


def _commit_overlapped(events: Sequence[Event]) -> bool:
    """Whether a commit that succeeded ran while another client's call did."""
    commits = [(e, e.returned) for e in events if isinstance(e.op, L.Commit) and e.observed is not None
               and e.returned is not None and e.observed.cc != C.MQCC_FAILED]
    return any(other.client != e.client and other.invoked < end
               and (other.returned is None or other.returned > e.invoked)
               for e, end in commits for other in events)


def _committed_in_parts(platform: str, setup, events: Sequence[Event], after, bound: int, expiry_tolerance: int,
                        set_aside: frozenset[str], blamed):
    """The blame of a race in which a commit ran while other calls did: where the whole history, the check after
    the clients included, is linearizable once a commit may make its puts available in parts while it runs (one
    part at a point of its own, the rest where the commit takes effect), the race shows what CORE-29 forbids (a
    commit's puts made available all at once), confirmed by that search: CORE-29 is failed, the rules the longest
    order's history alone was put down to mentioned.  Otherwise, or where that search is indeterminate,
    ``blamed``."""
    passes = check(platform, setup, events, after, bound=bound, expiry_tolerance=expiry_tolerance,
                   set_aside=set_aside, split_commits=True).verdict == LINEARIZABLE
    return _confirmed(COMMIT_RULE, blamed) if passes else blamed


def _confirmed(rule: str, blamed: Blame | None) -> Blame:
    """``rule`` failed alone, confirmed by a search of the whole history with it relaxed; the rules the longest
    order's history alone was put down to (``blamed``) mentioned."""
    mentioned = () if blamed is None else tuple(r for r in (*blamed.rules, *blamed.mentioned) if r != rule)
    return Blame(rules=(rule,), mentioned=mentioned)


#: Orders as long as the longest found, failing elsewhere, whose histories are blamed besides it, at most.
MAX_TIES = 3


def _one_of_the_longest(blames: list):
    """The blame of a race from those of its longest orders (the first found, then any as long that place other
    calls or fail at another): where they name other rules, each alone explaining its own order's history, the
    race shows that one of them is broken, not which (two overlapping calls, a get and a browse with LOCK that
    both had one message: the get did not remove it, or the lock did not hide it); otherwise the first's."""
    first = blames[0]
    others = [b for b in blames[1:] if b is not None]
    if first is None or not others or any(not b.confirmed or b.known or (len(b.rules) > 1 and not b.each)
                                          for b in (first, *others)):
        return first
    rules = tuple(dict.fromkeys(r for b in (first, *others) for r in b.rules))
    if rules == first.rules:
        return first
    return Blame(rules=rules, mentioned=tuple(dict.fromkeys(r for b in (first, *others) for r in b.mentioned
                                                            if r not in rules)), each=True)


def _verdict(blamed) -> dict:
    """A :class:`Linearization`'s fields from the blame of its history (None: none could be made)."""
    return {} if blamed is None else {"blamed": blamed.rules, "each": blamed.each, "confirmed": blamed.confirmed}


def _blamed(platform: str, setup, events: Sequence[Event], after, best: dict, expiry_tolerance: int,
            set_aside: frozenset[str] = frozenset()):
    """The blame (:class:`conformance.checker.blame.Blame`) of the longest order found, as a sequential history's:
    the set-up, the events in that order, then the one that could not follow (or the check's steps up to the one
    that failed); None where it cannot be said (an event of unknown effect placed in it)."""
    mismatch, at = best["mismatch"], best["at"]
    if mismatch is None or at is None or at == "setup":
        return None
    placed = [events[i] for i in best["order"]]
    if any(e.observed is None for e in placed):
        return None
    pairs = list(setup) + [(e.op, e.observed) for e in placed]
    if at == "after":
        pairs += list(after)[:mismatch.index + 1]
    else:
        pairs.append((events[at].op, events[at].observed))
    return _blamed_pairs(platform, pairs, mismatch, expiry_tolerance, set_aside)


def _blamed_pairs(platform: str, pairs: list, mismatch: Mismatch, expiry_tolerance: int, set_aside: frozenset[str]):
    return blame(pairs, attrs.evolve(mismatch, index=len(pairs) - 1), platform, expiry_tolerance, set_aside=set_aside)


__all__ = ["Event", "Linearization", "check", "LINEARIZABLE", "NOT_LINEARIZABLE", "INDETERMINATE", "BOUND"]
