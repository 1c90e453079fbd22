"""A session drives one adapter through test cases, checking every step against the model."""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
import uuid
from typing import Callable, Iterator

import attrs

from adapters.base import Adapter, AdapterError, NotExpressible, undeclared_nulls
from conformance.checker.sequential import Mismatch, ModelTracker
from conformance.records.history import Failure, Step
from conformance.records.results import Coverage
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.classes import calls_of
from reference_model.cluster import share_expectation


class NonConformance(AssertionError):
    """Raised inside a machine when the system under test broke a rule.

    Its text, the rendered failure, is made only when asked for: most are raised and caught while a
    departure is shrunk or minimised, thousands a run, and never shown."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure)
        self.failure = failure
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            from conformance.records.render import render_failure

            self._text = render_failure(self.failure)
        return self._text


class HarnessError(RuntimeError):
    """The adapter or the system under test failed; not a conformance verdict."""


class ShrinkSpent(BaseException):
    """Raised at the start of a case once shrinking's budget is spent, where the runner asked for it
    (:attr:`Session.stop_when_spent`): Hypothesis would otherwise go on drawing whole cases that run
    nothing, which costs as much as running them.  A ``BaseException``, so that Hypothesis does not
    take it for a failure of the case and shrink it; the runner catches it and reports the smallest
    departure found (:func:`conformance.runner.engine.run_machine`)."""


#: Set by the command line's SIGINT / SIGTERM handler.  The KeyboardInterrupt the
#: handler raises can be swallowed where it lands (a garbage-collector callback
#: ignores it), so every case and every step also checks this flag.
STOP = threading.Event()


#: What a machine sees for an operation the adapter cannot express: nothing was
#: executed, on the system or on the model, and nothing was checked.
NOT_EXECUTED = L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_FUNCTION_NOT_SUPPORTED)


@attrs.frozen
class ShrinkBounds:
    """How far Hypothesis may shrink a session's departure: counted in cases where it can be, so that a seed
    still fixes which cases run (the engine's :func:`~conformance.runner.engine.shrink_bounds` gives a system's
    own)."""

    #: Cases that may run after the first departure, while Hypothesis shrinks it (None: no limit).
    cases: int | None = None
    #: Cases in a row that may shrink without finding a smaller departure before shrinking ends (None: no such
    #: bound).
    stall: int | None = None
    #: Seconds shrinking may take from the first departure (None: no limit).  For systems on real time, where a
    #: case holding a restart takes many seconds and a count of cases alone does not bound a run.
    seconds: float | None = None
    #: A time-boxed campaign's hard end (``time.time()``): no shrinking case starts after it.  Only where results
    #: already depend on time; elsewhere shrinking is bounded by cases alone.
    until: float | None = None


class Session:
    """Executes operations on an adapter and checks each observation against the model."""

    def __init__(self, adapter: Adapter, area: str, adapter_options: dict | None = None,
                 seed: int | None = None, coverage: Coverage | None = None,
                 platform: str | None = None, set_aside: frozenset[str] = frozenset(),
                 deadline: float | None = None, shrink: ShrinkBounds = ShrinkBounds(),
                 named: frozenset[str] | None = None,
                 replaying: bool = False, undecided: frozenset[str] = frozenset(),
                 explained: Callable[[Failure], bool] | None = None) -> None:
        self.adapter = adapter
        self.area = area
        self.adapter_options = {k: v for k, v in (adapter_options or {}).items() if not _secret(k)}
        self.seed = seed
        self.capabilities = adapter.capabilities()
        self.platform = platform or self.capabilities.platform
        self.coverage = coverage if coverage is not None else Coverage()
        self._prefix = uuid.uuid4().hex[:6]
        self._cases = itertools.count(1)
        self.tracker: ModelTracker | None = None
        self.history: list[Step] = []
        self._explainer = None
        #: Rules already found broken (keep-going rounds): a departure breaking only these
        #: is not reported again; the model follows the system past it when the difference
        #: cannot change what happens next, else the rest of the case is not run.
        self.set_aside = frozenset(set_aside)
        #: Of those, the rules a recorded failure names: a departure stepped past counts as failing
        #: these only (a rule set aside because a departure implicated it, where the departure's
        #: minimal form did not, stays unfailed; None: all of them).
        self.named = self.set_aside if named is None else frozenset(named)
        #: Rules the system declared not applicable: a departure from them stepped past fails none of them.
        self.never_searched = self.capabilities.never_searched
        self._derailed = False
        #: Set once the adapter or the system fails: every later call fails the same way at once.
        self.broken: HarnessError | None = None
        #: The smallest counterexample raised so far (kept when a run is interrupted while shrinking).
        self.smallest: Failure | None = None
        #: The smallest departure raised for each set of rules broken.  Hypothesis takes every
        #: departure for the same failure, so while it shrinks one it may end on a departure from
        #: other rules and drop the one it started from: the engine reports what it dropped
        #: (:meth:`departures_besides`), so that no rule seen broken is reported as passing.
        self.departures: dict[frozenset[str], Failure] = {}
        #: A time budget's end (``time.time()``): later cases are not run on the system, unless a
        #: departure was found in this session (it is then shrunk to the end).
        self.deadline = deadline
        #: How far Hypothesis may shrink a departure.
        self.shrink = shrink
        #: When shrinking ends by the clock (``time.time()``; None: not by the clock): the bounds' hard end, and
        #: once a departure is found, their seconds from it.
        self._shrink_ends = shrink.until
        self._shrink_cases = 0
        self._stalled = 0
        #: Whether departures found before explain the departure being shrunk (None: not asked), asked before each
        #: case that would shrink it: one they explain is not shrunk on, as it will not be reported (the run's
        #: other areas explain it, or another process sharing the run has its counterexample already).  The
        #: engine answers, and asks again only what may have changed; it judges again the departure the round
        #: ends with.
        self.explained = explained
        #: Of the rules found broken elsewhere, those only histories that break one of several rules name: a
        #: departure from them stepped past fails none of them unless this run shows one broken.
        self.undecided = frozenset(undecided)
        #: Set once the budget is spent: the cases Hypothesis still runs to shrink run nothing, and it
        #: ends with the smallest departure so far (:attr:`smallest`).
        self.shrink_spent = False
        #: Set when a time bound (``shrink.seconds`` or ``shrink.until``), not the count of cases,
        #: ended shrinking: which cases ran then depended on the clock.
        self.shrink_timed_out = False
        #: Raise :class:`ShrinkSpent` at the first case once shrinking's budget is spent, instead of
        #: letting Hypothesis finish its shrink passes on cases that run nothing.
        self.stop_when_spent = False
        self._idle = False
        #: Cases run searching, before any departure (what a budget of cases counts), and the moment
        #: (``time.monotonic()``) the first departure was met, where shrinking starts.
        self.searched = 0
        self.departed_at: float | None = None
        #: Cases searched that a departure already found (a set-aside rule's) cut short: the model could not
        #: follow the system past it, and the rest of the case ran nothing.
        self.cut_short = 0
        #: The rules found broken (:attr:`named`) that departures this session went on past, or was cut short by,
        #: name: what it met that departures found before explain.
        self.met_known: set[str] = set()
        self._express = getattr(adapter, "express", None)
        #: MQCONFORM_TRACE=FILE appends every step run on the system to FILE as a JSON line (case
        #: number, operation, observation): the whole history of a run, to compare two runs of a seed.
        self._trace = os.environ.get("MQCONFORM_TRACE") or None
        self._case_no = 0
        self._elapsed = getattr(adapter, "elapsed_tenths", None) if self.capabilities.realtime else None
        #: The adapter's account of what its cases spend of a run's bounds (restarts): searching cases spend
        #: them; cases replaying a history (``replaying``, or once a departure was found: Hypothesis shrinks
        #: it) do not, and have what the case that found it had (``adapters.base.RestartBudget``).
        self._phase = getattr(adapter, "phase", None)
        if self._phase is not None:
            self._phase("replay" if replaying else "search")

    def _broke(self, exc: Exception) -> HarnessError:
        if self.broken is None:
            text = str(exc) if isinstance(exc, AdapterError) else f"{type(exc).__name__}: {exc}"
            self.broken = HarnessError(f"adapter {self.adapter.name!r}: {' '.join(text.split())[:300]}")
        return self.broken

    def start_case(self) -> None:
        if STOP.is_set():
            raise KeyboardInterrupt
        if self.broken is not None:
            raise self.broken
        if self.smallest is not None and self.shrink.cases is not None:
            self._shrink_cases += 1
            self._stalled += 1
            self.shrink_spent = self._shrink_cases > self.shrink.cases or (
                self.shrink.stall is not None and self._stalled > self.shrink.stall)
        if self.smallest is not None and not self.shrink_spent and self.explained is not None \
                and self.explained(self.smallest):
            self.shrink_spent = True
        if self.smallest is not None and self._shrink_ends is not None and time.time() >= self._shrink_ends:
            self.shrink_timed_out = self.shrink_timed_out or not self.shrink_spent
            self.shrink_spent = True
        if self.shrink_spent and self.stop_when_spent:
            raise ShrinkSpent

        self._idle = self.shrink_spent or (
            self.deadline is not None and self.smallest is None and time.time() >= self.deadline)
        self.tracker = ModelTracker(self.platform, expiry_tolerance=self.capabilities.expiry_tolerance,
                                    set_aside=self.set_aside, memo=True)
        self.history = []
        #: The opens of this case the adapter left out or expressed with fewer options, by handle, as the case
        #: asked for them, and the queue attributes its definitions and alterations asked for that the adapter
        #: left out, by queue: what a later call on the handle or queue would have reached
        #: (:meth:`_classes_left_out`).
        self._opens_asked: dict[str, L.Open] = {}
        self._attrs_asked: dict[str, dict] = {}
        self._explainer = None   # whether the rules found broken explain this case's history, followed as it grows
        self._derailed = self._idle
        if self._idle:   # a budget is spent: the case runs nothing and checks nothing
            return
        self.coverage.examples += 1
        if self.smallest is None:
            self.searched += 1
        try:
            self._case_no = next(self._cases)
            self.adapter.start_case(f"{self._prefix}{self._case_no}", self.platform)
        except AdapterError as exc:
            raise self._broke(exc) from exc

    def _only_one_of(self, rule: str) -> bool:
        """Whether ``rule`` is named only by histories that break one of several rules (this run's, or found
        elsewhere: :attr:`undecided`), none of its own failing it: a step past it then fails none of them."""
        return not self.coverage.failed[rule] and (rule in self.undecided or self.coverage.only_one_of(rule))

    def end_case(self) -> None:
        if self._idle:
            return
        try:
            self.adapter.end_case()
        except AdapterError as exc:
            raise self._broke(exc) from exc

    def expressible(self, op: L.Op) -> bool:
        return self._express is None or self._express(op) is not None

    def execute(self, op: L.Op) -> L.Observation:
        assert self.tracker is not None, "start_case() first"
        if STOP.is_set():
            raise KeyboardInterrupt
        if self._derailed:
            return NOT_EXECUTED
        if self._express is None:
            if self._elapsed is not None:
                self._follow_real_time()
            return self._run(op)
        expressed = self._express(op)
        if expressed != op:
            self._asked(op, expressed)
        elif isinstance(op, L.Open):
            self._opens_asked.pop(op.handle, None)   # (a handle name a case used before, opened as asked now)
        elif isinstance(op, L.DefineQueue):
            self._attrs_asked.pop(op.queue, None)
        if expressed is None:
            return self._left_out(op)
        if expressed != op:
            self._classes_left_out(op, expressed)
        if self._elapsed is not None:
            self._follow_real_time()
        observed = self._run(expressed)
        if observed is not NOT_EXECUTED:
            self.coverage.calls.update(f"{kind}:made" for kind in calls_of(expressed))
        return observed

    def _asked(self, op: L.Op, expressed: L.Op | None) -> None:
        """Note what ``op`` asked for that the adapter left out (``expressed``: what it made of it, None: nothing)."""
        if expressed is not None:
            self.coverage.calls.update(f"{kind}:left out" for kind in calls_of(op) - calls_of(expressed))
        if isinstance(op, L.Open):
            self._opens_asked[op.handle] = op
        elif isinstance(op, (L.DefineQueue, L.AlterQueue)):
            kept = set(expressed.attrs) if expressed is not None else set()
            dropped = {k: v for k, v in op.attrs if (k, v) not in kept}
            if isinstance(op, L.DefineQueue):
                self._attrs_asked[op.queue] = dropped
            else:
                self._attrs_asked.setdefault(op.queue, {}).update(dropped)

    def _left_out(self, op: L.Op, reason: str | None = None) -> L.Observation:
        """Leave out ``op``, which the adapter cannot express (``reason``: the one the system gave when it declined
        it): nothing runs on the system or the model, and nothing is checked."""
        self.coverage.not_expressible[type(op).__name__] += 1
        self.coverage.calls.update(f"{kind}:left out" for kind in calls_of(op))
        if reason is not None:
            self.coverage.declined[f"{type(op).__name__}: {reason}"] += 1
        self._classes_left_out(op, None)
        return NOT_EXECUTED

    def _classes_left_out(self, op: L.Op, expressed: L.Op | None) -> None:
        """Count the input classes ``op`` would have reached (from the model's state now) that what the adapter
        could express of it (``expressed``; None: nothing) does not: classes of a rule that only such operations
        would reach are not expressible on the system, not "never reached"."""
        from reference_model import model
        from reference_model.classes import classify

        if not self.tracker.candidates:
            return
        state = self.tracker.candidates[0]

        def reached(o: L.Op, state=state) -> set[str]:
            try:
                rules = tuple(dict.fromkeys(r for b in model.step(state, o) for r in b.rules))
            except Exception:  # noqa: BLE001 - an operation the model cannot take there reaches no class
                return set()
            return set(classify(state, o, rules))

        # a call on a handle whose open the adapter left out, or made with fewer options (a browse of a queue
        # opened for input and browse, where the system cannot browse), or on a queue defined without some of the
        # attributes asked for (an open as the queue defines, DEFSOPT(EXCLUSIVE) left out), reaches what it would
        # have on the handle and queue as asked for
        opened = None if isinstance(op, L.Open) else self._opens_asked.get(getattr(op, "handle", None))
        intended = _as_asked(state, op, opened, self._attrs_asked)
        left_out = (reached(op) | (reached(op, intended) if intended is not None else set())) \
            - (reached(expressed) if expressed is not None else set())
        self.coverage.classes_not_expressible.update(left_out)

    def _follow_real_time(self) -> None:
        """Bring the model's clock up to the real time the case has taken so far.

        A real broker ages messages while operations run; the history records that
        time as explicit clock advances, so a replay on the model sees it too.
        """
        try:
            elapsed = self._elapsed()
        except AdapterError as exc:
            raise self._broke(exc) from exc
        ahead = elapsed - self.tracker.candidates[0].clock
        if ahead > 0:
            self._run(L.AdvanceClock(tenths=ahead))

    def _run(self, op: L.Op) -> L.Observation:
        expected_shares = None
        if isinstance(op, L.ClusterPut) and self.tracker.candidates:
            expected_shares = share_expectation(self.tracker.candidates[0], op)
        if self.broken is not None:
            raise self.broken
        try:
            observed = self.adapter.execute(op)
        except NotExpressible as exc:
            # declined by the system when run: left out as an operation express() leaves out
            return self._left_out(op, exc.reason)
        except Exception as exc:  # noqa: BLE001 - whatever the adapter raises is an error, never a verdict
            raise self._broke(exc) from exc
        nulls = undeclared_nulls(observed, self.capabilities.lacks)
        if nulls:
            raise self._broke(AdapterError(
                f"the adapter answered {type(op).__name__} with no value for {', '.join(nulls)}, which its capabilities "
                f"do not declare lacking (capabilities.lacks)"))
        if self._trace:
            with open(self._trace, "a", encoding="utf-8") as out:
                out.write(json.dumps({"area": self.area, "platform": self.platform, "case": self._case_no, "op": L.to_json(op),
                                      "observed": L.to_json(observed)}, sort_keys=True) + "\n")
        check = self.tracker.advance(op, observed)
        if expected_shares and check.mismatch is None:
            self.coverage.record_share(dict(observed.attrs or ()).get("DESTINATION", ""), expected_shares)
        self.history.append(Step(op=op, observed=observed))
        self.coverage.record(check)
        if check.mismatch is not None:
            failure = self.failure(check.mismatch)
            if self._new(failure):
                if self.smallest is None:
                    self.departed_at = time.monotonic()
                    if self._phase is not None:   # shrinking replays this case: the restarts it had
                        self._phase("replay")
                if self.smallest is None and self.shrink.seconds is not None:
                    ends = time.time() + self.shrink.seconds
                    self._shrink_ends = ends if self._shrink_ends is None else min(self._shrink_ends, ends)
                if self.smallest is None or failure.size < self.smallest.size:
                    self.smallest = failure
                    self._stalled = 0
                self.remember(failure)
                raise NonConformance(failure)
            self.met_known.update(r for r in failure.rules if r in self.named)
            # (a rule named only by a history that breaks one of several rules stays one of them)
            self.coverage.failed.update(r for r in failure.rules if r in self.named and r not in self.never_searched
                                        and not self._only_one_of(r))
            if not self.tracker.step_past(op, observed):
                self._derailed = True
                if self.smallest is None:
                    self.cut_short += 1
            else:
                # what differed is a departure already found; the rules that decide nothing of it held
                self.coverage.record_held(*self.tracker.held)
        return observed

    def _new(self, failure: Failure) -> bool:
        """Whether ``failure`` is a departure to report: one naming a rule not set aside (unless it names a
        set-aside rule too and the rules found broken, relaxed, explain its whole history), or naming set-aside
        rules that an earlier departure only mentioned (never found broken) where the rules found broken,
        relaxed, explain neither the history nor its last step from where the run stood when it met it (having
        gone on past earlier departures as the rules set aside let it).  The rule it breaks may well be one
        merely mentioned before."""
        from conformance.checker.blame import explains_step

        rules = set(failure.rules)
        if not self.set_aside or not rules <= self.set_aside:
            # (one naming a rule not set aside as well is new, unless the rules found broken, relaxed, explain its
            # whole history: a departure of what they broke that shows in a field another rule names too)
            return not self.named or not rules & self.set_aside or not self._named_explain()
        if rules <= self.named:
            return False

        last = self.history[-1]
        if explains_step(self.platform, self.named, self.tracker.candidates, last.op, last.observed,
                         self.capabilities.expiry_tolerance):
            return False
        return not self._named_explain()

    def _named_explain(self) -> bool:
        """Whether the rules found broken (:attr:`named`), relaxed, explain the whole history so far."""
        from conformance.checker.blame import Explainer

        if self._explainer is None or self._explainer.known != self.named:
            self._explainer = Explainer(self.platform, self.named, self.capabilities.expiry_tolerance)
        return self._explainer.explains([(s.op, s.observed) for s in self.history])

    def remember(self, failure: Failure) -> None:
        """Keep ``failure`` in :attr:`departures` if it is the smallest met for its rules."""
        key = frozenset(failure.rules)
        if key not in self.departures or failure.size < self.departures[key].size:
            self.departures[key] = failure

    def departures_besides(self, reported) -> list[Failure]:
        """Departures this session met that together name every rule it saw broken outside ``reported``
        (rule IDs): few of them, each the smallest for its rules.  Chosen greedily, the one naming
        the most rules not yet named first (the smaller on a tie), until none is left uncovered."""
        covered = set(reported)
        left = sorted(self.departures.values(), key=lambda f: (f.size, sorted(f.rules)))
        chosen = []
        while True:
            best = max(left, key=lambda f: len(set(f.rules) - covered), default=None)
            if best is None or set(best.rules) <= covered:
                return chosen
            chosen.append(best)
            covered.update(best.rules)
            left.remove(best)

    def other_departures(self, reported, tidy: Callable[[Failure], Failure | None]) -> Iterator[Failure]:
        """The departures to report besides those naming ``reported`` rules, as :meth:`departures_besides`
        chooses them, each made by ``tidy`` (minimised) into what is reported; None from ``tidy``: not to
        be reported (known already), its rules counted as named.  A departure whose tidied form names
        only rules already named is left out (minimising may name fewer rules: a get that selects, made
        a plain get, no longer implicates the selection's), and the choice goes on over what is left."""
        named, handled = set(reported), set()
        while True:
            pending = [d for d in self.departures_besides(named) if frozenset(d.rules) not in handled]
            if not pending:
                return
            handled.add(frozenset(pending[0].rules))
            tidied = tidy(pending[0])
            if tidied is None:
                named.update(pending[0].rules)
            elif not set(tidied.rules) <= named:
                named.update(tidied.rules)
                yield tidied

    def failure(self, mismatch: Mismatch) -> Failure:
        return Failure(
            area=self.area, adapter=self.adapter.name, adapter_options=self.adapter_options,
            platform=self.platform, seed=self.seed, steps=tuple(self.history), mismatch=mismatch,
            found_broken=tuple(sorted(self.named & self.set_aside)),
        )


def one_case(session: Session, ops, tolerated: tuple[type[Exception], ...] = ()):
    """Run ``ops`` on ``session`` as one case, ended whatever happens: the departure it met (a
    :class:`~conformance.records.history.Failure`), or None where it met none or raised one of ``tolerated``."""
    session.start_case()
    try:
        for op in ops:
            session.execute(op)
    except NonConformance as exc:
        return exc.failure
    except tolerated:
        return None
    finally:
        session.end_case()
    return None


def _secret(key: str) -> bool:
    k = key.lower()
    return any(word in k for word in ("password", "passcode", "secret", "token", "credential"))


def _as_asked(state, op: L.Op, opened: L.Open | None, attrs_asked: dict[str, dict]):
    """``state`` with ``op``'s handle open as ``opened`` asked (the adapter left the open out, or made it with fewer
    options) and its queue holding the attributes its definition and alterations asked for (``attrs_asked``, by
    queue: those the adapter left out); None where neither differs, or the model would not have opened it so."""
    from reference_model import model

    if opened is not None:
        handle = state.handles.get(opened.handle)
        if handle is not None and handle.queue == opened.queue:
            intended = state.clone()
            intended.handles[opened.handle] = attrs.evolve(handle, options=opened.options)
        elif handle is None:
            try:
                branch = model.step(state, opened)[0]
            except Exception:  # noqa: BLE001 - a name reused and the like: no such handle to reach anything with
                return None
            if branch.observation.cc != C.MQCC_OK:
                return None
            intended = branch.state
        else:
            return None
        queue = opened.queue
    else:
        handle = state.handles.get(getattr(op, "handle", None))
        queue = handle.queue if handle is not None else getattr(op, "queue", None)
        intended = None
    asked = attrs_asked.get(queue) if isinstance(queue, str) else None
    if asked and queue in state.queues:
        intended = (intended if intended is not None else state).clone()
        q = intended.queue(queue)
        q.attrs = {**q.attrs, **asked}
    return intended
