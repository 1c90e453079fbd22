"""Every message accounted for after a crash: the final drain against what MQ keeps.

A crash case puts and gets messages while the broker is killed, paused and restarted, then drains every
queue.  What the drain found is judged message by message against the model's states after the same history
(every state consistent with the answers, so a call whose outcome nobody saw, cut in flight, leaves both
readings open):

========================  ==============================================================  ==========
class                     the drain ...                                                   a failure
========================  ==============================================================  ==========
``ok``                    found it once, where MQ has it in some reading                  no
``gone``                  did not find it, and MQ has it in no reading (consumed, backed  no
                          out, or not persistent across a restart)
``in doubt``              did not find it, and MQ has it in some readings only (its put   no
                          or commit was cut in flight: the broker's answer decides)
``lost``                  did not find it, and MQ has it in every reading                 yes
``duplicated``            found it twice, or found it after a get took it for good        yes
``kept``                  found it where MQ discarded it (a restart drops a message that  yes
                          is not persistent; a backout deletes a put)
``unexpected``            found a message nobody put                                      yes
========================  ==============================================================  ==========

Each failure names the rule it breaks: for one lost, what keeps it (CORE-32 after a restart, else what put
it there); for one duplicated or kept, what removed it for good (a get's rule, a restart's, a backout's), never the
outcome of a call cut in flight where another reading removed it otherwise: finding the message decides that
outcome (its unit of work was committed after all).
Pure: the model alone.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Sequence

import attrs

from conformance.checker.sequential import Mismatch, ModelTracker
from reference_model import language as L
from reference_model.state import ModelMessage, ModelState

OK, GONE, IN_DOUBT = "ok", "gone", "in doubt"
LOST, DUPLICATED, KEPT, UNEXPECTED = "lost", "duplicated", "kept", "unexpected"
CLASSES = (OK, GONE, IN_DOUBT, LOST, DUPLICATED, KEPT, UNEXPECTED)
FAILURES = frozenset({LOST, DUPLICATED, KEPT, UNEXPECTED})
#: Rules by which a get removes a message for good: one found again after them came back.
CONSUMED_BY = frozenset({"CORE-14", "CORE-16", "SYNC-04"})
#: The rule of a call cut in flight, whose outcome is in doubt: a reading in which it removed a message the drain
#: found is the reading the system did not take (it committed, or put, after all), not a rule it broke.
IN_DOUBT_RULE = "CORE-48"
#: How a failure that breaks one of several rules, not showing which, is named among the rules broken: a message
#: each reading of the history explains by a rule of its own, or a departure each of whose rules explains it alone.
ONE_OF = " or "


def _one_of(rules: tuple[str, ...]) -> tuple[str, ...]:
    """The rules of a message's failure where each reading of the history gives one of its own (what removed it,
    what keeps it): finding it there breaks one of them, not each."""
    return (ONE_OF.join(rules),) if len(rules) > 1 else rules


@attrs.frozen
class Account:
    """One message's fate."""

    body: str
    cls: str
    #: Where the drain found it (queue names, one per time found).
    found: tuple[str, ...] = ()
    #: The rules a failure breaks: what keeps the message, or what removed it ("A or B" where each reading of
    #: the history gives one of its own).
    rules: tuple[str, ...] = ()


@attrs.frozen
class Accounting:
    accounts: tuple[Account, ...] = ()
    #: The history departed before the drain (its first departure): nothing is accounted then.
    departed: Mismatch | None = None

    def counts(self) -> dict[str, int]:
        tally = Counter(a.cls for a in self.accounts)
        return {cls: tally[cls] for cls in CLASSES}

    @property
    def failures(self) -> tuple[Account, ...]:
        return tuple(a for a in self.accounts if a.cls in FAILURES)

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r for a in self.failures for r in a.rules))


def _put_bodies(steps: Sequence[tuple[L.Op, L.Observation]]) -> list[str]:
    """The bodies of the messages the history put (a put that failed put nothing)."""
    out = []
    for op, observed in steps:
        if isinstance(op, (L.Put, L.Put1)) and (observed is None or observed.cc != 2) and op.body not in out:
            out.append(op.body)
    return out


def _where(state: ModelState, body: str) -> tuple[str | None, ModelMessage | None]:
    """The queue holding committed message ``body`` in ``state`` where the drain (a connection of its own) can get
    it, and the message (None, None: not held, or held by a get in a unit of work still open, which makes it
    unavailable to everyone else until that unit of work ends: CORE-14)."""
    for name, q in state.queues.items():
        for m in q.messages:
            if m.body == body and m.put_by is None and m.got_by is None:
                return name, m
    return None, None


def _got_pending(state: ModelState, body: str) -> bool:
    """Whether committed message ``body`` is held by a get in a unit of work still open in ``state``."""
    return any(m.body == body and m.put_by is None and m.got_by is not None
               for q in state.queues.values() for m in q.messages)


def _classify(states: Sequence[ModelState], put: Sequence[str], found: Mapping[str, list[str]],
              put_at: Mapping[str, int], last_restart: int) -> list[Account]:
    """Each message judged by where the drain found it against ``states``, message by message (each may be
    judged by a reading of its own)."""
    accounts = []
    for body in put:
        places = [_where(s, body) for s in states]
        held = [(q, m) for q, m in places if q is not None and m is not None]
        seen = tuple(found.get(body, ()))
        # what removed it for good: each reading's leading reason (the rules of how it came follow it there); where
        # another reading removed it otherwise, not an in-doubt call's outcome, which finding it decides
        removed = tuple(dict.fromkeys(s.removed[body][0] for s in states if s.removed.get(body)))
        if seen and len(removed) > 1 and IN_DOUBT_RULE in removed:
            removed = tuple(r for r in removed if r != IN_DOUBT_RULE)
        if not seen:
            if not held:
                accounts.append(Account(body=body, cls=GONE))
            elif len(held) == len(states):
                # what keeps it: a restart since its put (CORE-32 keeps committed persistent messages), or else
                # what put it where it is (its provenance's leading rule)
                keeps = ("CORE-32",) if put_at[body] < last_restart else \
                    _one_of(tuple(dict.fromkeys(m.provenance[0] for _, m in held if m.provenance)))
                accounts.append(Account(body=body, cls=LOST, rules=keeps))
            else:
                accounts.append(Account(body=body, cls=IN_DOUBT))
        elif len(seen) > 1:
            accounts.append(Account(body=body, cls=DUPLICATED, found=seen, rules=_one_of(removed)))
        elif any(q == seen[0] for q, _ in held):
            accounts.append(Account(body=body, cls=OK, found=seen))
        elif not held and all(_got_pending(s, body) for s in states):
            # got in a unit of work still open (in every reading), yet the drain got it too
            accounts.append(Account(body=body, cls=DUPLICATED, found=seen, rules=("CORE-14",)))
        elif not held and set(removed) & CONSUMED_BY:
            accounts.append(Account(body=body, cls=DUPLICATED, found=seen, rules=_one_of(removed)))
        else:
            # discarded (or, in every reading, on another queue): MQ has it nowhere the drain found it
            accounts.append(Account(body=body, cls=KEPT, found=seen, rules=_one_of(removed)))
    for body, queues in found.items():
        if body not in put:
            accounts.append(Account(body=body, cls=UNEXPECTED, found=tuple(queues)))
    return accounts


def _failing(accounts: Sequence[Account]) -> int:
    return sum(a.cls in FAILURES for a in accounts)


def diagnosed(steps: Sequence[tuple[L.Op, L.Observation]], mismatch: Mismatch, platform: str,
              expiry_tolerance: int = 0) -> Mismatch:
    """``mismatch`` (of the history ``steps``) with the rules it breaks worked out by counterfactual, as a run's
    departures are (:func:`conformance.checker.blame.blame`): the step's rules name every rule of its allowed
    outcomes, of which the history may break only one (a message put under syncpoint returned behind one put
    after it breaks FIFO order, not the commit that made it available), or show only that one of two is broken."""
    from conformance.checker.blame import blame

    found = blame(steps, mismatch, platform, expiry_tolerance)
    return attrs.evolve(mismatch, blamed=found.rules, confirmed=found.confirmed, blamed_each=found.each,
                        blamed_either=found.either)


def departure_verdicts(mismatch: Mismatch) -> tuple[str, ...]:
    """What a departure is counted under: each rule it breaks (the checker's first rule where no relaxation
    explained it), or its rules joined by :data:`ONE_OF` where it breaks one of them without showing which."""
    if not (mismatch.blamed and mismatch.confirmed):
        return mismatch.rules[:1]
    if mismatch.blamed_each and len(mismatch.blamed) > 1:
        return (ONE_OF.join(mismatch.blamed),)
    if len(mismatch.blamed_either) > 1:
        return (*(r for r in mismatch.blamed if r not in mismatch.blamed_either), ONE_OF.join(mismatch.blamed_either))
    return mismatch.blamed


def account(platform: str, steps: Iterable[tuple[L.Op, L.Observation]], drained: Mapping[str, Sequence[str]],
            expiry_tolerance: int = 0) -> Accounting:
    """Each message of the history (``steps``, up to the drain) judged by where the drain found it
    (``drained``: queue -> the bodies read from it).

    Each message is judged by the reading of the history that suits it best; but the drain is one outcome, so
    where no single reading explains it as well (a unit of work in doubt of which some messages were committed
    and others not), the messages are judged by the reading that explains most, and those only the mix of
    readings let pass break the in-doubt rule: a call cut in flight was carried out or not, never in part."""
    steps = list(steps)
    tracker = ModelTracker(platform, expiry_tolerance=expiry_tolerance)
    in_doubt = False
    for op, observed in steps:
        check = tracker.advance(op, observed)
        if check.mismatch is not None:
            return Accounting(departed=diagnosed(steps, check.mismatch, platform, expiry_tolerance))
        in_doubt = in_doubt or check.in_doubt
    states = tracker.candidates
    found: dict[str, list[str]] = {}
    for queue, bodies in drained.items():
        for body in bodies:
            found.setdefault(body, []).append(queue)
    put = _put_bodies(steps)
    put_at = {body: next(i for i, (op, _) in enumerate(steps) if getattr(op, "body", None) == body) for body in put}
    last_restart = max((i for i, (op, _) in enumerate(steps) if isinstance(op, L.Restart)), default=-1)
    accounts = _classify(states, put, found, put_at, last_restart)
    if len(states) > 1:
        # the readings that explain the drain best, each as a whole: the messages judged by those alone
        readings = [(_classify([s], put, found, put_at, last_restart), s) for s in states]
        fewest = min(_failing(judged) for judged, _ in readings)
        mixed = accounts
        accounts = _classify([s for judged, s in readings if _failing(judged) == fewest], put, found, put_at,
                             last_restart)
        if _failing(accounts) < fewest:
            # those readings explain it only mixed: judged by the first of them
            accounts = next(judged for judged, _ in readings if _failing(judged) == fewest)
        if fewest > _failing(mixed) and in_doubt:
            # a message only a mix of readings lets pass: the calls cut in flight were carried out in part
            alone = {a.body for a in mixed if a.cls in FAILURES}
            accounts = [attrs.evolve(a, rules=(IN_DOUBT_RULE,)) if a.cls in FAILURES and a.body not in alone else a
                        for a in accounts]
        # not found, and held in some readings of the history only: in doubt (the system's choice unconfirmed),
        # whichever reading the drain is judged by
        held_somewhere = {body for body in put if any(_where(s, body)[0] is not None for s in states)}
        accounts = [attrs.evolve(a, cls=IN_DOUBT) if a.cls == GONE and a.body in held_somewhere else a
                    for a in accounts]
    return Accounting(accounts=tuple(accounts))


__all__ = ["Account", "Accounting", "account", "departure_verdicts", "diagnosed", "ONE_OF", "CLASSES", "FAILURES",
           "OK", "GONE", "IN_DOUBT", "LOST", "DUPLICATED", "KEPT", "UNEXPECTED"]
